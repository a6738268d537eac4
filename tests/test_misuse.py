"""Every public callable, called wrongly, raises a SkillError or succeeds (T14).

The table ``CALLS`` names every public function, constructor and public method of
the ``__all__`` of ``skillguard``, ``skillguard.agents`` and ``skillguard.audit`` and says how to
call it; a test keeps the table's keys equal to
the set of public callables, so a new public name cannot escape the property. Each
call slot takes either a valid value or a hostile one (wrong types, NUL, lone
surrogates, huge ints, 100 KB strings, objects whose dunder methods raise), and the
property is that nothing but a ``SkillError`` escapes.

Test names that start with ``test_tN_`` stop threat ``TN`` of threat-model.md.
"""

# Every row of the table takes the same two arguments (the world, the drawn values),
# whether or not it uses them.
# ruff: noqa: ARG005

from __future__ import annotations

import asyncio
import contextlib
import inspect
import io
import itertools
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import skillguard
import skillguard.agents
import skillguard.audit
from skillguard import (
    AgentGrant,
    AgentSkills,
    AllowPolicy,
    ApprovalDeniedError,
    ApprovalError,
    ApprovalRequest,
    ApprovalRequiredError,
    ConsoleApprover,
    Decision,
    Discovery,
    EmbeddedSkills,
    Entry,
    FrozenMap,
    Limits,
    Listing,
    LoadedSkill,
    Loader,
    MalformedSkillError,
    NotGrantedError,
    Pin,
    PolicyError,
    PreparedLoad,
    Resource,
    Resources,
    ResourceSlot,
    RootPath,
    SafeRoot,
    SelectedSkill,
    Selection,
    SelectionRegistry,
    Shadowed,
    Skill,
    SkillContainmentError,
    SkillError,
    SkillInputError,
    SkillMeta,
    SkillNotFoundError,
    SkillRoots,
    SkillUsageError,
    SkillWarning,
    Skipped,
    SkippedEntry,
    SkippedSkill,
    Step,
    ToolDescriptor,
    ToolInfo,
    TrustStore,
    UnknownSkillError,
    YamlValue,
    activation_text,
    aide_roots,
    catalog_json,
    catalog_xml,
    default_roots,
    deny_all,
    discover,
    is_valid_name,
    openat2_available,
    parse_skill,
)
from skillguard.agents import (
    AgentContext,
    AgentFinding,
    AgentNotFoundError,
    AgentTools,
    AgentValidation,
    ComposeLimits,
    InstallFinding,
    InstallPlan,
    InstallReport,
    KnowledgeFile,
    ServedAgentContext,
    TokenMap,
    agent_error_code,
    agent_tools,
    check_install,
    compose,
    install_plan,
    load_agent_context,
    parse_agent,
    parse_token_map,
    plan_install,
    read_core_knowledge,
    uninstall,
    validate_agent_directory,
)
from skillguard.audit import (
    AuditError,
    AuditLog,
    Auditor,
    LogCheck,
    LogSetFinding,
    LogSetVerification,
    Verification,
    audit_summary,
    render_audit_report,
    verify_logs,
    verify_records,
)
from tests.strategies import Booby, BytesPath, hostile_values

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator


SKILL_MD = b"---\nname: hello\ndescription: Says hello.\n---\nHello.\n"
NOTES_MD = b"---\nname: notes\ndescription: Takes notes.\nallowed-tools: Read\n---\nNotes.\n"
POLICY = {
    "agents": {
        "planner": {
            "skills": ["hello", "notes"],
            "tools": ["Read", "Grep"],
            "workspace": "approve",
        }
    }
}


def approve_all(request: ApprovalRequest) -> Decision:
    del request
    return Decision(approved=True, by="tester")


@attrs.define
class World:
    """One instance of every public class, built once from real files."""

    tmp: Path
    embedded_dir: Path
    workspace_dir: Path
    policy: AllowPolicy
    embedded: EmbeddedSkills
    loader: Loader
    handle: AgentSkills
    loaded: LoadedSkill
    prepared: PreparedLoad
    skill: Skill
    safe_root: SafeRoot
    roots: SkillRoots
    trust: TrustStore
    audit_log: AuditLog
    auditor: Auditor
    discovery: Discovery
    request: ApprovalRequest


def _write(folder: Path, name: str, raw: bytes) -> None:
    (folder / name).mkdir(parents=True)
    (folder / name / "SKILL.md").write_bytes(raw)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    tmp = tmp_path_factory.mktemp("misuse")
    # Hostile strings become relative paths that some calls create (an audit log, a
    # trust store): run from a scratch folder so that they land there and nowhere else.
    scratch = tmp / "scratch" / "cwd"
    scratch.mkdir(parents=True)
    patch = pytest.MonkeyPatch()
    patch.chdir(scratch)
    embedded_dir = tmp / "embedded"
    _write(embedded_dir, "hello", SKILL_MD)
    (embedded_dir / "hello" / "references").mkdir()
    (embedded_dir / "hello" / "references" / "more.md").write_bytes(b"# More")
    workspace_dir = tmp / "workspace"
    _write(workspace_dir, "notes", NOTES_MD)
    (workspace_dir / "notes" / "scripts").mkdir()
    (workspace_dir / "notes" / "scripts" / "run.py").write_bytes(b"print(1)")
    policy = AllowPolicy.from_mapping(POLICY)
    (tmp / "policy.yaml").write_bytes(b"agents:\n  planner:\n    skills: [hello]\n")
    embedded = EmbeddedSkills.from_directory(embedded_dir)
    audit_log = AuditLog(tmp / "audit.log")
    trust = TrustStore(tmp / "trust.json")
    loader = Loader(
        policy,
        embedded=embedded,
        workspace=[workspace_dir],
        approver=approve_all,
        audit=audit_log,
        trust_store=trust,
    )
    handle = loader.bind("planner")
    prepared = handle.prepare("notes")
    assert prepared.request is not None
    roots = SkillRoots([workspace_dir])
    safe_root = SafeRoot(embedded_dir)
    yield World(
        tmp=tmp,
        embedded_dir=embedded_dir,
        workspace_dir=workspace_dir,
        policy=policy,
        embedded=embedded,
        loader=loader,
        handle=handle,
        loaded=handle.load("hello"),
        prepared=prepared,
        skill=parse_skill(SKILL_MD),
        safe_root=safe_root,
        roots=roots,
        trust=trust,
        audit_log=audit_log,
        auditor=Auditor(audit_log),
        discovery=discover([workspace_dir]),
        request=prepared.request,
    )
    safe_root.close()
    roots.close()
    loader.close()
    patch.undo()


