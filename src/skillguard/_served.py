"""The Loader: one agent, one closed allow-set, approved snapshots, every decision audited.

Rules (seed 004; threat-model.md T23-T28, T30-T39). For ``handle = loader.bind(agent)``:

1. Authorize first. A name outside the agent's set raises ``UnknownSkillError`` with the
   same message whether or not the name exists for anyone else; ``describe`` and
   ``catalog`` use the same predicate, so a catalog lists only what the agent may load.
   An agent the policy does not know cannot be bound at all.
2. Embedded (trusted) skills always win. A workspace skill of the same name is never
   served instead; the shadowing is audited.
3. A workspace (untrusted) skill is served only to an agent whose workspace mode is
   ``approve``, and only after an approver approved the exact snapshot of its whole
   folder: ``prepare`` reads the folder once (``_snapshot``), the ``ApprovalRequest``
   carries the manifest digest, and everything served afterwards (body, resource list,
   every file, the tool grant) comes from that snapshot: a file not in the manifest does
   not exist, a changed one is refused (``changed_after_approval``) and audited.
4. A ``PreparedLoad`` is a receipt, not a capability: ``load`` serves what the loader
   recorded when it issued the request, once, to the agent it was issued to.
5. Until a workspace skill is approved or pinned, a catalog shows its name only: no
   description or location, which are text nobody has reviewed, reaches a prompt.
6. A skill with ``disable-model-invocation: true`` is never offered to a model (not in
   a catalog); it loads only through ``user_invoke``, the call a host makes when its
   user asks for the skill by name.
7. Every decision is audited; if the audit record cannot be written, the load that
   needed it is denied (``AuditError``). Pending approvals are bounded by count and bytes
   per agent and in total; an evicted request is audited.
8. ``select`` (seed 003, ``_select``) is a ranking over the same candidates a catalog
   shows, never a grant: it serves a workspace skill only from a snapshot approved for
   the agent or pinned (``aselect`` may ask the approver), and writes
   ``skills_selected`` with the task's hash before it returns (T80-T84).
9. The skill tool (seed 004, ``_tool``) reads a model's arguments strictly and checks
   the requested name is a skill name before it authorizes it (T85-T86).

A ``Loader`` is safe to share across threads and event loops. Its configuration is
read-only after construction; its mutable state (pending and approved snapshots, the
in-flight approvals) is behind one lock. Code running in the same process is inside the
trust boundary: it can reach any object's private state, and the guards here stop
mistakes and confused deputies, not a hostile in-process caller.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib.resources
import inspect
import math
import threading
from collections import Counter, OrderedDict
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

import attrs

from ._approval import (
    AnyApprover,
    ApprovalDeniedError,
    ApprovalError,
    ApprovalRequest,
    ApprovalRequiredError,
    Approver,
    AsyncApprover,
    Decision,
    PinningApprover,
    TrustStore,
    deny_all,
    make_request,
    request_cost,
)
from ._audit import AuditLog, Auditor, audit_summary
from ._discover import RootPath, SkillMeta, SkillRoots, SkippedEntry, source_folder
from ._errors import (
    MalformedSkillError,
    SkillContainmentError,
    SkillError,
    SkillInputError,
    SkillNotFoundError,
    SkillUsageError,
    safe_repr,
)
from ._fs import display_path
from ._limits import DEFAULT_LIMITS, Limits
from ._model import Skill
from ._parse import parse_skill
from ._render import activation_text, catalog_json, catalog_xml
from ._select import (
    Match,
    SelectedSkill,
    Selection,
    SelectionIndex,
    SelectionRegistry,
    SkippedSkill,
    render_bounded,
    task_digest,
)
from ._snapshot import Snapshot, read_verified, take_snapshot
from ._tool import ToolInfo, requested_name
from ._tool import execution_id as tool_execution_id
from ._tools import narrow

if TYPE_CHECKING:
    import os
    import uuid
    from collections.abc import Callable, Sequence
    from importlib.abc import Traversable
    from types import TracebackType

    from ._fs import SafeRoot
    from ._model import Profile
    from ._policy import AllowPolicy

__all__ = [
    "AgentSkills",
    "EmbeddedSkills",
    "LoadedSkill",
    "Loader",
    "PreparedLoad",
    "ResourceSlot",
    "ToolDescriptor",
    "UnknownSkillError",
]

Source = Literal["embedded", "workspace"]
_SLOTS = ("scripts", "references", "assets")
_PROFILES = ("strict", "compat")
_SKIPS_SHOWN = 5  # entries named in one aggregated skip record


class UnknownSkillError(SkillInputError):
    """The name is not known to, or not authorized for, the requesting agent."""

    kind = "unknown"


def _unknown(agent: object, name: object) -> UnknownSkillError:
    shown_agent = safe_repr(agent) if isinstance(agent, str) else "?"
    shown_name = safe_repr(name) if isinstance(name, str) else "?"
    return UnknownSkillError(
        "not_authorized",
        f"agent {shown_agent} may not load skill {shown_name}",
        agent=agent if isinstance(agent, str) else None,
        name=name if isinstance(name, str) else None,
    )


# -- embedded skills -----------------------------------------------------------------


class EmbeddedSkills:
    """Trusted skills shipped with the host, parsed once and cached.

    ``EmbeddedSkills.from_directory(path)`` reads a folder of skill folders through
    ``SafeRoot``; ``EmbeddedSkills.from_package("pkg", "skills")`` reads package data
    through ``importlib.resources``. A skill that does not parse is the host's own bug:
    construction raises its ``MalformedSkillError``.
    """

    def __init__(
        self,
        skills: Mapping[str, Skill],
        resources: Mapping[str, Mapping[str, bytes]] | None = None,
        *,
        origin: str = "embedded",
        slots: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        if not isinstance(skills, Mapping) or not all(
            isinstance(name, str) and isinstance(skill, Skill) for name, skill in skills.items()
        ):
            raise SkillUsageError("bad_argument", "skills must map names to parsed Skills")
        if resources is not None and not (
            isinstance(resources, Mapping)
            and all(
                isinstance(name, str) and isinstance(files, Mapping)
                for name, files in resources.items()
            )
            and all(
                isinstance(path, str) and isinstance(data, bytes)
                for files in resources.values()
                for path, data in files.items()
            )
        ):
            raise SkillUsageError("bad_argument", "resources must map names to their files")
        if not isinstance(origin, str):
            raise SkillUsageError("bad_argument", "origin must be a str")
        if slots is not None and not hasattr(slots, "items"):
            raise SkillUsageError("bad_argument", "slots must map names to slot folders")
        self._skills = dict(skills)
        self._resources = {name: dict(files) for name, files in (resources or {}).items()}
        self.origin = origin
        # The slot folders of each skill, empty ones included; without the folders'
        # own listing, the slots its files are in.
        self._slots = {
            name: tuple(slot for slot in _SLOTS if slot in set(folders))
            for name, folders in (slots or {}).items()
        }

    @classmethod
    def from_directory(
        cls,
        path: str | os.PathLike[str],
        *,
        limits: Limits | None = None,
        profile: Profile = "strict",
        namespaces: bool = False,
    ) -> EmbeddedSkills:
        limits = limits or DEFAULT_LIMITS
        with SkillRoots([path], limits=limits, profile=profile, namespaces=namespaces) as roots:
            found = roots.discover()
            for skipped in found.skipped:
                raise _embedded_error(skipped.kind, skipped.code, skipped.reason)
            skills = {meta.name: roots.load(meta.name) for meta in found.skills}
            listings = {name: roots.resources(name) for name in skills}
            resources = {
                name: {item.path: roots.read_resource(name, item.path) for item in listing.files}
                for name, listing in listings.items()
            }
            slots = {name: listing.folders for name, listing in listings.items()}
        return cls(skills, resources, origin=display_path(str(path)), slots=slots)

    @classmethod
    def from_package(
        cls,
        package: str,
        folder: str = "skills",
        *,
        profile: Profile = "strict",
        namespaces: bool = False,
    ) -> EmbeddedSkills:
        if not isinstance(package, str) or not isinstance(folder, str):
            raise SkillUsageError("bad_argument", "package and folder must be str")
        try:
            base = importlib.resources.files(package).joinpath(folder)
            entries = sorted(base.iterdir(), key=lambda item: item.name)
        except (ImportError, OSError, TypeError, ValueError) as exc:
            raise SkillNotFoundError(
                "missing", "the package or its skills folder cannot be found"
            ) from exc
        skills: dict[str, Skill] = {}
        resources: dict[str, dict[str, bytes]] = {}
        slots: dict[str, tuple[str, ...]] = {}
        for entry in entries:
            skill_file = entry.joinpath("SKILL.md")
            if not entry.is_dir() or not skill_file.is_file():
                continue
            skill = parse_skill(
                skill_file.read_bytes(),
                expected_name=entry.name,
                profile=profile,
                namespaces=namespaces,
            )
            skills[skill.name] = skill
            resources[skill.name] = dict(_package_files(entry, ""))
            slots[skill.name] = tuple(slot for slot in _SLOTS if entry.joinpath(slot).is_dir())
        return cls(skills, resources, origin=f"{package}:{folder}", slots=slots)

    def names(self) -> frozenset[str]:
        return frozenset(self._skills)

    def get(self, name: str) -> Skill | None:
        return self._skills.get(name) if isinstance(name, str) else None

    def resources(self, name: str) -> tuple[str, ...]:
        """The resource paths of the embedded skill *name* (none for an unknown one).
        Raises ``SkillUsageError`` for a name that is not a str."""
        if not isinstance(name, str):
            raise SkillUsageError("bad_argument", "a skill name must be a str")
        return tuple(sorted(self._resources.get(name, {})))

    def slots(self, name: str) -> tuple[str, ...]:
        """The resource slot folders of skill *name*, empty ones included. Raises
        ``SkillUsageError`` when *name* is not a str."""
        if not isinstance(name, str):
            raise SkillUsageError("bad_argument", "a skill name must be a str")
        known = self._slots.get(name)
        if known is not None:
            return known
        folders = {path.split("/", 1)[0] for path in self.resources(name) if "/" in path}
        return tuple(slot for slot in _SLOTS if slot in folders)

    def read_resource(self, name: str, path: str) -> bytes:
        """One file of the embedded skill *name*. Raises ``SkillUsageError`` for a path
        that is not a str and ``SkillNotFoundError`` (``missing``) for an unknown one."""
        if not isinstance(name, str) or not isinstance(path, str):
            raise SkillUsageError("bad_argument", "a skill name and a resource path must be str")
        data = self._resources.get(name, {}).get(path)
        if data is None:
            raise SkillNotFoundError("missing", "no such resource in the embedded skill", name=name)
        return data


_ERROR_BY_KIND: dict[str, type[SkillError]] = {
    "malformed": MalformedSkillError,
    "containment": SkillContainmentError,
    "not_found": SkillNotFoundError,
}


def _embedded_error(kind: str, code: str, reason: str) -> SkillError:
    """The typed error of an embedded entry that could not be taken: the host's bug."""
    return _ERROR_BY_KIND.get(kind, SkillInputError)(code, f"embedded skill: {reason}")


