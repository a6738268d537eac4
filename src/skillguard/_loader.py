"""The Loader: one agent, one closed allow-set, approved snapshots, every decision audited.

Rules (seed 004; threat-model.md T23-T28). For ``handle = loader.bind(agent)``:

1. Authorize first. A name outside the agent's set, or an unknown agent, raises
   ``UnknownSkillError`` with the same message whether or not the name exists for
   anyone else; ``describe`` and ``catalog`` use the same predicate, so a catalog lists
   only what the agent may load.
2. Embedded (trusted) skills always win. A workspace skill of the same name is never
   served instead; the shadowing is audited.
3. A workspace (untrusted) skill is served only to an agent whose workspace mode is
   ``approve``, and only after an approver approved the exact snapshot: ``prepare``
   reads and parses the bytes once, the ``ApprovalRequest`` carries their sha256, and
   ``load`` serves that snapshot, never a re-read.
4. Every decision is audited; if the audit record cannot be written, the load that
   needed it is denied (``AuditError``).

A ``Loader`` is safe to share across threads: its state is built at construction and
read-only afterwards; handles are immutable.
"""

from __future__ import annotations

import importlib.resources
import inspect
import threading
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, Literal

import attrs

from ._approval import (
    ApprovalDeniedError,
    ApprovalRequest,
    ApprovalRequiredError,
    Approver,
    AsyncApprover,
    Decision,
    deny_all,
    make_request,
)
from ._audit import AuditLog, Auditor, audit_summary
from ._discover import RootPath, SkillMeta, SkillRoots
from ._errors import (
    MalformedSkillError,
    SkillContainmentError,
    SkillError,
    SkillInputError,
    SkillNotFoundError,
    SkillUsageError,
    safe_repr,
)
from ._limits import DEFAULT_LIMITS, Limits
from ._parse import parse_skill
from ._render import activation_text, catalog_json, catalog_xml

if TYPE_CHECKING:
    import os
    from collections.abc import Mapping, Sequence
    from importlib.abc import Traversable

    from ._model import Profile, Skill
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
MAX_PENDING_APPROVALS = 4096  # prepared workspace loads kept until they are loaded
_SLOTS = ("scripts", "references", "assets")


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
    ) -> None:
        self._skills = dict(skills)
        self._resources = {name: dict(files) for name, files in (resources or {}).items()}
        self.origin = origin

    @classmethod
    def from_directory(
        cls,
        path: str | os.PathLike[str],
        *,
        limits: Limits | None = None,
        profile: Profile = "strict",
    ) -> EmbeddedSkills:
        limits = limits or DEFAULT_LIMITS
        with SkillRoots([path], limits=limits, profile=profile) as roots:
            found = roots.discover()
            for skipped in found.skipped:
                raise _embedded_error(skipped.kind, skipped.code, skipped.reason)
            skills = {meta.name: roots.load(meta.name) for meta in found.skills}
            resources = {
                name: {
                    item.path: roots.read_resource(name, item.path)
                    for item in roots.resources(name).files
                }
                for name in skills
            }
        return cls(skills, resources, origin=str(path))

    @classmethod
    def from_package(
        cls, package: str, folder: str = "skills", *, profile: Profile = "strict"
    ) -> EmbeddedSkills:
        try:
            base = importlib.resources.files(package).joinpath(folder)
            entries = sorted(base.iterdir(), key=lambda item: item.name)
        except (ImportError, OSError, TypeError) as exc:
            raise SkillNotFoundError(
                "missing", "the package or its skills folder cannot be found"
            ) from exc
        skills: dict[str, Skill] = {}
        resources: dict[str, dict[str, bytes]] = {}
        for entry in entries:
            skill_file = entry.joinpath("SKILL.md")
            if not entry.is_dir() or not skill_file.is_file():
                continue
            skill = parse_skill(skill_file.read_bytes(), expected_name=entry.name, profile=profile)
            skills[skill.name] = skill
            resources[skill.name] = dict(_package_files(entry, ""))
        return cls(skills, resources, origin=f"{package}:{folder}")

    def names(self) -> frozenset[str]:
        return frozenset(self._skills)

    def get(self, name: str) -> Skill | None:
        return self._skills.get(name)

    def resources(self, name: str) -> tuple[str, ...]:
        return tuple(sorted(self._resources.get(name, {})))

    def read_resource(self, name: str, path: str) -> bytes:
        data = self._resources.get(name, {}).get(path)
        if data is None:
            raise SkillNotFoundError("missing", "no such resource in the embedded skill", name=name)
        return data


