"""The fail-secure SKILL.md parser: bytes in, a frozen ``Skill`` out, or a refusal.

This module is sans-IO (threat-model.md T1-T9): it never opens a file, and a test
keeps ``os`` and ``open`` out of it. The rules, applied in this order:

1. Size first: input over ``Limits.max_skill_bytes`` is refused before decoding.
2. Encoding: strict UTF-8; one leading BOM removed; CRLF and lone CR become LF;
   NUL, C0/C1 controls (other than tab and newline), the U+2028/U+2029 line
   separators and U+FEFF are refused in the frontmatter, NUL in the body too.
3. Fences: line 1 is ``---`` (trailing blanks allowed); the frontmatter ends at the
   first later line of the same shape, searched for only within the frontmatter cap;
   the body is everything after it.
4. YAML as data only, through ``_yaml.load_document``, the entry point every YAML
   document shares (it applies the frontmatter's character rules of step 2).
5. Agent Skills fields, with the ``strict`` or ``compat`` profile; every spec string
   field, tool and step refuses what ``_text.find_hidden`` refuses, in both profiles.
   ``allowed-tools`` is split into rules by ``_tools.split_tools`` (outside
   parentheses only; unbalanced ones are ``malformed_tools``). Claude Code's own skill
   fields are typed too: two flags that accept only the YAML 1.2 core booleans, and
   four strings.
6. The body: a character that hides or reorders text, or a control that some readers
   take for a line break (VT, FF, FS, GS, RS, NEL), is refused under ``strict`` (with
   its line and column) and reported by a ``hidden_character`` warning under
   ``compat``, where the renderers show it escaped.

``parse_skill`` returns a ``Skill`` or raises ``MalformedSkillError``; any other
exception is a bug (the fuzz targets check exactly this). ``check_skill`` applies the
same rules but reports every independent field error at once (what ``validate``
prints): the size, the encoding, the fences and the YAML syntax still stop the check
at the first error, since nothing after them can be trusted; the field rules of step 5
and the body rule of step 6 are independent of one another and are all applied.
"""

from __future__ import annotations

import functools
import hashlib
import re
from typing import TYPE_CHECKING, Final, TypeVar

import attrs

from skillguard._core.errors import MalformedSkillError, SkillUsageError, safe_repr
from skillguard._core.limits import DEFAULT_LIMITS, Limits
from skillguard._core.model import (
    EMPTY_MAP,
    FrozenMap,
    Profile,
    Skill,
    SkillWarning,
    Step,
    YamlValue,
)
from skillguard._core.strict_yaml import Backend, KeyLines, decode_utf8, load_document
from skillguard._core.text import SUSPECT_CHARS, SUSPECT_RANGES, find_hidden
from skillguard._core.tool_rules import check_rule, split_tools

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

__all__ = [
    "FORBIDDEN_CHARS",
    "FORBIDDEN_RANGES",
    "LINE_BREAK_CONTROLS",
    "NAME_MAX",
    "SkillCheck",
    "check_skill",
    "frontmatter_fields",
    "hidden_in_body",
    "is_valid_name",
    "name_problem",
    "parse_skill",
    "parse_skill_with",
    "read_document",
]

NAME_MAX: Final = 64
DESCRIPTION_MAX: Final = 1024
COMPATIBILITY_MAX: Final = 500

_NAME_RE: Final = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
# Seed 002's rule for a namespace: an ASCII letter or digit, then letters, digits, "-"
# or "_". No ".", "/" or "\\" can appear, so no namespace reads as a path (T87).
_NAMESPACE_RE: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
NAMESPACE_MAX: Final = 64
_FENCE_RE: Final = re.compile(r"---[ \t]*")  # a whole line, with fullmatch()
# The character rules live in _text; these two names stay for the modules and tests
# that import them: every character the rules look at (refused unless in context).
FORBIDDEN_RANGES: Final = SUSPECT_RANGES
FORBIDDEN_CHARS: Final = SUSPECT_CHARS
_PROFILES: Final = ("strict", "compat")
_KNOWN_FIELDS: Final = frozenset(
    {
        "name",
        "description",
        "license",
        "compatibility",
        "metadata",
        "allowed-tools",
        "steps",
        "version",
        # Claude Code's own skill fields: typed and checked like the spec's.
        "disable-model-invocation",
        "user-invocable",
        "argument-hint",
        "model",
        "context",
        "agent",
    }
)
# The spellings every YAML parser reads as a boolean (the YAML 1.2 core schema). The
# YAML 1.1 spellings (yes, no, on, off, y, n) are refused: a YAML 1.2 consumer reads
# them as strings, a YAML 1.1 consumer as booleans, and a flag must mean one thing.
_BOOLEANS: Final = {
    "true": True,
    "True": True,
    "TRUE": True,
    "false": False,
    "False": False,
    "FALSE": False,
}


