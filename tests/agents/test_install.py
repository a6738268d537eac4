"""``agent install`` / ``uninstall``: the plan, the manifest, all or nothing, and the
attacks on the folder written into (threat-model.md T290-T296)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from skillguard import SkillContainmentError, SkillError, SkillUsageError
from skillguard._agents.install import MANIFEST_FILE, check_install, install_plan, uninstall
from skillguard._agents.install_plan import InstallPlan, plan_install
from skillguard._cli.main import main
from skillguard._fs.install import InstallFolder
from skillguard.agents import parse_token_map
from tests.fs.test_fs_write import file_size_limit

UPSTREAM = Path(__file__).resolve().parents[1] / "fixtures" / "agent-cortex"
RAW_MAP = (UPSTREAM / "token-map.json").read_bytes()
TOKENS = parse_token_map(RAW_MAP)


@pytest.fixture
def source(tmp_path: Path) -> Path:
    """A copy of the upstream-shaped repository: agents/, agents-native/, token-map.json."""
    repo = tmp_path / "repo"
    shutil.copytree(UPSTREAM, repo)
    return repo


def plan_for(repo: Path, harness: str = "claude", **kwargs: Any) -> InstallPlan:
    kwargs.setdefault("native_dir", repo / "agents-native")
    return plan_install(
        repo / "agents", harness, token_map=TOKENS, token_map_digest="m" * 64, **kwargs
    )


def tree(folder: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(folder)): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and not path.is_symlink()
    }


def codes(report: Any) -> list[str]:
    return [f.code for f in report.findings if f.severity == "error"]


# -- install, check, uninstall ----------------------------------------------------------


def test_install_writes_every_file_and_a_manifest(source: Path, tmp_path: Path) -> None:
    dest = tmp_path / "dest"
    plan = plan_for(source)
    report = install_plan(plan, dest)
    assert report.ok, report.findings
    assert report.written == ("plan.md", "ralph.md")
    files = tree(dest)
    assert sorted(files) == [MANIFEST_FILE, "plan.md", "ralph.md"]
    assert files["ralph.md"] == (source / "agents-native" / "ralph.md").read_bytes()
    manifest = json.loads(files[MANIFEST_FILE])
    assert manifest["harness"] == "claude"
    assert manifest["source_digest"] == plan.source_digest
    assert manifest["token_map_digest"] == "m" * 64
    assert {(f["path"], f["sha256"]) for f in manifest["files"]} == {
        (name, hashlib.sha256(files[name]).hexdigest()) for name in ("plan.md", "ralph.md")
    }
    # Again: nothing to write, nothing refused.
    again = install_plan(plan_for(source), dest)
    assert again.ok
    assert again.written == ()
    assert again.unchanged == ("plan.md", "ralph.md")
    assert check_install(plan_for(source), dest).ok


def test_check_reports_every_kind_of_drift(source: Path, tmp_path: Path) -> None:
    dest = tmp_path / "dest"
    assert install_plan(plan_for(source), dest).ok
    (dest / "plan.md").write_text("edited by hand")
    (dest / "ralph.md").unlink()
    (source / "agents" / "plan" / "agent.md").write_text("# plan\n\nChanged.\n")
    report = check_install(plan_for(source), dest)
    assert not report.ok
    assert sorted(codes(report)) == ["edited", "missing_file", "source_changed", "stale"]
    assert all(f.kind == "drift" for f in report.findings if f.severity == "error")
    other = plan_for(source)
    other = InstallPlan(
        harness=other.harness,
        items=other.items,
        findings=other.findings,
        warnings=other.warnings,
        source_digest=other.source_digest,
        token_map_digest=hashlib.sha256(b"another map").hexdigest(),
    )
    assert "token_map_changed" in codes(check_install(other, dest))
    assert codes(check_install(plan_for(source), tmp_path / "none")) == ["not_installed"]


def test_uninstall_removes_exactly_what_was_installed(source: Path, tmp_path: Path) -> None:
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "mine.md").write_text("the user's own agent")
    assert install_plan(plan_for(source), dest).ok
    report = uninstall(dest)
    assert report.ok, report.findings
    assert sorted(report.removed) == ["plan.md", "ralph.md"]
    assert tree(dest) == {"mine.md": b"the user's own agent"}
    assert codes(uninstall(dest)) == ["no_manifest"]


def test_t294_uninstall_refuses_a_file_changed_by_hand_and_removes_nothing(
    source: Path, tmp_path: Path
) -> None:
    dest = tmp_path / "dest"
    assert install_plan(plan_for(source), dest).ok
    (dest / "plan.md").write_text("edited by hand")
    before = tree(dest)
    report = uninstall(dest)
    assert codes(report) == ["edited_since_install"]
    assert report.removed == ()
    assert tree(dest) == before


def test_t294_a_file_skillguard_did_not_write_is_never_overwritten(
    source: Path, tmp_path: Path
) -> None:
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "ralph.md").write_text("the user's ralph")
    report = install_plan(plan_for(source), dest)
    assert codes(report) == ["not_ours"]
    assert "ralph.md" in report.findings[-1].message
    # All or nothing: plan.md was not written either, and there is no manifest.
    assert tree(dest) == {"ralph.md": b"the user's ralph"}
    forced = install_plan(plan_for(source), dest, force={"ralph.md"})
    assert forced.ok
    assert (dest / "ralph.md").read_bytes() == (source / "agents-native" / "ralph.md").read_bytes()


def test_a_force_that_names_no_file_of_the_install_is_refused(source: Path, tmp_path: Path) -> None:
    # A typo in --force must not pass unnoticed: the operator meant some file, and the
    # install would otherwise go on as if the flag had been applied.
    dest = tmp_path / "dest"
    with pytest.raises(SkillUsageError, match=r"'ralh\.md'"):
        install_plan(plan_for(source), dest, force={"ralh.md"})
    assert tree(dest) == {}
    assert install_plan(plan_for(source), dest).ok
    with pytest.raises(SkillUsageError, match=r"'plan\.mdx'"):
        install_plan(plan_for(source), dest, force={"plan.md", "plan.mdx"})
    # A file the manifest lists but the plan no longer writes is removed by the
    # install: naming it is no typo.
    shutil.rmtree(source / "agents" / "plan")
    (dest / "plan.md").write_text("edited")
    assert install_plan(plan_for(source), dest, force={"plan.md"}).ok
    assert not (dest / "plan.md").exists()


def test_an_edited_install_is_refused_until_forced(source: Path, tmp_path: Path) -> None:
    dest = tmp_path / "dest"
    assert install_plan(plan_for(source), dest).ok
    (dest / "plan.md").write_text("edited")
    assert codes(install_plan(plan_for(source), dest)) == ["edited_since_install"]
    assert (dest / "plan.md").read_text() == "edited"
    assert install_plan(plan_for(source), dest, force=["plan.md"]).ok
    assert check_install(plan_for(source), dest).ok


def test_a_file_no_longer_planned_is_removed(source: Path, tmp_path: Path) -> None:
    dest = tmp_path / "dest"
    assert install_plan(plan_for(source), dest).ok
    shutil.rmtree(source / "agents" / "plan")
    report = install_plan(plan_for(source), dest)
    assert report.ok
    assert report.removed == ("plan.md",)
    assert sorted(tree(dest)) == [MANIFEST_FILE, "ralph.md"]


def test_dry_run_writes_nothing(source: Path, tmp_path: Path) -> None:
    dest = tmp_path / "dest"
    report = install_plan(plan_for(source), dest, dry_run=True)
    assert report.ok
    assert report.written == ("plan.md", "ralph.md")
    assert not dest.exists()


def test_a_manifest_for_another_harness_is_refused(source: Path, tmp_path: Path) -> None:
    dest = tmp_path / "dest"
    assert install_plan(plan_for(source, "pi"), dest).ok
    assert codes(install_plan(plan_for(source, "claude"), dest)) == ["other_harness"]
    assert "other_harness" in codes(check_install(plan_for(source, "claude"), dest))


@pytest.mark.parametrize(
    "files",
    [
        [{"path": "../outside.md", "sha256": "0" * 64, "kind": "agent"}],
        [{"path": "/etc/passwd", "sha256": "0" * 64, "kind": "agent"}],
        [{"path": ".hidden", "sha256": "0" * 64, "kind": "agent"}],
        [{"path": "x.md", "sha256": "0", "kind": "agent"}],
        [{"path": "x.md", "sha256": "0" * 64, "kind": "agent", "more": 1}],
        "x.md",
    ],
)
def test_t294_a_tampered_manifest_is_refused_and_nothing_is_removed(
    source: Path, tmp_path: Path, files: Any
) -> None:
    dest = tmp_path / "dest"
    assert install_plan(plan_for(source), dest).ok
    outside = tmp_path / "outside.md"
    outside.write_text("not skillguard's")
    manifest = json.loads((dest / MANIFEST_FILE).read_text())
    manifest["files"] = files
    (dest / MANIFEST_FILE).write_text(json.dumps(manifest))
    before = tree(dest)
    assert codes(uninstall(dest)) == ["manifest_invalid"]
    assert codes(install_plan(plan_for(source), dest)) == ["manifest_invalid"]
    assert tree(dest) == before
    assert outside.read_text() == "not skillguard's"


# -- native agents ------------------------------------------------------------------------


def test_t295_a_deferred_agent_without_its_native_file_is_a_finding(source: Path) -> None:
    (source / "agents-native" / "ralph.md").unlink()
    assert codes(plan_for(source)) == ["missing_native"]
    assert codes(plan_for(source, native_dir=None)) == ["missing_native"]


def test_t295_a_native_file_nobody_defers_is_a_finding(source: Path) -> None:
    (source / "agents-native" / "nexus.md").write_text(
        "---\nname: nexus\ndescription: x\n---\nHi\n"
    )
    assert codes(plan_for(source)) == ["orphan_native"]
    # Even for a harness that defers nothing.
    assert codes(plan_for(source, "pi")) == ["orphan_native"]


def test_t295_a_native_file_that_names_another_agent_is_refused(source: Path) -> None:
    native = source / "agents-native" / "ralph.md"
    native.write_bytes(native.read_bytes().replace(b"name: ralph", b"name: plan", 1))
    assert codes(plan_for(source)) == ["native_name_mismatch"]


def test_t295_a_native_file_that_is_no_agent_file_is_refused(source: Path) -> None:
    (source / "agents-native" / "ralph.md").write_text("no frontmatter\n")
    assert codes(plan_for(source)) != []
    assert plan_for(source).items == () or not plan_for(source).ok


def test_t291_a_symlinked_native_file_is_refused(source: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text("---\nname: ralph\ndescription: x\n---\nsecret\n")
    native = source / "agents-native" / "ralph.md"
    native.unlink()
    native.symlink_to(secret)
    plan = plan_for(source)
    assert not plan.ok
    assert all(b"secret" not in item.data for item in plan.items)


# -- the folder written into (T290-T293) ------------------------------------------------------


def test_t290_a_symlinked_dest_is_refused(source: Path, tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    dest = tmp_path / "dest"
    dest.symlink_to(real)
    with pytest.raises(SkillContainmentError) as caught:
        install_plan(plan_for(source), dest)
    assert caught.value.code == "symlink"
    assert list(real.iterdir()) == []


def test_t291_a_symlink_planted_in_dest_is_never_followed(source: Path, tmp_path: Path) -> None:
    dest = tmp_path / "dest"
    dest.mkdir()
    target = tmp_path / "bashrc"
    target.write_text("the user's shell")
    (dest / "plan.md").symlink_to(target)
    report = install_plan(plan_for(source), dest, force={"plan.md"})
    assert codes(report) == ["symlink"]
    assert target.read_text() == "the user's shell"
    assert (dest / "plan.md").is_symlink()
    assert sorted(os.listdir(dest)) == ["plan.md"]


def test_t291_a_symlinked_folder_in_dest_is_never_followed(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    (skills / "demo").mkdir(parents=True)
    (skills / "demo" / "SKILL.md").write_text("---\nname: demo\ndescription: A demo.\n---\nHi\n")
    agents = tmp_path / "agents"
    agents.mkdir()
    dest = tmp_path / "dest"
    dest.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (dest / "skills").symlink_to(elsewhere)
    plan = plan_install(agents, "pi", token_map=TOKENS, skills_dir=skills)
    assert plan.ok
    report = install_plan(plan, dest)
    assert codes(report) == ["symlink"]
    assert list(elsewhere.iterdir()) == []


def test_t292_a_file_planted_between_the_check_and_the_commit_is_kept(tmp_path: Path) -> None:
    """The race: nothing was at b.md when it was judged, and a file is there at commit.
    ``link`` refuses to replace it, and a.md, committed first, is undone."""
    dest = tmp_path / "dest"
    dest.mkdir()
    with InstallFolder(str(dest), create=False) as folder:
        staged = [
            folder.stage("a.md", b"a", replace=False),
            folder.stage("b.md", b"b", replace=False),
        ]
        (dest / "b.md").write_text("planted")
        with pytest.raises(SkillContainmentError) as caught:
            folder.commit(staged)
    assert caught.value.code == "exists"
    assert tree(dest) == {"b.md": b"planted"}


def test_t292_a_failed_commit_restores_the_files_it_replaced(tmp_path: Path) -> None:
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "a.md").write_text("old a")
    with InstallFolder(str(dest), create=False) as folder:
        staged = [
            folder.stage("a.md", b"new a", replace=True),
            folder.stage("b.md", b"b", replace=False),
        ]
        (dest / "b.md").write_text("planted")
        with pytest.raises(SkillContainmentError):
            folder.commit(staged)
    assert tree(dest) == {"a.md": b"old a", "b.md": b"planted"}


@pytest.mark.parametrize("name", ["Plan", "pl an", "plán", "-plan", "pla\u202en", "..."])
def test_t293_a_hostile_agent_folder_name_writes_nothing(
    source: Path, tmp_path: Path, name: str
) -> None:
    shutil.copytree(source / "agents" / "plan", source / "agents" / name)
    plan = plan_for(source)
    assert set(codes(plan)) & {"bad_agent_name", "hidden_character"}
    dest = tmp_path / "dest"
    assert not install_plan(plan, dest).ok
    assert not dest.exists()


@pytest.mark.parametrize("name", ["../../evil", "a/b", "evil\u202e", "Evil", ""])
def test_t293_a_hostile_name_in_frontmatter_never_names_a_file(
    source: Path, tmp_path: Path, name: str
) -> None:
    front = source / "agents" / "plan" / "claude" / "frontmatter.json"
    document = json.loads(front.read_text())
    document["name"] = name
    front.write_text(json.dumps(document))
    plan = plan_for(source)
    assert not plan.ok
    assert install_plan(plan, tmp_path / "dest").written == ()
    assert not (tmp_path / "dest").exists()
    assert not (tmp_path / "evil").exists()


def test_t293_two_agents_that_would_write_one_file_are_refused(source: Path) -> None:
    shutil.copytree(source / "agents" / "plan", source / "agents" / "plan-two")
    assert codes(plan_for(source)) == ["duplicate_output"]


# -- skills with tokens (pi) ----------------------------------------------------------------


def make_skill(root: Path, name: str, body: str, *, extra: dict[str, bytes] | None = None) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: Loads with tokens.\n---\n{body}"
    )
    for path, data in (extra or {}).items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_bytes(data)
    return folder


def test_skills_are_substituted_checked_and_installed(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    make_skill(
        skills,
        "plan",
        "Use {{TOOL:view}} on {{PATH:skills/plan/SKILL.md}}.{{TOOL:wait_for_agents}}\n",
        extra={"scripts/run.sh": b"echo {{TOOL:view}}\n"},
    )
    agents = tmp_path / "agents"
    agents.mkdir()
    plan = plan_install(agents, "copilot", token_map=TOKENS, skills_dir=skills)
    assert plan.ok, plan.findings
    items = {item.path: item.data for item in plan.items}
    root = b"~/.copilot/installed-plugins/_direct/agent-cortex"
    assert items["skills/plan/SKILL.md"].endswith(
        b"Use view on " + root + b"/skills/plan/SKILL.md.\n"
    )
    # Only SKILL.md is substituted; resources are copied byte for byte.
    assert items["skills/plan/scripts/run.sh"] == b"echo {{TOOL:view}}\n"
    assert [w.code for _, w in plan.warnings] == ["dropped_null_tool"]
    dest = tmp_path / "dest"
    assert install_plan(plan, dest).ok
    assert (dest / "skills" / "plan" / "scripts" / "run.sh").exists()
    report = uninstall(dest)
    assert report.ok
    assert sorted(os.listdir(dest)) == []


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ("{{SECTION:intro}}\n", "leftover_token"),
        ("{{TOOL:nano}}\n", "unknown_tool"),
        ("{{PATH:../etc}}\n", "path_not_relative"),
        ("{{TOOL:view\n}}\n", "leftover_token"),
    ],
)
def test_t296_a_skill_whose_tokens_do_not_resolve_is_refused(
    tmp_path: Path, body: str, code: str
) -> None:
    make_skill(tmp_path / "skills", "plan", body)
    (tmp_path / "agents").mkdir()
    plan = plan_install(tmp_path / "agents", "pi", token_map=TOKENS, skills_dir=tmp_path / "skills")
    assert codes(plan) == [code]
    assert not install_plan(plan, tmp_path / "dest").written


def test_t296_an_invalid_skill_is_refused_before_substitution(tmp_path: Path) -> None:
    folder = tmp_path / "skills" / "plan"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: other\ndescription: x\n---\nHi\n")
    (tmp_path / "agents").mkdir()
    plan = plan_install(tmp_path / "agents", "pi", token_map=TOKENS, skills_dir=tmp_path / "skills")
    assert not plan.ok


# -- the command line ---------------------------------------------------------------------------


def test_cli_install_check_uninstall(
    source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dest = tmp_path / "dest"
    args = ["--harness", "claude", "--token-map", str(source / "token-map.json")]
    assert main(["agent", "install", *args, "--dest", str(dest), str(source / "agents")]) == 0
    out = capsys.readouterr().out
    assert "wrote plan.md" in out
    assert "wrote ralph.md" in out
    check = ["agent", "install", "--check", *args, "--dest", str(dest), str(source / "agents")]
    assert main(check) == 0
    capsys.readouterr()
    (dest / "plan.md").write_text("edited")
    assert main([*check, "--format", "json"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert [(f["code"], f["kind"]) for f in document["findings"] if f["severity"] == "error"] == [
        ("edited", "drift")
    ]
    assert main(["agent", "uninstall", "--dest", str(dest), "--format", "json"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert [f["code"] for f in document["findings"]] == ["edited_since_install"]
    assert (dest / "plan.md").exists()
    (dest / "plan.md").unlink()
    assert main(["agent", "uninstall", "--dest", str(dest)]) == 0
    assert "removed ralph.md" in capsys.readouterr().out
    assert os.listdir(dest) == []


def test_cli_dry_run_shows_the_default_dest(
    source: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    argv = ["agent", "install", "--harness", "pi", "--dry-run", str(source / "agents")]
    assert main([*argv, "--token-map", str(source / "token-map.json")]) == 0
    out = capsys.readouterr().out
    assert f"-> {tmp_path / 'home' / '.pi' / 'agent' / 'agents'}" in out
    assert "would write ralph.md" in out
    assert not (tmp_path / "home").exists()


def test_cli_a_refusal_says_nothing_was_written(
    source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "plan.md").write_text("mine")
    argv = ["agent", "install", "--harness", "claude", "--dest", str(dest)]
    assert main([*argv, "--token-map", str(source / "token-map.json"), str(source / "agents")]) == 1
    out = capsys.readouterr().out
    assert "FAILED plan.md: conflict/not_ours" in out
    assert "nothing was written (all or nothing)" in out
    assert os.listdir(dest) == ["plan.md"]


# -- the folder's other failures --------------------------------------------------------------


def test_t291_a_fifo_at_a_target_name_is_refused_and_never_opened(
    source: Path, tmp_path: Path
) -> None:
    dest = tmp_path / "dest"
    dest.mkdir()
    os.mkfifo(dest / "plan.md")
    report = install_plan(plan_for(source), dest, force={"plan.md"})
    assert codes(report) == ["not_regular_file"]
    assert sorted(os.listdir(dest)) == ["plan.md"]


def test_t291_a_symlinked_manifest_is_refused(source: Path, tmp_path: Path) -> None:
    dest = tmp_path / "dest"
    dest.mkdir()
    elsewhere = tmp_path / "manifest.json"
    elsewhere.write_text("{}")
    (dest / MANIFEST_FILE).symlink_to(elsewhere)
    assert codes(install_plan(plan_for(source), dest)) == ["symlink"]
    assert codes(uninstall(dest)) == ["symlink"]
    assert codes(check_install(plan_for(source), dest)) == ["symlink"]
    assert elsewhere.read_text() == "{}"


def test_a_file_where_a_folder_goes_is_refused(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    make_skill(skills, "demo", "Hi\n")
    (tmp_path / "agents").mkdir()
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "skills").write_text("a file")
    plan = plan_install(tmp_path / "agents", "pi", token_map=TOKENS, skills_dir=skills)
    report = install_plan(plan, dest)
    assert codes(report) == ["not_a_directory"]
    assert tree(dest) == {"skills": b"a file"}


def test_a_dest_that_is_a_file_cannot_be_used(source: Path, tmp_path: Path) -> None:
    dest = tmp_path / "dest"
    dest.write_text("a file")
    with pytest.raises(SkillError) as caught:
        install_plan(plan_for(source), dest)
    assert caught.value.code in ("not_a_directory", "unreadable")
    with pytest.raises(SkillError):
        uninstall(dest)


def test_a_write_that_fails_while_staging_writes_nothing(source: Path, tmp_path: Path) -> None:
    dest = tmp_path / "dest"
    dest.mkdir()
    plan = plan_for(source)
    with file_size_limit(1024):
        report = install_plan(plan, dest)
    assert not report.ok
    assert report.written == ()
    assert report.findings[-1].message.endswith("nothing was written (the folder is as it was)")
    assert os.listdir(dest) == []


def test_install_makes_the_missing_parents_of_dest(source: Path, tmp_path: Path) -> None:
    dest = tmp_path / "home" / ".claude" / "agents"
    assert install_plan(plan_for(source), dest).ok
    assert sorted(os.listdir(dest)) == [MANIFEST_FILE, "plan.md", "ralph.md"]


def test_uninstall_keeps_a_folder_holding_the_users_files(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    make_skill(skills, "demo", "Hi\n", extra={"scripts/run.sh": b"echo\n"})
    (tmp_path / "agents").mkdir()
    dest = tmp_path / "dest"
    plan = plan_install(tmp_path / "agents", "pi", token_map=TOKENS, skills_dir=skills)
    assert install_plan(plan, dest).ok
    (dest / "skills" / "demo" / "notes.md").write_text("mine")
    dry = uninstall(dest, dry_run=True)
    assert dry.ok
    assert sorted(dry.removed) == ["skills/demo/SKILL.md", "skills/demo/scripts/run.sh"]
    assert (dest / "skills" / "demo" / "SKILL.md").exists()
    report = uninstall(dest)
    assert report.ok
    assert [(f.subject, f.code) for f in report.findings] == [
        ("skills/demo", "folder_kept"),
        ("skills", "folder_kept"),
    ]
    assert tree(dest) == {"skills/demo/notes.md": b"mine"}


def test_uninstall_notes_a_file_already_gone(source: Path, tmp_path: Path) -> None:
    dest = tmp_path / "dest"
    assert install_plan(plan_for(source), dest).ok
    (dest / "plan.md").unlink()
    report = uninstall(dest)
    assert report.ok
    assert [(f.subject, f.code, f.severity) for f in report.findings] == [
        ("plan.md", "missing_file", "note")
    ]
    assert os.listdir(dest) == []
    assert codes(uninstall(tmp_path / "nowhere")) == ["missing"]


def test_a_removed_file_already_gone_is_not_an_error(source: Path, tmp_path: Path) -> None:
    dest = tmp_path / "dest"
    assert install_plan(plan_for(source), dest).ok
    shutil.rmtree(source / "agents" / "plan")
    (dest / "plan.md").unlink()
    report = install_plan(plan_for(source), dest)
    assert report.ok
    assert sorted(os.listdir(dest)) == [MANIFEST_FILE, "ralph.md"]


def test_an_installed_file_that_is_now_a_folder_is_reported(source: Path, tmp_path: Path) -> None:
    dest = tmp_path / "dest"
    assert install_plan(plan_for(source), dest).ok
    (dest / "plan.md").unlink()
    (dest / "plan.md").mkdir()
    assert codes(check_install(plan_for(source), dest)) == ["not_regular_file"]
    assert codes(uninstall(dest)) == ["not_regular_file"]


def test_bad_arguments_are_usage_errors(source: Path, tmp_path: Path) -> None:
    with pytest.raises(SkillUsageError):
        install_plan("plan", tmp_path)  # type: ignore[arg-type]
    with pytest.raises(SkillUsageError):
        check_install("plan", tmp_path)  # type: ignore[arg-type]
    with pytest.raises(SkillUsageError):
        plan_install(source / "agents", "claude", token_map=None)  # type: ignore[arg-type]
    with pytest.raises(SkillUsageError):
        plan_install(source / "agents", "Claude", token_map=TOKENS)
    with pytest.raises(SkillUsageError):
        plan_install(source / "agents", "gemini", token_map=TOKENS)


def test_cli_check_refuses_dry_run_and_force(
    source: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["agent", "install", "--harness", "pi", "--check", "--dry-run", str(source / "agents")]
    assert main(argv) == 2
    assert "--check writes nothing" in capsys.readouterr().err


def test_cli_operator_mistakes_exit_2(
    source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["agent", "install", "--harness", "pi", "--dest", str(tmp_path / "d")]
    assert main([*base, "--token-map", str(tmp_path / "none.json"), str(source / "agents")]) == 2
    (tmp_path / "bad.json").write_text('{"version": 9, "harnesses": ["pi"]}')
    assert main([*base, "--token-map", str(tmp_path / "bad.json"), str(source / "agents")]) == 2
    assert main([*base, str(tmp_path / "no-agents")]) == 2
    link = tmp_path / "link"
    link.symlink_to(tmp_path)
    argv = ["agent", "uninstall", "--dest", str(link)]
    assert main(argv) == 2
    capsys.readouterr()


def test_cli_native_and_skills_options(
    source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    skills = tmp_path / "skills"
    make_skill(skills, "demo", "Use {{TOOL:view}}.\n")
    elsewhere = tmp_path / "natives"
    shutil.move(str(source / "agents-native"), elsewhere)
    argv = ["agent", "install", "--harness", "claude", "--dest", str(tmp_path / "d")]
    argv += ["--token-map", str(source / "token-map.json"), "--skills", str(skills)]
    assert main([*argv, str(source / "agents")]) == 1
    assert "missing_native" in capsys.readouterr().out
    assert (
        main([*argv, "--native", str(elsewhere), "--format", "json", str(source / "agents")]) == 0
    )
    document = json.loads(capsys.readouterr().out)
    assert document["written"] == ["plan.md", "ralph.md", "skills/demo/SKILL.md"]
    assert (tmp_path / "d" / "skills" / "demo" / "SKILL.md").read_text().endswith("Use Read.\n")
    assert main(["agent", "uninstall", "--dest", str(tmp_path / "d"), "--dry-run"]) == 0
    assert "would remove plan.md" in capsys.readouterr().out


def test_t296_a_skill_that_no_longer_checks_after_substitution_is_refused(
    tmp_path: Path,
) -> None:
    # The description is at its limit before substitution, and over it after.
    skills = tmp_path / "skills"
    folder = skills / "plan"
    folder.mkdir(parents=True)
    description = "x" * (1024 - len("{{PATH:skills_dir}}")) + "{{PATH:skills_dir}}"
    (folder / "SKILL.md").write_text(f"---\nname: plan\ndescription: {description}\n---\nHi\n")
    (tmp_path / "agents").mkdir()
    plan = plan_install(tmp_path / "agents", "pi", token_map=TOKENS, skills_dir=skills)
    assert codes(plan) == ["skill_invalid_after_substitution"]


def test_entries_that_are_not_skills_or_native_agents_are_reported(
    source: Path, tmp_path: Path
) -> None:
    skills = tmp_path / "skills"
    make_skill(skills, "demo", "Hi\n")
    (skills / "README.md").write_text("not a skill")
    (source / "agents-native" / "notes.txt").write_text("not an agent")
    plan = plan_for(source, skills_dir=skills)
    assert [(f.subject, f.code, f.severity) for f in plan.findings if f.code != "deferred"] == [
        ("agents-native/notes.txt", "unexpected_native_entry", "error"),
        ("README.md", "not_a_skill", "note"),
    ]


@pytest.mark.parametrize(
    "change",
    [
        {"format": "other"},
        {"files": {}},
        {"folders": "skills"},
        {"folders": ["../up"]},
        {"harness": 1},
        {"files": [{"path": "a.md", "sha256": "0" * 64, "kind": "script"}]},
        {
            "files": [
                {"path": "a.md", "sha256": "0" * 64, "kind": "agent"},
                {"path": "a.md", "sha256": "1" * 64, "kind": "agent"},
            ]
        },
        {"files": [{"path": 7, "sha256": "0" * 64, "kind": "agent"}]},
        {"files": [{"path": "a\u202e.md", "sha256": "0" * 64, "kind": "agent"}]},
    ],
)
def test_t294_a_manifest_outside_its_schema_is_refused(
    source: Path, tmp_path: Path, change: dict[str, Any]
) -> None:
    dest = tmp_path / "dest"
    assert install_plan(plan_for(source), dest).ok
    manifest = json.loads((dest / MANIFEST_FILE).read_text())
    manifest.update(change)
    (dest / MANIFEST_FILE).write_text(json.dumps(manifest))
    assert codes(uninstall(dest)) == ["manifest_invalid"]
    assert codes(check_install(plan_for(source), dest)) == ["manifest_invalid"]


def test_t291_a_symlinked_native_folder_beside_the_agents_is_refused(
    source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    elsewhere = tmp_path / "natives"
    shutil.move(str(source / "agents-native"), elsewhere)
    (source / "agents-native").symlink_to(elsewhere)
    argv = ["agent", "install", "--harness", "claude", "--dest", str(tmp_path / "d")]
    assert main([*argv, "--token-map", str(source / "token-map.json"), str(source / "agents")]) == 2
    assert "symlink" in capsys.readouterr().err
    assert not (tmp_path / "d").exists()
