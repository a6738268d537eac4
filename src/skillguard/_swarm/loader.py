"""The Loader: where a swarm's skill state lives, and what every agent's handle decides from.

A ``Loader`` holds the policy, the embedded skills, the workspace roots (discovered once,
at construction: where each skill is, and why each folder not taken was refused), the
approver and the audit sink; ``bind(agent)`` hands out the per-agent ``AgentSkills``
handle (``_handle``), which makes every decision from them. Its own mutable state is the
approvals' bookkeeping:

- pending approvals (``prepare`` receipts not yet redeemed), bounded per agent by count
  and bytes and in total, the flooding agent's oldest evicted first and audited (T36);
- in-flight approvals: the one approver call that concurrent ``aload`` calls of one
  snapshot share, counted in the same bounds until it is decided (T36, T37); a sync
  approver answers in a daemon thread of its own, and the threads nobody waits for any
  more are capped (T112); a call whose event loop was closed is dropped (T113);
- the snapshots approved per agent, and the ``SKILL.md`` hashes a human approved, which
  decide whether a catalog may show a workspace skill's description (T34).

A ``Loader`` is safe to share across threads and event loops. Its configuration is
read-only after construction; its mutable state is behind one lock, held for
bookkeeping only, never while an approver runs or a file is read. Code running in the
same process is inside the trust boundary: it can reach any object's private state, and
the guards here stop mistakes and confused deputies, not a hostile in-process caller.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import math
import threading
from collections import Counter, OrderedDict
from typing import TYPE_CHECKING, Any

import attrs

from skillguard._audit.log import AuditLog, Auditor
from skillguard._audit.record import AuditError
from skillguard._core.errors import (
    SkillInputError,
    SkillNotFoundError,
    SkillUsageError,
    input_error,
    safe_repr,
)
from skillguard._core.limits import DEFAULT_LIMITS, Limits
from skillguard._skills.approval import (
    AnyApprover,
    ApprovalDeniedError,
    ApprovalError,
    ApprovalRequest,
    Approver,
    AsyncApprover,
    Decision,
    PinningApprover,
    TrustStore,
    deny_all,
    is_async_approver,
    pin_failure,
)
from skillguard._skills.discover import RootPath, SkillMeta, SkillRoots, SkippedEntry, source_folder
from skillguard._skills.embedded import EmbeddedSkills
from skillguard._skills.select import SelectionIndex, SelectionRegistry
from skillguard._skills.snapshot import take_snapshot
from skillguard._swarm.served import PreparedLoad, Source, _Served

if TYPE_CHECKING:
    import os
    from collections.abc import Callable, Sequence
    from types import TracebackType

    from skillguard._core.model import Profile
    from skillguard._fs.containment import SafeRoot
    from skillguard._skills.policy import AllowPolicy
    from skillguard._swarm.handle import AgentSkills

__all__ = ["Loader", "UnknownSkillError"]

_PROFILES = ("strict", "compat")
# An approver call that concurrent aload calls share: (event loop, agent, skill, digest).
_FlightKey = tuple[int, str, str, str]
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
    one snapshot they are all served (the same digest is the same bytes), and the event
    loop they wait in. Holding the loop keeps its id, in the key, from being reused."""

    key: _FlightKey
    request: ApprovalRequest
    served: _Served | None  # None for an agent file's request, which no load joins
    cost: int
    loop: asyncio.AbstractEventLoop
    task: asyncio.Future[Any] | None = None
    waiters: int = 0
    cancelling: bool = False
    released: bool = False
    # A sync approver runs in a thread of its own: whether it still runs (once nobody
    # waits for its answer any more, the flight is in ``Loader._abandoned``).
    thread_running: bool = False

    @property
    def agent(self) -> str:
        return self.request.agent


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
        from skillguard._skills.policy import AllowPolicy  # noqa: PLC0415 - avoids an import cycle

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
        self.approval_timeout = _check_timeout(approval_timeout, "approval_timeout")
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
        self._workspace_meta: dict[str, SkillMeta] = {}
        self._locations: dict[str, tuple[SafeRoot, str]] = {}
        # Folder name -> why the folder of that name was not taken, so that an
        # authorized name whose skill is broken is reported as broken, not as absent.
        self._workspace_failed: dict[str, SkippedEntry] = {}
        self._lock = threading.Lock()
        # Pending approvals, per agent, oldest first; and the bytes each keeps alive.
        self._pending: dict[str, OrderedDict[str, _Issued]] = {}
        self._pending_bytes: Counter[str] = Counter()
        # (agent, name) -> the snapshot last approved for that agent; and the SKILL.md
        # hashes a human approved for it (a catalog shows their description). Kept per
        # agent so that one agent's ``deactivate`` withdraws only its own approvals.
        self._approved: dict[tuple[str, str], _Served] = {}
        self._approved_digests: dict[tuple[str, str], set[str]] = {}
        self._approved_sha: dict[tuple[str, str], set[str]] = {}
        self._inflight: dict[_FlightKey, _Flight] = {}
        # Loads waiting for an approver, per agent: counted in the pending bounds too.
        self._inflight_count: Counter[str] = Counter()
        self._inflight_bytes: Counter[str] = Counter()
        # A sync approver under aload runs in a thread, which cannot be killed: the
        # threads nobody waits for any more, until their human answers (T112).
        self._abandoned: set[_Flight] = set()
        # The agent-file approvals (``_ask_alone``) being waited for: never joined, but
        # swept like ``_inflight`` when their event loop is closed under them.
        self._alone: set[_Flight] = set()
        self._async_approver = is_async_approver(approver)
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
        (``unknown_agent``) when the policy does not know it; that refusal is audited
        (``bind_denied``), so a sub-agent probing for names leaves a trace (T27), and
        ``AuditError`` replaces it when its record cannot be written.
        """
        if not isinstance(agent, str):
            raise SkillUsageError("bad_argument", "agent must be a str")
        if self.policy.grant(agent) is None:
            error = UnknownSkillError(
                "unknown_agent", f"the policy has no agent {safe_repr(agent)}", agent=agent
            )
            self.auditor.emit(
                "bind_denied", agent=agent, decision="deny", code=error.code, reason=error.reason
            )
            raise error
        from skillguard._swarm.handle import AgentSkills  # noqa: PLC0415 - the handle module imports this one

        with self._lock:
            token = self._bind_tokens.setdefault(agent, object())
        return AgentSkills(self, agent, token)

    def _valid_token(self, agent: str, token: object) -> bool:
        return self._bind_tokens.get(agent) is token

    # Used by the handles -----------------------------------------------------------

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
                raise input_error(failed.kind, failed.code, failed.reason, name=name, agent=agent)
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
            approved: dict[str, set[str]] = {}
            for (_, name), shas in self._approved_sha.items():
                approved.setdefault(name, set()).update(shas)
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
            namespaces=self.namespaces,
        )
        return _Served(snapshot, root, location)

    # Pending approvals (rule 7 of the handle; T36) ---------------------------------

    def _issue(self, issued: _Issued) -> None:
        """Keep a pending approval, within the per-agent and total bounds (rule 7)."""
        agent = issued.prepared.agent
        evicted: list[_Issued] = []
        with self._lock:
            swept = self._sweep_closed_loops()
            queue = self._pending.setdefault(agent, OrderedDict())
            queue[issued.request.request_id] = issued
            self._pending_bytes[agent] += issued.cost
            self._make_room(agent, 0, 0, evicted)
        self._audit_swept(swept)
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

    # In-flight approvals (aload; T36-T38, T113) ------------------------------------

    def _join_flight(self, issued: _Issued) -> tuple[_Flight, bool] | ApprovalDeniedError:
        """The approver call that the ``aload`` of *issued* waits for, and whether this
        load starts it; or why it may not wait: its agent has no room left (pending
        requests are evicted first, and audited), or a sync approver would need one more
        thread while ``max_abandoned_approvers`` threads already wait for a human who
        stopped answering. A load that joins is served the first one's snapshot, so that
        its own can go."""
        loop = asyncio.get_running_loop()
        snapshot = issued.served.snapshot
        key = (id(loop), issued.prepared.agent, snapshot.skill.name, snapshot.digest)
        cap = self.limits.max_abandoned_approvers
        # Only at the cap (read without the lock, so a hint): a digest its trust store
        # pins is answered without a human, so it needs no room among those threads.
        pinned = len(self._abandoned) >= cap and self._pinned(issued.request)
        evicted: list[_Issued] = []
        refusal: ApprovalDeniedError | None = None
        with self._lock:
            swept = self._sweep_closed_loops()
            flight = self._inflight.get(key)
            starter = flight is None
            if flight is not None:
                assert flight.served is not None  # only aload flights are in _inflight
                issued.served = flight.served
                flight.waiters += 1
            elif not (self._async_approver or pinned) and len(self._abandoned) >= cap:
                refusal = ApprovalDeniedError(
                    "too_many_abandoned",
                    f"{len(self._abandoned)} approver calls nobody waits for still wait for "
                    "an answer",
                    name=snapshot.skill.name,
                    agent=issued.prepared.agent,
                )
            else:
                flight = _Flight(key, issued.request, issued.served, issued.cost, loop)
                if self._admit_flight(flight, evicted):
                    self._inflight[key] = flight
                    flight.waiters += 1
                else:
                    refusal = ApprovalDeniedError(
                        "too_many_pending",
                        "this agent has too many loads waiting for an approver",
                        name=snapshot.skill.name,
                        agent=issued.prepared.agent,
                    )
        self._audit_swept(swept)
        self._audit_evicted(evicted)
        if refusal is not None:
            return refusal
        assert flight is not None
        return flight, starter

    def _leave_flight(self, flight: _Flight) -> bool:
        """One load stops waiting for *flight*. If it was the last one and the approver
        has not answered, the flight is dropped and uncounted (a sync approver's thread
        is abandoned), and ``True`` tells the caller to cancel the approver call: nobody
        waits for that prompt any more."""
        with self._lock:
            flight.waiters -= 1
            task = flight.task
            orphaned = flight.waiters == 0 and task is not None and not task.done()
            if orphaned:
                flight.cancelling = True
                self._drop_flight(flight)
                self._abandon(flight)
        return orphaned

    def _land_flight(self, flight: _Flight) -> None:
        """The approver answered: a decided approval is not reused by later calls, which
        ask again."""
        with self._lock:
            self._drop_flight(flight)

    def _admit_flight(self, flight: _Flight, evicted: list[_Issued]) -> bool:
        """Count a load that will wait for an approver in its agent's bounds, if it fits
        (pending requests are evicted to make room). Under the lock."""
        if not self._make_room(flight.agent, 1, flight.cost, evicted):
            return False
        self._inflight_count[flight.agent] += 1
        self._inflight_bytes[flight.agent] += flight.cost
        return True

    def _drop_flight(self, flight: _Flight) -> None:
        """Forget *flight* and uncount it, once. Under the lock."""
        if self._inflight.get(flight.key) is flight:
            del self._inflight[flight.key]
        if flight.released:
            return
        flight.released = True
        self._inflight_count[flight.agent] -= 1
        self._inflight_bytes[flight.agent] -= flight.cost
        if not self._inflight_count[flight.agent]:
            del self._inflight_count[flight.agent]
            del self._inflight_bytes[flight.agent]

    def _sweep_closed_loops(self) -> list[_Flight]:
        """Drop the flights whose event loop was closed while loads waited in it: nothing
        will resume those loads, so the flights are neither joined nor counted in any
        bound again (T113); a sync approver's thread among them is abandoned. Under the
        lock; the caller audits what is returned."""
        swept = [flight for flight in self._inflight.values() if flight.loop.is_closed()]
        swept += [flight for flight in self._alone if flight.loop.is_closed()]
        for flight in swept:
            self._drop_flight(flight)
            self._alone.discard(flight)
            self._abandon(flight)
        return swept

    def _audit_swept(self, swept: list[_Flight]) -> None:
        for flight in swept:
            self.auditor.emit(
                "approval_abandoned",
                **_request_fields(flight.request),
                decision="deny",
                code="loop_closed",
                reason="the event loop of the loads waiting for this approval was closed",
            )

    # Sync approvers under aload (T112) ---------------------------------------------

    def _pinned(self, request: ApprovalRequest) -> bool:
        """Whether the approver answers *request* from its trust store's pin, with no
        human to wait for. A store that cannot be read pins nothing."""
        approver = self.approver
        if not isinstance(approver, PinningApprover):
            return False
        try:
            return approver.pinned(request) is not None
        except ApprovalError:
            return False

    async def _ask_alone(self, request: ApprovalRequest, ask: Callable[[], object]) -> object:
        """A sync approver's answer for a request that no other call shares (an agent
        file's, T131), asked like ``aload`` asks: refused with ``too_many_abandoned``
        before the human is asked when ``max_abandoned_approvers`` threads already wait
        for one, else in a thread of its own that is abandoned (counted) if the caller
        stops waiting, its late answer discarded and audited (``approval_late``)."""
        loop = asyncio.get_running_loop()
        cap = self.limits.max_abandoned_approvers
        pinned = len(self._abandoned) >= cap and self._pinned(request)
        with self._lock:
            swept = self._sweep_closed_loops()
            abandoned = len(self._abandoned)
        self._audit_swept(swept)
        if not pinned and abandoned >= cap:
            raise ApprovalDeniedError(
                "too_many_abandoned",
                f"{abandoned} approver calls nobody waits for still wait for an answer",
                name=request.skill,
                agent=request.agent,
            )
        # Never in ``_inflight`` and never counted in the agent's pending bounds
        # (``released``): the gate holds no pending request between calls.
        key = (id(loop), request.agent, request.skill, request.digest)
        flight = _Flight(key, request, None, 0, loop, released=True)
        with self._lock:
            self._alone.add(flight)
        try:
            return await self._ask_in_thread(flight, ask)
        finally:
            # Timed out or cancelled: the thread still runs, nobody waits for it. A
            # loop closed under this call resumes nothing: the next sweep counts the
            # thread, and this frame, closed when it is collected, must not take the
            # lock (a collection may run while it is held).
            if not loop.is_closed():
                with self._lock:
                    self._alone.discard(flight)
                    self._abandon(flight)

    def _abandon(self, flight: _Flight) -> None:
        """Count *flight*'s approver thread as abandoned if it still runs. Under the
        lock."""
        if flight.thread_running:
            self._abandoned.add(flight)

    async def _ask_in_thread(self, flight: _Flight, ask: Callable[[], object]) -> object:
        """A sync approver's answer, asked in a daemon thread of its own rather than the
        loop's default executor: an approver that never returns then neither takes a
        worker the host's own code needs nor keeps the interpreter from exiting. If
        every load gives up waiting, the thread is abandoned (counted, T112) and its
        answer, when it comes, is discarded and audited (``approval_late``)."""
        answer: asyncio.Future[object] = flight.loop.create_future()
        thread = threading.Thread(
            target=self._run_approver,
            args=(flight, ask, answer),
            name=f"skillguard-approver-{flight.request.request_id}",
            daemon=True,
        )
        with self._lock:
            flight.thread_running = True
        try:
            thread.start()
        except RuntimeError:  # pragma: no cover - the process is out of threads
            with self._lock:
                flight.thread_running = False
            raise
        return await answer

    def _run_approver(
        self, flight: _Flight, ask: Callable[[], object], answer: asyncio.Future[object]
    ) -> None:
        """The approver thread: ask, then hand the answer to the waiting loop, or, if
        nobody waits any more, discard it and say so."""
        try:
            result = ask()
        except BaseException:  # noqa: BLE001 - ends only this thread; the state must follow
            result = None  # an approver that raised SystemExit has not approved
        with self._lock:
            flight.thread_running = False
            late = flight in self._abandoned
            self._abandoned.discard(flight)
        if not late:
            try:
                flight.loop.call_soon_threadsafe(self._settle, flight, answer, result)
            except RuntimeError:  # the loop was closed while the human was thinking
                pass
            else:
                return
        self._late(flight, result)

    def _settle(self, flight: _Flight, answer: asyncio.Future[object], result: object) -> None:
        """In the loop: the answer for the loads waiting, unless the last of them gave up
        while it was on its way."""
        if answer.cancelled():
            self._late(flight, result)
        else:
            answer.set_result(result)

    def _late(self, flight: _Flight, result: object) -> None:
        """An answer nobody waits for: no load is served from it, and the record says
        what it was. A late pin is the trust store's: its approver wrote it."""
        close = getattr(result, "close", None)
        if inspect.isawaitable(result) and close is not None:
            close()  # an awaitable answer nobody will await
        decision = result if isinstance(result, Decision) else None
        approved = decision is not None and decision.approved is True
        failure = pin_failure(decision)
        unpinned = f"; the pin was not written: {failure.reason}" if failure is not None else ""
        # Nothing is served from a late answer, so no load hangs on this record; if the
        # audit sink fails, it denies the next load that needs it.
        with contextlib.suppress(AuditError):
            self.auditor.emit(
                "approval_late",
                **_request_fields(flight.request),
                decision="none",
                code="late_answer",
                approver=decision.by if decision is not None else "no valid answer",
                scope=decision.scope if decision is not None and approved else None,
                reason=f"the approver {'approved' if approved else 'did not approve'} after "
                f"every load waiting for it had ended: the answer was discarded{unpinned}",
            )

    # What was approved, and what was shown -----------------------------------------

    def _remember(self, agent: str, served: _Served) -> None:
        skill = served.snapshot.skill
        with self._lock:
            self._approved[(agent, skill.name)] = served
            self._approved_digests.setdefault((agent, skill.name), set()).add(
                served.snapshot.digest
            )
            self._approved_sha.setdefault((agent, skill.name), set()).add(skill.sha256)

    def _forget(self, agent: str, name: str) -> tuple[str, int] | None:
        """Withdraw *agent*'s approvals of skill *name*: the digest of the snapshot
        approved last and how many were withdrawn, or ``None`` if there were none."""
        with self._lock:
            latest = self._approved.pop((agent, name), None)
            self._approved_sha.pop((agent, name), None)
            digests = self._approved_digests.pop((agent, name), set())
        if latest is None:
            return None
        return latest.snapshot.digest, len(digests)

    def _was_approved(self, agent: str, served: _Served) -> bool:
        key = (agent, served.snapshot.skill.name)
        with self._lock:
            return served.snapshot.digest in self._approved_digests.get(key, ())

    def _approved_snapshot(self, agent: str, name: str) -> _Served | None:
        with self._lock:
            return self._approved.get((agent, name))

    def _selection_index(
        self, agent: str, key: object, build: Callable[[], SelectionIndex]
    ) -> SelectionIndex:
        """The selection index of *agent*'s candidates *key*, built (outside the lock)
        only when what the agent may select changed."""
        with self._lock:
            cached = self._indexes.get(agent)
        if cached is not None and cached[0] == key:
            return cached[1]
        index = build()
        with self._lock:
            self._indexes[agent] = (key, index)
        return index

    def _catalog_changed(self, agent: str, digest: str) -> bool:
        with self._lock:
            if self._catalog_seen.get(agent) == digest:
                return False
            self._catalog_seen[agent] = digest
            return True


def _request_fields(request: ApprovalRequest) -> dict[str, object]:
    """The audit fields that say which approval request an event is about."""
    return {
        "agent": request.agent,
        "skill": request.skill,
        "source": "workspace",
        "sha256": request.sha256,
        "digest": request.digest,
        "request_id": request.request_id,
        "execution_id": request.execution_id or None,
    }


def _folder(meta: SkillMeta) -> str:
    return source_folder(meta.root, meta.location)