class _Keep:
    """Marks a call slot that keeps its valid value in this example."""

    def __repr__(self) -> str:
        return "KEEP"


KEEP: Any = _Keep()


def v(drawn: object, default: object) -> Any:
    """The drawn hostile value, or *default* when the slot keeps its valid value."""
    return default if drawn is KEEP else drawn


Args = tuple[Any, ...]


@attrs.frozen
class Call:
    """How to call one public name: *slots* hostile-or-valid arguments, then *run*."""

    slots: int
    run: Callable[[World, Args], object]


def _fresh_loader(w: World) -> Loader:
    return Loader(w.policy, embedded=w.embedded, workspace=[w.workspace_dir])


def _error(cls: type[SkillError]) -> Call:
    def run(w: World, a: Args) -> object:
        del w
        return cls(
            v(a[0], "bad_argument"),
            v(a[1], "a reason"),
            name=v(a[2], None),
            agent=v(a[3], None),
            line=v(a[4], None),
            key=v(a[5], None),
        )

    return Call(6, run)


def _error_as_dict(cls: type[SkillError]) -> Call:
    def run(w: World, a: Args) -> object:
        return _error(cls).run(w, a).as_dict()  # type: ignore[attr-defined]

    return Call(6, run)


ERROR_CLASSES: tuple[type[SkillError], ...] = (
    ApprovalDeniedError,
    ApprovalError,
    ApprovalRequiredError,
    AuditError,
    MalformedSkillError,
    PolicyError,
    SkillContainmentError,
    SkillError,
    SkillInputError,
    SkillNotFoundError,
    SkillUsageError,
    UnknownSkillError,
    NotGrantedError,
)

CATALOG_ENTRY = ("hello", "Says hello.", "hello", "embedded")
FROZEN_MAP: dict[str, YamlValue] = {"key": "value", "list": ("a", "b")}

AGENT_MD = (
    b"---\nname: Helper\ndescription: Helps.\ntools: Read, Grep\n---\n"
    b"## Persona\nKind.\n\n## Core Knowledge\n- Read docs/a.md\n\n## Rules\n- Be brief.\n"
)


AGENTS = Path(__file__).resolve().parent.parent / "examples" / "agents"


def _token_map() -> TokenMap:
    return parse_token_map((AGENTS / "token-map.json").read_bytes())


# agent install's rows always run dry: a hostile dest such as "." or "../x" names a
# real folder relative to the working one, which the property must never write into.
DRY_RUN = True


def _install_plan_of() -> InstallPlan:
    return plan_install(AGENTS, "pi", token_map=_token_map())


