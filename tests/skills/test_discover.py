"""Discovery across ordered roots, trusted links, and progressive disclosure.

Test names that start with ``test_tN_`` stop threat ``TN`` of threat-model.md.
"""

from __future__ import annotations

import gc
import os
from pathlib import Path

import pytest

from skillguard import (
    Limits,
    SkillContainmentError,
    SkillNotFoundError,
    SkillRoots,
    SkillUsageError,
    default_roots,
    discover,
)
from skillguard._skills.roots import USER_ROOTS_ENV

SECRET = b"-----BEGIN OPENSSH PRIVATE KEY----- not-a-real-key"


def skill_text(name: str, description: str = "Does a thing.") -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\nBody of {name}.\n"


def make_skill(root: Path, name: str, *parents: str, description: str = "Does a thing.") -> Path:
    folder = root.joinpath(*parents, name)
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(skill_text(name, description))
    return folder


def skipped_codes(found: object) -> list[tuple[str, str]]:
    return [(s.path, s.code) for s in found.skipped]  # type: ignore[attr-defined]


# -- one root ------------------------------------------------------------------------


def test_metadata_for_every_skill(tmp_path: Path) -> None:
    make_skill(tmp_path, "alpha")
    make_skill(tmp_path, "beta", "group")
    found = discover([tmp_path])
    assert [(s.name, s.location, s.description) for s in found.skills] == [
        ("alpha", "alpha", "Does a thing."),
        ("beta", "group/beta", "Does a thing."),
    ]
    meta = found.skills[0]
    raw = (tmp_path / "alpha" / "SKILL.md").read_bytes()
    assert (meta.size, len(meta.sha256)) == (len(raw), 64)
    assert meta.root == str(tmp_path)
    assert found.shadowed == ()
    assert found.skipped == ()


def test_metadata_carries_disable_model_invocation(tmp_path: Path) -> None:
    make_skill(tmp_path, "alpha")
    hidden = make_skill(tmp_path, "beta")
    (hidden / "SKILL.md").write_text(
        "---\nname: beta\ndescription: x\ndisable-model-invocation: true\n---\nBody.\n"
    )
    found = discover([tmp_path])
    assert [(s.name, s.disable_model_invocation) for s in found.skills] == [
        ("alpha", False),
        ("beta", True),
    ]


def test_a_root_that_is_itself_a_skill_folder(tmp_path: Path) -> None:
    folder = make_skill(tmp_path, "solo")
    assert discover([folder]).names() == ("solo",)


def test_tooling_folders_and_nested_skills_are_not_searched(tmp_path: Path) -> None:
    outer = make_skill(tmp_path, "outer")
    make_skill(outer, "inner", "references")
    make_skill(tmp_path, "hidden", ".git")
    make_skill(tmp_path, "dep", "node_modules")
    assert discover([tmp_path]).names() == ("outer",)


def test_malformed_skills_are_skipped_with_their_reason(tmp_path: Path) -> None:
    make_skill(tmp_path, "good")
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "SKILL.md").write_text("---\nname: bad\nname: bad\ndescription: d\n---\n")
    other = tmp_path / "wrong-name"
    other.mkdir()
    (other / "SKILL.md").write_text(skill_text("good"))
    found = discover([tmp_path])
    assert found.names() == ("good",)
    assert [(s.path, s.kind, s.code) for s in found.skipped] == [
        ("bad", "malformed", "duplicate_key"),
        ("wrong-name", "malformed", "name_mismatch"),
    ]


def test_compat_profile_identifies_skills_by_folder(tmp_path: Path) -> None:
    other = tmp_path / "folder-name"
    other.mkdir()
    (other / "SKILL.md").write_text(skill_text("declared-name"))
    found = discover([tmp_path], profile="compat")
    assert found.names() == ("folder-name",)
    assert found.skills[0].warnings[0].code == "name_mismatch"


# -- ordered roots -------------------------------------------------------------------


def test_t21_the_first_root_wins_and_later_ones_are_shadowed(tmp_path: Path) -> None:
    first, second = tmp_path / "project", tmp_path / "user"
    make_skill(first, "pdf", description="Project version.")
    make_skill(second, "pdf", description="User version.")
    make_skill(second, "only-user")
    found = discover([first, second])
    assert [(s.name, s.root, s.description) for s in found.skills] == [
        ("pdf", str(first), "Project version."),
        ("only-user", str(second), "Does a thing."),
    ]
    assert [(s.name, s.root, s.by_root) for s in found.shadowed] == [
        ("pdf", str(second), str(first))
    ]


