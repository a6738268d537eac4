"""Skill selection: quality on public labelled queries and speed at scale, beside rank_bm25.

Usage::

    python benchmarks/bench_select.py [--corpus CORPUS.jsonl] [--rounds R] [--quality-only]

Quality, skillguard's ``SelectionIndex`` beside ``rank_bm25.BM25Okapi`` over the same
texts (name and description; rank_bm25 "selects" the skills with a positive score, at
most three):

- ``data/select_metatool.json``: the 199 tools and 2,040 queries of the public MetaTool
  benchmark (MIT; see ``make_select_eval.py``), split by a hash of each query into
  "tune" (the abstention rule was tuned on it) and "held-out" (never tuned on), and
  3,000 more one-tool queries, "unseen", added once the rule was fixed. Printed per
  split: top-1 (the share of one-tool queries whose tool comes first), hit@3 (its tool
  among the at most three selected), and the share of no-tool queries with any
  selection ("nan" for "unseen", which has none).
- ``data/select_labelled.json``: 32 public skills and 58 tasks written for them (a
  regression check, not an unbiased estimate).

Speed: catalogs of 200, 2,000 and 10,000 skills (from *CORPUS.jsonl*, one
``{"name", "description"}`` per line, or else the MetaTool and labelled skills, each
repeated under new names) are written as skill folders, loaded as embedded skills, and
one agent allowed all of them; then ``handle.select(task)`` (the whole path: ranking,
loading, rendering, audit) and ``SelectionIndex.consider`` (the ranking alone) are timed
over the labelled tasks, p50 and p99, with the build of the index, beside rank_bm25's
ranking. The best round counts.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import math
import pstats
import random
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillguard import AllowPolicy, EmbeddedSkills, Limits, Loader, SkillError, parse_skill
from skillguard._skills.select import SelectionIndex

if TYPE_CHECKING:
    from collections.abc import Callable

HERE = Path(__file__).resolve().parent
LABELLED = HERE / "data" / "select_labelled.json"
METATOOL = HERE / "data" / "select_metatool.json"
SIZES = (200, 2000, 10000)
_SPLIT = re.compile(r"\W+")


def _bm25_tokens(text: str) -> list[str]:
    """What a user of rank_bm25 writes first: lowercase, split on non-word characters."""
    return [token for token in _SPLIT.split(text.lower()) if token]


class Bm25Baseline:
    """rank_bm25's BM25Okapi over name + description; "selected" = a positive score."""

    def __init__(self, skills: list[tuple[str, str]]) -> None:
        from rank_bm25 import BM25Okapi

        self.names = [name for name, _ in skills]
        self.bm25 = BM25Okapi(
            [_bm25_tokens(name.replace("-", " ") + " " + text) for name, text in skills]
        )

    def rank(self, task: str, limit: int = 3) -> list[str]:
        scores = self.bm25.get_scores(_bm25_tokens(task))
        order = sorted(range(len(scores)), key=lambda i: (-scores[i], self.names[i]))
        return [self.names[i] for i in order[:limit] if scores[i] > 0]


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


# -- quality ---------------------------------------------------------------------------


def _scores(
    rank: Callable[[str], list[str]], tasks: list[dict[str, Any]]
) -> tuple[float, float, float, int, int]:
    single = [task for task in tasks if task["kind"] == "single"]
    none = [task for task in tasks if task["kind"] == "none"]
    top1 = hit3 = selected = 0
    for task in single:
        got = rank(task["task"])
        top1 += got[:1] == task["expected"]
        hit3 += task["expected"][0] in got[:3]
    for task in none:
        selected += bool(rank(task["task"]))
    share = selected / len(none) if none else math.nan  # "unseen" has no no-tool query
    return top1 / len(single), hit3 / len(single), share, len(single), len(none)


def quality_metatool() -> None:
    data = json.loads(METATOOL.read_text())
    catalog = [(skill["name"], skill["description"]) for skill in data["skills"]]
    index = SelectionIndex(catalog)
    baseline = Bm25Baseline(catalog)

    def ours(task: str) -> list[str]:
        return [match.name for match in index.rank(task)[:3]]

    print(f"MetaTool: {len(catalog)} tools, {len(data['tasks'])} queries ({data['source']})")
    print(
        f"{'split':>9} {'contestant':>11} {'top-1':>7} {'hit@3':>7}"
        f" {'no-tool queries with a selection':>33}"
    )
    for split in ("tune", "held-out", "unseen"):
        tasks = [task for task in data["tasks"] if task["split"] == split]
        for label, rank in (("skillguard", ours), ("rank_bm25", baseline.rank)):
            top1, hit3, selected, singles, nones = _scores(rank, tasks)
            print(
                f"{split:>9} {label:>11} {top1:7.3f} {hit3:7.3f} {selected:33.3f}"
                f"   ({singles} one-tool, {nones} no-tool)"
            )


def quality_labelled() -> None:
    data = json.loads(LABELLED.read_text())
    catalog = [(skill["name"], skill["description"]) for skill in data["skills"]]
    index = SelectionIndex(catalog)
    baseline = Bm25Baseline(catalog)

    def ours(task: str) -> list[str]:
        return [match.name for match in index.rank(task)[:3]]

    print(f"labelled set: {len(catalog)} skills, {len(data['tasks'])} tasks")
    print(f"{'contestant':>12} {'top-1':>8} {'none when none fits':>20} {'multi recall':>13}")
    for label, rank in (("skillguard", ours), ("rank_bm25", baseline.rank)):
        single = [task for task in data["tasks"] if task["kind"] == "single"]
        multi = [task for task in data["tasks"] if task["kind"] == "multi"]
        none = [task for task in data["tasks"] if task["kind"] == "none"]
        top1 = sum(rank(task["task"])[:1] == task["expected"] for task in single)
        empty = sum(rank(task["task"]) == [] for task in none)
        found = sum(len(set(rank(task["task"])) & set(task["expected"])) for task in multi)
        wanted = sum(len(task["expected"]) for task in multi)
        print(
            f"{label:>12} {top1:>3}/{len(single):<4} {empty:>9}/{len(none):<10}"
            f" {found:>6}/{wanted:<6}"
        )


