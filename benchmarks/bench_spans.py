"""What the optional OpenTelemetry spans cost when the host traces nothing.

A method wrapped by ``_audit.spans.traced`` against the same method unwrapped, when no
tracer provider is set (OpenTelemetry not imported): the wrapper looks up
``opentelemetry.trace`` in ``sys.modules`` and calls the method. Prints the time per
call of each and the difference, best of ``--rounds``.

    python benchmarks/bench_spans.py
"""

from __future__ import annotations

import argparse
import timeit
from typing import TYPE_CHECKING

from skillguard._audit.spans import traced

if TYPE_CHECKING:
    from collections.abc import Callable


class Handle:
    agent = "a"

    def plain(self, name: str) -> str:
        return name

    @traced("skillguard.load")
    def wrapped(self, name: str) -> str:
        return name


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    handle = Handle()
    for name in ("plain", "wrapped"):
        method: Callable[[str], str] = getattr(handle, name)

        def call(method: Callable[[str], str] = method) -> str:
            return method("notes")

        best = min(timeit.repeat(call, number=args.calls, repeat=args.rounds))
        print(f"{name:<8} {best / args.calls * 1e9:7.1f} ns per call")


if __name__ == "__main__":
    main()
