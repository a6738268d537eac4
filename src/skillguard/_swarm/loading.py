"""How an agent's handle loads a skill: prepare, ask the approver, serve (sync and async).

``LoadingMixin`` is the part of ``AgentSkills`` (``handle``) that keeps rules 2, 3, 4, 6
and 7 of the handle: an embedded skill is served at once and wins over a workspace one
of its name (shadowing audited); a workspace skill is read once into a snapshot
(``prepare``), put to the approver with that snapshot's request, and served from that
snapshot only once approved; a ``PreparedLoad`` is a receipt that ``load`` redeems once,
for the agent it was issued to; a ``disable-model-invocation`` skill loads only through
``user_invoke``; and every decision is audited before the caller sees it.

A host whose human answers in its own UI passes that answer to ``load``
(``decision=``) instead of an approver: it is held to the prepared request's digest and
redeems the receipt as an approver's answer does, and its records say it came out of
band (T220). ``load`` and ``user_invoke`` ask the approver in the caller's thread; ``aload`` and
``auser_invoke`` share one approver call among concurrent loads of one snapshot, a sync
approver answering in a thread of its own (``PendingApprovals``). No approver is called
under the loader's lock.
"""

from __future__ import annotations

import asyncio
import inspect
from typing import TYPE_CHECKING, Any, cast

from skillguard._audit.spans import traced
from skillguard._core.errors import SkillError, SkillUsageError
from skillguard._core.model import Skill
from skillguard._skills.approval import (
    NO_ANSWER,
    ApprovalDeniedError,
    ApprovalRequest,
    ApprovalRequiredError,
    Decision,
    make_request,
    not_a_decision_error,
    request_cost,
    returned_type,
)
from skillguard._skills.truststore import pin_decision, pin_failure, read_once
from skillguard._swarm.errors import NotGrantedError, unknown
from skillguard._swarm.pending import Flight, Issued, check_timeout
from skillguard._swarm.served import LoadedSkill, PreparedLoad
from skillguard._swarm.state import folder

if TYPE_CHECKING:
    from skillguard._audit.log import Auditor
    from skillguard._skills.truststore import TrustStore
    from skillguard._swarm.loader import Loader
    from skillguard._swarm.state import Binding, SwarmState

__all__ = ["LoadingMixin"]


# The ``channel`` audit field of a decision a host passed to ``load`` itself.
OUT_OF_BAND = "out_of_band"