# -- speed -----------------------------------------------------------------------------


def _corpus(path: Path | None) -> list[tuple[str, str]]:
    if path is not None:
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        by_name: dict[str, str] = {}
        for row in rows:
            by_name.setdefault(row["name"], row["description"])
        return sorted(by_name.items())
    skills = json.loads(METATOOL.read_text())["skills"] + json.loads(LABELLED.read_text())["skills"]
    return [(skill["name"], skill["description"]) for skill in skills]


def _catalog(corpus: list[tuple[str, str]], size: int) -> list[tuple[str, str]]:
    rows = list(corpus)
    random.Random(size).shuffle(rows)
    out = rows[:size]
    copy = 1
    while len(out) < size:  # a small corpus, repeated under new names
        out += [(f"{name}-{copy}", text) for name, text in rows[: size - len(out)]]
        copy += 1
    return out


def _skill_text(name: str, description: str) -> str:
    return (
        f"---\nname: {name}\ndescription: {json.dumps(description[:1000], ensure_ascii=False)}"
        f"\n---\n# {name}\n\nThe procedure of {name}.\n" + "Step.\n" * 40
    )


def _loadable(corpus: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The corpus rows that make a skill the strict parser takes (a public collection
    holds names and descriptions it refuses)."""
    out = []
    for name, description in corpus:
        try:
            parse_skill(_skill_text(name, description).encode(), expected_name=name)
        except SkillError:
            continue
        out.append((name, description))
    return out


def _write(folder: Path, catalog: list[tuple[str, str]]) -> None:
    for name, description in catalog:
        (folder / name).mkdir()
        (folder / name / "SKILL.md").write_text(_skill_text(name, description))


def _timed(run: Callable[[str], object], tasks: list[str], rounds: int) -> tuple[float, float]:
    best = (float("inf"), float("inf"))
    for _ in range(rounds):
        times = []
        for task in tasks:
            start = time.perf_counter()
            run(task)
            times.append(time.perf_counter() - start)
        best = (min(best[0], _percentile(times, 0.5)), min(best[1], _percentile(times, 0.99)))
    return best


def speed(corpus_path: Path | None, rounds: int, profile: bool) -> None:
    corpus = _loadable(_corpus(corpus_path))
    tasks = [task["task"] for task in json.loads(LABELLED.read_text())["tasks"]]
    print(f"corpus: {len(corpus)} skills; {len(tasks)} tasks x {rounds} rounds per catalog")
    print(
        f"{'catalog':>8} {'what':>26} {'build ms':>9} {'p50 ms':>8} {'p99 ms':>8}"
        f" {'mean selected':>14}"
    )
    for size in SIZES:
        catalog = _catalog(corpus, size)
        with tempfile.TemporaryDirectory() as tmp:
            _write(Path(tmp), catalog)
            limits = Limits(max_dirs_per_root=size + 1)
            embedded = EmbeddedSkills.from_directory(tmp, limits=limits)
            policy = AllowPolicy.from_mapping(
                {"agents": {"a": {"skills": [name for name, _ in catalog]}}}
            )
            with Loader(policy, embedded=embedded) as loader:
                handle = loader.bind("a")
                start = time.perf_counter()
                handle.select("warm up the index")
                build = time.perf_counter() - start
                chosen = sum(len(handle.select(task).names) for task in tasks)
                whole = _timed(handle.select, tasks, rounds)
                if profile and size == SIZES[-1]:
                    profiler = cProfile.Profile()
                    profiler.enable()
                    for task in tasks * 5:
                        handle.select(task)
                    profiler.disable()
                    pstats.Stats(profiler, stream=sys.stdout).sort_stats("cumulative").print_stats(
                        18
                    )
        start = time.perf_counter()
        index = SelectionIndex(catalog)
        index_build = time.perf_counter() - start
        ranking = _timed(index.consider, tasks, rounds)
        start = time.perf_counter()
        baseline = Bm25Baseline(catalog)
        bm25_build = time.perf_counter() - start
        theirs = _timed(baseline.rank, tasks, max(1, rounds // 4))
        for label, built, (p50, p99), mean in (
            ("skillguard handle.select", build, whole, f"{chosen / len(tasks):14.2f}"),
            ("skillguard ranking", index_build, ranking, f"{'-':>14}"),
            ("rank_bm25 ranking", bm25_build, theirs, f"{'-':>14}"),
        ):
            print(
                f"{size:>8} {label:>26} {built * 1000:9.1f} {p50 * 1000:8.3f}"
                f" {p99 * 1000:8.3f}{mean}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, help="JSONL of public skills")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--quality-only", action="store_true")
    parser.add_argument("--profile", action="store_true", help="cProfile the largest catalog")
    args = parser.parse_args()
    quality_metatool()
    quality_labelled()
    if not args.quality_only:
        speed(args.corpus, args.rounds, args.profile)


if __name__ == "__main__":
    main()
