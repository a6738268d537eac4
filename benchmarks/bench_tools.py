"""Tool grants and Claude Code fields on real skills: what the new rules change.

Usage::

    python benchmarks/bench_tools.py COLLECTION [COLLECTION ...] [--show N]

Each argument is a folder holding one collection of skills; every file named
``SKILL.md`` beneath it is read (nothing is downloaded). For each collection, and for
all of them with duplicate files (same SHA-256) counted once, it prints:

* ``files``, ``unique``: SKILL.md files, and those not seen before in the run;
* ``frontmatter``: documents whose frontmatter skillguard's YAML reader accepts;
* ``string form``, ``list form``: documents whose ``allowed-tools`` is a string / a list;
* ``split differs``: string forms that ``value.split()`` (the old rule) and
  ``split_tools`` (the new one) split differently (mostly commas), and ``inside ( )``:
  those where the old rule cut a rule inside its parentheses;
* ``unbalanced``: ``allowed-tools`` values now refused as ``malformed_tools``;
* ``CC keys``, ``skills``: Claude Code field keys (each an ``unknown_field`` warning
  before, now a typed field), and the documents holding at least one;
* ``bad flags``: ``disable-model-invocation`` / ``user-invocable`` values that are not
  a YAML 1.2 core boolean, now refused as ``wrong_type``.

Then, over every rule of every unique file, how :func:`skillguard._core.tool_rules.covers` reads
its shape: a whole tool, an exact specifier, a Bash prefix with or without a word
boundary, a sealed specifier (a shell operator, or a wildcard shape it does not
interpret) or no rule shape at all; the last two cover only themselves.

``--show N`` prints up to N examples of each change, escaped, for a human to look at.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
from collections import Counter
from pathlib import Path

from skillguard import MalformedSkillError
from skillguard._core.limits import DEFAULT_LIMITS
from skillguard._core.strict_yaml import decode_utf8, load_document
from skillguard._core.tool_rules import _parse, check_rule, split_tools
from skillguard._skills.document import _split_fences
from skillguard._skills.fields import _BOOLEANS

CLAUDE_CODE_KEYS = (
    "disable-model-invocation",
    "user-invocable",
    "argument-hint",
    "model",
    "context",
    "agent",
)
COLUMNS = (
    "files",
    "unique",
    "frontmatter",
    "string form",
    "list form",
    "split differs",
    "inside ( )",
    "unbalanced",
    "CC keys",
    "skills",
    "bad flags",
)


def frontmatter_fields(raw: bytes) -> dict[str, object] | None:
    """The composed frontmatter mapping, or None when skillguard refuses it."""
    if len(raw) > DEFAULT_LIMITS.max_skill_bytes:
        return None
    try:
        text = decode_utf8(raw)
        frontmatter, _body, first_line = _split_fences(text, DEFAULT_LIMITS)
        fields, _lines = load_document(
            frontmatter, DEFAULT_LIMITS, what="the frontmatter", first_line=first_line
        )
    except MalformedSkillError:
        return None
    return dict(fields)


def measure(
    files: list[Path], seen: set[str], examples: dict[str, list[str]], show: int
) -> tuple[Counter[str], Counter[str]]:
    """Count one collection; the second counter holds only files new to the run."""
    every: Counter[str] = Counter()
    new: Counter[str] = Counter()
    for path in files:
        raw = path.read_bytes()
        digest = hashlib.sha256(raw).hexdigest()
        counts = _count(raw, examples, show)
        counts["files"] = 1
        every.update(counts)
        if digest not in seen:
            seen.add(digest)
            counts["unique"] = 1
            new.update(counts)
    every["unique"] = new["files"]
    return every, new


def _count(raw: bytes, examples: dict[str, list[str]], show: int) -> Counter[str]:
    counts: Counter[str] = Counter()
    rules: list[str] = []
    fields = frontmatter_fields(raw)
    if fields is None:
        return counts
    counts["frontmatter"] = 1
    tools = fields.get("allowed-tools")
    if isinstance(tools, str):
        counts["string form"] = 1
        try:
            new = split_tools(tools)
        except ValueError:
            counts["unbalanced"] = 1
            _example(examples, "unbalanced", tools, show)
        else:
            rules.extend(new)
            if new != tuple(tools.split()):
                counts["split differs"] = 1
                _example(examples, "split differs", tools, show)
            if any(char.isspace() or char == "," for rule in new for char in rule):
                counts["inside ( )"] = 1
                _example(examples, "inside ( )", tools, show)
    elif isinstance(tools, tuple):
        counts["list form"] = 1
        items = [item.strip() for item in tools if isinstance(item, str)]
        rules.extend(items)
        try:
            for item in items:
                check_rule(item)
        except ValueError:
            counts["unbalanced"] = 1
            _example(examples, "unbalanced", repr(items), show)
    keys = [key for key in CLAUDE_CODE_KEYS if key in fields]
    counts["CC keys"] = len(keys)
    counts["skills"] = 1 if keys else 0
    for key in CLAUDE_CODE_KEYS[:2]:
        value = fields.get(key)
        if value is not None and not (isinstance(value, str) and value in _BOOLEANS):
            counts["bad flags"] += 1
            _example(examples, "bad flags", f"{key}: {value!r}", show)
    for key in keys:
        counts["key " + key] += 1
    for rule in rules:
        parsed = _parse(rule)
        counts["shape " + ("none" if parsed is None else parsed.kind)] += 1
    return counts


def _example(examples: dict[str, list[str]], kind: str, value: str, show: int) -> None:
    found = examples.setdefault(kind, [])
    if len(found) < show:
        found.append(ascii(value[:160]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("collections", nargs="+", type=Path)
    parser.add_argument("--show", type=int, default=0)
    args = parser.parse_args(argv)
    seen: set[str] = set()
    examples: dict[str, list[str]] = {}
    total: Counter[str] = Counter()
    print("| collection | " + " | ".join(COLUMNS) + " |")
    print("|---" * (len(COLUMNS) + 1) + "|")
    for folder in args.collections:
        files = sorted(
            Path(top) / "SKILL.md"
            for top, _dirs, names in os.walk(folder)
            if "SKILL.md" in names and (Path(top) / "SKILL.md").is_file()
        )
        every, new = measure(files, seen, examples, args.show)
        total.update(new)
        print(f"| {folder.name} | " + " | ".join(f"{every[c]:,}" for c in COLUMNS) + " |")
    print("| all, duplicates once | " + " | ".join(f"{total[c]:,}" for c in COLUMNS) + " |")
    print()
    for key in CLAUDE_CODE_KEYS:
        print(f"{key}: {total['key ' + key]:,} (unique files)")
    print()
    shapes = ("all", "exact", "word", "raw", "sealed", "none")
    print("| rules | " + " | ".join(shapes) + " |")
    print("|---" * (len(shapes) + 1) + "|")
    print(
        f"| {sum(total['shape ' + s] for s in shapes):,} | "
        + " | ".join(f"{total['shape ' + s]:,}" for s in shapes)
        + " |"
    )
    for kind, found in examples.items():
        print(f"\n{kind}:")
        for value in found:
            print("   ", value)
    return 0


if __name__ == "__main__":
    sys.exit(main())
