"""Agents roots and agent folders: which folders are agents, and validating them.

Rules (threat-model.md T100-T106). A path is an agent folder when it holds
``agent.md``; otherwise it is an agents root, and its agents are its folders that hold
``agent.md``. Every folder is opened beneath a held descriptor (a symlinked agent
folder is refused, whether it is named directly or found in a root); every entry that
is not taken has a reason (``Skipped``). ``validate_agent`` composes each harness in
both dialects, without writing, and collects every problem instead of stopping at the
first. ``validate_agent_directory`` is the library's form of ``agent validate``: the
same checks, one typed ``AgentValidation`` per agent folder.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import attrs

from skillguard._agents.compose import compose_in
from skillguard._agents.compose_read import (
    AGENT_FILE,
    DEFAULT_COMPOSE_LIMITS,
    FRONTMATTER_FILE,
    ComposeLimits,
    harness_folders,
)
from skillguard._agents.tokenmap import EMPTY_TOKEN_MAP, TokenMap
from skillguard._core.errors import MalformedSkillError, SkillError, SkillUsageError, safe_repr
from skillguard._fs.containment import SafeRoot
from skillguard._fs.paths import display_path, operator_path

if TYPE_CHECKING:
    from collections.abc import Iterator

    from skillguard._core.model import SkillWarning

__all__ = [
    "AgentFinding",
    "AgentFolder",
    "AgentValidation",
    "SkippedAgent",
    "agent_folders",
    "validate_agent",
    "validate_agent_directory",
]


@attrs.frozen
class SkippedAgent:
    """A folder that was not taken as an agent, and why (``kind`` is the error kind,
    or ``not_agent`` for a folder without ``agent.md``)."""

    agent: str
    kind: str
    code: str
    message: str


@attrs.define
class AgentFolder:
    """An agent folder, held open: ``name`` is its folder name, ``path`` for display."""

    name: str
    path: str
    root: SafeRoot


def _skip(agent: str, error: SkillError) -> SkippedAgent:
    return SkippedAgent(agent, error.kind, error.code, error.reason)


def agent_folders(path: str, limits: ComposeLimits) -> Iterator[AgentFolder | SkippedAgent]:
    """The agent folders *path* names (one, or each one in an agents root), in name order.

    Each yielded ``AgentFolder`` is closed by this generator once the caller moves on.
    Raises ``SkillContainmentError`` / ``SkillNotFoundError`` when *path* itself cannot
    be opened.
    """
    absolute = os.path.abspath(path)
    parent, name = os.path.split(absolute)
    with SafeRoot(parent) as outer, outer.open_dir(name) as folder:
        if folder.has_entry(AGENT_FILE):
            yield AgentFolder(name, path, folder)
            return
        if _has_harness(folder, limits):
            yield _no_agent_md(name)
            return
        listing = folder.list_dir("", max_entries=limits.max_agents)
        for skipped in listing.skipped:
            kind = "malformed" if skipped.code == "too_many_entries" else "containment"
            yield SkippedAgent(skipped.path, kind, skipped.code, skipped.reason)
        for entry in listing.entries:
            if entry.kind != "dir":
                continue
            try:
                child = folder.open_dir(entry.name)
            except SkillError as exc:
                yield _skip(entry.name, exc)
                continue
            with child:
                if not child.has_entry(AGENT_FILE):
                    yield (
                        _no_agent_md(entry.name)
                        if _has_harness(child, limits)
                        else SkippedAgent(
                            entry.name, "not_agent", "no_agent_md", "the folder holds no agent.md"
                        )
                    )
                    continue
                yield AgentFolder(entry.name, display_path(os.path.join(path, entry.name)), child)


def _has_harness(folder: SafeRoot, limits: ComposeLimits) -> bool:
    """Whether a folder without ``agent.md`` still has a harness folder (a broken agent)."""
    listing = folder.list_dir("", max_entries=limits.max_agents)
    return any(
        entry.kind == "dir" and folder.has_entry(f"{entry.name}/{FRONTMATTER_FILE}")
        for entry in listing.entries
    )


def _no_agent_md(agent: str) -> SkippedAgent:
    return SkippedAgent(
        agent,
        "not_found",
        "missing_agent_md",
        "the agent folder has harness folders but no agent.md",
    )


def _entry(error: SkillError, harness: str | None) -> dict[str, str]:
    message = error.reason if harness is None else f"{harness}: {error.reason}"
    return {"kind": error.kind, "code": error.code, "message": message}


def validate_agent(
    folder: AgentFolder, token_map: TokenMap, limits: ComposeLimits
) -> tuple[list[dict[str, str]], list[SkillWarning]]:
    """Every problem of one agent folder: (errors as JSON-ready entries, warnings).

    Checks ``agent.md``, that at least one harness folder composes, and, for every
    harness folder, the schema, every token and every section, in both dialects.
    """
    errors: list[dict[str, str]] = []
    warnings: list[SkillWarning] = []
    try:
        harnesses = harness_folders(folder.root, limits)
    except SkillError as exc:
        return [_entry(exc, None)], warnings
    valid = 0
    for harness in harnesses:
        if not token_map.knows(harness):
            errors.append(
                _entry(
                    MalformedSkillError(
                        "unlisted_harness", "the token map does not list this harness"
                    ),
                    harness,
                )
            )
            continue
        try:
            for dialect in ("verbatim", "native"):
                composed = compose_in(
                    folder.root,
                    folder.name,
                    harness,
                    token_map=token_map,
                    dialect=dialect,
                    limits=limits,
                )
                if dialect == "verbatim":
                    warnings.extend(
                        attrs.evolve(w, message=f"{harness}: {w.message}")
                        for w in composed.warnings
                    )
        except SkillError as exc:
            if exc.code == "frontmatter_in_agent_md" or exc.reason.startswith(AGENT_FILE):
                # A fault of the shared body is reported once, not once per harness.
                if _entry(exc, None) not in errors:
                    errors.append(_entry(exc, None))
            else:
                errors.append(_entry(exc, harness))
            continue
        valid += 1
    if valid == 0:
        shown = safe_repr(folder.name)
        errors.append(
            _entry(
                MalformedSkillError(
                    "no_valid_harness",
                    f"the agent {shown} has no harness folder with a valid frontmatter.json",
                ),
                None,
            )
        )
    return errors, warnings


@attrs.frozen(kw_only=True)
class AgentFinding:
    """One problem of an agent folder: the error ``kind`` (``malformed``,
    ``containment``, ``not_found``), its ``code`` (the README's error table) and a
    message that names the harness folder or file, never the file's content."""

    kind: str
    code: str
    message: str


@attrs.frozen(kw_only=True)
class AgentValidation:
    """What ``validate_agent_directory`` found in one agent folder.

    ``agent`` is the folder's name, ``path`` the folder for display (the name alone
    for a folder that could not be opened); ``errors`` every
    problem (empty: every harness folder composes, in both dialects), ``warnings``
    what composes with a note (an unused section, a dropped null tool).
    """

    agent: str
    path: str
    errors: tuple[AgentFinding, ...]
    warnings: tuple[SkillWarning, ...]

    @property
    def ok(self) -> bool:
        """Whether the folder has no error."""
        return not self.errors


def validate_agent_directory(
    path: str | os.PathLike[str],
    *,
    token_map: TokenMap | None = None,
    limits: ComposeLimits | None = None,
) -> tuple[AgentValidation, ...]:
    """Validate the agent folder *path*, or each agent folder of the agents root *path*.

    The checks of ``skillguard agent validate``: ``agent.md`` (present, no
    frontmatter), at least one harness folder that composes, and for every harness
    folder the ``frontmatter.json`` schema, every token against *token_map* (default:
    an empty map, which lists every harness and no tool) and every section, in both
    dialects; nothing is written. One ``AgentValidation`` per agent folder, in name
    order; a folder that cannot be opened safely (a symlink) is one with its error; a
    folder that is not an agent (no ``agent.md`` and no harness folder) is left out,
    so an empty tuple means *path* holds no agent.

    Raises ``SkillContainmentError`` / ``SkillNotFoundError`` when *path* itself cannot
    be opened safely and ``SkillUsageError`` (``bad_argument``) for bad arguments; any
    other exception is a bug.
    """
    folder = operator_path(path, "path")
    if token_map is None:
        token_map = EMPTY_TOKEN_MAP
    if not isinstance(token_map, TokenMap):
        raise SkillUsageError("bad_argument", "token_map must be a TokenMap or None")
    if limits is None:
        limits = DEFAULT_COMPOSE_LIMITS
    if not isinstance(limits, ComposeLimits):
        raise SkillUsageError("bad_argument", "limits must be a ComposeLimits")
    results: list[AgentValidation] = []
    for found in agent_folders(folder, limits):
        if isinstance(found, AgentFolder):
            errors, warnings = validate_agent(found, token_map, limits)
            results.append(
                AgentValidation(
                    agent=found.name,
                    path=found.path,
                    errors=tuple(AgentFinding(**entry) for entry in errors),
                    warnings=tuple(warnings),
                )
            )
        elif found.kind != "not_agent":
            finding = AgentFinding(kind=found.kind, code=found.code, message=found.message)
            results.append(
                AgentValidation(agent=found.agent, path=found.agent, errors=(finding,), warnings=())
            )
    return tuple(results)
