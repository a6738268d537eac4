"""Parse throughput: skillguard against its floor and its peers, in one run.

Usage::

    python benchmarks/bench_parse.py [--count N] [--rounds R] [--dir FOLDER ...]
                                     [--instructions] [--sample-every K]

Two inputs in one run: generated SKILL.md files (a fixed seed) and, with ``--dir``,
every ``SKILL.md`` beneath each folder given (a real corpus; its folder name is the
expected name). Of each input only the files every contestant accepts are used, so that
all do the same work. Every contestant reads each file inside the loop; rounds are
interleaved (drift hits everyone alike) and both the best and the median round are
printed. Contestants:

* ``c-events`` (the floor): open + read + decode + fence split + ruamel's C event
  stream, no composing and no checks. Nothing that parses YAML from a file with
  ruamel can be faster than this.
* ``pyyaml-c``: open + read + decode + fence split + PyYAML's ``CSafeLoader`` (libyaml
  and PyYAML's constructor): no caps, no character rules (optional ``bench`` extra).
* ``skillguard``: ``SafeRoot.read_skill_file(folder)`` from a held root, then
  ``parse_skill(raw, expected_name=...)``, every check on (``strict``).
* ``skillguard-compat``: the same with ``profile="compat"``.
* ``skillguard-parse``: ``parse_skill`` alone on bytes already in memory.
* ``skills-ref``: the reference library's ``read_properties`` (optional ``bench`` extra).
* ``abstractskill``: ``read_text`` + ``parse_skill_md`` (optional ``bench`` extra).

Prints skills/s for each (best and median round) and the ratios the project tracks
(targets: skillguard at least 0.80x the C-event floor and faster than PyYAML's C
loader). With ``--instructions``, each contestant is also run under valgrind's callgrind
on every K-th file (``--sample-every``) and the instructions it executes per file are
printed: repeatable where wall-clock time on a shared machine is not.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import statistics
import subprocess
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

Run = "Callable[[], None]"


def _frontmatter(path: Path) -> str:
    with path.open("rb") as handle:
        text = handle.read().decode("utf-8")
    start = text.index("\n") + 1
    end = _FENCE.search(text, start)
    assert end is not None
    return text[start : end.start()]


def make_floor(paths: list[Path]) -> Callable[[], None]:
    def run() -> None:
        for path in paths:
            parser = CParser(_frontmatter(path))
            while type(parser.get_event()) is not StreamEndEvent:
                pass

    return run


def make_pyyaml(paths: list[Path]) -> Callable[[], None] | None:
    try:
        import yaml
    except ImportError:
        return None
    loader = yaml.CSafeLoader

    def run() -> None:
        for path in paths:
            yaml.load(_frontmatter(path), Loader=loader)  # noqa: S506 - CSafeLoader

    return run


def make_skillguard(paths: list[Path], profile: str) -> Callable[[], None]:
    roots: dict[Path, skillguard.SafeRoot] = {}
    jobs = []
    for path in paths:
        holder = path.parent.parent
        if holder not in roots:  # held for the whole run, as a loader does
            roots[holder] = skillguard.SafeRoot(holder)
        jobs.append((roots[holder], path.parent.name))
    cap = skillguard.Limits().max_skill_bytes

    def run() -> None:
        for safe_root, folder in jobs:
            raw = safe_root.read_skill_file(folder, cap=cap)
            skillguard.parse_skill(raw, expected_name=folder, profile=profile)  # type: ignore[arg-type]

    return run


def make_parse_only(paths: list[Path]) -> Callable[[], None]:
    blobs = [(path.read_bytes(), path.parent.name) for path in paths]

    def run() -> None:
        for raw, folder in blobs:
            skillguard.parse_skill(raw, expected_name=folder)

    return run


def make_skills_ref(paths: list[Path]) -> Callable[[], None] | None:
    try:
        from skills_ref.parser import read_properties
    except ImportError:
        return None

    def run() -> None:
        for path in paths:
            read_properties(path.parent)

    return run


def make_abstractskill(paths: list[Path]) -> Callable[[], None] | None:
    try:
        from abstractskill import parse_skill_md  # type: ignore[import-untyped, import-not-found, unused-ignore]
    except ImportError:
        return None

    def run() -> None:
        for path in paths:
            parse_skill_md(path.read_text(encoding="utf-8"), directory_name=path.parent.name)

    return run


_MAKERS: dict[str, Callable[[list[Path]], Callable[[], None] | None]] = {
    "c-events": make_floor,
    "pyyaml-c": make_pyyaml,
    "skillguard": lambda paths: make_skillguard(paths, "strict"),
    "skillguard-compat": lambda paths: make_skillguard(paths, "compat"),
    "skillguard-parse": make_parse_only,
    "skills-ref": make_skills_ref,
    "abstractskill": make_abstractskill,
}


def accepted_by_all(paths: list[Path]) -> list[Path]:
    """The files every installed contestant parses without an error."""
    good = []
    for path in paths:
        try:
            for maker in _MAKERS.values():
                run = maker([path])
                if run is not None:
                    run()
        except Exception:  # noqa: S112 - a peer's own error: the file is left out
            continue
        good.append(path)
    return good


def measure(contestants: dict[str, Callable[[], None]], rounds: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {label: [] for label in contestants}
    for _ in range(rounds):
        for label, run in contestants.items():  # interleaved: drift hits everyone alike
            start = time.perf_counter()
            run()
            times[label].append(time.perf_counter() - start)
    return times


def _collected(argv: list[str]) -> int:
    """The instructions callgrind counts for one child run of this script."""
    env = dict(os.environ, PYTHONHASHSEED="0")
    done = subprocess.run(  # noqa: S603 - our own script, under valgrind
        [  # noqa: S607 - valgrind from PATH
            "valgrind",
            "--tool=callgrind",
            "--callgrind-out-file=/dev/null",
            sys.executable,
            __file__,
            *argv,
        ],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None:
        sys.exit("callgrind printed no count:\n" + done.stderr[-2000:])
    return int(found.group(1))


def instructions(listing: Path, labels: list[str], reps: int) -> dict[str, float]:
    """Instructions per file for each contestant: a child that runs it *reps* more
    times than another, both after the same imports, reading and one warm-up round."""
    count = len(listing.read_text().splitlines())
    per_file = {}
    for label in labels:
        base = _collected(["--child", label, "--list", str(listing), "--reps", "0"])
        more = _collected(["--child", label, "--list", str(listing), "--reps", str(reps)])
        per_file[label] = (more - base) / (reps * count)
    return per_file


def child(label: str, listing: Path, reps: int) -> int:
    paths = [Path(line) for line in listing.read_text().splitlines()]
    run = _MAKERS[label](paths)
    assert run is not None
    run()  # warm-up: compiled patterns, caches, first-use imports
    for _ in range(reps):
        run()
    return 0


def report(
    title: str, paths: list[Path], rounds: int, *, count_instructions: bool, every: int
) -> None:
    contestants = {}
    for label, maker in _MAKERS.items():
        run = maker(paths)
        if run is not None:
            contestants[label] = run
    times = measure(contestants, rounds)
    size = sum(path.stat().st_size for path in paths)
    print(f"{title}: {len(paths)} skills, {size} bytes, {rounds} rounds interleaved")
    print(f"  {'contestant':<18} {'best skills/s':>14} {'median skills/s':>16}")
    best = {label: min(runs) for label, runs in times.items()}
    median = {label: statistics.median(runs) for label, runs in times.items()}
    for label in times:
        print(
            f"  {label:<18} {len(paths) / best[label]:>14.0f} {len(paths) / median[label]:>16.0f}"
        )
    missing = [label for label in _MAKERS if label not in times]
    if missing:
        print(f"  not installed (pip install -e '.[bench]'): {', '.join(missing)}")

    def ratio(of: str, to: str, target: str) -> None:
        if of in times and to in times:
            print(
                f"  {of} / {to}: best {best[to] / best[of]:.2f}x, "
                f"median {median[to] / median[of]:.2f}x{target}"
            )

    ratio("skillguard", "c-events", " (target >= 0.80x)")
    ratio("skillguard-compat", "c-events", "")
    ratio("skillguard", "pyyaml-c", " (target > 1x)")
    ratio("skillguard", "skills-ref", "")
    ratio("skillguard", "abstractskill", "")
    if count_instructions:
        sample = paths[::every]
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as handle:
            handle.write("\n".join(str(path) for path in sample))
        listing = Path(handle.name)
        try:
            labels: list[str] = [
                label
                for label in (
                    "c-events",
                    "pyyaml-c",
                    "skillguard",
                    "skillguard-compat",
                    "skillguard-parse",
                )
                if label in contestants
            ]
            counts = instructions(listing, labels, reps=2)
        finally:
            listing.unlink()
        print(f"  instructions per file (callgrind, {len(sample)} files, every {every}th):")
        for label, value in counts.items():
            print(f"    {label:<18} {value:>12.0f}")
        for label in ("skillguard", "skillguard-compat"):
            for peer in ("c-events", "pyyaml-c"):
                if label in counts and peer in counts:
                    print(f"    {peer} / {label}: {counts[peer] / counts[label]:.2f}x")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=1000, help="skills to generate")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument(
        "--dir",
        type=Path,
        action="append",
        default=[],
        help="a folder holding real skills (every SKILL.md beneath it); repeatable",
    )
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="also count instructions per file under callgrind",
    )
    parser.add_argument("--sample-every", type=int, default=10)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--list", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--reps", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        return child(args.child, args.list, args.reps)

    with tempfile.TemporaryDirectory() as tmp:
        generated = accepted_by_all(generate(Path(tmp), args.count))
        report(
            "generated",
            generated,
            args.rounds,
            count_instructions=args.instructions,
            every=args.sample_every,
        )
        if args.dir:
            found = sorted(p for folder in args.dir for p in folder.resolve().glob("**/SKILL.md"))
            real = accepted_by_all(found)
            print()
            report(
                f"real ({len(found)} SKILL.md found, {len(found) - len(real)} refused by "
                "some contestant and left out)",
                real,
                args.rounds,
                count_instructions=args.instructions,
                every=args.sample_every,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
