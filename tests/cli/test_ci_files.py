"""The files that put skillguard in someone else's CI: ``action.yml``, the composite
GitHub Action (its ``Validate`` step run by bash as the runner runs it, with the
skillguard of this environment standing in for the one the ``Install`` step builds),
and ``.pre-commit-hooks.yaml`` (which changed files run the hook; ``tox -e precommit``
runs the hook itself).

Test names that start with ``test_tN_`` stop the threat ``TN`` of threat-model.md.
"""

from __future__ import annotations

import json
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


def run_validate(
    tmp_path: Path,
    *,
    paths: str,
    args: str = "",
    form: str = "github",
    fail_on: str = "error",
    sarif_file: str = "skillguard.sarif",
) -> subprocess.CompletedProcess[str]:
    """The Validate step's script, run as the runner does (bash -e -o pipefail), with
    the inputs in the environment exactly as the step's ``env:`` maps them. The step's
    outputs are read back from ``$GITHUB_OUTPUT`` by ``outputs``."""
    validate = step("Validate")
    assert validate["env"] == {
        "SKILLGUARD_PATHS": "${{ inputs.paths }}",
        "SKILLGUARD_PROFILE": "${{ inputs.profile }}",
        "SKILLGUARD_FORMAT": "${{ inputs.format }}",
        "SKILLGUARD_SARIF_FILE": "${{ inputs.sarif-file }}",
        "SKILLGUARD_FAIL_ON": "${{ inputs.fail-on }}",
        "SKILLGUARD_ARGS": "${{ inputs.args }}",
    }
    runner_temp = tmp_path / "runner-temp"
    bin_dir = runner_temp / "skillguard-venv" / "bin"
    if not bin_dir.exists():
        bin_dir.mkdir(parents=True)
        (bin_dir / "skillguard").symlink_to(Path(sys.executable).parent / "skillguard")
        (bin_dir / "python").symlink_to(sys.executable)
    script = tmp_path / "validate.sh"
    script.write_text(validate["run"])
    output = tmp_path / "github-output"
    output.write_text("")
    env = {
        "PATH": "/usr/bin:/bin",
        "RUNNER_TEMP": str(runner_temp),
        "GITHUB_OUTPUT": str(output),
        "SKILLGUARD_PATHS": paths,
        "SKILLGUARD_PROFILE": "strict",
        "SKILLGUARD_FORMAT": form,
        "SKILLGUARD_SARIF_FILE": sarif_file,
        "SKILLGUARD_FAIL_ON": fail_on,
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


def outputs(tmp_path: Path) -> dict[str, str]:
    """The outputs the last ``run_validate`` wrote to ``$GITHUB_OUTPUT``."""
    lines = (tmp_path / "github-output").read_text().splitlines()
    return dict(line.split("=", 1) for line in lines)


def test_t110_no_input_is_spliced_into_a_script() -> None:
    for each in action()["runs"]["steps"]:
        assert "${{" not in each.get("run", ""), each.get("name")


def test_t110_every_action_the_step_uses_is_pinned_to_a_commit() -> None:
    # A tag can be moved to other code by whoever controls that repository; a full
    # commit SHA cannot. Every "uses:" of the file, wherever it is, counts.
    text = (ROOT / "action.yml").read_text()
    uses = re.findall(r"^\s*(?:-\s*)?uses:\s*(\S+)(.*)$", text, flags=re.MULTILINE)
    steps = [each["uses"] for each in action()["runs"]["steps"] if "uses" in each]
    assert uses
    assert [reference for reference, _ in uses] == steps
    for reference, comment in uses:
        ref = reference.rpartition("@")[2]
        assert re.fullmatch(r"[0-9a-f]{40}", ref), reference
        # The release it is, for a reader and for update tools.
        assert re.fullmatch(r"\s*# v[0-9]+\.[0-9]+\.[0-9]+", comment), reference


def test_t271_setup_python_runs_on_node_24_and_leaves_the_callers_python() -> None:
    # actions/setup-python v7.0.0 declares "using: node24"; before v6 it ran on Node 20,
    # which the runner no longer starts by default. update-environment false keeps the
    # Python it installs off the job's PATH: the caller's later steps keep their own.
    [setup] = [each for each in action()["runs"]["steps"] if "uses" in each]
    assert setup["uses"] == "actions/setup-python@5fda3b95a4ea91299a34e894583c3862153e4b97"
    assert setup["with"]["update-environment"] is False
    assert setup["id"] == "python"
    install = step("Install skillguard")
    assert install["env"] == {"SKILLGUARD_PYTHON": "${{ steps.python.outputs.python-path }}"}
    assert (
        'venv="$RUNNER_TEMP/skillguard-venv"\n"$SKILLGUARD_PYTHON" -m venv "$venv"'
        in (install["run"])
    )


def _requirement_lines() -> list[str]:
    text = (ROOT / "action-requirements.txt").read_text()
    joined = re.sub(r"\\\n\s*", " ", text)
    return [line for line in joined.splitlines() if line and not line.lstrip().startswith("#")]


def test_t271_every_package_the_action_installs_is_pinned_with_its_hashes() -> None:
    install = step("Install skillguard")["run"]
    # Every package from the index: hashed, wheels only (an sdist would run its own
    # build with unhashed build tools); skillguard itself with no index at all.
    assert (
        '--require-hashes --only-binary :all: -r "$GITHUB_ACTION_PATH/action-requirements.txt"'
        in install
    )
    assert '--no-index --no-deps --no-build-isolation "$GITHUB_ACTION_PATH"' in install
    assert install.count("pip install") == 2
    pinned: dict[str, str] = {}
    for line in _requirement_lines():
        name, _, rest = line.partition("==")
        assert rest, line
        version = rest.split(";")[0].split()[0]
        hashes = re.findall(r"--hash=sha256:([0-9a-f]{64})", rest)
        assert hashes, line
        pinned[name.strip()] = version
    # Exactly what pyproject.toml asks for at run time, and the backend that builds it,
    # each at a version that pyproject.toml accepts.
    pyproject = (ROOT / "pyproject.toml").read_text()
    runtime = re.search(r"^dependencies = \[(.*?)^\]", pyproject, re.MULTILINE | re.DOTALL)
    build = re.search(r"^requires = \[(.*?)\]", pyproject, re.MULTILINE)
    assert runtime is not None
    assert build is not None
    wanted = re.findall(r'^\s*"([A-Za-z0-9._-]+)>=([0-9.]+)', runtime.group(1), re.MULTILINE)
    wanted += re.findall(r'"([A-Za-z0-9._-]+)>=([0-9.]+)"', build.group(1))
    names = {re.sub(r"[._]", "-", name).lower(): floor for name, floor in wanted}
    # Plus what a dependency asks for on the oldest declared Python only: structlog
    # needs typing-extensions below 3.11.
    assert set(pinned) - set(names) == {"typing-extensions"}
    assert set(names) <= set(pinned)
    for name, floor in names.items():
        have = tuple(int(part) for part in pinned[name].split("."))
        assert have >= tuple(int(part) for part in floor.split(".")), name


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


# A skill with one warning and no error: an unknown field is kept as inert data.
WARNED = "---\nname: {name}\ndescription: A skill.\nhomepage: x\n---\nBody.\n"
REPOSITORIES = {"clean": (GOOD,), "warned": (GOOD, WARNED), "failed": (GOOD, WARNED, BAD)}
FINDINGS = {"clean": ("0", "0"), "warned": ("1", "0"), "failed": ("2", "1")}
# Whether the step fails, for each fail-on and repository (format github).
FAILS = {
    "error": {"clean": False, "warned": False, "failed": True},
    "warning": {"clean": False, "warned": True, "failed": True},
    "never": {"clean": False, "warned": False, "failed": False},
}


def _repository(tmp_path: Path, state: str) -> None:
    for position, text in enumerate(REPOSITORIES[state]):
        write_skill(tmp_path / "repo" / "skills" / f"skill-{position}", text)


@pytest.mark.parametrize("state", sorted(REPOSITORIES))
@pytest.mark.parametrize("fail_on", sorted(FAILS))
@pytest.mark.parametrize("form", ["github", "sarif"])
def test_t272_each_input_combination_fails_and_reports_as_documented(
    tmp_path: Path, form: str, fail_on: str, state: str
) -> None:
    _repository(tmp_path, state)
    completed = run_validate(
        tmp_path, paths="skills", form=form, fail_on=fail_on, sarif_file="out/scan.sarif"
    )
    findings, errors = FINDINGS[state]
    got = outputs(tmp_path)
    assert (got["findings"], got["errors"]) == (findings, errors), completed.stdout
    sarif = tmp_path / "repo" / "out" / "scan.sarif"
    if form == "sarif":
        # The log is written and the step passes whatever was found, so that the
        # upload step after it runs; the job fails later, from the outputs.
        assert completed.returncode == 0, completed.stdout + completed.stderr
        assert got["sarif-file"] == "out/scan.sarif"
        results = json.loads(sarif.read_text())["runs"][0]["results"]
        assert len(results) == int(findings)
        summary = f"skillguard: {findings} findings ({errors} errors) written to out/scan.sarif"
        assert completed.stdout == f"{summary}\n"
        return
    assert not sarif.exists()
    assert got["sarif-file"] == ""
    assert (completed.returncode != 0) is FAILS[fail_on][state], completed.stdout
    annotations = [line for line in completed.stdout.splitlines() if line.startswith("::")]
    assert len(annotations) == int(findings)
    assert completed.stdout.endswith(" skipped\n")


@pytest.mark.parametrize(
    ("form", "fail_on", "args"),
    [("xml", "error", ""), ("github", "always", ""), ("sarif", "never", "--no-such-option")],
)
def test_t272_a_step_that_cannot_check_fails_whatever_fail_on_says(
    tmp_path: Path, form: str, fail_on: str, args: str
) -> None:
    _repository(tmp_path, "clean")
    completed = run_validate(tmp_path, paths="skills", form=form, fail_on=fail_on, args=args)
    assert completed.returncode == 2, completed.stdout + completed.stderr
    assert "::error title=skillguard::" in completed.stdout
    assert "findings=" not in (tmp_path / "github-output").read_text()


def test_t272_the_counts_are_not_fooled_by_a_hostile_name(tmp_path: Path) -> None:
    # A folder name holding a newline and "::error " would start a line of its own if
    # it were printed raw; annotations escape it, so the count stays one per finding.
    _repository(tmp_path, "warned")
    write_skill(tmp_path / "repo" / "skills" / "x\n::error file=a::b\n::warning ", BAD)
    completed = run_validate(tmp_path, paths="skills", fail_on="never")
    got = outputs(tmp_path)
    annotations = [line for line in completed.stdout.splitlines() if line.startswith("::")]
    assert completed.returncode == 0
    assert (got["findings"], got["errors"]) == (str(len(annotations)), "1")


@pytest.mark.parametrize("name", ["a.sarif\nerrors=0", "a.sarif\rerrors=0"])
def test_t272_a_sarif_file_name_cannot_add_outputs(tmp_path: Path, name: str) -> None:
    # The findings and errors outputs gate the job after the upload: a sarif-file whose
    # line break wrote "errors=0" after the real count would turn the gate off.
    _repository(tmp_path, "failed")
    completed = run_validate(tmp_path, paths="skills", form="sarif", sarif_file=name)
    assert completed.returncode == 2
    assert "sarif-file holds a line break" in completed.stdout
    assert (tmp_path / "github-output").read_text() == ""
