"""The closed per-agent allow-set and its file format.

Test names that start with ``test_tN_`` stop threat ``TN`` of threat-model.md.
"""

from __future__ import annotations

import pytest

from skillguard import SkillUsageError
from skillguard._policy import AgentGrant, AllowPolicy, PolicyError

POLICY = b"""\
agents:
  planner:
    skills: [pdf-tools, code-review]
    tools: [Read, Grep, "Bash(git diff:*)"]
    workspace: approve
    subagents: [researcher]
  researcher:
    skills: [pdf-tools]
    tools: [Read]
"""


def test_a_complete_policy_file() -> None:
    policy = AllowPolicy.from_yaml(POLICY)
    assert policy.grant("planner") == AgentGrant(
        skills=frozenset({"pdf-tools", "code-review"}),
        tools=frozenset({"Read", "Grep", "Bash(git diff:*)"}),
        workspace="approve",
        subagents=frozenset({"researcher"}),
    )
    researcher = policy.grant("researcher")
    assert researcher is not None
    assert researcher.workspace == "deny"  # the default


@pytest.mark.parametrize(
    ("agent", "name", "expected"),
    [
        ("planner", "pdf-tools", True),
        ("planner", "code-review", True),
        ("researcher", "pdf-tools", True),
        ("researcher", "code-review", False),
        ("stranger", "pdf-tools", False),
        ("planner", "PDF-TOOLS", False),
        ("planner", "", False),
        ("planner", None, False),
        (None, "pdf-tools", False),
    ],
)
def test_t23_allowed_is_a_closed_predicate(agent: object, name: object, expected: bool) -> None:
    policy = AllowPolicy.from_yaml(POLICY)
    assert policy.allowed(agent, name) is expected  # type: ignore[arg-type]


def test_t23_an_empty_policy_denies_everything() -> None:
    for policy in (AllowPolicy(), AllowPolicy.from_yaml(b""), AllowPolicy.from_yaml(b"  \n")):
        assert not policy.allowed("planner", "pdf-tools")
        assert policy.grant("planner") is None


@pytest.mark.parametrize(
    "text",
    [
        # skills, tools and workspace mode, each wider than the parent's
        b"agents:\n  p: {skills: [a], subagents: [c]}\n  c: {skills: [a, b]}\n",
        b"agents:\n  p: {tools: [Read], subagents: [c]}\n  c: {tools: [Read, Bash]}\n",
        b"agents:\n  p: {subagents: [c]}\n  c: {workspace: approve}\n",
    ],
)
def test_t24_a_subagent_cannot_widen_its_parents_grant(text: bytes) -> None:
    with pytest.raises(PolicyError) as info:
        AllowPolicy.from_yaml(text)
    assert info.value.code == "widening_subagent"
    assert info.value.kind == "policy"


@pytest.mark.parametrize(
    "text",
    [
        b"agents:\n  p: {subagents: [missing]}\n",
        b"agents:\n  p: {subagents: [p]}\n",
        b"agents:\n  Planner: {}\n",
        b"agents:\n  p: {skills: [Bad Name]}\n",
        b"agents:\n  p: {skills: a}\n",
        b"agents:\n  p: {tools: ['']}\n",
        b"agents:\n  p: {workspace: allow}\n",
        b"agents:\n  p: {power: all}\n",
        b"agents:\n  p: [a]\n",
        b"agents: [p]\n",
        b"roles: {}\n",
        b"agents:\n  p: {skills: [a]}\n  p: {skills: [b]}\n",
        b"agents:\n  p: &x {skills: [a]}\n  q: *x\n",
        b"agents:\n  p: !!map {skills: [a]}\n",
        b"- a\n",
        b"\xff\xfe",
    ],
    ids=[
        "unknown-subagent",
        "self-subagent",
        "bad-agent-name",
        "bad-skill-name",
        "skills-not-a-list",
        "empty-tool",
        "bad-workspace-mode",
        "unknown-key",
        "grant-not-a-mapping",
        "agents-not-a-mapping",
        "unknown-top-level-key",
        "duplicate-agent",
        "anchor",
        "tag",
        "not-a-mapping",
        "not-utf8",
    ],
)
def test_a_bad_policy_file_is_refused_whole(text: bytes) -> None:
    with pytest.raises(PolicyError) as info:
        AllowPolicy.from_yaml(text)
    assert info.value.code in ("bad_policy", "widening_subagent")


def test_policy_file_size_at_limit_and_over() -> None:
    padding = b"# " + b"x" * (1024 * 1024 - len(POLICY) - 3) + b"\n"
    assert AllowPolicy.from_yaml(POLICY + padding).allowed("planner", "pdf-tools")
    with pytest.raises(PolicyError):
        AllowPolicy.from_yaml(POLICY + padding + b"\n")


def test_policy_from_mapping_and_bad_types() -> None:
    policy = AllowPolicy.from_mapping({"agents": {"a": {"skills": ["x"]}}})
    assert policy.allowed("a", "x")
    with pytest.raises(PolicyError):
        AllowPolicy.from_mapping(["agents"])  # type: ignore[arg-type]
    with pytest.raises(SkillUsageError) as info:
        AllowPolicy.from_yaml("agents: {}")  # type: ignore[arg-type]
    assert info.value.code == "bad_argument"


def test_a_policy_built_directly_is_checked_too() -> None:
    with pytest.raises(PolicyError):
        AllowPolicy({"a": AgentGrant(skills="pdf-tools")})  # type: ignore[arg-type]
    wide = {
        "p": AgentGrant(skills=frozenset({"a"}), subagents=frozenset({"c"})),
        "c": AgentGrant(skills=frozenset({"a", "b"})),
    }
    with pytest.raises(PolicyError) as info:
        AllowPolicy(wide)
    assert info.value.code == "widening_subagent"
    with pytest.raises(PolicyError):
        AllowPolicy({"Bad Agent": AgentGrant()})
    with pytest.raises(PolicyError):
        AllowPolicy({"a": AgentGrant(workspace="all")})  # type: ignore[arg-type]


@pytest.mark.parametrize("items", ["[[x]]", "[{x: y}]"])
def test_unhashable_names_are_a_policy_error(items: str) -> None:
    for key in ("skills", "tools", "subagents"):
        with pytest.raises(PolicyError):
            AllowPolicy.from_yaml(f"agents:\n  a: {{{key}: {items}}}\n".encode())
