"""What importing skillguard costs, against importing its three dependencies alone.

Usage::

    python benchmarks/bench_import.py [--rounds R]

Each case is a fresh interpreter (``python -c ...``), timed from start to exit, so the
interpreter's own start-up is in every figure; the ratios compare like with like. The
cases, interleaved round by round (the best round of each counts):

* the floor: ``import ruamel.yaml, attrs, structlog``;
* ``import skillguard`` (the skill loader; goal: at most 1.2x the floor);
* ``import skillguard.agents`` and ``import skillguard.audit`` (the other areas);
* ``skillguard --version`` as a process (goal: at most 1.3x the floor).

It also prints which skillguard modules ``import skillguard`` loads, so that a change
that pulls the agent line, the report or the command line back in shows up here.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

FLOOR = "import ruamel.yaml, attrs, structlog"
# The console script installed beside this interpreter, as a user runs it.
_SCRIPT = os.path.join(os.path.dirname(sys.executable), "skillguard")
CASES = {
    "floor: ruamel.yaml, attrs, structlog": [sys.executable, "-c", FLOOR],
    "import skillguard": [sys.executable, "-c", "import skillguard"],
    "import skillguard.agents": [sys.executable, "-c", "import skillguard.agents"],
    "import skillguard.audit": [sys.executable, "-c", "import skillguard.audit"],
    "skillguard --version": [_SCRIPT, "--version"]
    if os.path.exists(_SCRIPT)
    else [sys.executable, "-m", "skillguard", "--version"],
}
GOALS = {"import skillguard": 1.2, "skillguard --version": 1.3}


def _once(argv: list[str], *, write_bytecode: bool = False) -> float:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    if write_bytecode:  # as pip does at install time; a shell may have turned it off
        del env["PYTHONDONTWRITEBYTECODE"]
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, env=env)  # noqa: S603 - fixed argv
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    for argv in CASES.values():  # warm the file cache and the bytecode caches
        _once(argv, write_bytecode=True)
    best = dict.fromkeys(CASES, float("inf"))
    for _ in range(args.rounds):
        for name, argv in CASES.items():
            best[name] = min(best[name], _once(argv))
    floor = best["floor: ruamel.yaml, attrs, structlog"]
    print(f"{'case':40} {'best ms':>8} {'x floor':>8}  goal")
    failed = False
    for name, seconds in best.items():
        ratio = seconds / floor
        goal = GOALS.get(name)
        verdict = ""
        if goal is not None:
            verdict = f"<= {goal}x {'met' if ratio <= goal else 'MISSED'}"
            failed |= ratio > goal
        print(f"{name:40} {seconds * 1000:8.1f} {ratio:8.2f}  {verdict}")
    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            (
                "import sys, skillguard; print(' '.join(sorted(m for m in sys.modules"
                " if m.startswith('skillguard'))))"
            ),
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    print(f"\n`import skillguard` loads {len(loaded)} skillguard modules:")
    print("  " + " ".join(loaded))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