_T = TypeVar("_T")


def is_valid_name(candidate: object) -> bool:
    """Whether *candidate* is a skill identifier: a 1-64 character ASCII slug."""
    if not isinstance(candidate, str):
        return False
    return len(candidate) <= NAME_MAX and _NAME_RE.fullmatch(candidate) is not None


def name_problem(candidate: str) -> str | None:
    """Why *candidate* is not a skill identifier, in words; ``None`` when it is one.

    The first rule broken is named, in the order an author fixes them; the message
    never echoes the candidate itself (callers show it through ``safe_repr``).
    """
    if is_valid_name(candidate):
        return None
    if not candidate:
        return "it is empty"
    if len(candidate) > NAME_MAX:
        return f"it is {len(candidate)} characters; the limit is {NAME_MAX}"
    if any(char.isupper() for char in candidate):
        return "it holds an uppercase letter (only a-z, 0-9 and '-' are allowed)"
    if not candidate.isascii():
        return "it holds a non-ASCII character (only a-z, 0-9 and '-' are allowed)"
    if re.fullmatch(r"[a-z0-9-]+", candidate) is None:
        return "it holds a character other than a-z, 0-9 and '-'"
    if candidate.startswith("-") or candidate.endswith("-"):
        return "it starts or ends with '-'"
    return "it holds two hyphens in a row"


@attrs.frozen
class SkillCheck:
    """What ``check_skill`` found: the skill, or every independent error (never both)."""

    skill: Skill | None
    errors: tuple[MalformedSkillError, ...]
    # The file line of each top-level key, where a skill with warnings has them (a
    # warning names its key; this says where the key is).
    key_lines: Mapping[str, int] = attrs.field(factory=dict)


def check_skill(
    raw: bytes,
    *,
    expected_name: str | None = None,
    limits: Limits | None = None,
    profile: Profile = "strict",
    namespaces: bool = False,
) -> SkillCheck:
    """Check one SKILL.md document and report every independent error at once.

    The rules are ``parse_skill``'s. A size, encoding, fence or YAML error stops the
    check (one error, since nothing after it can be trusted); otherwise every field
    rule and the body rule are applied and each one broken is reported, in the order
    ``parse_skill`` would have raised them (its error is always the first one here).

    Returns a :class:`SkillCheck`. Raises :class:`SkillUsageError` for bad arguments,
    like ``parse_skill``; any other exception is a bug.
    """
    errors: list[MalformedSkillError] = []
    lines: list[KeyLines] = []
    try:
        skill = _parse(
            raw,
            expected_name=expected_name,
            limits=limits,
            profile=profile,
            backend=None,
            namespaces=namespaces,
            errors=errors,
            lines_out=lines,
        )
    except MalformedSkillError as exc:
        return SkillCheck(None, (exc,))
    if skill is None:
        return SkillCheck(None, tuple(errors))
    return SkillCheck(skill, (), lines[0].as_dict() if skill.warnings else {})


def parse_skill(
    raw: bytes,
    *,
    expected_name: str | None = None,
    limits: Limits | None = None,
    profile: Profile = "strict",
    namespaces: bool = False,
) -> Skill:
    """Parse the untrusted bytes of one SKILL.md document.

    *expected_name* is the name of the folder the document came from; when given, the
    frontmatter ``name`` must equal it (``compat`` accepts a mismatch with a warning
    and then identifies the skill by the folder name).

    With *namespaces*, a ``name`` of the shape ``namespace/short-name`` is accepted
    (seed 002): the short name is checked as any name (it is the skill's identifier,
    and must equal the folder name), and the namespace must match seed 002's rule, at
    most 64 characters, or the skill is refused with ``invalid_namespace`` under both
    profiles. Without it, such a name is ``invalid_name``.

    Returns a frozen :class:`Skill`. Raises :class:`MalformedSkillError` when the bytes
    are not a valid skill, and :class:`SkillUsageError` when the arguments themselves
    are wrong (not bytes, an unknown profile, ``limits`` not a ``Limits``). Any other
    exception is a bug.
    """
    return parse_skill_with(
        raw,
        expected_name=expected_name,
        limits=limits,
        profile=profile,
        backend=None,
        namespaces=namespaces,
    )


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


