"""Restricted YAML: the one entry point for every YAML document skillguard reads.

:func:`load_document` is how SKILL.md frontmatter, the policy file and any other YAML
document become data (threat-model.md T1, T3-T7, T60). In this order it applies:

1. Size: the document is at most ``Limits.max_frontmatter_bytes`` of UTF-8, checked
   before decoding when it arrives as bytes.
2. Encoding (bytes only): strict UTF-8, one leading BOM removed, CRLF and lone CR
   read as LF (:func:`decode_utf8`, which the SKILL.md parser uses for a whole file).
3. Characters: NUL, C0/C1 controls other than tab and newline (NEL U+0085 among
   them), the line and paragraph separators U+2028/U+2029 and U+FEFF are refused.
   libyaml breaks lines at U+2028, U+2029 and NEL, YAML 1.2 does not, and a person
   sees none of them: ``# read-only<U+2028>workspace: approve`` is a comment to a
   reviewer and a grant to libyaml.
4. Composition from the parser's events, below.

Hostile text is never handed to ``YAML().load()``: ruamel's C loader recurses in C
and kills the interpreter on deep flow nesting, its pure loader raises
``AssertionError`` on ``%YAML 1.10``, and neither can be told to refuse aliases.
Instead we pull parser *events* one at a time and build the value ourselves,
iteratively, refusing at the first event that breaks a rule:

* no anchors, no aliases (no billion-laughs expansion, no shared structure);
* no explicit tags of any kind, no directive lines (``%YAML``, ``%TAG``, reserved);
* exactly one document, and no ``...`` end marker lines;
* mapping keys are scalars, compared as the strings they denote, never repeated
  at any depth, never empty and unquoted, and never the merge key ``<<``;
* depth, node count and scalar length are capped by :class:`Limits`;
* every scalar stays a string: no implicit typing at all.

The C parser (libyaml via ``ruamel.yaml.clib``, YAML 1.1) is used where it is
installed; the pure-Python parser (YAML 1.2) is the fallback. They must give the same
answer for every input (threat-model.md T6, T60; a differential test and fuzz target
check it, on skills and on policies). The text reaching them has been cleared of
control and line-separator characters by step 3, and the constructs the two grammars
read differently are refused here: tabs outside quoted scalars, empty unquoted keys,
an unquoted ``:`` inside a flow collection, a ``#`` glued to a block scalar header,
and the lines named above.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from ruamel.yaml.events import (
    AliasEvent,
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
)

from skillguard._core.errors import MalformedSkillError, SkillUsageError, safe_repr
from skillguard._core.model import FrozenMap, YamlValue
from skillguard._core.yaml_errors import syntax_error

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from skillguard._core.limits import Limits

try:
    from _ruamel_yaml import CParser as _CParser
except ImportError:  # pragma: no cover - exercised on interpreters without the wheel
    _CParser = None

__all__ = [
    "BACKENDS",
    "Backend",
    "KeyLines",
    "decode_utf8",
    "default_backend",
    "has_c_parser",
    "load_document",
]

Backend: TypeAlias = Literal["c", "pure"]

_BOM = b"\xef\xbb\xbf"
# C0/C1 controls (tab and newline aside), the line and paragraph separators and a BOM
# inside the text: invisible to a reviewer, and the two YAML parsers disagree on them.
# Lone surrogates cannot come from decoded bytes, only from a caller's str.
_FORBIDDEN_CONTROL_RE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff\ud800-\udfff]")
_ASCII_ALLOWED = b"\t\n" + bytes(range(0x20, 0x7F))
_NO_KEY: Any = object()
_QUOTED = ("'", '"')
# The raw text is cleared of these characters first; a double-quoted scalar can still
# spell them as escapes ("\x1b", "\u2028"), and lone surrogates ("\ud800") too.
_ESCAPED_FORBIDDEN_RE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff\ud800-\udfff]")
_BLOCK = ("|", ">")
# Lines that only a directive ("%YAML", "%TAG", a reserved "%FOO") or a document end
# marker can start. libyaml and ruamel's pure parser disagree on reserved directives
# and on repeated "..." markers, and neither has a use in a skill's frontmatter.
_DIRECTIVE_OR_MARKER_RE = re.compile(r"^(?:%|\.\.\.(?:[ \t]|$))", re.MULTILINE)


def has_c_parser() -> bool:
    """Whether ruamel's C parser extension is importable here."""
    return _CParser is not None