CALLS: dict[str, Call] = {
    **{cls.__name__: _error(cls) for cls in ERROR_CLASSES},
    **{f"{cls.__name__}.as_dict": _error_as_dict(cls) for cls in ERROR_CLASSES},
    # -- plain values: construction must not raise anything but a SkillError.
    "AgentGrant": Call(
        4,
        lambda w, a: AgentGrant(
            skills=v(a[0], frozenset()),
            tools=v(a[1], frozenset()),
            workspace=v(a[2], "deny"),
            subagents=v(a[3], frozenset()),
        ),
    ),
    "ApprovalRequest": Call(
        6,
        lambda w, a: ApprovalRequest(
            request_id=v(a[0], "r"),
            agent=v(a[1], "planner"),
            skill=v(a[2], "notes"),
            source="workspace",
            path=v(a[3], "notes"),
            sha256="0" * 64,
            size=v(a[4], 1),
            description="d",
            preview="p",
            time=v(a[5], "2026-01-01T00:00:00Z"),
        ),
    ),
    "Decision": Call(
        3,
        lambda w, a: Decision(
            approved=v(a[0], default=True), by=v(a[1], "me"), scope=v(a[2], "once")
        ),
    ),
    "Discovery": Call(
        3, lambda w, a: Discovery(skills=v(a[0], ()), shadowed=v(a[1], ()), skipped=v(a[2], ()))
    ),
    "Discovery.names": Call(0, lambda w, a: w.discovery.names()),
    "Entry": Call(3, lambda w, a: Entry(name=v(a[0], "x"), kind=v(a[1], "file"), size=v(a[2], 0))),
    "FrozenMap": Call(1, lambda w, a: FrozenMap(v(a[0], dict(FROZEN_MAP)))),
    "FrozenMap.get": Call(
        2, lambda w, a: FrozenMap(dict(FROZEN_MAP)).get(v(a[0], "key"), v(a[1], None))
    ),
    "FrozenMap.items": Call(0, lambda w, a: FrozenMap(dict(FROZEN_MAP)).items()),
    "FrozenMap.keys": Call(0, lambda w, a: FrozenMap(dict(FROZEN_MAP)).keys()),
    "FrozenMap.values": Call(0, lambda w, a: FrozenMap(dict(FROZEN_MAP)).values()),
    "FrozenMap.to_dict": Call(0, lambda w, a: FrozenMap(dict(FROZEN_MAP)).to_dict()),
    "Limits": Call(
        3,
        lambda w, a: Limits(
            max_skill_bytes=v(a[0], 1024),
            max_depth=v(a[1], 8),
            max_pending_bytes=v(a[2], 1 << 20),
        ),
    ),
    "Listing": Call(2, lambda w, a: Listing(entries=v(a[0], ()), skipped=v(a[1], ()))),
    "Pin": Call(
        6,
        lambda w, a: Pin(
            skill=v(a[0], "notes"),
            source=v(a[1], "workspace"),
            digest=v(a[2], "0" * 64),
            skill_sha256=v(a[3], "0" * 64),
            by=v(a[4], "me"),
            when=v(a[5], "2026-01-01T00:00:00Z"),
        ),
    ),
    "Resource": Call(
        3, lambda w, a: Resource(path=v(a[0], "a.md"), slot=v(a[1], "references"), size=v(a[2], 1))
    ),
    "ResourceSlot": Call(
        2, lambda w, a: ResourceSlot(name=v(a[0], "references"), resource_type=v(a[1], "text"))
    ),
    "Resources": Call(2, lambda w, a: Resources(files=v(a[0], ()), skipped=v(a[1], ()))),
    "RootPath": Call(2, lambda w, a: RootPath(base=v(a[0], "/tmp"), relative=v(a[1], ""))),
    "Shadowed": Call(
        5,
        lambda w, a: Shadowed(
            name=v(a[0], "notes"),
            root=v(a[1], "/a"),
            location=v(a[2], "/a/notes"),
            by_root=v(a[3], "/b"),
            by_location=v(a[4], "/b/notes"),
        ),
    ),
    "Skill": Call(
        6,
        lambda w, a: Skill(
            name=v(a[0], "hello"),
            description=v(a[1], "d"),
            body=v(a[2], "b"),
            sha256=v(a[3], "0" * 64),
            size=v(a[4], 1),
            metadata=v(a[5], FrozenMap({})),
        ),
    ),
    "SkillMeta": Call(
        6,
        lambda w, a: SkillMeta(
            name=v(a[0], "hello"),
            description=v(a[1], "d"),
            root=v(a[2], "/r"),
            location=v(a[3], "/r/hello"),
            sha256="0" * 64,
            size=v(a[4], 1),
            warnings=v(a[5], ()),
        ),
    ),
    "SkillWarning": Call(
        3, lambda w, a: SkillWarning(code=v(a[0], "c"), message=v(a[1], "m"), key=v(a[2], None))
    ),
    "SkillWarning.as_dict": Call(
        3,
        lambda w, a: SkillWarning(
            code=v(a[0], "c"), message=v(a[1], "m"), key=v(a[2], None)
        ).as_dict(),
    ),
    "Skipped": Call(
        3, lambda w, a: Skipped(path=v(a[0], "p"), code=v(a[1], "c"), reason=v(a[2], "r"))
    ),
    "SkippedEntry": Call(
        5,
        lambda w, a: SkippedEntry(
            root=v(a[0], "/r"),
            path=v(a[1], "p"),
            kind=v(a[2], "containment"),
            code=v(a[3], "c"),
            reason=v(a[4], "r"),
        ),
    ),
    "Step": Call(2, lambda w, a: Step(index=v(a[0], 1), text=v(a[1], "t"))),
    "ToolDescriptor": Call(
        4,
        lambda w, a: ToolDescriptor(
            name=v(a[0], "hello"),
            description=v(a[1], "d"),
            allowed_tools=v(a[2], ()),
            resource_slots=v(a[3], ()),
        ),
    ),
    "Verification": Call(
        3,
        lambda w, a: Verification(
            intact=v(a[0], default=True), records=v(a[1], 0), line=v(a[2], None)
        ),
    ),
    # -- functions.
    "activation_text": Call(
        3, lambda w, a: activation_text(v(a[0], "hello"), v(a[1], "Body."), v(a[2], ["a.md"]))
    ),
    "audit_summary": Call(1, lambda w, a: audit_summary(v(a[0], '{"name": "hello"}'))),
    "catalog_json": Call(1, lambda w, a: catalog_json(v(a[0], [CATALOG_ENTRY]))),
    "catalog_xml": Call(1, lambda w, a: catalog_xml(v(a[0], [CATALOG_ENTRY]))),
    "default_roots": Call(
        3,
        lambda w, a: default_roots(
            v(a[0], w.tmp), home=v(a[1], w.tmp), environ=v(a[2], {"HOME": str(w.tmp)})
        ),
    ),
    "deny_all": Call(1, lambda w, a: deny_all(v(a[0], w.request))),
    "discover": Call(
        4,
        lambda w, a: discover(
            v(a[0], [w.workspace_dir]),
            limits=v(a[1], None),
            profile=v(a[2], "strict"),
            trusted_link_targets=v(a[3], ()),
        ),
    ),
    "is_valid_name": Call(1, lambda w, a: is_valid_name(v(a[0], "hello"))),
    "openat2_available": Call(0, lambda w, a: openat2_available()),
    "parse_skill": Call(
        4,
        lambda w, a: parse_skill(
            v(a[0], SKILL_MD),
            expected_name=v(a[1], None),
            limits=v(a[2], None),
            profile=v(a[3], "strict"),
        ),
    ),
    "LogCheck": Call(
        2,
        lambda w, a: LogCheck(
            path=v(a[0], "a.jsonl"), verification=v(a[1], Verification(intact=True, records=1))
        ),
    ),
    "LogSetFinding": Call(
        4,
        lambda w, a: LogSetFinding(
            code=v(a[0], "same_log_id"),
            log_id=v(a[1], "0" * 32),
            paths=v(a[2], ("a", "b")),
            reason=v(a[3], "copied"),
        ),
    ),
    "LogSetVerification": Call(
        2, lambda w, a: LogSetVerification(logs=v(a[0], ()), findings=v(a[1], ()))
    ),
    "verify_logs": Call(
        4,
        lambda w, a: verify_logs(
            v(a[0], [str(w.tmp / "audit.log")]),
            keys=v(a[1], None),
            expected_log_ids=v(a[2], None),
            expected_records=v(a[3], None),
        ),
    ),
    "verify_records": Call(
        4,
        lambda w, a: verify_records(
            v(a[0], []),
            key=v(a[1], None),
            expected_records=v(a[2], None),
            expected_log_id=v(a[3], None),
        ),
    ),
    # -- the policy.
    "AllowPolicy": Call(1, lambda w, a: AllowPolicy(v(a[0], {}))),
    "AllowPolicy.allowed": Call(
        2, lambda w, a: w.policy.allowed(v(a[0], "planner"), v(a[1], "hello"))
    ),
    "AllowPolicy.check_subagents": Call(
        1, lambda w, a: AllowPolicy.from_mapping(v(a[0], POLICY)).check_subagents()
    ),
    "AllowPolicy.from_file": Call(
        1, lambda w, a: AllowPolicy.from_file(v(a[0], w.tmp / "policy.yaml"))
    ),
    "AllowPolicy.from_mapping": Call(1, lambda w, a: AllowPolicy.from_mapping(v(a[0], POLICY))),
    "AllowPolicy.from_yaml": Call(1, lambda w, a: AllowPolicy.from_yaml(v(a[0], b"agents: {}\n"))),
    "AllowPolicy.grant": Call(1, lambda w, a: w.policy.grant(v(a[0], "planner"))),
    # -- embedded skills.
    "EmbeddedSkills": Call(
        3,
        lambda w, a: EmbeddedSkills(
            v(a[0], {"hello": w.skill}), v(a[1], None), origin=v(a[2], "embedded")
        ),
    ),
    "EmbeddedSkills.from_directory": Call(
        3,
        lambda w, a: EmbeddedSkills.from_directory(
            v(a[0], w.embedded_dir), limits=v(a[1], None), profile=v(a[2], "strict")
        ),
    ),
    "EmbeddedSkills.from_package": Call(
        3,
        lambda w, a: EmbeddedSkills.from_package(
            v(a[0], "tests.fixtures.skillguard_test_skills"),
            v(a[1], "skills"),
            profile=v(a[2], "strict"),
        ),
    ),
    "EmbeddedSkills.get": Call(1, lambda w, a: w.embedded.get(v(a[0], "hello"))),
    "EmbeddedSkills.names": Call(0, lambda w, a: w.embedded.names()),
    "EmbeddedSkills.read_resource": Call(
        2,
        lambda w, a: w.embedded.read_resource(v(a[0], "hello"), v(a[1], "references/more.md")),
    ),
    "EmbeddedSkills.resources": Call(1, lambda w, a: w.embedded.resources(v(a[0], "hello"))),
    # -- the loader and its handles.
    "Loader": Call(
        9,
        lambda w, a: Loader(
            v(a[0], w.policy),
            embedded=v(a[1], None),
            workspace=v(a[2], None),
            approver=v(a[3], deny_all),
            audit=v(a[4], None),
            limits=v(a[5], None),
            profile=v(a[6], "strict"),
            trust_store=v(a[7], None),
            approval_timeout=v(a[8], 300.0),
        ).close(),
    ),
    "Loader.bind": Call(1, lambda w, a: w.loader.bind(v(a[0], "planner"))),
    "Loader.close": Call(0, lambda w, a: _fresh_loader(w).close()),
    "Loader.meta": Call(2, lambda w, a: w.loader.meta(v(a[0], "embedded"), v(a[1], "hello"))),
    "AgentSkills": Call(
        3,
        lambda w, a: AgentSkills(
            v(a[0], w.loader),
            v(a[1], "planner"),
            v(a[2], w.handle._token),  # the one valid token
        ),
    ),
    "AgentSkills.allowed": Call(1, lambda w, a: w.handle.allowed(v(a[0], "hello"))),
    "AgentSkills.aload": Call(
        2,
        lambda w, a: asyncio.run(w.handle.aload(v(a[0], "hello"), timeout=v(a[1], None))),
    ),
    "AgentSkills.audit_summary": Call(
        1, lambda w, a: w.handle.audit_summary(v(a[0], '{"name": "hello"}'))
    ),
    "AgentSkills.auser_invoke": Call(
        2,
        lambda w, a: asyncio.run(w.handle.auser_invoke(v(a[0], "hello"), timeout=v(a[1], None))),
    ),
    "AgentSkills.catalog": Call(0, lambda w, a: w.handle.catalog()),
    "AgentSkills.catalog_json": Call(0, lambda w, a: w.handle.catalog_json()),
    "AgentSkills.catalog_xml": Call(0, lambda w, a: w.handle.catalog_xml()),
    "AgentSkills.describe": Call(1, lambda w, a: w.handle.describe(v(a[0], "hello"))),
    "AgentSkills.deactivate": Call(1, lambda w, a: w.handle.deactivate(v(a[0], "hello"))),
    "AgentSkills.effective_tools": Call(
        1, lambda w, a: w.handle.effective_tools(v(a[0], w.loaded))
    ),
    "AgentSkills.load": Call(1, lambda w, a: w.handle.load(v(a[0], "hello"))),
    "AgentSkills.prepare": Call(
        2, lambda w, a: w.handle.prepare(v(a[0], "notes"), by_user=v(a[1], default=False))
    ),
    "AgentSkills.user_invoke": Call(1, lambda w, a: w.handle.user_invoke(v(a[0], "hello"))),
    "LoadedSkill": Call(
        4,
        lambda w, a: LoadedSkill(
            v(a[0], "planner"), v(a[1], w.skill), v(a[2], "embedded"), v(a[3], w.loader)
        ),
    ),
    "LoadedSkill.activation": Call(0, lambda w, a: w.loaded.activation()),
    "LoadedSkill.read_resource": Call(
        1, lambda w, a: w.loaded.read_resource(v(a[0], "references/more.md"))
    ),
    "LoadedSkill.resources": Call(0, lambda w, a: w.loaded.resources()),
    "LoadedSkill.to_tool_descriptor": Call(0, lambda w, a: w.loaded.to_tool_descriptor()),
    "PreparedLoad": Call(
        5,
        lambda w, a: PreparedLoad(
            v(a[0], "planner"),
            v(a[1], w.skill),
            v(a[2], "workspace"),
            v(a[3], "workspace"),
            v(a[4], "notes"),
        ),
    ),
    # -- the file-system layer.
    "SafeRoot": Call(
        3,
        lambda w, a: SafeRoot(
            v(a[0], w.embedded_dir),
            allow_hardlinks=v(a[1], default=False),
            resolver=v(a[2], "auto"),
        ).close(),
    ),
    "SafeRoot.close": Call(0, lambda w, a: SafeRoot(w.embedded_dir).close()),
    "SafeRoot.folder_identity": Call(1, lambda w, a: w.safe_root.folder_identity(v(a[0], "hello"))),
    "SafeRoot.has_entry": Call(1, lambda w, a: w.safe_root.has_entry(v(a[0], "hello"))),
    "SafeRoot.link_kind": Call(1, lambda w, a: w.safe_root.link_kind(v(a[0], "hello"))),
    "SafeRoot.link_target": Call(1, lambda w, a: w.safe_root.link_target(v(a[0], "hello"))),
    "SafeRoot.list_dir": Call(
        2, lambda w, a: w.safe_root.list_dir(v(a[0], "hello"), max_entries=v(a[1], 10))
    ),
    "SafeRoot.open_dir": Call(1, lambda w, a: w.safe_root.open_dir(v(a[0], "hello")).close()),
    "SafeRoot.read_file": Call(
        3,
        lambda w, a: w.safe_root.read_file(
            v(a[0], "hello/SKILL.md"), cap=v(a[1], 4096), oversize=v(a[2], SkillContainmentError)
        ),
    ),
    "SafeRoot.read_skill_file": Call(
        2, lambda w, a: w.safe_root.read_skill_file(v(a[0], "hello"), cap=v(a[1], 4096))
    ),
    "SkillRoots": Call(
        6,
        lambda w, a: SkillRoots(
            v(a[0], [w.workspace_dir]),
            limits=v(a[1], None),
            profile=v(a[2], "strict"),
            trusted_link_targets=v(a[3], ()),
            allow_hardlinks=v(a[4], default=False),
            resolver=v(a[5], "auto"),
        ).close(),
    ),
    "SkillRoots.close": Call(0, lambda w, a: SkillRoots([w.workspace_dir]).close()),
    "SkillRoots.discover": Call(0, lambda w, a: w.roots.discover()),
    "SkillRoots.load": Call(1, lambda w, a: w.roots.load(v(a[0], "notes"))),
    "SkillRoots.locate": Call(1, lambda w, a: w.roots.locate(v(a[0], "notes"))),
    "SkillRoots.read_resource": Call(
        2, lambda w, a: w.roots.read_resource(v(a[0], "notes"), v(a[1], "scripts/run.py"))
    ),
    "SkillRoots.resources": Call(1, lambda w, a: w.roots.resources(v(a[0], "notes"))),
    # -- approval, trust and audit.
    "ConsoleApprover": Call(
        3,
        lambda w, a: ConsoleApprover(
            v(a[0], io.StringIO("n\n")), v(a[1], io.StringIO()), who=v(a[2], "console")
        ),
    ),
    "TrustStore": Call(1, lambda w, a: TrustStore(v(a[0], w.tmp / "trust.json"))),
    "TrustStore.approver": Call(1, lambda w, a: w.trust.approver(v(a[0], deny_all))),
    "TrustStore.is_pinned": Call(
        3,
        lambda w, a: w.trust.is_pinned(
            v(a[0], "notes"), v(a[1], "0" * 64), source=v(a[2], "workspace")
        ),
    ),
    "TrustStore.pin": Call(
        5,
        lambda w, a: w.trust.pin(
            v(a[0], "notes"),
            v(a[1], "0" * 64),
            v(a[2], "me"),
            source=v(a[3], "workspace"),
            skill_sha256=v(a[4], "0" * 64),
        ),
    ),
    "TrustStore.pinned": Call(
        2, lambda w, a: w.trust.pinned(v(a[0], "notes"), v(a[1], "workspace"))
    ),
    "TrustStore.pins": Call(0, lambda w, a: w.trust.pins()),
    "TrustStore.revoke": Call(
        2, lambda w, a: w.trust.revoke(v(a[0], "nobody"), source=v(a[1], None))
    ),
    "AuditLog": Call(2, lambda w, a: AuditLog(v(a[0], w.tmp / "audit.log"), key=v(a[1], None))),
    "AuditLog.write": Call(1, lambda w, a: w.audit_log.write(v(a[0], {"event": "test"}))),
    "AuditLog.repair": Call(
        2, lambda w, a: AuditLog.repair(v(a[0], _torn_log(w)), key=v(a[1], None))
    ),
    "Auditor": Call(1, lambda w, a: Auditor(v(a[0], None))),
    "Auditor.emit": Call(2, lambda w, a: w.auditor.emit(v(a[0], "test"), field=v(a[1], "value"))),
    "render_audit_report": Call(
        3,
        lambda w, a: render_audit_report(
            v(a[0], _audit_lines(w)), agent=v(a[1], None), since=v(a[2], None)
        ),
    ),
    # -- selection and the ready skill tool.
    "AgentSkills.select": Call(
        2, lambda w, a: w.handle.select(v(a[0], "say hello"), max_skills=v(a[1], 3))
    ),
    "AgentSkills.aselect": Call(
        2,
        lambda w, a: asyncio.run(w.handle.aselect(v(a[0], "say hello"), context=v(a[1], None))),
    ),
    "AgentSkills.tool_info": Call(0, lambda w, a: w.handle.tool_info()),
    "AgentSkills.tool_descriptor": Call(1, lambda w, a: w.handle.tool_descriptor(v(a[0], "hello"))),
    "AgentSkills.invoke": Call(1, lambda w, a: w.handle.invoke(v(a[0], '{"name": "hello"}'))),
    "AgentSkills.ainvoke": Call(
        1, lambda w, a: asyncio.run(w.handle.ainvoke(v(a[0], '{"name": "hello"}')))
    ),
    "AgentSkills.prepare_call": Call(
        2,
        lambda w, a: w.handle.prepare_call(v(a[0], "call-1"), v(a[1], '{"name": "hello"}')),
    ),
    "EmbeddedSkills.slots": Call(1, lambda w, a: w.embedded.slots(v(a[0], "hello"))),
    "SelectionRegistry": Call(
        1, lambda w, a: SelectionRegistry(v(a[0], {"hello": ("greet", "hello")}))
    ),
    "SelectionRegistry.from_yaml": Call(
        1,
        lambda w, a: SelectionRegistry.from_yaml(
            v(a[0], b"skills:\n  hello:\n    keywords: [hi]\n")
        ),
    ),
    "SelectionRegistry.from_file": Call(
        1, lambda w, a: SelectionRegistry.from_file(v(a[0], _registry_file(w)))
    ),
    "Selection": Call(
        2,
        lambda w, a: Selection(
            agent=v(a[0], "planner"), task_sha256="0" * 64, items=(), skipped=(), text=v(a[1], "")
        ),
    ),
    "Selection.as_dict": Call(0, lambda w, a: w.handle.select("say hello").as_dict()),
    "Selection.explain": Call(0, lambda w, a: w.handle.select("say hello").explain()),
    "SelectedSkill": Call(
        2,
        lambda w, a: SelectedSkill(
            name=v(a[0], "hello"),
            source="embedded",
            score=v(a[1], 1.0),
            matched=(),
            bytes=0,
            truncated=False,
            via="description",
        ),
    ),
    "SelectedSkill.as_dict": Call(
        0,
        lambda w, a: SelectedSkill(
            name="hello",
            source="embedded",
            score=1.0,
            matched=(),
            bytes=0,
            truncated=False,
            via="description",
        ).as_dict(),
    ),
    "SkippedSkill": Call(
        2, lambda w, a: SkippedSkill(name=v(a[0], "x"), code=v(a[1], "c"), reason="r")
    ),
    "SkippedSkill.as_dict": Call(0, lambda w, a: SkippedSkill("x", "c", "r").as_dict()),
    "ToolInfo": Call(
        2, lambda w, a: ToolInfo(name=v(a[0], "skill"), description=v(a[1], "d"), parameters={})
    ),
    "ToolInfo.for_catalog": Call(1, lambda w, a: ToolInfo.for_catalog(v(a[0], "<c/>"))),
    "ToolInfo.as_openai": Call(1, lambda w, a: w.handle.tool_info().as_openai(api=v(a[0], "chat"))),
    "ToolInfo.as_anthropic": Call(0, lambda w, a: w.handle.tool_info().as_anthropic()),
    "ToolInfo.as_mcp": Call(0, lambda w, a: w.handle.tool_info().as_mcp()),
    "aide_roots": Call(2, lambda w, a: aide_roots(v(a[0], w.tmp), environ=v(a[1], {}))),
    # -- composable agent directories.
    "compose": Call(
        3,
        lambda w, a: compose(
            v(a[0], AGENTS / "ralph"),
            v(a[1], "claude"),
            token_map=v(a[2], _token_map()),
        ),
    ),
    "parse_token_map": Call(
        2,
        lambda w, a: parse_token_map(
            v(a[0], (AGENTS / "token-map.json").read_bytes()), max_bytes=v(a[1], 1 << 20)
        ),
    ),
    "TokenMap": Call(
        1,
        lambda w, a: TokenMap(harnesses=v(a[0], ()), tools={}, paths={}, prefixes={}),
    ),
    "TokenMap.knows": Call(1, lambda w, a: _token_map().knows(v(a[0], "claude"))),
    "validate_agent_directory": Call(
        3,
        lambda w, a: validate_agent_directory(
            v(a[0], AGENTS), token_map=v(a[1], _token_map()), limits=v(a[2], None)
        ),
    ),
    "AgentFinding": Call(
        3,
        lambda w, a: AgentFinding(
            kind=v(a[0], "malformed"), code=v(a[1], "x"), message=v(a[2], "m")
        ),
    ),
    "AgentValidation": Call(
        2,
        lambda w, a: AgentValidation(
            agent=v(a[0], "plan"), path=v(a[1], "plan"), errors=(), warnings=()
        ),
    ),
    "ComposeLimits": Call(1, lambda w, a: ComposeLimits(max_sections=v(a[0], 64))),
    "ComposedAgent": Call(
        1,
        lambda w, a: attrs.evolve(
            compose(AGENTS / "ralph", "claude", token_map=_token_map()), file=v(a[0], "x.md")
        ),
    ),
    # -- agent install.
    "TokenMap.deferred_for": Call(1, lambda w, a: _token_map().deferred_for(v(a[0], "claude"))),
    "plan_install": Call(
        5,
        lambda w, a: plan_install(
            v(a[0], AGENTS),
            v(a[1], "pi"),
            token_map=v(a[2], _token_map()),
            token_map_digest=v(a[3], ""),
            skills_dir=v(a[4], None),
        ),
    ),
    "install_plan": Call(
        3,
        lambda w, a: install_plan(
            v(a[0], _install_plan_of()),
            v(a[1], w.tmp / "install-dest"),
            force=v(a[2], ()),
            dry_run=DRY_RUN,
        ),
    ),
    "check_install": Call(
        2,
        lambda w, a: check_install(v(a[0], _install_plan_of()), v(a[1], w.tmp / "install-dest")),
    ),
    "uninstall": Call(1, lambda w, a: uninstall(v(a[0], w.tmp / "install-dest"), dry_run=DRY_RUN)),
    "InstallFinding": Call(
        2,
        lambda w, a: InstallFinding(
            subject=v(a[0], "plan"), kind="note", code=v(a[1], "x"), message="m"
        ),
    ),
    "InstallFinding.as_dict": Call(
        1,
        lambda w, a: InstallFinding(
            subject=v(a[0], "plan"), kind="note", code="x", message="m"
        ).as_dict(),
    ),
    "InstallPlan": Call(1, lambda w, a: attrs.evolve(_install_plan_of(), harness=v(a[0], "pi"))),
    "InstallReport": Call(
        1, lambda w, a: InstallReport(action="check", dest=v(a[0], "d"), harness="pi")
    ),
    # -- agent definition files.
    "parse_agent": Call(2, lambda w, a: parse_agent(v(a[0], AGENT_MD), profile=v(a[1], "strict"))),
    "load_agent_context": Call(
        3,
        lambda w, a: load_agent_context(
            v(a[0], _agent_repo(w)), v(a[1], "helper"), team=v(a[2], None)
        ),
    ),
    "read_core_knowledge": Call(
        2,
        lambda w, a: read_core_knowledge(
            v(a[0], _agent_repo(w)), v(a[1], load_agent_context(_agent_repo(w), "helper"))
        ),
    ),
    "agent_tools": Call(
        3,
        lambda w, a: agent_tools(
            v(a[0], parse_agent(AGENT_MD)), v(a[1], w.policy), agent=v(a[2], "planner")
        ),
    ),
    "agent_error_code": Call(
        1, lambda w, a: agent_error_code(v(a[0], SkillNotFoundError("missing", "gone")))
    ),
    "AgentDefinition": Call(
        2, lambda w, a: attrs.evolve(parse_agent(AGENT_MD), name=v(a[0], "x"), tools=v(a[1], None))
    ),
    "AgentContext": Call(
        2,
        lambda w, a: AgentContext(
            definition=parse_agent(AGENT_MD), source_path=v(a[0], "a.md"), identity=v(a[1], "a")
        ),
    ),
    "AgentContext.envelope": Call(
        0, lambda w, a: load_agent_context(_agent_repo(w), "helper").envelope()
    ),
    "AgentSkills.agent_context": Call(
        6,
        lambda w, a: w.handle.agent_context(
            v(a[0], "helper"),
            repo=v(a[1], _agent_repo(w)),
            team=v(a[2], None),
            harnesses=v(a[3], ()),
            operator_agents=v(a[4], ()),
            resolver=v(a[5], "auto"),
        ),
    ),
    "AgentSkills.aagent_context": Call(
        7,
        lambda w, a: asyncio.run(
            w.handle.aagent_context(
                v(a[0], "helper"),
                repo=v(a[1], _agent_repo(w)),
                operator_agents=v(a[2], ()),
                timeout=v(a[3], None),
                team=v(a[4], None),
                harnesses=v(a[5], ()),
                resolver=v(a[6], "auto"),
            )
        ),
    ),
    "ServedAgentContext": Call(
        2,
        lambda w, a: ServedAgentContext(
            context=load_agent_context(_agent_repo(w), "helper"),
            knowledge=v(a[0], ()),
            source="workspace",
            digest=v(a[1], "0" * 64),
            approver="tester",
        ),
    ),
    "ServedAgentContext.envelope": Call(
        0, lambda w, a: w.handle.agent_context("helper", repo=_agent_repo(w)).envelope()
    ),
    "KnowledgeFile": Call(
        2, lambda w, a: KnowledgeFile(directive=v(a[0], "Read a.md"), path=v(a[1], "a.md"))
    ),
    "AgentTools": Call(
        2,
        lambda w, a: AgentTools(
            declared=v(a[0], None),
            granted=frozenset(),
            effective=frozenset(),
            not_granted=v(a[1], ()),
        ),
    ),
    **{
        name: call
        for cls in (AgentNotFoundError,)
        for name, call in (
            (cls.__name__, _error(cls)),
            (f"{cls.__name__}.as_dict", _error_as_dict(cls)),
        )
    },
}


