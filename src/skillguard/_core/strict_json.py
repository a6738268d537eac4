"""Strict JSON for the documents skillguard reads: one entry point, caps first.

Rules (ARCHITECTURE.md rule 7; threat-model.md T33). Python's ``json`` keeps the last
of two equal keys, accepts ``NaN`` and ``Infinity``, and recurses once per nesting
level. ``loads_strict`` refuses all three, before any value is built where it can:

* the size is capped before decoding; the text must be strict UTF-8;
* the nesting depth is counted by a scan outside strings, before ``json`` runs, so no
  input can reach ``RecursionError``;
* a key repeated in one object, at any depth, is refused;
* ``NaN``, ``Infinity`` and ``-Infinity`` are refused;
* a ``//`` or ``/*`` comment outside a string is refused with a reason that says so
  (JSON has no comments, and a reader that skips them would see another document
  than one that refuses them).

Errors are ``StrictJSONError`` (a ``ValueError``) with a reason and no content, and a
``code`` that names the one defect (``too_large``, ``bad_encoding``,
``too_deep``, ``json_comment``, ``duplicate_key``, ``json_non_finite``,
``json_syntax``); each caller turns it into its own typed ``SkillError``.
"""

from __future__ import annotations

import json
import math
import re
from typing import NoReturn

__all__ = ["StrictJSONError", "loads_strict"]

# A backslash escape is taken whole (so an escaped quote never ends a string), then
# quotes and brackets one at a time.
_TOKENS = re.compile(r'\\.|["\[\]{}/]', re.DOTALL)


class StrictJSONError(ValueError):
    """The document is not strict JSON within the caps; ``code`` names the defect."""

    def __init__(self, code: str, reason: str) -> None:
        super().__init__(reason)
        self.code = code


def _refuse(code: str, reason: str) -> NoReturn:
    raise StrictJSONError(code, reason)


def _depth(text: str) -> int:
    """The deepest nesting of ``[`` and ``{`` outside strings (one regex pass).

    A comment outside a string is refused here, where strings are already told apart.
    """
    depth = deepest = 0
    in_string = False
    for match in _TOKENS.finditer(text):
        char = match.group()
        if char == '"':
            in_string = not in_string
        elif in_string or len(char) == 2:
            continue
        elif char == "/":
            if text[match.end() : match.end() + 1] in ("/", "*"):
                line = text.count("\n", 0, match.start()) + 1
                _refuse(
                    "json_comment",
                    f"line {line}: JSON does not allow comments (remove the "
                    f"{text[match.start() : match.end() + 1]} comment)",
                )
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


def _pairs(pairs: list[tuple[str, object]]) -> dict[str, object]:
    record = dict(pairs)
    if len(record) != len(pairs):
        _refuse("duplicate_key", "a key is repeated in one object")
    return record


def _constant(name: str) -> NoReturn:
    _refuse("json_non_finite", f"{name} is not a JSON number")


def _finite(text: str) -> float:
    # json reads 1e999 as inf, a value no strict document can hold.
    value = float(text)
    if not math.isfinite(value):
        _refuse("json_non_finite", "a number too large to be finite")
    return value


# One decoder for every call: building one per document costs more than a short record.
_DECODER = json.JSONDecoder(object_pairs_hook=_pairs, parse_constant=_constant, parse_float=_finite)


def _shallow(text: str, max_depth: int) -> bool:
    """A quick yes for most documents: fewer brackets than the cap, and nothing that
    could open a comment, so the full scan of ``_depth`` has nothing to find."""
    return text.count("[") + text.count("{") <= max_depth and "//" not in text and "/*" not in text


def loads_strict(raw: bytes | str, *, max_bytes: int, max_depth: int) -> object:
    """Decode one strict JSON document (see the module docstring).

    Raises ``StrictJSONError``; any other exception is a bug.
    """
    if isinstance(raw, str):
        text = raw
        # A character is at most four bytes: only a long text needs encoding to measure.
        if len(text) * 4 > max_bytes and len(text.encode("utf-8", "surrogatepass")) > max_bytes:
            _refuse("too_large", f"the document is larger than {max_bytes} bytes")
    else:
        if len(raw) > max_bytes:
            _refuse("too_large", f"the document is larger than {max_bytes} bytes")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            _refuse("bad_encoding", "the document is not valid UTF-8")
    if not _shallow(text, max_depth) and _depth(text) > max_depth:
        _refuse("too_deep", f"the document nests deeper than {max_depth} levels")
    try:
        return _DECODER.decode(text)
    except StrictJSONError:
        raise
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno}, column {exc.colno}"
        raise StrictJSONError("json_syntax", f"the document is not valid JSON ({where})") from exc
    except (ValueError, RecursionError) as exc:
        raise StrictJSONError("json_syntax", "the document is not valid JSON") from exc
