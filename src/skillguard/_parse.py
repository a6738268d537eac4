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
6. The body: a character that hides or reorders text is refused under ``strict``
   (with its line and column) and reported by a ``hidden_character`` warning under
   ``compat``, where the renderers show it escaped.

``parse_skill`` returns a ``Skill`` or raises ``MalformedSkillError``; any other
exception is a bug (the fuzz targets check exactly this).
"""

from __future__ import annotations

import hashlib
import re
from typing import Final

from ._errors import MalformedSkillError, SkillUsageError, safe_repr
from ._limits import DEFAULT_LIMITS, Limits
from ._model import EMPTY_MAP, FrozenMap, Profile, Skill, SkillWarning, Step, YamlValue
from ._text import SUSPECT_CHARS, SUSPECT_RANGES, find_hidden
from ._tools import check_rule, split_tools
from ._yaml import Backend, KeyLines, decode_utf8, load_document

__all__ = [
    "FORBIDDEN_CHARS",
    "FORBIDDEN_RANGES",
    "NAME_MAX",
    "is_valid_name",
    "parse_skill",
    "parse_skill_with",
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


def is_valid_name(candidate: object) -> bool:
    """Whether *candidate* is a skill identifier: a 1-64 character ASCII slug."""
    if not isinstance(candidate, str):
        return False
    return len(candidate) <= NAME_MAX and _NAME_RE.fullmatch(candidate) is not None


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
        return _parse(
            raw,
            expected_name=expected_name,
            limits=limits,
            profile=profile,
            backend=backend,
            namespaces=namespaces,
        )
    except MalformedSkillError as exc:
        # The caller knows which skill it asked for: say so in the error, whatever rule
        # failed (a folder name that is not a valid name is not repeated).
        if exc.name is None and expected_name is not None and is_valid_name(expected_name):
            exc.name = expected_name
            exc.args = (exc._render(),)  # noqa: SLF001 - the error's own message
        raise


def _parse(
    raw: bytes,
    *,
    expected_name: str | None,
    limits: Limits | None,
    profile: Profile,
    backend: Backend | None,
    namespaces: bool,
) -> Skill:
    if not isinstance(raw, bytes):
        raise SkillUsageError("bad_argument", "raw must be bytes")
    if not isinstance(namespaces, bool):
        raise SkillUsageError("bad_argument", "namespaces must be a bool")
    if expected_name is not None and not isinstance(expected_name, str):
        raise SkillUsageError("bad_argument", "expected_name must be a str or None")
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
    frontmatter, body, fm_first_line = _split_fences(text, limits)
    if "\x00" in body:
        raise MalformedSkillError("control_character", "NUL character in the body")
    # The frontmatter goes through the one YAML entry point every document shares:
    # the same character rules and composer as the policy file (threat-model.md T60).
    fields, lines = load_document(
        frontmatter, limits, what="the frontmatter", first_line=fm_first_line, backend=backend
    )
    # The body starts on the line after the closing fence.
    body_line = fm_first_line + frontmatter.count("\n") + 1
    return _build(fields, lines, (body, body_line), raw, (expected_name, namespaces), profile)


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
            "no_opening_fence", "the file must start with a '---' frontmatter fence", line=1
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
        return MalformedSkillError(code, reason, key=key, line=self.lines.get(key))

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
        found = find_hidden(body)
        if found is None:
            return
        index, char = found
        line_start = body.rfind("\n", 0, index) + 1
        line = first_line + body.count("\n", 0, index)
        column = index - line_start + 1
        what = f"the invisible or bidirectional character U+{ord(char):04X} in the body"
        if not self.compat:
            raise MalformedSkillError("forbidden_character", what, line=line, column=column)
        self.warnings.append(
            SkillWarning(
                "hidden_character",
                f"line {line}, column {column}: {what}; it is shown escaped to the model",
            )
        )

    def text(self, key: str, maximum: int, *, relax_length: bool) -> str | None:
        value = self.string(key)
        if value is None:
            return None
        if not value.strip():
            raise self.error("empty_field", f"{key!r} must not be blank", key)
        if len(value) > maximum:
            message = f"{key!r} is longer than {maximum} characters"
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
        if not self.compat:
            if not valid:
                raise self.error(
                    "invalid_name",
                    f"'name' must be 1-{NAME_MAX} characters of a-z, 0-9 and single hyphens",
                    "name",
                )
            raise self.error(
                "name_mismatch",
                f"'name' differs from the folder name {safe_repr(str(expected_name))}",
                "name",
            )
        # compat: the folder name identifies the skill, and must itself be valid.
        if expected_name is None or not is_valid_name(expected_name):
            raise self.error(
                "invalid_name",
                "'name' is not a valid identifier and no valid folder name can replace it",
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
            if isinstance(meta_value, str):
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


def _build(
    fields: dict[str, YamlValue],
    lines: KeyLines,
    body_at: tuple[str, int],
    raw: bytes,
    expected: tuple[str | None, bool],
    profile: Profile,
) -> Skill:
    expected_name, namespaces = expected
    if "name" not in fields or "description" not in fields:
        missing = "name" if "name" not in fields else "description"
        raise MalformedSkillError(
            "missing_field", f"the required field {missing!r} is missing", key=missing
        )
    check = _Fields(fields, lines, profile)
    namespace, name = check.name(expected_name, namespaces=namespaces)
    description = check.text("description", DESCRIPTION_MAX, relax_length=check.compat)
    assert description is not None  # presence is checked above
    body, body_line = body_at
    if not body.isascii():  # O(1): every character the body check refuses is non-ASCII
        check.body(body, body_line)
    # Optional fields are checked only when present: most skills have two to four.
    return Skill(
        name=name,
        description=description,
        body=body,
        sha256=hashlib.sha256(raw).hexdigest(),
        size=len(raw),
        license=check.string("license") if "license" in fields else None,
        compatibility=check.compatibility() if "compatibility" in fields else None,
        metadata=check.metadata() if "metadata" in fields else EMPTY_MAP,
        allowed_tools=check.allowed_tools() if "allowed-tools" in fields else (),
        steps=check.steps() if "steps" in fields else (),
        version=check.string("version") if "version" in fields else None,
        disable_model_invocation=check.boolean("disable-model-invocation", default=False),
        user_invocable=check.boolean("user-invocable", default=True),
        argument_hint=check.string("argument-hint") if "argument-hint" in fields else None,
        model=check.string("model") if "model" in fields else None,
        context=check.string("context") if "context" in fields else None,
        agent=check.string("agent") if "agent" in fields else None,
        extra=check.extra(),
        warnings=tuple(check.warnings) if check.warnings else (),
        namespace=namespace,
    )
