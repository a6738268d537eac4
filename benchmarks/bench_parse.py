"""Parse throughput: skillguard against its floor and against skills-ref, in one run.

Usage::

    python benchmarks/bench_parse.py [--count N] [--rounds R] [--dir SKILLS_ROOT]

Every contestant reads and parses the same SKILL.md files (generated with a fixed
seed, or every ``*/SKILL.md`` under ``--dir``), several rounds each, interleaved;
the best round counts. Contestants:

* ``floor``: open + read + fence split + ruamel's C event stream, no composing and
  no checks. Nothing that parses YAML from a file can be faster than this.
* ``skillguard``: ``SafeRoot.read_skill_file(folder)`` from a held root (the folder
  resolved beneath it by openat2 or the component walk, ``SKILL.md`` checked with
  ``lstat`` and ``fstat``), then ``parse_skill(raw, expected_name=...)``, every check on.
* ``skillguard-parse``: ``parse_skill`` alone on bytes already in memory.
* ``skills-ref``: the reference library's ``read_properties`` (optional ``bench``
  extra); skipped with a note when it is not installed.

Prints skills/s for each and the ratios the project tracks (targets: skillguard at
least 0.65x the floor and at least 15x skills-ref).
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ruamel.yaml.events import StreamEndEvent

import skillguard

if TYPE_CHECKING:
    from collections.abc import Callable

try:
    from _ruamel_yaml import CParser
except ImportError:  # pragma: no cover - the floor needs the C parser
    sys.exit("the floor needs ruamel.yaml.clib (the C parser)")

_WORDS = [
    "extract",
    "text",
    "tables",
    "pdf",
    "files",
    "forms",
    "merge",
    "documents",
    "review",
    "pull",
    "request",
    "code",
    "style",
    "tests",
    "deploy",
    "staging",
    "cluster",
    "logs",
    "metrics",
    "query",
    "database",
    "schema",
    "migrate",
    "api",
    "client",
    "retry",
    "timeout",
    "cache",
    "invalidate",
    "release",
    "notes",
    "changelog",
    "commit",
    "branch",
]


def _sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(words)).capitalize() + "."


def generate(root: Path, count: int, seed: int = 1) -> list[Path]:
    """Write *count* realistic skill folders under *root* and return their SKILL.md paths."""
    rng = random.Random(seed)
    paths = []
    for index in range(count):
        name = f"skill-{index:05d}-{rng.choice(_WORDS)}"
        lines = [
            "---",
            f"name: {name}",
            f'description: "{_sentence(rng, rng.randint(15, 80))}"',
        ]
        if rng.random() < 0.5:
            lines.append("license: Apache-2.0")
        if rng.random() < 0.3:
            lines.append("compatibility: Requires python3 and network access")
        if rng.random() < 0.6:
            lines.append("metadata:")
            lines.extend(
                f'  {rng.choice(_WORDS)}-{k}: "{rng.choice(_WORDS)}"'
                for k in range(rng.randint(1, 5))
            )
        if rng.random() < 0.4:
            lines.append("allowed-tools: Read Grep Bash(git:*)")
        lines.append("---")
        body = [f"# {name}", ""]
        for _ in range(rng.randint(10, 60)):
            body.append(_sentence(rng, rng.randint(8, 30)))
            body.append("")
        folder = root / name
        folder.mkdir()
        path = folder / "SKILL.md"
        path.write_text("\n".join(lines + body) + "\n", encoding="utf-8")
        paths.append(path)
    return paths


_FENCE = re.compile(r"^---[ \t]*$", re.MULTILINE)


def run_floor(paths: list[Path]) -> None:
    for path in paths:
        with path.open("rb") as handle:
            text = handle.read().decode("utf-8")
        start = text.index("\n") + 1
        end = _FENCE.search(text, start)
        assert end is not None
        parser = CParser(text[start : end.start()])
        while type(parser.get_event()) is not StreamEndEvent:
            pass


def make_skillguard(root: Path, paths: list[Path]) -> Callable[[list[Path]], None]:
    safe_root = skillguard.SafeRoot(root)  # held for the whole run, as a loader does
    folders = [path.parent.name for path in paths]
    cap = skillguard.Limits().max_skill_bytes

    def run(_: list[Path]) -> None:
        for folder in folders:
            raw = safe_root.read_skill_file(folder, cap=cap)
            skillguard.parse_skill(raw, expected_name=folder)

    return run


def make_parse_only(paths: list[Path]) -> Callable[[list[Path]], None]:
    blobs = [(path.read_bytes(), path.parent.name) for path in paths]

    def run(_: list[Path]) -> None:
        for raw, folder in blobs:
            skillguard.parse_skill(raw, expected_name=folder)

    return run


def make_skills_ref() -> Callable[[list[Path]], None] | None:
    try:
        from skills_ref.parser import read_properties
    except ImportError:
        return None

    def run(paths: list[Path]) -> None:
        for path in paths:
            read_properties(path.parent)

    return run


def measure(
    contestants: dict[str, Callable[[list[Path]], None]], paths: list[Path], rounds: int
) -> dict[str, float]:
    best = dict.fromkeys(contestants, float("inf"))
    for _ in range(rounds):
        for label, run in contestants.items():  # interleaved: drift hits everyone alike
            start = time.perf_counter()
            run(paths)
            best[label] = min(best[label], time.perf_counter() - start)
    return {label: len(paths) / seconds for label, seconds in best.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=1000, help="skills to generate")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--dir", type=Path, help="a folder of real skill folders instead")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        if args.dir is not None:
            root = args.dir.resolve()
            paths = sorted(root.glob("*/SKILL.md"))
            # Real collections hold skills that skillguard rightly refuses; benchmark
            # only the ones every contestant can parse, so all do the same work.
            good = []
            for path in paths:
                try:
                    skillguard.parse_skill(path.read_bytes(), expected_name=path.parent.name)
                except skillguard.SkillError:
                    continue
                good.append(path)
            paths = good
        else:
            root = Path(tmp)
            paths = generate(root, args.count)
        if not paths:
            sys.exit("no skills to benchmark")

        contestants: dict[str, Callable[[list[Path]], None]] = {
            "floor": run_floor,
            "skillguard": make_skillguard(root, paths),
            "skillguard-parse": make_parse_only(paths),
        }
        reference = make_skills_ref()
        if reference is not None:
            contestants["skills-ref"] = reference
        rates = measure(contestants, paths, args.rounds)

    size = sum(path.stat().st_size for path in paths) if args.dir else None
    print(
        f"{len(paths)} skills, best of {args.rounds} rounds" + (f", {size} bytes" if size else "")
    )
    for label, rate in rates.items():
        print(f"  {label:<17} {rate:>10.0f} skills/s")
    print(
        f"  skillguard / floor      {rates['skillguard'] / rates['floor']:.2f}x (target >= 0.65x)"
    )
    if "skills-ref" in rates:
        print(
            f"  skillguard / skills-ref {rates['skillguard'] / rates['skills-ref']:.1f}x "
            "(target >= 15x)"
        )
    else:
        print("  skills-ref not installed (pip install -e '.[bench]'); ratio not measured")
    return 0


if __name__ == "__main__":
    sys.exit(main())