def _agent_repo(w: World) -> Path:
    """A repository holding one agent file and the file it reads, made once."""
    repo = w.tmp / "agent-repo"
    if not repo.exists():
        (repo / "src" / "agents").mkdir(parents=True)
        (repo / "src" / "agents" / "helper.md").write_bytes(AGENT_MD)
        (repo / "docs").mkdir()
        (repo / "docs" / "a.md").write_bytes(b"# A\n")
    return repo


def _registry_file(w: World) -> Path:
    path = w.tmp / "registry.yaml"
    path.write_bytes(b"skills:\n  hello:\n    keywords: [hi]\n")
    return path


_TORN_LOGS = itertools.count()


def _torn_log(w: World) -> Path:
    """A fresh log whose last write was cut short, for ``AuditLog.repair`` to mend."""
    path = w.tmp / f"torn-{next(_TORN_LOGS)}.log"
    AuditLog(path)
    with path.open("ab") as file:
        file.write(b'{"event":"cut sh')
    return path


def _audit_lines(w: World) -> list[bytes]:
    return (w.tmp / "audit.log").read_bytes().splitlines(keepends=True)


def _is_public_method(member: object) -> bool:
    function = getattr(member, "__func__", member)
    return inspect.isfunction(function) and function.__module__.startswith("skillguard")


