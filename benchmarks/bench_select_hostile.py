"""Skill selection against a hostile skill author, on the public MetaTool queries.

Usage::

    python benchmarks/bench_select_hostile.py

Two attacks on ``SelectionIndex`` over the 199 MetaTool tools (``data/select_metatool.
json``; see ``bench_select.py``), each printed with and without the naming bonus
(``NAME_BONUS``), so what naming adds to an attacker is measured, not guessed:

- Reach (threat-model.md T80, T318): one added skill whose description lists the words
  MetaTool's queries use most, under names made of those words (and one with no name
  word). Printed: of the 2,040 queries, how many select it, how many rank it first, and
  how many of the 520 no-tool queries select it. A real tool is the answer to about ten.
- Copy veto (T335): for each tool, a copy with its description under a name of the same
  words (``the-`` before it, a stop word) or under other words; printed: of the
  one-tool queries whose tool comes first alone, how many no longer select that tool.
"""

from __future__ import annotations

import json
from pathlib import Path

from skillguard._skills import rank

METATOOL = Path(__file__).resolve().parent / "data" / "select_metatool.json"
COMMON = (
    "Find and provide current information, specific details, time, website, data, "
    "recommend, list, price, recent, latest, work, image, search, plan, market, product, "
    "research."
)
NAMES = ("find", "information", "provide-information", "find-find-find-find", "x")


def main() -> None:
    data = json.loads(METATOOL.read_text())
    tools = [(skill["name"], skill["description"]) for skill in data["skills"]]
    # The tune and held-out queries (2,040): the "unseen" split measures top-1 only.
    tasks = [task for task in data["tasks"] if task["split"] != "unseen"]
    kept = rank.NAME_BONUS
    print(f"reach of one stuffed skill, of {len(tasks)} queries (selected, first, no-tool)")
    for name in NAMES:
        row = []
        for bonus in (kept, 0.0):
            vars(rank)["NAME_BONUS"] = bonus  # a Final, swapped for the comparison only
            index = rank.SelectionIndex([*tools, (name, COMMON)])
            got = [[match.name for match in index.rank(task["task"])] for task in tasks]
            row.append(
                (
                    sum(name in names for names in got),
                    sum(names[:1] == [name] for names in got),
                    sum(
                        name in names
                        for names, task in zip(got, tasks, strict=True)
                        if task["kind"] == "none"
                    ),
                )
            )
        vars(rank)["NAME_BONUS"] = kept
        print(f"  {name:>22}: {row[0]} with naming, {row[1]} without")
    index = rank.SelectionIndex(tools)
    won = [
        task
        for task in tasks
        if task["kind"] == "single"
        and [match.name for match in index.rank(task["task"])][:1] == task["expected"]
    ]
    description = dict(tools)
    for label, copy in (("same name words", "the-{}"), ("other name words", "zq-copy-of-{}")):
        denied = 0
        for tool in sorted({task["expected"][0] for task in won}):
            copied = rank.SelectionIndex([*tools, (copy.format(tool), description[tool])])
            denied += sum(
                tool not in [match.name for match in copied.rank(task["task"])]
                for task in won
                if task["expected"][0] == tool
            )
        print(f"copy veto, {label}: {denied} of the {len(won)} queries a tool won")


if __name__ == "__main__":
    main()