class LoadingMixin:
    """The load path of ``AgentSkills`` (the module docstring), which holds the fields."""

    __slots__ = ()

    _loader: Loader
    agent: str
    _token: object

    @property
    def _state(self) -> SwarmState:
        """The loader's shared state, which ``bind`` passed down in the token."""
        return cast("Binding", self._token).state

    @property
    def _auditor(self) -> Auditor:
        """The loader's auditor; a sub-agent's names its parent in every record."""
        return cast("Binding", self._token).auditor

    @property
    def parent(self) -> str | None:
        """The parent agent of a sub-agent's handle (``Loader.bind(agent,
        parent=handle)``), else ``None``."""
        return cast("Binding", self._token).parent

    # Tier 2 ------------------------------------------------------------------------

    def prepare(self, name: str, *, by_user: bool = False) -> PreparedLoad:
        """Read the skill once; for a workspace skill, the request a human must approve.

        *by_user* says the host's user asked for the skill by name (``user_invoke``):
        only then does a ``disable-model-invocation`` skill load. Raises
        ``NotGrantedError``, the parser and containment errors, and ``AuditError``.
        """
        return self._prepare(name, by_user=by_user, execution=None)

    def _prepare(
        self,
        name: str,
        *,
        by_user: bool,
        execution: str | None,
        pinned: TrustStore | None = None,
    ) -> PreparedLoad:
        """``prepare``; with *pinned*, a workspace snapshot that store does not pin
        (digest and folder) is refused, audited, before any request exists."""
        loader = self._loader
        try:
            source = self._state.source_of(self.agent, name)
            if source == "embedded":
                skill = loader.embedded.get(name)
                assert skill is not None
                self._check_invocation(skill, by_user=by_user)
                return PreparedLoad(
                    self.agent, skill, source, loader.embedded.origin, name, None, execution
                )
            meta = loader.meta(source, name)
            served = self._state.snapshot(meta)
            self._check_invocation(served.snapshot.skill, by_user=by_user)
            if pinned is not None and not pinned.is_pinned(
                name, served.snapshot.digest, source=folder(meta)
            ):
                # SKILL.md is the pinned one but the folder is not (a file added,
                # changed or removed since): only a human could approve it now.
                raise ApprovalRequiredError(
                    "not_approved",
                    "the trust store's pin is for another snapshot of this folder (a file "
                    "was added, changed or removed since): use aselect",
                    name=name,
                    agent=self.agent,
                )
        except SkillError as exc:
            self._deny("load_denied", name, exc)
            raise
        snapshot = served.snapshot
        request = make_request(
            self.agent, snapshot, meta.root, meta.location, execution_id=execution or ""
        )
        self._auditor.emit(
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
        self._state.pending.issue(
            Issued(
                prepared,
                request,
                served,
                by_user,
                snapshot.memory_cost() + request_cost(request),
                self._auditor,
            )
        )
        return prepared

    def _check_invocation(self, skill: Skill, *, by_user: bool) -> None:
        if by_user and not skill.user_invocable:
            raise NotGrantedError(
                "not_user_invocable",
                "the skill says a user may not invoke it (user-invocable: false)",
                name=skill.name,
                agent=self.agent,
            )
        if not by_user and skill.disable_model_invocation:
            raise NotGrantedError(
                "user_invocation_only",
                "the skill loads only when a user asks for it (disable-model-invocation)",
                name=skill.name,
                agent=self.agent,
            )

    def load(self, target: str | PreparedLoad, *, decision: Decision | None = None) -> LoadedSkill:
        """Serve a skill. A workspace skill goes to the approver with the snapshot's
        request, and what is served is that snapshot.

        With *decision*, the approval came out of band (the host's human answered in
        its own UI): *target* must be the ``PreparedLoad`` whose request the human saw,
        and *decision* must carry that request's ``digest``; the approver is not asked.
        A decision for another snapshot is refused (``stale_decision``) and, like a
        denial, uses the prepared load up.

        Raises ``NotGrantedError``, ``ApprovalDeniedError`` (``denied``,
        ``not_a_decision``, ``stale_decision``, ``not_issued``),
        ``ApprovalRequiredError`` (an async approver: use ``aload``), ``AuditError``,
        ``SkillUsageError``, or the parser and containment errors."""
        if decision is not None:
            return self._load_decided(target, decision, by_user=False)
        return self._load_here(target, by_user=False, instead="aload()")

    async def aload(
        self,
        target: str | PreparedLoad,
        *,
        timeout: float | None = None,
        decision: Decision | None = None,
    ) -> LoadedSkill:
        """``load`` for asyncio swarms: awaits an async approver (a sync one answers in
        a thread of its own), at most *timeout* seconds (default: the loader's
        ``approval_timeout``). Concurrent calls for the same agent and snapshot share one
        approver call. With *decision*, as ``load``: nothing is awaited. Raises what
        ``load`` raises, ``ApprovalDeniedError`` (``timed_out``, ``too_many_pending``,
        ``too_many_abandoned``); a cancelled call is audited and re-raises
        ``CancelledError``."""
        if decision is not None:
            if timeout is not None:
                check_timeout(timeout, "timeout")
            return self._load_decided(target, decision, by_user=False)
        return await self._aload(target, timeout=timeout, by_user=False)

    def user_invoke(
        self, target: str | PreparedLoad, *, decision: Decision | None = None
    ) -> LoadedSkill:
        """``load`` for a skill the host's USER asked for by name (a slash command):
        the only way a ``disable-model-invocation: true`` skill loads. A skill with
        ``user-invocable: false`` is refused (``not_user_invocable``). *decision* as
        ``load`` (for a ``prepare(name, by_user=True)``)."""
        if decision is not None:
            return self._load_decided(target, decision, by_user=True)
        return self._load_here(target, by_user=True, instead="auser_invoke()")

    @traced("skillguard.load")
    def _load_decided(self, target: object, decision: object, *, by_user: bool) -> LoadedSkill:
        """A load whose approval came out of band: the host's *decision*, bound to the
        digest of the request issued for *target*, checked as an approver's answer is
        (single use, this agent, this loader), and audited with ``channel``
        ``out_of_band`` (T220)."""
        decision = read_once(decision)
        if not isinstance(decision, Decision) or returned_type(decision) is not None:
            raise SkillUsageError("bad_argument", "decision must be a skillguard.Decision")
        skill = getattr(target, "skill", None)
        if (
            not isinstance(target, PreparedLoad)
            or not isinstance(getattr(target, "request", None), ApprovalRequest)
            or not isinstance(skill, Skill)
            or self._loader.embedded.get(skill.name) is not None
        ):
            raise SkillUsageError(
                "bad_argument",
                "a decision answers a prepared request: pass the PreparedLoad of a workspace "
                "skill that prepare() returned",
            )
        if decision.digest is None:
            raise SkillUsageError(
                "bad_argument",
                "an out-of-band decision must carry the digest of the request the human "
                "saw: Decision(..., digest=prepared.digest)",
            )
        store = self._loader.trust_store
        if decision.approved and decision.scope == "pin" and store is None:  # T300
            raise SkillUsageError("bad_argument", "scope='pin' needs a Loader with a trust store")
        issued = self._claim(target, by_user=by_user)
        assert isinstance(issued, Issued)  # not an embedded skill's: checked above
        if store is not None:  # pinned as its approver pins an approver's answer (T300)
            decision = pin_decision(store, issued.request, decision)
        return self._decide(issued, decision, channel=OUT_OF_BAND)

    @traced("skillguard.load")
    def _load_here(self, target: str | PreparedLoad, *, by_user: bool, instead: str) -> LoadedSkill:
        """``load`` and ``user_invoke``: the approver is asked in this thread. An async
        one cannot be awaited here: its awaitable is closed, and the load refused with
        the call to use *instead*."""
        issued = self._claim(target, by_user=by_user)
        if isinstance(issued, LoadedSkill):
            return issued
        answer = self._ask(issued.request)
        if inspect.isawaitable(answer):
            close = getattr(answer, "close", None)
            if close is not None:
                close()
            error = ApprovalRequiredError(
                "async_approver", f"the approver is async: use {instead}", name=issued.request.skill
            )
            self._deny("load_denied", issued.request.skill, error)
            raise error
        return self._decide(issued, answer)

    async def auser_invoke(
        self,
        target: str | PreparedLoad,
        *,
        timeout: float | None = None,
        decision: Decision | None = None,
    ) -> LoadedSkill:
        """``user_invoke`` for asyncio hosts."""
        if decision is not None:
            if timeout is not None:
                check_timeout(timeout, "timeout")
            return self._load_decided(target, decision, by_user=True)
        return await self._aload(target, timeout=timeout, by_user=True)

    @traced("skillguard.load")
    async def _aload(
        self, target: str | PreparedLoad, *, timeout: float | None, by_user: bool
    ) -> LoadedSkill:
        limit = check_timeout(timeout, "timeout") if timeout is not None else None
        if limit is None:
            limit = self._loader.approval_timeout
        issued = self._claim(target, by_user=by_user)
        if isinstance(issued, LoadedSkill):
            return issued
        answer, shared_with = await self._shared_answer(issued, limit)
        return self._decide(issued, answer, shared_with=shared_with)

    async def _shared_answer(
        self, issued: Issued, limit: float | None
    ) -> tuple[object, str | None]:
        """The approver's answer for *issued*, asking once for every concurrent call of
        the same agent and snapshot in this event loop (rule 7: one human prompt). A
        call that joins is served the first call's snapshot, so concurrent calls keep
        one snapshot alive, counted in the agent's pending bounds until decided."""
        pending = self._state.pending
        snapshot = issued.served.snapshot
        joined = pending.join_flight(issued)
        if isinstance(joined, SkillError):
            self._deny("load_denied", snapshot.skill.name, joined)
            raise joined
        flight, starter = joined
        if starter:
            # The approver is called outside the lock, a sync one in a worker thread:
            # a human at a console blocks neither the loader nor this event loop.
            flight.task = asyncio.ensure_future(self._call_approver(issued.request, flight))
            flight.task.add_done_callback(lambda _: pending.land_flight(flight))
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
            answer = NO_ANSWER
        finally:
            # A loop closed under this load resumes nothing: its flight is dropped by the
            # next prepare or aload (T113), and this frame, closed when it is collected,
            # must neither take the loader's lock (a collection may run while it is held)
            # nor touch the closed loop.
            if not flight.loop.is_closed() and pending.leave_flight(flight):
                task.cancel()  # nobody waits for this prompt any more
        return answer, None if starter else flight.request.request_id

    async def _call_approver(self, request: ApprovalRequest, flight: Flight) -> object:
        """The approver's answer: a coroutine function is called here, anything else in
        a thread of its own (``PendingApprovals.ask_in_thread``); an awaitable answer is
        awaited. The approver's own cancellation (its UI gave up) is no answer, not this
        caller's cancellation."""
        pending = self._state.pending
        try:
            if pending.async_approver:
                answer = self._ask(request)
            else:
                answer = await pending.ask_in_thread(flight, lambda: self._ask(request))
            if inspect.isawaitable(answer):
                answer = await answer
        except asyncio.CancelledError:
            if flight.cancelling:
                raise
            return NO_ANSWER
        return answer

    def _outcome(self, issued: Issued, event: str, code: str, reason: str) -> None:
        self._record(event, issued.request, decision="deny", code=code, reason=reason)

    def _record(self, event: str, request: ApprovalRequest, **fields: object) -> None:
        """An audit event about one approval request, with the request's own facts."""
        self._auditor.emit(
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

    # Internals ---------------------------------------------------------------------

    def _claim(self, target: str | PreparedLoad, *, by_user: bool) -> Issued | LoadedSkill:
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
            error = unknown(self.agent, name)
            self._deny("load_denied", name, error, reason="a prepared load of another agent")
            raise error
        try:
            source = self._state.source_of(self.agent, name)
        except SkillError as exc:
            self._deny("load_denied", name, exc)
            raise
        if source == "embedded":  # served from the cache, whatever the object holds
            skill = self._loader.embedded.get(name)
            assert skill is not None
            self._check_invocation(skill, by_user=by_user)
            return self._grant_embedded(skill, getattr(prepared, "execution_id", None))
        issued = self._state.pending.redeem(self.agent, prepared, self.parent)
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
            return NO_ANSWER

    @traced("skillguard.approve", skill_arg=False)
    def _decide(
        self,
        issued: Issued,
        answer: object,
        *,
        shared_with: str | None = None,
        channel: str | None = None,
    ) -> LoadedSkill:
        request = issued.request
        note = (
            f"one answer for concurrent requests, asked as {shared_with}" if shared_with else None
        )
        answer = read_once(answer)
        returned = returned_type(answer)
        if returned is not None or not isinstance(answer, Decision):
            close = getattr(answer, "close", None)
            if inspect.isawaitable(answer) and close is not None:
                close()  # an awaitable answer nobody will await
            error = not_a_decision_error(
                returned or "an unknown type", name=request.skill, agent=self.agent
            )
            self._record(
                "approval_denied",
                request,
                decision="deny",
                code=error.code,
                approver=getattr(answer, "by", None) or "no valid answer",
                reason=error.reason,
                channel=channel,
            )
            raise error
        decision = answer
        if decision.digest is not None and decision.digest != request.digest:
            error = ApprovalDeniedError(
                "stale_decision",
                "the decision answers another snapshot of this skill than the prepared "
                "request holds (its digest differs): show the new request and ask again",
                name=request.skill,
                agent=self.agent,
            )
            self._record(
                "approval_denied",
                request,
                decision="deny",
                code=error.code,
                approver=decision.by,
                reason=error.reason,
                channel=channel,
            )
            raise error
        said = "; ".join(part for part in (decision.reason, note) if part) or None
        if decision.approved is not True:
            self._record(
                "approval_denied",
                request,
                decision="deny",
                code="denied",
                approver=decision.by,
                reason=said,
                channel=channel,
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
            reason=said,
            channel=channel,
        )
        failure = pin_failure(decision)
        if failure is not None:
            # The human approved and asked for a pin that could not be written: the
            # approval serves this load, and the record says the pin failed (T181).
            self._record(
                "pin_failed",
                request,
                decision="none",
                code=failure.code,
                approver=decision.by,
                scope="pin",
                reason=f"not pinned, served this once: {failure.reason}",
            )
        served = issued.served
        skill = served.snapshot.skill
        # Written before the skill is handed over: no record, no load (AuditError).
        self._auditor.emit(
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
            channel=channel,
        )
        self._state.remember(self.agent, served)
        return LoadedSkill(
            self.agent,
            skill,
            "workspace",
            self._loader,
            served,
            self._state,
            auditor=self._auditor,
        )

    def _grant_embedded(self, skill: Skill, execution: object = None) -> LoadedSkill:
        if skill.name in self._state.workspace_meta:
            self._auditor.emit(
                "shadowing_refused",
                agent=self.agent,
                skill=skill.name,
                source="workspace",
                decision="deny",
                code="embedded_wins",
                reason="the embedded skill of this name is served instead",
            )
        self._auditor.emit(
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
        return LoadedSkill(self.agent, skill, "embedded", self._loader, auditor=self._auditor)

    def _deny(
        self, event: str, name: object, error: SkillError, *, reason: str | None = None
    ) -> None:
        if error.kind == "containment":
            event = "containment_violation"
        elif error.kind == "malformed":
            event = "malformed_skill"
        self._auditor.emit(
            event,
            agent=self.agent,
            skill=name if isinstance(name, str) else None,
            decision="deny",
            code=error.code,
            reason=reason or error.reason,
        )