def public_callables() -> set[str]:
    """Every public function, class and public method reachable from ``__all__``."""
    names: set[str] = set()
    public = [
        (getattr(module, name), name)
        for module in (skillguard, skillguard.agents, skillguard.audit)
        for name in module.__all__
    ]
    for obj, name in public:
        if inspect.isclass(obj):
            names.add(name)
            for attribute in dir(obj):
                if attribute.startswith("_"):
                    continue
                member = inspect.getattr_static(obj, attribute)
                if _is_public_method(member):
                    names.add(f"{name}.{attribute}")
        elif inspect.isfunction(obj):
            names.add(name)
    return names


def test_t14_the_table_covers_every_public_callable() -> None:
    # A public name added to __all__ without a row here would escape the property.
    assert set(CALLS) == public_callables()


@pytest.mark.parametrize("name", sorted(CALLS))
def test_every_row_succeeds_with_its_valid_arguments(world: World, name: str) -> None:
    # Without this, a row whose "valid" call already fails would test nothing.
    call = CALLS[name]
    call.run(world, (KEEP,) * call.slots)


def _call(w: World, call: Call, args: Args) -> None:
    with contextlib.suppress(SkillError):
        call.run(w, args)


@pytest.mark.parametrize("name", sorted(CALLS))
@settings(max_examples=25, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_t14_no_public_callable_raises_anything_but_a_skill_error(
    world: World, name: str, data: st.DataObject
) -> None:
    call = CALLS[name]
    args = tuple(
        data.draw(st.one_of(st.just(KEEP), hostile_values), label=f"arg{i}")
        for i in range(call.slots)
    )
    _call(world, call, args)


# -- one regression test per fix the property found ------------------------------------


def test_t14_a_path_whose_fspath_raises_is_a_usage_error(tmp_path: Path) -> None:
    for call in (
        lambda: AuditLog(Booby()),
        lambda: TrustStore(Booby()),
        lambda: AllowPolicy.from_file(Booby()),
        lambda: SafeRoot(Booby()),
        lambda: SkillRoots([Booby()]),
        lambda: SkillRoots([tmp_path], trusted_link_targets=[Booby()]),
        lambda: discover([Booby()]),
        lambda: EmbeddedSkills.from_directory(Booby()),
        lambda: default_roots(Booby()),
        lambda: default_roots(home=Booby()),
    ):
        with pytest.raises(SkillUsageError) as info:
            call()
        assert info.value.code == "bad_argument"


@pytest.mark.parametrize("path", ["\ud800", "a/\udfff/b"])
def test_t14_a_path_no_file_system_can_encode_is_a_usage_error(path: str) -> None:
    for call in (
        lambda: AuditLog(path),
        lambda: TrustStore(path),
        lambda: AllowPolicy.from_file(path),
        lambda: SafeRoot(path),
    ):
        with pytest.raises(SkillUsageError):
            call()


def test_t14_a_path_like_that_returns_bytes_is_a_usage_error() -> None:
    with pytest.raises(SkillUsageError):
        default_roots(home=BytesPath())  # type: ignore[arg-type]
    with pytest.raises(SkillUsageError):
        SafeRoot(BytesPath())  # type: ignore[arg-type]


def test_t14_skill_roots_check_every_path_before_opening_any(tmp_path: Path) -> None:
    # The bad root comes second: the first must not be left open behind the error.
    before = len(os.listdir("/proc/self/fd"))
    for bad in ("bad\x00root", Booby(), "\ud800"):
        with pytest.raises(SkillUsageError):
            SkillRoots([tmp_path, bad])
    assert len(os.listdir("/proc/self/fd")) == before


def test_t14_default_roots_refuses_an_environ_that_is_not_a_mapping_of_str() -> None:
    with pytest.raises(SkillUsageError):
        default_roots(environ=["SKILLGUARD_USER_SKILLS"])  # type: ignore[arg-type]
    with pytest.raises(SkillUsageError):
        default_roots(environ={"SKILLGUARD_USER_SKILLS": 5})  # type: ignore[dict-item]
    assert default_roots(environ={"SKILLGUARD_USER_SKILLS": ""})  # the project roots stay


def test_t14_a_choice_compared_with_a_raising_eq_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(SkillUsageError):
        parse_skill(SKILL_MD, profile=Booby())  # type: ignore[arg-type]
    with pytest.raises(SkillUsageError):
        Loader(AllowPolicy.from_mapping(POLICY), profile=Booby())  # type: ignore[arg-type]
    with pytest.raises(SkillUsageError):
        SafeRoot(tmp_path, resolver=Booby())  # type: ignore[arg-type]
    with pytest.raises(SkillUsageError):
        Decision(approved=True, by="me", scope=Booby())  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "fields",
    [
        {"approved": 1, "by": "me"},
        {"approved": True, "by": None},
        {"approved": True, "by": "me", "scope": "forever"},
    ],
)
def test_t14_a_bad_decision_is_a_usage_error(fields: dict[str, Any]) -> None:
    with pytest.raises(SkillUsageError):
        Decision(**fields)