def test_t21_within_a_root_the_first_folder_in_order_wins(tmp_path: Path) -> None:
    make_skill(tmp_path, "pdf", "a")
    make_skill(tmp_path, "pdf", "b")
    found = discover([tmp_path])
    assert [s.location for s in found.skills] == ["a/pdf"]
    assert [(s.location, s.by_location) for s in found.shadowed] == [("b/pdf", "a/pdf")]


def test_a_missing_root_is_reported_not_fatal(tmp_path: Path) -> None:
    make_skill(tmp_path / "real", "demo")
    found = discover([tmp_path / "missing", tmp_path / "real"])
    assert found.names() == ("demo",)
    assert [(s.root, s.kind, s.code) for s in found.skipped] == [
        (str(tmp_path / "missing"), "not_found", "missing")
    ]


def test_default_roots_order_and_the_user_override(tmp_path: Path) -> None:
    roots = default_roots(tmp_path, home="/home/u", environ={})
    assert [str(root) for root in roots] == [
        str(tmp_path / ".agents/skills"),
        str(tmp_path / ".claude/skills"),
        str(tmp_path / ".github/skills"),
        str(tmp_path / ".cursor/skills"),
        str(tmp_path / ".codex/skills"),
        "/home/u/.agents/skills",
    ]
    assert {root.base for root in roots[:5]} == {str(tmp_path)}
    override = default_roots(tmp_path, environ={USER_ROOTS_ENV: f"/a{os.pathsep}/b"})
    assert [str(root) for root in override[-2:]] == ["/a", "/b"]
    assert len(default_roots(tmp_path, environ={USER_ROOTS_ENV: ""})) == 5


