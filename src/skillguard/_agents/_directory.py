"""Agents roots and agent folders: which folders are agents, and validating them.

Rules (threat-model.md T100-T106). A path is an agent folder when it holds
``agent.md``; otherwise it is an agents root, and its agents are its folders that hold
``agent.md``. Every folder is opened beneath a held descriptor (a symlinked agent
folder is refused, whether it is named directly or found in a root); every entry that
is not taken has a reason (``Skipped``). ``validate_agent`` composes each harness in
both dialects, without writing, and collects every problem instead of stopping at the
first.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import attrs

from skillguard._errors import MalformedSkillError, SkillError, safe_repr
from skillguard._fs import SafeRoot, display_path

from ._compose import AGENT_FILE, FRONTMATTER_FILE, ComposeLimits, compose_in, harness_folders

if TYPE_CHECKING:
    from collections.abc import Iterator

    from skillguard._model import SkillWarning

    from ._tokenmap import TokenMap

__all__ = ["AgentFolder", "SkippedAgent", "agent_folders", "validate_agent"]


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
