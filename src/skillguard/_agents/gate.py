"""The approval gate for agent files: what reaches a prompt was approved, or is the operator's.

Rules (threat-model.md T121-T126, T150; ARCHITECTURE.md rules 4 and 5):

* Where a file is decides its trust, and an operator folder is searched first and
  wins (``operator``): a file beneath the operator's own folders is trusted, every
  file beneath the repository is the workspace's.
* ``core_knowledge`` paths are always read beneath the repository (seed 000). An
  envelope is served without approval only when every byte it serves is the
  operator's: an operator agent file that pulls in a knowledge file from the workspace
  needs an approval like a workspace agent file.
* An approval binds a snapshot of the agent file and every knowledge file, and
  ``knowledge`` serves exactly the attachments the human was shown whole (``snapshot``,
  T150).
* What is served after approval is the snapshot: the parsed agent file as read for the
  request (never read again), and each knowledge file's attachment, once the file,
  read again through the same descriptor, is still byte for byte the approved one
  (the agent will follow its ``Read`` directive itself); anything else refuses the
  whole envelope (``changed_after_approval``).
* Deny by default. No approver, an approver that says no, fails or answers anything
  but an approving ``Decision`` is ``ApprovalDeniedError`` (``denied``, as for a skill); an
  answer that is no ``Decision`` at all is ``not_a_decision``, and a ``Decision`` that
  names another snapshot's digest ``stale_decision`` (T219, T221). A pin
  is keyed by the agent file's repository-relative path and ``agent:`` + its absolute
  path (``pin_key``), never by a name made from the file name: every file the resolver
  reaches can be approved and pinned, and a skill's pin never approves an agent file.
* The operator's flow (``trust show --agent``, ``trust add --agent``) reads through
  this module's ``_Call`` and ``snapshot._request`` (``review``): the digest reviewed
  and the key pinned are the ones a gated call looks up.
* Under ``aagent_context`` a sync approver is asked in the loader's own approver
  threads (``PendingApprovals.ask_alone``): capped, abandoned when the call stops waiting, its
  late answer audited (T112, T131).
* Every outcome is audited before the caller sees it: ``agent_approval_requested``,
  then ``agent_context_served`` or ``agent_context_denied``. If the record cannot be
  written, nothing is served (``AuditError``).
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import os
from typing import TYPE_CHECKING

import attrs

from skillguard._agents.envelope import agent_envelope
from skillguard._agents.operator import _operator_agent
from skillguard._agents.place import check_operator_folders, check_trust_store
from skillguard._agents.resolve import (
    AgentContext,
    KnowledgeFile,
    check_arguments,
    resolve_in,
)
from skillguard._agents.snapshot import _request, _snapshot
from skillguard._core.errors import (
    SkillContainmentError,
    SkillError,
    SkillUsageError,
    safe_repr,
)
from skillguard._fs.containment import SafeRoot
from skillguard._fs.paths import display_path, operator_path
from skillguard._skills.approval import (
    NO_ANSWER,
    ApprovalDeniedError,
    ApprovalRequest,
    ApprovalRequiredError,
    Decision,
    is_async_approver,
    not_a_decision_error,
    returned_type,
)
from skillguard._skills.truststore import PinningApprover, pin_failure

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from skillguard._agents.snapshot import Source, _Snapshot
    from skillguard._audit.log import Auditor
    from skillguard._core.limits import Limits
    from skillguard._core.model import Profile
    from skillguard._fs.walk import Resolver

__all__ = ["Gate", "ServedAgentContext", "aagent_context", "agent_context"]


@attrs.frozen(kw_only=True)
class ServedAgentContext:
    """An agent file and its knowledge files as the gate served them.

    ``source`` is ``"operator"`` (every byte from the operator's own folders, served
    without approval) or ``"workspace"`` (approved, or pinned). ``digest`` is the
    manifest digest of everything served; ``approver`` who approved it (``"operator"``
    for an operator's file). ``knowledge`` holds one entry per ``core_knowledge``
    directive: the approved text, or the typed error the approver was shown.
    """

    context: AgentContext
    knowledge: tuple[KnowledgeFile, ...]
    source: Source
    digest: str
    approver: str

    def envelope(self) -> dict[str, object]:
        """The seed's success envelope (``AgentContext.envelope``) of the served file."""
        return agent_envelope(self.context.definition, self.context.source_path)


@attrs.frozen
class Gate:
    """What the gate decides with: the host's approver, auditor, limits and profile,
    and the name of the agent that asks (the bound agent of a handle, or ``cli``)."""

    requester: str
    approver: Callable[[ApprovalRequest], object]
    auditor: Auditor
    limits: Limits
    profile: Profile
    timeout: float | None = None
    # How ``aagent_context`` asks a sync approver: the loader's own approver threads
    # (``PendingApprovals.ask_alone``), under its cap on abandoned ones (T112, T131).
    ask_alone: Callable[[ApprovalRequest, Callable[[], object]], Awaitable[object]] | None = None


def _changed(why: str) -> SkillContainmentError:
    return SkillContainmentError(
        "changed_after_approval", f"a knowledge file changed after approval ({why})"
    )


def _serve(root: SafeRoot, snap: _Snapshot, approver: str) -> ServedAgentContext:
    """The approved snapshot. Each knowledge entry serves its attachment, the very text
    the approver was shown whole, and nothing else: no entry can serve text the request
    did not show. The file is read again, and the envelope refused unless it is still
    byte for byte the approved one: the agent will follow its ``Read`` directive on its
    own, and must find there what the human approved."""
    served: list[KnowledgeFile] = []
    for entry in snap.entries:
        attachment = entry.attachment
        if attachment is None:
            served.append(
                KnowledgeFile(directive=entry.directive, path=entry.path, error=entry.error)
            )
            continue
        try:
            data = root.read_file(attachment.path, cap=attachment.size)
        except SkillError as exc:
            raise _changed(f"{exc.code}: {exc.reason}") from exc
        if len(data) != attachment.size or hashlib.sha256(data).hexdigest() != attachment.sha256:
            raise _changed("its bytes differ from the approved ones")
        served.append(
            KnowledgeFile(
                directive=entry.directive,
                path=entry.path,
                text=attachment.text,
                sha256=attachment.sha256,
            )
        )
    return ServedAgentContext(
        context=snap.context,
        knowledge=tuple(served),
        source="workspace" if snap.workspace_bytes else "operator",
        digest=snap.manifest.digest,
        approver=approver,
    )


def _denied(gate: Gate, agent: object, error: SkillError, **fields: object) -> None:
    # A human's own reason for a "no", when the approver gave one, else the error's.
    reason = fields.pop("reason", None) or error.reason
    gate.auditor.emit(
        "agent_context_denied",
        agent=gate.requester,
        skill=agent if isinstance(agent, str) else None,
        decision="deny",
        code=error.code,
        reason=reason,
        **fields,
    )


def _granted(gate: Gate, snap: _Snapshot, served: ServedAgentContext, **fields: object) -> None:
    gate.auditor.emit(
        "agent_context_served",
        agent=gate.requester,
        skill=snap.context.identity,
        source=served.source,
        decision="allow",
        path=snap.file,
        size=snap.manifest.total_bytes,
        sha256=snap.context.definition.sha256,
        digest=served.digest,
        approver=served.approver,
        **fields,
    )


class _Call:
    """One gated call: resolve, snapshot, then either serve at once or ask."""

    def __init__(
        self,
        gate: Gate,
        repo: object,
        agent: object,
        *,
        team: object,
        harnesses: object,
        operator_agents: object,
        resolver: Resolver,
    ) -> None:
        self.gate = gate
        self.agent = agent
        self.team = team
        self.harnesses = harnesses
        self.operator_agents = operator_agents
        self.resolver = resolver
        self.repo = operator_path(repo, "the repository")
        self.root: SafeRoot | None = None

    def open(self) -> _Snapshot:
        gate = self.gate
        agent, team, harnesses, limits = check_arguments(
            self.agent, self.team, self.harnesses, gate.limits
        )
        folders = check_operator_folders(self.repo, self.operator_agents)
        if isinstance(gate.approver, PinningApprover):
            check_trust_store(self.repo, gate.approver.store.path)
        operator = _operator_agent(folders, agent, limits, gate.profile, self.resolver)
        self.root = SafeRoot(self.repo, resolver=self.resolver)
        if operator is not None:
            context, file, display = operator
            # Listed by its absolute path, which no knowledge path (beneath the
            # repository) can name: nothing of it is read as a knowledge file.
            return _snapshot(self.root, context, "operator", file, display, limits, {})
        read: dict[str, bytes] = {}
        context = resolve_in(
            self.root, agent, team, harnesses, limits, gate.profile, read.__setitem__
        )
        file = display_path(os.path.abspath(os.path.join(self.repo, context.source_path)))
        shown = display_path(self.repo)
        return _snapshot(self.root, context, "workspace", file, shown, limits, read)

    def close(self) -> None:
        if self.root is not None:
            self.root.close()


def _check_gate(gate: object) -> Gate:
    if not isinstance(gate, Gate):  # pragma: no cover - built by skillguard only
        raise SkillUsageError("bad_argument", "gate must be a Gate")
    return gate


def _decide(
    gate: Gate, call: _Call, snap: _Snapshot, request: ApprovalRequest, answer: object
) -> ServedAgentContext:
    returned = returned_type(answer)
    if returned is not None or not isinstance(answer, Decision):
        close = getattr(answer, "close", None)
        if inspect.isawaitable(answer) and close is not None:
            close()  # an awaitable answer nobody will await
        error = not_a_decision_error(returned or "an unknown type")
        _denied(
            gate,
            snap.context.identity,
            error,
            approver=getattr(answer, "by", None) or "no valid answer",
            request_id=request.request_id,
            digest=request.digest,
        )
        raise error
    decision = answer
    if decision.digest is not None and decision.digest != request.digest:
        error = ApprovalDeniedError(
            "stale_decision",
            "the decision answers another snapshot of this agent file than the one asked "
            "about (its digest differs): ask again",
        )
        _denied(
            gate,
            snap.context.identity,
            error,
            approver=decision.by,
            request_id=request.request_id,
            digest=request.digest,
        )
        raise error
    if decision.approved is not True:
        by = decision.by
        error = ApprovalDeniedError(
            "denied",
            f"the workspace agent file was not approved (approver: {safe_repr(by)}): pin it "
            "in a trust store or approve it",
        )
        _denied(
            gate,
            snap.context.identity,
            error,
            approver=by,
            request_id=request.request_id,
            digest=request.digest,
            reason=decision.reason,
        )
        raise error
    assert call.root is not None
    try:
        served = _serve(call.root, snap, decision.by)
    except SkillError as exc:
        _denied(
            gate,
            snap.context.identity,
            exc,
            approver=decision.by,
            request_id=request.request_id,
            digest=request.digest,
        )
        raise
    failure = pin_failure(decision)
    if failure is not None:  # approved, but the pin asked for was not written (T181)
        gate.auditor.emit(
            "pin_failed",
            agent=gate.requester,
            skill=snap.context.identity,
            source="workspace",
            decision="none",
            code=failure.code,
            reason=f"not pinned, served this once: {failure.reason}",
            approver=decision.by,
            scope="pin",
            request_id=request.request_id,
            digest=request.digest,
        )
    _granted(
        gate,
        snap,
        served,
        scope=decision.scope,
        request_id=request.request_id,
        reason=decision.reason,
    )
    return served


def _begin(gate: Gate, call: _Call) -> _Snapshot | ServedAgentContext:
    """Resolve and snapshot; an envelope of the operator's own bytes is served here."""
    try:
        snap = call.open()
        if not snap.workspace_bytes:
            assert call.root is not None
            served = _serve(call.root, snap, "operator")
            _granted(gate, snap, served)
            return served
    except SkillError as exc:
        if exc.kind != "audit":
            _denied(gate, call.agent, exc)
        raise
    return snap


def _asked(gate: Gate, snap: _Snapshot) -> ApprovalRequest:
    request = _request(gate, snap)
    gate.auditor.emit(
        "agent_approval_requested",
        agent=gate.requester,
        skill=snap.context.identity,
        source="workspace",
        path=snap.file,
        size=snap.manifest.total_bytes,
        sha256=snap.context.definition.sha256,
        digest=snap.manifest.digest,
        request_id=request.request_id,
    )
    return request


def agent_context(
    gate: Gate,
    repo: object,
    agent: object,
    *,
    team: object = None,
    harnesses: object = (),
    operator_agents: object = (),
    resolver: Resolver = "auto",
) -> ServedAgentContext:
    """Resolve *agent* and serve it through the gate (the module docstring's rules).

    Raises ``ApprovalDeniedError`` (``denied``), ``ApprovalRequiredError``
    (``async_approver``: use ``aagent_context``), ``SkillContainmentError``
    (``changed_after_approval`` and the read refusals), the errors of
    ``load_agent_context``, ``AuditError`` and ``SkillUsageError``.
    """
    gate = _check_gate(gate)
    call = _Call(
        gate,
        repo,
        agent,
        team=team,
        harnesses=harnesses,
        operator_agents=operator_agents,
        resolver=resolver,
    )
    try:
        begun = _begin(gate, call)
        if isinstance(begun, ServedAgentContext):
            return begun
        request = _asked(gate, begun)
        answer = _ask(gate, request)
        if inspect.isawaitable(answer):
            close = getattr(answer, "close", None)
            if close is not None:
                close()
            error = ApprovalRequiredError(
                "async_approver", "the approver is async: use aagent_context()"
            )
            _denied(gate, begun.context.identity, error, request_id=request.request_id)
            raise error
        return _decide(gate, call, begun, request, answer)
    finally:
        call.close()


def _ask(gate: Gate, request: ApprovalRequest) -> object:
    try:
        return gate.approver(request)
    except Exception:  # noqa: BLE001 - an approver that fails has not approved
        return NO_ANSWER


async def _aask(gate: Gate, request: ApprovalRequest) -> object:
    if is_async_approver(gate.approver):
        answer = _ask(gate, request)
    else:
        # A human at a console must not block the event loop, nor hold a worker of the
        # loop's executor forever: the loader's approver threads are capped (T131).
        assert gate.ask_alone is not None  # checked by aagent_context
        answer = await gate.ask_alone(request, lambda: _ask(gate, request))
    if inspect.isawaitable(answer):
        try:
            answer = await answer
        except Exception:  # noqa: BLE001 - an approver that fails has not approved
            return NO_ANSWER
    return answer


async def aagent_context(
    gate: Gate,
    repo: object,
    agent: object,
    *,
    team: object = None,
    harnesses: object = (),
    operator_agents: object = (),
    resolver: Resolver = "auto",
    timeout: float | None = None,
) -> ServedAgentContext:
    """``agent_context`` for asyncio hosts: awaits an async approver, at most *timeout*
    seconds (default: the gate's; ``ApprovalDeniedError``, ``timed_out``). A cancelled
    call is audited and re-raises ``CancelledError``."""
    gate = _check_gate(gate)
    if gate.ask_alone is None:  # pragma: no cover - built by skillguard only
        raise SkillUsageError("bad_argument", "an async gate needs the loader's approver threads")
    limit = gate.timeout if timeout is None else timeout
    call = _Call(
        gate,
        repo,
        agent,
        team=team,
        harnesses=harnesses,
        operator_agents=operator_agents,
        resolver=resolver,
    )
    try:
        begun = _begin(gate, call)
        if isinstance(begun, ServedAgentContext):
            return begun
        request = _asked(gate, begun)
        try:
            answer = await asyncio.wait_for(_aask(gate, request), limit)
        except asyncio.TimeoutError:
            error = ApprovalDeniedError(
                "timed_out", f"the approver did not answer within {limit} seconds"
            )
            _denied(gate, begun.context.identity, error, request_id=request.request_id)
            raise error from None
        except ApprovalDeniedError as exc:  # too_many_abandoned: the human was not asked
            _denied(gate, begun.context.identity, exc, request_id=request.request_id)
            raise
        except asyncio.CancelledError:
            gate.auditor.emit(
                "agent_context_denied",
                agent=gate.requester,
                skill=begun.context.identity,
                decision="deny",
                code="cancelled",
                reason="the call was cancelled",
                request_id=request.request_id,
            )
            raise
        return _decide(gate, call, begun, request, answer)
    finally:
        call.close()
