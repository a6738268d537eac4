"""Discovery throughput: skillguard against abstractskill and skills-ref, in one run.

Usage::

    python benchmarks/bench_discover.py [--roots N] [--per-root M] [--rounds R]

Generates ``N * M`` skill folders (10,000 by default: 5 roots of 2,000, so that the
default ``Limits`` hold them all: ``max_dirs_per_root = 2000``, ``max_skills = 10000``),
with the same content and fixed seed as ``bench_parse.py``, each root a folder of
``<root>/<skill-name>/SKILL.md`` whose ``name`` is the folder's name. Every contestant
discovers and parses every skill of every root, several rounds each, interleaved; the
best round counts, and every round must find all the skills (so all do the same work).
Contestants:

* ``skillguard``: ``skillguard.discover(roots)``: each root opened as a ``SafeRoot``,
  listed, every ``SKILL.md`` read through it and parsed with every check on (the
  ``strict`` profile), one ``SkillMeta`` per skill; roots closed again.
* ``abstractskill``: ``FilesystemSkillLoader(roots).discover()`` (one loader over all
  the roots: it takes a list), which lists each root with ``pathlib``, reads every
  ``SKILL.md`` and parses it with PyYAML's ``yaml.safe_load`` (the pure-Python
  loader, not ``CSafeLoader``); it logs a warning per skill it skips. Optional;
  skipped with a note when it is not installed.
* ``skills-ref``: each root listed with ``os.scandir`` and the reference library's
  ``read_properties(folder)`` called on every folder (it has no discovery of its
  own). Optional (``bench`` extra); skipped with a note when it is not installed.

Prints skills/s for each and the ratios the project tracks (targets: skillguard at
least 8,000 skills/s and at least 3x abstractskill).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

import skillguard
from bench_parse import generate

if TYPE_CHECKING:
    from collections.abc import Callable


def lay_out(base: Path, roots: int, per_root: int) -> list[Path]:
    """Generate ``roots * per_root`` skills under *base*, spread over *roots* folders.

    ``generate`` numbers its skills, so one call gives unique names across all roots;
    the folders are then moved, ``per_root`` at a time, into ``root-0``, ``root-1``...
    """
    staging = base / "staging"
    staging.mkdir()
    paths = generate(staging, roots * per_root)
    folders = [base / f"root-{k}" for k in range(roots)]
    for folder in folders:
        folder.mkdir()
    for index, path in enumerate(paths):
        skill = path.parent
        skill.rename(folders[index // per_root] / skill.name)
    staging.rmdir()
    return folders


def make_skillguard(roots: list[Path], limits: skillguard.Limits) -> Callable[[], int]:
    def run() -> int:
        found = skillguard.discover(roots, limits=limits)
        if found.skipped or found.shadowed:
            sys.exit(f"skillguard skipped or shadowed skills: {found.skipped[:3]}")
        return len(found.skills)

    return run


def make_abstractskill(roots: list[Path]) -> Callable[[], int] | None:
    try:
        # No type hints, and not installed by the project's own environments.
        from abstractskill import (  # type: ignore[import-untyped, import-not-found, unused-ignore]
            FilesystemSkillLoader,
        )
    except ImportError:
        return None

    def run() -> int:
        return len(FilesystemSkillLoader(roots).discover())

    return run


def make_skills_ref(roots: list[Path]) -> Callable[[], int] | None:
    try:
        from skills_ref.parser import read_properties
    except ImportError:
        return None

    def run() -> int:
        found = 0
        for root in roots:
            with os.scandir(root) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        read_properties(Path(entry.path))
                        found += 1
        return found

    return run


def measure(
    contestants: dict[str, Callable[[], int]], expected: int, rounds: int
) -> dict[str, float]:
    best = dict.fromkeys(contestants, float("inf"))
    for _ in range(rounds):
        for label, run in contestants.items():  # interleaved: drift hits everyone alike
            start = time.perf_counter()
            found = run()
            best[label] = min(best[label], time.perf_counter() - start)
            if found != expected:
                sys.exit(f"{label} found {found} skills, not {expected}; the run is not fair")
    return {label: expected / seconds for label, seconds in best.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--roots", type=int, default=5, help="skill roots to generate")
    parser.add_argument("--per-root", type=int, default=2000, help="skills in each root")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    if args.roots < 1 or args.per_root < 1:
        sys.exit("--roots and --per-root must be at least 1")
    total = args.roots * args.per_root

    # Every check stays on; the counting limits only grow when asked for a bigger tree.
    defaults = skillguard.Limits()
    limits = skillguard.Limits(
        max_dirs_per_root=max(defaults.max_dirs_per_root, args.per_root),
        max_skills=max(defaults.max_skills, total),
    )

    with tempfile.TemporaryDirectory() as tmp:
        roots = lay_out(Path(tmp), args.roots, args.per_root)
        contestants: dict[str, Callable[[], int]] = {
            "skillguard": make_skillguard(roots, limits),
        }
        notes = []
        loader = make_abstractskill(roots)
        if loader is not None:
            contestants["abstractskill"] = loader
        else:
            notes.append("abstractskill not installed (pip install abstractskill); skipped")
        reference = make_skills_ref(roots)
        if reference is not None:
            contestants["skills-ref"] = reference
        else:
            notes.append("skills-ref not installed (pip install -e '.[bench]'); skipped")
        rates = measure(contestants, total, args.rounds)

    print(f"{total} skills in {args.roots} roots, best of {args.rounds} rounds")
    for label, rate in rates.items():
        print(f"  {label:<14} {rate:>10.0f} skills/s")
    print(f"  skillguard                   {rates['skillguard']:.0f} skills/s (target >= 8000)")
    if "abstractskill" in rates:
        ratio = rates["skillguard"] / rates["abstractskill"]
        print(f"  skillguard / abstractskill   {ratio:.1f}x (target >= 3x)")
    if "skills-ref" in rates:
        print(f"  skillguard / skills-ref      {rates['skillguard'] / rates['skills-ref']:.1f}x")
    for note in notes:
        print(f"  {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
