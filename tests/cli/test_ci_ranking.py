"""What code scanning and a report-only job need from ``validate``: SARIF rules ranked as
security alerts, results that keep their fingerprint across runs, overlapping PATHs
reported once, and ``--exit-zero``.

Test names that start with ``test_tN_`` stop the threat ``TN`` of threat-model.md.
"""

from __future__ import annotations

import io
import json
import os
import re
from typing import TYPE_CHECKING, Any

import pytest

from skillguard._cli.ci import FINGERPRINT_KEY, RULE_RANK, RULE_TEXT, SarifWriter
from skillguard._cli.main import main
from tests.cli.test_ci import _schema_validator, parse_commands

if TYPE_CHECKING:
    from pathlib import Path

GOOD = "---\nname: {name}\ndescription: A good skill.\n---\nBody.\n"
BAD = "---\nname: {name}\ndescription: ''\n---\nBody.\n"
# Three independent errors, and room above them for lines to be added.
SEVERAL = "---\n{pad}name: Not_A_Name\ndescription: ''\ncompatibility: {long}\n---\nBody.\n"


def write_skill(folder: Path, text: str, **more: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(text.format(name=folder.name, **more))
    return folder


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["validate", *args])
    return code, capsys.readouterr().out


def sarif(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    _, out = run(capsys, "--format", "sarif", *args)
    document: dict[str, Any] = json.loads(out)
    assert list(_schema_validator().iter_errors(document)) == []
    return document


def test_every_rule_is_ranked_and_tagged_as_security() -> None:
    assert set(RULE_RANK) == set(RULE_TEXT)
    for code, (severity, cwe) in RULE_RANK.items():
        assert 0.1 <= severity <= 10.0, code
        assert cwe is None or re.fullmatch(r"CWE-[0-9]+", cwe), code


@pytest.mark.parametrize(
    ("code", "cwe"),
    [
        ("symlink", "CWE-59"),
        ("hardlink", "CWE-59"),
        ("path_escape", "CWE-22"),
        ("too_large", "CWE-400"),
        ("too_many_entries", "CWE-400"),
        ("hidden_character", "CWE-116"),
        ("forbidden_character", "CWE-116"),
        ("yaml_alias", "CWE-776"),
        ("duplicate_key", "CWE-436"),
    ],
)
def test_t273_sarif_rules_carry_security_severity_and_cwe(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, code: str, cwe: str
) -> None:
    write_skill(tmp_path / "demo", GOOD)
    rules = sarif(capsys, str(tmp_path))["runs"][0]["tool"]["driver"]["rules"]
    [rule] = [rule for rule in rules if rule["id"] == code]
    properties = rule["properties"]
    # A string of a number, as code scanning reads it; 7.0 and up is "high".
    assert re.fullmatch(r"[0-9]+\.[0-9]", properties["security-severity"])
    assert properties["tags"] == ["security", f"external/cwe/{cwe.lower()}", cwe]
    if code in ("symlink", "path_escape", "hidden_character"):
        assert float(properties["security-severity"]) >= 7.0
    for each in rules:
        assert "security" in each["properties"]["tags"]


def _fingerprints(document: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [
        (
            result["ruleId"],
            result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            result["partialFingerprints"][FINGERPRINT_KEY],
        )
        for result in document["runs"][0]["results"]
    ]


def _lines(document: dict[str, Any]) -> list[int | None]:
    return [
        result["locations"][0]["physicalLocation"].get("region", {}).get("startLine")
        for result in document["runs"][0]["results"]
    ]


def test_t274_fingerprints_stay_when_lines_move(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write_skill(tmp_path / "skills" / "demo", SEVERAL, pad="", long="x" * 600)
    (tmp_path / "skills" / "demo" / "scripts").mkdir()
    os.symlink("/etc/passwd", tmp_path / "skills" / "demo" / "scripts" / "planted")
    first = sarif(capsys, "skills")
    # Two comment lines added above every finding: each moves, none changes.
    write_skill(tmp_path / "skills" / "demo", SEVERAL, pad="# one\n# two\n", long="x" * 600)
    second = sarif(capsys, "skills")
    before, after = _fingerprints(first), _fingerprints(second)
    assert [rule for rule, _, _ in before] == [
        "invalid_name",
        "empty_field",
        "field_too_long",
        "symlink",
    ]
    assert [line + 2 if line else None for line in _lines(first)] == _lines(second)
    assert before == after
    prints = [each for _, _, each in after]
    assert len(prints) == len(set(prints))
    # And the same tree gives the same fingerprints, run after run.
    assert _fingerprints(sarif(capsys, "skills")) == after


def test_t274_identical_findings_in_one_file_have_fingerprints_of_their_own() -> None:
    out = io.StringIO()
    writer = SarifWriter(out, version="0")
    same = {"code": "empty_field", "message": "line 3: blank", "file": "a/SKILL.md", "line": 3}
    moved = {**same, "message": "line 9: blank", "line": 9}
    writer.result({"path": "a", "errors": [same, moved], "warnings": []})
    writer.result({"path": "a", "errors": [moved], "warnings": []})
    writer.close()
    first, second, again = (
        result["partialFingerprints"][FINGERPRINT_KEY]
        for result in json.loads(out.getvalue())["runs"][0]["results"]
    )
    # Told apart by their order in the file, not by their line: the first of a run of
    # identical findings keeps its fingerprint wherever it moves.
    assert first != second
    assert again == first


def test_t274_a_fingerprint_names_path_and_rule(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write_skill(tmp_path / "one", BAD)
    write_skill(tmp_path / "two", BAD)
    [(_, _, one), (_, _, two)] = _fingerprints(sarif(capsys, "one", "two"))
    # The same message at the same line of two files: two findings, two fingerprints.
    assert one != two


def _tree(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    write_skill(root / "skills" / "good", GOOD)
    write_skill(root / "skills" / "bad", BAD)
    (root / "skills" / "bad" / "scripts").mkdir()
    (root / "skills" / "bad" / "scripts" / "planted").symlink_to("/etc/passwd")
    write_skill(root / "skills" / "good" / "nested", GOOD)
    return root


@pytest.mark.parametrize(
    "paths",
    [
        [".", "skills"],
        ["skills", "."],
        [".", "skills/bad"],
        [".", "skills/bad/SKILL.md", "./skills/bad/"],
        ["skills", "skills"],
        [".", "alias"],
    ],
)
def test_t270_overlapping_paths_report_each_finding_once(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    paths: list[str],
) -> None:
    root = _tree(tmp_path)
    monkeypatch.chdir(root)
    alias = tmp_path / "alias-of-skills"
    alias.symlink_to(root / "skills")
    paths = [str(alias) if path == "alias" else path for path in paths]
    code, out = run(capsys, "--format", "github", *paths)
    assert code == 1
    commands = [
        (command["name"], command["file"], command["title"]) for command in parse_commands(out)
    ]
    # skills/bad: one blank description and one planted link; skills/good/nested is a
    # SKILL.md below a skill folder, skipped once.
    assert sorted(commands) == [
        ("error", "skills/bad/SKILL.md", "skillguard empty_field"),
        ("error", "skills/bad/scripts/planted", "skillguard symlink"),
        ("warning", "skills/good/nested", "skillguard nested_skill"),
    ], out
    assert out.endswith("2 checked, 1 ok, 1 failed, 1 skipped\n")


def test_t270_a_link_to_a_skill_folder_given_as_a_path_is_checked_under_its_name(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The link found by searching "." is refused (a loader never follows it); the same
    # link given as a PATH is the operator's alias, resolved as given and checked as a
    # skill, whose name must match the link's name: three findings, none a duplicate.
    root = _tree(tmp_path)
    monkeypatch.chdir(root)
    (root / "other").symlink_to("skills/good")
    code, out = run(capsys, "--format", "github", ".", "other", "skills/good")
    assert code == 1
    titles = sorted((c["file"], c["title"]) for c in parse_commands(out))
    assert ("other", "skillguard symlink") in titles
    assert ("other/SKILL.md", "skillguard name_mismatch") in titles
    assert [file for file, _ in titles].count("skills/good/SKILL.md") == 0


def test_exit_zero_prints_every_finding_and_exits_0(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    root = _tree(tmp_path)
    for form in ("text", "json", "github", "sarif"):
        failing, out = run(capsys, "--format", form, "--fail-on-skipped", str(root))
        code, report = run(capsys, "--format", form, "--fail-on-skipped", "--exit-zero", str(root))
        assert (failing, code) == (1, 0)
        assert report == out
    # A run that could not start is still an error.
    assert main(["validate", "--exit-zero", "--max-depth", "-1", str(root)]) == 2


def test_t270_a_skill_folder_named_as_dot_and_by_its_path_is_one_skill(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = write_skill(tmp_path / "demo", BAD)
    monkeypatch.chdir(folder)
    code, out = run(capsys, "--format", "json", ".", str(folder), "../demo", "./SKILL.md")
    assert code == 1
    document = json.loads(out)
    assert [result["path"] for result in document["results"]] == ["."]
    assert document["summary"] == {"checked": 1, "ok": 0, "failed": 1, "skipped": 0}
