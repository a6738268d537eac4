"""Emitting a composed agent file: a frontmatter that is YAML safe by construction.

Rules (threat-model.md T101, T102). Every scalar is double-quoted with every character
that YAML could read otherwise escaped, ``tools`` is a list (a comma-separated string
for Claude's native dialect), keys in a fixed order. Sans-IO.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

from skillguard._agents.tokenmap import SLUG
from skillguard._core.errors import MalformedSkillError, safe_repr

if TYPE_CHECKING:
    from skillguard._agents.tokenmap import TokenMap

__all__ = ["emit", "native_name"]

# Characters a double-quoted YAML scalar must spell as escapes: the quote, the
# backslash, every control and every character YAML treats as a line break.
_YAML_ESCAPES: Final = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t"}
_YAML_ESCAPE_RE: Final = re.compile('[\\\\"\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]')


def _quote(value: str) -> str:
    """*value* as a double-quoted YAML scalar that reads back as exactly *value*."""

    def escape(match: re.Match[str]) -> str:
        char = match.group()
        return _YAML_ESCAPES.get(char) or f"\\u{ord(char):04X}"

    return '"' + _YAML_ESCAPE_RE.sub(escape, value) + '"'


def native_name(name: str, token_map: TokenMap, harness: str) -> str:
    prefix = token_map.prefixes.get(harness, "")
    # The map's prefix for this harness when the name carries it, else any "ns:" part.
    slug = name[len(prefix) :] if prefix and name.startswith(prefix) else name.rpartition(":")[2]
    if SLUG.fullmatch(slug) is None:
        raise MalformedSkillError(
            "bad_agent_name",
            f"the native name {safe_repr(slug)} (from {safe_repr(name)}) is not a lowercase slug",
            key="name",
        )
    return slug


def emit(fields: list[tuple[str, str | tuple[str, ...]]], body: str) -> str:
    lines = ["---"]
    for key, value in fields:
        if isinstance(value, tuple):
            lines.append(f"{key}:")
            lines.extend(f"  - {_quote(item)}" for item in value)
        else:
            lines.append(f"{key}: {_quote(value)}")
    lines.append("---")
    return "\n".join(lines) + "\n" + body
