"""The agent handle: one agent, one closed allow-set, approved snapshots, every decision audited.

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
   the agent or pinned, the pin's digest checked against the snapshot before any
   request exists (``aselect`` may ask the approver; ``select`` never), and writes one
   ``skill_selected`` record per skill (its snapshot digest) and ``skills_selected``
   (the task's and the composed text's hashes) before it returns (T80-T84, T127).
9. The skill tool (seed 004, ``_tool``) reads a model's arguments strictly and checks
   the requested name is a skill name before it authorizes it (T85-T86).
10. ``deactivate`` withdraws one agent's approval of a skill: nothing more is served
    from it (selection, files, tool grant, catalog text) until an approver approves
    again (T128).

``AgentSkills`` is assembled from three rooms: this module holds tier 1 (``describe``,
the catalogs), the skill tool, the tool grant, ``deactivate`` and the agent-file
delegates; it inherits the load path (rules 2-4, 6, 7) from ``loading``
(``LoadingMixin``) and selection (rule 8) from ``selection`` (``SelectionMixin``).

A handle is immutable and keeps no state of its own: what it decides from, and the
approvals' bookkeeping, are its loader's shared state (a ``SwarmState``, ``state``,
which ``Loader.bind`` passes down in the handle's token), behind one lock, so handles of
one loader are safe to use from any thread or event loop. No approver is called under
that lock.
"""

from __future__ import annotations

import functools
import hashlib
from typing import TYPE_CHECKING

import attrs

from skillguard._audit.summary import audit_summary
from skillguard._core.errors import (
    MalformedSkillError,
    SkillContainmentError,
    SkillError,
    SkillUsageError,
)
from skillguard._core.tool_rules import narrow
from skillguard._skills.approval import ApprovalRequiredError
from skillguard._skills.render import catalog_json, catalog_xml
from skillguard._skills.tool import ToolInfo, requested_name
from skillguard._skills.tool import execution_id as tool_execution_id
from skillguard._swarm.errors import unknown
from skillguard._swarm.pending import check_timeout
from skillguard._swarm.selection import SelectionMixin
from skillguard._swarm.served import LoadedSkill, PreparedLoad, Source, ToolDescriptor, _descriptor
from skillguard._swarm.state import Binding

if TYPE_CHECKING:
    import os
    import uuid
    from collections.abc import Callable, Mapping, Sequence

    from skillguard._agents.gate import Gate, ServedAgentContext
    from skillguard._core.model import Skill
    from skillguard._fs.walk import Resolver
    from skillguard._skills.discover import SkillMeta
    from skillguard._swarm.loader import Loader

__all__ = ["AgentSkills"]


def _check_token(instance: AgentSkills, attribute: object, value: object) -> None:
    # The token is the ``Binding`` that ``Loader.bind`` issued for this loader and agent:
    # it carries the loader's shared state down to the handle.
    del attribute
    loader = instance._loader  # noqa: SLF001 - the handle's own field
    if not isinstance(value, Binding) or not value.binds(loader, instance.agent):
        raise SkillUsageError("bad_argument", "an agent handle comes from Loader.bind(agent) only")


