"""Approvals not decided yet: the receipts ``prepare`` issued, the approver calls in
flight, and the approver threads nobody waits for any more.

A loader's ``PendingApprovals`` (built by its ``SwarmState``, behind the state's one
lock) keeps:

- pending approvals (``prepare`` receipts not yet redeemed), bounded per agent by count
  and bytes and in total, the flooding agent's oldest evicted first and audited (T36);
- in-flight approvals: the one approver call that concurrent ``aload`` calls of one
  snapshot share, counted in the same bounds until it is decided (T36, T37); a sync
  approver answers in a daemon thread of its own, and the threads nobody waits for any
  more are capped (T112); a call whose event loop was closed is dropped (T113).

The lock is held for bookkeeping only, never while an approver runs or a file is read.
``check_timeout`` reads how long a call waits for an approver.
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

from skillguard._audit.record import AuditError
from skillguard._core.errors import SkillUsageError
from skillguard._skills.approval import (
    NO_ANSWER,
    ApprovalDeniedError,
    ApprovalError,
    ApprovalRequest,
    Decision,
    is_async_approver,
)
from skillguard._skills.truststore import PinningApprover, pin_failure

if TYPE_CHECKING:
    from collections.abc import Callable

    from skillguard._audit.log import Auditor
    from skillguard._core.limits import Limits
    from skillguard._skills.approval import AnyApprover, Approver, AsyncApprover
    from skillguard._swarm.served import PreparedLoad, _Served

__all__ = ["Flight", "Issued", "PendingApprovals", "check_timeout"]

# An approver call that concurrent aload calls share: (event loop, agent, skill, digest).
FlightKey = tuple[int, str, str, str]


@attrs.define(eq=False)
class Issued:
    """A pending approval: what ``prepare`` handed out, and what ``load`` will serve."""

    prepared: PreparedLoad
    request: ApprovalRequest
    served: _Served
    by_user: bool
    cost: int
    # The auditor of the handle that prepared it (a sub-agent's names its parent).
    auditor: Auditor | None = None


@attrs.define(eq=False)
class Flight:
    """One approver call that concurrent ``aload`` calls of one snapshot share, with the
    one snapshot they are all served (the same digest is the same bytes), and the event
    loop they wait in. Holding the loop keeps its id, in the key, from being reused."""

    key: FlightKey
    request: ApprovalRequest
    served: _Served | None  # None for an agent file's request, which no load joins
    cost: int
    loop: asyncio.AbstractEventLoop
    task: asyncio.Future[Any] | None = None
    waiters: int = 0
    cancelling: bool = False
    released: bool = False
    # A sync approver runs in a thread of its own: whether it still runs (once nobody
    # waits for its answer any more, the flight is in ``PendingApprovals._abandoned``).
    thread_running: bool = False
    # The auditor of the handle whose call started it (a sub-agent's names its parent).
    auditor: Auditor | None = None

    @property
    def agent(self) -> str:
        return self.request.agent


def check_timeout(value: object, what: str) -> float | None:
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


class PendingApprovals:
    """A loader's approvals not decided yet (the module docstring), behind *lock*.

    Safe to share across threads and event loops: the state is changed under *lock*
    only, and no approver is called under it.
    """

    def __init__(
        self,
        lock: threading.Lock,
        limits: Limits,
        approver: Approver | AsyncApprover | AnyApprover,
        auditor: Auditor,
    ) -> None:
        self._lock = lock
        self.limits = limits
        self.approver = approver
        self.auditor = auditor
        # Pending approvals, per agent, oldest first; and the bytes each keeps alive.
        self._pending: dict[str, OrderedDict[str, Issued]] = {}
        self._pending_bytes: Counter[str] = Counter()
        self._inflight: dict[FlightKey, Flight] = {}
        # Loads waiting for an approver, per agent: counted in the pending bounds too.
        self._inflight_count: Counter[str] = Counter()
        self._inflight_bytes: Counter[str] = Counter()
        # A sync approver under aload runs in a thread, which cannot be killed: the
        # threads nobody waits for any more, until their human answers (T112).
        self._abandoned: set[Flight] = set()
        # The agent-file approvals (``ask_alone``) being waited for: never joined, but
        # swept like ``_inflight`` when their event loop is closed under them.
        self._alone: set[Flight] = set()
        self.async_approver = is_async_approver(approver)

    # Pending approvals (rule 7 of the handle; T36) ---------------------------------

    def issue(self, issued: Issued) -> None:
        """Keep a pending approval, within the per-agent and total bounds (rule 7)."""
        agent = issued.prepared.agent
        evicted: list[Issued] = []
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

    def _make_room(self, agent: str, count: int, size: int, evicted: list[Issued]) -> bool:
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

    def _audit_evicted(self, evicted: list[Issued]) -> None:
        for gone in evicted:
            (gone.auditor or self.auditor).emit(
                "approval_evicted",
                agent=gone.prepared.agent,
                skill=gone.request.skill,
                source="workspace",
                decision="deny",
                code="evicted",
                reason="too many pending approvals for this agent or in total",
                request_id=gone.request.request_id,
            )

    def _pop_oldest(self, agent: str) -> Issued:
        queue = self._pending[agent]
        _, gone = queue.popitem(last=False)
        self._pending_bytes[agent] -= gone.cost
        if not queue:
            del self._pending[agent]
            del self._pending_bytes[agent]
        return gone

    def redeem(
        self, agent: str, prepared: PreparedLoad, parent: str | None = None
    ) -> Issued | None:
        """The record of *prepared* if this loader issued it to *agent* (a sub-agent's
        handle under *parent*, or one bound on its own for ``None``: T303) and nobody
        used it yet (single use), else ``None``."""
        request = getattr(prepared, "request", None)
        request_id = getattr(request, "request_id", None)
        if not isinstance(request_id, str):
            return None
        with self._lock:
            queue = self._pending.get(agent)
            issued = queue.get(request_id) if queue is not None else None
            if issued is None or issued.prepared is not prepared:
                return None
            if getattr(issued.auditor, "parent", None) != parent:
                return None  # another handle's of this agent: its records name another parent
            del queue[request_id]  # type: ignore[union-attr]
            self._pending_bytes[agent] -= issued.cost
            if not queue:
                del self._pending[agent]
                del self._pending_bytes[agent]
        return issued

    # In-flight approvals (aload; T36-T38, T113) ------------------------------------

    def join_flight(self, issued: Issued) -> tuple[Flight, bool] | ApprovalDeniedError:
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
        evicted: list[Issued] = []
        refusal: ApprovalDeniedError | None = None
        with self._lock:
            swept = self._sweep_closed_loops()
            flight = self._inflight.get(key)
            starter = flight is None
            if flight is not None:
                assert flight.served is not None  # only aload flights are in _inflight
                issued.served = flight.served
                flight.waiters += 1
            elif not (self.async_approver or pinned) and len(self._abandoned) >= cap:
                refusal = ApprovalDeniedError(
                    "too_many_abandoned",
                    f"{len(self._abandoned)} approver calls nobody waits for still wait for "
                    "an answer",
                    name=snapshot.skill.name,
                    agent=issued.prepared.agent,
                )
            else:
                flight = Flight(
                    key, issued.request, issued.served, issued.cost, loop, auditor=issued.auditor
                )
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

    def leave_flight(self, flight: Flight) -> bool:
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

    def land_flight(self, flight: Flight) -> None:
        """The approver answered: a decided approval is not reused by later calls, which
        ask again."""
        with self._lock:
            self._drop_flight(flight)

    def _admit_flight(self, flight: Flight, evicted: list[Issued]) -> bool:
        """Count a load that will wait for an approver in its agent's bounds, if it fits
        (pending requests are evicted to make room). Under the lock."""
        if not self._make_room(flight.agent, 1, flight.cost, evicted):
            return False
        self._inflight_count[flight.agent] += 1
        self._inflight_bytes[flight.agent] += flight.cost
        return True

    def _drop_flight(self, flight: Flight) -> None:
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

    def _sweep_closed_loops(self) -> list[Flight]:
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

    def _audit_swept(self, swept: list[Flight]) -> None:
        for flight in swept:
            (flight.auditor or self.auditor).emit(
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

    async def ask_alone(
        self,
        request: ApprovalRequest,
        ask: Callable[[], object],
        *,
        auditor: Auditor | None = None,
    ) -> object:
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
        flight = Flight(key, request, None, 0, loop, released=True, auditor=auditor)
        with self._lock:
            self._alone.add(flight)
        try:
            return await self.ask_in_thread(flight, ask)
        finally:
            # Timed out or cancelled: the thread still runs, nobody waits for it. A
            # loop closed under this call resumes nothing: the next sweep counts the
            # thread, and this frame, closed when it is collected, must not take the
            # lock (a collection may run while it is held).
            if not loop.is_closed():
                with self._lock:
                    self._alone.discard(flight)
                    self._abandon(flight)

    def _abandon(self, flight: Flight) -> None:
        """Count *flight*'s approver thread as abandoned if it still runs. Under the
        lock."""
        if flight.thread_running:
            self._abandoned.add(flight)

    async def ask_in_thread(self, flight: Flight, ask: Callable[[], object]) -> object:
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
        self, flight: Flight, ask: Callable[[], object], answer: asyncio.Future[object]
    ) -> None:
        """The approver thread: ask, then hand the answer to the waiting loop, or, if
        nobody waits any more, discard it and say so."""
        try:
            result = ask()
        except BaseException:  # noqa: BLE001 - ends only this thread; the state must follow
            result = NO_ANSWER  # an approver that raised SystemExit has not approved
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

    def _settle(self, flight: Flight, answer: asyncio.Future[object], result: object) -> None:
        """In the loop: the answer for the loads waiting, unless the last of them gave up
        while it was on its way."""
        if answer.cancelled():
            self._late(flight, result)
        else:
            answer.set_result(result)

    def _late(self, flight: Flight, result: object) -> None:
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
            (flight.auditor or self.auditor).emit(
                "approval_late",
                **_request_fields(flight.request),
                decision="none",
                code="late_answer",
                approver=decision.by if decision is not None else "no valid answer",
                scope=decision.scope if decision is not None and approved else None,
                reason=f"the approver {'approved' if approved else 'did not approve'} after "
                f"every load waiting for it had ended: the answer was discarded{unpinned}",
            )


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