def _package_files(folder: Traversable, prefix: str, depth: int = 0) -> list[tuple[str, bytes]]:
    files: list[tuple[str, bytes]] = []
    if depth > DEFAULT_LIMITS.max_resource_depth:
        return files
    for entry in sorted(folder.iterdir(), key=lambda item: item.name):
        path = f"{prefix}{entry.name}"
        if entry.is_dir():
            files.extend(_package_files(entry, f"{path}/", depth + 1))
        elif path != "SKILL.md" and len(files) < DEFAULT_LIMITS.max_resource_files:
            files.append((path, entry.read_bytes()))
    return files


# -- values --------------------------------------------------------------------------


@attrs.frozen
class ResourceSlot:
    """A read-only binding slot of a tool descriptor (seed 002). ``path`` is the slot
    folder's path, for display: files are read through ``read_resource`` only."""

    name: str
    resource_type: str
    access: Literal["read_only"] = "read_only"
    path: str = ""


@attrs.frozen
class ToolDescriptor:
    """A skill as a tool of a registry (seed 002): read-only, namespaced.

    ``agent_skill_path`` is the skill folder's path for display (an operator reading a
    registry); skillguard never opens a path from it. ``body`` is ``""`` in a
    descriptor built before activation (``AgentSkills.tool_descriptor``) and the full
    body in one built from a loaded skill. A slot exists for each slot folder the skill
    has, empty ones included.
    """

    name: str
    description: str
    allowed_tools: tuple[str, ...]
    resource_slots: tuple[ResourceSlot, ...]
    source: Literal["agent_skill"] = "agent_skill"
    read_only: bool = True
    writes: bool = False
    agent_skill_path: str = ""
    body: str = ""


@attrs.frozen
class PreparedLoad:
    """A skill read once for one agent: the receipt of the snapshot an approval is
    bound to. Its fields are for showing; ``load`` serves what the loader recorded."""

    agent: str
    skill: Skill
    source: Source
    origin: str
    path: str
    request: ApprovalRequest | None = None
    # The host's id of the tool call this load answers (``prepare_call``).
    execution_id: str | None = None

    @property
    def name(self) -> str:
        return self.skill.name

    @property
    def sha256(self) -> str:
        return self.skill.sha256

    @property
    def size(self) -> int:
        return self.skill.size

    @property
    def digest(self) -> str | None:
        """The manifest digest a human approves (``None`` for an embedded skill)."""
        return self.request.digest if self.request is not None else None


@attrs.frozen(eq=False)
class _Served:
    """A workspace snapshot and where its files are, as the loader recorded it."""

    snapshot: Snapshot
    root: SafeRoot
    location: str


@attrs.define(eq=False)
class _Issued:
    """A pending approval: what ``prepare`` handed out, and what ``load`` will serve."""

    prepared: PreparedLoad
    request: ApprovalRequest
    served: _Served
    by_user: bool
    cost: int


@attrs.define(eq=False)
class _Flight:
    """One approver call that concurrent ``aload`` calls of one snapshot share, with the
    one snapshot they are all served (the same digest is the same bytes)."""

    request_id: str
    agent: str
    served: _Served
    cost: int
    task: asyncio.Future[Any] | None = None
    waiters: int = 0
    cancelling: bool = False
    released: bool = False


@attrs.frozen
class LoadedSkill:
    """A skill served to one agent (tier 2), with its files on demand (tier 3).

    For a workspace skill everything comes from the approved snapshot: ``resources()``
    lists its manifest, ``read_resource`` serves a listed file only while its bytes are
    the approved ones (``SKILL.md`` included).
    """

    agent: str
    skill: Skill
    source: Source
    _loader: Loader = attrs.field(eq=False, repr=False)
    _served: _Served | None = attrs.field(default=None, eq=False, repr=False)

    @property
    def name(self) -> str:
        return self.skill.name

    @property
    def body(self) -> str:
        return self.skill.body

    def resources(self) -> tuple[str, ...]:
        if self._served is None:
            return self._loader.embedded.resources(self.name)
        return self._served.snapshot.manifest.paths()

    def read_resource(self, path: str) -> bytes:
        """One file of the skill. Raises ``SkillUsageError`` (a path that is not a str),
        ``SkillNotFoundError`` (``missing``: not in the skill, or not approved),
        ``SkillContainmentError`` (``changed_after_approval``, ``path_escape``,
        ``bad_name``) and ``AuditError``."""
        if self._served is None:
            return self._loader.embedded.read_resource(self.name, path)
        served = self._served
        try:
            return read_verified(served.root, served.location, served.snapshot, path)
        except SkillContainmentError as exc:
            if exc.code == "changed_after_approval":
                self._loader.auditor.emit(
                    "containment_violation",
                    agent=self.agent,
                    skill=self.name,
                    source="workspace",
                    decision="deny",
                    code=exc.code,
                    reason=exc.reason,
                    path=path,
                    digest=served.snapshot.digest,
                )
            raise

    def activation(self) -> str:
        """The activation text for the agent's context, escaped."""
        return activation_text(self.name, self.body, self.resources())

    def to_tool_descriptor(self) -> ToolDescriptor:
        """The activated skill as a registry tool: the full body, its folder's display
        path, a slot per slot folder (from the approved snapshot, for a workspace
        skill)."""
        if self._served is None:
            folder = f"{self._loader.embedded.origin}/{self.name}"
            slots = self._loader.embedded.slots(self.name)
        else:
            folder = self._served.snapshot.folder
            slots = self._served.snapshot.slots
        return _descriptor(self.source, self.skill, folder, slots, self.body)