def parse_skill_with(
    raw: bytes,
    *,
    expected_name: str | None,
    limits: Limits | None,
    profile: Profile,
    backend: Backend | None,
    namespaces: bool = False,
) -> Skill:
    """``parse_skill`` with an explicit YAML backend (for the differential tests)."""
    try:
        skill = _parse(
            raw,
            expected_name=expected_name,
            limits=limits,
            profile=profile,
            backend=backend,
            namespaces=namespaces,
            errors=None,
            lines_out=None,
        )
    except MalformedSkillError as exc:
        # The caller knows which skill it asked for: say so in the error, whatever rule
        # failed (a folder name that is not a valid name is not repeated).
        if exc.name is None and expected_name is not None and is_valid_name(expected_name):
            exc.name = expected_name
            exc.args = (exc._render(),)  # noqa: SLF001 - the error's own message
        raise
    assert skill is not None  # without an error list, the first error is raised
    return skill


def _parse(
    raw: bytes,
    *,
    expected_name: str | None,
    limits: Limits | None,
    profile: Profile,
    backend: Backend | None,
    namespaces: bool,
    errors: list[MalformedSkillError] | None,
    lines_out: list[KeyLines] | None,
) -> Skill | None:
    """Parse *raw*; with *errors*, field errors are collected there instead of raised
    (and ``None`` is returned when there was any); *lines_out* receives the key lines."""
    if not isinstance(raw, bytes):
        raise SkillUsageError("bad_argument", "raw must be bytes")
    if not isinstance(namespaces, bool):
        raise SkillUsageError("bad_argument", "namespaces must be a bool")
    if expected_name is not None and not isinstance(expected_name, str):
        raise SkillUsageError("bad_argument", "expected_name must be a str or None")
    fields, lines, body, body_line = read_document(raw, limits, profile, backend=backend)
    if lines_out is not None:
        lines_out.append(lines)
    return _build(
        fields, lines, (body, body_line), raw, (expected_name, namespaces), profile, errors
    )


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
    nul = body.find("\x00")
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


def hidden_in_body(body: str, first_line: int) -> tuple[str, int, int, str] | None:
    """The first character of *body* that hides or reorders text (threat-model.md T41),
    or that is a line break to some readers only (T115), as the code to refuse it with,
    its file line, its column and a reason that names it; ``None`` when there is none.

    *first_line* is the file line the body starts on. The one body rule of every
    document with a body (a SKILL.md, an agent file): the caller refuses under
    ``strict`` and warns under ``compat``. Other controls are the renderers' concern:
    they show every one escaped (T42).
    """
    # isascii() is O(1), and every character the character rules refuse is non-ASCII.
    hidden = None if body.isascii() else find_hidden(body)
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


# -- fields -------------------------------------------------------------------------


