"""What ``agent install`` would write: every agent of a harness (composed or native) and,
with ``--skills``, every skill with its tokens substituted. Nothing is written here.

Rules (threat-model.md T290, T291, T295, T296). The plan is built in memory from
reads beneath held descriptors (``SafeRoot``), and every problem is a typed
``InstallFinding``: a plan with any error finding is installed nowhere (all or nothing).

* An agent folder that has a folder for the harness is composed in the harness's own
  dialect, a ``{{TOOL:}}`` that is ``null`` for the harness dropped with a warning, as
  the upstream map's contract says. Its file name is the composed agent's identity
  (a slug), never a name from the folder's bytes otherwise.
* An agent the map lists in ``agents.deferred`` for the harness is not composed: its
  file is ``agents-native/<agent>.md``, read beneath the native folder, parsed with
  ``parse_agent`` and copied byte for byte; its ``name`` must be the agent (after the
  map's prefix for the harness). A deferred agent without its native file
  (``missing_native``), and a native file that no harness defers (``orphan_native``),
  are findings, never skipped in silence.
* A skill folder (``--skills``): ``SKILL.md`` is checked (``check_skill``), its
  ``{{TOOL:}}`` and ``{{PATH:}}`` substituted in memory for the harness, and checked
  again; a substitution that would change the skill's name (``skill_name_changed``)
  or leave a token (``leftover_token``) is refused. Its other files are copied byte
  for byte, beneath ``skills/<name>/``.

The plan carries the digest of every source byte it read (``source_digest``), so that
``--check`` can say when a source changed since the install.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import TYPE_CHECKING, Final, Literal

import attrs

from skillguard._agents.compose import compose_in
from skillguard._agents.compose_emit import native_name
from skillguard._agents.compose_read import DEFAULT_COMPOSE_LIMITS, ComposeLimits
from skillguard._agents.compose_tokens import (
    PATH_RE,
    TOOL_RE,
    Resolver,
    refuse_leftover,
    substitute,
)
from skillguard._agents.directory import AgentFolder, agent_folders
from skillguard._agents.parse import parse_agent
from skillguard._agents.tokenmap import SLUG, TokenMap
from skillguard._core.errors import MalformedSkillError, SkillError, SkillUsageError, safe_repr
from skillguard._core.limits import Limits
from skillguard._fs.containment import SafeRoot
from skillguard._fs.paths import operator_path
from skillguard._skills.parse import check_skill
from skillguard._skills.walk import list_resources

if TYPE_CHECKING:
    from collections.abc import Callable

    from skillguard._core.model import SkillWarning

__all__ = [
    "HARNESS_DESTINATIONS",
    "InstallFinding",
    "InstallItem",
    "InstallPlan",
    "plan_install",
]

# The harnesses' documented user folders for agent files: --dest's defaults.
HARNESS_DESTINATIONS: Final = {
    "claude": "~/.claude/agents",
    "copilot": "~/.copilot/agents",
    "pi": "~/.pi/agent/agents",
}
NATIVE_FOLDER: Final = "agents-native"
SKILLS_FOLDER: Final = "skills"
SKILL_FILE: Final = "SKILL.md"

Kind = Literal["agent", "native", "skill"]


@attrs.frozen(kw_only=True)
class InstallFinding:
    """One problem (``severity="error"``: nothing is installed) or note of an install.

    ``subject`` is the agent, skill or file it is about, ``kind`` the error branch
    (``malformed``, ``containment``, ``not_found``, ``conflict``, ``drift``, ``note``),
    ``code`` stable (README's table), ``message`` names files, never their content.
    """

    subject: str
    kind: str
    code: str
    message: str
    severity: Literal["error", "note"] = "error"

    def as_dict(self) -> dict[str, str]:
        return {
            "subject": self.subject,
            "kind": self.kind,
            "code": self.code,
            "message": self.message,
            "severity": self.severity,
        }


def finding_of(subject: str, error: SkillError) -> InstallFinding:
    return InstallFinding(subject=subject, kind=error.kind, code=error.code, message=error.reason)


@attrs.frozen(kw_only=True)
class InstallItem:
    """One file to write: ``path`` relative to ``--dest``, its exact bytes and digest."""

    path: str
    data: bytes = attrs.field(repr=False)
    sha256: str
    kind: Kind
    source: str


@attrs.frozen(kw_only=True)
class InstallPlan:
    """Everything one ``agent install`` would write for one harness, and why not."""

    harness: str
    items: tuple[InstallItem, ...]
    findings: tuple[InstallFinding, ...]
    warnings: tuple[tuple[str, SkillWarning], ...]
    source_digest: str
    token_map_digest: str

    @property
    def ok(self) -> bool:
        """Whether nothing stops the install."""
        return not any(finding.severity == "error" for finding in self.findings)


class _Builder:
    def __init__(self, harness: str, token_map: TokenMap, limits: ComposeLimits) -> None:
        self.harness = harness
        self.map = token_map
        self.limits = limits
        self.items: list[InstallItem] = []
        self.findings: list[InstallFinding] = []
        self.warnings: list[tuple[str, SkillWarning]] = []
        self.sources: list[tuple[str, str]] = []

    def error(self, subject: str, code: str, message: str, kind: str = "malformed") -> None:
        self.findings.append(InstallFinding(subject=subject, kind=kind, code=code, message=message))

    def note(self, subject: str, code: str, message: str) -> None:
        self.findings.append(
            InstallFinding(
                subject=subject, kind="note", code=code, message=message, severity="note"
            )
        )

    def source(self, path: str, data: bytes) -> None:
        self.sources.append((path, hashlib.sha256(data).hexdigest()))

    def add(self, path: str, data: bytes, kind: Kind, source: str) -> None:
        self.items.append(
            InstallItem(
                path=path,
                data=data,
                sha256=hashlib.sha256(data).hexdigest(),
                kind=kind,
                source=source,
            )
        )

    # -- agents ------------------------------------------------------------------------

    def agents(self, agents_dir: str) -> set[str]:
        """Compose every agent that is not deferred; returns every agent folder's name."""
        deferred = self.map.deferred_for(self.harness)
        seen: set[str] = set()
        for found in agent_folders(agents_dir, self.limits):
            if not isinstance(found, AgentFolder):
                if found.kind == "not_agent":
                    self.note(found.agent, found.code, found.message)
                else:
                    self.error(found.agent, found.code, found.message, found.kind)
                continue
            seen.add(found.name)
            if found.name in deferred:
                self.note(
                    found.name,
                    "deferred",
                    f"deferred for {self.harness}: copied from {NATIVE_FOLDER}/{found.name}.md",
                )
                continue
            try:
                if not found.root.has_entry(self.harness):
                    self.note(
                        found.name, "no_harness", f"no folder for {self.harness}: not installed"
                    )
                    continue
                composed = compose_in(
                    found.root,
                    found.name,
                    self.harness,
                    token_map=self.map,
                    dialect="native",
                    drop_null_tools=True,
                    limits=self.limits,
                    record=self._recorder(found.name),
                )
            except SkillUsageError:
                raise
            except SkillError as exc:
                self.findings.append(finding_of(found.name, exc))
                continue
            self.warnings.extend((found.name, warning) for warning in composed.warnings)
            self.add(composed.file, composed.data, "agent", found.name)
        return seen

    def _recorder(self, agent: str) -> Callable[[str, bytes], None]:
        def record(path: str, data: bytes) -> None:
            self.source(f"agents/{agent}/{path}", data)

        return record

    def natives(self, native_dir: str | None) -> None:
        deferred = sorted(self.map.deferred_for(self.harness))
        if native_dir is None:
            for agent in deferred:
                self.error(
                    agent,
                    "missing_native",
                    f"{agent} is deferred for {self.harness}, and there is no {NATIVE_FOLDER}",
                    "not_found",
                )
            return
        absolute = os.path.abspath(native_dir)
        parent, name = os.path.split(absolute)
        with SafeRoot(parent) as outer, outer.open_dir(name) as folder:
            listing = folder.list_dir("", max_entries=self.limits.max_agents)
            for skipped in listing.skipped:
                self.error(
                    f"{NATIVE_FOLDER}/{skipped.path}", skipped.code, skipped.reason, "containment"
                )
            present: set[str] = set()
            every_deferred = set(self.map.deferred)
            for entry in listing.entries:
                stem = entry.name[:-3] if entry.name.endswith(".md") else ""
                if entry.kind != "file" or SLUG.fullmatch(stem) is None:
                    self.error(
                        f"{NATIVE_FOLDER}/{safe_repr(entry.name)[1:-1]}",
                        "unexpected_native_entry",
                        "a native folder holds only <agent>.md files",
                    )
                    continue
                present.add(stem)
                if stem not in every_deferred:
                    self.error(
                        f"{NATIVE_FOLDER}/{entry.name}",
                        "orphan_native",
                        f"no harness defers {stem} in the token map's agents.deferred",
                    )
            for agent in deferred:
                if agent not in present:
                    self.error(
                        agent,
                        "missing_native",
                        f"{agent} is deferred for {self.harness}, and {NATIVE_FOLDER}/{agent}.md "
                        "does not exist",
                        "not_found",
                    )
                    continue
                self._native(folder, agent)

    def _native(self, folder: SafeRoot, agent: str) -> None:
        try:
            data = folder.read_file(f"{agent}.md", cap=self.limits.max_composed_bytes)
            if len(data) > self.limits.max_composed_bytes:
                raise MalformedSkillError(
                    "too_large",
                    f"{NATIVE_FOLDER}/{agent}.md is over {self.limits.max_composed_bytes} bytes",
                )
            parsed = parse_agent(
                data, limits=Limits(max_skill_bytes=self.limits.max_composed_bytes)
            )
            named = native_name(parsed.name, self.map, self.harness)
        except SkillError as exc:
            self.findings.append(finding_of(agent, exc))
            return
        if named != agent:
            self.error(
                agent,
                "native_name_mismatch",
                f"{NATIVE_FOLDER}/{agent}.md names the agent {safe_repr(parsed.name)}",
            )
            return
        self.source(f"{NATIVE_FOLDER}/{agent}.md", data)
        file = f"{agent}.agent.md" if self.harness == "copilot" else f"{agent}.md"
        self.add(file, data, "native", agent)

    # -- skills ------------------------------------------------------------------------

    def skills(self, skills_dir: str) -> None:
        absolute = os.path.abspath(skills_dir)
        parent, name = os.path.split(absolute)
        limits = Limits()
        with SafeRoot(parent) as outer, outer.open_dir(name) as root:
            listing = root.list_dir("", max_entries=limits.max_dir_entries)
            for skipped in listing.skipped:
                self.error(f"skills/{skipped.path}", skipped.code, skipped.reason, "containment")
            for entry in listing.entries:
                if entry.kind != "dir":
                    self.note(
                        safe_repr(entry.name)[1:-1], "not_a_skill", "not a folder: not installed"
                    )
                    continue
                try:
                    self._skill(root, entry.name, limits)
                except SkillUsageError:
                    raise
                except SkillError as exc:
                    self.findings.append(finding_of(f"skills/{safe_repr(entry.name)[1:-1]}", exc))

    def _skill(self, root: SafeRoot, name: str, limits: Limits) -> None:
        subject = f"skills/{name}"
        raw = root.read_skill_file(name, cap=limits.max_skill_bytes)
        before = check_skill(raw, expected_name=name, limits=limits)
        if before.errors:
            self.error(subject, before.errors[0].code, f"SKILL.md: {before.errors[0].reason}")
            return
        resolver = Resolver(self.map, self.harness, drop_null_tools=True)
        text = raw.decode("utf-8")
        passes = {"TOOL": (TOOL_RE, resolver.prose_tool), "PATH": (PATH_RE, resolver.path)}
        cap = limits.max_skill_bytes
        for kind in self.map.substitution_order:
            if kind in passes:
                pattern, replace = passes[kind]
                text = substitute(text, pattern, replace, cap)
        refuse_leftover(text, f"{subject}/SKILL.md")
        data = text.encode("utf-8")
        after = check_skill(data, expected_name=name, limits=limits)
        if after.errors:
            first = after.errors[0]
            # No value of the map holds a line break or a quote that YAML reads, so a
            # substitution cannot rewrite the name today; the check stays, should a
            # later map grammar allow one.
            code = (
                "skill_name_changed"
                if first.code == "name_mismatch"  # pragma: no cover - see above
                else "skill_invalid_after_substitution"
            )
            self.error(
                subject,
                code,
                f"SKILL.md does not check after substitution: [{first.code}] {first.reason}",
            )
            return
        self.warnings.extend((subject, warning) for warning in resolver.warnings)
        self.source(f"{subject}/{SKILL_FILE}", raw)
        self.add(f"{SKILLS_FOLDER}/{name}/{SKILL_FILE}", data, "skill", name)
        resources = list_resources(root, name, limits=limits)
        for skipped in resources.skipped:
            self.error(f"{subject}/{skipped.path}", skipped.code, skipped.reason, skipped.kind)
        for resource in resources.files:
            content = root.read_file(f"{name}/{resource.path}", cap=limits.max_resource_bytes)
            self.source(f"{subject}/{resource.path}", content)
            self.add(f"{SKILLS_FOLDER}/{name}/{resource.path}", content, "skill", name)

    def plan(self, token_map_digest: str) -> InstallPlan:
        files: dict[str, list[str]] = {}
        for item in self.items:
            files.setdefault(item.path, []).append(item.source)
        for path, sources in sorted(files.items()):
            if len(sources) > 1:
                self.error(path, "duplicate_output", f"{path} is written by {', '.join(sources)}")
        listing = json.dumps(sorted(self.sources), ensure_ascii=True, separators=(",", ":"))
        return InstallPlan(
            harness=self.harness,
            items=tuple(sorted(self.items, key=lambda item: item.path)),
            findings=tuple(self.findings),
            warnings=tuple(self.warnings),
            source_digest=hashlib.sha256(listing.encode("ascii")).hexdigest(),
            token_map_digest=token_map_digest,
        )


def plan_install(
    agents_dir: str | os.PathLike[str],
    harness: str,
    *,
    token_map: TokenMap,
    token_map_digest: str = "",
    native_dir: str | os.PathLike[str] | None = None,
    skills_dir: str | os.PathLike[str] | None = None,
    limits: ComposeLimits | None = None,
) -> InstallPlan:
    """Build what ``agent install`` writes for *harness* (see the module docstring).

    Raises ``SkillContainmentError`` / ``SkillNotFoundError`` when *agents_dir*,
    *native_dir* or *skills_dir* itself cannot be opened safely, ``SkillUsageError``
    for bad arguments; every problem of an agent, native file or skill is a finding of
    the plan. Any other exception is a bug.
    """
    if not isinstance(token_map, TokenMap):
        raise SkillUsageError("bad_argument", "token_map must be a TokenMap")
    if not isinstance(harness, str) or SLUG.fullmatch(harness) is None:
        raise SkillUsageError("bad_argument", "harness must be a lowercase slug")
    if not token_map.knows(harness):
        raise SkillUsageError(
            "unknown_harness", f"the token map does not list the harness {harness}"
        )
    if not isinstance(token_map_digest, str):
        raise SkillUsageError("bad_argument", "token_map_digest must be a str")
    if limits is not None and not isinstance(limits, ComposeLimits):
        raise SkillUsageError("bad_argument", "limits must be a ComposeLimits or None")
    folder = operator_path(agents_dir, "agents_dir")
    natives = None if native_dir is None else operator_path(native_dir, "native_dir")
    skills = None if skills_dir is None else operator_path(skills_dir, "skills_dir")
    builder = _Builder(harness, token_map, limits or DEFAULT_COMPOSE_LIMITS)
    builder.agents(folder)
    builder.natives(natives)
    if skills is not None:
        builder.skills(skills)
    return builder.plan(token_map_digest)
