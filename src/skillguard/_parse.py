"""The fail-secure SKILL.md parser: bytes in, a frozen ``Skill`` out, or a refusal.

This module is sans-IO (threat-model.md T1-T9): it never opens a file, and a test
keeps ``os`` and ``open`` out of it. The rules, applied in this order:

1. Size first: input over ``Limits.max_skill_bytes`` is refused before decoding.
2. Encoding: strict UTF-8; one leading BOM removed; CRLF and lone CR become LF;
   NUL, C0/C1 controls (other than tab and newline) and the U+2028/U+2029 line
   separators are refused in the frontmatter, NUL in the body too.
3. Fences: line 1 is ``---`` (trailing blanks allowed); the frontmatter ends at the
   first later line of the same shape; the body is everything after it.
4. YAML as data only (see ``_yaml``).
5. Agent Skills fields, with the ``strict`` or ``compat`` profile.

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
from ._yaml import Backend, compose_mapping

__all__ = ["FORBIDDEN_CHARS", "NAME_MAX", "is_valid_name", "parse_skill", "parse_skill_with"]

NAME_MAX: Final = 64
DESCRIPTION_MAX: Final = 1024
COMPATIBILITY_MAX: Final = 500

_BOM: Final = b"\xef\xbb\xbf"
_NAME_RE: Final = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_FENCE_RE: Final = re.compile(r"^---[ \t]*$", re.MULTILINE)
_FRONTMATTER_FORBIDDEN_RE: Final = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")
# Bidirectional overrides and isolates, zero-width characters and the BOM: they
# carry text past a human reviewer that a model still reads (threat-model.md T8).
FORBIDDEN_CHARS: Final = frozenset(
    [chr(c) for c in range(0x202A, 0x202F)]
    + [chr(c) for c in range(0x2066, 0x206A)]
    + [chr(c) for c in range(0x200B, 0x2010)]
    + ["\ufeff"]
)
_FORBIDDEN_RE: Final = re.compile("[" + "".join(sorted(FORBIDDEN_CHARS)) + "]")
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
    }
)


def is_valid_name(candidate: str) -> bool:
    """Whether *candidate* is a skill identifier: a 1-64 character ASCII slug."""
    return len(candidate) <= NAME_MAX and _NAME_RE.fullmatch(candidate) is not None


def parse_skill(
    raw: bytes,
    *,
    expected_name: str | None = None,
    limits: Limits | None = None,
    profile: Profile = "strict",
) -> Skill:
    """Parse the untrusted bytes of one SKILL.md document.

    *expected_name* is the name of the folder the document came from; when given, the
    frontmatter ``name`` must equal it (``compat`` accepts a mismatch with a warning
    and then identifies the skill by the folder name).

    Returns a frozen :class:`Skill`. Raises :class:`MalformedSkillError` when the bytes
    are not a valid skill, and :class:`SkillUsageError` when the arguments themselves
    are wrong (not bytes, an unknown profile, ``limits`` not a ``Limits``). Any other
    exception is a bug.
    """
    return parse_skill_with(
        raw, expected_name=expected_name, limits=limits, profile=profile, backend=None
    )


def parse_skill_with(
    raw: bytes,
    *,
    expected_name: str | None,
    limits: Limits | None,
    profile: Profile,
    backend: Backend | None,
) -> Skill:
    """``parse_skill`` with an explicit YAML backend (for the differential tests)."""
    if not isinstance(raw, bytes):
        raise SkillUsageError("bad_argument", "raw must be bytes")
    if expected_name is not None and not isinstance(expected_name, str):
        raise SkillUsageError("bad_argument", "expected_name must be a str or None")
    if limits is None:
        limits = DEFAULT_LIMITS
    elif not isinstance(limits, Limits):
        raise SkillUsageError("bad_argument", "limits must be a skillguard.Limits")
    if profile not in _PROFILES:
        raise SkillUsageError("bad_profile", "profile must be 'strict' or 'compat'")

    size = len(raw)
    if size > limits.max_skill_bytes:
        raise MalformedSkillError(
            "too_large", f"the file is larger than {limits.max_skill_bytes} bytes"
        )
    text = _decode(raw)
    frontmatter, body, fm_first_line = _split_fences(text, limits)

    bad = _FRONTMATTER_FORBIDDEN_RE.search(frontmatter)
    if bad is not None:
        raise MalformedSkillError(
            "control_character",
            f"forbidden control character U+{ord(bad.group()):04X} in the frontmatter",
            line=fm_first_line + frontmatter.count("\n", 0, bad.start()),
        )
    if "\x00" in body:
        raise MalformedSkillError("control_character", "NUL character in the body")

    fields = compose_mapping(frontmatter, limits, first_line=fm_first_line, backend=backend)
    return _build(fields, body, raw, size, expected_name, profile)


def _decode(raw: bytes) -> str:
    if raw.startswith(_BOM):
        raw = raw[3:]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MalformedSkillError(
            "bad_encoding",
            "the file is not valid UTF-8",
            line=raw.count(b"\n", 0, exc.start) + 1,
        ) from exc
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def _split_fences(text: str, limits: Limits) -> tuple[str, str, int]:
    """Return (frontmatter, body, file line where the frontmatter starts)."""
    first_end = text.find("\n")
    first_line = text if first_end < 0 else text[:first_end]
    if _FENCE_RE.fullmatch(first_line) is None:
        raise MalformedSkillError(
            "no_opening_fence", "the file must start with a '---' frontmatter fence", line=1
        )
    if first_end < 0:
        raise MalformedSkillError("no_closing_fence", "the frontmatter is never closed")
    start = first_end + 1
    # str.find is far faster than a MULTILINE regex over the body; each candidate
    # "\n---" is then checked to be a whole fence line.
    candidate = first_end
    while True:
        candidate = text.find("\n---", candidate)
        if candidate < 0:
            raise MalformedSkillError("no_closing_fence", "the frontmatter is never closed")
        line_end = text.find("\n", candidate + 4)
        if line_end < 0:
            line_end = len(text)
        if not text[candidate + 4 : line_end].strip(" \t"):
            break
        candidate += 4
    frontmatter = text[start : candidate + 1]
    cap = limits.max_frontmatter_bytes
    if len(frontmatter) > cap // 4 and len(frontmatter.encode("utf-8")) > cap:
        raise MalformedSkillError(
            "frontmatter_too_large", f"the frontmatter is larger than {cap} bytes"
        )
    body = text[line_end + 1 :]
    return frontmatter, body, 2


# -- fields -------------------------------------------------------------------------


def _require_str(fields: dict[str, YamlValue], key: str) -> str | None:
    value = fields.get(key)
    if value is None or isinstance(value, str):
        return value
    raise MalformedSkillError("wrong_type", f"{key!r} must be a string", key=key)


def _check_forbidden(value: str, key: str) -> None:
    if value.isascii():  # O(1) in CPython, and every forbidden character is non-ASCII
        return
    found = _FORBIDDEN_RE.search(value)
    if found is not None:
        raise MalformedSkillError(
            "forbidden_character",
            f"{key!r} holds the invisible or bidirectional character U+{ord(found.group()):04X}",
            key=key,
        )


def _text_field(
    fields: dict[str, YamlValue],
    key: str,
    maximum: int,
    warnings: list[SkillWarning],
    *,
    relax_length: bool,
) -> str | None:
    value = _require_str(fields, key)
    if value is None:
        return None
    _check_forbidden(value, key)
    if not value.strip():
        raise MalformedSkillError("empty_field", f"{key!r} must not be blank", key=key)
    if len(value) > maximum:
        if not relax_length:
            raise MalformedSkillError(
                "field_too_long", f"{key!r} is longer than {maximum} characters", key=key
            )
        warnings.append(
            SkillWarning("field_too_long", f"{key!r} is longer than {maximum} characters", key)
        )
    return value


def _resolve_name(
    declared: str, expected_name: str | None, profile: Profile, warnings: list[SkillWarning]
) -> str:
    _check_forbidden(declared, "name")
    valid = is_valid_name(declared)
    matches = expected_name is None or declared == expected_name
    if valid and matches:
        return declared
    if profile == "strict":
        if not valid:
            raise MalformedSkillError(
                "invalid_name",
                f"'name' must be 1-{NAME_MAX} characters of a-z, 0-9 and single hyphens",
                key="name",
            )
        raise MalformedSkillError(
            "name_mismatch",
            f"'name' differs from the folder name {safe_repr(str(expected_name))}",
            key="name",
        )
    # compat: the folder name identifies the skill, and must itself be valid.
    if expected_name is None or not is_valid_name(expected_name):
        raise MalformedSkillError(
            "invalid_name",
            "'name' is not a valid identifier and no valid folder name can replace it",
            key="name",
        )
    code = "name_mismatch" if valid else "invalid_name"
    warnings.append(
        SkillWarning(
            code,
            f"'name' is not used; the skill is identified by its folder "
            f"name {safe_repr(expected_name)}",
            "name",
        )
    )
    return expected_name


def _metadata(
    fields: dict[str, YamlValue], profile: Profile, warnings: list[SkillWarning]
) -> FrozenMap:
    value = fields.get("metadata")
    if value is None:
        return EMPTY_MAP
    if not isinstance(value, FrozenMap):
        raise MalformedSkillError("wrong_type", "'metadata' must be a mapping", key="metadata")
    for meta_key, meta_value in value.items():
        if isinstance(meta_value, str):
            continue
        if profile == "strict":
            raise MalformedSkillError(
                "wrong_type",
                f"'metadata' value for {safe_repr(meta_key)} must be a string",
                key="metadata",
            )
        warnings.append(
            SkillWarning(
                "metadata_not_string",
                f"'metadata' value for {safe_repr(meta_key)} is not a string; kept as data",
                "metadata",
            )
        )
    return value


def _allowed_tools(fields: dict[str, YamlValue]) -> tuple[str, ...]:
    value = fields.get("allowed-tools")
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(value.split())
    if not isinstance(value, tuple) or not all(isinstance(item, str) for item in value):
        raise MalformedSkillError(
            "wrong_type",
            "'allowed-tools' must be a space-separated string or a list of strings",
            key="allowed-tools",
        )
    tools: list[str] = []
    for item in value:
        assert isinstance(item, str)  # checked above; narrows the type for mypy
        tool = item.strip()
        if not tool:
            raise MalformedSkillError(
                "empty_field", "'allowed-tools' holds a blank entry", key="allowed-tools"
            )
        tools.append(tool)
    return tuple(tools)


def _steps(fields: dict[str, YamlValue]) -> tuple[Step, ...]:
    value = fields.get("steps")
    if value is None:
        return ()
    if not isinstance(value, tuple):
        raise MalformedSkillError("wrong_type", "'steps' must be a list of strings", key="steps")
    steps: list[Step] = []
    for index, item in enumerate(value, start=1):
        if not isinstance(item, str):
            raise MalformedSkillError("wrong_type", f"step {index} must be a string", key="steps")
        if not item.strip():
            raise MalformedSkillError("empty_field", f"step {index} is blank", key="steps")
        steps.append(Step(index, item))
    return tuple(steps)


def _build(
    fields: dict[str, YamlValue],
    body: str,
    raw: bytes,
    size: int,
    expected_name: str | None,
    profile: Profile,
) -> Skill:
    warnings: list[SkillWarning] = []
    for required in ("name", "description"):
        if required not in fields:
            raise MalformedSkillError(
                "missing_field", f"the required field {required!r} is missing", key=required
            )
    declared = _require_str(fields, "name")
    assert declared is not None  # present, checked above
    name = _resolve_name(declared, expected_name, profile, warnings)
    compat = profile == "compat"
    description = _text_field(fields, "description", DESCRIPTION_MAX, warnings, relax_length=compat)
    assert description is not None  # present, checked above
    compatibility = _text_field(
        fields, "compatibility", COMPATIBILITY_MAX, warnings, relax_length=False
    )
    license_ = _require_str(fields, "license")
    version = _require_str(fields, "version")
    metadata = _metadata(fields, profile, warnings)
    allowed_tools = _allowed_tools(fields)
    steps = _steps(fields)

    extra: dict[str, YamlValue] = {}
    for key, value in fields.items():
        if key not in _KNOWN_FIELDS:
            extra[key] = value
            warnings.append(
                SkillWarning(
                    "unknown_field", f"unknown field {safe_repr(key)} kept as inert data", key
                )
            )

    return Skill(
        name=name,
        description=description,
        body=body,
        sha256=hashlib.sha256(raw).hexdigest(),
        size=size,
        license=license_,
        compatibility=compatibility,
        metadata=metadata,
        allowed_tools=allowed_tools,
        steps=steps,
        version=version,
        extra=FrozenMap(extra) if extra else EMPTY_MAP,
        warnings=tuple(warnings),
    )
