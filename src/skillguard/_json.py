"""Strict JSON for the documents skillguard reads: one entry point, caps first.

Rules (ARCHITECTURE.md rule 7; threat-model.md T33). Python's ``json`` keeps the last
of two equal keys, accepts ``NaN`` and ``Infinity``, and recurses once per nesting
level. ``loads_strict`` refuses all three, before any value is built where it can:

* the size is capped before decoding; the text must be strict UTF-8;
* the nesting depth is counted by a scan outside strings, before ``json`` runs, so no
  input can reach ``RecursionError``;
* a key repeated in one object, at any depth, is refused;
* ``NaN``, ``Infinity`` and ``-Infinity`` are refused.

Errors are ``StrictJSONError`` (a ``ValueError``) with a reason and no content; each
caller turns it into its own typed ``SkillError``.
"""

from __future__ import annotations

import json
import re
from typing import NoReturn

__all__ = ["StrictJSONError", "loads_strict"]

# A backslash escape is taken whole (so an escaped quote never ends a string), then
# quotes and brackets one at a time.
_TOKENS = re.compile(r'\\.|["\[\]{}]', re.DOTALL)


class StrictJSONError(ValueError):
    """The document is not strict JSON within the caps."""


def _refuse(reason: str) -> NoReturn:
    raise StrictJSONError(reason)


def _depth(text: str) -> int:
    """The deepest nesting of ``[`` and ``{`` outside strings (one regex pass)."""
    depth = deepest = 0
    in_string = False
    for match in _TOKENS.finditer(text):
        char = match.group()
        if char == '"':
            in_string = not in_string
        elif in_string or len(char) == 2:
            continue
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


def _pairs(pairs: list[tuple[str, object]]) -> dict[str, object]:
    record = dict(pairs)
    if len(record) != len(pairs):
        _refuse("a key is repeated in one object")
    return record


def _constant(name: str) -> NoReturn:
    _refuse(f"{name} is not a JSON number")


def loads_strict(raw: bytes | str, *, max_bytes: int, max_depth: int) -> object:
    """Decode one strict JSON document (see the module docstring).

    Raises ``StrictJSONError``; any other exception is a bug.
    """
    if isinstance(raw, str):
        text = raw
        # A character is at most four bytes: only a long text needs encoding to measure.
        if len(text) * 4 > max_bytes and len(text.encode("utf-8", "surrogatepass")) > max_bytes:
            _refuse(f"the document is larger than {max_bytes} bytes")
    else:
        if len(raw) > max_bytes:
            _refuse(f"the document is larger than {max_bytes} bytes")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            _refuse("the document is not valid UTF-8")
    if _depth(text) > max_depth:
        _refuse(f"the document nests deeper than {max_depth} levels")
    try:
        return json.loads(text, object_pairs_hook=_pairs, parse_constant=_constant)
    except StrictJSONError:
        raise
    except (ValueError, RecursionError) as exc:
        raise StrictJSONError("the document is not valid JSON") from exc
