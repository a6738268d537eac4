"""The Agent Skills field rules: the composed frontmatter checked against a profile.

Step 5 of the parser's rules (``parse``): Agent Skills fields, with the ``strict`` or
``compat`` profile; every spec string field, tool and step refuses what
``_text.find_hidden`` refuses, in both profiles. ``allowed-tools`` is split into rules
by ``_tools.split_tools`` (outside parentheses only; unbalanced ones are
``malformed_tools``). Claude Code's own skill fields are typed too: two flags that
accept only the YAML 1.2 core booleans, and four strings. ``Fields`` also applies the
body rule (``document.hidden_in_body``): refused under ``strict`` with its line and
column, a ``hidden_character`` warning under ``compat``, where the renderers show it
escaped.

Each check raises its ``MalformedSkillError``; the parser decides whether to stop at
the first or to collect them all. Sans-IO.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Final

from skillguard._core.errors import MalformedSkillError, safe_repr
from skillguard._core.model import (
    EMPTY_MAP,
    FrozenMap,
    Profile,
    SkillWarning,
    Step,
    YamlValue,
)
from skillguard._core.text import find_hidden
from skillguard._core.tool_rules import check_rule, split_tools
from skillguard._skills.document import hidden_in_body
from skillguard._skills.names import is_valid_name, name_problem

if TYPE_CHECKING:
    from skillguard._core.strict_yaml import KeyLines

__all__ = ["COMPATIBILITY_MAX", "DESCRIPTION_MAX", "NAMESPACE_MAX", "Fields"]

DESCRIPTION_MAX: Final = 1024
COMPATIBILITY_MAX: Final = 500

# Seed 002's rule for a namespace: an ASCII letter or digit, then letters, digits, "-"
# or "_". No ".", "/" or "\\" can appear, so no namespace reads as a path (T87).
_NAMESPACE_RE: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
NAMESPACE_MAX: Final = 64
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


class Fields:
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

    def body(self, body: str, first_line: int, source: bytes | None = None) -> None:
        """Refuse (strict) or report (compat) a character in the body that hides or
        reorders text; under compat the renderers show it escaped (``_text.reveal``).
        *source* is the file the body was decoded from (``hidden_in_body``)."""
        found = hidden_in_body(body, first_line, source=source)
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
            # The compat profile (below) would take the skill under its folder name when
            # that name is valid: say so, computed by the same rule, never guessed.
            hint = ""
            if expected_name is not None and is_valid_name(expected_name):
                hint = (
                    "; the compat profile (--profile compat, profile='compat') would "
                    f"identify the skill by its folder name {safe_repr(expected_name)}"
                )
            if not valid:
                raise self.error(
                    "invalid_name",
                    f"'name' is not a skill name: {name_problem(declared)}{hint}",
                    "name",
                )
            raise self.error(
                "name_mismatch",
                f"'name' is {safe_repr(declared)} but the folder is "
                f"{safe_repr(str(expected_name))}{hint}",
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
        self.warnings.extend(map(_unknown_field, extra))
        extra.update(self.inert)
        return FrozenMap(extra)


def _unknown_field(key: str) -> SkillWarning:
    # Most skills carry one to three fields the spec does not name, and the same few
    # (author, tags, ...) across a catalog: their warnings are immutable, so one is
    # shared by every skill that has the key. A long key (hostile, or rare) is not kept.
    if len(key) <= _SHARED_KEY_MAX:
        return _shared_unknown_field(key)
    return _unknown_field_warning(key)


def _unknown_field_warning(key: str) -> SkillWarning:
    return SkillWarning("unknown_field", f"unknown field {safe_repr(key)} kept as inert data", key)


_SHARED_KEY_MAX: Final = 64
_shared_unknown_field: Final = functools.lru_cache(maxsize=256)(_unknown_field_warning)