def default_backend() -> Backend:
    return "c" if _CParser is not None else "pure"


class KeyLines:
    """The file line of each top-level key, worked out only when an error needs it."""

    __slots__ = ("_first_line", "_marks")

    def __init__(self, marks: dict[str, Any], first_line: int) -> None:
        self._marks = marks
        self._first_line = first_line

    def get(self, key: str) -> int | None:
        mark = self._marks.get(key)
        return None if mark is None else int(mark.line) + self._first_line

    def column(self, key: str) -> int | None:
        """The 1-based column where *key* starts (a quoted key: its opening quote)."""
        mark = self._marks.get(key)
        return None if mark is None else int(mark.column) + 1

    def as_dict(self) -> dict[str, int]:
        return {key: int(mark.line) + self._first_line for key, mark in self._marks.items()}


def _c_events(text: str) -> Callable[[], Any]:
    if _CParser is None:  # pragma: no cover - only without the C extension
        raise SkillUsageError("bad_argument", "the C YAML parser is not installed")
    return _CParser(text).get_event  # type: ignore[no-any-return]


def _pure_events(text: str) -> Callable[[], Any]:
    # Imported lazily: the pure parser pulls in most of ruamel.yaml and is only the
    # fallback (and the other half of the differential test).
    from ruamel.yaml import YAML  # noqa: PLC0415

    events: Iterator[Any] = iter(YAML(typ="safe", pure=True).parse(text))
    return events.__next__


BACKENDS: dict[Backend, Callable[[str], Callable[[], Any]]] = {
    "c": _c_events,
    "pure": _pure_events,
}
_DEFAULT_BACKEND: Backend = default_backend()


def _line_of(event: Any, first_line: int) -> int | None:  # noqa: ANN401
    mark = getattr(event, "start_mark", None)
    line = getattr(mark, "line", None)
    return line + first_line if isinstance(line, int) else None


def _column_of(event: Any) -> int | None:  # noqa: ANN401
    column = getattr(getattr(event, "start_mark", None), "column", None)
    return column + 1 if isinstance(column, int) else None


def _fail(code: str, reason: str, event: Any, first_line: int, key: str | None = None) -> None:  # noqa: ANN401
    line = _line_of(event, first_line)
    column = _column_of(event) if line is not None else None
    raise MalformedSkillError(code, reason, line=line, key=key, column=column)


def _fail_properties(event: Any, first_line: int) -> None:  # noqa: ANN401
    if event.anchor is not None:
        _fail("yaml_anchor", "anchors are not allowed", event, first_line)
    _fail("yaml_tag", "explicit tags are not allowed", event, first_line)


def _column_at(text: str, index: int) -> int:
    """The 1-based column, in characters, of *text*[*index*]."""
    return index - text.rfind("\n", 0, index)


def _check_tabs(text: str, quoted_spans: list[tuple[int, int]], first_line: int) -> None:
    # Counting in C, span by span, settles the usual case (every tab quoted) in one
    # step per quoted scalar rather than one per tab; the walk below only locates a
    # tab outside, for the error's line.
    if sum(text.count("\t", start, end) for start, end in quoted_spans) == text.count("\t"):
        return
    span = 0
    position = text.find("\t")
    while position >= 0:
        # Spans arrive in document order and do not overlap.
        while span < len(quoted_spans) and quoted_spans[span][1] <= position:
            span += 1
        if span == len(quoted_spans) or quoted_spans[span][0] > position:
            raise MalformedSkillError(
                "tab_character",
                "a tab is allowed only inside a quoted string",
                line=text.count("\n", 0, position) + first_line,
                column=_column_at(text, position),
            )
        position = text.find("\t", position + 1)