class _Fields:
    """Checks the composed frontmatter against the Agent Skills rules and a profile."""

    __slots__ = ("compat", "fields", "inert", "lines", "warnings")

    def __init__(self, fields: dict[str, YamlValue], lines: KeyLines, profile: Profile) -> None:
        self.fields = fields
        self.lines = lines
        self.compat = profile == "compat"
        self.warnings: list[SkillWarning] = []
        # Known fields of a shape the spec does not allow, kept (compat) as inert data.
        self.inert: dict[str, YamlValue] = {}

    def error(self, code: str, reason: str, key: str) -> MalformedSkillError:
        line = self.lines.get(key)
        column = self.lines.column(key) if line is not None else None
        return MalformedSkillError(code, reason, key=key, line=line, column=column)

    def warn(self, code: str, message: str, key: str) -> None:
        self.warnings.append(SkillWarning(code, message, key))

    def string(self, key: str) -> str | None:
        value = self.fields.get(key)
        if value is None:
            return None
        if not isinstance(value, str):
            raise self.error("wrong_type", f"{key!r} must be a string", key)
        if not value.isascii():  # O(1): every forbidden character is non-ASCII
            self.no_forbidden(value, key)
        return value

    def argument_hint(self) -> str | None:
        """Claude Code's ``argument-hint``: a string. ``argument-hint: [query]``, unquoted
        as many skills write it, is a YAML flow list; Claude Code accepts it and shows
        the list as text, its items joined by ``,`` (JavaScript's text of an array):
        ``query``, brackets gone. A list of strings is read as that same text, so a
        reviewer sees what the user will, with a warning under both profiles that
        quoting the whole value keeps the brackets. Anything else is ``wrong_type``."""
        value = self.fields.get("argument-hint")
        items = (
            [item for item in value if isinstance(item, str)] if isinstance(value, tuple) else []
        )
        if not isinstance(value, tuple) or len(items) != len(value):
            return self.string("argument-hint")  # a string, or wrong_type
        for item in items:
            self.no_forbidden(item, "argument-hint")
        text = ",".join(items)
        self.warn(
            "argument_hint_list",
            f"'argument-hint' is a YAML list, read as the text {safe_repr(text)} that "
            "Claude Code shows; quote the whole value, brackets included, to keep them",
            "argument-hint",
        )
        return text

    def no_forbidden(self, value: str, key: str) -> None:
        if value.isascii():  # O(1) in CPython, and every forbidden character is non-ASCII
            return
        found = find_hidden(value)
        if found is not None:
            raise self.error(
                "forbidden_character",
                f"{key!r} holds the invisible or bidirectional character U+{ord(found[1]):04X}",
                key,
            )

    def body(self, body: str, first_line: int) -> None:
        """Refuse (strict) or report (compat) a character in the body that hides or
        reorders text; under compat the renderers show it escaped (``_text.reveal``)."""
        found = hidden_in_body(body, first_line)
        if found is None:
            return
        code, line, column, what = found
        if not self.compat:
            raise MalformedSkillError(code, what, line=line, column=column)
        self.warnings.append(
            SkillWarning(
                "hidden_character",
                f"line {line}, column {column}: {what}; it is shown escaped to the model",
                line=line,
                column=column,
            )
        )

    def text(self, key: str, maximum: int, *, relax_length: bool) -> str | None:
        value = self.string(key)
        if value is None:
            return None
        if not value.strip():
            raise self.error("empty_field", f"{key!r} must not be blank", key)
        if len(value) > maximum:
            message = f"{key!r} is {len(value)} characters; the limit is {maximum}"
            if not relax_length:
                raise self.error("field_too_long", message, key)
            self.warn("field_too_long", message, key)
        return value

    def namespace(self, declared: str) -> tuple[str, str]:
        """Split a namespaced ``name`` into its namespace and short name. Exactly one
        ``/``; the namespace follows seed 002's rule and is refused under both profiles
        when it does not (T87): it reaches a registry's tool name, and dropping it
        would give the skill a different identity than its author wrote."""
        namespace, _, short = declared.partition("/")
        if (
            "/" in short
            or len(namespace) > NAMESPACE_MAX
            or _NAMESPACE_RE.fullmatch(namespace) is None
        ):
            raise self.error(
                "invalid_namespace",
                f"the namespace of 'name' must be 1-{NAMESPACE_MAX} characters: an ASCII "
                "letter or digit, then letters, digits, '-' or '_', and one '/' before "
                "the short name",
                "name",
            )
        return namespace, short

    def name(self, expected_name: str | None, *, namespaces: bool) -> tuple[str | None, str]:
        declared = self.string("name")
        assert declared is not None  # presence is checked before
        namespace: str | None = None
        if namespaces and "/" in declared:
            namespace, declared = self.namespace(declared)
        return namespace, self.short_name(declared, expected_name)

    def short_name(self, declared: str, expected_name: str | None) -> str:
        valid = is_valid_name(declared)
        if valid and (expected_name is None or declared == expected_name):
            return declared
        # A valid name is a public identifier (catalogs show it), so a mismatch names it;
        # an invalid one is never echoed (threat-model.md T13): only why it is invalid.
        if not self.compat:
            if not valid:
                raise self.error(
                    "invalid_name",
                    f"'name' is not a skill name: {name_problem(declared)}",
                    "name",
                )
            raise self.error(
                "name_mismatch",
                f"'name' is {safe_repr(declared)} but the folder is "
                f"{safe_repr(str(expected_name))}",
                "name",
            )
        # compat: the folder name identifies the skill, and must itself be valid.
        if expected_name is None:
            raise self.error(
                "invalid_name",
                f"'name' is not a skill name: {name_problem(declared)}; "
                "no folder name can replace it",
                "name",
            )
        folder_problem = name_problem(expected_name)
        if folder_problem is not None:
            raise self.error(
                "invalid_name",
                f"'name' is not the folder name, and the folder name "
                f"{safe_repr(expected_name)} cannot be a skill name: {folder_problem}",
                "name",
            )
        self.warn(
            "name_mismatch" if valid else "invalid_name",
            f"'name' is not used; the skill is identified by its folder name "
            f"{safe_repr(expected_name)}",
            "name",
        )
        return expected_name

    def metadata(self) -> FrozenMap:
        value = self.fields.get("metadata")
        if value is None:
            return EMPTY_MAP
        if not isinstance(value, FrozenMap):
            raise self.error("wrong_type", "'metadata' must be a mapping", "metadata")
        for meta_key, meta_value in value.items():
            # A spec string field like any other (T8): a host that shows its author or
            # version must not show a reviewer reordered or invisible text.
            self.no_forbidden(meta_key, "metadata")
            if isinstance(meta_value, str):
                self.no_forbidden(meta_value, "metadata")
                continue
            message = f"'metadata' value for {safe_repr(meta_key)} must be a string"
            if not self.compat:
                raise self.error("wrong_type", message, "metadata")
            self.warn("metadata_not_string", message + "; kept as inert data", "metadata")
        return value

    def boolean(self, key: str, default: bool) -> bool:
        value = self.fields.get(key)
        if value is None:
            return default
        flag = _BOOLEANS.get(value) if isinstance(value, str) else None
        if flag is None:
            raise self.error("wrong_type", f"{key!r} must be true or false", key)
        return flag

    def allowed_tools(self) -> tuple[str, ...]:
        value = self.fields.get("allowed-tools")
        if value is None:
            return ()
        if isinstance(value, str):
            self.no_forbidden(value, "allowed-tools")
            # Split outside parentheses only (threat-model.md T45): a plain split
            # cuts "Bash(git diff:*)" into "Bash(git" and "diff:*)".
            try:
                return split_tools(value)
            except ValueError as exc:
                raise self.malformed_tools(exc) from exc
        tools: list[str] = []
        if isinstance(value, tuple):
            for item in value:
                if not isinstance(item, str):
                    break
                self.no_forbidden(item, "allowed-tools")
                tool = item.strip()
                if not tool:
                    raise self.error(
                        "empty_field", "'allowed-tools' holds a blank entry", "allowed-tools"
                    )
                try:
                    check_rule(tool)
                except ValueError as exc:
                    raise self.malformed_tools(exc) from exc
                tools.append(tool)
            else:
                return tuple(tools)
        raise self.error(
            "wrong_type",
            "'allowed-tools' must be a string of tool rules or a list of strings",
            "allowed-tools",
        )

    def malformed_tools(self, exc: ValueError) -> MalformedSkillError:
        return self.error(
            "malformed_tools",
            f"'allowed-tools' is not a list of tool rules: {exc}",
            "allowed-tools",
        )

    def steps(self) -> tuple[Step, ...]:
        value = self.fields.get("steps")
        if value is None:
            return ()
        if not isinstance(value, tuple):
            raise self.error("wrong_type", "'steps' must be a list of strings", "steps")
        steps: list[Step] = []
        for index, item in enumerate(value, start=1):
            if not isinstance(item, str):
                raise self.error("wrong_type", f"step {index} must be a string", "steps")
            self.no_forbidden(item, "steps")
            if not item.strip():
                raise self.error("empty_field", f"step {index} is blank", "steps")
            steps.append(Step(index, item))
        return tuple(steps)

    def compatibility(self) -> str | None:
        """The spec's string; under compat, a mapping (seed 002's ``min_agent_version``
        shape) is kept in ``extra`` as inert data, with a warning, and grants nothing."""
        value = self.fields["compatibility"]
        if self.compat and isinstance(value, FrozenMap):
            self.warn(
                "compatibility_mapping",
                "'compatibility' is a mapping, not the spec's string: kept as inert data",
                "compatibility",
            )
            self.inert["compatibility"] = value
            return None
        return self.text("compatibility", COMPATIBILITY_MAX, relax_length=False)

    def extra(self) -> FrozenMap:
        if self.fields.keys() <= _KNOWN_FIELDS and not self.inert:  # the usual case
            return EMPTY_MAP
        extra = {key: value for key, value in self.fields.items() if key not in _KNOWN_FIELDS}
        for key in extra:
            self.warn("unknown_field", f"unknown field {safe_repr(key)} kept as inert data", key)
        extra.update(self.inert)
        return FrozenMap(extra)


