"""A loader's shared state: what every agent's handle decides from, behind one lock.

``Loader`` builds one ``SwarmState`` and ``Loader.bind`` passes it down to each handle
inside the handle's token (``Binding``), so a handle reaches it without reaching into
the loader. It holds:

- the sources, read-only after construction: the embedded skills, and the workspace
  skills as the loader's one discovery found them (where each is, and why each folder
  not taken was refused); ``source_of`` authorizes and locates (rules 1 to 3 of the
  handle, ``handle``), ``snapshot`` reads a workspace skill's folder once;
- the approvals not decided yet (``pending``, a ``PendingApprovals``);
- the snapshots approved per agent, and the ``SKILL.md`` hashes a human approved, which
  decide whether a catalog may show a workspace skill's description (T34);
- per agent: the digest of the catalog last recorded, the selection index and the
  token ``bind`` issued.

Its mutable state is behind one lock, held for bookkeeping only, never while an
approver runs or a file is read. Code running in the same process is inside the trust
boundary: it can reach any object's private state, and the guards here stop mistakes
and confused deputies, not a hostile in-process caller.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

import attrs

from skillguard._audit.log import Auditor
from skillguard._core.errors import SkillNotFoundError, SkillUsageError, input_error
from skillguard._skills.approval import ApprovalError
from skillguard._skills.discover import SkillMeta, source_folder
from skillguard._skills.snapshot import take_snapshot
from skillguard._swarm.errors import unknown
from skillguard._swarm.pending import PendingApprovals
from skillguard._swarm.served import _Served

if TYPE_CHECKING:
    from collections.abc import Callable

    from skillguard._core.limits import Limits
    from skillguard._core.model import Profile
    from skillguard._fs.containment import SafeRoot
    from skillguard._skills.approval import AnyApprover, Approver, AsyncApprover
    from skillguard._skills.discover import SkippedEntry
    from skillguard._skills.embedded import EmbeddedSkills
    from skillguard._skills.policy import AllowPolicy
    from skillguard._skills.select import SelectionIndex

    # The index of one agent's candidates, the candidates by name (their source) and
    # the registry warnings.
    Prepared = tuple[SelectionIndex, dict[str, str], tuple[str, ...]]
    from skillguard._skills.truststore import TrustStore
    from skillguard._swarm.loader import Loader
    from skillguard._swarm.served import Source

__all__ = ["Binding", "ParentAuditor", "SwarmState", "folder"]


class ParentAuditor(Auditor):
    """The auditor of a sub-agent's handle (``Loader.bind(agent, parent=handle)``):
    the loader's own, with the parent agent named in every record (T223)."""

    def __init__(self, inner: Auditor, parent: str) -> None:
        super().__init__(inner.log)
        self._inner = inner
        self.parent = parent

    def emit(self, event: str, **fields: object) -> None:
        fields["parent"] = self.parent
        self._inner.emit(event, **fields)


@attrs.frozen(eq=False)
class Binding:
    """What ``Loader.bind`` passes down to one agent's handle, as its token: the loader
    bound, that loader's shared state, and the key the state keeps for that agent, so
    that a handle cannot be rebuilt for another agent or another loader; for a
    sub-agent's handle, its parent agent and the auditor that names it."""

    loader: Loader = attrs.field(repr=False)
    state: SwarmState = attrs.field(repr=False)
    key: object = attrs.field(repr=False)
    auditor: Auditor = attrs.field(repr=False)
    parent: str | None = None

    def binds(self, loader: object, agent: object) -> bool:
        """Whether this token was issued by *loader* for *agent*."""
        return (
            self.loader is loader and isinstance(agent, str) and self.state.bound(agent, self.key)
        )


