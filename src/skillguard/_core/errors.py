"""The errors skillguard reports, split by who is at fault.

Every failure the library reports is an instance of one root, :class:`SkillError`.
Below it the tree is split by *who is at fault*, so a caller can tell "this file
or folder is hostile or broken" from "my own code called skillguard wrongly"::

    SkillError                      root; never raised itself
    ├── SkillInputError             the untrusted input is at fault
    │   ├── MalformedSkillError     kind "malformed": the bytes are not a valid skill
    │   ├── SkillContainmentError   kind "containment": the file or name breaks containment
    │   └── SkillNotFoundError      kind "not_found": nothing readable is where it should be
    └── SkillUsageError             kind "usage": the caller passed bad arguments

Every error carries structured, non-secret fields: ``kind`` (the branch), ``code``
(stable; every code, with its kind and meaning, is listed once in ``_core/codes.py``),
``name`` (the skill identifier when known), ``agent`` (the requesting agent when
known), ``reason`` (a human-readable sentence), and, where it helps, ``line``,
``column`` and ``key``. Messages never echo file content: they may name the offending
key (escaped and truncated) and the line, nothing more.

Foreign exceptions are wrapped at the boundary with ``raise ... from exc``; any other
exception escaping the public API is a bug.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = [
    "MalformedSkillError",
    "SkillContainmentError",
    "SkillError",
    "SkillInputError",
    "SkillNotFoundError",
    "SkillUsageError",
    "input_error",
    "safe_repr",
    "unknown_key",
]

# Untrusted strings (keys, folder names) are shown escaped and bounded so that an
# error message can never carry terminal escapes, bidi overrides or a whole value.
_MAX_REPR_CHARS = 64


def safe_repr(untrusted: str, *, limit: int = _MAX_REPR_CHARS) -> str:
    """Return *untrusted* as a quoted, ASCII-only, bounded string for messages.

    Every non-printable or non-ASCII character is escaped, so the result cannot move
    a terminal cursor, reorder text or hide characters from a reviewer.
    """
    shown = untrusted if len(untrusted) <= limit else untrusted[:limit]
    escaped = ascii(shown)
    if len(untrusted) > limit:
        escaped += "..."
    return escaped


def _valid_fields(
    code: object, reason: object, name: object, agent: object, line: object, key: object
) -> bool:
    return (
        isinstance(code, str)
        and isinstance(reason, str)
        and all(value is None or isinstance(value, str) for value in (name, agent, key))
        and (line is None or (isinstance(line, int) and not isinstance(line, bool)))
    )


class SkillError(Exception):
    """Root of every error skillguard reports.

    Attributes are plain, non-secret data so that callers and audit logs can record
    them as they are: ``kind``, ``code``, ``name``, ``agent``, ``reason``, ``line``,
    ``column`` (1-based, in characters) and ``key``.
    """

    kind: ClassVar[str] = "error"

    def __init__(
        self,
        code: str,
        reason: str,
        *,
        name: str | None = None,
        agent: str | None = None,
        line: int | None = None,
        key: str | None = None,
        column: int | None = None,
    ) -> None:
        # An error built from bad fields would itself fail to render (or render a
        # caller's object): refuse them with a usage error whose fields are constants.
        if not _valid_fields(code, reason, name, agent, line, key):
            raise SkillUsageError(
                "bad_argument",
                "an error's code and reason are str, name, agent and key str or None, "
                "line an int or None",
            )
        self.code = code
        self.reason = reason
        self.name = name
        self.agent = agent
        self.line = line
        self.column = column
        self.key = key
        super().__init__(self._render())

    def _render(self) -> str:
        parts = [f"[{self.kind}/{self.code}]"]
        if self.name is not None:
            parts.append(f"skill {safe_repr(self.name)}:")
        if self.line is not None:
            column = "" if self.column is None else f", column {self.column}"
            parts.append(f"line {self.line}{column}:")
        parts.append(self.reason)
        return " ".join(parts)

    def as_dict(self) -> dict[str, str | int]:
        """The structured fields as a JSON-ready mapping (``None`` fields left out)."""
        out: dict[str, str | int] = {"kind": self.kind, "code": self.code, "message": self.reason}
        if self.name is not None:
            out["name"] = self.name
        if self.agent is not None:
            out["agent"] = self.agent
        if self.line is not None:
            out["line"] = self.line
        if self.column is not None:
            out["column"] = self.column
        if self.key is not None:
            out["key"] = self.key
        return out


class SkillInputError(SkillError):
    """The untrusted input (a file, a folder, a requested name) is at fault."""


class MalformedSkillError(SkillInputError):
    """The bytes of a SKILL.md document are not a valid skill.

    Raised for oversize input, bad encoding, a missing or unterminated frontmatter
    fence, YAML that is not plain data, a duplicate key, or a field that breaks the
    Agent Skills rules. The parser is fail-secure: it never returns a partial result
    alongside this error.
    """

    kind: ClassVar[str] = "malformed"


class SkillContainmentError(SkillInputError):
    """A file or name breaks the containment rules (symlink, special file, bad name)."""

    kind: ClassVar[str] = "containment"


class SkillNotFoundError(SkillInputError):
    """Nothing readable is where a skill should be; wraps the OS error as ``__cause__``."""

    kind: ClassVar[str] = "not_found"


class SkillUsageError(SkillError):
    """The caller used the API wrongly (wrong argument type, unknown profile, bad limit)."""

    kind: ClassVar[str] = "usage"


def input_error(
    kind: str, code: str, reason: str, *, name: str | None = None, agent: str | None = None
) -> SkillInputError:
    """The error of an untrusted input that was refused as *kind* (a skipped entry's
    ``kind``): that branch's class, or ``SkillInputError`` for a kind without one."""
    for branch in (MalformedSkillError, SkillContainmentError, SkillNotFoundError):
        if branch.kind == kind:
            return branch(code, reason, name=name, agent=agent)
    return SkillInputError(code, reason, name=name, agent=agent)


# A key longer than this is not compared with the known keys: no known key is near it,
# and a hostile key (up to a scalar's cap) cannot make the comparison costly.
_MAX_SUGGESTED_KEY = 64


def unknown_key(key: object, known: Iterable[str], *, where: str = "") -> str:
    """The words for an unknown *key* of an operator's file: the key escaped and
    bounded (``safe_repr``), then the nearest of *known* when one is close (``did you
    mean 'tools'?``), else the keys allowed there; *where* (``" of agent 'p'"``)
    follows the key. Deterministic: *known* is sorted before it is compared
    (``difflib``, a ratio of at least 0.6)."""
    allowed = sorted(known)
    if not isinstance(key, str):
        return f"a key{where} that is not a string; the keys are {', '.join(map(repr, allowed))}"
    shown = f"unknown key {safe_repr(key)}{where}"
    if len(key) <= _MAX_SUGGESTED_KEY:
        import difflib  # noqa: PLC0415 - only an error pays for it

        near = difflib.get_close_matches(key, allowed, n=1, cutoff=0.6)
        if near:
            return f"{shown} (did you mean {near[0]!r}?)"
    return f"{shown}; the keys are {', '.join(map(repr, allowed))}"
