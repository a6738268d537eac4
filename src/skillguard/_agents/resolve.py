"""Finding an agent file in a repository (seed 000, phase 1), and its knowledge files.

Rules (threat-model.md T72-T75):

* An ``agent`` value holding ``/`` or ``\\`` is a path relative to the repository root
  and name resolution is skipped. The path goes through ``_fs.split_name``: an absolute
  path, ``.``, ``..`` or an empty component is refused, and so is ``\\``. skillguard
  runs on POSIX, where ``\\`` is a character of a file name; reading it as a separator
  would let two spellings name one file, so the value is refused (``bad_name``) rather
  than translated.
* Any other value is a name, and must be a bounded slug (``is_valid_name``); anything
  else is not found. The candidates, in order: ``src/agents/<name>.md``, then
  ``<team>/src/agents/<name>.md`` when a team is given, then
  ``.team-development/src/agents/<name>.md``, then the harness presets the host asked
  for, in the order it gave them. The first candidate that exists (as anything at all)
  is read; if it cannot be read the answer is that refusal, never the next candidate.
* The ``pi`` preset names a composable agent folder (seed 001),
  ``agents/<name>/agent.md``, the way pi's ``agent-modes`` reads it at run time. The
  folder is composed for the harness in memory by the composer (``_compose``: the
  same caps, containment and token rules), never written, and the composed bytes are
  read back through ``parse_agent`` under the caller's limits and profile. Its token
  map is ``agents/token-map.json``, else ``token-map.json`` at the repository root,
  else none (an empty map); the first that exists is the answer, and one that cannot
  be read or parsed, or does not list the harness, is refused. ``sources`` lists every
  file the composition read, so that an approval covers each of them (T138).
* Every read goes through one ``SafeRoot`` on the repository: a symlinked folder on the
  way or a symlinked file, a FIFO, a device, a hard link or a file on another file
  system is refused without being read, and at most ``max_skill_bytes + 1`` bytes of
  the file are read.
* ``load_agent_context`` and ``read_core_knowledge`` are the operator's own tools: they
  serve what they read, and no human approved it. Text bound for a prompt goes through
  the approval gate (``_gate``, ``AgentSkills.agent_context``), which resolves with
  ``resolve_in`` beneath the one descriptor it also reads the knowledge files with.
* ``core_knowledge`` paths are never followed by the envelope. ``read_core_knowledge``
  reads each one through the same ``SafeRoot``, bounded, and reports an escaping,
  symlinked, missing or oversize path as a typed error *of that entry*.
"""

from __future__ import annotations

import hashlib
from types import MappingProxyType
from typing import TYPE_CHECKING, Final

import attrs

from skillguard._agents.compose import compose_in
from skillguard._agents.compose_read import DEFAULT_COMPOSE_LIMITS, ComposeLimits
from skillguard._agents.envelope import agent_envelope
from skillguard._agents.parse import AgentDefinition, parse_agent
from skillguard._agents.tokenmap import EMPTY_TOKEN_MAP, TokenMap, parse_token_map
from skillguard._core.errors import (
    MalformedSkillError,
    SkillContainmentError,
    SkillError,
    SkillInputError,
    SkillNotFoundError,
    SkillUsageError,
    safe_repr,
)
from skillguard._core.limits import DEFAULT_LIMITS, Limits
from skillguard._core.strict_yaml import decode_utf8
from skillguard._core.text import reveal
from skillguard._fs.containment import SafeRoot
from skillguard._fs.paths import split_name
from skillguard._fs.walk import Resolver
from skillguard._skills.names import is_valid_name

if TYPE_CHECKING:
    import os
    from collections.abc import Callable, Mapping

    from skillguard._core.model import Profile
    from skillguard._fs.walk import Resolver

__all__ = [
    "HARNESS_PRESETS",
    "AgentContext",
    "AgentNotFoundError",
    "KnowledgeFile",
    "check_arguments",
    "knowledge_path",
    "load_agent_context",
    "read_core_knowledge",
    "resolve_in",
]

_SEED_FOLDERS: Final = ("src/agents/", ".team-development/src/agents/")
_TEAM_DEFAULT: Final = ".team-development"
_PATH_MAX_SHOWN: Final = 512
# The agent folders of the harnesses, as (folder, file suffix) pairs tried in order.
HARNESS_PRESETS: Final[Mapping[str, tuple[tuple[str, str], ...]]] = MappingProxyType(
    {
        "claude": ((".claude/agents/", ".md"),),
        "copilot": ((".github/agents/", ".agent.md"), (".github/agents/", ".md")),
        "cursor": ((".cursor/agents/", ".md"),),
        "gemini": ((".gemini/agents/", ".md"),),
        "opencode": ((".opencode/agents/", ".md"),),
        # A suffix of "/agent.md" names a composable agent folder, composed for the
        # preset's harness (seed 001; see the module docstring).
        "pi": (("agents/", "/agent.md"),),
    }
)
_COMPOSED_SUFFIX: Final = "/agent.md"
# Where a composable folder's token map is looked for, in order (seed 001 keeps it
# next to the agents; the examples keep it in the agents folder).
TOKEN_MAP_FILES: Final = ("agents/token-map.json", "token-map.json")