class SwarmState:
    """A loader's sources and shared state (the module docstring). Built by the
    ``Loader`` from its own, already checked, configuration."""

    def __init__(
        self,
        *,
        policy: AllowPolicy,
        embedded: EmbeddedSkills,
        approver: Approver | AsyncApprover | AnyApprover,
        auditor: Auditor,
        limits: Limits,
        profile: Profile,
        namespaces: bool,
        trust_store: TrustStore | None,
        show_unapproved_descriptions: bool,
        workspace_meta: dict[str, SkillMeta],
        locations: dict[str, tuple[SafeRoot, str]],
        workspace_failed: dict[str, SkippedEntry],
    ) -> None:
        self.policy = policy
        self.embedded = embedded
        self.auditor = auditor
        self.limits = limits
        self.profile = profile
        self.namespaces = namespaces
        self.trust_store = trust_store
        self.show_unapproved_descriptions = show_unapproved_descriptions
        # The workspace skills by name; where each is, as the discovery found it; and
        # folder name -> why the folder of that name was not taken, so that an
        # authorized name whose skill is broken is reported as broken, not as absent.
        self.workspace_meta = workspace_meta
        self._locations = locations
        self._workspace_failed = workspace_failed
        self._lock = threading.Lock()
        self.pending = PendingApprovals(self._lock, limits, approver, auditor)
        # (agent, name) -> the snapshot last approved for that agent; and the SKILL.md
        # hashes a human approved for it (a catalog shows their description). Kept per
        # agent so that one agent's ``deactivate`` withdraws only its own approvals.
        self._approved: dict[tuple[str, str], _Served] = {}
        self._approved_digests: dict[tuple[str, str], set[str]] = {}
        self._approved_sha: dict[tuple[str, str], set[str]] = {}
        self._catalog_seen: dict[str, str] = {}
        self._bind_tokens: dict[str, object] = {}
        # agent -> (the registry an index was built with, the index and what goes
        # with it): built once per agent and registry.
        self._indexes: dict[str, tuple[object, Prepared]] = {}

    # The handles' tokens -------------------------------------------------------------

    def binding(self, loader: Loader, agent: str, parent: str | None = None) -> Binding:
        """The token of *agent*'s handles (the key is the same for every bind), as a
        sub-agent of *parent* when given."""
        with self._lock:
            key = self._bind_tokens.setdefault(agent, object())
        auditor = self.auditor if parent is None else ParentAuditor(self.auditor, parent)
        return Binding(loader, self, key, auditor, parent)

    def bound(self, agent: str, key: object) -> bool:
        return self._bind_tokens.get(agent) is key

    # Sources -------------------------------------------------------------------------

    def source_of(self, agent: str, name: str) -> Source:
        """Authorize and locate, fail-secure (rules 1 to 3 of the handle)."""
        if not self.policy.allowed(agent, name):
            raise unknown(agent, name)
        if self.embedded.get(name) is not None:
            return "embedded"
        grant = self.policy.grant(agent)
        if grant is not None and grant.workspace == "approve":
            if name in self.workspace_meta:
                return "workspace"
            failed = self._workspace_failed.get(name)
            if failed is not None:  # the skill is there, and broken: say so
                raise input_error(failed.kind, failed.code, failed.reason, name=name, agent=agent)
        raise SkillNotFoundError(
            "unknown_skill", "the skill is authorized but no source has it", name=name, agent=agent
        )

    def meta(self, source: Source, name: str) -> SkillMeta:
        """The catalog entry of skill *name* in *source*, with no authorization check.

        Raises ``SkillUsageError`` for a source other than ``"embedded"`` or
        ``"workspace"`` or a name that is not a str, and ``SkillNotFoundError``
        (``unknown_skill``) when that source has no such skill.
        """
        if not isinstance(source, str) or source not in ("embedded", "workspace"):
            raise SkillUsageError("bad_argument", "source must be 'embedded' or 'workspace'")
        if not isinstance(name, str):
            raise SkillUsageError("bad_argument", "a skill name must be a str")
        found = self.workspace_meta.get(name) if source == "workspace" else None
        skill = self.embedded.get(name) if source == "embedded" else None
        if found is not None:
            return found
        if skill is None:
            raise SkillNotFoundError("unknown_skill", f"the {source} source has no such skill")
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

    def reviewed(self, auditor: Auditor | None = None) -> Callable[[SkillMeta], bool]:
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
                pins = self._pin_shas(self.trust_store, auditor or self.auditor)
            return pins.get((meta.name, folder(meta))) == meta.sha256

        return reviewed

    def _pin_shas(self, store: TrustStore, auditor: Auditor) -> dict[tuple[str, str], str]:
        """The pinned SKILL.md hashes by (skill, source). A store that cannot be read
        shows nothing as pinned (names only), and that is audited: a catalog is built
        for a prompt and must not fail on the operator's file."""
        try:
            return {(pin.skill, pin.source): pin.skill_sha256 for pin in store.pins()}
        except ApprovalError as exc:
            auditor.emit(
                "trust_store_unreadable",
                decision="deny",
                code=exc.code,
                reason=exc.reason,
                path=store.path,
            )
            return {}

    def snapshot(self, meta: SkillMeta) -> _Served:
        root, location = self._locations[meta.name]
        snapshot = take_snapshot(
            root,
            location,
            name=meta.name,
            folder=folder(meta),
            limits=self.limits,
            profile=self.profile,
            namespaces=self.namespaces,
        )
        return _Served(snapshot, root, location)

    # What was approved, and what was shown -----------------------------------------

    def remember(self, agent: str, served: _Served) -> None:
        skill = served.snapshot.skill
        with self._lock:
            self._approved[(agent, skill.name)] = served
            self._approved_digests.setdefault((agent, skill.name), set()).add(
                served.snapshot.digest
            )
            self._approved_sha.setdefault((agent, skill.name), set()).add(skill.sha256)

    def forget(self, agent: str, name: str) -> tuple[str, int] | None:
        """Withdraw *agent*'s approvals of skill *name*: the digest of the snapshot
        approved last and how many were withdrawn, or ``None`` if there were none."""
        with self._lock:
            latest = self._approved.pop((agent, name), None)
            self._approved_sha.pop((agent, name), None)
            digests = self._approved_digests.pop((agent, name), set())
        if latest is None:
            return None
        return latest.snapshot.digest, len(digests)

    def was_approved(self, agent: str, served: _Served) -> bool:
        key = (agent, served.snapshot.skill.name)
        with self._lock:
            return served.snapshot.digest in self._approved_digests.get(key, ())

    def approved_snapshot(self, agent: str, name: str) -> _Served | None:
        with self._lock:
            return self._approved.get((agent, name))

    def selection_index(self, agent: str, key: object, build: Callable[[], Prepared]) -> Prepared:
        """The selection index of *agent* (with what goes with it), built once
        (outside the lock) and again only when *key*, the registry, is another
        object: the sources and the policy are fixed for the loader's life, so what
        an agent may select is too, and a query does nothing per skill (T262)."""
        with self._lock:
            cached = self._indexes.get(agent)
        if cached is not None and cached[0] is key:
            return cached[1]
        index = build()
        with self._lock:
            self._indexes[agent] = (key, index)
        return index

    def catalog_changed(self, agent: str, digest: str) -> bool:
        with self._lock:
            if self._catalog_seen.get(agent) == digest:
                return False
            self._catalog_seen[agent] = digest
            return True


def folder(meta: SkillMeta) -> str:
    return source_folder(meta.root, meta.location)
