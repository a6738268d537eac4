"""Composable agent directories (seed 001): token map, composer, writer, validator."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from skillguard import (
    MalformedSkillError,
    SkillContainmentError,
    SkillError,
    SkillNotFoundError,
    SkillUsageError,
)
from skillguard._agents.compose_read import parse_frontmatter
from skillguard._cli.main import main
from skillguard._core.text import find_hidden
from skillguard._fs.write import OutputFolder
from skillguard.agents import (
    ComposedAgent,
    ComposeLimits,
    TokenMap,
    compose,
    parse_agent,
    parse_token_map,
)
from tests.fs.test_fs_write import file_size_limit
from tests.steps import Meter, grows_linearly, meter_module, python_steps

if TYPE_CHECKING:
    from collections.abc import Callable

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "agents"
HARNESSES = ("pi", "copilot", "claude")

MAP: dict[str, Any] = {
    "version": 1,
    "harnesses": ["pi", "copilot", "claude"],
    "tools": {
        "task": {"pi": "task", "copilot": "task", "claude": "Task"},
        "wait": {"pi": "wait_for_agents", "copilot": None, "claude": None},
    },
    "paths": {
        "skills": {"pi": "~/.pi/skills", "copilot": "skills", "claude": "skills"},
        "plan": {
            "pi": {"base": "skills", "relative": "plan/SKILL.md"},
            "copilot": "plan.md",
        },
    },
    "agents": {"prefix": {"claude": "cortex:"}},
}
FRONT = {"name": "cortex:ralph", "description": "Runs beads", "tools": ["bash", "task"]}


def token_map(**changes: Any) -> TokenMap:
    return parse_token_map(json.dumps({**MAP, **changes}).encode())


def make_agent(
    base: Path,
    body: str = "Use {{TOOL:task}}.\n",
    *,
    name: str = "ralph",
    front: dict[str, Any] | bytes | None = None,
    sections: dict[str, str] | None = None,
    harness: str = "pi",
) -> Path:
    agent = base / name
    (agent / harness).mkdir(parents=True, exist_ok=True)
    (agent / "agent.md").write_text(body)
    raw = front if isinstance(front, bytes) else json.dumps(front or FRONT).encode()
    (agent / harness / "frontmatter.json").write_bytes(raw)
    for section, text in (sections or {}).items():
        (agent / harness / f"{section}.md").write_text(text)
    return agent


def refused(code: str, agent: Path, harness: str = "pi", **kwargs: Any) -> SkillError:
    kwargs.setdefault("token_map", token_map())
    with pytest.raises(SkillError) as caught:
        compose(agent, harness, **kwargs)
    assert caught.value.code == code, caught.value
    return caught.value


# -- the seed's examples ----------------------------------------------------------------


@pytest.mark.parametrize("agent", ["ralph", "plan"])
@pytest.mark.parametrize("harness", HARNESSES)
@pytest.mark.parametrize("dialect", ["verbatim", "native"])
def test_the_seeds_examples_compose_for_every_harness(
    agent: str, harness: str, dialect: Any
) -> None:
    tokens = parse_token_map((EXAMPLES / "token-map.json").read_bytes())
    composed = compose(EXAMPLES / agent, harness, token_map=tokens, dialect=dialect)
    assert "{{" not in composed.text
    parsed = parse_agent(composed.data)
    assert parsed.name == composed.name
    assert composed.sha256 == __import__("hashlib").sha256(composed.data).hexdigest()


def test_the_seeds_examples_validate(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["agent", "validate", "--token-map", str(EXAMPLES / "token-map.json"), str(EXAMPLES)]
    )
    out, _ = capsys.readouterr()
    assert code == 0, out
    assert "2 checked, 2 ok, 0 failed" in out


# -- strict JSON ------------------------------------------------------------------------

SEED_EXAMPLE = b"""{
  "name": "agent-cortex:ralph",
  "description": "Parallel task orchestration agent",
  "tools": ["bash", "task", "read_agent"],
  "model": "claude-sonnet-4-5",           // optional
  "argumentHint": "Run all pending beads"  // optional
}"""


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        (SEED_EXAMPLE, "json_comment"),
        (b'{"name": "a" /* block */}', "json_comment"),
        (b'{"name": "a", "name": "b"}', "duplicate_key"),
        (b'{"tools": [{"x": 1, "x": 2}]}', "duplicate_key"),
        (b'{"name": NaN}', "json_non_finite"),
        (b'{"name": -Infinity}', "json_non_finite"),
        (b'["name"]', "not_a_mapping"),
        (b'"name"', "not_a_mapping"),
        (b'{"name": }', "json_syntax"),
        (b'{"name": "\xff"}', "bad_encoding"),
        (b'{"a": ' + b"[" * 9 + b"]" * 9 + b"}", "too_deep"),
        (b" " * (16 * 1024 + 1), "too_large"),
    ],
)
def test_t100_every_json_defect_has_its_own_code(raw: bytes, code: str) -> None:
    with pytest.raises(MalformedSkillError) as caught:
        parse_frontmatter(raw)
    assert caught.value.code == code


def test_t100_the_seeds_commented_example_says_why() -> None:
    with pytest.raises(MalformedSkillError) as caught:
        parse_frontmatter(SEED_EXAMPLE)
    assert "line 5: JSON does not allow comments" in caught.value.reason


def test_t100_a_slash_inside_a_string_is_not_a_comment() -> None:
    front = parse_frontmatter(b'{"name": "a//b", "description": "/* x */", "tools": ["t"]}')
    assert (front.name, front.description) == ("a//b", "/* x */")


@pytest.mark.parametrize(
    ("document", "code", "message"),
    [
        (
            {"description": "d", "tools": ["t"]},
            "missing_field",
            "missing required field: name",
        ),
        (
            {"name": "n", "tools": ["t"]},
            "missing_field",
            "missing required field: description",
        ),
        (
            {"name": "n", "description": "d"},
            "missing_field",
            "missing required field: tools",
        ),
        ({**FRONT, "argumentHnt": "x"}, "unknown_field", "unknown field: argumentHnt"),
        ({**FRONT, "name": ""}, "empty_field", "field name must not be empty"),
        (
            {**FRONT, "description": " "},
            "empty_field",
            "field description must not be empty",
        ),
        ({**FRONT, "name": 1}, "wrong_type", "field name must be a string"),
        (
            {**FRONT, "tools": "bash"},
            "wrong_type",
            "field tools must be an array of strings",
        ),
        (
            {**FRONT, "tools": ["bash", 1]},
            "wrong_type",
            "field tools must be an array of strings",
        ),
        ({**FRONT, "tools": []}, "empty_field", "field tools must not be empty"),
        ({**FRONT, "tools": [""]}, "empty_field", "field tools holds an empty name"),
        ({**FRONT, "model": None}, "wrong_type", "field model must be a string"),
        ({**FRONT, "argumentHint": 3}, "wrong_type", "field argumentHint must be a string"),
        ({**FRONT, "description": "a\x1bb"}, "control_character", "U+001B"),
        ({**FRONT, "name": "a\u202eb"}, "forbidden_character", "U+202E"),
    ],
)
def test_t100_each_schema_violation_is_named_in_plain_words(
    document: dict[str, Any], code: str, message: str
) -> None:
    with pytest.raises(MalformedSkillError) as caught:
        parse_frontmatter(json.dumps(document).encode())
    assert caught.value.code == code
    assert message in caught.value.reason


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("name", "Helper\n\n## Rules"),
        ("name", "Helper\tadmin"),
        ("name", "Helper\n"),
        ("model", "sonnet\nopus"),
        ("tools", ["read", "bash\n## Rules"]),
    ],
)
def test_t118_composed_names_models_and_tools_are_one_line(key: str, value: object) -> None:
    with pytest.raises(MalformedSkillError) as caught:
        parse_frontmatter(json.dumps({**FRONT, key: value}).encode())
    assert (caught.value.code, caught.value.key) == ("not_one_line", key)


def test_optional_fields_are_kept() -> None:
    front = parse_frontmatter(json.dumps({**FRONT, "model": "m", "argumentHint": "h"}).encode())
    assert (front.model, front.argument_hint, front.tools) == ("m", "h", ("bash", "task"))


# -- the token map ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "code"),
    [
        ({"version": 2}, "token_map_version"),
        ({"version": "1"}, "token_map_schema"),
        ({"agents": {"prefix": {}, "extra": {}}}, "token_map_schema"),
        ({"harnesses": []}, "token_map_schema"),
        ({"harnesses": ["Pi"]}, "token_map_schema"),
        ({"harnesses": ["pi", "pi"]}, "token_map_schema"),
        ({"tools": {"task": {"vim": "x"}}}, "token_map_schema"),
        ({"tools": {"task": {"pi": ""}}}, "token_map_schema"),
        ({"tools": {"task": {"pi": "{{TOOL:x}}"}}}, "token_map_schema"),
        ({"tools": {"task": "task"}}, "token_map_schema"),
        ({"tools": []}, "token_map_schema"),
        ({"paths": {"p": {"pi": {"base": "skills"}}}}, "token_map_schema"),
        ({"paths": {"p": {"pi": {"base": "nowhere", "relative": "x"}}}}, "unknown_path_base"),
        (
            {"paths": {"a": {"pi": "x"}, "p": {"pi": {"base": "a", "relative": "../x"}}}},
            "path_not_relative",
        ),
        ({"agents": {"prefix": {"pi": 1}}}, "token_map_schema"),
        ({"agents": {"suffix": {}}}, "token_map_schema"),
        ({"tools": {"t": {"pi": "a\u202eb"}}}, "forbidden_character"),
    ],
)
def test_t100_a_bad_token_map_is_refused(changes: dict[str, Any], code: str) -> None:
    with pytest.raises(MalformedSkillError) as caught:
        token_map(**changes)
    assert caught.value.code == code


def test_t100_a_token_map_is_strict_json() -> None:
    with pytest.raises(MalformedSkillError) as caught:
        parse_token_map(b'{"version": 1, "version": 1, "harnesses": ["pi"]}')
    assert caught.value.code == "duplicate_key"
    with pytest.raises(SkillUsageError):
        parse_token_map("{}")  # type: ignore[arg-type]


def test_t104_the_token_map_cap_is_inclusive() -> None:
    raw = json.dumps(MAP).encode()
    assert parse_token_map(raw, max_bytes=len(raw)).harnesses == ("pi", "copilot", "claude")
    with pytest.raises(MalformedSkillError) as caught:
        parse_token_map(raw, max_bytes=len(raw) - 1)
    assert caught.value.code == "too_large"


# -- reading a directory ----------------------------------------------------------------


def test_agent_md_has_no_frontmatter(tmp_path: Path) -> None:
    agent = make_agent(tmp_path, "---\nname: x\n---\nbody\n")
    refused("frontmatter_in_agent_md", agent)


def test_a_missing_agent_md_is_not_found(tmp_path: Path) -> None:
    agent = make_agent(tmp_path)
    (agent / "agent.md").unlink()
    error = refused("missing", agent)
    assert isinstance(error, SkillNotFoundError)
    assert error.reason.startswith("agent.md")


def test_a_harness_without_frontmatter_json_is_not_found(tmp_path: Path) -> None:
    agent = make_agent(tmp_path)
    (agent / "claude").mkdir()
    refused("missing", agent, "claude")


@pytest.mark.parametrize("target", ["", "agent.md", "pi", "pi/frontmatter.json", "pi/polling.md"])
def test_t107_a_symlink_anywhere_in_the_directory_is_refused(tmp_path: Path, target: str) -> None:
    agent = make_agent(tmp_path / "repo", "{{SECTION:polling}}\n", sections={"polling": "p\n"})
    real = tmp_path / "real"
    (agent / target).rename(real) if target else agent.rename(real)
    (agent / target).symlink_to(real)
    error = refused("symlink", agent)
    assert isinstance(error, SkillContainmentError)


@pytest.mark.parametrize("target", ["agent.md", "pi/frontmatter.json", "pi/polling.md"])
def test_t107_a_fifo_is_refused_without_blocking(tmp_path: Path, target: str) -> None:
    agent = make_agent(tmp_path, "{{SECTION:polling}}\n", sections={"polling": "p\n"})
    (agent / target).unlink()
    os.mkfifo(agent / target)
    with pytest.raises(SkillContainmentError):
        compose(agent, "pi", token_map=token_map())


def test_t107_a_hard_link_is_refused(tmp_path: Path) -> None:
    agent = make_agent(tmp_path / "repo")
    os.link(agent / "pi" / "frontmatter.json", tmp_path / "alias.json")
    refused("hardlink", agent)


# -- SECTION ----------------------------------------------------------------------------


def test_a_section_is_included_and_an_unused_one_is_a_warning(tmp_path: Path) -> None:
    agent = make_agent(
        tmp_path, "A\n{{SECTION:polling}}\nB\n", sections={"polling": "P\n", "spare": "S\n"}
    )
    composed = compose(agent, "pi", token_map=token_map())
    assert composed.text.endswith("---\nA\nP\n\nB\n")
    assert composed.sections == ("polling",)
    assert [w.code for w in composed.warnings] == ["unused_section"]


@pytest.mark.parametrize("name", ["../x", "../../etc/passwd", "/etc/passwd", "Polling", "a/b", ""])
def test_t102_a_section_name_never_reaches_the_file_system(tmp_path: Path, name: str) -> None:
    agent = make_agent(tmp_path / "repo", f"{{{{SECTION:{name}}}}}\n")
    (tmp_path / "repo" / "x.md").write_text("outside\n")
    error = refused("bad_section_name", agent)
    assert "outside" not in str(error)


def test_t102_an_include_never_recurses(tmp_path: Path) -> None:
    agent = make_agent(
        tmp_path, "{{SECTION:loop}}\n", sections={"loop": "again {{SECTION:loop}}\n"}
    )
    error = refused("leftover_token", agent)
    assert "{{SECTION:loop}}" in error.reason


def test_t102_a_missing_section_is_an_error(tmp_path: Path) -> None:
    refused("missing_section", make_agent(tmp_path, "{{SECTION:polling}}\n"))


def test_tools_in_a_section_are_resolved(tmp_path: Path) -> None:
    agent = make_agent(tmp_path, "{{SECTION:p}}", sections={"p": "use {{TOOL:task}}"})
    assert compose(agent, "claude" if False else "pi", token_map=token_map()).text.endswith(
        "use task"
    )


# -- TOOL -------------------------------------------------------------------------------


def test_an_unknown_tool_is_an_error(tmp_path: Path) -> None:
    refused("unknown_tool", make_agent(tmp_path, "{{TOOL:nope}}"))


def test_a_tool_unknown_to_the_harness_is_an_error(tmp_path: Path) -> None:
    tokens = token_map(tools={"task": {"pi": "task"}})
    refused(
        "unknown_tool",
        make_agent(tmp_path, "{{TOOL:task}}", harness="claude"),
        "claude",
        token_map=tokens,
    )


def test_a_null_tool_in_prose_is_an_error_unless_dropped(tmp_path: Path) -> None:
    agent = make_agent(tmp_path, "wait with {{TOOL:wait}}.", harness="claude")
    refused("null_tool", agent, "claude")
    composed = compose(agent, "claude", token_map=token_map(), drop_null_tools=True)
    assert composed.text.endswith("wait with .")
    assert [w.code for w in composed.warnings] == ["dropped_null_tool"]


def test_a_null_tool_in_the_tool_list_is_omitted(tmp_path: Path) -> None:
    front = {**FRONT, "tools": ["{{TOOL:task}}", "{{TOOL:wait}}", "bash"]}
    agent = make_agent(tmp_path, "x", front=front, harness="claude")
    composed = compose(agent, "claude", token_map=token_map())
    assert parse_agent(composed.data).tools == ("Task", "bash")
    front = {**FRONT, "tools": ["{{TOOL:wait}}"]}
    refused(
        "empty_field",
        make_agent(tmp_path / "b", "x", front=front, harness="claude"),
        "claude",
    )


# -- PATH -------------------------------------------------------------------------------


def test_paths_resolve_through_the_map(tmp_path: Path) -> None:
    agent = make_agent(tmp_path, "{{PATH:skills}} {{PATH:plan}} {{PATH:docs/a.md}}")
    assert compose(agent, "pi", token_map=token_map()).text.endswith(
        "~/.pi/skills ~/.pi/skills/plan/SKILL.md docs/a.md"
    )


@pytest.mark.parametrize(
    "path", ["../secret", "a/../../b", "/etc/passwd", "~/x", "a//b", "C:/x", "a\\b"]
)
def test_t101_an_unmapped_path_stays_relative(tmp_path: Path, path: str) -> None:
    refused("path_not_relative", make_agent(tmp_path, f"{{{{PATH:{path}}}}}"))


def test_t101_a_mapped_path_without_this_harness_is_an_error(tmp_path: Path) -> None:
    refused("unknown_path", make_agent(tmp_path, "{{PATH:plan}}", harness="claude"), "claude")


# -- leftovers --------------------------------------------------------------------------


@pytest.mark.parametrize("token", ["{{FOO}}", "{{TOOL:a{b}}", "{{ SECTION:x }}", "{{\u202e}}"])
def test_t103_a_leftover_token_is_named_escaped(tmp_path: Path, token: str) -> None:
    error = refused("leftover_token", make_agent(tmp_path, f"a {token} b"))
    assert error.reason.isascii()


def test_t103_a_token_in_a_frontmatter_value_is_a_leftover(tmp_path: Path) -> None:
    front = {**FRONT, "description": "uses {{TOOL:task}}"}
    refused("leftover_token", make_agent(tmp_path, "x", front=front))
    front = {**FRONT, "tools": ["{{PATH:x}}"]}
    refused("leftover_token", make_agent(tmp_path / "b", "x", front=front))


# -- dialects ---------------------------------------------------------------------------


def test_claude_native(tmp_path: Path) -> None:
    front = {**FRONT, "tools": ["{{TOOL:task}}", "Bash(git add:*)"], "argumentHint": "h"}
    agent = make_agent(tmp_path, "x", front=front, harness="claude")
    composed = compose(agent, "claude", token_map=token_map(), dialect="native")
    assert composed.file == "ralph.md"
    assert composed.text.startswith('---\nname: "ralph"\ndescription: "Runs beads"\n')
    assert 'tools: "Task, Bash(git add:*)"\n' in composed.text
    assert "argumentHint" not in composed.text
    assert [w.code for w in composed.warnings] == ["dropped_argument_hint"]
    assert parse_agent(composed.data).tools == ("Task", "Bash(git add:*)")


def test_claude_native_strips_any_namespace_and_needs_a_slug(tmp_path: Path) -> None:
    agent = make_agent(tmp_path, "x", front={**FRONT, "name": "other:plan"}, harness="claude")
    assert compose(agent, "claude", token_map=token_map(), dialect="native").name == "plan"
    agent = make_agent(tmp_path / "b", "x", front={**FRONT, "name": "My Agent"}, harness="claude")
    refused("bad_agent_name", agent, "claude", dialect="native")


def test_t103_claude_native_refuses_a_tool_a_comma_list_cannot_carry(tmp_path: Path) -> None:
    agent = make_agent(tmp_path, "x", front={**FRONT, "tools": ["a, b"]}, harness="claude")
    assert compose(agent, "claude", token_map=token_map()).name == "cortex:ralph"
    refused("composed_invalid", agent, "claude", dialect="native")


def test_copilot_native(tmp_path: Path) -> None:
    agent = make_agent(tmp_path, "x", front={**FRONT, "argumentHint": "h"}, harness="copilot")
    composed = compose(agent, "copilot", token_map=token_map(), dialect="native")
    assert composed.file == "ralph.agent.md"
    assert 'argument-hint: "h"\n' in composed.text
    assert "<!-- Generated by skillguard agent compose" in composed.text
    assert parse_agent(composed.data).extra["argument-hint"] == "h"


def test_pi_native_is_verbatim(tmp_path: Path) -> None:
    agent = make_agent(tmp_path, "x", front={**FRONT, "argumentHint": "h"})
    verbatim = compose(agent, "pi", token_map=token_map())
    assert compose(agent, "pi", token_map=token_map(), dialect="native").data == verbatim.data
    assert verbatim.file == "ralph.md"
    assert 'argumentHint: "h"\n' in verbatim.text


def test_the_output_is_deterministic(tmp_path: Path) -> None:
    agent = make_agent(tmp_path, "A {{TOOL:task}} {{PATH:skills}}\n")
    first = compose(agent, "pi", token_map=token_map())
    assert compose(str(agent), "pi", token_map=token_map()).data == first.data


# -- bad arguments ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "code"),
    [
        ({"harness": "vim"}, "unknown_harness"),
        ({"harness": "../pi"}, "bad_argument"),
        ({"dialect": "yaml"}, "bad_dialect"),
        ({"token_map": {}}, "bad_argument"),
        ({"limits": 3}, "bad_argument"),
    ],
)
def test_bad_arguments_are_usage_errors(tmp_path: Path, kwargs: dict[str, Any], code: str) -> None:
    agent = make_agent(tmp_path)
    arguments: dict[str, Any] = {"harness": "pi", "token_map": token_map(), **kwargs}
    with pytest.raises(SkillUsageError) as caught:
        compose(agent, **arguments)
    assert caught.value.code == code


def test_without_a_token_map_any_harness_and_no_tool(tmp_path: Path) -> None:
    agent = make_agent(tmp_path, "plain {{PATH:docs}}\n", harness="zed")
    assert compose(agent, "zed").text.endswith("plain docs\n")
    agent.joinpath("agent.md").write_text("{{TOOL:task}}")
    with pytest.raises(MalformedSkillError):
        compose(agent, "zed")


def test_a_non_slug_agent_folder_is_refused(tmp_path: Path) -> None:
    refused("bad_agent_name", make_agent(tmp_path, name="Ralph"))


# -- limits -----------------------------------------------------------------------------


def _limit_case(tmp_path: Path, which: str, size: int) -> tuple[Path, ComposeLimits]:
    if which == "agent":
        agent = make_agent(tmp_path, "a" * size)
        return agent, ComposeLimits(max_agent_bytes=100)
    if which == "section":
        agent = make_agent(tmp_path, "{{SECTION:s}}", sections={"s": "b" * size})
        return agent, ComposeLimits(max_section_bytes=100)
    raw = json.dumps(FRONT).encode()
    raw = raw[:-1] + b" " * (size - len(raw)) + b"}"
    return make_agent(tmp_path, "x", front=raw), ComposeLimits(max_frontmatter_bytes=100)


@pytest.mark.parametrize("which", ["agent", "section", "frontmatter"])
def test_t104_every_read_is_capped_inclusively(tmp_path: Path, which: str) -> None:
    agent, limits = _limit_case(tmp_path / "at", which, 100)
    compose(agent, "pi", token_map=token_map(), limits=limits)
    agent, limits = _limit_case(tmp_path / "over", which, 101)
    with pytest.raises(MalformedSkillError) as caught:
        compose(agent, "pi", token_map=token_map(), limits=limits)
    assert caught.value.code == "too_large"


def test_t104_the_composed_text_is_capped_while_it_grows(tmp_path: Path) -> None:
    agent = make_agent(tmp_path, "{{SECTION:s}}" * 10_000, sections={"s": "x" * 60_000})
    refused("composed_too_large", agent)
    body = "b" * 100
    agent = make_agent(tmp_path / "b", body)
    size = len(compose(agent, "pi", token_map=token_map()).data)
    compose(agent, "pi", token_map=token_map(), limits=ComposeLimits(max_composed_bytes=size))
    refused("composed_too_large", agent, limits=ComposeLimits(max_composed_bytes=size - 1))


def test_t104_harness_and_section_counts_are_capped(tmp_path: Path) -> None:
    agent = make_agent(tmp_path, "x", sections={"a": "", "b": ""})
    (agent / "copilot").mkdir()
    compose(
        agent, "pi", token_map=token_map(), limits=ComposeLimits(max_harnesses=2, max_sections=2)
    )
    refused("too_many_harnesses", agent, limits=ComposeLimits(max_harnesses=1))
    refused("too_many_sections", agent, limits=ComposeLimits(max_sections=1))
    for extra in range(5):
        (agent / "pi" / f"s{extra}.md").write_text("")
    refused("too_many_sections", agent, limits=ComposeLimits(max_sections=2))


def test_compose_limits_are_validated() -> None:
    with pytest.raises(SkillUsageError):
        ComposeLimits(max_sections=0)


# -- the emitted YAML means exactly what the JSON said ----------------------------------

_SPECIAL = st.sampled_from(
    [
        '"',
        "'",
        ": ",
        " #",
        "#",
        "\n",
        "\t",
        "\\",
        "- ",
        "{",
        "[",
        "&a",
        "*a",
        "!x",
        "%",
        "@",
        "`",
        "|",
        ">",
        "---",
        "\u00e9",
        "\u4e2d",
        "\U0001f600",
    ]
)
_PLAIN = st.characters(blacklist_categories=("Cs", "Cc", "Cf", "Zl", "Zp", "Co", "Cn"))
_VALUE = st.lists(st.one_of(_SPECIAL, _PLAIN), min_size=1, max_size=12).map("".join)


@settings(max_examples=150, deadline=None)
@given(
    name=_VALUE,
    description=_VALUE,
    tools=st.lists(_VALUE, min_size=1, max_size=4),
    model=st.none() | _VALUE,
)
def test_t103_the_composed_file_reads_back_to_the_json_values(
    tmp_path_factory: pytest.TempPathFactory,
    name: str,
    description: str,
    tools: list[str],
    model: str | None,
) -> None:
    values = [name, description, *tools] + ([model] if model else [])
    assume(all(find_hidden(v) is None and "{{" not in v and "}}" not in v for v in values))
    assume(name.strip() and description.strip() and len(name) <= 128)
    # A name, a model and a tool are one line (T118).
    assume(not any("\n" in v or "\t" in v for v in [name, *tools] + ([model] if model else [])))
    tools = [t.strip() for t in tools if t.strip() and "(" not in t and ")" not in t]
    assume(tools)
    front: dict[str, Any] = {"name": name, "description": description, "tools": tools}
    if model is not None:
        assume(model.strip())
        front["model"] = model
    agent = make_agent(tmp_path_factory.mktemp("rt"), "body\n", front=front)
    composed = compose(agent, "pi", token_map=token_map())
    parsed = parse_agent(composed.data)
    assert (parsed.name, parsed.description, parsed.tools, parsed.model) == (
        name,
        description,
        tuple(tools),
        model,
    )


# -- the command line -------------------------------------------------------------------


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["agent", *args])
    out, err = capsys.readouterr()
    return code, out, err


def tree(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "agents"
    make_agent(root, "{{TOOL:task}}\n", name="ralph")
    make_agent(root, "plan\n", name="plan")
    map_file = tmp_path / "token-map.json"
    map_file.write_text(json.dumps(MAP))
    return root, map_file


def test_compose_to_stdout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root, map_file = tree(tmp_path)
    code, out, _ = cli(
        capsys, "compose", "--harness", "pi", "--token-map", str(map_file), str(root / "ralph")
    )
    assert code == 0
    assert out == compose(root / "ralph", "pi", token_map=token_map()).text
    code, _, err = cli(
        capsys, "compose", "--harness", "pi", "--token-map", str(map_file), str(root)
    )
    assert code == 2
    assert "one agent folder" in err


def test_t117_compose_to_stdout_cannot_drive_the_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # agent.md is the workspace's text: a title-setting OSC, a screen clear, the one-byte
    # CSI and DEL would act on the terminal that shows the composed file.
    body = "Plan.\x1b]0;owned\x07\x1b[2J\x9b31m done\x7f\n"
    agent = make_agent(tmp_path / "agents", body, name="plan")
    map_file = tmp_path / "token-map.json"
    map_file.write_text(json.dumps(MAP))
    code, out, _ = cli(
        capsys, "compose", "--harness", "pi", "--token-map", str(map_file), str(agent)
    )
    assert code == 0
    assert not any(ch in out for ch in "\x1b\x07\x9b\x7f")
    assert "Plan.[U+001B]]0;owned[U+0007][U+001B][2J[U+009B]31m done[U+007F]\n" in out
    # --output writes the exact bytes composed.
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    args = ("compose", "--harness", "pi", "--token-map", str(map_file), "--output", str(out_dir))
    assert cli(capsys, *args, str(agent))[0] == 0
    assert body.encode() in (out_dir / "plan.md").read_bytes()


def test_t106_compose_writes_atomically_and_check_finds_drift(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root, map_file = tree(tmp_path)
    output = tmp_path / "out"
    args = ["compose", "--harness", "pi", "--token-map", str(map_file), "--output", str(output)]
    code, out, _ = cli(capsys, *args, "--format", "json", str(root))
    assert code == 0
    document = json.loads(out)
    assert list(document) == ["harness", "output", "agents", "skipped", "summary"]
    assert [a["file"] for a in document["agents"]] == ["plan.md", "ralph.md"]
    assert list(document["agents"][0]) == ["agent", "name", "file", "sha256", "bytes", "warnings"]
    assert document["summary"] == {"composed": 2, "skipped": 0}
    first = (output / "ralph.md").read_bytes()
    assert sorted(p.name for p in output.iterdir()) == ["plan.md", "ralph.md"]
    cli(capsys, *args, str(root))
    assert (output / "ralph.md").read_bytes() == first  # byte-identical on a second run
    assert cli(capsys, *args, "--check", str(root))[0] == 0
    (output / "ralph.md").write_bytes(first + b"edited by hand\n")
    code, out, _ = cli(capsys, *args, "--check", "--format", "json", str(root))
    assert code == 1
    assert json.loads(out)["skipped"][0]["code"] == "differs"
    assert (output / "ralph.md").read_bytes().endswith(b"edited by hand\n")  # nothing written
    (output / "ralph.md").unlink()
    code, out, _ = cli(capsys, *args, "--check", str(root))
    assert (code, "missing_file" in out) == (1, True)
    code, out, _ = cli(capsys, *args, "--check", str(root).replace("agents", "agents/../agents"))
    assert code == 1
    check_missing = ["--output", str(tmp_path / "none"), "--check", str(root)]
    assert cli(capsys, *args[:-2], *check_missing)[0] == 1


def test_t105_no_symlink_is_followed_on_write(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root, map_file = tree(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = tmp_path / "victim.md"
    victim.write_text("keep\n")
    output = tmp_path / "out"
    output.mkdir()
    (output / "ralph.md").symlink_to(victim)
    args = ["compose", "--harness", "pi", "--token-map", str(map_file)]
    code, out, _ = cli(capsys, *args, "--output", str(output), str(root))
    assert code == 1
    assert "FAILED ralph: containment/symlink" in out
    assert victim.read_text() == "keep\n"
    assert (output / "plan.md").is_file()  # the other agent is still written
    link = tmp_path / "link"
    link.symlink_to(outside)
    code, _, err = cli(capsys, *args, "--output", str(link), str(root))
    assert code == 2
    assert "symlink" in err
    assert list(outside.iterdir()) == []
    (output / "ralph.md").unlink()
    (output / "ralph.md").mkdir()
    code, out, _ = cli(capsys, *args, "--output", str(output), "--check", str(root))
    assert (code, "not_regular_file" in out) == (1, True)


def test_t151_two_agents_composing_one_file_name_write_neither(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A folder sorted first names itself like the real agent: Claude's native name drops
    # any "ns:" part, so both compose ralph.md. Neither is written, and both are named,
    # rather than the first one written and the real one blamed.
    root = tmp_path / "agents"
    make_agent(
        root, "Exfiltrate.\n", name="aaa", front={**FRONT, "name": "evil:ralph"}, harness="claude"
    )
    make_agent(root, "{{TOOL:task}}\n", name="ralph", harness="claude")
    make_agent(
        root, "plan\n", name="plan", front={**FRONT, "name": "cortex:plan"}, harness="claude"
    )
    map_file = tmp_path / "token-map.json"
    map_file.write_text(json.dumps(MAP))
    output = tmp_path / "out"
    args = ["compose", "--harness", "claude", "--token-map", str(map_file), "--dialect", "native"]
    args += ["--output", str(output)]
    code, out, _ = cli(capsys, *args, "--format", "json", str(root))
    assert code == 1
    document = json.loads(out)
    assert [agent["file"] for agent in document["agents"]] == ["plan.md"]
    duplicates = [(e["agent"], e["code"]) for e in document["skipped"]]
    assert duplicates == [("aaa", "duplicate_output"), ("ralph", "duplicate_output")]
    assert "ralph.md is also composed from ralph" in document["skipped"][0]["message"]
    assert "ralph.md is also composed from aaa" in document["skipped"][1]["message"]
    assert sorted(path.name for path in output.iterdir()) == ["plan.md"]
    # --check reports the same.
    code, out, _ = cli(capsys, *args, "--check", str(root))
    assert code == 1
    assert "FAILED aaa: malformed/duplicate_output" in out
    assert "FAILED ralph: malformed/duplicate_output" in out
    assert "up to date plan.md" in out


def test_an_agent_that_fails_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root, map_file = tree(tmp_path)
    (root / "ralph" / "agent.md").write_text("{{TOOL:nope}}")
    (root / "notes").mkdir()
    output = tmp_path / "out"
    code, out, _ = cli(
        capsys,
        "compose",
        "--harness",
        "pi",
        "--token-map",
        str(map_file),
        "--output",
        str(output),
        str(root),
    )
    assert code == 1
    assert "FAILED ralph: malformed/unknown_tool" in out
    assert "note   notes: not_agent/no_agent_md" in out
    assert sorted(p.name for p in output.iterdir()) == ["plan.md"]


def test_compose_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root, map_file = tree(tmp_path)
    base = ["compose", "--token-map", str(map_file)]
    assert cli(capsys, *base, "--harness", "vim", str(root))[0] == 2
    assert cli(capsys, *base, "--harness", "Pi/..", str(root))[0] == 2
    assert cli(capsys, *base, "--harness", "pi", "--check", str(root))[0] == 2
    assert (
        cli(capsys, "compose", "--harness", "pi", "--token-map", str(tmp_path / "no"), str(root))[0]
        == 2
    )
    map_file.write_text('{"version": 2, "harnesses": ["pi"]}')
    code, _, err = cli(capsys, *base, "--harness", "pi", str(root))
    assert (code, "token_map_version" in err) == (2, True)


def test_validate_reports_every_problem(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root, map_file = tree(tmp_path)
    make_agent(root, "{{SECTION:gone}} {{TOOL:nope}}", name="broken")
    (root / "broken" / "claude").mkdir()
    (root / "broken" / "claude" / "frontmatter.json").write_text('{"name": "x"}')
    (root / "broken" / "vim").mkdir()
    make_agent(root, "x", name="spare", sections={"unused": ""})
    make_agent(root, "x", name="headless")
    (root / "headless" / "agent.md").unlink()
    (root / "linked").symlink_to(root / "plan")
    code, out, _ = cli(
        capsys, "validate", "--format", "json", "--token-map", str(map_file), str(root)
    )
    assert code == 1
    document = json.loads(out)
    results = {r["skill"]: r for r in document["results"]}
    assert document["summary"] == {"checked": 6, "ok": 3, "failed": 3}
    assert list(results["plan"]) == ["path", "skill", "ok", "errors", "warnings"]
    broken = [(e["code"], e["message"]) for e in results["broken"]["errors"]]
    assert ("missing_section", "pi: {{SECTION:gone}}: there is no pi/gone.md") in broken
    assert ("missing_field", "claude: missing required field: description") in broken
    assert ("unlisted_harness", "vim: the token map does not list this harness") in broken
    assert results["broken"]["errors"][-1]["code"] == "no_valid_harness"
    assert results["spare"]["warnings"][0]["code"] == "unused_section"
    assert results["headless"]["errors"][0]["code"] == "missing_agent_md"
    assert results["linked"]["errors"][0]["code"] == "symlink"
    code, out, _ = cli(capsys, "validate", str(root), str(tmp_path / "nowhere"))
    assert code == 1
    assert "error not_found/missing" in out


def test_validate_reports_a_bad_body_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    agent = make_agent(tmp_path, "---\n---\n")
    (agent / "claude").mkdir()
    (agent / "claude" / "frontmatter.json").write_text(json.dumps(FRONT))
    code, out, _ = cli(capsys, "validate", str(agent))
    assert code == 1
    assert out.count("frontmatter_in_agent_md") == 1


def test_a_composed_file_is_also_a_valid_agent_file() -> None:
    tokens = parse_token_map((EXAMPLES / "token-map.json").read_bytes())
    composed = compose(EXAMPLES / "ralph", "copilot", token_map=tokens, dialect="native")
    assert isinstance(composed, ComposedAgent)
    parsed = parse_agent(composed.data)
    assert parsed.tools == ("bash", "task", "read_agent")
    assert parsed.model == "claude-sonnet-4-5"


# -- the strict JSON fuzz target ------------------------------------------------------


def _fuzz_target() -> Any:
    spec = importlib.util.spec_from_file_location(
        "strict_json_fuzzer", ROOT / "fuzz" / "strict_json_fuzzer.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


json_target = _fuzz_target()
_JSON_CORPUS = sorted((ROOT / "fuzz" / "corpus" / "strict_json").iterdir())
_JSON_ATOMS = st.sampled_from(
    [
        b"{",
        b"}",
        b"[",
        b"]",
        b'"',
        b":",
        b",",
        b"//",
        b"/*",
        b"*/",
        b"\\",
        b"NaN",
        b"-Infinity",
        b"1e999",
        b"null",
        b'"name"',
        b'"tools"',
        b'"version"',
        b"1",
        b" ",
        b"\n",
        b"\xff",
    ]
)


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.binary(max_size=256),
        st.lists(_JSON_ATOMS, max_size=40).map(b"".join),
        st.sampled_from(_JSON_CORPUS).map(Path.read_bytes),
    )
)
def test_t100_strict_json_fuzz_target(data: bytes) -> None:
    json_target.check(data)


@pytest.mark.parametrize("path", _JSON_CORPUS, ids=lambda p: p.name)
def test_t100_strict_json_fuzz_corpus(path: Path) -> None:
    json_target.check(path.read_bytes())


# -- the output folder ------------------------------------------------------------------


def test_t105_the_output_folder_writes_plain_files_only(tmp_path: Path) -> None:
    with pytest.raises(SkillNotFoundError):
        OutputFolder(str(tmp_path / "no" / "such"), create=True)
    with pytest.raises(SkillNotFoundError):
        OutputFolder(str(tmp_path / "absent"))
    (tmp_path / "file").write_text("")
    with pytest.raises(SkillContainmentError) as caught:
        OutputFolder(str(tmp_path / "file"))
    assert caught.value.code == "not_a_directory"
    with OutputFolder(str(tmp_path / "out"), create=True) as folder:
        assert folder.read("a.md", cap=10) is None
        folder.write("a.md", b"one")
        folder.write("a.md", b"two")
        assert folder.read("a.md", cap=10) == b"two"
        assert folder.read("a.md", cap=1) == b"tw"  # cap + 1: enough to see it differs
        for name in ("../a.md", "sub/a.md", "", "/abs"):
            with pytest.raises(SkillContainmentError):
                folder.write(name, b"x")
        os.mkfifo(tmp_path / "out" / "pipe.md")
        with pytest.raises(SkillContainmentError) as caught:
            folder.read("pipe.md", cap=5)
        assert caught.value.code == "not_regular_file"
        with pytest.raises(SkillContainmentError) as caught:
            folder.write("pipe.md", b"")
        assert caught.value.code == "not_regular_file"
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["a.md", "pipe.md"]
    folder.close()  # closing twice is harmless


def test_t216_a_full_disk_fails_one_composed_file_and_says_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A write the file system refuses part way (a real file-size limit, as a full
    # disk): the OSError escaped OutputFolder.write, so compose ended with "internal
    # error (OSError)", said nothing of the disk, and the agents after it were never
    # written.
    root = tmp_path / "agents"
    make_agent(root, "{{TOOL:task}}\n" + "long line of instructions\n" * 2000, name="alpha")
    make_agent(root, "plan\n", name="plan")
    map_file = tmp_path / "token-map.json"
    map_file.write_text(json.dumps(MAP))
    output = tmp_path / "out"
    args = ["compose", "--harness", "pi", "--token-map", str(map_file), "--output", str(output)]
    with file_size_limit(16 * 1024):
        code, out, err = cli(capsys, *args, str(root))
    assert (code, err) == (1, "")
    assert "FAILED alpha: not_found/unreadable" in out
    assert "the generated file cannot be written (EFBIG)" in out
    assert sorted(p.name for p in output.iterdir()) == ["plan.md"]  # no temporary left


# -- leftovers in time, and split across lines (T142, T143) --------------------------


@pytest.mark.parametrize(
    "body",
    [lambda n: "{{" * n, lambda n: "{{x" * n + "}", lambda n: ("{{" + " " * n + "\n") * 8],
    ids=["braces", "unclosed-tokens", "blank-lines-after-braces"],
)
def test_t142_the_leftover_check_is_linear(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: Callable[[int], str]
) -> None:
    meter = Meter()
    for name in ("compose", "compose_emit", "compose_read", "compose_tokens"):
        meter_module(monkeypatch, importlib.import_module(f"skillguard._agents.{name}"), meter)
    tokens = token_map()

    def cost(n: int) -> int:
        agent = make_agent(tmp_path / str(n), body(n))
        meter.steps = 0
        steps = python_steps(lambda: compose(agent, "pi", token_map=tokens))
        return steps + meter.steps

    assert grows_linearly(cost, 200)
    refused("leftover_token", make_agent(tmp_path / "once", body(200)))


@pytest.mark.parametrize(
    "token",
    [
        *("{{SECTION:\npolling}}", "{{TOOL:\ntask}}", "{{PATH:\nskills}}"),
        *("{{TOOL:task\n}}", "{{\n", "{{"),
    ],
)
def test_t143_a_token_split_by_a_line_break_is_a_leftover(tmp_path: Path, token: str) -> None:
    agent = make_agent(tmp_path, f"a {token} b\n", sections={"polling": "p\n"})
    error = refused("leftover_token", agent)
    assert error.reason.isascii()
    assert "\n" not in error.reason


def test_t143_a_split_token_in_a_section_or_a_field_is_a_leftover(tmp_path: Path) -> None:
    agent = make_agent(tmp_path / "a", "{{SECTION:p}}\n", sections={"p": "use {{TOOL:\ntask}}\n"})
    refused("leftover_token", agent)
    front = {**FRONT, "description": "uses {{TOOL:\ntask}}"}
    refused("leftover_token", make_agent(tmp_path / "b", "x", front=front))
    # A tool is one line (not_one_line otherwise): a token never closed is a leftover.
    front = {**FRONT, "tools": ["bash", "{{TOOL:task"]}
    refused("leftover_token", make_agent(tmp_path / "c", "x", front=front))


def test_t143_a_split_token_never_reaches_the_pi_prompt(tmp_path: Path) -> None:
    from skillguard.agents import load_agent_context

    repo = tmp_path / "repo"
    shutil.copytree(EXAMPLES / "ralph", repo / "agents" / "ralph")
    shutil.copy(EXAMPLES / "token-map.json", repo / "agents" / "token-map.json")
    polling = repo / "agents" / "ralph" / "pi" / "polling.md"
    polling.write_text(polling.read_text() + "\nThen call {{TOOL:\ntask}} again.\n")
    with pytest.raises(MalformedSkillError) as caught:
        load_agent_context(repo, "ralph", harnesses=("pi",))
    assert caught.value.code == "leftover_token"


def test_t143_validate_reports_a_split_token(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "agents"
    make_agent(root, "{{SECTION:\npolling}}\n", sections={"polling": "p\n"})
    (root / "token-map.json").write_text(json.dumps(MAP))
    code = main(["agent", "validate", "--token-map", str(root / "token-map.json"), str(root)])
    out, _ = capsys.readouterr()
    assert code != 0
    assert "leftover_token" in out