def _descriptor(
    source: Source, skill: Skill, folder: str, slots: Sequence[str], body: str
) -> ToolDescriptor:
    # A namespaced skill is named as its author wrote it (seed 002); the others by
    # where they come from. Only this display name carries the namespace.
    namespace = source if skill.namespace is None else skill.namespace
    return ToolDescriptor(
        name=f"{namespace}/{skill.name}",
        description=skill.description,
        allowed_tools=skill.allowed_tools,
        resource_slots=tuple(
            ResourceSlot(slot, f"agent_skill_{slot}", path=f"{folder}/{slot}") for slot in slots
        ),
        agent_skill_path=folder,
        body=body,
    )


# -- the loader ----------------------------------------------------------------------


def _check_timeout(value: object, what: str) -> float | None:
    if value is None:
        return None
    try:
        seconds = float(value) if isinstance(value, (int, float)) else math.nan
    except OverflowError:  # an int too large for a float
        seconds = math.inf
    if isinstance(value, bool) or not 0 < seconds < math.inf:
        raise SkillUsageError(
            "bad_argument", f"{what} must be a positive, finite number of seconds"
        )
    return seconds


class Loader:
    """Serves skills to the agents of a swarm, each within its own grant.

    ``Loader(policy, embedded=..., workspace=..., approver=..., audit=...)``: *embedded*
    is an ``EmbeddedSkills``; *workspace* a ``SkillRoots`` or a list of roots (read
    through ``SafeRoot``, discovered once, here); *approver* a sync or async callable
    (default ``deny_all``); *audit* an ``Auditor`` or an ``AuditLog``.

    *trust_store* tells the catalog which workspace skills are pinned (by default, the
    store of a ``TrustStore.approver(...)``). *show_unapproved_descriptions* puts the
    description and location of workspace skills nobody approved into catalogs: that
    is up to 1,024 characters of text from whoever wrote the workspace, in the system
    prompt, before any human looked at it; leave it off unless the workspace is yours.
    *approval_timeout* (seconds, default 300; ``None`` waits forever) bounds how long
    ``aload`` waits for an async approver. *registry* is the operator's
    ``SelectionRegistry`` for ``select`` (it never grants anything).

    Raises ``SkillUsageError`` for a bad argument. Close it (or use it as a context
    manager) to release the workspace roots' descriptors.
    """

    _frozen = False

    def __init__(
        self,
        policy: AllowPolicy,
        *,
        embedded: EmbeddedSkills | None = None,
        workspace: SkillRoots | Sequence[str | os.PathLike[str] | RootPath] | None = None,
        approver: Approver | AsyncApprover | AnyApprover = deny_all,
        audit: Auditor | AuditLog | None = None,
        limits: Limits | None = None,
        profile: Profile = "strict",
        trust_store: TrustStore | None = None,
        show_unapproved_descriptions: bool = False,
        approval_timeout: float | None = 300.0,
        registry: SelectionRegistry | None = None,
    ) -> None:
        from ._policy import AllowPolicy  # noqa: PLC0415 - avoids an import cycle

        if not isinstance(policy, AllowPolicy):
            raise SkillUsageError("bad_argument", "policy must be a skillguard.AllowPolicy")
        if embedded is not None and not isinstance(embedded, EmbeddedSkills):
            raise SkillUsageError("bad_argument", "embedded must be a skillguard.EmbeddedSkills")
        if not callable(approver):
            raise SkillUsageError("bad_argument", "approver must be callable")
        if audit is not None and not isinstance(audit, (Auditor, AuditLog)):
            raise SkillUsageError("bad_argument", "audit must be an Auditor or an AuditLog")
        if limits is not None and not isinstance(limits, Limits):
            raise SkillUsageError("bad_argument", "limits must be a skillguard.Limits")
        if not isinstance(profile, str) or profile not in _PROFILES:
            raise SkillUsageError("bad_profile", "profile must be 'strict' or 'compat'")
        if trust_store is None and isinstance(approver, PinningApprover):
            trust_store = approver.store
        if trust_store is not None and not isinstance(trust_store, TrustStore):
            raise SkillUsageError("bad_argument", "trust_store must be a skillguard.TrustStore")
        if not isinstance(show_unapproved_descriptions, bool):
            raise SkillUsageError("bad_argument", "show_unapproved_descriptions must be a bool")
        if registry is not None and not isinstance(registry, SelectionRegistry):
            raise SkillUsageError("bad_argument", "registry must be a SelectionRegistry")
        self.registry = registry
        self.policy = policy
        self.embedded = embedded or EmbeddedSkills({})
        self.approver = approver
        self.auditor = audit if isinstance(audit, Auditor) else Auditor(audit)
        self.limits = limits or DEFAULT_LIMITS
        self.profile: Profile = profile
        self.trust_store = trust_store
        self.show_unapproved_descriptions = show_unapproved_descriptions
        self.approval_timeout = _check_timeout(approval_timeout, "approval_timeout")
        if workspace is None or isinstance(workspace, SkillRoots):
            self.workspace = workspace
        elif isinstance(workspace, (list, tuple)):
            self.workspace = SkillRoots(list(workspace), limits=self.limits, profile=profile)
        else:
            raise SkillUsageError(
                "bad_argument", "workspace must be a SkillRoots or a list of roots"
            )
        self._workspace_meta: dict[str, SkillMeta] = {}
        self._locations: dict[str, tuple[SafeRoot, str]] = {}
        # Folder name -> why the folder of that name was not taken, so that an
        # authorized name whose skill is broken is reported as broken, not as absent.
        self._workspace_failed: dict[str, SkippedEntry] = {}
        self._lock = threading.Lock()
        # Pending approvals, per agent, oldest first; and the bytes each keeps alive.
        self._pending: dict[str, OrderedDict[str, _Issued]] = {}
        self._pending_bytes: Counter[str] = Counter()
        # (agent, name) -> the snapshot last approved for that agent; and, per name, the
        # SKILL.md hashes a human approved (a catalog shows their description).
        self._approved: dict[tuple[str, str], _Served] = {}
        self._approved_digests: dict[tuple[str, str], set[str]] = {}
        self._approved_sha: dict[str, set[str]] = {}
        self._inflight: dict[tuple[int, str, str, str], _Flight] = {}
        # Loads waiting for an approver, per agent: counted in the pending bounds too.
        self._inflight_count: Counter[str] = Counter()
        self._inflight_bytes: Counter[str] = Counter()
        self._catalog_seen: dict[str, str] = {}
        self._bind_tokens: dict[str, object] = {}
        # agent -> (the candidates an index was built for, the index): rebuilt only
        # when what the agent may select changes.
        self._indexes: dict[str, tuple[object, SelectionIndex]] = {}
        if self.workspace is not None:
            self._discover_workspace(self.workspace)
        self._frozen = True

    def __setattr__(self, name: str, value: object) -> None:
        if self._frozen:
            raise SkillUsageError(
                "read_only", f"Loader.{name} cannot be changed after construction"
            )
        object.__setattr__(self, name, value)

    def _discover_workspace(self, workspace: SkillRoots) -> None:
        found = workspace.discover()
        self._workspace_meta = {meta.name: meta for meta in found.skills}
        # Where each skill is, as this discovery found it: a host that discovers its
        # SkillRoots again cannot make the loader read another folder than it shows.
        self._locations = {meta.name: workspace.locate(meta.name) for meta in found.skills}
        for meta in found.skills:
            if self.embedded.get(meta.name) is not None:
                self.auditor.emit(
                    "shadowing_refused",
                    skill=meta.name,
                    source="workspace",
                    path=meta.location,
                    decision="deny",
                    code="embedded_wins",
                    reason="an embedded skill of this name always wins",
                )
        by_root: dict[str, list[SkippedEntry]] = {}
        for skipped in found.skipped:
            if skipped.kind not in ("malformed", "containment"):
                continue  # a conventional root that does not exist is no event
            by_root.setdefault(skipped.root, []).append(skipped)
            folder = skipped.path.rsplit("/", 1)[-1]
            self._workspace_failed.setdefault(folder, skipped)
        # One record per root, however many entries it skipped: a workspace of 10,000
        # symlinks is one line of audit, with the counts and the first few entries.
        for root, entries in by_root.items():
            codes = Counter(entry.code for entry in entries)
            counts = ", ".join(f"{code}: {count}" for code, count in codes.most_common())
            first = ", ".join(entry.path for entry in entries[:_SKIPS_SHOWN])
            self.auditor.emit(
                "workspace_skipped",
                source="workspace",
                path=root,
                decision="deny",
                code=codes.most_common(1)[0][0],
                size=len(entries),
                reason=f"{len(entries)} entries not taken ({counts}); first: {first}",
            )

    # Lifetime ----------------------------------------------------------------------

    def close(self) -> None:
        """Release the workspace roots' descriptors; later workspace reads fail typed."""
        if self.workspace is not None:
            self.workspace.close()

    def __enter__(self) -> Loader:  # noqa: PYI034 - typing.Self needs Python 3.11
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def bind(self, agent: str) -> AgentSkills:
        """An immutable handle for ONE agent (seed 004's Skill tool).

        Raises ``SkillUsageError`` when *agent* is not a str and ``UnknownSkillError``
        (``unknown_agent``) when the policy does not know it.
        """
        if not isinstance(agent, str):
            raise SkillUsageError("bad_argument", "agent must be a str")
        if self.policy.grant(agent) is None:
            raise UnknownSkillError(
                "unknown_agent", f"the policy has no agent {safe_repr(agent)}", agent=agent
            )
        with self._lock:
            token = self._bind_tokens.setdefault(agent, object())
        return AgentSkills(self, agent, token)

    def _valid_token(self, agent: str, token: object) -> bool:
        return self._bind_tokens.get(agent) is token

    # Used by the handles ------------------------------------------------------------

    def _source_of(self, agent: str, name: str) -> Source:
        """Authorize and locate, fail-secure (rules 1 to 3 of the module docstring)."""
        if not self.policy.allowed(agent, name):
            raise _unknown(agent, name)
        if self.embedded.get(name) is not None:
            return "embedded"
        grant = self.policy.grant(agent)
        if grant is not None and grant.workspace == "approve":
            if name in self._workspace_meta:
                return "workspace"
            failed = self._workspace_failed.get(name)
            if failed is not None:  # the skill is there, and broken: say so
                raise _ERROR_BY_KIND[failed.kind](
                    failed.code, failed.reason, name=name, agent=agent
                )
        raise SkillNotFoundError(
            "missing", "the skill is authorized but no source has it", name=name, agent=agent
        )

    def meta(self, source: Source, name: str) -> SkillMeta:
        """The catalog entry of skill *name* in *source*, with no authorization check.

        Raises ``SkillUsageError`` for a source other than ``"embedded"`` or
        ``"workspace"`` or a name that is not a str, and ``SkillNotFoundError``
        (``missing``) when that source has no such skill.
        """
        if not isinstance(source, str) or source not in ("embedded", "workspace"):
            raise SkillUsageError("bad_argument", "source must be 'embedded' or 'workspace'")
        if not isinstance(name, str):
            raise SkillUsageError("bad_argument", "a skill name must be a str")
        found = self._workspace_meta.get(name) if source == "workspace" else None
        skill = self.embedded.get(name) if source == "embedded" else None
        if found is not None:
            return found
        if skill is None:
            raise SkillNotFoundError("missing", f"the {source} source has no such skill")
        return SkillMeta(
            skill.name,
            skill.description,
            self.embedded.origin,
            skill.name,
            skill.sha256,
            skill.size,
            disable_model_invocation=skill.disable_model_invocation,
            namespace=skill.namespace,
        )

    def _reviewed(self) -> Callable[[SkillMeta], bool]:
        """A predicate: did a human approve (here) or pin this workspace ``SKILL.md``?
        The trust store is read once, when the first skill needs it."""
        if self.show_unapproved_descriptions:
            return lambda _: True
        with self._lock:
            approved = {name: frozenset(shas) for name, shas in self._approved_sha.items()}
        pins: dict[tuple[str, str], str] | None = None

        def reviewed(meta: SkillMeta) -> bool:
            nonlocal pins
            if meta.sha256 in approved.get(meta.name, ()):
                return True
            if self.trust_store is None:
                return False
            if pins is None:
                pins = self._pin_shas(self.trust_store)
            return pins.get((meta.name, _folder(meta))) == meta.sha256

        return reviewed

    def _pin_shas(self, store: TrustStore) -> dict[tuple[str, str], str]:
        """The pinned SKILL.md hashes by (skill, source). A store that cannot be read
        shows nothing as pinned (names only), and that is audited: a catalog is built
        for a prompt and must not fail on the operator's file."""
        try:
            return {(pin.skill, pin.source): pin.skill_sha256 for pin in store.pins()}
        except ApprovalError as exc:
            self.auditor.emit(
                "trust_store_unreadable",
                decision="deny",
                code=exc.code,
                reason=exc.reason,
                path=store.path,
            )
            return {}

    def _snapshot(self, meta: SkillMeta) -> _Served:
        assert self.workspace is not None  # only workspace skills have a meta here
        root, location = self._locations[meta.name]
        snapshot = take_snapshot(
            root,
            location,
            name=meta.name,
            folder=_folder(meta),
            limits=self.limits,
            profile=self.profile,
            namespaces=self.workspace.namespaces,
        )
        return _Served(snapshot, root, location)

    def _issue(self, issued: _Issued) -> None:
        """Keep a pending approval, within the per-agent and total bounds (rule 7)."""
        agent = issued.prepared.agent
        evicted: list[_Issued] = []
        with self._lock:
            queue = self._pending.setdefault(agent, OrderedDict())
            queue[issued.request.request_id] = issued
            self._pending_bytes[agent] += issued.cost
            self._make_room(agent, 0, 0, evicted)
        self._audit_evicted(evicted)
        if any(gone is issued for gone in evicted):
            # No room even for this one (the agent's share is held by loads waiting for
            # an approver, or this snapshot alone is over it): say so now, rather than
            # hand out a receipt that can never load.
            raise ApprovalDeniedError(
                "too_many_pending",
                "this agent has too many approvals pending or waiting",
                name=issued.request.skill,
                agent=agent,
            )

    def _over(self, agent: str, count: int, size: int) -> tuple[bool, bool]:
        """Whether *agent*, and the loader, would be over their bounds with *count* more
        requests of *size* more bytes (pending and waiting alike). Called under the lock."""
        limits = self.limits
        mine = len(self._pending.get(agent, ())) + self._inflight_count[agent] + count
        mine_bytes = self._pending_bytes[agent] + self._inflight_bytes[agent] + size
        total = sum(self._pending_bytes.values()) + sum(self._inflight_bytes.values()) + size
        agent_over = (
            mine > limits.max_pending_per_agent or mine_bytes > limits.max_pending_bytes_per_agent
        )
        return agent_over, total > limits.max_pending_bytes

    def _make_room(self, agent: str, count: int, size: int, evicted: list[_Issued]) -> bool:
        """Evict pending requests (this agent's oldest first; past the total, the
        biggest holder's) until *count* more of *size* bytes fit. Under the lock."""
        while True:
            agent_over, total_over = self._over(agent, count, size)
            if agent_over and self._pending.get(agent):
                evicted.append(self._pop_oldest(agent))
            elif total_over and not agent_over and self._pending_bytes:
                evicted.append(self._pop_oldest(self._pending_bytes.most_common(1)[0][0]))
            else:
                return not (agent_over or total_over)

    def _admit_flight(self, flight: _Flight, evicted: list[_Issued]) -> bool:
        """Count a load that will wait for an approver in its agent's bounds, if it fits
        (pending requests are evicted to make room). Under the lock."""
        if not self._make_room(flight.agent, 1, flight.cost, evicted):
            return False
        self._inflight_count[flight.agent] += 1
        self._inflight_bytes[flight.agent] += flight.cost
        return True

    def _release_flight(self, flight: _Flight) -> None:
        """Uncount a decided or abandoned wait (once). Under the lock."""
        if flight.released:
            return
        flight.released = True
        self._inflight_count[flight.agent] -= 1
        self._inflight_bytes[flight.agent] -= flight.cost
        if not self._inflight_count[flight.agent]:
            del self._inflight_count[flight.agent]
            del self._inflight_bytes[flight.agent]

    def _audit_evicted(self, evicted: list[_Issued]) -> None:
        for gone in evicted:
            self.auditor.emit(
                "approval_evicted",
                agent=gone.prepared.agent,
                skill=gone.request.skill,
                source="workspace",
                decision="deny",
                code="evicted",
                reason="too many pending approvals for this agent or in total",
                request_id=gone.request.request_id,
            )

    def _pop_oldest(self, agent: str) -> _Issued:
        queue = self._pending[agent]
        _, gone = queue.popitem(last=False)
        self._pending_bytes[agent] -= gone.cost
        if not queue:
            del self._pending[agent]
            del self._pending_bytes[agent]
        return gone

    def _redeem(self, agent: str, prepared: PreparedLoad) -> _Issued | None:
        """The record of *prepared* if this loader issued it to *agent* and nobody used
        it yet (single use), else ``None``."""
        request = getattr(prepared, "request", None)
        request_id = getattr(request, "request_id", None)
        if not isinstance(request_id, str):
            return None
        with self._lock:
            queue = self._pending.get(agent)
            issued = queue.get(request_id) if queue is not None else None
            if issued is None or issued.prepared is not prepared:
                return None
            del queue[request_id]  # type: ignore[union-attr]
            self._pending_bytes[agent] -= issued.cost
            if not queue:
                del self._pending[agent]
                del self._pending_bytes[agent]
        return issued

    def _remember(self, agent: str, served: _Served) -> None:
        skill = served.snapshot.skill
        with self._lock:
            self._approved[(agent, skill.name)] = served
            self._approved_digests.setdefault((agent, skill.name), set()).add(
                served.snapshot.digest
            )
            self._approved_sha.setdefault(skill.name, set()).add(skill.sha256)

    def _was_approved(self, agent: str, served: _Served) -> bool:
        key = (agent, served.snapshot.skill.name)
        with self._lock:
            return served.snapshot.digest in self._approved_digests.get(key, ())

    def _approved_snapshot(self, agent: str, name: str) -> _Served | None:
        with self._lock:
            return self._approved.get((agent, name))

    def _catalog_changed(self, agent: str, digest: str) -> bool:
        with self._lock:
            if self._catalog_seen.get(agent) == digest:
                return False
            self._catalog_seen[agent] = digest
            return True


