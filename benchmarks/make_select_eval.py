"""Build ``data/select_metatool.json`` from the MetaTool benchmark (ToolE), MIT licence.

Usage::

    python benchmarks/make_select_eval.py METATOOL_CHECKOUT

*METATOOL_CHECKOUT* is a clone of https://github.com/HowieHwong/MetaTool at commit
``35e81bb7`` (or later: the script reads only ``dataset/plugin_des.json``,
``dataset/tmp_dataset/Task1.json`` and ``dataset/data/all_clean_data.csv``). It writes:

- ``skills``: the 199 tools of ``plugin_des.json`` as skills, their names turned into
  skill names (CamelCase and ``_`` cut into kebab-case: ``SummarizeAnything_pr`` becomes
  ``summarize-anything-pr``), their descriptions as published;
- ``tasks``: the 1,040 queries of the tool-usage awareness task (``Task1.json``): 520
  that the authors labelled as needing one tool (``kind`` "single", with that tool) and
  520 that need none (``kind`` "none"), plus 1,000 single-tool queries drawn with a
  fixed seed from ``all_clean_data.csv``;
- each task's ``split``: "tune" or "held-out", from the first byte of the sha256 of its
  text (even: tune), so the split never depends on the order of the files or on what
  the ranking does with the task;
- a third split, "unseen": the next 3,000 single-tool queries of the same shuffle,
  added after the rule was fixed, to measure top-1 on queries no setting was chosen
  by (it has no query that needs no tool: the awareness task's 520 are all above).

The selection rule is tuned on "tune" only; the README reports all three.
"""

from __future__ import annotations

import csv
import hashlib
import json
import random
import re
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "data" / "select_metatool.json"
COMMIT = "35e81bb7"
SOURCE = "https://github.com/HowieHwong/MetaTool"
LICENCE = (
    "MIT License, Copyright (c) 2023 Yue Huang. Permission is hereby granted, free of "
    "charge, to any person obtaining a copy of this software and associated documentation "
    'files (the "Software"), to deal in the Software without restriction, including '
    "without limitation the rights to use, copy, modify, merge, publish, distribute, "
    "sublicense, and/or sell copies of the Software, and to permit persons to whom the "
    "Software is furnished to do so, subject to the following conditions: The above "
    "copyright notice and this permission notice shall be included in all copies or "
    'substantial portions of the Software. THE SOFTWARE IS PROVIDED "AS IS", WITHOUT '
    "WARRANTY OF ANY KIND, EXPRESS OR IMPLIED."
)
EXTRA_SINGLE = 1000
# One-tool queries of ``all_clean_data.csv`` past the first EXTRA_SINGLE of the same
# shuffle, added in a third split after the rule of the second abstention round was
# fixed: no setting was ever chosen while looking at them.
UNSEEN_SINGLE = 3000


def skill_name(tool: str) -> str:
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "-", tool)
    name = re.sub(r"[^a-z0-9]+", "-", spaced.lower()).strip("-")
    return re.sub(r"-{2,}", "-", name)


def split_of(text: str) -> str:
    return "tune" if hashlib.sha256(text.encode()).digest()[0] % 2 == 0 else "held-out"


def main() -> None:
    root = Path(sys.argv[1])
    tools = json.loads((root / "dataset" / "plugin_des.json").read_text())
    names = {tool: skill_name(tool) for tool in tools}
    assert len(set(names.values())) == len(names), "two tools share a skill name"
    awareness = json.loads((root / "dataset" / "tmp_dataset" / "Task1.json").read_text())
    tasks = []
    seen = set()
    for row in awareness:
        query = row["query"].strip()
        if query in seen:
            continue
        seen.add(query)
        if row["label"] == "positive":
            tasks.append({"task": query, "expected": [names[row["tool"]]], "kind": "single"})
        else:
            tasks.append({"task": query, "expected": [], "kind": "none"})
    with (root / "dataset" / "data" / "all_clean_data.csv").open(newline="") as handle:
        rows = [(row["Query"].strip(), row["Tool"]) for row in csv.DictReader(handle)]
    rows = sorted({row for row in rows if row[0] not in seen and row[1] in names})
    random.Random(23).shuffle(rows)
    for query, tool in rows[:EXTRA_SINGLE]:
        tasks.append({"task": query, "expected": [names[tool]], "kind": "single"})
    for task in tasks:
        task["split"] = split_of(task["task"])
    for query, tool in rows[EXTRA_SINGLE : EXTRA_SINGLE + UNSEEN_SINGLE]:
        tasks.append(
            {"task": query, "expected": [names[tool]], "kind": "single", "split": "unseen"}
        )
    # A few queries of the CSV carry two tools; drawn twice, one text would sit in two
    # splits or have two answers. None does at the commit above: a rebuild from other
    # data stops here rather than measure a split against itself.
    twice = sorted(text for text, n in Counter(task["task"] for task in tasks).items() if n > 1)
    if twice:
        raise SystemExit(f"{len(twice)} queries drawn twice, e.g. {twice[0]!r}")
    data = {
        "about": (
            "Tool selection and tool-usage awareness queries from the MetaTool benchmark "
            "(ToolE dataset), for benchmarks/bench_select.py; built by "
            "benchmarks/make_select_eval.py."
        ),
        "source": f"{SOURCE} at commit {COMMIT}",
        "licence": LICENCE,
        "skills": [
            {"name": names[tool], "description": description, "tool": tool}
            for tool, description in sorted(tools.items(), key=lambda item: names[item[0]])
        ],
        "tasks": tasks,
    }
    OUT.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    counts: dict[tuple[str, str], int] = {}
    for task in tasks:
        key = (task["kind"], task["split"])
        counts[key] = counts.get(key, 0) + 1
    print(f"{len(data['skills'])} skills, {len(tasks)} tasks: {sorted(counts.items())}")


if __name__ == "__main__":
    main()
