"""How an agent's handle selects skills for a task (seed 003): a ranking, never a grant.

``SelectionMixin`` is the part of ``AgentSkills`` (``handle``) that keeps rule 8 of the
handle: ``select`` ranks the same candidates a catalog shows (what the agent may load
and a model may invoke; ``_skills.select`` ranks them), serves a workspace skill only
from a snapshot approved for the agent or pinned by the approver's trust store, the
pin's digest checked against the snapshot before any request exists and the pin, never
a human, the answer (``aselect`` may ask the approver; ``select`` never, T200),
renders what is served within the byte caps, and writes one ``skill_selected``
record per skill (its snapshot digest) and ``skills_selected`` (the task's and the
composed text's hashes) before it returns (T80-T84, T127).
"""

from __future__ import annotations

import hashlib
import secrets
from typing import TYPE_CHECKING

from skillguard._audit.spans import traced
from skillguard._core.errors import SkillError, SkillUsageError
from skillguard._fs.containment import SKILL_FILE
from skillguard._skills.approval import ApprovalRequiredError, Decision
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
from skillguard._skills.truststore import PinningApprover
from skillguard._swarm.loading import LoadingMixin
from skillguard._swarm.pending import Issued
from skillguard._swarm.served import LoadedSkill
from skillguard._swarm.state import folder

if TYPE_CHECKING:
    from collections.abc import Sequence

    from skillguard._skills.discover import SkillMeta
    from skillguard._skills.rank import Considered
    from skillguard._swarm.served import Source

    # What the ranking considered, and how many more it left out of that list.
    Ranked = tuple[tuple[Considered, ...], int]

__all__ = ["SelectionMixin"]


class SelectionMixin(LoadingMixin):
    """The selection of ``AgentSkills`` (the module docstring)."""

    __slots__ = ()

    @traced("skillguard.select", skill_arg=False)
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
        this agent or pinned, its whole digest, in the approver's trust store (the pin
        answers; no human is asked), and otherwise skipped with a reason; use
        ``aselect`` to await the approver.
        Records each skill's snapshot digest (``skill_selected``), then
        ``skills_selected`` with the sha256 of the task (never its text) and of the
        composed text. Raises
        ``SkillUsageError`` for a bad argument and ``AuditError``."""
        args = _selection_args(task, context, max_skills, per_skill_bytes, total_bytes)
        ranked, warnings, why = self._ranked(args[0], args[1])
        return self._compose(args, ranked, warnings, None, why)

    @traced("skillguard.select", skill_arg=False)
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
        ranked, warnings, why = self._ranked(args[0], args[1])
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
        return self._compose(args, ranked, warnings, loaded, why)

    def _ranked(self, task: str, context: str) -> tuple[list[Match], tuple[str, ...], Ranked]:
        """The candidates selected, best first, the registry warnings, and what the
        ranking considered; rule 1 of the handle: only what the agent may load and a
        model may invoke. The candidates and their index are gathered once per agent
        (``SwarmState.selection_index``): a query looks up the index only, and reads
        and renders only the few skills it selects (T262)."""
        loader = self._loader
        registry = loader.registry

        def build() -> tuple[SelectionIndex, dict[str, str], tuple[str, ...]]:
            candidates = self._candidates()
            keywords = registry.keywords if registry is not None else {}
            index = SelectionIndex(
                ((meta.name, meta.description) for meta, _ in candidates), keywords
            )
            names = {meta.name for meta, _ in candidates}
            warnings = tuple(
                f"the registry names {name!r}, which this agent cannot select: ignored"
                for name in sorted(set(keywords) - names)
            )
            return index, {meta.name: source for meta, source in candidates}, warnings

        index, _, warnings = self._state.selection_index(self.agent, registry, build)
        matches, considered, unlisted = index.consider(task, context)
        return matches, warnings, (considered, unlisted)

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
            self.agent,
            served.snapshot.skill,
            "workspace",
            loader,
            served,
            self._state,
            auditor=self._auditor,
        )

    def _served_for_selection(self, name: str) -> LoadedSkill | SkillError:
        """A skill's body for a synchronous selection, through the same gates as
        ``load``: embedded skills load; a workspace skill only from a snapshot approved
        for this agent, or when the approver's own trust store pins that very snapshot
        (its whole folder's digest, not only its ``SKILL.md``), answered by the pin
        alone: a synchronous selection never puts a snapshot to a human (T82, T200),
        not the approver's fallback, nor an approver that is no trust store's."""
        loader = self._loader
        approved = self._approved_for_selection(name)
        if approved is not None:
            return approved
        try:
            source = self._state.source_of(self.agent, name)
            if source == "embedded":
                return self.load(name)
            meta = loader.meta(source, name)
            # The approver's store, not ``loader.trust_store`` (which the catalog reads
            # and which may be another): only the approver's pin is its answer.
            approver = loader.approver
            pinning = approver if isinstance(approver, PinningApprover) else None
            pin = pinning.store.pinned(name, folder(meta)) if pinning is not None else None
            if pinning is None or pin is None or pin.skill_sha256 != meta.sha256:
                return ApprovalRequiredError(
                    "not_approved",
                    "a workspace skill nobody approved or pinned: use aselect",
                    name=name,
                    agent=self.agent,
                )
            prepared = self._prepare(name, by_user=False, execution=None, pinned=pinning.store)
            issued = self._claim(prepared, by_user=False)
            assert isinstance(issued, Issued)  # a workspace skill
            # The pin answers, read again for this very request; never the fallback,
            # even when the pin changed since it was checked.
            answer = pinning.pinned(issued.request)
            return self._decide(issued, answer or Decision(approved=False, by="trust-store"))
        except SkillError as exc:
            return exc

    def _compose(
        self,
        args: tuple[str, str, int, int, int],
        ranked: list[Match],
        warnings: tuple[str, ...],
        loaded: dict[str, LoadedSkill | SkillError] | None,
        why: Ranked = ((), 0),
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
            self.agent,
            task_digest(task),
            tuple(items),
            tuple(skipped),
            "".join(blocks),
            warnings,
            considered=why[0],
            unlisted=why[1],
        )
        self._audit_selection(selection)
        return selection

    def _audit_selection(self, selection: Selection) -> None:
        """One ``skill_selected`` record per skill (what it was served from), then the
        ``skills_selected`` record (the task's and the composed text's sha256), all under
        one selection id: a reviewer can tell exactly what the agent was given."""
        auditor = self._auditor
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