def _block_scalar_problem(text: str, event: Any) -> str | None:  # noqa: ANN401
    """What libyaml and ruamel's pure parser read differently in a block scalar.

    * A header ("|2-") followed by "#" with no space: libyaml takes "|#c" as a header
      and a comment, YAML 1.2 (and the pure parser) refuse it.
    * Without an indentation digit, leading lines of spaces only before the first
      content line: libyaml keeps them as empty lines, the pure parser refuses those
      with fewer spaces than the content (found by the differential fuzzer).

    Both parsers' marks index characters from the start of *text*.
    """
    position = event.start_mark.index + 1
    end = min(position + 2, len(text))
    explicit_indent = False
    while position < end and text[position] in "0123456789+-":
        explicit_indent = explicit_indent or text[position].isdigit()
        position += 1
    if position < len(text) and text[position] == "#":
        return "a comment must be separated from a block scalar header by a space"
    if explicit_indent:
        return None
    line_start = text.find("\n", position) + 1
    stop = event.end_mark.index
    while 0 < line_start < stop:
        line_end = text.find("\n", line_start)
        line = text[line_start : line_end if line_end >= 0 else len(text)]
        if line.strip(" "):
            return None  # the first content line: leading blank lines are over
        if line:
            return "a line of spaces only before a block scalar's first line; remove the spaces"
        line_start = line_end + 1
    return None


def _check_styled(
    event: Any,  # noqa: ANN401
    value: str,
    style: str,
    text: str,
    may_escape: bool,
    first_line: int,
) -> None:
    """The rules of a quoted or block scalar (a plain one has none of these)."""
    if style == '"':
        # Checked before the length: a lone surrogate from an escape cannot be UTF-8
        # encoded.
        if may_escape and _ESCAPED_FORBIDDEN_RE.search(value):
            _fail(
                "control_character",
                "an escape sequence spells a forbidden control character",
                event,
                first_line,
            )
    elif style != "'":
        problem = _block_scalar_problem(text, event)
        if problem is not None:
            _fail("yaml_ambiguous", problem, event, first_line)


def _check_lines(text: str, first_line: int) -> None:
    if not (text.startswith(("%", "...")) or "\n%" in text or "\n..." in text):
        return
    found = _DIRECTIVE_OR_MARKER_RE.search(text)
    if found is None:
        return
    line = text.count("\n", 0, found.start()) + first_line
    if found.group() == "%":
        raise MalformedSkillError(
            "yaml_directive",
            "%YAML, %TAG and other directives are not allowed",
            line=line,
            column=1,
        )
    raise MalformedSkillError(
        "yaml_multiple_documents",
        "a '...' document end marker is not allowed",
        line=line,
        column=1,
    )


def decode_utf8(raw: bytes, *, what: str = "the file") -> str:
    """Strict UTF-8 with one leading BOM removed and CRLF and lone CR read as LF.

    Raises :class:`MalformedSkillError` (``bad_encoding``, with the line of the first
    bad byte) for anything that is not UTF-8.
    """
    if raw.startswith(_BOM):
        raw = raw[3:]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        # Lines are counted as for every other error: a lone CR ends one too.
        before = raw[: exc.start]
        breaks = before.count(b"\n") + before.count(b"\r") - before.count(b"\r\n")
        raise MalformedSkillError(
            "bad_encoding", f"{what} is not valid UTF-8", line=breaks + 1
        ) from exc
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def _find_forbidden_control(text: str) -> re.Match[str] | None:
    """The first character of *text* that no YAML document may hold, if any."""
    # Fast path for the usual ASCII text: deleting every allowed byte leaves nothing,
    # in one C loop; the regex runs only to locate a character once one is there.
    if text.isascii() and not text.encode("ascii").translate(None, _ASCII_ALLOWED):
        return None
    return _FORBIDDEN_CONTROL_RE.search(text)


