"""The closed per-agent allow-set and its file format.

Test names that start with ``test_tN_`` stop threat ``TN`` of threat-model.md.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

from skillguard import SkillUsageError
from skillguard._cli.main import main
from skillguard._core.strict_yaml import has_c_parser
from skillguard._skills.policy import AgentGrant, AllowPolicy, PolicyError, parse_policy_with

if TYPE_CHECKING:
    from pathlib import Path

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


# -- T60: one reading for every policy file --------------------------------------------

HIDDEN_GRANT = "agents:\n  clerk:\n    skills: [notes]   # read-only{sep}    workspace: approve\n"
BACKENDS = ["c", "pure"] if has_c_parser() else ["pure"]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85"], ids=["LS", "PS", "NEL"])
def test_t60_a_line_separator_cannot_hide_a_grant(separator: str, backend: str) -> None:
    # A reviewer (and a YAML 1.2 tool) reads "workspace: approve" as part of the comment;
    # libyaml breaks the line there and grants it. The document is refused instead.
    raw = HIDDEN_GRANT.format(sep=separator).encode()
    with pytest.raises(PolicyError) as info:
        parse_policy_with(raw, backend=backend)  # type: ignore[arg-type]
    assert (info.value.code, info.value.line) == ("bad_policy", 3)
    assert f"U+{ord(separator):04X}" in info.value.reason
    assert "control_character" in info.value.reason
    with pytest.raises(PolicyError):
        AllowPolicy.from_yaml(raw)


@pytest.mark.parametrize(
    "raw",
    [
        b'agents:\n  clerk:\n    skills: [notes]\n    tools: ["Read\\u2028Write"]\n',
        b"agents:\n  clerk:\n    skills: [notes]\x0b\n",
        b"agents:\n  clerk:\n    skills: [notes]\n\xef\xbb\xbf    workspace: approve\n",
        b"agents:\n  clerk: {skills: [notes]}\x00\n",
    ],
    ids=["escaped-separator", "vertical-tab", "inner-bom", "nul"],
)
def test_t60_control_characters_are_refused_in_a_policy(raw: bytes) -> None:
    with pytest.raises(PolicyError) as info:
        AllowPolicy.from_yaml(raw)
    assert "control_character" in info.value.reason


def test_t60_a_policy_reads_like_a_skill_bom_and_crlf() -> None:
    # One leading BOM and CRLF (or lone CR) line ends are read as a skill's are.
    for raw in (
        b"\xef\xbb\xbf" + POLICY,
        POLICY.replace(b"\n", b"\r\n"),
        POLICY.replace(b"\n", b"\r"),
    ):
        assert AllowPolicy.from_yaml(raw).grant("planner") == AllowPolicy.from_yaml(POLICY).grant(
            "planner"
        )


def test_t60_policy_errors_name_the_file_and_line() -> None:
    with pytest.raises(PolicyError) as info:
        AllowPolicy.from_yaml(b"agents:\n  p: {skills: [a]}\n  p: {skills: [b]}\n")
    assert info.value.line == 3
    assert "duplicate_key" in info.value.reason
    with pytest.raises(PolicyError) as info:
        AllowPolicy.from_yaml(b"agents:\n  p: {skills: [a]\n\xff\n")
    assert (info.value.line, info.value.reason) == (
        3,
        "the policy file is not valid UTF-8 (bad_encoding)",
    )
    with pytest.raises(PolicyError) as info:
        AllowPolicy.from_yaml(b"# only a comment\n")
    assert info.value.reason == "the policy file is empty (not_a_mapping)"


# -- T61: the policy file is read with a cap -------------------------------------------


def test_t61_a_huge_sparse_policy_file_is_refused_not_read_whole(tmp_path: Path) -> None:
    sparse = tmp_path / "policy.yaml"
    with sparse.open("wb") as handle:
        handle.truncate(2 * 1024**3)  # 2 GiB of holes: costs no disk, would cost 2 GiB of RAM
    with pytest.raises(PolicyError) as info:
        AllowPolicy.from_file(sparse)
    assert info.value.code == "bad_policy"
    assert "larger than" in info.value.reason


def test_t61_the_cli_refuses_a_huge_policy_with_exit_two(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sparse = tmp_path / "policy.yaml"
    with sparse.open("wb") as handle:
        handle.truncate(2 * 1024**3)
    code = main(["catalog", "--policy", str(sparse), "--agent", "planner"])
    assert code == 2
    assert capsys.readouterr().err.startswith("skillguard: [policy/bad_policy]")


def test_t61_policy_file_cap_at_limit_and_over(tmp_path: Path) -> None:
    path = tmp_path / "policy.yaml"
    padding = b"# " + b"x" * (1024 * 1024 - len(POLICY) - 3) + b"\n"
    path.write_bytes(POLICY + padding)
    assert AllowPolicy.from_file(path).allowed("planner", "pdf-tools")
    path.write_bytes(POLICY + padding + b"\n")
    with pytest.raises(PolicyError):
        AllowPolicy.from_file(path)


def test_t61_a_policy_path_that_is_not_a_regular_file_is_refused(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # no writer: a blocking read would hang forever
    for path in (fifo, tmp_path):
        with pytest.raises(PolicyError) as info:
            AllowPolicy.from_file(path)
        assert info.value.reason == "the policy file is not a regular file"
    with pytest.raises(PolicyError) as info:
        AllowPolicy.from_file(tmp_path / "missing.yaml")
    assert info.value.reason == "the policy file cannot be read"


def test_policy_from_file_takes_str_and_path_like(tmp_path: Path) -> None:
    path = tmp_path / "policy.yaml"
    path.write_bytes(POLICY)
    for given in (path, str(path)):
        assert AllowPolicy.from_file(given).allowed("researcher", "pdf-tools")
    for bad in (5, b"policy.yaml", None):
        with pytest.raises(SkillUsageError) as info:
            AllowPolicy.from_file(bad)  # type: ignore[arg-type]
        assert info.value.code == "bad_argument"
    with pytest.raises(SkillUsageError):
        AllowPolicy.from_file("policy\x00.yaml")
    with pytest.raises(SkillUsageError):
        parse_policy_with("agents: {}", backend=None)  # type: ignore[arg-type]


# -- errors that say what to do (README "Errors") -------------------------------------


@pytest.mark.parametrize(
    ("text", "named"),
    [
        (
            b"agents:\n  p: {skills: [a], subagents: [c]}\n  c: {skills: [a, b, d]}\n",
            "skills 'b', 'd'",
        ),
        (
            b"agents:\n  p: {tools: [Read], subagents: [c]}\n  c: {tools: [Read, Bash]}\n",
            "tools 'Bash'",
        ),
        (
            b"agents:\n  p: {subagents: [c]}\n  c: {workspace: approve}\n",
            "workspace approve (the parent's is deny)",
        ),
    ],
)
def test_widening_subagent_names_what_widened(text: bytes, named: str) -> None:
    with pytest.raises(PolicyError) as info:
        AllowPolicy.from_yaml(text)
    assert info.value.code == "widening_subagent"
    assert info.value.agent == "c"
    assert f"sub-agent 'c' would get more than its parent 'p': {named};" in info.value.reason


def test_widening_subagent_names_skills_tools_and_workspace_together() -> None:
    text = (
        b"agents:\n  p: {skills: [a], tools: [Read], subagents: [c]}\n"
        b"  c: {skills: [a, b], tools: [Read, Write], workspace: approve}\n"
    )
    with pytest.raises(PolicyError) as info:
        AllowPolicy.from_yaml(text)
    assert (
        ": skills 'b'; tools 'Write'; workspace approve (the parent's is deny); "
        "grant these to 'p' too, or take them from 'c'"
    ) in info.value.reason


def test_t225_widened_tools_are_shown_escaped_and_bounded() -> None:
    # Tools are free text: a bidi override or an escape sequence in one must reach the
    # operator's terminal escaped, and a thousand widened tools must not be a thousand
    # names in one line.
    hostile = "Bash\u202e\x1b[2J" + "x" * 200
    wide = {
        "p": AgentGrant(tools=frozenset({"Read"}), subagents=frozenset({"c"})),
        "c": AgentGrant(tools=frozenset({hostile, *(f"T{i:04}" for i in range(1000))})),
    }
    with pytest.raises(PolicyError) as info:
        AllowPolicy(wide)
    reason = info.value.reason
    assert "\u202e" not in reason
    assert "\x1b" not in reason
    assert "'Bash\\u202e\\x1b[2J" in reason
    assert "and 993 more" in reason
    assert len(reason) < 600


@pytest.mark.parametrize(
    ("text", "line", "key", "words"),
    [
        (
            b"agents:\n  p:\n    skills: [a]\n    tols: [Read]\n",
            4,
            "tols",
            "unknown key 'tols' of agent 'p' (did you mean 'tools'?)",
        ),
        (
            b"agents:\n  p: {skills: [a], Workspace: approve}\n",
            2,
            "Workspace",
            "unknown key 'Workspace' of agent 'p' (did you mean 'workspace'?)",
        ),
        (
            b"# policy\nagnets:\n  p: {}\n",
            2,
            "agnets",
            "unknown key 'agnets' (did you mean 'agents'?)",
        ),
        (
            b"agents:\n  p:\n    power: all\n",
            3,
            "power",
            (
                "unknown key 'power' of agent 'p'; the keys are 'skills', 'subagents', "
                "'tools', 'workspace'"
            ),
        ),
    ],
)
def test_a_policy_key_typo_names_the_key_its_line_and_the_nearest_key(
    text: bytes, line: int, key: str, words: str
) -> None:
    with pytest.raises(PolicyError) as info:
        AllowPolicy.from_yaml(text)
    assert (info.value.code, info.value.line, info.value.key) == ("bad_policy", line, key)
    assert info.value.reason == words


def test_a_policy_key_typo_from_a_mapping_has_no_line() -> None:
    with pytest.raises(PolicyError) as info:
        AllowPolicy.from_mapping({"agents": {"p": {"skils": ["a"]}}})
    assert (info.value.line, info.value.key, info.value.agent) == (None, "skils", "p")
    assert info.value.reason == "unknown key 'skils' of agent 'p' (did you mean 'skills'?)"
    with pytest.raises(PolicyError) as info:
        AllowPolicy.from_mapping({"agents": {"p": {1: ["a"]}}})
    assert info.value.key is None
    assert "a key of agent 'p' that is not a string" in info.value.reason


@pytest.mark.parametrize(
    "key",
    [
        "tols\u202e",  # a bidi override
        "\u2066tools\u2069",  # isolates around a known key
        "to\x1b[2Jols",  # an escape sequence (only a mapping can carry it: YAML refuses it)
        "t" * 5000,  # huge
    ],
)
def test_t225_a_hostile_policy_key_is_named_escaped_and_bounded(key: str) -> None:
    with pytest.raises(PolicyError) as info:
        AllowPolicy.from_mapping({"agents": {"p": {key: ["a"]}}})
    reason = info.value.reason
    assert reason.isascii()
    assert reason.isprintable()
    assert len(reason) < 200
    assert str(info.value).isascii()


def test_t225_a_long_key_is_not_compared_with_the_known_keys(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # difflib compares in time quadratic in the key: a key past 64 characters (a scalar
    # may hold 1024 bytes) is never handed to it.
    import difflib

    calls: list[str] = []
    real = difflib.get_close_matches

    def counting(word: str, possibilities: list[str], n: int, cutoff: float) -> list[str]:
        calls.append(word)
        return real(word, possibilities, n=n, cutoff=cutoff)

    monkeypatch.setattr(difflib, "get_close_matches", counting)
    for key, compared in (("t" * 64, 1), ("t" * 65, 0), ("tools" * 200, 0)):
        calls.clear()
        with pytest.raises(PolicyError):
            AllowPolicy.from_yaml(f"agents:\n  p: {{{key}: [a]}}\n".encode())
        assert len(calls) == compared


def test_the_key_suggestion_is_deterministic() -> None:
    # "subagent" is as near "subagents" whatever order the known keys come in.
    reasons = set()
    for _ in range(5):
        with pytest.raises(PolicyError) as info:
            AllowPolicy.from_yaml(b"agents:\n  p: {subagent: []}\n")
        reasons.add(info.value.reason)
    assert reasons == {"unknown key 'subagent' of agent 'p' (did you mean 'subagents'?)"}