@pytest.mark.parametrize("candidate", [None, 5, b"hello", ["hello"], Booby()])
def test_t14_is_valid_name_is_false_for_what_is_not_a_str(candidate: object) -> None:
    assert is_valid_name(candidate) is False


def test_t14_embedded_skills_check_their_resources_and_names(world: World) -> None:
    bad: tuple[object, ...] = ({"hello": Booby()}, {"hello": {"a.md": "text"}}, {5: {}}, ["hello"])
    for resources in bad:
        with pytest.raises(SkillUsageError):
            EmbeddedSkills({"hello": world.skill}, resources)  # type: ignore[arg-type]
    with pytest.raises(SkillUsageError):
        world.embedded.resources([])  # type: ignore[arg-type]
    assert world.embedded.resources("nope") == ()


def test_t14_loader_meta_raises_typed_errors(world: World) -> None:
    assert world.loader.meta("workspace", "notes").name == "notes"
    cases: tuple[tuple[Any, Any], ...] = (("elsewhere", "hello"), (Booby(), "hello"), ("x", None))
    for source, name in cases:
        with pytest.raises(SkillUsageError):
            world.loader.meta(source, name)
    for source in ("embedded", "workspace"):
        with pytest.raises(SkillNotFoundError):
            world.loader.meta(source, "nope")  # type: ignore[arg-type]