def load_document(
    raw: bytes | str,
    limits: Limits,
    *,
    what: str,
    first_line: int = 1,
    backend: Backend | None = None,
    allow_empty: bool = False,
) -> tuple[dict[str, YamlValue], KeyLines]:
    """Read one YAML document of plain data: the only way skillguard reads YAML.

    *raw* is the document's bytes (size-checked, then decoded by :func:`decode_utf8`)
    or text already decoded by the caller (the SKILL.md parser decodes the whole file
    once). *what* names the document in error reasons (``"the policy file"``);
    ``first_line`` is the file line on which *raw* starts, so error lines point into
    the file. With ``allow_empty``, a document of blanks and newlines only is the
    empty mapping instead of a refusal.

    Returns the mapping and, for each top-level key, the file line it is on (so field
    errors can name their line). Raises :class:`MalformedSkillError` for every rule in
    the module docstring, with the line where known, and :class:`SkillUsageError` for
    an unknown *backend*; any other exception is a bug.
    """
    events_of = BACKENDS.get(backend or _DEFAULT_BACKEND)
    if events_of is None:
        raise SkillUsageError("bad_argument", "backend must be 'c' or 'pure'")
    cap = limits.max_frontmatter_bytes
    if isinstance(raw, bytes):
        if len(raw) > cap:
            raise MalformedSkillError("too_large", f"{what} is larger than {cap} bytes")
        text = decode_utf8(raw, what=what)
    else:
        text = raw
        # A str of n code points is at most 4n UTF-8 bytes: below cap // 4 code points
        # it cannot be over the cap, so the usual document is never encoded here.
        if len(text) > cap // 4 and len(text.encode("utf-8", "surrogatepass")) > cap:
            raise MalformedSkillError("too_large", f"{what} is larger than {cap} bytes")
    bad = _find_forbidden_control(text)
    if bad is not None:
        raise MalformedSkillError(
            "control_character",
            f"forbidden control character U+{ord(bad.group()):04X} in {what}",
            line=first_line + text.count("\n", 0, bad.start()),
            column=_column_at(text, bad.start()),
        )
    if allow_empty and not text.strip(" \n"):
        return {}, KeyLines({}, first_line)
    return _compose(text, limits, events_of, what=what, first_line=first_line)