@attrs.frozen
class AgentSkills(SelectionMixin):
    """What one agent may see and load. Obtain it with ``Loader.bind(agent)``; a handle
    cannot be rebuilt for another agent (``attrs.evolve`` is refused)."""

    _loader: Loader = attrs.field(repr=False)
    agent: str
    _token: object = attrs.field(repr=False, eq=False, validator=_check_token)

    def _bound_by(self, loader: object) -> bool:
        """Whether this handle is one that *loader*'s ``bind`` returned."""
        token = self._token
        return (
            self._loader is loader
            and isinstance(token, Binding)
            and token.binds(loader, self.agent)
        )

    # Tier 1 ------------------------------------------------------------------------

    def allowed(self, name: str) -> bool:
        """The pure membership predicate: no file-system access."""
        return self._loader.policy.allowed(self.agent, name)

    def describe(self, name: str) -> SkillMeta:
        """Metadata only, authorized against the same allow-set as ``load``. A workspace
        skill nobody approved or pinned has an empty description and location."""
        try:
            source = self._state.source_of(self.agent, name)
        except SkillError as exc:
            self._deny("describe_denied", name, exc)
            raise
        meta = self._loader.meta(source, name)
        return self._shown(meta, source, self._state.reviewed(self._auditor))

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
        reviewed = self._state.reviewed(self._auditor)
        for name in sorted(grant.skills if grant is not None else ()):
            try:
                source = self._state.source_of(self.agent, name)
            except SkillError:
                continue
            meta = self._loader.meta(source, name)
            if meta.disable_model_invocation:
                continue
            entries.append((self._shown(meta, source, reviewed), source))
        # Recorded when what the agent sees changes, not at every prompt rebuild.
        digest = hashlib.sha256(repr(entries).encode("utf-8", "backslashreplace")).hexdigest()
        if self._state.catalog_changed(self.agent, digest):
            self._auditor.emit(
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

    def invoke(self, args: str | bytes | Mapping[str, object]) -> str:
        """Run one model call of the tool: the activation text of the skill named in
        *args*, the call's arguments as JSON text or as the mapping an SDK parsed them
        into (the same rules for both; T217). Raises ``MalformedSkillError``
        (``bad_arguments``), ``SkillContainmentError`` (``bad_name``, before
        authorization), ``SkillUsageError`` (neither text nor a mapping), and what
        ``load`` raises."""
        return self.load(self._tool_name(args)).activation()

    async def ainvoke(
        self, args: str | bytes | Mapping[str, object], *, timeout: float | None = None
    ) -> str:
        """``invoke`` for asyncio swarms (``aload``)."""
        name = self._tool_name(args)
        return (await self.aload(name, timeout=timeout)).activation()

    def prepare_call(
        self, execution_id: str | uuid.UUID, args: str | bytes | Mapping[str, object]
    ) -> PreparedLoad:
        """``prepare`` for one model call of the tool, identified by the host's
        *execution_id*, which travels in the ``ApprovalRequest`` and in the call's
        audit records. Pass the result to ``load`` or ``aload``. Raises what
        ``invoke`` raises, and ``SkillUsageError`` for a bad *execution_id*."""
        execution = tool_execution_id(execution_id)
        return self._prepare(self._tool_name(args), by_user=False, execution=execution)

    def _tool_name(self, args: object) -> str:
        try:
            return requested_name(args)
        except (MalformedSkillError, SkillContainmentError) as exc:
            self._deny("load_denied", None, exc)
            raise

    # What an approval grants, and withdrawing it ------------------------------------

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
                raise unknown(self.agent, name)
            if served is not None:
                if not self._state.was_approved(self.agent, served):
                    # The name is granted (checked above): the cause is the approval,
                    # named as read_resource names it (one name per cause).
                    raise ApprovalRequiredError(
                        "not_approved",
                        "this agent's approval of the skill was withdrawn, or never given: "
                        "load it again",
                        name=name,
                        agent=self.agent,
                    )
                skill = served.snapshot.skill
            else:
                embedded = self._loader.embedded.get(name)
                if embedded is None:
                    raise unknown(self.agent, name)
                skill = embedded
        elif isinstance(target, str):
            source = self._state.source_of(self.agent, target)
            if source == "embedded":
                embedded = self._loader.embedded.get(target)
                assert embedded is not None
                skill = embedded
            else:
                approved = self._state.approved_snapshot(self.agent, target)
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

    def deactivate(self, name: str) -> bool:
        """Withdraw this agent's approval of workspace skill *name* in this loader (seed
        002's ``deactivate``). From now on ``select`` does not serve it and
        ``tool_descriptor`` shows its name only; a ``LoadedSkill`` already handed out
        refuses ``read_resource`` and ``effective_tools``; catalogs show its name only
        unless another agent's approval or a pin covers that ``SKILL.md``; and the next
        ``load`` or ``aselect`` asks the approver again. A pin is the operator's and is
        not touched (``TrustStore.revoke``); text already handed out cannot be taken
        back. Returns whether there was an approval to withdraw, and records
        ``skill_deactivated`` (with the digest approved last) when there was. Raises
        ``SkillUsageError`` for a name that is not a str, and ``AuditError``."""
        if not isinstance(name, str):
            raise SkillUsageError("bad_argument", "a skill name must be a str")
        withdrawn = self._state.forget(self.agent, name)
        if withdrawn is None:
            return False
        digest, count = withdrawn
        # Withdrawn before it is recorded: a log that cannot be written must not keep
        # an approval the host asked to drop.
        self._auditor.emit(
            "skill_deactivated",
            agent=self.agent,
            skill=name,
            source="workspace",
            decision="revoke",
            digest=digest,
            reason=f"{count} approved snapshot(s) withdrawn for this agent; digest: the last",
        )
        return True

    def audit_summary(self, args: str | Mapping[str, object]) -> str:
        return audit_summary(args)

    # Agent files: a thin delegate into the approval gate (``_agents/_gate.py``) --------

    def _agent_gate(self) -> Gate:
        # Imported here: ``import skillguard`` loads the skill line only, and the agent
        # line on a host's first call.
        from skillguard._agents.gate import Gate  # noqa: PLC0415

        loader = self._loader
        return Gate(
            self.agent,
            loader.approver,
            self._auditor,
            loader.limits,
            loader.profile,
            loader.approval_timeout,
            # The loader's capped approver threads; their records name this handle's parent.
            functools.partial(self._state.pending.ask_alone, auditor=self._auditor),
        )

    def agent_context(
        self,
        agent: str,
        *,
        repo: str | os.PathLike[str],
        team: str | None = None,
        harnesses: tuple[str, ...] = (),
        operator_agents: Sequence[str | os.PathLike[str]] = (),
        resolver: Resolver = "auto",
    ) -> ServedAgentContext:
        """An agent file and its knowledge files for this agent's prompt, through the
        approval gate: the operator's own file at once, a workspace file only once the
        loader's approver approved (or a trust store pinned) its exact snapshot. Raises
        ``ApprovalDeniedError`` (``not_approved``), ``ApprovalRequiredError``
        (``async_approver``), ``SkillContainmentError`` (``changed_after_approval``),
        the errors of ``load_agent_context``, ``AuditError``, ``SkillUsageError``."""
        from skillguard._agents.gate import agent_context  # noqa: PLC0415 - see _agent_gate

        return agent_context(
            self._agent_gate(),
            repo,
            agent,
            team=team,
            harnesses=harnesses,
            operator_agents=operator_agents,
            resolver=resolver,
        )

    async def aagent_context(
        self,
        agent: str,
        *,
        repo: str | os.PathLike[str],
        team: str | None = None,
        harnesses: tuple[str, ...] = (),
        operator_agents: Sequence[str | os.PathLike[str]] = (),
        resolver: Resolver = "auto",
        timeout: float | None = None,
    ) -> ServedAgentContext:
        """``agent_context`` for asyncio hosts: awaits an async approver, at most
        *timeout* seconds (default: the loader's ``approval_timeout``)."""
        from skillguard._agents.gate import aagent_context  # noqa: PLC0415 - see _agent_gate

        if timeout is not None:
            timeout = check_timeout(timeout, "timeout")
        return await aagent_context(
            self._agent_gate(),
            repo,
            agent,
            team=team,
            harnesses=harnesses,
            operator_agents=operator_agents,
            resolver=resolver,
            timeout=timeout,
        )


def _location(meta: SkillMeta) -> str:
    if not meta.root:
        return ""  # not approved: no location reaches a prompt
    return f"{meta.root}/{meta.location}/SKILL.md" if meta.location else f"{meta.root}/SKILL.md"
