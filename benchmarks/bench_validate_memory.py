"""Peak memory of ``skillguard validate`` against the number of skills.

Usage::

    python benchmarks/bench_validate_memory.py [--small N] [--large M]

Generates two trees of ``<group>/<skill-name>/SKILL.md`` (1,000 and 18,600 skills by
default, 1,000 folders to a group, each skill with one unknown field so that every
result carries a warning), runs ``skillguard validate --format FORMAT`` over each in a
fresh subprocess and prints the child's peak resident set (``ru_maxrss``) for every
format, and the large/small ratio. Every format is written as the run goes, so each
ratio stays near 1; the goal is under 150 MB for the large tree whatever the format.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

FORMATS = ("text", "json", "github", "sarif")


def make_tree(root: Path, count: int) -> None:
    for index in range(count):
        name = f"skill-{index:05d}"
        folder = root / f"g{index // 1000:02d}" / name
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: The skill number {index}.\nextra: x\n---\nBody.\n"
        )


def peak_mb(root: Path, fmt: str) -> float:
    """The peak RSS of one validate run, in MiB, measured in a fresh child process."""
    code = (
        "import resource, subprocess, sys\n"
        "subprocess.run([sys.executable, '-m', 'skillguard', 'validate', '--format', "
        f"{fmt!r}, {str(root)!r}], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    )
    # The command is this interpreter and code built here from the tree path.
    out = subprocess.run(  # noqa: S603
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    return int(out.stdout) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--small", type=int, default=1000)
    parser.add_argument("--large", type=int, default=18_600)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        small, large = Path(tmp, "small"), Path(tmp, "large")
        make_tree(small, args.small)
        make_tree(large, args.large)
        print(f"{'format':8} {args.small:>8} skills {args.large:>8} skills  ratio")
        for fmt in FORMATS:
            low, high = peak_mb(small, fmt), peak_mb(large, fmt)
            print(f"{fmt:8} {low:11.1f} MB {high:11.1f} MB  {high / low:5.2f}")


if __name__ == "__main__":
    main()
