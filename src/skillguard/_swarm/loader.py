"""The Loader: a swarm's configuration and sources, and the handle each agent is bound to.

A ``Loader`` holds the policy, the embedded skills, the workspace roots (discovered once,
at construction: where each skill is, and why each folder not taken was refused), the
approver and the audit sink; ``bind(agent)`` hands out the per-agent ``AgentSkills``
handle (``handle``), which makes every decision from them. Its mutable state, the
approvals' bookkeeping, is one ``SwarmState`` (``state``) that the loader builds and
``bind`` passes down to each handle in its token.

A ``Loader`` is safe to share across threads and event loops. Its configuration is
read-only after construction; its mutable state is behind one lock, held for
bookkeeping only, never while an approver runs or a file is read. Code running in the
same process is inside the trust boundary: it can reach any object's private state, and
the guards here stop mistakes and confused deputies, not a hostile in-process caller.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, NoReturn

from skillguard._audit.log import AuditLog, Auditor
from skillguard._core.errors import SkillError, SkillUsageError, safe_repr
from skillguard._core.limits import DEFAULT_LIMITS, Limits
from skillguard._skills.approval import AnyApprover, Approver, AsyncApprover, deny_all
from skillguard._skills.discover import RootPath, SkillMeta, SkillRoots, SkippedEntry
from skillguard._skills.embedded import EmbeddedSkills
from skillguard._skills.policy import AllowPolicy
from skillguard._skills.select import SelectionRegistry
from skillguard._skills.truststore import PinningApprover, TrustStore
from skillguard._swarm.errors import NotGrantedError, UnknownSkillError
from skillguard._swarm.handle import AgentSkills
from skillguard._swarm.pending import check_timeout
from skillguard._swarm.state import SwarmState

if TYPE_CHECKING:
    import os
    from collections.abc import Sequence
    from types import TracebackType

    from skillguard._core.model import Profile
    from skillguard._fs.containment import SafeRoot
    from skillguard._swarm.served import Source

__all__ = ["Loader"]

_PROFILES = ("strict", "compat")
_SKIPS_SHOWN = 5  # entries named in one aggregated skip record


def _from_roots(
    roots: SkillRoots, limits: Limits | None, profile: Profile | None, namespaces: bool | None
) -> tuple[Limits, Profile, bool]:
    """The workspace's own limits, profile and namespace rule, which the loader reads
    every snapshot with (T170). Discovery chose the skills a catalog lists by them: a
    load under any other would refuse a listed skill, or serve one discovery refused.
    An explicit value that differs is a usage error, never silently overridden."""
    if not isinstance(roots.profile, str) or roots.profile not in _PROFILES:
        raise SkillUsageError("bad_profile", "the workspace's profile must be 'strict' or 'compat'")
    if not isinstance(roots.namespaces, bool) or not isinstance(roots.limits, Limits):
        raise SkillUsageError(
            "bad_argument", "the workspace SkillRoots' namespaces or limits is of the wrong type"
        )
    given = {"limits": limits, "profile": profile, "namespaces": namespaces}
    own = {"limits": roots.limits, "profile": roots.profile, "namespaces": roots.namespaces}
    for option, value in given.items():
        if value is not None and value != own[option]:
            raise SkillUsageError(
                "bad_argument",
                f"{option} differs from the workspace SkillRoots' own {option}: a loader "
                "reads its workspace as the SkillRoots does; give it there only",
            )
    return roots.limits, roots.profile, roots.namespaces


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

    *profile*, *namespaces* and *limits* have one source of truth: a workspace given as
    a ``SkillRoots`` brings its own, so that a load reads a skill exactly as the
    discovery behind the catalog did (T170); leave them out here, or give the same
    values. Otherwise they default to ``"strict"``, ``False`` and ``DEFAULT_LIMITS``.

    Raises ``SkillUsageError`` for a bad argument, or one that conflicts with the
    workspace ``SkillRoots``. Close it (or use it as a context manager) to release the
    workspace roots' descriptors.
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
        profile: Profile | None = None,
        namespaces: bool | None = None,
        trust_store: TrustStore | None = None,
        show_unapproved_descriptions: bool = False,
        approval_timeout: float | None = 300.0,
        registry: SelectionRegistry | None = None,
    ) -> None:
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
        if profile is not None and (not isinstance(profile, str) or profile not in _PROFILES):
            raise SkillUsageError("bad_profile", "profile must be 'strict' or 'compat'")
        if namespaces is not None and not isinstance(namespaces, bool):
            raise SkillUsageError("bad_argument", "namespaces must be a bool")
        if isinstance(workspace, SkillRoots):
            limits, profile, namespaces = _from_roots(workspace, limits, profile, namespaces)
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
        self.profile: Profile = profile or "strict"
        # Whether a namespaced ``name`` is accepted, in discovery and in every snapshot.
        self.namespaces: bool = bool(namespaces)
        self.trust_store = trust_store
        self.show_unapproved_descriptions = show_unapproved_descriptions
        self.approval_timeout = check_timeout(approval_timeout, "approval_timeout")
        if workspace is None or isinstance(workspace, SkillRoots):
            self.workspace = workspace
        elif isinstance(workspace, (list, tuple)):
            self.workspace = SkillRoots(
                list(workspace),
                limits=self.limits,
                profile=self.profile,
                namespaces=self.namespaces,
            )
        else:
            raise SkillUsageError(
                "bad_argument", "workspace must be a SkillRoots or a list of roots"
            )
        found: dict[str, SkillMeta] = {}
        locations: dict[str, tuple[SafeRoot, str]] = {}
        failed: dict[str, SkippedEntry] = {}
        if self.workspace is not None:
            found, locations, failed = self._discover_workspace(self.workspace)
        self._state = SwarmState(
            policy=policy,
            embedded=self.embedded,
            approver=approver,
            auditor=self.auditor,
            limits=self.limits,
            profile=self.profile,
            namespaces=self.namespaces,
            trust_store=trust_store,
            show_unapproved_descriptions=show_unapproved_descriptions,
            workspace_meta=found,
            locations=locations,
            workspace_failed=failed,
        )
        self._frozen = True

    def __setattr__(self, name: str, value: object) -> None:
        if self._frozen:
            raise SkillUsageError(
                "read_only", f"Loader.{name} cannot be changed after construction"
            )
        object.__setattr__(self, name, value)

    def _discover_workspace(
        self, workspace: SkillRoots
    ) -> tuple[dict[str, SkillMeta], dict[str, tuple[SafeRoot, str]], dict[str, SkippedEntry]]:
        """The workspace's skills by name, where each is, and, by folder name, why the
        folder of that name was not taken (so that an authorized name whose skill is
        broken is reported as broken, not as absent); shadowing and skips are audited."""
        found = workspace.discover()
        workspace_meta = {meta.name: meta for meta in found.skills}
        # Where each skill is, as this discovery found it: a host that discovers its
        # SkillRoots again cannot make the loader read another folder than it shows.
        locations = {meta.name: workspace.locate(meta.name) for meta in found.skills}
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
        failed: dict[str, SkippedEntry] = {}
        by_root: dict[str, list[SkippedEntry]] = {}
        for skipped in found.skipped:
            if skipped.kind not in ("malformed", "containment"):
                continue  # a conventional root that does not exist is no event
            by_root.setdefault(skipped.root, []).append(skipped)
            folder = skipped.path.rsplit("/", 1)[-1]
            failed.setdefault(folder, skipped)
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
        return workspace_meta, locations, failed

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

    def bind(self, agent: str, *, parent: AgentSkills | None = None) -> AgentSkills:
        """An immutable handle for ONE agent (seed 004's Skill tool).

        With *parent* (the handle of the agent that starts this one at run time), the
        handle is a sub-agent's: the policy must list *agent* under the parent's
        ``subagents`` (whose grants it already checked are no wider than the
        parent's), and every audit record the handle writes names the parent
        (``parent``). A parent handle of another loader is refused.

        Raises ``SkillUsageError`` when *agent* is not a str or *parent* is not a handle
        of this loader, ``UnknownSkillError`` (``unknown_agent``) when the policy does
        not know *agent* and (``not_a_subagent``) when it does not list it under
        *parent*; each refusal is audited (``bind_denied``), so a sub-agent probing for
        names leaves a trace (T27, T222), and ``AuditError`` replaces it when its record
        cannot be written.
        """
        if not isinstance(agent, str):
            raise SkillUsageError("bad_argument", "agent must be a str")
        if parent is not None and not (
            isinstance(parent, AgentSkills) and parent._bound_by(self)  # noqa: SLF001 - the handle bind() builds
        ):
            self._refuse_bind(
                agent,
                None,
                SkillUsageError(
                    "bad_argument", "parent must be a handle that this loader's bind() returned"
                ),
            )
        parent_name = parent.agent if parent is not None else None
        if self.policy.grant(agent) is None:
            self._refuse_bind(
                agent,
                parent_name,
                UnknownSkillError(
                    "unknown_agent", f"the policy has no agent {safe_repr(agent)}", agent=agent
                ),
            )
        grant = self.policy.grant(parent_name) if parent_name is not None else None
        if parent_name is not None and (grant is None or agent not in grant.subagents):
            self._refuse_bind(
                agent,
                parent_name,
                NotGrantedError(
                    "not_a_subagent",
                    f"the policy does not list {safe_repr(agent)} among the subagents of "
                    f"{safe_repr(parent_name)}",
                    agent=agent,
                ),
            )
        return AgentSkills(self, agent, self._state.binding(self, agent, parent_name))

    def _refuse_bind(self, agent: str, parent: str | None, error: SkillError) -> NoReturn:
        self.auditor.emit(
            "bind_denied",
            agent=agent,
            decision="deny",
            code=error.code,
            reason=error.reason,
            parent=parent,
        )
        raise error

    def meta(self, source: Source, name: str) -> SkillMeta:
        """The catalog entry of skill *name* in *source*, with no authorization check.

        Raises ``SkillUsageError`` for a source other than ``"embedded"`` or
        ``"workspace"`` or a name that is not a str, and ``SkillNotFoundError``
        (``missing``) when that source has no such skill.
        """
        return self._state.meta(source, name)
