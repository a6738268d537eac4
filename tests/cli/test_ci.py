"""``validate --format github`` and ``--format sarif``: parsed back, asserted on fields."""

from __future__ import annotations

import importlib
import io
import json
import os
import re
import urllib.parse
from pathlib import Path
from typing import Any

import pytest

from skillguard._cli.ci import RULE_TEXT, SarifWriter, github_escape
from skillguard._cli.main import main
from tests.steps import Meter, grows_linearly, meter_module, python_steps

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "skills"
# A workflow command as GitHub's runner reads one line: ::name props::message
_COMMAND = re.compile(r"::(?P<name>[a-z-]+) (?P<props>[^:]*)::(?P<message>.*)")


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["validate", *args])
    return code, capsys.readouterr().out


def github_unescape(text: str) -> str:
    for escaped, raw in (("%2C", ","), ("%3A", ":"), ("%0A", "\n"), ("%0D", "\r"), ("%25", "%")):
        text = text.replace(escaped, raw)
    return text


def parse_commands(out: str) -> list[dict[str, Any]]:
    """Every workflow command in *out*, as the runner would decode it."""
    commands = []
    for line in out.splitlines():
        if not line.startswith("::"):
            continue
        match = _COMMAND.fullmatch(line)
        assert match is not None, line
        props = dict(prop.split("=", 1) for prop in match["props"].split(","))
        commands.append(
            {
                "name": match["name"],
                **{key: github_unescape(value) for key, value in props.items()},
                "message": github_unescape(match["message"]),
            }
        )
    return commands


def write_skill(folder: Path, text: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(text)


def test_github_annotations_point_at_each_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "--format", "github", str(EXAMPLES))
    assert code == 1
    commands = parse_commands(out)
    several = [c for c in commands if "broken-several-fields" in c["file"]]
    assert [(c["name"], c["title"], c["line"], c["col"]) for c in several] == [
        ("error", "skillguard invalid_name", "2", "1"),
        ("error", "skillguard empty_field", "3", "1"),
        ("error", "skillguard field_too_long", "4", "1"),
    ]
    assert all(c["file"].endswith("SKILL.md") for c in several)
    assert out.splitlines()[-1].startswith("skillguard: 11 checked, 3 ok, 8 failed")


