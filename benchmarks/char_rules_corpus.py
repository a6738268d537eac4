"""How the character rules meet real skills: counts over a folder of SKILL.md files.

Usage::

    python benchmarks/char_rules_corpus.py FOLDER [FOLDER ...]

Every ``SKILL.md`` under each FOLDER is parsed under ``strict`` and ``compat``, with
its folder name as the expected name, and the outcomes are counted: ok, refused with
``forbidden_character``, refused with any other code; how many bodies hold a character
the rules refuse; and which characters were behind each ``forbidden_character``. The
script downloads nothing and writes nothing; it runs against whichever skillguard is
importable, so the same files can be measured with an older checkout on
``PYTHONPATH`` (that is how benchmarks/README.md compares the rules before and after).
"""

from __future__ import annotations

import argparse
import collections
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import skillguard
from skillguard import MalformedSkillError, parse_skill

if TYPE_CHECKING:
    from collections.abc import Callable

_CODE_POINT = re.compile(r"U\+([0-9A-F]{4,6})")


def _body_checker() -> Callable[[str], str | None]:
    """The rule for "this body hides something", from whichever skillguard is loaded."""
    try:
        from skillguard._core.text import find_hidden
    except ImportError:
        from skillguard._skills.parse import _FORBIDDEN_RE  # type: ignore[attr-defined]

        def old(body: str) -> str | None:
            found = _FORBIDDEN_RE.search(body)
            return None if found is None else found.group()

        return old

    def new(body: str) -> str | None:
        found = find_hidden(body)
        return None if found is None else found[1]

    return new


def _body_of(raw: bytes) -> str | None:
    """The body as the parser would split it, for documents the parser refuses."""
    text = raw.decode("utf-8", "replace").replace("\r\n", "\n")
    parts = re.split(r"^---[ \t]*$", text, maxsplit=2, flags=re.MULTILINE)
    return parts[2] if len(parts) == 3 else None


def measure(folder: Path) -> dict[str, collections.Counter[str]]:
    hides = _body_checker()
    counts: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for path in sorted(folder.rglob("SKILL.md")):
        if not path.is_file() or path.is_symlink():
            continue
        raw = path.read_bytes()
        counts["total"]["skills"] += 1
        for profile in ("strict", "compat"):
            try:
                skill = parse_skill(raw, expected_name=path.parent.name, profile=profile)
            except MalformedSkillError as error:  # noqa: PERF203 - the outcome is counted
                outcome = error.code if error.code == "forbidden_character" else "other_error"
                counts[profile][outcome] += 1
                if error.code == "forbidden_character":
                    where = "body" if error.key is None else "field"
                    counts[profile][f"forbidden_in_{where}"] += 1
                    for code in _CODE_POINT.findall(error.reason):
                        counts[f"{profile}_chars"][f"U+{code}"] += 1
            else:
                counts[profile]["ok"] += 1
                if any(w.code == "hidden_character" for w in skill.warnings):
                    counts[profile]["hidden_character_warning"] += 1
        body = _body_of(raw)
        if body is not None:
            char = hides(body)
            if char is not None:
                counts["body"]["hides"] += 1
                counts["body_chars"][f"U+{ord(char):04X}"] += 1
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", type=Path)
    args = parser.parse_args()
    print(f"skillguard from {Path(skillguard.__file__).parent}")
    for folder in args.folders:
        counts = measure(folder)
        print(f"\n{folder}: {counts['total']['skills']} SKILL.md files")
        for profile in ("strict", "compat"):
            c = counts[profile]
            print(
                f"  {profile:6}  ok {c['ok']:6}  forbidden_character {c['forbidden_character']:5}"
                f" (fields {c['forbidden_in_field']}, body {c['forbidden_in_body']})"
                f"  other errors {c['other_error']:5}"
                f"  hidden_character warnings {c['hidden_character_warning']}"
            )
            common = ", ".join(f"{k} x{v}" for k, v in counts[f"{profile}_chars"].most_common(8))
            if common:
                print(f"          refused characters: {common}")
        common = ", ".join(f"{k} x{v}" for k, v in counts["body_chars"].most_common(8))
        print(f"  bodies holding a refused character: {counts['body']['hides']} ({common or '-'})")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
