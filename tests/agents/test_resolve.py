"""load_agent_context and read_core_knowledge: resolution order and containment, with
both resolvers, on real files, symlinks, FIFOs and hard links."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, cast

import pytest

from skillguard import (
    Limits,
    MalformedSkillError,
    SkillContainmentError,
    SkillError,
    SkillNotFoundError,
    SkillUsageError,
    openat2_available,
)
from skillguard.agents import (
    AgentContext,
    AgentNotFoundError,
    agent_error_code,
    load_agent_context,
    read_core_knowledge,
)

if TYPE_CHECKING:
    from pathlib import Path

    from skillguard._fs.walk import Resolver

RESOLVERS = [
    pytest.param("openat2", marks=pytest.mark.skipif(not openat2_available(), reason="no openat2")),
    "walk",
]
SECRET = "-----BEGIN OPENSSH PRIVATE KEY----- not-a-real-key"
SEED_NOT_FOUND = "Agent 'x' not found. Searched: src/agents/, .team-development/src/agents/"


@pytest.fixture(params=RESOLVERS)
def resolver(request: pytest.FixtureRequest) -> Resolver:
    return cast("Resolver", request.param)


def agent_file(where: str, body: str = "") -> str:
    return f"---\nname: {where}\ndescription: from {where}\n---\n{body}"


def put(repo: Path, relpath: str, text: str | None = None) -> Path:
    path = repo / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(agent_file(relpath) if text is None else text)
    return path


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.md").write_text(agent_file("outside", SECRET))
    (outside / "secret.md").write_text(SECRET)
    return root


def load(repo: Path, agent: str, resolver: Resolver, **options: object) -> AgentContext:
    return load_agent_context(repo, agent, resolver=resolver, **options)  # type: ignore[arg-type]


def refusal(repo: Path, agent: str, resolver: Resolver, **options: object) -> SkillError:
    with pytest.raises(SkillError) as info:
        load(repo, agent, resolver, **options)
    assert SECRET not in str(info.value)
    return info.value


# -- resolution order ----------------------------------------------------------------


def test_src_agents_comes_first(repo: Path, resolver: Resolver) -> None:
    for where in ("src/agents/x.md", ".team-development/src/agents/x.md", "t/src/agents/x.md"):
        put(repo, where)
    context = load(repo, "x", resolver, team="t")
    assert context.source_path == "src/agents/x.md"
    assert context.definition.name == "src/agents/x.md"
    assert context.identity == "x"
    assert context.envelope()["source_path"] == "src/agents/x.md"


def test_the_team_folder_comes_before_team_development(repo: Path, resolver: Resolver) -> None:
    put(repo, ".team-development/src/agents/x.md")
    put(repo, "t/src/agents/x.md")
    assert load(repo, "x", resolver, team="t").source_path == "t/src/agents/x.md"
    assert load(repo, "x", resolver).source_path == ".team-development/src/agents/x.md"


def test_team_development_is_searched_without_a_team(repo: Path, resolver: Resolver) -> None:
    put(repo, ".team-development/src/agents/x.md")
    assert load(repo, "x", resolver).source_path == ".team-development/src/agents/x.md"


def test_harness_presets_come_after_the_seed_folders_in_the_order_given(
    repo: Path, resolver: Resolver
) -> None:
    put(repo, ".claude/agents/x.md")
    put(repo, ".github/agents/x.agent.md")
    put(repo, ".github/agents/x.md")
    assert load(repo, "x", resolver, harnesses=("copilot", "claude")).source_path == (
        ".github/agents/x.agent.md"
    )
    assert load(repo, "x", resolver, harnesses=("claude", "copilot")).source_path == (
        ".claude/agents/x.md"
    )
    with pytest.raises(AgentNotFoundError):
        load(repo, "x", resolver)
    put(repo, "src/agents/x.md")
    assert load(repo, "x", resolver, harnesses=("claude",)).source_path == "src/agents/x.md"
    identity = load(repo, "src/agents/x.md", resolver).identity
    assert identity == "x"
    assert load(repo, ".github/agents/x.agent.md", resolver).identity == "x"


def test_the_not_found_message_is_the_seeds(repo: Path, resolver: Resolver) -> None:
    error = refusal(repo, "x", resolver)
    assert isinstance(error, AgentNotFoundError)
    assert error.reason == SEED_NOT_FOUND
    assert agent_error_code(error) == "AGENT_NOT_FOUND"
    assert refusal(repo, "x", resolver, team="t").reason == (
        "Agent 'x' not found. Searched: src/agents/, t/src/agents/, .team-development/src/agents/"
    )
    assert refusal(repo, "x", resolver, team=".team-development").reason == SEED_NOT_FOUND
    assert refusal(repo, "x", resolver, harnesses=("copilot", "gemini")).reason == (
        SEED_NOT_FOUND + ", .github/agents/, .gemini/agents/"
    )


def test_the_path_form_skips_name_resolution(repo: Path, resolver: Resolver) -> None:
    put(repo, "src/agents/x.md")
    put(repo, "custom/place/x.md")
    context = load(repo, "custom/place/x.md", resolver)
    assert context.source_path == "custom/place/x.md"
    error = refusal(repo, "custom/x.md", resolver)
    assert (error.code, agent_error_code(error)) == ("agent_not_found", "AGENT_NOT_FOUND")


@pytest.mark.parametrize(
    "name", ["X", "x_y", "-x", "x--y", "x" * 65, "x.md", "..", ".", "x\u202e", "x\x00"]
)
def test_t72_a_name_that_is_not_a_slug_is_not_found(
    repo: Path, resolver: Resolver, name: str
) -> None:
    put(repo, f"src/agents/{name}.md" if "\x00" not in name and name not in (".", "..") else "a")
    error = refusal(repo, name, resolver)
    assert isinstance(error, AgentNotFoundError)
    assert "\u202e" not in error.reason
    assert "\x00" not in error.reason


@pytest.mark.parametrize(
    ("agent", "code"),
    [
        ("/etc/passwd", "path_escape"),
        ("../outside/x.md", "path_escape"),
        ("src/../../outside/x.md", "path_escape"),
        ("src/./agents/x.md", "path_escape"),
        ("src//agents/x.md", "bad_name"),
        ("src/agents/", "bad_name"),
        ("src\\agents\\x.md", "bad_name"),
        ("..\\outside\\x.md", "bad_name"),
    ],
)
def test_t72_a_path_cannot_leave_the_repository(
    repo: Path, resolver: Resolver, agent: str, code: str
) -> None:
    put(repo, "src/agents/x.md")
    error = refusal(repo, agent, resolver)
    assert (error.kind, error.code) == ("containment", code)
    assert agent_error_code(error) == "AGENT_FILE_UNREADABLE"


# -- containment ---------------------------------------------------------------------


def test_t73_a_symlinked_agents_folder_is_refused(repo: Path, resolver: Resolver) -> None:
    (repo / "src").mkdir()
    (repo / "src" / "agents").symlink_to(repo.parent / "outside")
    for agent in ("x", "src/agents/x.md"):
        error = refusal(repo, agent, resolver)
        assert (error.kind, error.code) == ("containment", "symlink")


def test_t73_a_symlinked_agent_file_is_refused(repo: Path, resolver: Resolver) -> None:
    (repo / "src" / "agents").mkdir(parents=True)
    (repo / "src" / "agents" / "x.md").symlink_to(repo.parent / "outside" / "x.md")
    for agent in ("x", "src/agents/x.md"):
        error = refusal(repo, agent, resolver)
        assert (error.kind, error.code) == ("containment", "symlink")
        assert agent_error_code(error) == "AGENT_FILE_UNREADABLE"


def test_t73_a_fifo_is_refused_without_blocking(repo: Path, resolver: Resolver) -> None:
    (repo / "src" / "agents").mkdir(parents=True)
    os.mkfifo(repo / "src" / "agents" / "x.md")
    error = refusal(repo, "x", resolver)
    assert (error.kind, error.code) == ("containment", "not_regular_file")


def test_t73_a_hard_link_is_refused(repo: Path, resolver: Resolver) -> None:
    (repo / "src" / "agents").mkdir(parents=True)
    os.link(repo.parent / "outside" / "x.md", repo / "src" / "agents" / "x.md")
    error = refusal(repo, "x", resolver)
    assert (error.kind, error.code) == ("containment", "hardlink")


def test_t73_an_oversize_file_is_refused_at_the_cap(repo: Path, resolver: Resolver) -> None:
    text = agent_file("x")
    put(repo, "src/agents/x.md", text)
    size = len(text.encode())
    assert load(repo, "x", resolver, limits=Limits(max_skill_bytes=size)).identity == "x"
    error = refusal(repo, "x", resolver, limits=Limits(max_skill_bytes=size - 1))
    assert (error.kind, error.code) == ("malformed", "too_large")
    assert agent_error_code(error) == "AGENT_FILE_UNREADABLE"


def test_t74_an_unreadable_first_match_never_falls_back(repo: Path, resolver: Resolver) -> None:
    (repo / "src" / "agents").mkdir(parents=True)
    (repo / "src" / "agents" / "x.md").symlink_to(repo.parent / "outside" / "x.md")
    put(repo, ".team-development/src/agents/x.md")
    assert refusal(repo, "x", resolver).code == "symlink"
    (repo / "src" / "agents" / "x.md").unlink()
    put(repo, "src/agents/x.md", "not an agent file")
    error = refusal(repo, "x", resolver)
    assert (error.code, agent_error_code(error)) == ("no_opening_fence", "AGENT_PARSE_FAILED")
    assert "src/agents/x.md" in error.reason


def test_encoding_errors_are_unreadable(repo: Path, resolver: Resolver) -> None:
    (repo / "src" / "agents").mkdir(parents=True)
    (repo / "src" / "agents" / "x.md").write_bytes(b"---\nname: \xff\n---\n")
    error = refusal(repo, "x", resolver)
    assert (error.code, agent_error_code(error)) == ("bad_encoding", "AGENT_FILE_UNREADABLE")


def test_a_token_map_not_utf8_is_unreadable_as_an_agent_file_is(repo: Path) -> None:
    # One name per cause: strict JSON's bad_encoding is the SKILL.md's and the agent
    # file's, and reads as the seed's AGENT_FILE_UNREADABLE as theirs does.
    folder = repo / "agents" / "x"
    (folder / "pi").mkdir(parents=True)
    (folder / "agent.md").write_text("Body.\n")
    (folder / "pi" / "frontmatter.json").write_text(
        '{"name": "x", "description": "d", "tools": ["Read"]}'
    )
    (repo / "agents" / "token-map.json").write_bytes(b"\xff\xfe")
    with pytest.raises(MalformedSkillError) as caught:
        load_agent_context(repo, "x", harnesses=("pi",))
    assert (caught.value.code, agent_error_code(caught.value)) == (
        "bad_encoding",
        "AGENT_FILE_UNREADABLE",
    )


def test_bad_arguments(repo: Path, resolver: Resolver) -> None:
    for agent in ("", None, 3):
        error = refusal(repo, agent, resolver)  # type: ignore[arg-type]
        assert (error.code, agent_error_code(error)) == ("missing_argument", "MISSING_ARGUMENT")
    bad: list[tuple[str, object]] = [
        ("team", ""),
        ("team", 3),
        ("harnesses", "claude"),
        ("harnesses", ("vim",)),
        ("limits", {}),
    ]
    for option, value in bad:
        with pytest.raises(SkillUsageError):
            load(repo, "x", resolver, **{option: value})
    with pytest.raises(SkillContainmentError):
        load(repo, "x", resolver, team="../outside")


def test_a_missing_repository_is_not_found(tmp_path: Path, resolver: Resolver) -> None:
    error = refusal(tmp_path / "nothing", "x", resolver)
    assert isinstance(error, SkillNotFoundError)
    assert agent_error_code(error) == "AGENT_FILE_UNREADABLE"


# -- core knowledge ------------------------------------------------------------------

KNOWLEDGE = """## Core Knowledge
- Read docs/a.md
- Read `docs/b.md`
- Read ../outside/secret.md
- Read /etc/passwd
- Read docs/missing.md
- Read docs/link.md
- Read docs/big.md
- Read docs/latin1.md
- Read docs/hidden.md
"""


def test_t75_core_knowledge_reads_are_contained_and_per_entry(
    repo: Path, resolver: Resolver
) -> None:
    put(repo, "src/agents/x.md", agent_file("x", KNOWLEDGE))
    docs = repo / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("alpha")
    (docs / "b.md").write_text("beta")
    (docs / "link.md").symlink_to(repo.parent / "outside" / "secret.md")
    (docs / "big.md").write_text("z" * 100)
    (docs / "latin1.md").write_bytes(b"caf\xe9")
    (docs / "hidden.md").write_text("a\u202eb")
    context = load(repo, "x", resolver)
    assert context.envelope()["core_knowledge"] == [line[2:] for line in KNOWLEDGE.splitlines()[1:]]
    entries = read_core_knowledge(
        repo, context, limits=Limits(max_skill_bytes=99), resolver=resolver
    )
    outcomes = [
        (
            entry.path,
            entry.text if entry.error is None else f"{entry.error.kind}/{entry.error.code}",
        )
        for entry in entries
    ]
    assert outcomes == [
        ("docs/a.md", "alpha"),
        ("docs/b.md", "beta"),
        ("../outside/secret.md", "containment/path_escape"),
        ("/etc/passwd", "containment/path_escape"),
        ("docs/missing.md", "not_found/missing"),
        ("docs/link.md", "containment/symlink"),
        ("docs/big.md", "containment/too_large"),
        ("docs/latin1.md", "malformed/bad_encoding"),
        ("docs/hidden.md", "a[U+202E]b"),
    ]
    assert entries[0].sha256 is not None
    assert all(SECRET not in str(entry) for entry in entries)
    assert read_core_knowledge(repo, context.definition, resolver=resolver)[6].text == "z" * 100


def test_read_core_knowledge_arguments(repo: Path) -> None:
    with pytest.raises(SkillUsageError):
        read_core_knowledge(repo, "x")  # type: ignore[arg-type]
    put(repo, "src/agents/x.md")
    context = load_agent_context(repo, "x")
    with pytest.raises(SkillUsageError):
        read_core_knowledge(repo, context, limits={})  # type: ignore[arg-type]
    assert read_core_knowledge(repo, context) == ()


def test_envelope_codes_cover_every_kind() -> None:
    assert agent_error_code(MalformedSkillError("yaml_syntax", "r")) == "AGENT_PARSE_FAILED"
    assert agent_error_code(SkillNotFoundError("unreadable", "r")) == "AGENT_FILE_UNREADABLE"


def test_the_identity_is_the_file_name_without_its_suffix(repo: Path, resolver: Resolver) -> None:
    put(repo, "agents/plain", agent_file("plain"))
    put(repo, "agents/.md", agent_file("dot"))
    put(repo, "agents/x.agent.md", agent_file("x"))
    assert load(repo, "agents/plain", resolver).identity == "plain"
    assert load(repo, "agents/.md", resolver).identity == ".md"
    assert load(repo, "agents/x.agent.md", resolver).identity == "x"


# -- findings of the security review (each fails until its defect is fixed) ------------


@pytest.mark.parametrize("harness", [["claude"], {"claude": 1}, {"claude"}])
def test_a_harness_of_an_unhashable_type_is_a_usage_error(
    repo: Path, resolver: Resolver, harness: object
) -> None:
    """``harness not in HARNESS_PRESETS`` raises ``TypeError`` for an unhashable value."""
    with pytest.raises(SkillUsageError):
        load(repo, "x", resolver, harnesses=(harness,))


@pytest.mark.skipif(os.geteuid() == 0, reason="root searches a folder of mode 000")
def test_t74_an_unsearchable_folder_on_the_way_never_falls_back(
    repo: Path, resolver: Resolver
) -> None:
    """``has_entry`` reads EACCES on ``src`` as "absent", so a repository that makes
    ``src`` unsearchable gets ``.team-development/src/agents/x.md`` loaded instead."""
    put(repo, "src/agents/x.md")
    put(repo, ".team-development/src/agents/x.md")
    (repo / "src").chmod(0)
    try:
        error = refusal(repo, "x", resolver)
    finally:
        (repo / "src").chmod(0o755)
    assert agent_error_code(error) == "AGENT_FILE_UNREADABLE"


def test_t75_core_knowledge_reads_are_bounded_in_total(tmp_path: Path) -> None:
    from skillguard import Limits
    from skillguard.agents import parse_agent, read_core_knowledge

    (tmp_path / "k.md").write_text("x" * 100)
    directives = "".join("- Read k.md\n" for _ in range(5))
    raw = f"---\nname: A\ndescription: d\n---\n## Core Knowledge\n{directives}".encode()
    agent = parse_agent(raw)
    # Three of 100 bytes fit a budget of 300; the fourth is past it, the fifth past the count.
    limits = Limits(max_snapshot_bytes=300, max_resource_files=4)
    results = read_core_knowledge(tmp_path, agent, limits=limits)
    assert [r.error.code if r.error else "read" for r in results] == [
        "read",
        "read",
        "read",
        "too_large",
        "too_many_entries",
    ]