class AgentNotFoundError(SkillNotFoundError):
    """No agent file matched the requested name (or path) in any searched location."""


@attrs.frozen(kw_only=True)
class AgentContext:
    """A resolved, parsed agent file: what ``load_agent_context`` returns.

    ``source_path`` is ``/``-separated and relative to the repository; ``identity`` is
    the file name without ``.agent.md`` or ``.md`` (the folder name for a composed
    agent), the agent's identity for resolution (``definition.name`` is a display
    string and is never used to build a path). ``sources`` is empty for an agent file,
    and for an agent composed from a folder lists every file the composition read as
    (repository path, size, sha256), sorted by path: ``definition`` is the composed
    text, which no single file holds.
    """

    definition: AgentDefinition
    source_path: str
    identity: str
    sources: tuple[tuple[str, int, str], ...] = ()

    def envelope(self) -> dict[str, object]:
        """The seed's success envelope as a dict, keys in the seed's order; every string
        from the file shows hidden characters escaped (see ``_envelope``)."""
        return agent_envelope(self.definition, self.source_path)


@attrs.frozen(kw_only=True)
class KnowledgeFile:
    """One ``Read <path>`` directive and its outcome: the text, or the typed error.

    ``text`` is the file decoded as UTF-8 with every character that hides or reorders
    text shown escaped (``[U+XXXX]``); ``sha256`` is of the exact bytes read.
    """

    directive: str
    path: str
    text: str | None = None
    sha256: str | None = None
    error: SkillError | None = None


def _shown(path: str) -> str:
    return safe_repr(path, limit=_PATH_MAX_SHOWN)


