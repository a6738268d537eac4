"""The ready skill tool (seed 004): tool_info, invoke, prepare_call, strict arguments.

Test names that start with ``test_tN_`` stop threat ``TN`` of threat-model.md.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from structlog.testing import capture_logs

from skillguard import (
    AllowPolicy,
    ApprovalRequest,
    Decision,
    EmbeddedSkills,
    Loader,
    MalformedSkillError,
    SkillContainmentError,
    SkillRoots,
    SkillUsageError,
    UnknownSkillError,
    parse_skill,
)
from skillguard._skills.tool import MAX_ARGUMENT_BYTES

if TYPE_CHECKING:
    from skillguard import AgentSkills


def write(folder: Path, name: str, description: str, body: str) -> None:
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {json.dumps(description)}\n---\n{body}\n"
    )


@pytest.fixture
def handle(tmp_path: Path) -> AgentSkills:
    embedded = tmp_path / "embedded"
    write(embedded / "pdf-tools", "pdf-tools", "Fill <PDF> forms & more.", "Embedded PDF.")
    workspace = tmp_path / "workspace"
    write(workspace / "notes", "notes", "Take notes.", "Workspace notes.")
    policy = AllowPolicy.from_mapping(
        {"agents": {"planner": {"skills": ["pdf-tools", "notes"], "workspace": "approve"}}}
    )

    def approve(request: ApprovalRequest) -> Decision:
        del request
        return Decision(approved=True, by="tester")

    loader = Loader(
        policy,
        embedded=EmbeddedSkills.from_directory(embedded),
        workspace=[workspace],
        approver=approve,
    )
    return loader.bind("planner")


def test_tool_info_has_a_fixed_name_and_a_one_property_schema(handle: AgentSkills) -> None:
    info = handle.tool_info()
    assert info.name == "skill"
    assert info.parameters == {
        "type": "object",
        "properties": {
            "name": {
                "type": "string",
                "maxLength": 64,
                "description": "The name of one skill from the list in the description.",
            }
        },
        "required": ["name"],
        "additionalProperties": False,
    }
    assert "<name>pdf-tools</name>" in info.description
    assert "Fill &lt;PDF&gt; forms &amp; more." in info.description
    assert "Take notes" not in info.description  # not approved: the name only


def test_host_shapes(handle: AgentSkills) -> None:
    info = handle.tool_info()
    openai = info.as_openai()
    assert openai["type"] == "function"
    function = openai["function"]
    assert isinstance(function, dict)
    assert re.fullmatch(r"[A-Za-z0-9_-]{1,64}", function["name"])
    assert function["parameters"] == info.parameters
    assert function["strict"] is True
    responses = info.as_openai(api="responses")
    assert responses["name"] == "skill"
    assert responses["parameters"] == info.parameters
    with pytest.raises(SkillUsageError):
        info.as_openai(api="other")  # type: ignore[call-overload]
    assert info.as_anthropic() == {
        "name": "skill",
        "description": info.description,
        "input_schema": info.parameters,
    }
    mcp = info.as_mcp()  # the keyword arguments of mcp.types.Tool
    assert mcp == {
        "name": "skill",
        "description": info.description,
        "input_schema": info.parameters,
    }
    json.dumps([openai, responses, info.as_anthropic(), mcp])  # plain JSON data


def test_invoke_returns_the_activation_text(handle: AgentSkills) -> None:
    text = handle.invoke('{"name": "pdf-tools"}')
    assert text == handle.load("pdf-tools").activation()
    assert handle.invoke(b'{"name":"notes"}').startswith('<skill_content name="notes">')
    assert asyncio.run(handle.ainvoke('{"name": "pdf-tools"}')) == text


@pytest.mark.parametrize(
    "args",
    [
        "",
        "[]",
        '"pdf-tools"',
        "{}",
        '{"name": 3}',
        '{"name": null}',
        '{"name": "pdf-tools", "extra": 1}',
        '{"name": "pdf-tools", "name": "notes"}',
        '{"name": "pdf-tools"',
        '{"name": NaN}',
        '{"name": ["pdf-tools"]}',
        '{"name": "' + "a" * MAX_ARGUMENT_BYTES + '"}',
        b'{"name": "\xff"}',
    ],
)
def test_t85_arguments_are_parsed_strictly(handle: AgentSkills, args: str | bytes) -> None:
    with capture_logs() as logs, pytest.raises(MalformedSkillError) as caught:
        handle.invoke(args)
    assert caught.value.code == "bad_arguments"
    assert logs[-1]["event"] == "malformed_skill"


@pytest.mark.parametrize(
    "name",
    [
        "",
        ".",
        "..",
        "../notes",
        "a/b",
        "a\\b",
        "pdf-tools\x00",
        "\x1b[2J",
        "PDF-tools",
        "a" * 65,
        "pdf--tools",
        "-pdf",
        "pdf\u2028tools",
        "\uff50\uff44\uff46",
    ],
)
def test_t86_a_name_that_is_not_a_slug_is_a_containment_error(
    handle: AgentSkills, name: str
) -> None:
    args = json.dumps({"name": name})
    with capture_logs() as logs, pytest.raises(SkillContainmentError) as caught:
        handle.invoke(args)
    assert caught.value.code == "bad_name"
    assert logs[-1]["event"] == "containment_violation"
    with pytest.raises(SkillContainmentError):
        handle.prepare_call(uuid.uuid4(), args)


def test_a_slug_outside_the_grant_is_not_granted(handle: AgentSkills) -> None:
    with pytest.raises(UnknownSkillError) as caught:
        handle.invoke('{"name": "secret"}')
    assert caught.value.code == "not_granted"


def test_t86_the_execution_id_travels_in_the_request_and_the_audit(
    handle: AgentSkills,
) -> None:
    execution = uuid.uuid4()
    with capture_logs() as logs:
        prepared = handle.prepare_call(execution, '{"name": "notes"}')
        assert prepared.request is not None
        assert prepared.request.execution_id == str(execution)
        assert prepared.execution_id == str(execution)
        handle.load(prepared)
        embedded = handle.prepare_call("call_42", '{"name": "pdf-tools"}')
        assert embedded.execution_id == "call_42"
        handle.load(embedded)
    by_event = {(log["event"], log.get("skill")): log for log in logs}
    for event in ("approval_requested", "approval_granted", "load_granted"):
        assert by_event[(event, "notes")]["execution_id"] == str(execution)
    assert by_event[("load_granted", "pdf-tools")]["execution_id"] == "call_42"


@pytest.mark.parametrize("execution", ["", "a b", "x" * 129, 3, None, "\x1b"])
def test_a_bad_execution_id_is_a_usage_error(handle: AgentSkills, execution: object) -> None:
    with pytest.raises(SkillUsageError):
        handle.prepare_call(execution, '{"name": "notes"}')  # type: ignore[arg-type]
    with pytest.raises(SkillUsageError):
        handle.invoke(3)  # type: ignore[arg-type]


def test_malformed_skill_error_names_the_expected_skill() -> None:
    with pytest.raises(MalformedSkillError) as caught:
        parse_skill(b"no fence", expected_name="pdf-tools")
    assert caught.value.name == "pdf-tools"
    assert "'pdf-tools'" in str(caught.value)
    with pytest.raises(MalformedSkillError) as unnamed:
        parse_skill(b"no fence", expected_name="Bad Folder")
    assert unnamed.value.name is None
    with pytest.raises(MalformedSkillError) as mismatch:
        parse_skill(b"---\nname: other\ndescription: x\n---\n", expected_name="pdf-tools")
    assert mismatch.value.name == "pdf-tools"


# -- the registry descriptor (seed 002) --------------------------------------------


def test_descriptors_carry_the_folder_the_body_after_activation_and_every_slot(
    tmp_path: Path,
) -> None:
    embedded = tmp_path / "embedded"
    write(embedded / "pdf-tools", "pdf-tools", "PDF.", "Embedded PDF.")
    (embedded / "pdf-tools" / "scripts").mkdir()  # empty: still a slot
    (embedded / "pdf-tools" / "references").mkdir()
    (embedded / "pdf-tools" / "references" / "forms.md").write_text("# Forms")
    workspace = tmp_path / "workspace"
    write(workspace / "notes", "notes", "Notes.", "Workspace notes.")
    (workspace / "notes" / "assets").mkdir()
    policy = AllowPolicy.from_mapping(
        {"agents": {"planner": {"skills": ["pdf-tools", "notes"], "workspace": "approve"}}}
    )

    def approve(request: ApprovalRequest) -> Decision:
        del request
        return Decision(approved=True, by="tester")

    loader = Loader(
        policy,
        embedded=EmbeddedSkills.from_directory(embedded),
        workspace=[workspace],
        approver=approve,
    )
    planner = loader.bind("planner")
    before = planner.tool_descriptor("pdf-tools")
    assert before.body == ""
    assert before.agent_skill_path.endswith("embedded/pdf-tools")
    assert [(s.name, s.resource_type) for s in before.resource_slots] == [
        ("scripts", "agent_skill_scripts"),
        ("references", "agent_skill_references"),
    ]
    assert before.resource_slots[0].path == before.agent_skill_path + "/scripts"
    after = planner.load("pdf-tools").to_tool_descriptor()
    assert after.body == "Embedded PDF.\n"
    assert after.resource_slots == before.resource_slots
    hidden = planner.tool_descriptor("notes")  # not approved: the name only
    assert (hidden.name, hidden.description, hidden.agent_skill_path) == ("workspace/notes", "", "")
    assert hidden.resource_slots == ()
    loaded = planner.load("notes").to_tool_descriptor()
    assert loaded.body == "Workspace notes.\n"
    assert loaded.agent_skill_path == str(workspace / "notes")
    assert [s.name for s in loaded.resource_slots] == ["assets"]
    shown = planner.tool_descriptor("notes")
    assert (shown.description, shown.body) == ("Notes.", "")
    assert shown.agent_skill_path == loaded.agent_skill_path
    with pytest.raises(UnknownSkillError):
        planner.tool_descriptor("secret")


def test_embedded_slots_from_files_and_arguments() -> None:
    skill = parse_skill(b"---\nname: a\ndescription: x\n---\n")
    embedded = EmbeddedSkills({"a": skill}, {"a": {"scripts/run.py": b"", "top.md": b""}})
    assert embedded.slots("a") == ("scripts",)
    given = EmbeddedSkills({"a": skill}, slots={"a": ["assets", "scripts", "other"]})
    assert given.slots("a") == ("scripts", "assets")
    with pytest.raises(SkillUsageError):
        EmbeddedSkills({"a": skill}, slots=["scripts"])  # type: ignore[arg-type]


# -- namespaced names (seed 002) -------------------------------------------------------

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "skills" / "deploy-to-staging"


def test_the_seed_example_loads_with_namespaces_and_is_named_by_them(tmp_path: Path) -> None:
    embedded = tmp_path / "embedded"
    shutil.copytree(EXAMPLE, embedded / "deploy-to-staging")
    # Without the opt-in, compat identifies it by its folder and drops the namespace.
    plain = EmbeddedSkills.from_directory(embedded, profile="compat").get("deploy-to-staging")
    assert plain is not None
    assert plain.namespace is None
    assert [w.code for w in plain.warnings] == ["invalid_name", "compatibility_mapping"]
    skills = EmbeddedSkills.from_directory(embedded, profile="compat", namespaces=True)
    policy = AllowPolicy.from_mapping({"agents": {"ops": {"skills": ["deploy-to-staging"]}}})
    ops = Loader(policy, embedded=skills).bind("ops")
    (meta,) = ops.catalog()
    assert (meta.namespace, meta.name) == ("local", "deploy-to-staging")
    before = ops.tool_descriptor("deploy-to-staging")
    assert (before.name, before.body) == ("local/deploy-to-staging", "")
    assert [slot.name for slot in before.resource_slots] == ["scripts", "references", "assets"]
    loaded = ops.load("deploy-to-staging")
    assert loaded.skill.steps[3].text == "Execute scripts/deploy.py to deploy"
    assert loaded.skill.allowed_tools == ("builtin/shell", "builtin/git-status")
    assert loaded.resources() == (
        "assets/config.json",
        "references/runbook.md",
        "scripts/deploy.py",
    )
    after = loaded.to_tool_descriptor()
    assert after.name == "local/deploy-to-staging"
    assert after.body.startswith("\n# Deployment Details")
    assert after.resource_slots == before.resource_slots


def test_t88_a_namespace_is_never_the_identifier(tmp_path: Path) -> None:
    embedded = tmp_path / "embedded"
    write(embedded / "deploy", "deploy", "Trusted deploy.", "Trusted.")
    workspace = tmp_path / "workspace"
    write(workspace / "deploy", "evil/deploy", "Shadow.", "Shadow.")
    write(workspace / "notes", "team/notes", "Team notes.", "Notes.")
    policy = AllowPolicy.from_mapping(
        {"agents": {"planner": {"skills": ["deploy", "notes"], "workspace": "approve"}}}
    )
    asked: list[str] = []

    def approve(request: ApprovalRequest) -> Decision:
        asked.append(request.skill)
        return Decision(approved=True, by="tester")

    roots = SkillRoots([workspace], namespaces=True)
    loader = Loader(
        policy,
        embedded=EmbeddedSkills.from_directory(embedded, namespaces=True),
        workspace=roots,
        approver=approve,
    )
    planner = loader.bind("planner")
    # The policy grants, the approver sees and the model asks for the short name; a
    # workspace namespace does not make a second skill of the embedded one's name.
    assert planner.load("deploy").body == "Trusted.\n"
    assert planner.tool_descriptor("deploy").name == "embedded/deploy"
    # The namespace of a workspace skill nobody reviewed is not shown.
    assert planner.tool_descriptor("notes").name == "workspace/notes"
    assert [meta.namespace for meta in planner.catalog()] == [None, None]
    with pytest.raises(SkillContainmentError) as bad:
        planner.invoke(json.dumps({"name": "team/notes"}))
    assert bad.value.code == "bad_name"
    with pytest.raises(UnknownSkillError):
        planner.load("team/notes")
    assert planner.load("notes").to_tool_descriptor().name == "team/notes"
    assert asked == ["notes"]
    assert planner.tool_descriptor("notes").name == "team/notes"
    assert [meta.namespace for meta in planner.catalog()] == [None, "team"]
    roots.close()


def test_t88_without_the_opt_in_a_namespaced_workspace_skill_is_skipped(tmp_path: Path) -> None:
    write(tmp_path / "notes", "team/notes", "Team notes.", "Notes.")
    with SkillRoots([tmp_path]) as roots:
        found = roots.discover()
    assert found.skills == ()
    assert [(s.code, s.path) for s in found.skipped] == [("invalid_name", "notes")]
    with SkillRoots([tmp_path], namespaces=True) as roots:
        (meta,) = roots.discover().skills
        assert (meta.namespace, meta.name) == ("team", "notes")
        assert roots.load("notes").namespace == "team"
    with pytest.raises(SkillUsageError):
        SkillRoots([tmp_path], namespaces=1)  # type: ignore[arg-type]


def test_t87_a_package_of_namespaced_skills_needs_the_opt_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "skillguard_namespaced_skills"
    package.mkdir()
    (package / "__init__.py").write_text("")
    write(package / "skills" / "deploy", "team/deploy", "Deploys.", "Deploy.")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(MalformedSkillError) as refused:
        EmbeddedSkills.from_package("skillguard_namespaced_skills")
    assert refused.value.code == "invalid_name"
    embedded = EmbeddedSkills.from_package("skillguard_namespaced_skills", namespaces=True)
    skill = embedded.get("deploy")
    assert skill is not None
    assert (skill.namespace, skill.name) == ("team", "deploy")