def _embedded_error(kind: str, code: str, reason: str) -> SkillError:
    """The typed error of an embedded entry that could not be taken: the host's bug."""
    by_kind: dict[str, type[SkillError]] = {
        "malformed": MalformedSkillError,
        "containment": SkillContainmentError,
        "not_found": SkillNotFoundError,
    }
    return by_kind.get(kind, SkillInputError)(code, f"embedded skill: {reason}")


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
    """A read-only binding slot of a tool descriptor (seed 002)."""

    name: str
    resource_type: str
    access: Literal["read_only"] = "read_only"


@attrs.frozen
class ToolDescriptor:
    """A skill as a tool of a registry (seed 002): read-only, namespaced."""

    name: str
    description: str
    allowed_tools: tuple[str, ...]
    resource_slots: tuple[ResourceSlot, ...]
    source: Literal["agent_skill"] = "agent_skill"
    read_only: bool = True
    writes: bool = False


@attrs.frozen
class PreparedLoad:
    """A skill read once for one agent: the snapshot an approval is bound to."""

    agent: str
    skill: Skill
    source: Source
    origin: str
    path: str
    request: ApprovalRequest | None = None

    @property
    def name(self) -> str:
        return self.skill.name

    @property
    def sha256(self) -> str:
        return self.skill.sha256

    @property
    def size(self) -> int:
        return self.skill.size


@attrs.frozen
class LoadedSkill:
    """A skill served to one agent (tier 2), with its files on demand (tier 3)."""

    agent: str
    skill: Skill
    source: Source
    _loader: Loader = attrs.field(eq=False, repr=False)

    @property
    def name(self) -> str:
        return self.skill.name

    @property
    def body(self) -> str:
        return self.skill.body

    def resources(self) -> tuple[str, ...]:
        return self._loader.resource_paths(self.source, self.name)

    def read_resource(self, path: str) -> bytes:
        return self._loader.read_resource(self.source, self.name, path)

    def activation(self) -> str:
        """The activation text for the agent's context, escaped."""
        return activation_text(self.name, self.body, self.resources())

    def to_tool_descriptor(self) -> ToolDescriptor:
        folders = {path.split("/", 1)[0] for path in self.resources() if "/" in path}
        return ToolDescriptor(
            name=f"{self.source}/{self.name}",
            description=self.skill.description,
            allowed_tools=self.skill.allowed_tools,
            resource_slots=tuple(
                ResourceSlot(slot, f"agent_skill_{slot}") for slot in _SLOTS if slot in folders
            ),
        )


# -- the loader ----------------------------------------------------------------------


