"""The front half of every frontmatter document, and the body rule.

A SKILL.md and an agent file share it (threat-model.md T1-T9, T60, T70). Sans-IO: a
test keeps ``os`` and ``open`` out of it. The rules, applied in this order:

1. Size first: input over ``Limits.max_skill_bytes`` is refused before decoding.
2. Encoding: strict UTF-8; one leading BOM removed; CRLF and lone CR become LF;
   NUL, C0/C1 controls (other than tab and newline), the U+2028/U+2029 line
   separators and U+FEFF are refused in the frontmatter, NUL in the body too.
3. Fences: line 1 is ``---`` (trailing blanks allowed); the frontmatter ends at the
   first later line of the same shape, searched for only within the frontmatter cap;
   the body is everything after it.
4. YAML as data only, through ``_yaml.load_document``, the entry point every YAML
   document shares (it applies the frontmatter's character rules of step 2).

Then the body rule (``hidden_in_body``): a character that hides or reorders text, or a
control that some readers take for a line break (VT, FF, FS, GS, RS, NEL); the caller
refuses it under ``strict`` and reports it under ``compat``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

from skillguard._core.errors import MalformedSkillError, SkillUsageError
from skillguard._core.limits import DEFAULT_LIMITS, Limits
from skillguard._core.strict_yaml import Backend, KeyLines, decode_utf8, load_document
from skillguard._core.text import SUSPECT_CHARS, SUSPECT_RANGES, SUSPECT_RE, find_hidden

if TYPE_CHECKING:
    from skillguard._core.model import YamlValue

__all__ = [
    "FORBIDDEN_CHARS",
    "FORBIDDEN_RANGES",
    "LINE_BREAK_CONTROLS",
    "frontmatter_fields",
    "hidden_in_body",
    "may_hide",
    "read_document",
]

_FENCE_RE: Final = re.compile(r"---[ \t]*")  # a whole line, with fullmatch()
# The character rules live in _text; these two names stay for the modules and tests
# that import them: every character the rules look at (refused unless in context).
FORBIDDEN_RANGES: Final = SUSPECT_RANGES
FORBIDDEN_CHARS: Final = SUSPECT_CHARS
_PROFILES: Final = ("strict", "compat")
# Every character the body rule looks at is non-ASCII: deleting the ASCII bytes of the
# UTF-8 source leaves the other characters' encodings whole (an ASCII byte is never
# part of a longer sequence), so the rest decodes to exactly the non-ASCII characters.
_ASCII_BYTES: Final = bytes(range(0x80))
_BOM: Final = b"\xef\xbb\xbf"
# Above this many non-ASCII bytes in the source, the body is scanned directly: the
# pre-check pays off for the few characters real files hold (a median of 3 bytes, 147 at
# the 90th percentile, in about 7,000 public SKILL.md files), not for a text in a
# non-Latin script, which the scan reads in one pass anyway.
_PRECHECK_MAX: Final = 1024


def frontmatter_fields(raw: bytes, *, limits: Limits | None = None) -> dict[str, YamlValue]:
    """Every frontmatter field of a SKILL.md document, typed as skillguard reads it
    (every scalar a string), with no field rule applied: call it on bytes that
    ``parse_skill`` accepted. Raises :class:`MalformedSkillError` like ``parse_skill``
    for anything before the field rules (size, encoding, fences, YAML)."""
    limits = DEFAULT_LIMITS if limits is None else limits
    if len(raw) > limits.max_skill_bytes:
        raise MalformedSkillError(
            "too_large", f"the file is larger than {limits.max_skill_bytes} bytes"
        )
    frontmatter, _, first_line = _split_fences(decode_utf8(raw), limits)
    fields, _ = load_document(frontmatter, limits, what="the frontmatter", first_line=first_line)
    return fields


def read_document(
    raw: bytes, limits: Limits | None, profile: object, *, backend: Backend | None = None
) -> tuple[dict[str, YamlValue], KeyLines, str, int]:
    """The shared front half of every frontmatter document (a SKILL.md, an agent file):
    the arguments checked, the size cap before decoding, strict UTF-8, the fences, NUL in
    the body, and the frontmatter through the one YAML entry point (threat-model.md T60,
    T70). Returns (fields, key lines, body, the body's first line).

    Raises ``SkillUsageError`` for bad arguments and ``MalformedSkillError`` for bytes
    that are not such a document.
    """
    if not isinstance(raw, bytes):
        raise SkillUsageError("bad_argument", "raw must be bytes")
    if limits is None:
        limits = DEFAULT_LIMITS
    elif not isinstance(limits, Limits):
        raise SkillUsageError("bad_argument", "limits must be a skillguard.Limits")
    if not isinstance(profile, str) or profile not in _PROFILES:
        raise SkillUsageError("bad_profile", "profile must be 'strict' or 'compat'")
    if len(raw) > limits.max_skill_bytes:
        raise MalformedSkillError(
            "too_large", f"the file is larger than {limits.max_skill_bytes} bytes"
        )
    text = decode_utf8(raw)
    frontmatter, body, first_line = _split_fences(text, limits)
    # The body starts on the line after the closing fence.
    body_line = first_line + frontmatter.count("\n") + 1
    # memchr over the bytes is cheaper than a search of the decoded body.
    nul = body.find("\x00") if b"\x00" in raw else -1
    if nul >= 0:
        # Placed like every other located error, so that validate's annotations (and
        # an editor) can point at it (threat-model.md T119).
        raise MalformedSkillError(
            "control_character",
            "NUL character in the body",
            line=body_line + body.count("\n", 0, nul),
            column=nul - body.rfind("\n", 0, nul),
        )
    fields, lines = load_document(
        frontmatter, limits, what="the frontmatter", first_line=first_line, backend=backend
    )
    return fields, lines, body, body_line


def _split_fences(text: str, limits: Limits) -> tuple[str, str, int]:
    """Return (frontmatter, body, file line where the frontmatter starts).

    The closing fence is searched for only as far as a frontmatter within
    ``max_frontmatter_bytes`` could reach (threat-model.md T1): a file that holds no fence there is
    refused without scanning the rest of it.
    """
    first_end = text.find("\n")
    first_line = text if first_end < 0 else text[:first_end]
    if first_line != "---" and _FENCE_RE.fullmatch(first_line) is None:
        raise MalformedSkillError(
            "no_opening_fence",
            "the file must start with a '---' frontmatter fence",
            line=1,
            column=1,
        )
    if first_end < 0:
        raise MalformedSkillError("no_closing_fence", "the frontmatter is never closed")
    start = first_end + 1
    cap = limits.max_frontmatter_bytes
    # The frontmatter is text[start : candidate + 1]; a code point is at least one
    # byte, so a fence "\n---" starting after start + cap - 1 leaves more than cap
    # bytes of frontmatter: the search can stop where such a fence would end.
    stop = start + cap + 3
    # str.find is far faster than a MULTILINE regex over the body; each candidate
    # "\n---" is then checked to be a whole fence line.
    candidate = first_end
    while True:
        candidate = text.find("\n---", candidate, stop)
        if candidate < 0:
            if len(text) > stop:
                raise MalformedSkillError(
                    "frontmatter_too_large",
                    f"the frontmatter is not closed within {cap} bytes",
                )
            raise MalformedSkillError("no_closing_fence", "the frontmatter is never closed")
        line_end = text.find("\n", candidate + 4)
        if line_end < 0:
            line_end = len(text)
        if not text[candidate + 4 : line_end].strip(" \t"):
            break
        candidate += 4
    frontmatter = text[start : candidate + 1]
    if len(frontmatter) > cap // 4 and len(frontmatter.encode("utf-8")) > cap:
        raise MalformedSkillError(
            "frontmatter_too_large", f"the frontmatter is larger than {cap} bytes"
        )
    body = text[line_end + 1 :]
    return frontmatter, body, 2


# Controls that some readers take for a line break (Python's ``str.splitlines``: VT, FF,
# FS, GS, RS and NEL) while CommonMark, Git and skillguard's section parser do not (T115).
LINE_BREAK_CONTROLS: Final = "\x0b\x0c\x1c\x1d\x1e\x85"


def may_hide(source: bytes) -> bool:
    """Whether the UTF-8 *source* may hold a character the body rule looks at: ``False``
    only when none of its non-ASCII characters is one. One C pass deletes its ASCII
    bytes; the rest, a few characters in a real file, is searched. Fail-secure: more
    than ``_PRECHECK_MAX`` non-ASCII bytes, or a rest that does not decode, is ``True``
    (look closer)."""
    # The decoder removes one leading BOM: no body holds it, and it would send every
    # file that starts with one to the scan.
    source = source.removeprefix(_BOM)
    rest = source.translate(None, _ASCII_BYTES)
    if not rest:
        return False
    if len(rest) > _PRECHECK_MAX:
        return True
    try:
        return SUSPECT_RE.search(rest.decode("utf-8")) is not None
    except UnicodeDecodeError:
        return True


def hidden_in_body(
    body: str, first_line: int, *, source: bytes | None = None
) -> tuple[str, int, int, str] | None:
    """The first character of *body* that hides or reorders text (threat-model.md T41),
    or that is a line break to some readers only (T115), as the code to refuse it with,
    its file line, its column and a reason that names it; ``None`` when there is none.

    *first_line* is the file line the body starts on. The one body rule of every
    document with a body (a SKILL.md, an agent file): the caller refuses under
    ``strict`` and warns under ``compat``. Other controls are the renderers' concern:
    they show every one escaped (T42).

    *source*, when given, is UTF-8 bytes that hold every character of *body* (the file
    it was decoded from): a body whose source holds none of the characters looked at
    (``may_hide``) is passed without the per-character pass of ``find_hidden``.
    """
    # isascii() is O(1), and every character the character rules refuse is non-ASCII.
    if body.isascii() or (source is not None and not may_hide(source)):
        hidden = None
    else:
        hidden = find_hidden(body)
    end = len(body) if hidden is None else hidden[0]
    control = None
    # Spelled out: six C-speed membership tests cost a fraction of a microsecond on a
    # body that holds none (nearly all), where a loop of find() calls costs several.
    if (
        "\x0b" in body
        or "\x0c" in body
        or "\x1c" in body
        or "\x1d" in body
        or "\x1e" in body
        or "\x85" in body
    ):
        for char in LINE_BREAK_CONTROLS:
            at = body.find(char, 0, end)
            if at >= 0:
                end, control = at, char
    if control is not None:
        code = "control_character"
        what = (
            f"the control character U+{ord(control):04X} in the body (a line break to some readers)"
        )
    elif hidden is not None and hidden[1] in "\u2028\u2029":
        code = "forbidden_character"
        what = f"the separator U+{ord(hidden[1]):04X} in the body (a line break to some readers)"
    elif hidden is not None:
        code = "forbidden_character"
        what = f"the invisible or bidirectional character U+{ord(hidden[1]):04X} in the body"
    else:
        return None
    line = first_line + body.count("\n", 0, end)
    column = end - (body.rfind("\n", 0, end) + 1) + 1
    return code, line, column, what
