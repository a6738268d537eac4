"""The fail-secure SKILL.md parser: bytes in, a frozen ``Skill`` out, or a refusal.

This module is sans-IO (threat-model.md T1-T9): it never opens a file, and a test
keeps ``os`` and ``open`` out of it. The rules, applied in this order, live in three
rooms:

1-4. Size, encoding, fences and YAML as data only: ``document.read_document``, the
   front half every frontmatter document shares;
5. Agent Skills fields, with the ``strict`` or ``compat`` profile: ``fields.Fields``
   (and the skill identifier rule, ``names``);
6. The body: a character that hides or reorders text, or a control that some readers
   take for a line break (VT, FF, FS, GS, RS, NEL), is refused under ``strict`` (with
   its line and column) and reported by a ``hidden_character`` warning under
   ``compat``, where the renderers show it escaped (``document.hidden_in_body``).

This module runs them in order and collects what they find.

``parse_skill`` returns a ``Skill`` or raises ``MalformedSkillError``; any other
exception is a bug (the fuzz targets check exactly this). ``check_skill`` applies the
same rules but reports every independent field error at once (what ``validate``
prints): the size, the encoding, the fences and the YAML syntax still stop the check
at the first error, since nothing after them can be trusted; the field rules of step 5
and the body rule of step 6 are independent of one another and are all applied.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Final

import attrs

from skillguard._core.errors import MalformedSkillError, SkillUsageError
from skillguard._core.model import Profile, Skill, YamlValue
from skillguard._skills.document import read_document
from skillguard._skills.fields import DESCRIPTION_MAX, Fields
from skillguard._skills.names import is_valid_name

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from skillguard._core.limits import Limits
    from skillguard._core.strict_yaml import Backend, KeyLines

__all__ = [
    "SkillCheck",
    "check_skill",
    "parse_skill",
    "parse_skill_with",
]


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


def _keep(errors: list[MalformedSkillError] | None, exc: MalformedSkillError) -> None:
    """One independent field check failed: raise its error (``parse_skill``), or
    collect it so that the next field is checked too (``check_skill``)."""
    if errors is None:
        raise exc
    errors.append(exc)


def _build(
    fields: dict[str, YamlValue],
    lines: KeyLines,
    body_at: tuple[str, int],
    raw: bytes,
    expected: tuple[str | None, bool],
    profile: Profile,
    errors: list[MalformedSkillError] | None,
) -> Skill | None:
    # Each rule runs once, in the order parse_skill raises them; a try block costs
    # nothing when no error is raised, so both passes share this one path.
    expected_name, namespaces = expected
    check = Fields(fields, lines, profile)
    has_name = "name" in fields
    has_description = "description" in fields
    if not (has_name and has_description):
        for required, present in (("name", has_name), ("description", has_description)):
            if not present:
                _keep(
                    errors,
                    MalformedSkillError(
                        "missing_field",
                        f"the required field {required!r} is missing",
                        key=required,
                    ),
                )
    namespace = name = description = None
    if has_name:
        try:
            namespace, name = check.name(expected_name, namespaces=namespaces)
        except MalformedSkillError as exc:
            _keep(errors, exc)
    if has_description:
        try:
            description = check.text("description", DESCRIPTION_MAX, relax_length=check.compat)
        except MalformedSkillError as exc:
            _keep(errors, exc)
    body, body_line = body_at
    try:
        check.body(body, body_line, raw)
    except MalformedSkillError as exc:
        _keep(errors, exc)
    # Optional fields are checked only when present (most skills have two to four),
    # in the order of _OPTIONAL.
    optional: dict[str, object] = {}
    if len(fields) > has_name + has_description:
        for key, attribute, read in _OPTIONAL:
            if key in fields:
                try:
                    optional[attribute] = read(check)
                except MalformedSkillError as exc:
                    _keep(errors, exc)
                    optional[attribute] = None
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
_OPTIONAL: Final[tuple[tuple[str, str, Callable[[Fields], object]], ...]] = (
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