def _attempt(errors: list[MalformedSkillError] | None, check: Callable[[], _T]) -> _T | None:
    """Run one independent field check: raise its error (``parse_skill``), or collect it
    and go on with the next field (``check_skill``)."""
    if errors is None:
        return check()
    try:
        return check()
    except MalformedSkillError as exc:
        errors.append(exc)
        return None


def _build(
    fields: dict[str, YamlValue],
    lines: KeyLines,
    body_at: tuple[str, int],
    raw: bytes,
    expected: tuple[str | None, bool],
    profile: Profile,
    errors: list[MalformedSkillError] | None,
) -> Skill | None:
    expected_name, namespaces = expected
    check = _Fields(fields, lines, profile)
    for required in ("name", "description"):
        if required not in fields:
            missing = MalformedSkillError(
                "missing_field", f"the required field {required!r} is missing", key=required
            )
            if errors is None:
                raise missing
            errors.append(missing)
    named = (
        _attempt(errors, lambda: check.name(expected_name, namespaces=namespaces))
        if "name" in fields
        else None
    )
    namespace, name = named if named is not None else (None, None)
    description = (
        _attempt(
            errors, lambda: check.text("description", DESCRIPTION_MAX, relax_length=check.compat)
        )
        if "description" in fields
        else None
    )
    body, body_line = body_at
    _attempt(errors, lambda: check.body(body, body_line))
    # Optional fields are checked only when present: most skills have two to four.
    optional: dict[str, object] = {}
    for key, attribute, read in _OPTIONAL:
        if key in fields:
            optional[attribute] = _attempt(errors, functools.partial(read, check))
    if errors:
        return None
    assert name is not None  # without errors, both required fields were read
    assert description is not None
    return Skill(
        name=name,
        description=description,
        body=body,
        sha256=hashlib.sha256(raw).hexdigest(),
        size=len(raw),
        extra=check.extra(),
        warnings=tuple(check.warnings) if check.warnings else (),
        namespace=namespace,
        **optional,  # type: ignore[arg-type]
    )


# The optional fields: key, ``Skill`` attribute, and the check that reads it. A field
# absent from the frontmatter keeps the attribute's default.
_OPTIONAL: Final[tuple[tuple[str, str, Callable[[_Fields], object]], ...]] = (
    ("license", "license", lambda check: check.string("license")),
    ("compatibility", "compatibility", lambda check: check.compatibility()),
    ("metadata", "metadata", lambda check: check.metadata()),
    ("allowed-tools", "allowed_tools", lambda check: check.allowed_tools()),
    ("steps", "steps", lambda check: check.steps()),
    ("version", "version", lambda check: check.string("version")),
    (
        "disable-model-invocation",
        "disable_model_invocation",
        lambda check: check.boolean("disable-model-invocation", default=False),
    ),
    (
        "user-invocable",
        "user_invocable",
        lambda check: check.boolean("user-invocable", default=True),
    ),
    ("argument-hint", "argument_hint", lambda check: check.argument_hint()),
    ("model", "model", lambda check: check.string("model")),
    ("context", "context", lambda check: check.string("context")),
    ("agent", "agent", lambda check: check.string("agent")),
)
