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

A handle is immutable and keeps no state of its own: what it decides from, and the
approvals' bookkeeping, are its loader's shared state (a ``SwarmState``, ``state``,
which ``Loader.bind`` passes down in the handle's token), behind one lock, so handles of
one loader are safe to use from any thread or event loop. No approver is called under
that lock.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import secrets
from typing import TYPE_CHECKING, Any, cast

import attrs

from skillguard._audit.log import audit_summary
from skillguard._core.errors import (
    MalformedSkillError,
    SkillContainmentError,
    SkillError,
    SkillUsageError,
)
from skillguard._core.model import Skill
from skillguard._core.tool_rules import narrow
from skillguard._fs.containment import SKILL_FILE
from skillguard._skills.approval import (
    ApprovalDeniedError,
    ApprovalRequest,
    ApprovalRequiredError,
    Decision,
    make_request,
    pin_failure,
    request_cost,
)
from skillguard._skills.render import catalog_json, catalog_xml
from skillguard._skills.select import (
    Match,
    SelectedSkill,
    Selection,
    SelectionIndex,
    SkippedSkill,
    render_bounded,
    task_digest,
)
from skillguard._skills.snapshot import ManifestFile, manifest_digest
from skillguard._skills.tool import ToolInfo, requested_name
from skillguard._skills.tool import execution_id as tool_execution_id
from skillguard._swarm.errors import UnknownSkillError, unknown
from skillguard._swarm.pending import Flight, Issued, check_timeout
from skillguard._swarm.served import LoadedSkill, PreparedLoad, Source, ToolDescriptor, _descriptor
from skillguard._swarm.state import Binding, folder

if TYPE_CHECKING:
    import os
    import uuid
    from collections.abc import Callable, Mapping, Sequence

    from skillguard._agents.gate import Gate, ServedAgentContext
    from skillguard._fs.containment import Resolver
    from skillguard._skills.approval import TrustStore
    from skillguard._skills.discover import SkillMeta
    from skillguard._swarm.loader import Loader
    from skillguard._swarm.state import SwarmState

__all__ = ["AgentSkills"]


def _valid_decision(value: object) -> Decision | None:
    return value if isinstance(value, Decision) else None


def _check_token(instance: AgentSkills, attribute: object, value: object) -> None:
    # The token is the ``Binding`` that ``Loader.bind`` issued for this loader and agent:
    # it carries the loader's shared state down to the handle.
    del attribute
    loader = instance._loader  # noqa: SLF001 - the handle's own field
    if not isinstance(value, Binding) or not value.binds(loader, instance.agent):
        raise SkillUsageError("bad_argument", "an agent handle comes from Loader.bind(agent) only")


@attrs.frozen
class AgentSkills:
    """What one agent may see and load. Obtain it with ``Loader.bind(agent)``; a handle
    cannot be rebuilt for another agent (``attrs.evolve`` is refused)."""

    _loader: Loader = attrs.field(repr=False)
    agent: str
    _token: object = attrs.field(repr=False, eq=False, validator=_check_token)

    @property
    def _state(self) -> SwarmState:
        """The loader's shared state, which ``bind`` passed down in the token."""
        return cast("Binding", self._token).state

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
        return self._shown(meta, source, self._state.reviewed())

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
        reviewed = self._state.reviewed()
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
        this agent or pinned in the trust store (the approver is asked only about a
        snapshot whose whole digest the store pins, so that it answers from the pin),
        and otherwise skipped with a reason; use ``aselect`` to await the approver.
        Records each skill's snapshot digest (``skill_selected``), then
        ``skills_selected`` with the sha256 of the task (never its text) and of the
        composed text. Raises
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
        index = self._state.selection_index(
            self.agent,
            key,
            lambda: SelectionIndex(((name, text) for name, text, _, _ in candidates), registry),
        )
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
                source = self._state.source_of(self.agent, name)
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
        if loader.embedded.get(name) is not None or name not in self._state.workspace_meta:
            return None
        served = self._state.approved_snapshot(self.agent, name)
        if served is None or served.snapshot.skill.sha256 != loader.meta("workspace", name).sha256:
            return None
        return LoadedSkill(
            self.agent, served.snapshot.skill, "workspace", loader, served, self._state
        )

    def _served_for_selection(self, name: str) -> LoadedSkill | SkillError:
        """A skill's body for a synchronous selection, through the same gates as
        ``load``: embedded skills load; a workspace skill only from a snapshot approved
        for this agent, or through the approver when the trust store pins that very
        snapshot (its whole folder's digest, not only its ``SKILL.md``): a synchronous
        selection never puts an unpinned snapshot to a human (T82)."""
        loader = self._loader
        approved = self._approved_for_selection(name)
        if approved is not None:
            return approved
        try:
            source = self._state.source_of(self.agent, name)
            if source == "embedded":
                return self.load(name)
            meta = loader.meta(source, name)
            store = loader.trust_store
            pin = store.pinned(name, folder(meta)) if store is not None else None
            if store is None or pin is None or pin.skill_sha256 != meta.sha256:
                return ApprovalRequiredError(
                    "not_approved",
                    "a workspace skill nobody approved or pinned: use aselect",
                    name=name,
                    agent=self.agent,
                )
            return self.load(self._prepare(name, by_user=False, execution=None, pinned=store))
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
                    _served_digest(served),
                )
            )
        selection = Selection(
            self.agent, task_digest(task), tuple(items), tuple(skipped), "".join(blocks), warnings
        )
        self._audit_selection(selection)
        return selection

    def _audit_selection(self, selection: Selection) -> None:
        """One ``skill_selected`` record per skill (what it was served from), then the
        ``skills_selected`` record (the task's and the composed text's sha256), all under
        one selection id: a reviewer can tell exactly what the agent was given."""
        auditor = self._loader.auditor
        selection_id = secrets.token_hex(16)
        for item in selection.items:
            auditor.emit(
                "skill_selected",
                agent=self.agent,
                skill=item.name,
                source=item.source,
                decision="allow",
                size=item.bytes,
                digest=item.digest,
                reason="cut at per_skill_bytes" if item.truncated else "whole",
                request_id=selection_id,
            )
        auditor.emit(
            "skills_selected",
            agent=self.agent,
            decision="allow" if selection.items else "none",
            skill=",".join(selection.names) or None,
            size=selection.total_bytes,
            sha256=selection.task_sha256,
            digest=selection.text_sha256,
            reason="; ".join(
                f"{item.name}: {item.bytes} bytes{', truncated' if item.truncated else ''}"
                for item in selection.items
            )
            or "nothing matched",
            request_id=selection_id,
        )

    # Tier 2 ------------------------------------------------------------------------

    def prepare(self, name: str, *, by_user: bool = False) -> PreparedLoad:
        """Read the skill once; for a workspace skill, the request a human must approve.

        *by_user* says the host's user asked for the skill by name (``user_invoke``):
        only then does a ``disable-model-invocation`` skill load. Raises
        ``UnknownSkillError``, the parser and containment errors, and ``AuditError``.
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
        self._state.pending.issue(
            Issued(
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
        return self._load_here(target, by_user=False, instead="aload()")

    async def aload(
        self, target: str | PreparedLoad, *, timeout: float | None = None
    ) -> LoadedSkill:
        """``load`` for asyncio swarms: awaits an async approver (a sync one answers in
        a thread of its own), at most *timeout* seconds (default: the loader's
        ``approval_timeout``). Concurrent calls for the same agent and snapshot share one
        approver call. Raises what ``load`` raises, ``ApprovalDeniedError``
        (``timed_out``, ``too_many_pending``, ``too_many_abandoned``); a cancelled call
        is audited and re-raises ``CancelledError``."""
        return await self._aload(target, timeout=timeout, by_user=False)

    def user_invoke(self, target: str | PreparedLoad) -> LoadedSkill:
        """``load`` for a skill the host's USER asked for by name (a slash command):
        the only way a ``disable-model-invocation: true`` skill loads. A skill with
        ``user-invocable: false`` is refused (``not_user_invocable``)."""
        return self._load_here(target, by_user=True, instead="auser_invoke()")

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
        self, target: str | PreparedLoad, *, timeout: float | None = None
    ) -> LoadedSkill:
        """``user_invoke`` for asyncio hosts."""
        return await self._aload(target, timeout=timeout, by_user=True)

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
            answer = None
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
            return None
        return answer

    def _outcome(self, issued: Issued, event: str, code: str, reason: str) -> None:
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
                raise unknown(self.agent, name)
            if served is not None:
                if not self._state.was_approved(self.agent, served):
                    raise unknown(self.agent, name)
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
        self._loader.auditor.emit(
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
            loader.auditor,
            loader.limits,
            loader.profile,
            loader.approval_timeout,
            self._state.pending.ask_alone,  # the loader's capped approver threads
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
        issued = self._state.pending.redeem(self.agent, prepared)
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
        self, issued: Issued, answer: object, *, shared_with: str | None = None
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
        self._state.remember(self.agent, served)
        return LoadedSkill(self.agent, skill, "workspace", self._loader, served, self._state)

    def _grant_embedded(self, skill: Skill, execution: object = None) -> LoadedSkill:
        if skill.name in self._state.workspace_meta:
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


def _served_digest(loaded: LoadedSkill) -> str:
    """The manifest digest of the files *loaded* is served from: its approved snapshot's,
    or, for an embedded skill, the same digest over its files (computed once)."""
    served = loaded._served  # noqa: SLF001 - a value the handle serves
    if served is not None:
        return served.snapshot.digest
    embedded = loaded._loader.embedded  # noqa: SLF001
    known = embedded._digests.get(loaded.name)  # noqa: SLF001
    if known is not None:
        return known
    files = [ManifestFile(SKILL_FILE, loaded.skill.size, loaded.skill.sha256)]
    for path in embedded.resources(loaded.name):
        data = embedded.read_resource(loaded.name, path)
        files.append(ManifestFile(path, len(data), hashlib.sha256(data).hexdigest()))
    digest = manifest_digest(tuple(sorted(files, key=lambda entry: entry.path)))
    # Two threads may both compute it: they store the same value.
    embedded._digests[loaded.name] = digest  # noqa: SLF001
    return digest


def _location(meta: SkillMeta) -> str:
    if not meta.root:
        return ""  # not approved: no location reaches a prompt
    return f"{meta.root}/{meta.location}/SKILL.md" if meta.location else f"{meta.root}/SKILL.md"