def test_default_roots_expand_a_leading_tilde_in_user_roots(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    listed = os.pathsep.join(["~/skills", "~", "/abs/~/x", "rel/~"])
    roots = default_roots(tmp_path, home=home, environ={USER_ROOTS_ENV: listed})
    assert [str(root) for root in roots[5:]] == [
        f"{home}/skills",
        str(home),
        "/abs/~/x",
        "rel/~",
    ]
    # Without home, the OS's idea of the user's home; a home of "~" is expanded too.
    monkeypatch.setenv("HOME", str(home))
    assert str(default_roots(tmp_path, environ={USER_ROOTS_ENV: "~/s"})[-1]) == f"{home}/s"
    assert str(default_roots(tmp_path, home="~", environ={})[-1]) == f"{home}/.agents/skills"
    with pytest.raises(SkillUsageError):
        default_roots(tmp_path, home=5, environ={})  # type: ignore[arg-type]


def test_bad_arguments_are_usage_errors(tmp_path: Path) -> None:
    with pytest.raises(SkillUsageError):
        discover(str(tmp_path))  # a str is a sequence, but not of paths
    with pytest.raises(SkillUsageError):
        discover([tmp_path], limits={"max_skills": 1})  # type: ignore[arg-type]
    with pytest.raises(SkillUsageError):
        SkillRoots([tmp_path], resolver="magic")  # type: ignore[arg-type]


# -- limits --------------------------------------------------------------------------


def test_t20_discovery_depth_at_limit_and_over(tmp_path: Path) -> None:
    make_skill(tmp_path, "deep", "a", "b")  # depth 3
    assert discover([tmp_path], limits=Limits(max_discovery_depth=3)).names() == ("deep",)
    found = discover([tmp_path], limits=Limits(max_discovery_depth=2))
    assert found.names() == ()
    assert skipped_codes(found) == [("a/b/deep", "too_deep")]


def test_t20_folders_per_root_at_limit_and_over(tmp_path: Path) -> None:
    for name in ("s1", "s2", "s3"):
        make_skill(tmp_path, name)
    assert len(discover([tmp_path], limits=Limits(max_dirs_per_root=3)).skills) == 3
    found = discover([tmp_path], limits=Limits(max_dirs_per_root=2))
    assert found.names() == ("s1", "s2")
    assert skipped_codes(found) == [("s3", "too_many_entries")]


def test_t20_total_skills_at_limit_and_over(tmp_path: Path) -> None:
    for name in ("s1", "s2", "s3"):
        make_skill(tmp_path, name)
    assert len(discover([tmp_path], limits=Limits(max_skills=3)).skills) == 3
    found = discover([tmp_path], limits=Limits(max_skills=2))
    assert found.names() == ("s1", "s2")
    assert skipped_codes(found) == [("s3", "too_many_skills")]


def test_t20_entries_per_folder_at_limit_and_over(tmp_path: Path) -> None:
    for name in ("s1", "s2"):
        make_skill(tmp_path, name)
    assert len(discover([tmp_path], limits=Limits(max_dir_entries=2)).skills) == 2
    found = discover([tmp_path], limits=Limits(max_dir_entries=1))
    assert len(found.skills) == 1  # the first entry the folder listing gives
    assert skipped_codes(found) == [("", "too_many_entries")]


# -- links ---------------------------------------------------------------------------


def test_t10_a_symlinked_skill_folder_is_refused_by_default(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    make_skill(repo, "linked")
    root = tmp_path / "root"
    root.mkdir()
    (root / "linked").symlink_to(repo / "linked", target_is_directory=True)
    found = discover([root])
    assert found.names() == ()
    assert skipped_codes(found) == [("linked", "symlink")]


def test_trusted_link_targets_follow_a_linked_skill_folder(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    make_skill(repo, "linked")
    root = tmp_path / "root"
    root.mkdir()
    (root / "linked").symlink_to(repo / "linked", target_is_directory=True)
    with SkillRoots([root], trusted_link_targets=[repo]) as sources:
        found = sources.discover()
        assert [(s.name, s.location) for s in found.skills] == [("linked", "linked")]
        assert sources.load("linked").body == "Body of linked.\n"


@pytest.mark.parametrize(
    "target",
    ["outside", "repo-evil", "repo"],
    ids=["outside-the-trusted-folder", "prefix-without-separator", "the-trusted-folder-itself"],
)
def test_t19_links_outside_the_trusted_folders_are_refused(tmp_path: Path, target: str) -> None:
    make_skill(tmp_path / "outside", "linked")
    make_skill(tmp_path / "repo-evil", "linked")
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "SKILL.md").write_text(skill_text("linked"))
    root = tmp_path / "root"
    root.mkdir()
    destination = tmp_path / target if target == "repo" else tmp_path / target / "linked"
    (root / "linked").symlink_to(destination, target_is_directory=True)
    found = discover([root], trusted_link_targets=[tmp_path / "repo"])
    assert found.names() == ()
    assert skipped_codes(found) == [("linked", "symlink")]


def test_t10_a_followed_link_target_has_no_further_links(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "linked").mkdir(parents=True)
    secret = tmp_path / "secret"
    secret.write_bytes(SECRET)
    (repo / "linked" / "SKILL.md").symlink_to(secret)
    root = tmp_path / "root"
    root.mkdir()
    (root / "linked").symlink_to(repo / "linked", target_is_directory=True)
    found = discover([root], trusted_link_targets=[repo])
    assert found.names() == ()
    assert skipped_codes(found) == [("linked", "symlink")]
    assert SECRET.decode() not in repr(found)


def test_a_skill_folder_reached_twice_is_kept_once(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    make_skill(repo, "shared")
    root = tmp_path / "root"
    root.mkdir()
    (root / "shared").symlink_to(repo / "shared", target_is_directory=True)
    found = discover([repo, root], trusted_link_targets=[repo])
    assert found.names() == ("shared",)
    assert [(s.root, s.code) for s in found.skipped] == [(str(root), "duplicate")]


def test_a_trusted_link_to_a_folder_without_a_skill_is_reported(tmp_path: Path) -> None:
    (tmp_path / "repo" / "empty").mkdir(parents=True)
    root = tmp_path / "root"
    root.mkdir()
    (root / "empty").symlink_to(tmp_path / "repo" / "empty", target_is_directory=True)
    found = discover([root], trusted_link_targets=[tmp_path / "repo"])
    assert skipped_codes(found) == [("empty", "no_skill")]


# -- tiers 2 and 3 -------------------------------------------------------------------


@pytest.fixture
def library(tmp_path: Path) -> Path:
    folder = make_skill(tmp_path, "pdf")
    (folder / "scripts").mkdir()
    (folder / "scripts" / "run.py").write_text("print(1)\n")
    (folder / "references").mkdir()
    (folder / "references" / "forms.md").write_text("# Forms\n")
    (folder / "assets" / "img").mkdir(parents=True)
    (folder / "assets" / "img" / "logo.svg").write_text("<svg/>")
    (folder / "notes.txt").write_text("n")
    return tmp_path


def test_tier_two_loads_the_body(library: Path) -> None:
    with SkillRoots([library]) as sources:
        skill = sources.load("pdf")  # discovers on first use
    assert skill.body == "Body of pdf.\n"


def test_tier_two_refuses_an_unknown_name(library: Path) -> None:
    with SkillRoots([library]) as sources, pytest.raises(SkillNotFoundError) as info:
        sources.load("../pdf")
    assert info.value.code == "unknown_skill"


def test_tier_three_lists_read_only_resources_by_slot(library: Path) -> None:
    with SkillRoots([library]) as sources:
        resources = sources.resources("pdf")
    assert [(r.path, r.slot, r.access) for r in resources.files] == [
        ("assets/img/logo.svg", "assets", "read_only"),
        ("notes.txt", "other", "read_only"),
        ("references/forms.md", "references", "read_only"),
        ("scripts/run.py", "scripts", "read_only"),
    ]
    assert resources.skipped == ()


def test_t15_tier_three_reads_through_saferoot(library: Path) -> None:
    folder = library / "pdf"
    secret = library.parent / "secret"
    secret.write_bytes(SECRET)
    (folder / "references" / "notes.md").symlink_to(secret)
    with SkillRoots([library]) as sources:
        assert sources.read_resource("pdf", "references/forms.md") == b"# Forms\n"
        for path, code in [
            ("references/notes.md", "symlink"),
            ("../pdf/SKILL.md", "path_escape"),
            ("/etc/passwd", "path_escape"),
            ("references/", "bad_name"),
        ]:
            with pytest.raises(SkillContainmentError) as info:
                sources.read_resource("pdf", path)
            assert info.value.code == code
        listed = sources.resources("pdf")
    assert [(s.path, s.code) for s in listed.skipped] == [("references/notes.md", "symlink")]
    assert SECRET.decode() not in repr(listed)


def test_t20_resource_limits_at_n_and_n_plus_one(library: Path) -> None:
    (library / "pdf" / "big.bin").write_bytes(b"x" * 100)
    with SkillRoots([library], limits=Limits(max_resource_bytes=100)) as sources:
        assert sources.read_resource("pdf", "big.bin") == b"x" * 100
    with SkillRoots([library], limits=Limits(max_resource_bytes=99)) as sources:
        with pytest.raises(SkillContainmentError) as info:
            sources.read_resource("pdf", "big.bin")
        assert info.value.code == "too_large"
    with SkillRoots([library], limits=Limits(max_resource_files=5)) as sources:
        assert len(sources.resources("pdf").files) == 5
    with SkillRoots([library], limits=Limits(max_resource_files=4)) as sources:
        listed = sources.resources("pdf")
        assert len(listed.files) == 4
        assert [s.code for s in listed.skipped] == ["too_many_entries"]
    with SkillRoots([library], limits=Limits(max_resource_depth=2)) as sources:
        listed = sources.resources("pdf")
        assert [(s.path, s.code) for s in listed.skipped] == [("assets/img", "too_deep")]


def test_roots_are_closed_and_leave_no_descriptor(library: Path) -> None:
    if not Path("/proc/self/fd").exists():
        pytest.skip("needs /proc to count descriptors")
    gc.collect()  # descriptors of earlier tests' objects close now, not mid-count
    before = len(os.listdir("/proc/self/fd"))
    with SkillRoots([library, library / "missing"]) as sources:
        sources.discover()
        sources.load("pdf")
        sources.resources("pdf")
    assert len(os.listdir("/proc/self/fd")) == before


def test_t10_a_symlinked_conventional_root_in_a_project_is_refused(tmp_path: Path) -> None:
    # Found in review: a cloned repository's .claude/skills linking to the victim's
    # own skills. The project folder is trusted; what is below it is not.
    victim = tmp_path / "victim-skills"
    make_skill(victim, "private")
    project = tmp_path / "ws"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "skills").symlink_to(victim, target_is_directory=True)
    found = discover(default_roots(project, environ={USER_ROOTS_ENV: ""}))
    assert found.names() == ()
    assert ("containment", "symlink") in {(s.kind, s.code) for s in found.skipped}


@pytest.mark.parametrize("targets", ["/", None, [b"/tmp"], "relative"])
def test_trusted_link_targets_must_be_a_list_of_paths(tmp_path: Path, targets: object) -> None:
    # Found in review: a plain string was split into characters, trusting "/".
    with pytest.raises(SkillUsageError):
        discover([tmp_path], trusted_link_targets=targets)  # type: ignore[arg-type]


@pytest.mark.parametrize("roots", [None, "root", [b"/tmp"], [1]])
def test_roots_must_be_a_list_of_paths(roots: object) -> None:
    with pytest.raises(SkillUsageError):
        SkillRoots(roots)  # type: ignore[arg-type]


def test_a_nul_in_a_root_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(SkillUsageError):
        discover([f"{tmp_path}/a\x00b"])
    with pytest.raises(SkillUsageError):
        default_roots(5)  # type: ignore[arg-type]


def test_a_name_that_is_not_a_str_is_a_usage_error(library: Path) -> None:
    with SkillRoots([library]) as sources, pytest.raises(SkillUsageError):
        sources.load(1)  # type: ignore[arg-type]


def test_repeated_discovery_with_links_leaks_no_descriptor(tmp_path: Path) -> None:
    if not Path("/proc/self/fd").exists():
        pytest.skip("needs /proc to count descriptors")
    repo = tmp_path / "repo"
    make_skill(repo, "linked")
    root = tmp_path / "root"
    root.mkdir()
    (root / "linked").symlink_to(repo / "linked", target_is_directory=True)
    with SkillRoots([root], trusted_link_targets=[repo]) as sources:
        sources.discover()
        gc.collect()
        during = len(os.listdir("/proc/self/fd"))
        for _ in range(20):
            sources.discover()
        assert len(os.listdir("/proc/self/fd")) == during


def test_t16_a_trusted_link_target_swapped_for_a_link_is_refused(tmp_path: Path) -> None:
    # The target is opened beneath the trusted folder with no symlink followed: a
    # component that is a symlink at open time is refused, whatever realpath saw.
    trusted = tmp_path / "repos"
    make_skill(trusted / "ws", "x")
    outside = tmp_path / "outside"
    make_skill(outside, "x")
    root = tmp_path / "root"
    root.mkdir()
    (root / "x").symlink_to(trusted / "ws" / "x", target_is_directory=True)
    assert discover([root], trusted_link_targets=[trusted]).names() == ("x",)
    (trusted / "ws" / "x").rename(trusted / "ws" / "held")
    (trusted / "ws" / "inner").symlink_to(outside, target_is_directory=True)
    (root / "x").unlink()
    (root / "x").symlink_to(trusted / "ws" / "inner" / "x", target_is_directory=True)
    # realpath resolves through ws/inner to outside/x, which is not in the trusted folder.
    found = discover([root], trusted_link_targets=[trusted])
    assert found.names() == ()
    assert skipped_codes(found) == [("x", "symlink")]


# -- names that hide text (T40) ------------------------------------------------------

TAGS = "\U000e0069\U000e0067\U000e006e"


def test_t40_a_folder_name_cannot_hide_text_from_the_catalog(tmp_path: Path) -> None:
    make_skill(tmp_path, "pdf", f"docs{TAGS}", "cat\u202egpj.exe")
    make_skill(tmp_path, "notes")
    found = discover([tmp_path])
    assert found.names() == ("notes",)
    [skipped] = found.skipped
    assert (skipped.kind, skipped.code) == ("containment", "hidden_character")
    assert skipped.path == "docs[U+E0069][U+E0067][U+E006E]"


def test_t40_a_resource_name_cannot_hide_text(library: Path) -> None:
    (library / "pdf" / "references" / "a\U000e0041.md").write_text("x")
    with SkillRoots([library]) as sources:
        resources = sources.resources("pdf")
        with pytest.raises(SkillContainmentError) as info:
            sources.read_resource("pdf", "references/a\U000e0041.md")
    assert "references/a\U000e0041.md" not in [r.path for r in resources.files]
    assert [(s.path, s.code) for s in resources.skipped] == [
        ("references/a[U+E0041].md", "hidden_character")
    ]
    assert info.value.code == "hidden_character"


def test_t108_a_tooling_folder_that_is_a_skill_folder_is_skipped_with_its_reason(
    tmp_path: Path,
) -> None:
    make_skill(tmp_path, "notes")
    folder = tmp_path / "node_modules"
    folder.mkdir()
    (folder / "SKILL.md").write_text(skill_text("notes"))
    found = discover([tmp_path])
    assert found.names() == ("notes",)
    assert [(s.path, s.code) for s in found.skipped] == [("node_modules", "name_mismatch")]