class Loader:
    """Serves skills to the agents of a swarm, each within its own grant.

    ``Loader(policy, embedded=..., workspace=..., approver=..., audit=...)``: *embedded*
    is an ``EmbeddedSkills``; *workspace* a ``SkillRoots`` or a list of roots (read
    through ``SafeRoot``, discovered once, here); *approver* a sync or async callable
    (default ``deny_all``); *audit* an ``Auditor`` or an ``AuditLog``.
    """

    def __init__(
        self,
        policy: AllowPolicy,
        *,
        embedded: EmbeddedSkills | None = None,
        workspace: SkillRoots | Sequence[str | os.PathLike[str] | RootPath] | None = None,
        approver: Approver | AsyncApprover = deny_all,
        audit: Auditor | AuditLog | None = None,
        limits: Limits | None = None,
        profile: Profile = "strict",
    ) -> None:
        from ._policy import AllowPolicy  # noqa: PLC0415 - avoids an import cycle

        if not isinstance(policy, AllowPolicy):
            raise SkillUsageError("bad_argument", "policy must be a skillguard.AllowPolicy")
        if not callable(approver):
            raise SkillUsageError("bad_argument", "approver must be callable")
        self.policy = policy
        self.embedded = embedded or EmbeddedSkills({})
        self.approver = approver
        self.auditor = audit if isinstance(audit, Auditor) else Auditor(audit)
        self.limits = limits or DEFAULT_LIMITS
        self.profile: Profile = profile
        if audit is not None and not isinstance(audit, (Auditor, AuditLog)):
            raise SkillUsageError("bad_argument", "audit must be an Auditor or an AuditLog")
        if workspace is None or isinstance(workspace, SkillRoots):
            self.workspace = workspace
        elif isinstance(workspace, (list, tuple)):
            self.workspace = SkillRoots(list(workspace), limits=self.limits, profile=profile)
        else:
            raise SkillUsageError(
                "bad_argument", "workspace must be a SkillRoots or a list of roots"
            )
        self._workspace_meta: dict[str, SkillMeta] = {}
        # Prepared workspace loads this loader issued and that were not used yet: only
        # these (the very objects) can be loaded, once each. Bounded: oldest go first.
        self._issued: OrderedDict[str, PreparedLoad] = OrderedDict()
        self._issued_lock = threading.Lock()
        if self.workspace is not None:
            found = self.workspace.discover()
            self._workspace_meta = {meta.name: meta for meta in found.skills}
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
            for skipped in found.skipped:
                if skipped.kind not in ("malformed", "containment"):
                    continue  # a conventional root that does not exist is no event
                event = (
                    "malformed_skill" if skipped.kind == "malformed" else "containment_violation"
                )
                self.auditor.emit(
                    event,
                    source="workspace",
                    path=skipped.path,
                    decision="deny",
                    code=skipped.code,
                    reason=skipped.reason,
                )

    def bind(self, agent: str) -> AgentSkills:
        """An immutable handle for ONE agent (seed 004's Skill tool)."""
        if not isinstance(agent, str):
            raise SkillUsageError("bad_argument", "agent must be a str")
        return AgentSkills(self, agent)

    # Used by the handles ------------------------------------------------------------

    def _source_of(self, agent: str, name: str) -> Source:
        """Authorize and locate, fail-secure (rules 1 to 3 of the module docstring)."""
        if not self.policy.allowed(agent, name):
            raise _unknown(agent, name)
        if self.embedded.get(name) is not None:
            return "embedded"
        grant = self.policy.grant(agent)
        if grant is not None and grant.workspace == "approve" and name in self._workspace_meta:
            return "workspace"
        raise SkillNotFoundError(
            "missing", "the skill is authorized but no source has it", name=name, agent=agent
        )

    def meta(self, source: Source, name: str) -> SkillMeta:
        if source == "workspace":
            return self._workspace_meta[name]
        skill = self.embedded.get(name)
        assert skill is not None  # located before
        return SkillMeta(
            skill.name,
            skill.description,
            self.embedded.origin,
            skill.name,
            skill.sha256,
            skill.size,
        )

    def resource_paths(self, source: Source, name: str) -> tuple[str, ...]:
        if source == "embedded":
            return self.embedded.resources(name)
        assert self.workspace is not None
        return tuple(item.path for item in self.workspace.resources(name).files)

    def read_resource(self, source: Source, name: str, path: str) -> bytes:
        if source == "embedded":
            return self.embedded.read_resource(name, path)
        assert self.workspace is not None
        return self.workspace.read_resource(name, path)

    def issue(self, prepared: PreparedLoad) -> None:
        with self._issued_lock:
            assert prepared.request is not None
            self._issued[prepared.request.request_id] = prepared
            while len(self._issued) > MAX_PENDING_APPROVALS:
                self._issued.popitem(last=False)

    def redeem(self, prepared: PreparedLoad) -> bool:
        """Whether *prepared* is a load this loader issued and nobody used yet (single use)."""
        if prepared.request is None:
            return False
        with self._issued_lock:
            issued = self._issued.get(prepared.request.request_id)
            if issued is not prepared:
                return False
            del self._issued[prepared.request.request_id]
        return True

    def snapshot(self, name: str) -> Skill:
        """Read and parse a workspace skill once: the bytes an approval is bound to."""
        assert self.workspace is not None
        return self.workspace.load(name)


def _valid_decision(value: object) -> Decision | None:
    return value if isinstance(value, Decision) else None