def test_t14_a_handle_for_an_unhashable_agent_is_a_usage_error(world: World) -> None:
    with pytest.raises(SkillUsageError):
        AgentSkills(world.loader, [], world.handle._token)  # type: ignore[arg-type]


@pytest.mark.parametrize("key", [None, 5, [], {}, Booby()])
def test_t14_frozen_map_get_of_a_key_that_is_not_a_str_is_the_default(key: object) -> None:
    assert FrozenMap({"a": "b"}).get(key, "default") == "default"  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "entries", [None, "abc", [("a", "b", "c")], [["a", "b", "c", "d"]], [("a", "b", "c", 4)]]
)
def test_t14_catalogs_refuse_entries_that_are_not_four_str(entries: object) -> None:
    for render in (catalog_json, catalog_xml):
        with pytest.raises(SkillUsageError):
            render(entries)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("name", "body", "resources"),
    [(None, "b", []), ("n", b"b", []), ("n", "b", "a.md"), ("n", "b", [1]), ("n", "b", True)],
)
def test_t14_activation_text_refuses_what_is_not_text(
    name: object, body: object, resources: object
) -> None:
    with pytest.raises(SkillUsageError):
        activation_text(name, body, resources)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "fields",
    [
        {"code": None, "reason": "r"},
        {"code": "c", "reason": None},
        {"code": "c", "reason": "r", "name": 5},
        {"code": "c", "reason": "r", "agent": Booby()},
        {"code": "c", "reason": "r", "key": b"k"},
        {"code": "c", "reason": "r", "line": "3"},
        {"code": "c", "reason": "r", "line": True},
    ],
)
def test_t14_an_error_with_bad_fields_is_a_usage_error(fields: dict[str, Any]) -> None:
    for cls in ERROR_CLASSES:
        with pytest.raises(SkillUsageError) as info:
            cls(**fields)
        assert info.value.code == "bad_argument"
    assert SkillError("c", "r", name="n", agent="a", line=3, key="k").as_dict()["line"] == 3