def test_github_warnings_are_warning_commands(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    write_skill(tmp_path / "x", "---\nname: x\ndescription: d\nauthor: me\nhome: h\n---\n")
    code, out = run(capsys, "--format", "github", str(tmp_path))
    assert code == 0
    [command] = parse_commands(out)
    assert command["name"] == "warning"
    assert command["title"] == "skillguard unknown_field"
    assert command["line"] == "4"
    assert command["message"] == "unknown fields 'author', 'home' kept as inert data"


@pytest.mark.parametrize(
    "name",
    [
        "a,line=1::x",
        "title=forged",
        "new\nline::add-mask::secret",
        "cr\rhere",
        "pct%0Aforged",
        "colon:comma,",
        "stop\n::stop-commands::token",
    ],
)
def test_t91_hostile_names_stay_inside_one_annotation(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str
) -> None:
    write_skill(tmp_path / name, "---\nname: other\ndescription: d\n---\n")
    code, out = run(capsys, "--format", "github", str(tmp_path))
    assert code == 1
    lines = out.splitlines()
    assert len(lines) == 2  # one annotation, one summary: no line of the name's own
    [command] = parse_commands(out)
    assert set(command) - {"line", "col"} == {"name", "file", "title", "message"}
    # A name with a control character is refused as a name (no file is read in it).
    assert command["title"] in {"skillguard name_mismatch", "skillguard bad_name"}
    assert command["file"].startswith(str(tmp_path))
    assert "\n" not in command["file"]
    assert "\r" not in command["file"]


def test_t91_github_escape_follows_the_runner_rules() -> None:
    assert github_escape("50%\r\n:,") == "50%25%0D%0A:,"
    assert github_escape("50%\r\n:,", property_value=True) == "50%25%0D%0A%3A%2C"


def _schema_validator() -> Any:
    """The official OASIS SARIF 2.1.0 schema (errata 01), kept unmodified as a fixture."""
    jsonschema = importlib.import_module("jsonschema")
    schema_path = Path(__file__).resolve().parents[1] / "fixtures" / "sarif-schema-2.1.0.json"
    schema = json.loads(schema_path.read_text(encoding="utf-8"))
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    # Every format jsonschema knows, not only draft 4's: the schema marks artifact locations
    # as "uri-reference", which is what a hostile folder name could break.
    checker = jsonschema.FormatChecker()
    assert not checker.conforms("a b#c#d", "uri-reference")
    return validator_class(schema, format_checker=checker)


def test_sarif_has_one_rule_per_code_and_located_results(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out = run(capsys, "--format", "sarif", str(EXAMPLES))
    assert code == 1
    document = json.loads(out)
    assert document["version"] == "2.1.0"
    [run_] = document["runs"]
    rules = run_["tool"]["driver"]["rules"]
    ids = [rule["id"] for rule in rules]
    assert len(ids) == len(set(ids))
    for rule in rules:
        assert rule["shortDescription"]["text"] == RULE_TEXT[rule["id"]]
        assert rule["helpUri"].endswith("#errors")
    # The driver lists every rule skillguard has, so results can be written as they come.
    assert set(ids) == set(RULE_TEXT)
    results = run_["results"]
    assert {r["ruleId"] for r in results} <= set(ids)
    for result in results:
        assert ids[result["ruleIndex"]] == result["ruleId"]
        assert result["level"] in {"error", "warning"}
        [location] = result["locations"]
        assert location["physicalLocation"]["artifactLocation"]["uri"]
    several = [
        r
        for r in results
        if "broken-several-fields"
        in r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    ]
    assert [(r["ruleId"], r["locations"][0]["physicalLocation"]["region"]) for r in several] == [
        ("invalid_name", {"startLine": 2, "startColumn": 1}),
        ("empty_field", {"startLine": 3, "startColumn": 1}),
        ("field_too_long", {"startLine": 4, "startColumn": 1}),
    ]


def test_t92_sarif_uris_keep_hostile_names_as_one_path(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    name = "a#b?c%d e;f"
    write_skill(tmp_path / name, "---\nname: other\ndescription: d\n---\n")
    code, out = run(capsys, "--format", "sarif", str(tmp_path))
    assert code == 1
    assert out.isascii()
    [result] = json.loads(out)["runs"][0]["results"]
    uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    parsed = urllib.parse.urlsplit(uri)
    assert parsed.query == ""
    assert parsed.fragment == ""
    assert urllib.parse.unquote(parsed.path) == f"{tmp_path}/{name}/SKILL.md".lstrip("/")


def test_sarif_of_an_empty_run_is_a_valid_log() -> None:
    out = io.StringIO()
    SarifWriter(out, version="0").close()
    document = json.loads(out.getvalue())
    assert document["runs"][0]["results"] == []
    assert {rule["id"] for rule in document["runs"][0]["tool"]["driver"]["rules"]} == set(RULE_TEXT)
    assert list(_schema_validator().iter_errors(document)) == []


def test_sarif_keeps_a_result_whose_code_has_no_rule() -> None:
    out = io.StringIO()
    writer = SarifWriter(out, version="0")
    writer.result(
        {
            "path": "x",
            "errors": [{"code": "not_in_the_table", "message": "m", "line": 3}],
            "warnings": [{"code": "unknown_field", "message": "w"}],
        }
    )
    writer.close()
    document = json.loads(out.getvalue())
    rules = [rule["id"] for rule in document["runs"][0]["tool"]["driver"]["rules"]]
    first, second = document["runs"][0]["results"]
    assert first["ruleId"] == "not_in_the_table"
    assert "ruleIndex" not in first
    assert first["locations"][0]["physicalLocation"]["region"] == {"startLine": 3}
    assert rules[second["ruleIndex"]] == "unknown_field"
    assert list(_schema_validator().iter_errors(document)) == []


def test_t92_sarif_validates_against_the_schema(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    validator = _schema_validator()
    write_skill(tmp_path / "a#b?c%d e", "---\nname: other\ndescription: d\nx: y\n---\n")
    for args in ([str(EXAMPLES)], [str(tmp_path)], ["--fail-on-skipped", str(tmp_path)]):
        _, out = run(capsys, "--format", "sarif", *args)
        errors = sorted(validator.iter_errors(json.loads(out)), key=str)
        assert errors == []


def test_every_rule_text_code_is_in_the_docs_error_table() -> None:
    readme = (ROOT / "docs" / "reference" / "errors.md").read_text()
    documented = set(re.findall(r"^\| [a-z_]+ \| `([a-z_0-9]+)` \|", readme, flags=re.MULTILINE))
    warnings = {
        "unknown_field",
        "metadata_not_string",
        "argument_hint_list",
        "too_many_entries",
        "nested_skill",
        "bug",
    }
    assert set(RULE_TEXT) - warnings <= documented


def _json_findings(out: str) -> list[tuple[str, str, str, Any, Any]]:
    document = json.loads(out)
    findings: list[tuple[str, str, str, Any, Any]] = []
    for result in document["results"]:
        for level, key in (("error", "errors"), ("warning", "warnings")):
            findings.extend(
                (
                    level,
                    item["code"],
                    item.get("file") or result["path"],
                    item.get("line"),
                    item.get("column"),
                )
                for item in result[key]
            )
    findings.extend(
        ("warning", entry["code"], entry["path"], None, None) for entry in document["skipped"]
    )
    return sorted(findings, key=repr)


def _tree_with_everything(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    write_skill(root / "good", "---\nname: good\ndescription: d\nx: 1\ny: 2\n---\n")
    write_skill(root / "several", "---\nname: Bad_Name\ndescription: ''\n---\n")
    write_skill(root / "yaml", "---\nname: yaml\ndescription: a: b\n---\n")
    (root / "loop").symlink_to("loop")
    (root / "lower").mkdir()
    (root / "lower" / "skill.md").write_text("---\nname: lower\n---\n")
    write_skill(root / "good" / "nested", "---\nname: nested\ndescription: d\n---\n")
    return root


def test_every_format_reports_the_same_findings(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # GitHub and SARIF are written as the run goes; each must carry exactly what the JSON
    # document carries, one finding for one finding, with the same place.
    root = _tree_with_everything(tmp_path)
    json_code, json_out = run(capsys, "--format", "json", str(root))
    expected = _json_findings(json_out)
    assert {finding[1] for finding in expected} >= {
        "invalid_name",
        "empty_field",
        "unknown_field",
        "yaml_syntax",
        "symlink",
    }
    github_code, github_out = run(capsys, "--format", "github", str(root))
    github = sorted(
        (
            "warning" if command["name"] == "warning" else "error",
            command["title"].removeprefix("skillguard "),
            command["file"],
            int(command["line"]) if "line" in command else None,
            int(command["col"]) if "col" in command else None,
        )
        for command in parse_commands(github_out)
    )
    sarif_code, sarif_out = run(capsys, "--format", "sarif", str(root))
    sarif = []
    for result in json.loads(sarif_out)["runs"][0]["results"]:
        physical = result["locations"][0]["physicalLocation"]
        region = physical.get("region", {})
        uri = physical["artifactLocation"]["uri"]
        if physical["artifactLocation"].get("uriBaseId") == "ROOT":
            uri = "/" + uri
        sarif.append(
            (
                result["level"],
                result["ruleId"],
                urllib.parse.unquote(uri),
                region.get("startLine"),
                region.get("startColumn"),
            )
        )
    # Skipped entries are warnings here, as they are without --fail-on-skipped.
    normalise = [(level, code, path, line, column) for level, code, path, line, column in expected]
    assert github == normalise
    assert sorted(sarif, key=repr) == sorted(normalise, key=repr)
    assert json_code == github_code == sarif_code == 1


def _sarif_paths(out: str) -> list[bytes]:
    paths = []
    for result in json.loads(out)["runs"][0]["results"]:
        location = result["locations"][0]["physicalLocation"]["artifactLocation"]
        prefix = b"/" if location.get("uriBaseId") == "ROOT" else b""
        paths.append(prefix + urllib.parse.unquote_to_bytes(location["uri"]))
    return paths


def test_t92_ci_formats_name_the_real_file_when_a_name_holds_a_backslash(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # Text and JSON double a backslash so that it cannot pass for an escape; a CI
    # service must instead be given the file's own name, or the finding lands nowhere.
    folder = tmp_path / "we\\ird"
    write_skill(folder, "---\nname: x\ndescription: d\n---\n")
    code, out = run(capsys, "--format", "sarif", str(tmp_path))
    assert code == 1
    # The folder's name is refused (bad_name), so the finding names the folder itself.
    assert _sarif_paths(out) == [os.fsencode(folder)]
    [command] = parse_commands(run(capsys, "--format", "github", str(tmp_path))[1])
    assert command["file"] == str(folder)
    [result] = json.loads(run(capsys, "--format", "json", str(tmp_path))[1])["results"]
    assert result["path"] == str(folder).replace("\\", "\\\\")


@pytest.mark.parametrize(
    "name",
    [b"esc\x1b[2Jname", b"undecodable\xff", b"tab\there", b"line\nbreak", b"del\x7f"],
)
def test_t92_a_name_no_log_line_can_show_is_never_a_file_property(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: bytes
) -> None:
    root = tmp_path / "root"
    folder = os.fsdecode(os.fsencode(root) + b"/" + name)
    write_skill(Path(folder), "---\nname: other\ndescription: d\n---\n")
    code, out = run(capsys, "--format", "github", str(root))
    assert code == 1
    assert out.isascii() or out.isprintable()
    commands = parse_commands(out)
    assert commands
    for command in commands:
        # The annotation points at the nearest folder that a log line can name, and
        # the message carries the whole path, escaped.
        assert command["file"] == str(root)
        assert "line" not in command
        assert command["message"].startswith(str(root) + "/")
        assert all(ch.isprintable() for ch in command["message"])
    code, out = run(capsys, "--format", "sarif", str(root))
    assert code == 1
    assert set(_sarif_paths(out)) <= {
        os.fsencode(folder),
        os.fsencode(folder) + b"/SKILL.md",
    }
    assert _sarif_paths(out)


def test_t92_a_hidden_character_in_a_name_never_reaches_an_annotation(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    write_skill(tmp_path / "pdf\u202efdp", "---\nname: pdf\ndescription: d\n---\n")
    code, out = run(capsys, "--format", "github", str(tmp_path))
    assert code == 1
    [command] = parse_commands(out)
    assert command["title"] == "skillguard hidden_character"
    assert "\u202e" not in out
    # The name reaches the results only as shown, which is another possible name: the
    # annotation names the folder that holds it, the message the name as shown.
    assert command["file"] == str(tmp_path)
    assert command["message"].startswith(f"{tmp_path}/pdf[U+202E]fdp: ")


def test_t92_a_hidden_name_never_points_a_finding_at_its_shown_form(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # A decoy folder named as the hidden name is shown must not take its finding.
    write_skill(tmp_path / "a" / "\ufeffx", "---\nname: x\ndescription: d\n---\n")
    write_skill(tmp_path / "a" / "[U+FEFF]x", "---\nname: x\ndescription: d\n---\n")
    code, out = run(capsys, "--format", "github", str(tmp_path))
    assert code == 1
    hidden = [c for c in parse_commands(out) if c["title"] == "skillguard hidden_character"]
    assert [c["file"] for c in hidden] == [f"{tmp_path}/a"]
    code, out = run(capsys, "--format", "sarif", str(tmp_path))
    _schema_validator().validate(json.loads(out))
    results = json.loads(out)["runs"][0]["results"]
    paths = [
        path
        for result, path in zip(results, _sarif_paths(out), strict=True)
        if result["ruleId"] == "hidden_character"
    ]
    assert paths == [os.fsencode(tmp_path / "a")]


def test_ci_paths_are_relative_to_the_github_workspace(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_skill(tmp_path / "skills" / "demo", "---\nname: other\ndescription: d\n---\n")
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path))
    [command] = parse_commands(run(capsys, "--format", "github", str(tmp_path / "skills"))[1])
    assert command["file"] == "skills/demo/SKILL.md"
    assert command["line"] == "2"
    assert _sarif_paths(run(capsys, "--format", "sarif", str(tmp_path / "skills"))[1]) == [
        b"skills/demo/SKILL.md"
    ]
    # A relative PATH is taken from the current folder, wherever the checkout is.
    monkeypatch.chdir(tmp_path / "skills")
    [command] = parse_commands(run(capsys, "--format", "github", "demo")[1])
    assert command["file"] == "skills/demo/SKILL.md"
    # Outside the checkout, paths are left as given.
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path / "elsewhere"))
    [command] = parse_commands(run(capsys, "--format", "github", "demo")[1])
    assert command["file"] == "demo/SKILL.md"


def test_json_and_text_list_many_skipped_entries_after_the_results(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # Skipped entries wait in a spooled file, not in memory; the documents keep their
    # shape and order.
    write_skill(tmp_path / "good", "---\nname: good\ndescription: d\n---\n")
    for index in range(30):
        write_skill(
            tmp_path / f"deep-{index:02d}" / "a" / "b" / "c" / "too-deep",
            "---\nname: too-deep\ndescription: d\n---\n",
        )
    code, out = run(capsys, "--format", "json", "--max-depth", "3", str(tmp_path))
    assert code == 0
    document = json.loads(out)
    assert list(document) == ["results", "summary", "skipped"]
    assert document["summary"] == {"checked": 1, "ok": 1, "failed": 0, "skipped": 30}
    assert len(document["skipped"]) == 30
    assert all(set(entry) == {"path", "code", "message"} for entry in document["skipped"])
    paths = [entry["path"] for entry in document["skipped"]]
    assert paths == sorted(paths)
    code, out = run(capsys, "--fail-on-skipped", "--max-depth", "3", str(tmp_path))
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith("ok ")
    assert [line.startswith("skipped ") for line in lines[1:-1]] == [True] * 30
    assert lines[-1] == "1 checked, 1 ok, 0 failed, 30 skipped"


def test_t91_a_legacy_command_in_a_name_is_never_run_by_the_runner(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # GitHub's runner also reads '##[name]data' anywhere in a line that is not a '::'
    # command, on stdout and stderr alike: a name must not stop or forge annotations in
    # any format a workflow step may print.
    write_skill(tmp_path / "##[stop-commands]tok", "---\nname: other\ndescription: d\n---\n")
    write_skill(tmp_path / "###[error]x" / "a" / "deep", "---\nname: deep\ndescription: d\n")
    names = {"##[stop-commands]tok", "###[error]x"}
    for form in ("text", "json", "sarif", "github"):
        code = main(["validate", "--format", form, "--max-depth", "1", str(tmp_path)])
        out, err = capsys.readouterr()
        assert code == 1
        lines = (out + err).splitlines()
        assert not [line for line in lines if "##[" in line and not line.startswith("::")]
        if form == "json":
            document = json.loads(out)
            assert {Path(r["path"]).name for r in document["results"]} == {"##[stop-commands]tok"}
            assert ["###[error]x" in entry["path"] for entry in document["skipped"]] == [True]
        elif form == "sarif":
            _schema_validator().validate(json.loads(out))
            parts = {part for path in _sarif_paths(out) for part in os.fsdecode(path).split("/")}
            assert names <= parts
        elif form == "github":
            # Each line is a '::' command, which the runner reads first: the names stay.
            files = {command["file"] for command in parse_commands(out)}
            assert any("##[stop-commands]tok" in file for file in files)
        else:
            assert "[U+0023][U+0023][stop-commands]tok" in out
            assert "[U+0023][U+0023][U+0023][error]x" in out


def test_ci_paths_are_relative_to_a_github_workspace_named_by_a_link(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The working directory is always a real path; the checkout may be named through a
    # link (macOS's /tmp, a runner's work folder), and still holds the current folder.
    write_skill(tmp_path / "real" / "skills" / "demo", "---\nname: other\ndescription: d\n---\n")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path / "link"))
    monkeypatch.chdir(tmp_path / "link" / "skills")
    [command] = parse_commands(run(capsys, "--format", "github", "demo")[1])
    assert command["file"] == "skills/demo/SKILL.md"
    assert _sarif_paths(run(capsys, "--format", "sarif", "demo")[1]) == [b"skills/demo/SKILL.md"]
    # A value that is a prefix of the checkout but not one of its folders is not it.
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path / "rea"))
    [command] = parse_commands(run(capsys, "--format", "github", "demo")[1])
    assert command["file"] == "demo/SKILL.md"


def test_ci_formats_survive_a_removed_working_folder(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Without a working folder a relative path cannot be placed in the checkout; it is
    # then named as given, and the SARIF log still ends as one valid document.
    write_skill(tmp_path / "skills" / "demo", "---\nname: other\ndescription: d\n---\n")
    (tmp_path / "gone").mkdir()
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path))
    monkeypatch.chdir(tmp_path / "gone")
    (tmp_path / "gone").rmdir()
    [command] = parse_commands(run(capsys, "--format", "github", str(tmp_path / "skills"))[1])
    assert command["file"] == "skills/demo/SKILL.md"
    code, out = run(capsys, "--format", "sarif", str(tmp_path / "skills"), "demo")
    assert code == 1
    _schema_validator().validate(json.loads(out))
    assert _sarif_paths(out) == [b"skills/demo/SKILL.md", b"demo"]


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs Linux's /dev/full")
@pytest.mark.parametrize("form", ["text", "sarif"])
def test_an_output_that_cannot_be_written_fails_in_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, form: str
) -> None:
    # A full disk under 'validate --format sarif > results.sarif' fails the step with
    # the reason, never a traceback nor an "internal error".
    with open("/dev/full", "w", encoding="utf-8") as full:
        monkeypatch.setattr("sys.stdout", full)
        code = main(["validate", "--format", form, str(EXAMPLES)])
    assert code == 1
    assert (
        capsys.readouterr().err == "skillguard: cannot write the output (No space left on device)\n"
    )


# -- a run of '#' (T144) ---------------------------------------------------------------


def test_t144_a_run_of_hashes_costs_linear_work(monkeypatch: pytest.MonkeyPatch) -> None:
    from skillguard._cli import ci

    meter = Meter()
    meter_module(monkeypatch, ci, meter)

    def cost(n: int) -> int:
        meter.steps = 0
        return python_steps(lambda: ci.log_safe("##[x " + "#" * n + "y")) + meter.steps

    assert grows_linearly(cost, 200)
    assert ci.log_safe("a ###[b #" + "#" * 9 + "[c ##") == (
        "a " + "[U+0023]" * 3 + "[b " + "[U+0023]" * 10 + "[c ##"
    )