@attrs.frozen
class AgentSkills:
    """What one agent may see and load. Obtain it with ``Loader.bind(agent)``."""

    _loader: Loader = attrs.field(repr=False)
    agent: str

    # Tier 1 ------------------------------------------------------------------------

    def allowed(self, name: str) -> bool:
        """The pure membership predicate: no file-system access."""
        return self._loader.policy.allowed(self.agent, name)

    def describe(self, name: str) -> SkillMeta:
        """Metadata only, authorized against the same allow-set as ``load``."""
        try:
            source = self._loader._source_of(self.agent, name)  # noqa: SLF001
        except SkillError as exc:
            self._deny("describe_denied", name, exc)
            raise
        return self._loader.meta(source, name)

    def catalog(self) -> tuple[SkillMeta, ...]:
        """Every skill this agent may load and a source holds, by name."""
        return tuple(meta for meta, _ in self._catalog())

    def _catalog(self) -> list[tuple[SkillMeta, Source]]:
        grant = self._loader.policy.grant(self.agent)
        entries = []
        for name in sorted(grant.skills if grant is not None else ()):
            try:
                source = self._loader._source_of(self.agent, name)  # noqa: SLF001
            except SkillError:
                continue
            entries.append((self._loader.meta(source, name), source))
        self._loader.auditor.emit(
            "catalog_served", agent=self.agent, decision="allow", size=len(entries)
        )
        return entries

    def catalog_xml(self) -> str:
        return catalog_xml([(m.name, m.description, _location(m), s) for m, s in self._catalog()])

    def catalog_json(self) -> str:
        return catalog_json([(m.name, m.description, _location(m), s) for m, s in self._catalog()])

    # Tier 2 ------------------------------------------------------------------------

    def prepare(self, name: str) -> PreparedLoad:
        """Read the skill once; for a workspace skill, the request a human must approve."""
        try:
            source = self._loader._source_of(self.agent, name)  # noqa: SLF001
            if source == "embedded":
                skill = self._loader.embedded.get(name)
                assert skill is not None
                return PreparedLoad(self.agent, skill, source, self._loader.embedded.origin, name)
            meta = self._loader.meta(source, name)
            skill = self._loader.snapshot(name)
        except SkillError as exc:
            self._deny("load_denied", name, exc)
            raise
        request = make_request(self.agent, skill, meta.root, meta.location)
        self._loader.auditor.emit(
            "approval_requested",
            agent=self.agent,
            skill=name,
            source="workspace",
            path=meta.location,
            size=skill.size,
            sha256=skill.sha256,
            request_id=request.request_id,
        )
        prepared = PreparedLoad(self.agent, skill, source, meta.root, meta.location, request)
        self._loader.issue(prepared)
        return prepared

    def load(self, target: str | PreparedLoad) -> LoadedSkill:
        """Serve a skill. A workspace skill goes to the approver with the snapshot's
        request, and what is served is that snapshot. Raises ``UnknownSkillError``,
        ``ApprovalDeniedError``, ``ApprovalRequiredError`` (an async approver: use
        ``aload``), ``AuditError``, or the parser and containment errors."""
        prepared = self._prepared(target)
        if prepared.request is None:
            return self._grant(prepared, approver="embedded")
        answer = self._ask(prepared)
        if inspect.isawaitable(answer):
            close = getattr(answer, "close", None)
            if close is not None:
                close()
            error = ApprovalRequiredError(
                "async_approver", "the approver is async: use aload()", name=prepared.name
            )
            self._deny("load_denied", prepared.name, error)
            raise error
        return self._decide(prepared, answer)

    async def aload(self, target: str | PreparedLoad) -> LoadedSkill:
        """``load`` for asyncio swarms: awaits an async approver."""
        prepared = self._prepared(target)
        if prepared.request is None:
            return self._grant(prepared, approver="embedded")
        answer = self._ask(prepared)
        if inspect.isawaitable(answer):
            try:
                answer = await answer
            except Exception:  # noqa: BLE001 - an approver that fails has not approved
                answer = None
        return self._decide(prepared, answer)

    def effective_tools(self, target: str | LoadedSkill) -> frozenset[str]:
        """The agent's tool grant, narrowed by the skill's ``allowed-tools`` (never widened)."""
        grant = self._loader.policy.grant(self.agent)
        granted = grant.tools if grant is not None else frozenset()
        if isinstance(target, LoadedSkill):
            skill = target.skill
        else:
            source = self._loader._source_of(self.agent, target)  # noqa: SLF001
            embedded = self._loader.embedded.get(target) if source == "embedded" else None
            skill = embedded or self._loader.snapshot(target)
        if not skill.allowed_tools:
            return granted
        return granted & frozenset(skill.allowed_tools)

    def audit_summary(self, args: str | Mapping[str, object]) -> str:
        return audit_summary(args)

    # Internals ---------------------------------------------------------------------

    def _prepared(self, target: str | PreparedLoad) -> PreparedLoad:
        """The load to serve, re-authorized now; a workspace load only as issued, once."""
        if isinstance(target, str):
            # Just prepared (and authorized) here: only its single use is left to claim.
            prepared = self.prepare(target)
            if prepared.request is not None:
                self._loader.redeem(prepared)
            return prepared
        prepared = target
        if not isinstance(prepared, PreparedLoad):
            raise SkillUsageError("bad_argument", "load takes a name or a PreparedLoad")
        if prepared.agent != self.agent:
            raise _unknown(self.agent, prepared.name)
        try:
            source = self._loader._source_of(self.agent, prepared.name)  # noqa: SLF001
        except SkillError as exc:
            self._deny("load_denied", prepared.name, exc)
            raise
        if source == "embedded":  # served from the cache, whatever the object holds
            skill = self._loader.embedded.get(prepared.name)
            assert skill is not None
            return PreparedLoad(self.agent, skill, source, self._loader.embedded.origin, skill.name)
        if prepared.source != "workspace" or not self._loader.redeem(prepared):
            error = ApprovalDeniedError(
                "not_issued",
                "this prepared load was not issued by this loader, or was already used",
                name=prepared.name,
                agent=self.agent,
            )
            self._deny("load_denied", prepared.name, error)
            raise error
        return prepared

    def _ask(self, prepared: PreparedLoad) -> Any:  # noqa: ANN401 - a Decision or an awaitable
        assert prepared.request is not None
        try:
            return self._loader.approver(prepared.request)
        except Exception:  # noqa: BLE001 - an approver that fails has not approved
            return None

    def _decide(self, prepared: PreparedLoad, answer: object) -> LoadedSkill:
        decision = _valid_decision(answer)
        assert prepared.request is not None
        if decision is None or decision.approved is not True:
            by = decision.by if decision is not None else "no valid answer"
            self._loader.auditor.emit(
                "approval_denied",
                agent=self.agent,
                skill=prepared.name,
                source="workspace",
                decision="deny",
                code="denied",
                sha256=prepared.sha256,
                approver=by,
                request_id=prepared.request.request_id,
            )
            raise ApprovalDeniedError(
                "denied", "the approver did not approve", name=prepared.name, agent=self.agent
            )
        self._loader.auditor.emit(
            "approval_granted",
            agent=self.agent,
            skill=prepared.name,
            source="workspace",
            decision="allow",
            sha256=prepared.sha256,
            approver=decision.by,
            request_id=prepared.request.request_id,
        )
        return self._grant(prepared, approver=decision.by)

    def _grant(self, prepared: PreparedLoad, *, approver: str) -> LoadedSkill:
        if prepared.source == "embedded" and prepared.name in self._loader._workspace_meta:  # noqa: SLF001
            self._loader.auditor.emit(
                "shadowing_refused",
                agent=self.agent,
                skill=prepared.name,
                source="workspace",
                decision="deny",
                code="embedded_wins",
                reason="the embedded skill of this name is served instead",
            )
        # Written before the skill is handed over: no record, no load (AuditError).
        self._loader.auditor.emit(
            "load_granted",
            agent=self.agent,
            skill=prepared.name,
            source=prepared.source,
            decision="allow",
            path=prepared.path,
            size=prepared.size,
            sha256=prepared.sha256,
            approver=approver,
            request_id=prepared.request.request_id if prepared.request else None,
        )
        return LoadedSkill(self.agent, prepared.skill, prepared.source, self._loader)

    def _deny(self, event: str, name: object, error: SkillError) -> None:
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
            reason=error.reason,
        )


def _location(meta: SkillMeta) -> str:
    return f"{meta.root}/{meta.location}/SKILL.md" if meta.location else f"{meta.root}/SKILL.md"
