"""What an agent's handle serves: the receipt of a prepared load, a loaded skill with
its files on demand (tier 3), and a skill as a registry tool (seed 002).

For a workspace skill everything here comes from the snapshot the approver approved
(``_snapshot``): a ``LoadedSkill`` lists that snapshot's manifest and serves a listed
file only while its bytes are the approved ones, and a refused read is audited; a
``PreparedLoad``'s fields are for showing, while ``load`` serves what the loader
recorded (threat-model.md T30, T32).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import attrs

from skillguard._core.errors import SkillContainmentError
from skillguard._skills.approval import ApprovalRequiredError
from skillguard._skills.render import activation_text
from skillguard._skills.snapshot import Snapshot, read_verified

if TYPE_CHECKING:
    from collections.abc import Sequence

    from skillguard._audit.log import Auditor
    from skillguard._core.model import Skill
    from skillguard._fs.containment import SafeRoot
    from skillguard._skills.approval import ApprovalRequest
    from skillguard._swarm.loader import Loader
    from skillguard._swarm.state import SwarmState

__all__ = ["LoadedSkill", "PreparedLoad", "ResourceSlot", "ToolDescriptor"]

Source = Literal["embedded", "workspace"]


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
    # The loader's shared state, for a workspace skill: whether the approval still holds.
    _state: SwarmState | None = attrs.field(default=None, eq=False, repr=False)
    # The auditor of the handle that served it (a sub-agent's names its parent).
    _auditor: Auditor | None = attrs.field(default=None, eq=False, repr=False, kw_only=True)

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

    @property
    def _audit(self) -> Auditor:
        return self._auditor if self._auditor is not None else self._loader.auditor

    def read_resource(self, path: str) -> bytes:
        """One file of the skill. Raises ``SkillUsageError`` (a path that is not a str),
        ``SkillNotFoundError`` (``missing``: not in the skill, or not approved),
        ``ApprovalRequiredError`` (``not_approved``: the approval was withdrawn),
        ``SkillContainmentError`` (``changed_after_approval``, ``path_escape``,
        ``bad_name``) and ``AuditError``."""
        if self._served is None:
            return self._loader.embedded.read_resource(self.name, path)
        served = self._served
        if self._state is None or not self._state.was_approved(self.agent, served):
            # Withdrawn (``AgentSkills.deactivate``): nothing more is served from it.
            error = ApprovalRequiredError(
                "not_approved",
                "this agent's approval of the skill was withdrawn: load it again",
                name=self.name,
                agent=self.agent,
            )
            self._audit.emit(
                "load_denied",
                agent=self.agent,
                skill=self.name,
                source="workspace",
                decision="deny",
                code=error.code,
                reason=error.reason,
                path=path,
                digest=served.snapshot.digest,
            )
            raise error
        try:
            return read_verified(served.root, served.location, served.snapshot, path)
        except SkillContainmentError as exc:
            if exc.code == "changed_after_approval":
                self._audit.emit(
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