def _compose(
    text: str,
    limits: Limits,
    events_of: Callable[[str], Callable[[], Any]],
    *,
    what: str,
    first_line: int,
) -> tuple[dict[str, YamlValue], KeyLines]:
    """Compose *text* (one YAML document, cleared of forbidden characters) into a
    ``dict`` of plain data, refusing at the first event that breaks a rule."""
    # Event streams are pulled lazily so that a hostile document is refused at the
    # first bad event, before the parser reads (or allocates for) the rest of it.
    _check_lines(text, first_line)
    try:
        get_event = events_of(text)
    except SkillUsageError:
        raise
    except Exception as exc:  # pragma: no cover - neither parser reads on construction
        # Kept so that a future parser that does cannot break the error boundary.
        raise syntax_error(exc, first_line, what) from exc

    max_depth = limits.max_depth
    max_nodes = limits.max_nodes
    max_scalar = limits.max_scalar_bytes
    # A str of n code points is at most 4n UTF-8 bytes: below this many code points a
    # scalar cannot exceed the byte cap, so the common case never encodes.
    scalar_quick = max_scalar // 4
    # Only a double-quoted scalar with a backslash escape can hold a character that
    # the raw-text check did not see; without any backslash there is nothing to check.
    may_escape = "\\" in text
    # The C and pure parsers disagree on tabs outside quoted scalars (separation,
    # indentation, plain scalars), so a tab is accepted only inside a quoted scalar.
    # Spans are collected only when the text holds a tab at all.
    quoted_spans: list[tuple[int, int]] | None = [] if "\t" in text else None

    nodes = 0
    documents = 0
    result: dict[str, YamlValue] | None = None
    stack: list[tuple[Any, bool, Any, bool]] = []
    in_flow = False  # inside a [...] or {...} collection
    cur: Any = None  # the dict or list being filled; None outside the top mapping
    top: Any = None  # the top-level mapping, once started
    key_marks: dict[str, Any] = {}
    cur_is_map = False
    # Module names read once: the loop below runs once per event, and a local is the
    # cheapest name to read. The common frontmatter (plain scalars in block mappings,
    # short sequences) takes the first branch and its first test each time.
    no_key: Any = _NO_KEY
    scalar_event = ScalarEvent
    mapping_start = MappingStartEvent
    sequence_start = SequenceStartEvent
    mapping_end = MappingEndEvent
    sequence_end = SequenceEndEvent
    frozen_map = FrozenMap
    key: Any = no_key

    while True:
        try:
            event = get_event()
        except Exception as exc:  # every parser failure, RecursionError and AssertionError too
            raise syntax_error(exc, first_line, what) from exc
        cls = type(event)

        if cls is scalar_event:
            if event.anchor is not None or event.ctag is not None:
                _fail_properties(event, first_line)
            value: str = event.value
            style = event.style  # "" (C) or None (pure) when plain
            if style:
                _check_styled(event, value, style, text, may_escape, first_line)
                if quoted_spans is not None and style in _QUOTED:
                    quoted_spans.append((event.start_mark.index, event.end_mark.index))
            elif in_flow and (":" in value or "?" in value):
                # YAML 1.2 reads "a:b" or "a?b" in a flow collection as one plain
                # scalar, YAML 1.1 (libyaml) refuses it: one document, two readings.
                _fail(
                    "yaml_ambiguous",
                    "an unquoted ':' or '?' inside [...] or {...} is read differently by "
                    "YAML parsers; quote the value",
                    event,
                    first_line,
                )
            if len(value) > scalar_quick and len(value.encode("utf-8")) > max_scalar:
                _fail(
                    "scalar_too_long",
                    f"a scalar is longer than {max_scalar} bytes",
                    event,
                    first_line,
                )
            nodes += 1
            if nodes > max_nodes:
                _fail("too_many_nodes", f"more than {max_nodes} YAML nodes", event, first_line)
            if cur_is_map:
                if key is not no_key:
                    cur[key] = value
                    key = no_key
                    continue
                if value in cur:
                    _fail(
                        "duplicate_key",
                        f"duplicate key {safe_repr(value)}",
                        event,
                        first_line,
                        key=value,
                    )
                if not value and not style:
                    # An empty plain key is YAML's null; libyaml refuses some forms
                    # the pure parser accepts, and a null key is no field name.
                    _fail("yaml_null_key", "a mapping key is empty", event, first_line)
                if value == "<<":
                    _fail("yaml_merge_key", "merge keys are not allowed", event, first_line)
                key = value
                if cur is top:
                    key_marks[value] = event.start_mark
            elif cur is not None:
                cur.append(value)
            else:
                _fail("not_a_mapping", f"{what} must be a mapping", event, first_line)

        elif cls is mapping_end or cls is sequence_end:
            done = cur
            cur, cur_is_map, key, in_flow = stack.pop()
            if cur is None:
                result = done
            elif cur_is_map:
                cur[key] = frozen_map(done) if type(done) is dict else tuple(done)
                key = no_key
            else:
                cur.append(frozen_map(done) if type(done) is dict else tuple(done))

        elif cls is mapping_start or cls is sequence_start:
            if event.anchor is not None or event.ctag is not None:
                _fail_properties(event, first_line)
            is_map = cls is mapping_start
            if cur is None and not is_map:
                _fail("not_a_mapping", f"{what} must be a mapping", event, first_line)
            if cur_is_map and key is no_key:
                _fail("yaml_complex_key", "mapping keys must be scalars", event, first_line)
            if len(stack) >= max_depth:
                _fail("too_deep", f"nesting deeper than {max_depth}", event, first_line)
            nodes += 1
            if nodes > max_nodes:
                _fail("too_many_nodes", f"more than {max_nodes} YAML nodes", event, first_line)
            stack.append((cur, cur_is_map, key, in_flow))
            in_flow = in_flow or bool(event.flow_style)
            cur = {} if is_map else []
            if top is None:
                top = cur
            cur_is_map = is_map
            key = no_key

        elif cls is AliasEvent:
            _fail("yaml_alias", "aliases are not allowed", event, first_line)

        elif cls is DocumentStartEvent:
            documents += 1
            if documents > 1:
                _fail(
                    "yaml_multiple_documents",
                    "only one YAML document is allowed",
                    event,
                    first_line,
                )
            if event.version is not None or event.tags:  # pragma: no cover - backstop
                # _check_lines refuses every directive line before parsing; this stays
                # so that the rule does not rest on a text scan alone.
                _fail(
                    "yaml_directive", "%YAML and %TAG directives are not allowed", event, first_line
                )

        elif cls is StreamEndEvent:
            break
        # StreamStartEvent and DocumentEndEvent carry nothing to check.

    if result is None:
        raise MalformedSkillError("not_a_mapping", f"{what} is empty", line=first_line)
    if quoted_spans is not None:
        _check_tabs(text, quoted_spans, first_line)
    return result, KeyLines(key_marks, first_line)