def _identity(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    for suffix in (".agent.md", ".md"):
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


def _candidates(
    name: str, team: str | None, harnesses: tuple[str, ...]
) -> tuple[list[tuple[str, str | None]], list[str]]:
    """The files to try for *name*, in order, each with the harness to compose it for
    (``None``: an agent file, read as it is), and the folders named when none exists."""
    folders = [_SEED_FOLDERS[0]]
    files: list[tuple[str, str | None]] = [(f"{_SEED_FOLDERS[0]}{name}.md", None)]
    if team is not None and team != _TEAM_DEFAULT:
        folders.append(f"{team}/src/agents/")
        files.append((f"{team}/src/agents/{name}.md", None))
    folders.append(_SEED_FOLDERS[1])
    files.append((f"{_SEED_FOLDERS[1]}{name}.md", None))
    for harness in harnesses:
        for folder, suffix in HARNESS_PRESETS[harness]:
            if folder not in folders:
                folders.append(folder)
            composed = harness if suffix == _COMPOSED_SUFFIX else None
            files.append((f"{folder}{name}{suffix}", composed))
    return files, folders


def check_arguments(
    agent: object, team: object, harnesses: object, limits: object
) -> tuple[str, str | None, tuple[str, ...], Limits]:
    if not isinstance(agent, str) or not agent:
        raise SkillUsageError("missing_argument", "--agent is required: an agent name or path")
    if team is not None:
        if not isinstance(team, str) or not team:
            raise SkillUsageError("bad_argument", "team must be a non-empty relative path")
        team = "/".join(split_name(team))  # refuses an absolute path, '..', '//'
    if isinstance(harnesses, str) or not isinstance(harnesses, (tuple, list)):
        raise SkillUsageError("bad_argument", "harnesses must be a tuple of preset names")
    for harness in harnesses:
        if not isinstance(harness, str) or harness not in HARNESS_PRESETS:
            shown = safe_repr(harness) if isinstance(harness, str) else "?"
            raise SkillUsageError(
                "bad_argument",
                f"unknown harness preset {shown}; known: {', '.join(HARNESS_PRESETS)}",
            )
    if limits is None:
        limits = DEFAULT_LIMITS
    elif not isinstance(limits, Limits):
        raise SkillUsageError("bad_argument", "limits must be a skillguard.Limits")
    return agent, team, tuple(harnesses), limits


def load_agent_context(
    repo: str | os.PathLike[str],
    agent: str,
    *,
    team: str | None = None,
    harnesses: tuple[str, ...] = (),
    limits: Limits | None = None,
    profile: Profile = "strict",
    resolver: Resolver = "auto",
) -> AgentContext:
    """Resolve *agent* (a name or a repository-relative path) in *repo*, read it and
    parse it. This is the operator's own tool: the result is text nobody approved, so
    a prompt gets an agent file through ``AgentSkills.agent_context`` instead.

    *team* is a folder of the repository searched before ``.team-development``;
    *harnesses* names presets of ``HARNESS_PRESETS`` searched after the seed's
    folders, in the order given. ``limits.max_skill_bytes`` caps the file.

    Raises :class:`AgentNotFoundError` (``agent_not_found``) when no candidate exists,
    ``SkillContainmentError`` or ``SkillNotFoundError`` when the file or the way to it
    cannot be read safely, ``MalformedSkillError`` when it is not a valid agent file,
    and ``SkillUsageError`` (``missing_argument`` for an absent or empty *agent*,
    ``bad_argument``) for bad arguments. Any other exception is a bug.
    """
    agent, team, harnesses, limits = check_arguments(agent, team, harnesses, limits)
    with SafeRoot(repo, resolver=resolver) as root:
        return resolve_in(root, agent, team, harnesses, limits, profile)


def resolve_in(
    root: SafeRoot,
    agent: str,
    team: str | None,
    harnesses: tuple[str, ...],
    limits: Limits,
    profile: Profile,
    record: Callable[[str, bytes], None] | None = None,
) -> AgentContext:
    """``load_agent_context`` beneath a root the caller holds (arguments checked by
    ``check_arguments``), so that the approval gate reads the agent file and its
    knowledge files beneath one descriptor. *record*, if given, is called with the
    repository path and the exact bytes of every file the answer was built from (the
    agent file, or each file a composition read), once the answer stands."""
    if "/" in agent or "\\" in agent:
        path = "/".join(split_name(agent))
        if not root.has_entry(path):
            raise AgentNotFoundError("agent_not_found", f"Agent file {_shown(agent)} not found")
    else:
        if not is_valid_name(agent):
            raise AgentNotFoundError(
                "agent_not_found",
                f"Agent {_shown(agent)} not found: an agent name is 1-64 characters "
                "of a-z, 0-9 and single hyphens",
            )
        files, folders = _candidates(agent, team, harnesses)
        found = next((file for file in files if root.has_entry(file[0])), None)
        if found is None:
            raise AgentNotFoundError(
                "agent_not_found", f"Agent '{agent}' not found. Searched: {', '.join(folders)}"
            )
        path, harness = found
        if harness is not None:
            return _composed(root, path, agent, harness, limits, profile, record)
    try:
        raw = root.read_file(path, cap=limits.max_skill_bytes, oversize=MalformedSkillError)
        definition = parse_agent(raw, limits=limits, profile=profile)
    except SkillInputError as exc:
        # The same error, with the file it is about (never its content).
        raise type(exc)(
            exc.code,
            f"agent file {_shown(path)}: {exc.reason}",
            line=exc.line,
            column=exc.column,
            key=exc.key,
        ) from exc
    if record is not None:
        record(path, raw)
    return AgentContext(definition=definition, source_path=path, identity=_identity(path))


def _token_map(root: SafeRoot, limits: ComposeLimits, record: list[tuple[str, bytes]]) -> TokenMap:
    """The repository's token map (``TOKEN_MAP_FILES``, first that exists), or none."""
    for path in TOKEN_MAP_FILES:
        if not root.has_entry(path):
            continue
        cap = limits.max_token_map_bytes
        try:
            raw = root.read_file(path, cap=cap, oversize=MalformedSkillError)
            token_map = parse_token_map(raw, max_bytes=cap)
        except SkillInputError as exc:
            raise type(exc)(
                exc.code, f"token map {_shown(path)}: {exc.reason}", line=exc.line, key=exc.key
            ) from exc
        record.append((path, raw))
        return token_map
    return EMPTY_TOKEN_MAP


def _composed(
    root: SafeRoot,
    path: str,
    name: str,
    harness: str,
    limits: Limits,
    profile: Profile,
    record: Callable[[str, bytes], None] | None = None,
) -> AgentContext:
    """The composable folder of *path* (``.../<name>/agent.md``) composed for *harness*
    in memory, read back as an agent file; every file read is in ``sources``."""
    folder = path[: -len(_COMPOSED_SUFFIX)]
    # The composer's own caps, and the caller's cap on an agent file on top.
    caps = attrs.evolve(
        DEFAULT_COMPOSE_LIMITS,
        max_agent_bytes=min(DEFAULT_COMPOSE_LIMITS.max_agent_bytes, limits.max_skill_bytes),
        max_composed_bytes=min(DEFAULT_COMPOSE_LIMITS.max_composed_bytes, limits.max_skill_bytes),
    )
    reads: list[tuple[str, bytes]] = []
    token_map = _token_map(root, caps, reads)
    if not token_map.knows(harness):
        raise MalformedSkillError(
            "unlisted_harness",
            f"token map {_shown(reads[0][0])}: it does not list the harness {harness}",
        )
    where = f"agent folder {_shown(folder)}"
    try:
        with root.open_dir(folder) as held:
            composed = compose_in(
                held,
                name,
                harness,
                token_map=token_map,
                limits=caps,
                record=lambda relpath, raw: reads.append((f"{folder}/{relpath}", raw)),
            )
        where = f"agent folder {_shown(folder)} composed for {harness}"
        definition = parse_agent(composed.data, limits=limits, profile=profile)
    except SkillInputError as exc:
        raise type(exc)(
            exc.code,
            f"{where}: {exc.reason}",
            line=exc.line,
            column=exc.column,
            key=exc.key,
        ) from exc
    sources = {
        relpath: (relpath, len(raw), hashlib.sha256(raw).hexdigest()) for relpath, raw in reads
    }
    if record is not None:
        for relpath, raw in reads:
            record(relpath, raw)
    return AgentContext(
        definition=definition,
        source_path=path,
        identity=name,
        sources=tuple(sorted(sources.values())),
    )


def knowledge_path(directive: str) -> str:
    """The path of ``Read <path>``, without one pair of enclosing backticks or quotes."""
    path = directive[len("Read") :].strip()
    if len(path) >= 2 and path[0] == path[-1] and path[0] in "`'\"":
        path = path[1:-1].strip()
    return path


def read_core_knowledge(
    repo: str | os.PathLike[str],
    agent: AgentContext | AgentDefinition,
    *,
    limits: Limits | None = None,
    resolver: Resolver = "auto",
) -> tuple[KnowledgeFile, ...]:
    """Read the file of each ``core_knowledge`` directive of *agent*, beneath *repo*.

    Each entry is read through one ``SafeRoot`` on *repo*, at most
    ``limits.max_skill_bytes`` of it, and all of them together at most
    ``limits.max_snapshot_bytes`` (an entry past that budget, or past the first
    ``limits.max_resource_files`` entries, gets its typed error). ``directive`` and
    ``path`` show hidden characters as ``[U+XXXX]``, like the envelope. An entry that
    escapes the repository, passes a symlink, is missing, oversize or not UTF-8 gets
    its typed error in ``error``
    (``SkillContainmentError``, ``SkillNotFoundError``, ``MalformedSkillError``); one
    bad entry never fails the others. Raises ``SkillUsageError`` for bad arguments and
    the ``SafeRoot`` errors when *repo* itself cannot be opened.
    """
    if isinstance(agent, AgentContext):
        agent = agent.definition
    if not isinstance(agent, AgentDefinition):
        raise SkillUsageError("bad_argument", "agent must be an AgentContext or AgentDefinition")
    if limits is None:
        limits = DEFAULT_LIMITS
    elif not isinstance(limits, Limits):
        raise SkillUsageError("bad_argument", "limits must be a skillguard.Limits")
    results: list[KnowledgeFile] = []
    budget = limits.max_snapshot_bytes  # all the entries together, like a skill folder
    with SafeRoot(repo, resolver=resolver) as root:
        for number, directive in enumerate(agent.core_knowledge):
            path = knowledge_path(directive)
            shown = reveal(directive), reveal(path)
            if number >= limits.max_resource_files:
                error = SkillContainmentError(
                    "too_many_entries",
                    f"more than {limits.max_resource_files} core_knowledge entries",
                )
                results.append(KnowledgeFile(directive=shown[0], path=shown[1], error=error))
                continue
            try:
                raw = root.read_file(path, cap=min(limits.max_skill_bytes, budget))
                text = decode_utf8(raw, what="the knowledge file")
            except (SkillContainmentError, SkillNotFoundError, MalformedSkillError) as exc:
                results.append(KnowledgeFile(directive=shown[0], path=shown[1], error=exc))
                continue
            budget -= len(raw)
            results.append(
                KnowledgeFile(
                    directive=shown[0],
                    path=shown[1],
                    text=reveal(text),
                    sha256=hashlib.sha256(raw).hexdigest(),
                )
            )
    return tuple(results)
