"""The files that put skillguard in someone else's CI: ``action.yml``, the composite
GitHub Action (its ``Validate`` step run by bash as the runner runs it, with the
skillguard of this environment standing in for the one the ``Install`` step builds),
and ``.pre-commit-hooks.yaml`` (which changed files run the hook; ``tox -e precommit``
runs the hook itself).

Test names that start with ``test_tN_`` stop the threat ``TN`` of threat-model.md.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

ROOT = Path(__file__).resolve().parents[2]
GOOD = "---\nname: {name}\ndescription: A good skill.\n---\nBody.\n"
BAD = "---\nname: {name}\ndescription: ''\n---\nBody.\n"


def read_yaml(name: str) -> Any:
    # Both files are skillguard's own, not hostile input: ruamel reads them as written
    # (the runner and pre-commit read them with full YAML parsers too).
    return YAML(typ="safe", pure=True).load((ROOT / name).read_text())


def action() -> dict[str, Any]:
    document: dict[str, Any] = read_yaml("action.yml")
    return document


def hook() -> dict[str, Any]:
    [settings] = read_yaml(".pre-commit-hooks.yaml")
    return dict(settings)


def step(name: str) -> dict[str, Any]:
    return next(s for s in action()["runs"]["steps"] if s.get("name") == name)


def write_skill(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(text.format(name=folder.name))
    return folder


def run_validate(tmp_path: Path, *, paths: str, args: str = "") -> subprocess.CompletedProcess[str]:
    """The Validate step's script, run as the runner does (bash -e -o pipefail), with
    the inputs in the environment exactly as the step's ``env:`` maps them."""
    validate = step("Validate")
    assert validate["env"] == {
        "SKILLGUARD_PATHS": "${{ inputs.paths }}",
        "SKILLGUARD_PROFILE": "${{ inputs.profile }}",
        "SKILLGUARD_ARGS": "${{ inputs.args }}",
    }
    runner_temp = tmp_path / "runner-temp"
    bin_dir = runner_temp / "skillguard-venv" / "bin"
    if not bin_dir.exists():
        bin_dir.mkdir(parents=True)
        (bin_dir / "skillguard").symlink_to(Path(sys.executable).parent / "skillguard")
    script = tmp_path / "validate.sh"
    script.write_text(validate["run"])
    env = {
        "PATH": "/usr/bin:/bin",
        "RUNNER_TEMP": str(runner_temp),
        "SKILLGUARD_PATHS": paths,
        "SKILLGUARD_PROFILE": "strict",
        "SKILLGUARD_ARGS": args,
    }
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],  # noqa: S607
        cwd=tmp_path / "repo",
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def test_t110_no_input_is_spliced_into_a_script() -> None:
    for each in action()["runs"]["steps"]:
        assert "${{" not in each.get("run", ""), each.get("name")


def test_t110_every_action_the_step_uses_is_pinned_to_a_commit() -> None:
    # A tag can be moved to other code by whoever controls that repository; a full
    # commit SHA cannot.
    uses = [each["uses"] for each in action()["runs"]["steps"] if "uses" in each]
    assert uses
    for reference in uses:
        ref = reference.rpartition("@")[2]
        assert re.fullmatch(r"[0-9a-f]{40}", ref), reference


@pytest.mark.parametrize("separator", ["\n", " \n  ", "\t"])
def test_t110_every_line_of_a_multi_line_paths_input_is_checked(
    tmp_path: Path, separator: str
) -> None:
    repo = tmp_path / "repo"
    write_skill(repo / "skills" / "good", GOOD)
    write_skill(repo / ".claude" / "skills" / "bad", BAD)
    # YAML's "paths: |" gives one path per line, and a final newline.
    paths = f"skills{separator}.claude/skills\n"
    completed = run_validate(tmp_path, paths=paths, args="--fail-on-skipped\n--no-warnings")
    assert completed.returncode == 1, completed.stdout
    assert "::error file=.claude/skills/bad/SKILL.md,line=3" in completed.stdout
    assert completed.stdout.endswith("2 checked, 1 ok, 1 failed, 0 skipped\n")


def test_t110_a_crafted_input_stays_data(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    write_skill(repo / "good", GOOD)
    completed = run_validate(
        tmp_path, paths='good $(touch pwned) `touch pwned` "; touch pwned" *', args="--quiet"
    )
    assert completed.returncode == 1
    assert not (repo / "pwned").exists()
    assert not (tmp_path / "pwned").exists()
    # Each word reached validate as it was written, never globbed or expanded.
    assert "file=*," in completed.stdout
    assert "file=$(touch," in completed.stdout


def test_the_action_passes_a_clean_repository(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    write_skill(repo / "skills" / "good", GOOD)
    completed = run_validate(tmp_path, paths=".")
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert completed.stdout == "skillguard: 1 checked, 1 ok, 0 failed, 0 skipped\n"


@pytest.mark.parametrize(
    ("changed", "runs"),
    [
        ("skills/demo/SKILL.md", True),
        ("skills/demo/scripts/planted", True),
        (".claude/skills/demo/references/guide.md", True),
        (".github/skills/demo/assets/logo.png", True),
        # A repository that is one skill keeps its resource folders at the top.
        ("scripts/planted", True),
        ("references/guide.md", True),
        ("assets/logo.png", True),
        ("tools/misnamed/Skill.md", True),
        ("tools/misnamed/SKILL.MD", True),
        ("SKILL.md", True),
        ("README.md", False),
        ("src/app.py", False),
        ("myscripts/run.sh", False),
    ],
)
def test_t111_the_hook_runs_for_every_change_to_a_skill(changed: str, runs: bool) -> None:
    settings = hook()
    assert settings["id"] == "skillguard-validate"
    assert settings["pass_filenames"] is False
    assert settings["types_or"] == ["file", "symlink"]
    assert (re.search(settings["files"], changed) is not None) is runs


def test_t110_the_action_annotates_files_as_the_pull_request_names_them(tmp_path: Path) -> None:
    # paths defaults to ".": an annotation for ./skills/... is not shown on the diff
    # (GitHub matches the file from the repository's top), so no path starts with ./.
    repo = tmp_path / "repo"
    write_skill(repo / ".claude" / "skills" / "bad", BAD)
    folder = write_skill(repo / "skills" / "demo", GOOD)
    (folder / "scripts").mkdir()
    (folder / "scripts" / "planted").symlink_to("/etc/passwd")
    for paths in (".", "./", "./skills ./.claude/skills", "./.claude/skills/bad/SKILL.md"):
        completed = run_validate(tmp_path, paths=paths)
        assert completed.returncode == 1
        files = re.findall(r"^::error file=([^,]*),", completed.stdout, flags=re.MULTILINE)
        assert files, completed.stdout
        assert not [file for file in files if file.startswith(("./", "/"))]
        assert ".claude/skills/bad/SKILL.md" in files