def _folder(meta: SkillMeta) -> str:
    return source_folder(meta.root, meta.location)


def _valid_decision(value: object) -> Decision | None:
    return value if isinstance(value, Decision) else None


def _check_token(instance: AgentSkills, attribute: object, value: object) -> None:
    del attribute
    loader = instance._loader  # noqa: SLF001 - the handle's own field
    if (
        not isinstance(loader, Loader)
        or not isinstance(instance.agent, str)
        or not loader._valid_token(instance.agent, value)  # noqa: SLF001
    ):
        raise SkillUsageError("bad_argument", "an agent handle comes from Loader.bind(agent) only")


@attrs.frozen
class AgentSkills:
    """What one agent may see and load. Obtain it with ``Loader.bind(agent)``; a handle
    cannot be rebuilt for another agent (``attrs.evolve`` is refused)."""

    _loader: Loader = attrs.field(repr=False)
    agent: str
    _token: object = attrs.field(repr=False, eq=False, validator=_check_token)

    # Tier 1 ------------------------------------------------------------------------

    def allowed(self, name: str) -> bool:
        """The pure membership predicate: no file-system access."""
        return self._loader.policy.allowed(self.agent, name)

    def describe(self, name: str) -> SkillMeta:
        """Metadata only, authorized against the same allow-set as ``load``. A workspace
        skill nobody approved or pinned has an empty description and location."""
        try:
            source = self._loader._source_of(self.agent, name)  # noqa: SLF001
        except SkillError as exc:
            self._deny("describe_denied", name, exc)
            raise
        meta = self._loader.meta(source, name)
        return self._shown(meta, source, self._loader._reviewed())  # noqa: SLF001

    def catalog(self) -> tuple[SkillMeta, ...]:
        """Every skill this agent may load, a source holds, and a model may invoke, by
        name (rules 5 and 6 of the module docstring)."""
        return tuple(meta for meta, _ in self._catalog())

    def _shown(
        self, meta: SkillMeta, source: Source, reviewed: Callable[[SkillMeta], bool]
    ) -> SkillMeta:
        if source == "embedded" or reviewed(meta):
            return meta
        # The namespace is the author's text too: no one reviewed it yet.
        return attrs.evolve(meta, description="", location="", root="", warnings=(), namespace=None)

    def _catalog(self) -> list[tuple[SkillMeta, Source]]:
        grant = self._loader.policy.grant(self.agent)
        entries = []
        reviewed = self._loader._reviewed()  # noqa: SLF001
        for name in sorted(grant.skills if grant is not None else ()):
            try:
                source = self._loader._source_of(self.agent, name)  # noqa: SLF001
            except SkillError:
                continue
            meta = self._loader.meta(source, name)
            if meta.disable_model_invocation:
                continue
            entries.append((self._shown(meta, source, reviewed), source))
        # Recorded when what the agent sees changes, not at every prompt rebuild.
        digest = hashlib.sha256(repr(entries).encode("utf-8", "backslashreplace")).hexdigest()
        if self._loader._catalog_changed(self.agent, digest):  # noqa: SLF001
            self._loader.auditor.emit(
                "catalog_served",
                agent=self.agent,
                decision="allow",
                size=len(entries),
                digest=digest,
            )
        return entries

    def catalog_xml(self) -> str:
        return catalog_xml([(m.name, m.description, _location(m), s) for m, s in self._catalog()])

    def catalog_json(self) -> str:
        return catalog_json([(m.name, m.description, _location(m), s) for m, s in self._catalog()])

    def tool_descriptor(self, name: str) -> ToolDescriptor:
        """Tier 1: skill *name* as a registry tool before activation (``body`` is
        ``""``), authorized as ``describe``. A workspace skill shows what was approved
        for this agent (its snapshot's description, tools, folder and slots); until
        then, its name only. Raises what ``describe`` raises."""
        meta = self.describe(name)
        loader = self._loader
        skill = loader.embedded.get(name)
        if skill is not None:
            origin = f"{loader.embedded.origin}/{name}"
            return _descriptor("embedded", skill, origin, loader.embedded.slots(name), "")
        approved = self._approved_for_selection(name)
        if approved is not None and approved._served is not None:  # noqa: SLF001
            snapshot = approved._served.snapshot  # noqa: SLF001
            return _descriptor("workspace", snapshot.skill, snapshot.folder, snapshot.slots, "")
        return ToolDescriptor(f"workspace/{meta.name}", meta.description, (), ())

    # The ready skill tool (seed 004) ---------------------------------------------

    def tool_info(self) -> ToolInfo:
        """The ``skill`` tool a model is given: its description embeds this agent's
        catalog, escaped; ``as_openai()``, ``as_anthropic()`` and ``as_mcp()`` give
        the hosts' exact shapes."""
        return ToolInfo.for_catalog(self.catalog_xml())

    def invoke(self, args_json: str | bytes) -> str:
        """Run one model call of the tool: the activation text of the skill named in
        *args_json*. Raises ``MalformedSkillError`` (``bad_arguments``),
        ``SkillContainmentError`` (``bad_name``, before authorization), and what
        ``load`` raises."""
        return self.load(self._tool_name(args_json)).activation()

    async def ainvoke(self, args_json: str | bytes, *, timeout: float | None = None) -> str:
        """``invoke`` for asyncio swarms (``aload``)."""
        name = self._tool_name(args_json)
        return (await self.aload(name, timeout=timeout)).activation()

    def prepare_call(self, execution_id: str | uuid.UUID, args_json: str | bytes) -> PreparedLoad:
        """``prepare`` for one model call of the tool, identified by the host's
        *execution_id*, which travels in the ``ApprovalRequest`` and in the call's
        audit records. Pass the result to ``load`` or ``aload``. Raises what
        ``invoke`` raises, and ``SkillUsageError`` for a bad *execution_id*."""
        execution = tool_execution_id(execution_id)
        return self._prepare(self._tool_name(args_json), by_user=False, execution=execution)

    def _tool_name(self, args_json: object) -> str:
        try:
            return requested_name(args_json)
        except (MalformedSkillError, SkillContainmentError) as exc:
            self._deny("load_denied", None, exc)
            raise

    # Selection (seed 003) -----------------------------------------------------------

    def select(
        self,
        task: str,
        *,
        context: str | Sequence[str] | None = None,
        max_skills: int = 3,
        per_skill_bytes: int = 8000,
        total_bytes: int = 32000,
    ) -> Selection:
        """The skills this agent needs for *task*, loaded and rendered, within the byte
        caps (``_select``'s rules). Only skills the agent may load and a model may invoke
        are candidates; a workspace skill is served only from a snapshot approved for
        this agent or pinned in the trust store (the approver is asked for a pinned one),
        and otherwise skipped with a reason; use ``aselect`` to await the approver.
        Records ``skills_selected`` with the task's sha256, never its text. Raises
        ``SkillUsageError`` for a bad argument and ``AuditError``."""
        args = _selection_args(task, context, max_skills, per_skill_bytes, total_bytes)
        ranked, warnings = self._ranked(args[0], args[1])
        return self._compose(args, ranked, warnings, None)

    async def aselect(
        self,
        task: str,
        *,
        context: str | Sequence[str] | None = None,
        max_skills: int = 3,
        per_skill_bytes: int = 8000,
        total_bytes: int = 32000,
        timeout: float | None = None,
    ) -> Selection:
        """``select`` for asyncio swarms: a matching workspace skill not approved yet is
        put to the approver (``aload``) and selected only if approved."""
        args = _selection_args(task, context, max_skills, per_skill_bytes, total_bytes)
        ranked, warnings = self._ranked(args[0], args[1])
        # Asked in rank order until max_skills are served: a human is not asked about a
        # skill that would not be used.
        loaded: dict[str, LoadedSkill | SkillError] = {}
        served = 0
        for match in ranked:
            if served == args[2]:
                break
            result: LoadedSkill | SkillError | None = self._approved_for_selection(match.name)
            if result is None:
                try:
                    result = await self._aload(match.name, timeout=timeout, by_user=False)
                except SkillError as exc:
                    result = exc
            loaded[match.name] = result
            served += isinstance(result, LoadedSkill)
        return self._compose(args, ranked, warnings, loaded)

    def _ranked(self, task: str, context: str) -> tuple[list[Match], tuple[str, ...]]:
        """The candidates that match, best first; rule 1 of the module docstring: only
        what the agent may load and a model may invoke."""
        loader = self._loader
        candidates = []
        for meta, source in self._candidates():
            candidates.append((meta.name, meta.description, source, meta.sha256))
        key = tuple(candidates)
        registry = loader.registry.keywords if loader.registry is not None else {}
        with loader._lock:  # noqa: SLF001
            cached = loader._indexes.get(self.agent)  # noqa: SLF001
        if cached is not None and cached[0] == key:
            index = cached[1]
        else:
            index = SelectionIndex(((name, text) for name, text, _, _ in candidates), registry)
            with loader._lock:  # noqa: SLF001
                loader._indexes[self.agent] = (key, index)  # noqa: SLF001
        names = {name for name, _, _, _ in candidates}
        warnings = tuple(
            f"the registry names {name!r}, which this agent cannot select: ignored"
            for name in sorted(set(registry) - names)
        )
        return index.rank(task, context), warnings

    def _candidates(self) -> list[tuple[SkillMeta, Source]]:
        """Every skill the agent may load and a model may invoke, with its full
        metadata: an unapproved workspace skill's description ranks it, and never
        reaches the prompt (only an approved snapshot's body does)."""
        loader = self._loader
        grant = loader.policy.grant(self.agent)
        out = []
        for name in sorted(grant.skills if grant is not None else ()):
            try:
                source = loader._source_of(self.agent, name)  # noqa: SLF001
            except SkillError:
                continue
            meta = loader.meta(source, name)
            if not meta.disable_model_invocation:
                out.append((meta, source))
        return out

    def _approved_for_selection(self, name: str) -> LoadedSkill | None:
        """The snapshot of workspace skill *name* approved for this agent, while the
        discovered SKILL.md is still the approved one."""
        loader = self._loader
        if loader.embedded.get(name) is not None or name not in loader._workspace_meta:  # noqa: SLF001
            return None
        served = loader._approved_snapshot(self.agent, name)  # noqa: SLF001
        if served is None or served.snapshot.skill.sha256 != loader.meta("workspace", name).sha256:
            return None
        return LoadedSkill(self.agent, served.snapshot.skill, "workspace", loader, served)

    def _served_for_selection(self, name: str) -> LoadedSkill | SkillError:
        """A skill's body for a synchronous selection, through the same gates as
        ``load``: embedded skills load; a workspace skill only from a snapshot approved
        for this agent, or through the approver when the trust store pins it."""
        loader = self._loader
        approved = self._approved_for_selection(name)
        if approved is not None:
            return approved
        try:
            source = loader._source_of(self.agent, name)  # noqa: SLF001
            if source == "workspace":
                meta = loader.meta(source, name)
                store = loader.trust_store
                pin = store.pinned(name, _folder(meta)) if store is not None else None
                if pin is None or pin.skill_sha256 != meta.sha256:
                    return ApprovalRequiredError(
                        "not_approved",
                        "a workspace skill nobody approved or pinned: use aselect",
                        name=name,
                        agent=self.agent,
                    )
            return self.load(name)
        except SkillError as exc:
            return exc

    def _compose(
        self,
        args: tuple[str, str, int, int, int],
        ranked: list[Match],
        warnings: tuple[str, ...],
        loaded: dict[str, LoadedSkill | SkillError] | None,
    ) -> Selection:
        """Rules 5 and 6 of ``_select``: in rank order, each served skill rendered
        within the caps, or skipped with a reason; then the audit record (no record,
        no selection). *loaded* holds what ``aselect`` was served; ``None`` serves
        synchronously."""
        skipped: list[SkippedSkill] = []
        task, _, max_skills, per_skill_bytes, total_bytes = args
        items: list[SelectedSkill] = []
        blocks: list[str] = []
        used = 0
        for match in ranked:
            if len(items) == max_skills:
                skipped.append(
                    SkippedSkill(match.name, "max_skills", f"{max_skills} skills already selected")
                )
                continue
            if loaded is not None and match.name not in loaded:
                skipped.append(
                    SkippedSkill(match.name, "max_skills", "ranked too low to be asked for")
                )
                continue
            served = (
                loaded[match.name] if loaded is not None else self._served_for_selection(match.name)
            )
            if isinstance(served, SkillError):
                skipped.append(SkippedSkill(match.name, served.code, served.reason))
                continue
            # The skill's own block, cut at its own cap if need be; then it fits what is
            # left of the total or is skipped: never shrunk to make room (rule 6).
            rendered = render_bounded(served.name, served.body, served.resources(), per_skill_bytes)
            if rendered is None:
                skipped.append(
                    SkippedSkill(
                        match.name, "over_per_skill_bytes", "per_skill_bytes cannot hold the block"
                    )
                )
                continue
            block, cut = rendered
            size = len(block.encode("utf-8"))
            if size > total_bytes - used:
                skipped.append(
                    SkippedSkill(
                        match.name, "over_total_bytes", "the skill no longer fits total_bytes"
                    )
                )
                continue
            used += size
            blocks.append(block)
            items.append(
                SelectedSkill(
                    match.name,
                    served.source,
                    match.score,
                    match.matched,
                    size,
                    cut,
                    "registry" if match.tier else "description",
                )
            )
        selection = Selection(
            self.agent, task_digest(task), tuple(items), tuple(skipped), "".join(blocks), warnings
        )
        self._loader.auditor.emit(
            "skills_selected",
            agent=self.agent,
            decision="allow" if items else "none",
            skill=",".join(selection.names) or None,
            size=selection.total_bytes,
            sha256=selection.task_sha256,
            reason="; ".join(
                f"{item.name}: {item.bytes} bytes{', truncated' if item.truncated else ''}"
                for item in items
            )
            or "nothing matched",
        )
        return selection

    # Tier 2 ------------------------------------------------------------------------

    def prepare(self, name: str, *, by_user: bool = False) -> PreparedLoad:
        """Read the skill once; for a workspace skill, the request a human must approve.

        *by_user* says the host's user asked for the skill by name (``user_invoke``):
        only then does a ``disable-model-invocation`` skill load. Raises
        ``UnknownSkillError``, the parser and containment errors, and ``AuditError``.
        """
        return self._prepare(name, by_user=by_user, execution=None)

    def _prepare(self, name: str, *, by_user: bool, execution: str | None) -> PreparedLoad:
        loader = self._loader
        try:
            source = loader._source_of(self.agent, name)  # noqa: SLF001
            if source == "embedded":
                skill = loader.embedded.get(name)
                assert skill is not None
                self._check_invocation(skill, by_user=by_user)
                return PreparedLoad(
                    self.agent, skill, source, loader.embedded.origin, name, None, execution
                )
            meta = loader.meta(source, name)
            served = loader._snapshot(meta)  # noqa: SLF001
            self._check_invocation(served.snapshot.skill, by_user=by_user)
        except SkillError as exc:
            self._deny("load_denied", name, exc)
            raise
        snapshot = served.snapshot
        request = make_request(
            self.agent, snapshot, meta.root, meta.location, execution_id=execution or ""
        )
        loader.auditor.emit(
            "approval_requested",
            agent=self.agent,
            skill=name,
            source="workspace",
            path=meta.location,
            size=snapshot.manifest.total_bytes,
            sha256=snapshot.skill.sha256,
            digest=snapshot.digest,
            request_id=request.request_id,
            execution_id=execution,
        )
        prepared = PreparedLoad(
            self.agent, snapshot.skill, source, meta.root, meta.location, request, execution
        )
        loader._issue(  # noqa: SLF001
            _Issued(
                prepared, request, served, by_user, snapshot.memory_cost() + request_cost(request)
            )
        )
        return prepared

    def _check_invocation(self, skill: Skill, *, by_user: bool) -> None:
        if by_user and not skill.user_invocable:
            raise UnknownSkillError(
                "not_user_invocable",
                "the skill says a user may not invoke it (user-invocable: false)",
                name=skill.name,
                agent=self.agent,
            )
        if not by_user and skill.disable_model_invocation:
            raise UnknownSkillError(
                "user_invocation_only",
                "the skill loads only when a user asks for it (disable-model-invocation)",
                name=skill.name,
                agent=self.agent,
            )

    def load(self, target: str | PreparedLoad) -> LoadedSkill:
        """Serve a skill. A workspace skill goes to the approver with the snapshot's
        request, and what is served is that snapshot. Raises ``UnknownSkillError``,
        ``ApprovalDeniedError``, ``ApprovalRequiredError`` (an async approver: use
        ``aload``), ``AuditError``, or the parser and containment errors."""
        issued = self._claim(target, by_user=False)
        if isinstance(issued, LoadedSkill):
            return issued
        answer = self._ask(issued.request)
        if inspect.isawaitable(answer):
            close = getattr(answer, "close", None)
            if close is not None:
                close()
            error = ApprovalRequiredError(
                "async_approver", "the approver is async: use aload()", name=issued.request.skill
            )
            self._deny("load_denied", issued.request.skill, error)
            raise error
        return self._decide(issued, answer)

    async def aload(
        self, target: str | PreparedLoad, *, timeout: float | None = None
    ) -> LoadedSkill:
        """``load`` for asyncio swarms: awaits an async approver, at most *timeout*
        seconds (default: the loader's ``approval_timeout``). Concurrent calls for the
        same agent and snapshot share one approver call. Raises what ``load`` raises,
        ``ApprovalDeniedError`` (``timed_out``); a cancelled call is audited and
        re-raises ``CancelledError``."""
        return await self._aload(target, timeout=timeout, by_user=False)

    def user_invoke(self, target: str | PreparedLoad) -> LoadedSkill:
        """``load`` for a skill the host's USER asked for by name (a slash command):
        the only way a ``disable-model-invocation: true`` skill loads. A skill with
        ``user-invocable: false`` is refused (``not_user_invocable``)."""
        issued = self._claim(target, by_user=True)
        if isinstance(issued, LoadedSkill):
            return issued
        answer = self._ask(issued.request)
        if inspect.isawaitable(answer):
            close = getattr(answer, "close", None)
            if close is not None:
                close()
            error = ApprovalRequiredError(
                "async_approver",
                "the approver is async: use auser_invoke()",
                name=issued.request.skill,
            )
            self._deny("load_denied", issued.request.skill, error)
            raise error
        return self._decide(issued, answer)

    async def auser_invoke(
        self, target: str | PreparedLoad, *, timeout: float | None = None
    ) -> LoadedSkill:
        """``user_invoke`` for asyncio hosts."""
        return await self._aload(target, timeout=timeout, by_user=True)

    async def _aload(
        self, target: str | PreparedLoad, *, timeout: float | None, by_user: bool
    ) -> LoadedSkill:
        limit = _check_timeout(timeout, "timeout") if timeout is not None else None
        if limit is None:
            limit = self._loader.approval_timeout
        issued = self._claim(target, by_user=by_user)
        if isinstance(issued, LoadedSkill):
            return issued
        answer, shared_with = await self._shared_answer(issued, limit)
        return self._decide(issued, answer, shared_with=shared_with)

    async def _shared_answer(
        self, issued: _Issued, limit: float | None
    ) -> tuple[object, str | None]:
        """The approver's answer for *issued*, asking once for every concurrent call of
        the same agent and snapshot in this event loop (rule 7: one human prompt). A
        call that joins is served the first call's snapshot, so concurrent calls keep
        one snapshot alive, counted in the agent's pending bounds until decided."""
        loader = self._loader
        snapshot = issued.served.snapshot
        key = (id(asyncio.get_running_loop()), self.agent, snapshot.skill.name, snapshot.digest)
        evicted: list[_Issued] = []
        with loader._lock:  # noqa: SLF001
            found = loader._inflight.get(key)  # noqa: SLF001
            starter = found is None
            if found is None:
                flight = _Flight(issued.request.request_id, self.agent, issued.served, issued.cost)
                admitted = loader._admit_flight(flight, evicted)  # noqa: SLF001
                if admitted:
                    loader._inflight[key] = flight  # noqa: SLF001
                    flight.waiters += 1
            else:
                flight, admitted = found, True
                flight.waiters += 1
                issued.served = flight.served  # this call's own snapshot can go
        loader._audit_evicted(evicted)  # noqa: SLF001
        if not admitted:
            error = ApprovalDeniedError(
                "too_many_pending",
                "this agent has too many loads waiting for an approver",
                name=snapshot.skill.name,
                agent=self.agent,
            )
            self._deny("load_denied", snapshot.skill.name, error)
            raise error
        if starter:
            # The approver is called outside the lock, a sync one in a worker thread:
            # a human at a console blocks neither the loader nor this event loop.
            flight.task = asyncio.ensure_future(self._call_approver(issued.request, flight))
            flight.task.add_done_callback(lambda _: self._land(key, flight))
        task = flight.task
        assert task is not None  # set by the starter before this loop ran anything
        try:
            answer = await asyncio.wait_for(asyncio.shield(task), limit)
        except asyncio.TimeoutError:
            self._outcome(issued, "approval_timed_out", "timed_out", "no answer in time")
            raise ApprovalDeniedError(
                "timed_out",
                f"the approver did not answer within {limit} seconds",
                name=snapshot.skill.name,
                agent=self.agent,
            ) from None
        except asyncio.CancelledError:
            self._outcome(issued, "approval_cancelled", "cancelled", "the load was cancelled")
            raise
        except Exception:  # noqa: BLE001 - an approver that fails has not approved
            answer = None
        finally:
            with loader._lock:  # noqa: SLF001
                flight.waiters -= 1
                orphaned = flight.waiters == 0 and not task.done()
                if orphaned:
                    flight.cancelling = True
                    if loader._inflight.get(key) is flight:  # noqa: SLF001
                        del loader._inflight[key]  # noqa: SLF001
                    loader._release_flight(flight)  # noqa: SLF001
            if orphaned:
                task.cancel()  # nobody waits for this prompt any more
        return answer, None if starter else flight.request_id

    async def _call_approver(self, request: ApprovalRequest, flight: _Flight) -> object:
        """The approver's answer: a coroutine function is called here, anything else in
        the loop's default executor; an awaitable answer is awaited. The approver's own
        cancellation (its UI gave up) is no answer, not this caller's cancellation."""
        approver = self._loader.approver
        try:
            if inspect.iscoroutinefunction(approver) or inspect.iscoroutinefunction(
                getattr(approver, "__call__", None)  # noqa: B004 - an instance's async __call__
            ):
                answer = self._ask(request)
            else:
                answer = await asyncio.get_running_loop().run_in_executor(None, self._ask, request)
            if inspect.isawaitable(answer):
                answer = await answer
        except asyncio.CancelledError:
            if flight.cancelling:
                raise
            return None
        return answer

    def _land(self, key: tuple[int, str, str, str], flight: _Flight) -> None:
        """A decided approval is not reused by later calls: they ask again."""
        loader = self._loader
        with loader._lock:  # noqa: SLF001
            if loader._inflight.get(key) is flight:  # noqa: SLF001
                del loader._inflight[key]  # noqa: SLF001
            loader._release_flight(flight)  # noqa: SLF001

    def _outcome(self, issued: _Issued, event: str, code: str, reason: str) -> None:
        self._record(event, issued.request, decision="deny", code=code, reason=reason)

    def _record(self, event: str, request: ApprovalRequest, **fields: object) -> None:
        """An audit event about one approval request, with the request's own facts."""
        self._loader.auditor.emit(
            event,
            agent=self.agent,
            skill=request.skill,
            source="workspace",
            sha256=request.sha256,
            digest=request.digest,
            request_id=request.request_id,
            execution_id=request.execution_id or None,
            **fields,
        )

    def effective_tools(self, target: str | LoadedSkill) -> frozenset[str]:
        """The agent's tool grant, narrowed by the skill's ``allowed-tools`` as permission
        rules (never widened), from the approved snapshot. A workspace skill named by a
        string must have been approved for this agent first (``ApprovalRequiredError``,
        ``not_approved``); a ``LoadedSkill`` of another agent or loader is refused."""
        grant = self._loader.policy.grant(self.agent)
        granted = grant.tools if grant is not None else frozenset()
        skill: Skill
        if isinstance(target, LoadedSkill):
            # Re-authorized here, whatever the object says: a LoadedSkill re-pointed at
            # this agent (attrs.evolve) is refused unless this agent may have that
            # skill, and, from the workspace, had that very snapshot approved.
            served = target._served  # noqa: SLF001
            name = served.snapshot.skill.name if served is not None else target.name
            if target._loader is not self._loader or not self.allowed(name):  # noqa: SLF001
                raise _unknown(self.agent, name)
            if served is not None:
                if not self._loader._was_approved(self.agent, served):  # noqa: SLF001
                    raise _unknown(self.agent, name)
                skill = served.snapshot.skill
            else:
                embedded = self._loader.embedded.get(name)
                if embedded is None:
                    raise _unknown(self.agent, name)
                skill = embedded
        elif isinstance(target, str):
            source = self._loader._source_of(self.agent, target)  # noqa: SLF001
            if source == "embedded":
                embedded = self._loader.embedded.get(target)
                assert embedded is not None
                skill = embedded
            else:
                approved = self._loader._approved_snapshot(self.agent, target)  # noqa: SLF001
                if approved is None:
                    raise ApprovalRequiredError(
                        "not_approved",
                        "no approved snapshot of this workspace skill: load it first",
                        name=target,
                        agent=self.agent,
                    )
                skill = approved.snapshot.skill
        else:
            raise SkillUsageError("bad_argument", "effective_tools takes a name or a LoadedSkill")
        return narrow(granted, skill.allowed_tools)

    def audit_summary(self, args: str | Mapping[str, object]) -> str:
        return audit_summary(args)

    # Internals ---------------------------------------------------------------------

    def _claim(self, target: str | PreparedLoad, *, by_user: bool) -> _Issued | LoadedSkill:
        """Re-authorize now and take the recorded pending approval (rule 4), or serve an
        embedded skill at once."""
        if isinstance(target, str):
            # Just prepared (and authorized) here: only its single use is left to claim.
            prepared = self.prepare(target, by_user=by_user)
        elif isinstance(target, PreparedLoad):
            prepared = target
        else:
            raise SkillUsageError("bad_argument", "load takes a name or a PreparedLoad")
        skill_field = getattr(prepared, "skill", None)
        if not isinstance(skill_field, Skill):
            raise SkillUsageError(
                "bad_argument", "a PreparedLoad must hold the Skill it was made for"
            )
        name = skill_field.name
        error: SkillError
        if prepared.agent != self.agent:
            error = _unknown(self.agent, name)
            self._deny("load_denied", name, error, reason="a prepared load of another agent")
            raise error
        try:
            source = self._loader._source_of(self.agent, name)  # noqa: SLF001
        except SkillError as exc:
            self._deny("load_denied", name, exc)
            raise
        if source == "embedded":  # served from the cache, whatever the object holds
            skill = self._loader.embedded.get(name)
            assert skill is not None
            self._check_invocation(skill, by_user=by_user)
            return self._grant_embedded(skill, getattr(prepared, "execution_id", None))
        issued = self._loader._redeem(self.agent, prepared)  # noqa: SLF001
        if issued is None or issued.request.skill != name or issued.by_user != by_user:
            error = ApprovalDeniedError(
                "not_issued",
                "this prepared load was not issued by this loader for this call, or was "
                "already used",
                name=name,
                agent=self.agent,
            )
            self._deny("load_denied", name, error)
            raise error
        return issued

    def _ask(self, request: ApprovalRequest) -> Any:  # noqa: ANN401 - a Decision or an awaitable
        try:
            return self._loader.approver(request)
        except Exception:  # noqa: BLE001 - an approver that fails has not approved
            return None

    def _decide(
        self, issued: _Issued, answer: object, *, shared_with: str | None = None
    ) -> LoadedSkill:
        decision = _valid_decision(answer)
        request = issued.request
        note = (
            f"one answer for concurrent requests, asked as {shared_with}" if shared_with else None
        )
        if decision is None or decision.approved is not True:
            by = decision.by if decision is not None else "no valid answer"
            self._record(
                "approval_denied", request, decision="deny", code="denied", approver=by, reason=note
            )
            raise ApprovalDeniedError(
                "denied", "the approver did not approve", name=request.skill, agent=self.agent
            )
        self._record(
            "approval_granted",
            request,
            decision="allow",
            approver=decision.by,
            scope=decision.scope,
            reason=note,
        )
        served = issued.served
        skill = served.snapshot.skill
        # Written before the skill is handed over: no record, no load (AuditError).
        self._loader.auditor.emit(
            "load_granted",
            agent=self.agent,
            skill=skill.name,
            source="workspace",
            decision="allow",
            path=request.path,
            size=served.snapshot.manifest.total_bytes,
            sha256=skill.sha256,
            digest=served.snapshot.digest,
            approver=decision.by,
            request_id=request.request_id,
            execution_id=request.execution_id or None,
        )
        self._loader._remember(self.agent, served)  # noqa: SLF001
        return LoadedSkill(self.agent, skill, "workspace", self._loader, served)

    def _grant_embedded(self, skill: Skill, execution: object = None) -> LoadedSkill:
        if skill.name in self._loader._workspace_meta:  # noqa: SLF001
            self._loader.auditor.emit(
                "shadowing_refused",
                agent=self.agent,
                skill=skill.name,
                source="workspace",
                decision="deny",
                code="embedded_wins",
                reason="the embedded skill of this name is served instead",
            )
        self._loader.auditor.emit(
            "load_granted",
            agent=self.agent,
            skill=skill.name,
            source="embedded",
            decision="allow",
            path=skill.name,
            size=skill.size,
            sha256=skill.sha256,
            approver="embedded",
            execution_id=execution if isinstance(execution, str) else None,
        )
        return LoadedSkill(self.agent, skill, "embedded", self._loader)

    def _deny(
        self, event: str, name: object, error: SkillError, *, reason: str | None = None
    ) -> None:
        if error.kind == "containment":
            event = "containment_violation"
        elif error.kind == "malformed":
            event = "malformed_skill"
        self._loader.auditor.emit(
            event,
            agent=self.agent,
            skill=name if isinstance(name, str) else None,
            decision="deny",
            code=error.code,
            reason=reason or error.reason,
        )


def _selection_args(
    task: object, context: object, max_skills: object, per_skill: object, total: object
) -> tuple[str, str, int, int, int]:
    if not isinstance(task, str):
        raise SkillUsageError("bad_argument", "task must be a str")
    if context is None:
        text = ""
    elif isinstance(context, str):
        text = context
    elif isinstance(context, (list, tuple)) and all(isinstance(item, str) for item in context):
        text = "\n".join(context)
    else:
        raise SkillUsageError("bad_argument", "context must be a str or a list of str")
    for value, what in (
        (max_skills, "max_skills"),
        (per_skill, "per_skill_bytes"),
        (total, "total_bytes"),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise SkillUsageError("bad_argument", f"{what} must be a positive int")
    return task, text, max_skills, per_skill, total  # type: ignore[return-value]


def _location(meta: SkillMeta) -> str:
    if not meta.root:
        return ""  # not approved: no location reaches a prompt
    return f"{meta.root}/{meta.location}/SKILL.md" if meta.location else f"{meta.root}/SKILL.md"
