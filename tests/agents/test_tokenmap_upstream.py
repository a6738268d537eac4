"""The upstream token map (jaybeeuu/agent-cortex): its format, its contract's rules,
and its agents composed for every harness (threat-model.md T100, T103, T295)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from skillguard import MalformedSkillError
from skillguard._agents.install_plan import plan_install
from skillguard._core.text import find_hidden
from skillguard.agents import compose, parse_agent, parse_token_map

UPSTREAM = Path(__file__).resolve().parents[1] / "fixtures" / "agent-cortex"
RAW = (UPSTREAM / "token-map.json").read_bytes()


def upstream(**changes: Any) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(RAW)
    document.update(changes)
    return document


def parse(document: dict[str, Any]) -> Any:
    return parse_token_map(json.dumps(document).encode())


def refused(document: dict[str, Any], code: str) -> MalformedSkillError:
    with pytest.raises(MalformedSkillError) as caught:
        parse(document)
    assert caught.value.code == code, caught.value
    return caught.value


def test_the_upstream_token_map_reads() -> None:
    tokens = parse_token_map(RAW)
    assert tokens.harnesses == ("copilot", "claude", "pi")
    assert tokens.has_contract
    assert tokens.substitution_order == ("SECTION", "TOOL", "PATH")
    assert dict(tokens.deferred) == {"ralph": ("claude",)}
    assert tokens.deferred_for("claude") == {"ralph"}
    assert tokens.deferred_for("pi") == frozenset()
    # ${ENV_VAR} and ~ paths are kept verbatim: the harness expands them, not skillguard.
    assert tokens.paths["plugin_root"]["claude"] == "${CLAUDE_PLUGIN_ROOT}"
    assert str(tokens.paths["plugin_root"]["pi"]).startswith("~/.pi/")
    assert tokens.tools["read_agent"]["claude"] is None
    assert tokens.warnings == ()


@pytest.mark.parametrize("key", ["name", "description", "token_format", "notes"])
def test_t100_documentation_keys_are_held_to_the_character_rules(key: str) -> None:
    hidden = "text \u202e reversed"
    refused(upstream(**{key: {"deep": [hidden]}}), "forbidden_character")
    refused(upstream(**{key: {"bell\x07": "x"}}), "control_character")


def test_an_unknown_documentation_key_is_a_warning() -> None:
    tokens = parse(upstream(changelog="added pi"))
    assert [w.code for w in tokens.warnings] == ["token_map_unknown_key"]
    assert tokens.warnings[0].key == "changelog"
    contract = upstream()["contract"]
    tokens = parse(
        upstream(
            contract={**contract, "owner": "x", "error_handling": {"new_case": "warn"}},
        )
    )
    assert sorted(w.key or "" for w in tokens.warnings) == ["new_case", "owner"]
    # Still held to the character rules.
    refused(upstream(changelog="\u2066hidden"), "forbidden_character")


def test_an_unknown_key_where_it_changes_the_output_is_an_error() -> None:
    agents = upstream()["agents"]
    refused(upstream(agents={**agents, "suffix": {}}), "token_map_schema")
    refused(upstream(tools={"bash": {"vim": "bash"}}), "token_map_schema")


@pytest.mark.parametrize("where", ["top", "contract"])
def test_a_version_above_the_supported_one_is_refused_with_the_range(where: str) -> None:
    document = upstream()
    if where == "top":
        document["version"] = 2
    else:
        document["contract"]["version"] = 2
    error = refused(document, "token_map_version")
    assert "versions 1 to 1" in error.reason
    document["version"] = 0
    refused(document, "token_map_schema")


def test_the_contracts_harness_ids_must_be_the_harnesses() -> None:
    document = upstream()
    document["contract"]["harness_ids"] = ["copilot", "claude"]
    refused(document, "token_map_contract")


@pytest.mark.parametrize(
    "order", [["TOOL", "SECTION", "PATH"], ["SECTION", "TOOL"], ["SECTION", "TOOL", "TOOL"], "x"]
)
def test_a_substitution_order_the_composer_cannot_follow_is_refused(order: Any) -> None:
    document = upstream()
    document["contract"]["substitution_order"] = order
    refused(document, "token_map_contract")


def test_the_composer_follows_the_contracts_order(tmp_path: Path) -> None:
    document = upstream()
    document["contract"]["substitution_order"] = ["SECTION", "PATH", "TOOL"]
    tokens = parse(document)
    assert tokens.substitution_order == ("SECTION", "PATH", "TOOL")
    agent = tmp_path / "plan"
    shutil.copytree(UPSTREAM / "agents" / "plan", agent)
    composed = compose(agent, "copilot", token_map=tokens)
    assert "{{" not in composed.text


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("${HOME}/x", True),
        ("${A}${B_2}", True),
        ("~/.copilot/agents", True),
        ("{x}", False),
        ("${A}}", False),
        ("${{A}}", False),
        ("${1A}", False),
        ("$A}", False),
    ],
)
def test_a_path_holds_braces_only_in_env_references(value: str, ok: bool) -> None:
    document = upstream(paths={"plugin_root": {"claude": value}})
    if ok:
        assert parse(document).paths["plugin_root"]["claude"] == value
    else:
        refused(document, "token_map_schema")


def test_an_unknown_path_base_is_an_error() -> None:
    paths = upstream()["paths"]
    paths["skills_dir"]["pi"] = {"base": "nowhere", "relative": "skills"}
    refused(upstream(paths=paths), "unknown_path_base")


@pytest.mark.parametrize(
    "deferred",
    [
        {"ralph": ["vim"]},
        {"ralph": []},
        {"ralph": "claude"},
        {"Ralph": ["claude"]},
        {"../x": ["pi"]},
    ],
)
def test_a_bad_deferred_list_is_refused(deferred: Any) -> None:
    agents = upstream()["agents"]
    refused(upstream(agents={**agents, "deferred": deferred}), "token_map_schema")


def test_a_relative_path_token_is_joined_onto_plugin_root(tmp_path: Path) -> None:
    agent = tmp_path / "plan"
    shutil.copytree(UPSTREAM / "agents" / "plan", agent)
    tokens = parse_token_map(RAW)
    claude = compose(agent, "claude", token_map=tokens)
    assert "`${CLAUDE_PLUGIN_ROOT}/skills/workflow/plan/SKILL.md`" in claude.text
    copilot = compose(agent, "copilot", token_map=tokens)
    assert "`~/.copilot/installed-plugins/_direct/agent-cortex/skills/workflow/plan/SKILL.md`" in (
        copilot.text
    )


def _frontmatter_and_body(text: str) -> tuple[dict[str, Any], str]:
    parsed = parse_agent(text.encode())
    values = {"name": parsed.name, "description": parsed.description, "tools": parsed.tools}
    return values, parsed.full_body


def test_composing_the_upstream_sources_gives_the_committed_generated_file(
    tmp_path: Path,
) -> None:
    """The upstream commits ``agents/plan.agent.md``, generated for copilot from
    ``agents/plan/``. The frontmatter values are the same. The body differs on purpose
    in three places, each removed here before comparing: skillguard's generated-file
    comment; the ``# plan`` title line of ``agent.md``, which skillguard keeps (the
    upstream build drops it: skillguard never drops text the author wrote); and the
    ``{{PATH:}}`` token, which the committed file (generated before the token map's
    contract) left relative, and the contract joins onto ``plugin_root``."""
    agent = tmp_path / "plan"
    shutil.copytree(UPSTREAM / "agents" / "plan", agent)
    composed = compose(agent, "copilot", token_map=parse_token_map(RAW), dialect="native")
    ours, our_body = _frontmatter_and_body(composed.text)
    theirs, their_body = _frontmatter_and_body((UPSTREAM / "agents" / "plan.agent.md").read_text())
    assert ours == theirs
    comment, _, our_body = our_body.partition("\n\n")
    assert comment.startswith("<!-- Generated by skillguard")
    title, _, our_body = our_body.partition("\n\n")
    assert title == "# plan — end-to-end feature planning agent"
    root = "~/.copilot/installed-plugins/_direct/agent-cortex/"
    assert our_body.replace(root, "") == their_body.lstrip("\n")
    argument_hint = "argument-hint: " + json.dumps("Plan <feature or change description>")
    assert argument_hint in composed.text
    assert argument_hint in (UPSTREAM / "agents" / "plan.agent.md").read_text()


@pytest.mark.parametrize("harness", ["copilot", "claude", "pi"])
def test_the_upstream_agents_compose_for_every_harness(harness: str) -> None:
    plan = plan_install(
        UPSTREAM / "agents",
        harness,
        token_map=parse_token_map(RAW),
        native_dir=UPSTREAM / "agents-native",
    )
    assert plan.ok, plan.findings
    by_source = {item.source: item for item in plan.items}
    for item in plan.items:
        assert b"{{" not in item.data
        assert find_hidden(item.data.decode()) is None
        parse_agent(item.data)
    if harness == "claude":
        # ralph is deferred for claude: the native file, byte for byte.
        assert by_source["ralph"].kind == "native"
        assert by_source["ralph"].data == (UPSTREAM / "agents-native" / "ralph.md").read_bytes()
        assert sorted(by_source) == ["plan", "ralph"]
        assert [item.path for item in plan.items] == ["plan.md", "ralph.md"]
    elif harness == "copilot":
        assert [item.path for item in plan.items] == ["plan.agent.md", "ralph.agent.md"]
        # A null tool is omitted from the tool list and dropped from prose, with a warning.
        assert b"wait_for_agents" not in by_source["ralph"].data
        assert [w.code for _, w in plan.warnings] == ["dropped_null_tool"]
    else:
        # plan has no pi folder: a note, not a silent skip.
        assert [item.path for item in plan.items] == ["ralph.md"]
        assert [(f.subject, f.code) for f in plan.findings] == [("plan", "no_harness")]
        assert b"wait_for_agents" in by_source["ralph"].data
