"""``skillguard validate``: output shapes, exit codes, escaping, and never a traceback."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, given, settings

from skillguard._cli import validate as _validate
from skillguard._cli.main import main
from skillguard._cli.parser import build_parser
from skillguard._cli.scan import iter_scan
from skillguard.testing import Workspace, hostile_workspaces, write_workspace

if TYPE_CHECKING:
    from collections.abc import Iterator

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "skills"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    code, out, _ = run(capsys, "validate", "--format", "json", *args)
    return code, json.loads(out)


def write_skill(folder: Path, text: str | bytes) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "SKILL.md"
    if isinstance(text, str):
        path.write_text(text)
    else:
        path.write_bytes(text)
    return folder


GOOD = "---\nname: {name}\ndescription: A good skill.\n---\nBody.\n"


def test_examples_show_valid_and_broken_skills(capsys: pytest.CaptureFixture[str]) -> None:
    code, document = run_json(capsys, str(EXAMPLES))
    assert code == 1
    by_skill = {r["skill"]: r for r in document["results"]}
    assert {name for name, r in by_skill.items() if r["ok"]} == {
        "code-review",
        "pdf-tools",
        "release-notes",
    }
    assert by_skill["broken-duplicate-key"]["errors"] == [
        {
            "kind": "malformed",
            "code": "duplicate_key",
            "message": "line 5, column 1: duplicate key 'allowed-tools'",
            "file": str(EXAMPLES / "broken-duplicate-key" / "SKILL.md"),
            "line": 5,
            "column": 1,
        }
    ]
    assert by_skill["broken-symlink"]["errors"][0]["kind"] == "containment"
    summary = document["summary"]
    assert summary == {
        "checked": len(document["results"]),
        "ok": 3,
        "failed": summary["failed"],
        "skipped": 0,
    }
    assert summary["failed"] == len(document["results"]) - 3


def test_the_namespaced_example_passes_with_namespaces_only(
    capsys: pytest.CaptureFixture[str],
) -> None:
    example = str(EXAMPLES / "deploy-to-staging")
    code, document = run_json(capsys, "--profile", "compat", example)
    assert code == 0  # compat: the folder name replaces the invalid name
    assert [w["code"] for w in document["results"][0]["warnings"]] == [
        "invalid_name",
        "compatibility_mapping",
    ]
    code, document = run_json(capsys, example)
    assert (code, document["results"][0]["errors"][0]["code"]) == (1, "invalid_name")
    code, document = run_json(capsys, "--profile", "compat", "--namespaces", example)
    assert code == 0
    assert document["results"][0]["skill"] == "deploy-to-staging"
    assert [w["code"] for w in document["results"][0]["warnings"]] == ["compatibility_mapping"]
    code, out, _ = run(capsys, "discover", "--profile", "compat", "--namespaces", str(EXAMPLES))
    assert code == 0
    assert "skill    deploy-to-staging  " in out
    assert out.endswith("5 skills, 0 shadowed, 6 skipped\n")


def test_json_result_shape(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    write_skill(tmp_path / "demo", GOOD.format(name="demo"))
    write_skill(tmp_path / "extra", "---\nname: extra\ndescription: d\nauthor: me\n---\n")
    code, document = run_json(capsys, str(tmp_path))
    assert code == 0
    assert set(document) == {"results", "summary", "skipped"}
    for result in document["results"]:
        assert set(result) == {"path", "skill", "ok", "errors", "warnings"}
    extra = document["results"][1]
    assert extra["warnings"] == [
        {
            "code": "unknown_field",
            "message": "unknown field 'author' kept as inert data",
            "keys": ["author"],
            "file": str(tmp_path / "extra" / "SKILL.md"),
            "line": 4,
        }
    ]


def test_text_output_is_one_line_per_skill_with_reasons_indented(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    write_skill(tmp_path / "good", GOOD.format(name="good"))
    write_skill(tmp_path / "bad", "---\nname: bad\nname: bad\ndescription: d\n---\n")
    code, out, err = run(capsys, "validate", str(tmp_path))
    assert code == 1
    assert err == ""
    assert out.splitlines() == [
        f"FAILED {tmp_path / 'bad'} (bad)",
        "    error malformed/duplicate_key: line 3, column 1: duplicate key 'name'",
        f"ok     {tmp_path / 'good'} (good)",
        "2 checked, 1 ok, 1 failed, 0 skipped",
    ]


def test_all_ok_exits_zero(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    write_skill(tmp_path / "demo", GOOD.format(name="demo"))
    assert run(capsys, "validate", str(tmp_path / "demo" / "SKILL.md"))[0] == 0


def test_several_paths_give_one_result_each(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    a = write_skill(tmp_path / "a", GOOD.format(name="a"))
    b = write_skill(tmp_path / "b", GOOD.format(name="b"))
    code, document = run_json(capsys, str(a), str(b / "SKILL.md"), str(tmp_path / "none"))
    assert code == 1
    assert [(r["skill"], r["ok"]) for r in document["results"]] == [
        ("a", True),
        ("b", True),
        (None, False),
    ]
    assert document["results"][2]["errors"][0]["kind"] == "not_found"


def test_path_without_any_skill_is_a_not_found_result(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, document = run_json(capsys, str(tmp_path))
    assert code == 1
    assert document["summary"] == {"checked": 1, "ok": 0, "failed": 1, "skipped": 0}
    assert document["results"][0]["errors"][0]["code"] == "no_skill"


def test_compat_profile_turns_a_mismatch_into_a_warning(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    write_skill(tmp_path / "folder-name", GOOD.format(name="other-name"))
    assert run_json(capsys, str(tmp_path))[0] == 1
    code, document = run_json(capsys, "--profile", "compat", str(tmp_path))
    assert code == 0
    assert document["results"][0]["skill"] == "folder-name"
    assert document["results"][0]["warnings"][0]["code"] == "name_mismatch"


def test_max_depth_reports_what_it_did_not_search(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    write_skill(tmp_path / "a" / "b" / "deep", GOOD.format(name="deep"))
    code, out, err = run(capsys, "validate", "--format", "json", "--max-depth", "1", str(tmp_path))
    assert code == 1
    assert set(json.loads(out)) == {"results", "summary", "skipped"}
    assert err == f"skillguard: skipped {tmp_path / 'a' / 'b'}: too_deep: deeper than 1 levels\n"
    code, out, _ = run(capsys, "validate", "--max-depth", "1", str(tmp_path))
    assert f"skipped {tmp_path / 'a' / 'b'}: too_deep" in out


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["validate"],
        ["validate", "--profile", "lenient", "x"],
        ["validate", "--format", "yaml", "x"],
        ["validate", "--max-depth", "-1", "x"],
        ["validate", "--max-depth", "many", "x"],
        ["validate", ""],
        ["frobnicate"],
    ],
)
def test_usage_errors_exit_two(capsys: pytest.CaptureFixture[str], args: list[str]) -> None:
    code, out, err = run(capsys, *args)
    assert code == 2
    assert out == ""
    assert "Traceback" not in err
    assert "usage" in err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--version")
    assert (code, out.split()[0]) == (0, "skillguard")


def _modules_after(*args: str) -> set[str]:
    """The modules a fresh interpreter holds after running ``skillguard ARGS``."""
    code = (
        "import io, sys\n"
        "from skillguard._cli.main import main\n"
        "sys.stdout, sys.stderr, out = io.StringIO(), io.StringIO(), sys.stdout\n"
        "main(sys.argv[1:])\n"
        "sys.stdout = out\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, check=True
    ).stdout
    return set(out.split())


# What a command's own run needs, and --version and --help do not.
COMMAND_MODULES = (
    "skillguard._agents",
    "skillguard._swarm",
    "skillguard._audit",
    "skillguard._cli.agent_",
    "skillguard._cli.ci",
    "skillguard._cli.commands",
    "skillguard._cli.discover",
    "skillguard._cli.skillref",
    "skillguard._cli.validate",
    "structlog",
)


@pytest.mark.parametrize("args", [["--version"], ["--help"], []])
def test_version_and_help_import_no_command(args: list[str]) -> None:
    loaded = _modules_after(*args)
    assert "skillguard._cli.parser" in loaded
    assert sorted(m for m in loaded if m.startswith(COMMAND_MODULES)) == []


def test_a_command_imports_what_it_runs_only(tmp_path: Path) -> None:
    # The check above can fail: each command does import its own line, and no other.
    validate = _modules_after("validate", str(tmp_path))
    assert {"skillguard._cli.validate", "skillguard._cli.ci"} <= validate
    assert not {m for m in validate if m.startswith(("skillguard._agents", "skillguard._swarm"))}
    agent = _modules_after("agent", "validate", str(tmp_path))
    assert {"skillguard._agents.gate", "skillguard._cli.agent_compose"} <= agent
    assert not {m for m in agent if m.startswith("skillguard._swarm")}


def _parsers(
    parser: argparse.ArgumentParser, words: tuple[str, ...] = ()
) -> dict[tuple[str, ...], argparse.ArgumentParser]:
    found = {words: parser}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.update(_parsers(sub, (*words, name)))
    return found


def test_a_run_parses_with_the_parser_the_docs_check() -> None:
    # A run builds only the options of the command it names (``agent`` and ``trust``
    # need the agent line); that command's parser is the one README.md is checked with.
    everything = _parsers(build_parser())
    assert ("agent", "compose") in everything
    for words, parser in everything.items():
        ran = _parsers(build_parser([*words, "--help"]))
        assert ran[words].format_help() == parser.format_help(), words
    assert ("agent", "compose") not in _parsers(build_parser(["--version"]))


def test_t13_untrusted_names_cannot_inject_terminal_escapes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    evil = "evil\x1b[2J\nfake ok line\u202e"
    write_skill(tmp_path / evil, GOOD.format(name="evil"))
    write_skill(tmp_path / "keys", "---\nname: keys\ndescription: d\n'\\e[31mred': v\n---\n")
    code, out, _ = run(capsys, "validate", str(tmp_path))
    assert code == 1
    assert "\x1b" not in out
    assert "\u202e" not in out
    # Two results of two lines each (status, then one reason), then the summary: the
    # newline in the folder name did not start a line of its own.
    assert len(out.splitlines()) == 5
    assert "\\x1b[2J\\nfake ok line\\u202e" in out


def test_t13_json_output_is_ascii(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    write_skill(tmp_path / "caf\u00e9\x1b", GOOD.format(name="x"))
    _, out, _ = run(capsys, "validate", "--format", "json", str(tmp_path))
    assert out.isascii()
    assert "\x1b" not in out


def test_t13_error_messages_never_echo_file_content(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    secret = "sk-live-0123456789"
    cases = {
        "a": f"---\nname: a\ndescription: {secret}\ndescription: again\n---\n",
        "b": f'---\nname: a\ndescription: "{secret} \\q"\n---\n',
        "c": f"---\nname: c\ndescription: [{secret}\n---\n",
        "d": f"---\nname: d\ndescription: {secret}\u202e\n---\n",
        "e": f"---\nname: {secret}_X\ndescription: d\n---\n",
        "f": f"---\nname: f\ndescription: d\nmetadata: {{k: [{secret}]}}\n---\n",
    }
    for name, text in cases.items():
        write_skill(tmp_path / name, text)
    code, out, _ = run(capsys, "validate", "--format", "json", str(tmp_path))
    assert code == 1
    assert secret not in out
    assert json.loads(out)["summary"]["failed"] == len(cases)


def test_an_unexpected_exception_becomes_an_internal_result(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The last-resort guard for bugs: simulate one, since no real input triggers it.
    def broken(*_: object, **__: object) -> None:
        raise RuntimeError("simulated bug")

    monkeypatch.setattr(_validate, "iter_scan", broken)
    code, document = run_json(capsys, str(tmp_path))
    assert code == 1
    assert document["results"][0]["errors"] == [
        {"kind": "internal", "code": "bug", "message": "unexpected RuntimeError; please report it"}
    ]


def test_a_bug_after_some_results_still_ends_one_json_document(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Results are written as they come, so a bug in the middle of a PATH must leave the
    # results already written and the internal result in one well-formed document.
    write_skill(tmp_path / "demo", GOOD.format(name="demo"))
    real = iter_scan

    def breaks_after_one(*args: Any, **kwargs: Any) -> Iterator[object]:
        yield next(iter(real(*args, **kwargs)))
        raise RuntimeError("simulated bug")

    monkeypatch.setattr(_validate, "iter_scan", breaks_after_one)
    code, document = run_json(capsys, str(tmp_path))
    assert code == 1
    assert [(r["skill"], r["ok"]) for r in document["results"]] == [("demo", True), (None, False)]
    assert document["summary"] == {"checked": 2, "ok": 1, "failed": 1, "skipped": 0}
    code, out, _ = run(capsys, "validate", "--quiet", str(tmp_path))
    assert code == 1
    assert out.splitlines()[-1] == "2 checked, 1 ok, 1 failed, 0 skipped"


def hostile_tree(root: Path) -> Path:
    """One folder of every hostile shape the command must survive."""
    write_skill(root / "binary", os.urandom(4096))
    write_skill(root / "nul", b"---\nname: nul\x00\n---\n")
    write_skill(root / "deep", "---\nname: deep\ndescription: x\nx: " + "[" * 40_000 + "\n---\n")
    write_skill(root / "yaml110", "---\n%YAML 1.10\n---\n")
    write_skill(root / "huge", b"---\n" + b"a" * (300 * 1024))
    write_skill(root / "bad-utf8", b"---\nname: \xff\xfe\n---\n")
    (root / "fifo").mkdir()
    os.mkfifo(root / "fifo" / "SKILL.md")
    (root / "link").mkdir()
    (root / "link" / "SKILL.md").symlink_to("/etc/passwd")
    (root / "dirlink").symlink_to("/etc", target_is_directory=True)
    (root / "loop").symlink_to(root / "loop")
    (root / os.fsdecode(b"\xff\x1b[31m")).mkdir()
    write_skill(root / os.fsdecode(b"\xff\x1b[31m") / "s", GOOD.format(name="s"))
    return root


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_t14_console_script_never_prints_a_traceback(tmp_path: Path, fmt: str) -> None:
    root = hostile_tree(tmp_path / "tree")
    command = [sys.executable, "-m", "skillguard", "validate", "--format", fmt]
    paths = [str(root), str(root / "fifo" / "SKILL.md"), str(root / "loop"), str(root / "missing")]
    completed = subprocess.run(
        [*command, *paths], capture_output=True, timeout=120, check=False, stdin=subprocess.DEVNULL
    )
    assert completed.returncode == 1
    assert b"Traceback" not in completed.stderr + completed.stdout
    # Only the notices of what was not followed (the dangling and looping links).
    assert all(line.startswith(b"skillguard: skipped ") for line in completed.stderr.splitlines())
    if fmt == "json":
        document = json.loads(completed.stdout)
        # Every hostile folder failed, the one with a control character in its name too.
        assert document["summary"]["ok"] == 0
        codes = {e["code"] for r in document["results"] for e in r["errors"]}
        assert {"bad_name", "symlink", "not_regular_file", "too_large"} <= codes
        assert all(e["kind"] != "internal" for r in document["results"] for e in r["errors"])


@pytest.mark.parametrize("command", ["validate", "discover"])
def test_t14_a_closed_pipe_ends_the_command_quietly(tmp_path: Path, command: str) -> None:
    # "skillguard discover ROOT | head -1": well over a pipe's 64 KiB buffer, so that
    # writing must fail once the reader exits.
    for index in range(1500):
        name = f"skill-{index:04d}-" + "x" * 40
        write_skill(tmp_path / name, GOOD.format(name=name))
    # A reader that takes one line and goes away, like "| head -n 1".
    reader = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.readline()"], stdin=subprocess.PIPE
    )
    assert reader.stdin is not None
    completed = subprocess.run(
        [sys.executable, "-m", "skillguard", command, str(tmp_path)],
        stdout=reader.stdin,
        stderr=subprocess.PIPE,
        timeout=120,
        check=False,
    )
    reader.stdin.close()
    reader.wait(timeout=60)
    # Every skill is valid: 141 means the pipe broke, and nothing else was said.
    assert (completed.returncode, completed.stderr) == (141, b"")


def test_t13_an_ascii_only_terminal_gets_escapes_not_a_traceback(tmp_path: Path) -> None:
    write_skill(tmp_path / "caf\u00e9", GOOD.format(name="x"))
    env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    completed = subprocess.run(
        [sys.executable, "-m", "skillguard", "validate", str(tmp_path)],
        capture_output=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 1
    assert completed.stderr == b""
    assert b"caf\\xe9" in completed.stdout


def test_t13_undecodable_path_arguments_are_escaped(tmp_path: Path) -> None:
    folder = tmp_path / os.fsdecode(b"x\xff")
    write_skill(folder, GOOD.format(name="x"))
    completed = subprocess.run(
        [sys.executable, "-m", "skillguard", "validate", "--format", "json", os.fsencode(folder)],
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 1
    assert completed.stderr == b""
    document = json.loads(completed.stdout)
    assert document["results"][0]["path"].endswith("x\\xff")


def test_t10_a_path_named_skill_md_is_never_followed_as_a_folder(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # Found in review: "validate s/SKILL.md" where SKILL.md links to a folder of skills.
    outside = tmp_path / "outside"
    write_skill(outside / "evil", GOOD.format(name="evil"))
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "SKILL.md").symlink_to(outside, target_is_directory=True)
    for path in (tmp_path / "s" / "SKILL.md", f"{tmp_path / 's' / 'SKILL.md'}/"):
        code, document = run_json(capsys, str(path))
        assert code == 1
        assert [r["ok"] for r in document["results"]] == [False]
        assert document["results"][0]["errors"][0]["kind"] == "containment"


def test_a_trailing_slash_on_a_file_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    write_skill(tmp_path / "demo", GOOD.format(name="demo"))
    code, document = run_json(capsys, f"{tmp_path / 'demo' / 'SKILL.md'}/")
    assert code == 1
    assert document["results"][0]["errors"][0]["code"] == "not_a_directory"


def test_t14_closed_stdout_and_stderr_are_not_a_traceback(tmp_path: Path) -> None:
    write_skill(tmp_path / "demo", GOOD.format(name="demo"))
    script = (
        "import os, sys; os.close(1); os.close(2); "
        "sys.stdout = sys.stderr = None; "
        "from skillguard._cli.main import main; sys.exit(main(sys.argv[1:]))"
    )
    for args in (["validate", str(tmp_path)], ["validate", ""], ["--version"]):
        completed = subprocess.run(
            [sys.executable, "-c", script, *args], capture_output=True, timeout=120, check=False
        )
        assert completed.returncode in (0, 2)
        assert completed.stdout == b""
        assert completed.stderr == b""


@pytest.mark.parametrize("target", ["nowhere", "loop", "file", "folder"])
def test_t90_any_symlink_in_a_searched_folder_fails_the_run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, target: str
) -> None:
    write_skill(tmp_path / "demo", GOOD.format(name="demo"))
    link = tmp_path / "planted"
    pointee = {
        "nowhere": tmp_path / "nowhere",
        "loop": link,
        "file": tmp_path / "demo" / "SKILL.md",
        "folder": tmp_path / "demo",
    }[target]
    link.symlink_to(pointee)
    code, document = run_json(capsys, str(tmp_path))
    assert code == 1
    failed = [r for r in document["results"] if not r["ok"]]
    assert [(r["path"], r["errors"][0]["kind"], r["errors"][0]["code"]) for r in failed] == [
        (str(link), "containment", "symlink")
    ]


def test_t94_a_skill_md_below_a_skill_folder_is_listed_as_nested_skill(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    outer = write_skill(tmp_path / "outer", GOOD.format(name="outer"))
    write_skill(outer / "scripts" / "inner", GOOD.format(name="inner"))
    code, document = run_json(capsys, "--fail-on-skipped", str(tmp_path))
    assert code == 1
    assert document["summary"]["skipped"] == 1
    assert [(s["path"], s["code"]) for s in document["skipped"]] == [
        (str(outer / "scripts" / "inner"), "nested_skill")
    ]
    # The same holds when the PATH is the outer skill's own SKILL.md.
    code, document = run_json(capsys, str(outer / "SKILL.md"))
    assert code == 0
    assert [s["code"] for s in document["skipped"]] == ["nested_skill"]


@pytest.mark.parametrize("name", ["skill.md", "Skill.md", "SKILL.MD"])
def test_t94_a_case_variant_of_skill_md_fails_the_run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str
) -> None:
    write_skill(tmp_path / "good", GOOD.format(name="good"))
    (tmp_path / "misnamed").mkdir()
    (tmp_path / "misnamed" / name).write_text(GOOD.format(name="misnamed"))
    code, document = run_json(capsys, str(tmp_path))
    assert code == 1
    failed = [r for r in document["results"] if not r["ok"]]
    assert [(r["path"], r["errors"][0]["code"]) for r in failed] == [
        (str(tmp_path / "misnamed"), "wrong_case_skill_file")
    ]


@pytest.mark.parametrize("name", ["skill.md", "Skill.md", "SKILL.MD"])
def test_t94_a_case_variant_given_as_the_path_fails_the_run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str
) -> None:
    (tmp_path / "misnamed").mkdir()
    given = tmp_path / "misnamed" / name
    given.write_text(GOOD.format(name="misnamed"))
    code, document = run_json(capsys, str(given))
    assert code == 1
    [result] = document["results"]
    [error] = result["errors"]
    assert (error["code"], error["file"]) == ("wrong_case_skill_file", str(given))
    # A file by another name is still checked as a SKILL.md document.
    other = tmp_path / "misnamed" / "draft.md"
    other.write_text(GOOD.format(name="misnamed"))
    code, document = run_json(capsys, str(other))
    assert code == 0


def test_t94_a_case_variant_beside_skill_md_is_a_resource(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    folder = write_skill(tmp_path / "demo", GOOD.format(name="demo"))
    (folder / "skill.md").write_text("notes")
    code, document = run_json(capsys, str(tmp_path))
    assert code == 0
    assert document["summary"] == {"checked": 1, "ok": 1, "failed": 0, "skipped": 0}


def test_t94_a_folder_over_the_entry_limit_fails_the_run_and_names_the_folder(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # Created out of name order, so that the file system's own order is not the answer.
    names = [f"s{(index * 7) % 40:02d}" for index in range(40)]
    for name in names:
        write_skill(tmp_path / name, GOOD.format(name=name))
    code, document = run_json(capsys, "--max-entries", "5", str(tmp_path))
    assert code == 1
    failed = [r for r in document["results"] if not r["ok"]]
    assert [(r["path"], r["errors"][0]["code"]) for r in failed] == [
        (str(tmp_path), "too_many_entries")
    ]
    assert "40 entries" in failed[0]["errors"][0]["message"]
    checked = [r["skill"] for r in document["results"] if r["ok"]]
    assert checked == sorted(names)[:5]
    # The operator who raises the limit has every skill checked, and a passing run.
    code, document = run_json(capsys, "--max-entries", "40", str(tmp_path))
    assert code == 0
    assert document["summary"]["checked"] == 40


def test_t94_more_folders_than_the_limit_fail_the_run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    for name in ("a", "b", "c", "d"):
        write_skill(tmp_path / name, GOOD.format(name=name))
    code, document = run_json(capsys, "--max-folders", "2", str(tmp_path))
    assert code == 1
    assert [(r["path"], r["ok"]) for r in document["results"]] == [
        (str(tmp_path / "a"), True),
        (str(tmp_path / "b"), True),
        (str(tmp_path / "c"), False),
    ]
    assert document["results"][2]["errors"][0]["code"] == "too_many_entries"
    code, _ = run_json(capsys, "--max-folders", "4", str(tmp_path))
    assert code == 0


def test_max_entries_and_max_folders_refuse_zero(capsys: pytest.CaptureFixture[str]) -> None:
    for option in ("--max-entries", "--max-folders"):
        code, _, err = run(capsys, "validate", option, "0", ".")
        assert code == 2
        assert "positive integer" in err


def test_validate_prints_a_literal_backslash_apart_from_an_escaped_byte(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "a\\xff").mkdir()
    (tmp_path / os.fsdecode(b"a\xff")).mkdir()
    code, out, _ = run(capsys, "validate", str(tmp_path))
    assert code == 1
    printed = sorted(line.split()[1] for line in out.splitlines() if line.startswith("FAILED"))
    assert printed == [f"{tmp_path}/a\\\\xff", f"{tmp_path}/a\\xff"]


# -- validate: the whole skill folder -------------------------------------------------


def test_t15_validate_fails_a_skill_whose_folder_holds_a_link_fifo_or_hard_link(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    secret = tmp_path / "id_rsa"
    secret.write_text("-----BEGIN KEY-----")
    folder = write_skill(tmp_path / "skills" / "demo", GOOD.format(name="demo"))
    (folder / "references").mkdir()
    (folder / "references" / "notes.md").symlink_to(secret)
    os.mkfifo(folder / "pipe")
    os.link(secret, folder / "alias")
    code, document = run_json(capsys, str(tmp_path / "skills"))
    assert code == 1
    (result,) = document["results"]
    assert result["skill"] == "demo"
    assert [(e["kind"], e["code"]) for e in result["errors"]] == [
        ("containment", "hardlink"),
        ("containment", "special_file"),
        ("containment", "symlink"),
    ]
    assert "BEGIN KEY" not in json.dumps(document)


def test_validate_warns_about_resource_limits(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    folder = write_skill(tmp_path / "demo", GOOD.format(name="demo"))
    deep = folder.joinpath(*["d"] * 7)
    deep.mkdir(parents=True)
    (deep / "x.txt").write_text("x")
    code, document = run_json(capsys, str(folder / "SKILL.md"))
    assert code == 0
    assert [w["code"] for w in document["results"][0]["warnings"]] == ["too_deep"]


# -- discover -------------------------------------------------------------------------


def test_discover_prints_skills_shadowed_and_skipped(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    project, user = tmp_path / "project", tmp_path / "user"
    write_skill(project / "pdf", GOOD.format(name="pdf"))
    write_skill(user / "pdf", GOOD.format(name="pdf"))
    write_skill(user / "bad", "---\nname: bad\n---\n")
    code, out, _ = run(capsys, "discover", str(project), str(user))
    assert code == 0
    assert out.splitlines() == [
        f"skill    pdf  {project}/pdf",
        f"shadowed pdf  {user}/pdf  (by {project}/pdf)",
        (
            f"skipped  {user}/bad: malformed/missing_field: "
            "the required field 'description' is missing"
        ),
        "1 skills, 1 shadowed, 1 skipped",
    ]


def test_discover_json(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    write_skill(tmp_path / "pdf", GOOD.format(name="pdf"))
    code, out, _ = run(capsys, "discover", "--format", "json", str(tmp_path))
    document = json.loads(out)
    assert code == 0
    assert set(document) == {"roots", "skills", "shadowed", "skipped", "summary"}
    (skill,) = document["skills"]
    assert (skill["name"], skill["location"], skill["root"]) == ("pdf", "pdf", str(tmp_path))
    assert document["summary"] == {"skills": 1, "shadowed": 0, "skipped": 0}


def test_discover_uses_the_conventional_roots_of_a_project(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_skill(tmp_path / ".claude" / "skills" / "pdf", GOOD.format(name="pdf"))
    write_skill(tmp_path / ".agents" / "skills" / "pdf", GOOD.format(name="pdf"))
    monkeypatch.setenv("SKILLGUARD_USER_SKILLS", "")
    code, out, _ = run(capsys, "discover", "--format", "json", "--project", str(tmp_path))
    document = json.loads(out)
    assert code == 0
    assert [s["root"] for s in document["skills"]] == [str(tmp_path / ".agents/skills")]
    assert [s["root"] for s in document["shadowed"]] == [str(tmp_path / ".claude/skills")]
    assert len(document["skipped"]) == 3  # .github, .cursor and .codex do not exist


def test_discover_follows_only_trusted_links(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    write_skill(tmp_path / "repo" / "pdf", GOOD.format(name="pdf"))
    (tmp_path / "root").mkdir()
    (tmp_path / "root" / "pdf").symlink_to(tmp_path / "repo" / "pdf", target_is_directory=True)
    _, out, _ = run(capsys, "discover", str(tmp_path / "root"))
    assert out.splitlines()[-1] == "0 skills, 0 shadowed, 1 skipped"
    args = ["discover", "--trust-link-target", str(tmp_path / "repo"), str(tmp_path / "root")]
    _, out, _ = run(capsys, *args)
    assert out.splitlines()[-1] == "1 skills, 0 shadowed, 0 skipped"


def test_t13_discover_escapes_untrusted_names(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    write_skill(tmp_path / "x\x1b[2J", GOOD.format(name="x"))
    _, out, _ = run(capsys, "discover", str(tmp_path))
    assert "\x1b" not in out
    assert "x\\x1b[2J" in out


# -- a reader that goes away -------------------------------------------------------------


# -- audit verify and summarize ----------------------------------------------------------


def audit_log(path: Path, count: int, key: bytes | None = None) -> list[bytes]:
    from skillguard.audit import AuditLog, Auditor

    auditor = Auditor(AuditLog(path, key=key))
    for index in range(count):
        auditor.emit(
            "load_denied" if index % 2 else "load_granted",
            agent="planner",
            skill=f"skill-{index}",
            decision="deny" if index % 2 else "allow",
            reason="not in the set" if index % 2 else None,
        )
    return path.read_bytes().splitlines(keepends=True)


@pytest.mark.parametrize("joiner", [b"\r", b"\xe2\x80\xa8", b"\xc2\x85", b"\x0c", b"\x1e"])
def test_t51_audit_verify_splits_on_newline_only(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, joiner: bytes
) -> None:
    path = tmp_path / "a.jsonl"
    lines = audit_log(path, 3)
    path.write_bytes(lines[0] + lines[1].rstrip(b"\n") + joiner + lines[2] + lines[3])
    code, out, _ = run(capsys, "audit", "verify", str(path))
    assert (code, out.split(":")[:2]) == (1, ["tampered", " line 2"])


def test_t51_audit_verify_refuses_empty_lines(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "a.jsonl"
    lines = audit_log(path, 2)
    path.write_bytes(b"".join(lines) + b"\n")
    assert run(capsys, "audit", "verify", str(path))[:2] == (1, "tampered: line 4: an empty line\n")


def test_t52_audit_verify_refuses_what_is_not_a_regular_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for target in (str(fifo), str(tmp_path), "/dev/zero", str(tmp_path / "missing")):
        code, out, err = run(capsys, "audit", "verify", target)
        assert (code, out) == (1, "")
        assert err == "skillguard: the audit log cannot be read (a regular file is needed)\n"
    # A /proc file says it is 0 bytes long: nothing beyond that is read.
    code, out, _ = run(capsys, "audit", "verify", "/proc/self/pagemap")
    assert (code, out) == (6, "not an audit log: not an audit log: empty\n")


def test_t52_a_huge_first_line_is_refused_at_once(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    sparse = tmp_path / "sparse"
    with sparse.open("wb") as file:
        file.truncate(8 << 30)  # 8 GiB of zeros, no blocks on disk
    code, out, _ = run(capsys, "audit", "verify", str(sparse))
    assert (code, out) == (6, "not an audit log: a line over the size cap\n")
    newlines = tmp_path / "newlines"
    newlines.write_bytes(b"\n" * (32 << 20))
    code, out, _ = run(capsys, "audit", "summarize", str(newlines))
    assert (code, out) == (6, "")
    code, out, _ = run(capsys, "audit", "verify", str(newlines))
    assert (code, out) == (6, "not an audit log: an empty line\n")


def test_t52_a_line_over_the_cap_is_tampering(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "a.jsonl"
    lines = audit_log(path, 2)
    path.write_bytes(lines[0] + b"x" * (1 << 20) + b"\n" + lines[1])
    code, out, _ = run(capsys, "audit", "verify", str(path))
    assert (code, out) == (1, "tampered: line 2: a line over the size cap\n")
    path.write_bytes(lines[0] + b"{" * (1 << 20))
    code, out, _ = run(capsys, "audit", "verify", str(path))
    assert (code, out) == (1, "tampered: line 2: a line over the size cap\n")


def test_t52_a_symlinked_log_is_the_operators_choice(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    audit_log(tmp_path / "a.jsonl", 2)
    (tmp_path / "link").symlink_to(tmp_path / "a.jsonl")
    assert run(capsys, "audit", "verify", str(tmp_path / "link"))[:2] == (0, "intact: 3 records\n")


@pytest.mark.parametrize("content", [b"", b"  \n\t\n"])
def test_t53_an_empty_key_file_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, content: bytes
) -> None:
    audit_log(tmp_path / "a.jsonl", 1)
    key = tmp_path / "key"
    key.write_bytes(content)
    code, _, err = run(capsys, "audit", "verify", str(tmp_path / "a.jsonl"), "--key-file", str(key))
    assert (code, err) == (2, "skillguard: [usage/bad_argument] the audit key file is empty\n")


def test_t53_a_key_file_that_is_too_large_or_missing_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    audit_log(tmp_path / "a.jsonl", 1)
    key = tmp_path / "key"
    key.write_bytes(b"k" * 5000)
    for path in (str(key), str(tmp_path / "missing"), "/proc/self/pagemap"):
        code, _, err = run(capsys, "audit", "verify", str(tmp_path / "a.jsonl"), "--key-file", path)
        assert code == 2
        assert "cannot be read" in err


def test_t53_a_keyed_log_needs_its_key_and_says_so(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "a.jsonl"
    audit_log(path, 2, key=b"s3cret")
    (tmp_path / "key").write_bytes(b"s3cret\n")
    (tmp_path / "other").write_bytes(b"other\n")
    log = str(path)
    assert run(capsys, "audit", "verify", log)[:2] == (3, "keyed: needs its key (--key-file)\n")
    assert run(capsys, "audit", "verify", log, "--key-file", str(tmp_path / "other"))[:2] == (
        4,
        "wrong key: the log was keyed with another key\n",
    )
    code, out, _ = run(capsys, "audit", "verify", log, "--key-file", str(tmp_path / "key"))
    assert (code, out) == (0, "intact: 3 records\n")
    code, _, err = run(capsys, "audit", "summarize", log)
    assert (code, err) == (3, "skillguard: keyed: needs its key (--key-file)\n")
    code, out, _ = run(capsys, "audit", "summarize", log, "--key-file", str(tmp_path / "key"))
    assert (code, out.splitlines()[:2]) == (
        0,
        ["intact: 3 records", "counted: 2 records (every record but log_created)"],
    )


def test_t54_audit_verify_checks_the_log_id(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "a.jsonl"
    log_id = json.loads(audit_log(path, 2)[0])["log_id"]
    args = ["audit", "verify", str(path), "--expect-records", "3"]
    assert run(capsys, *args, "--expect-log-id", log_id)[0] == 0
    code, out, _ = run(capsys, *args, "--expect-log-id", "0" * 32)
    assert (code, out) == (1, "tampered: line 1: another log: its log id is not the one expected\n")


def test_t55_a_tampered_log_is_summarized_only_as_not_verified(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "a.jsonl"
    lines = audit_log(path, 4)
    path.write_bytes(b"".join([lines[0], lines[1], lines[3], lines[2], lines[4]]))
    code, out, _ = run(capsys, "audit", "summarize", str(path))
    assert code == 1
    assert out.splitlines()[:2] == [
        "NOT VERIFIED: tampered: line 3: inserted, reordered or a record before it deleted",
        "counted: 1 records (every record but log_created)",
    ]
    code, out, _ = run(capsys, "audit", "summarize", str(path), "--format", "json")
    document = json.loads(out)
    (log,) = document["logs"]
    assert (code, document["verified"], log["records"]) == (1, False, 2)
    assert (log["status"], log["line"]) == ("tampered", 3)
    assert log["summary"]["records"] == document["total"]["records"] == 1


def test_t55_a_file_that_is_not_an_audit_log_is_an_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("hello\n")
    code, out, err = run(capsys, "audit", "summarize", str(path))
    assert (code, out) == (6, "")
    assert err == "skillguard: not an audit log: not a valid record\n"
    path.write_text("")
    code, out, err = run(capsys, "audit", "summarize", str(path))
    assert (code, out, err) == (6, "", "skillguard: not an audit log: not an audit log: empty\n")


@pytest.mark.parametrize("since", ["yesterday", "2026-13-01", "", "2026-11-30T25:00"])
def test_t55_since_must_be_an_iso_8601_time(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, since: str
) -> None:
    audit_log(tmp_path / "a.jsonl", 2)
    code, out, err = run(capsys, "audit", "summarize", str(tmp_path / "a.jsonl"), "--since", since)
    assert (code, out) == (2, "")
    assert "since is not an ISO 8601 time" in err


def test_t55_summarize_filters_by_time_and_agent(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    audit_log(tmp_path / "a.jsonl", 4)
    log = str(tmp_path / "a.jsonl")
    counted = "counted: {} records (every record but log_created; {})\n"
    _, out, _ = run(capsys, "audit", "summarize", log, "--since", "2000-01-01")
    assert out.splitlines(keepends=True)[:2] == [
        "intact: 5 records\n",
        counted.format(4, "--since 2000-01-01"),
    ]
    _, out, _ = run(capsys, "audit", "summarize", log, "--since", "9999-01-01T00:00Z")
    assert out.splitlines(keepends=True)[1] == counted.format(0, "--since 9999-01-01T00:00Z")
    _, out, _ = run(capsys, "audit", "summarize", log, "--agent", "nobody")
    assert out.splitlines(keepends=True)[1] == counted.format(0, "--agent nobody")


def test_t14_a_closed_pipe_ends_the_command_with_141(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for index in range(300):
        write_skill(tmp_path / f"s{index}", GOOD.format(name=f"s{index}"))
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first line
    stdout = os.fdopen(write_end, "w")
    monkeypatch.setattr(sys, "stdout", stdout)
    try:
        assert main(["discover", str(tmp_path)]) == 141
    finally:
        stdout.close()


def test_t52_summarize_lists_the_latest_denials_and_says_how_many_more(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    audit_log(tmp_path / "a.jsonl", 2010)  # every other record is a denial
    code, out, _ = run(capsys, "audit", "summarize", str(tmp_path / "a.jsonl"))
    assert code == 0
    assert "(5 earlier denials not listed: narrow with --since or --agent)\n" in out
    assert out.count("\ndenied ") == 1000


def test_t190_summarize_lists_the_largest_names_and_what_it_left_out(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from skillguard.audit import AuditLog, Auditor

    path = tmp_path / "a.jsonl"
    auditor = Auditor(AuditLog(path))
    for index in range(45):  # 45 agents: 40 listed, 5 left out, every count exact
        for _ in range(1 + (index < 2)):
            auditor.emit("load_granted", agent=f"agent-{index:02d}", decision="allow")
    code, out, _ = run(capsys, "audit", "summarize", str(path))
    assert code == 0
    agents = next(line for line in out.splitlines() if line.startswith("by agent: "))
    assert agents.startswith("by agent: agent-00=2, agent-01=2, agent-02=1, ")
    assert agents.endswith(", agent-39=1; and 5 other names: 5 records")
    # Past 1,000 names a table is approximate, and says so.
    for index in range(1100):
        auditor.emit("load_denied", agent="flood", skill=f"s{index}", decision="deny")
    code, out, _ = run(capsys, "audit", "summarize", str(path))
    skills = next(line for line in out.splitlines() if line.startswith("by skill"))
    assert skills.startswith(
        "by skill (approximate, over 1000 names: a range is the least and the most a name "
        "can hold): "
    )
    # The 100 names that came last took the places of the first 100, whose one record
    # each they may hold: each of them counts 1 to 2, the 40 listed ones among them.
    assert "): s1000=1 to 2, s1001=1 to 2, " in skills
    assert skills.endswith("; and more than 960 other names: 1020 to 1060 records")
    code, out, _ = run(capsys, "audit", "summarize", str(path), "--format", "json")
    document = json.loads(out)
    document = document["total"]
    assert len(document["by_skill"]) == 40
    assert document["tables"]["by_skill"]["exact"] is False
    assert document["tables"]["by_skill"]["records"] == 1100
    assert document["tables"]["by_agent"]["names"] == 46
    assert document["by_agent"]["flood"] == 1100


def test_t53_load_refuses_an_empty_audit_key_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "key").write_bytes(b" \n")
    code, _, err = run(
        capsys,
        "load",
        "--policy",
        str(tmp_path / "policy.yaml"),
        "--agent",
        "a",
        "--audit-log",
        str(tmp_path / "a.jsonl"),
        "--audit-key-file",
        str(tmp_path / "key"),
        "notes",
    )
    assert (code, err) == (2, "skillguard: [usage/bad_argument] the audit key file is empty\n")
    assert not (tmp_path / "a.jsonl").exists()


def test_t42_validate_and_discover_print_no_c1_control_or_del(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    write_skill(tmp_path / "csi\x9b2J\x85nel\x7f", GOOD.format(name="x"))
    write_skill(tmp_path / "docs\U000e0069\U000e0067" / "tagged", GOOD.format(name="tagged"))
    for command in (["validate"], ["validate", "--format", "json"], ["discover"]):
        _, out, err = run(capsys, *command, str(tmp_path))
        for stream in (out, err):
            assert not any(ch in stream for ch in "\x1b\x9b\x85\x7f\U000e0069")
    _, out, _ = run(capsys, "discover", str(tmp_path))
    assert "docs[U+E0069][U+E0067]: containment/hidden_character" in out
    assert "csi[U+009B]2J[U+0085]nel[U+007F]: containment/bad_name" in out


def test_t41_validate_shows_where_a_body_hides_text(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    write_skill(tmp_path / "demo", "---\nname: demo\ndescription: d\n---\n\nok cat\u202egpj\n")
    code, out, _ = run(capsys, "validate", str(tmp_path))
    assert code == 1
    assert "error malformed/forbidden_character: line 6, column 7:" in out
    assert "\u202e" not in out
    code, out, _ = run(capsys, "validate", "--profile", "compat", str(tmp_path))
    assert code == 0
    assert "warning hidden_character: line 6, column 7:" in out


# -- validate: every error with its place, and the options for CI ------------------------


def test_each_broken_example_reports_all_its_errors_with_line_and_column(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, document = run_json(capsys, str(EXAMPLES))
    assert code == 1
    errors = {
        r["skill"]: [(e["code"], e.get("line"), e.get("column")) for e in r["errors"]]
        for r in document["results"]
        if not r["ok"]
    }
    assert errors == {
        "broken-alias-bomb": [("yaml_anchor", 4, 4)],
        "broken-duplicate-key": [("duplicate_key", 5, 1)],
        "broken-hidden-text": [("forbidden_character", 3, 1)],
        "broken-name-mismatch": [("name_mismatch", 2, 1)],
        "broken-no-fence": [("no_opening_fence", 1, 1)],
        "broken-several-fields": [
            ("invalid_name", 2, 1),
            ("empty_field", 3, 1),
            ("field_too_long", 4, 1),
        ],
        # A symlinked SKILL.md has no line: no file was read.
        "broken-symlink": [("symlink", None, None)],
        # Seed 002's example needs --namespaces, and compat for its compatibility mapping.
        "deploy-to-staging": [("invalid_name", 2, 1), ("wrong_type", 11, 1)],
    }
    for result in document["results"]:
        for error in result["errors"]:
            if "line" in error:
                assert error["file"].endswith("/SKILL.md")


def test_quiet_prints_failures_only(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    write_skill(tmp_path / "good", "---\nname: good\ndescription: d\nauthor: me\n---\n")
    write_skill(tmp_path / "bad", "---\nname: bad\n---\n")
    code, out, _ = run(capsys, "validate", "--quiet", str(tmp_path))
    assert code == 1
    assert out.splitlines() == [
        f"FAILED {tmp_path / 'bad'} (bad)",
        "    error malformed/missing_field: the required field 'description' is missing",
        "2 checked, 1 ok, 1 failed, 0 skipped",
    ]


def test_no_warnings_leaves_warnings_out(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    write_skill(tmp_path / "good", "---\nname: good\ndescription: d\nauthor: me\n---\n")
    code, document = run_json(capsys, "--no-warnings", str(tmp_path))
    assert code == 0
    assert document["results"][0]["warnings"] == []
    assert document["results"][0]["ok"] is True


def test_unknown_fields_are_one_warning_per_skill(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    write_skill(tmp_path / "x", "---\nname: x\nauthor: a\ndescription: d\nhome: h\nrisk: r\n---\n")
    code, document = run_json(capsys, str(tmp_path))
    assert code == 0
    [warning] = document["results"][0]["warnings"]
    assert warning["code"] == "unknown_field"
    assert warning["keys"] == ["author", "home", "risk"]
    assert warning["line"] == 3
    assert warning["message"] == "unknown fields 'author', 'home', 'risk' kept as inert data"


def test_fail_on_skipped_fails_a_run_with_a_too_deep_skill(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    write_skill(tmp_path / "top", GOOD.format(name="top"))
    write_skill(tmp_path / "a" / "b" / "deep", GOOD.format(name="deep"))
    code, document = run_json(capsys, "--max-depth", "1", str(tmp_path))
    assert code == 0
    assert document["summary"]["skipped"] == 1
    assert [entry["code"] for entry in document["skipped"]] == ["too_deep"]
    code, document = run_json(capsys, "--max-depth", "1", "--fail-on-skipped", str(tmp_path))
    assert code == 1
    assert document["summary"] == {"checked": 1, "ok": 1, "failed": 0, "skipped": 1}


def test_every_validate_option_has_help() -> None:
    parser = build_parser()
    subparsers = next(action for action in parser._actions if action.dest == "command")
    assert isinstance(subparsers.choices, dict)
    validate = subparsers.choices["validate"]
    for action in validate._actions:
        assert action.help, action.dest


# -- what a hostile skill author can still slip past validate (threats T108-T111) ------


@pytest.mark.parametrize("tooling", ["node_modules", ".git"])
def test_t108_a_tooling_folder_that_is_itself_a_skill_folder_fails_the_run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, tooling: str
) -> None:
    skills = tmp_path / ".claude" / "skills"
    write_skill(skills / "good", GOOD.format(name="good"))
    write_skill(skills / tooling, GOOD.format(name="good"))
    write_skill(skills / tooling / "dep", GOOD.format(name="dep"))
    code, document = run_json(capsys, str(tmp_path))
    assert code == 1
    failed = [r for r in document["results"] if not r["ok"]]
    assert [(r["path"], r["errors"][0]["code"]) for r in failed] == [
        (str(skills / tooling), "name_mismatch")
    ]
    # Once it is a skill folder, a SKILL.md below it is one of its files, as anywhere.
    assert [(s["path"], s["code"]) for s in document["skipped"]] == [
        (str(skills / tooling / "dep"), "nested_skill")
    ]
    # Past --max-depth a tooling folder is not looked at, nor reported as too deep.
    code, document = run_json(capsys, "--max-depth", "2", "--fail-on-skipped", str(tmp_path))
    assert [s["path"] for s in document["skipped"]] == [str(skills / "good")]


def test_t109_a_folder_whose_name_hides_characters_fails_the_run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    write_skill(tmp_path / "good", GOOD.format(name="good"))
    write_skill(tmp_path / "pdf\u202efdp", GOOD.format(name="pdf"))
    code, document = run_json(capsys, str(tmp_path))
    assert code == 1
    failed = [r for r in document["results"] if not r["ok"]]
    assert [(r["errors"][0]["kind"], r["errors"][0]["code"]) for r in failed] == [
        ("containment", "hidden_character")
    ]
    assert "\u202e" not in json.dumps(document, ensure_ascii=False)
    code, out, _ = run(capsys, "validate", str(tmp_path))
    assert code == 1
    assert "FAILED" in out
    assert "\u202e" not in out


@pytest.mark.parametrize("kind", ["fifo", "hardlink"])
def test_t94_a_case_variant_that_is_a_fifo_or_hard_link_fails_the_run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, kind: str
) -> None:
    write_skill(tmp_path / "good", GOOD.format(name="good"))
    misnamed = tmp_path / "misnamed"
    misnamed.mkdir()
    if kind == "fifo":
        os.mkfifo(misnamed / "skill.md")
    else:
        (tmp_path / "elsewhere.md").write_text(GOOD.format(name="misnamed"))
        os.link(tmp_path / "elsewhere.md", misnamed / "skill.md")
    code, document = run_json(capsys, str(tmp_path))
    assert code == 1
    failed = [r for r in document["results"] if not r["ok"]]
    assert [(r["path"], r["errors"][0]["code"]) for r in failed] == [
        (str(misnamed), "wrong_case_skill_file")
    ]


@pytest.mark.parametrize("given", ["folder", "file"])
def test_a_refused_skill_md_does_not_hide_the_other_problems_of_its_folder(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, given: str
) -> None:
    folder = tmp_path / "demo"
    (folder / "scripts").mkdir(parents=True)
    (folder / "SKILL.md").symlink_to("/etc/hostname")
    (folder / "scripts" / "planted").symlink_to("/etc/passwd")
    os.mkfifo(folder / "pipe")
    path = tmp_path if given == "folder" else folder / "SKILL.md"
    code, document = run_json(capsys, str(path))
    assert code == 1
    [result] = document["results"]
    assert [(e["code"], e["message"].split(":")[0]) for e in result["errors"]] == [
        ("symlink", "SKILL.md is a symlink"),
        ("special_file", "pipe"),
        ("symlink", "scripts/planted"),
    ]
    # Each error points at its own entry, which is what a pull request's diff shows.
    assert [e["file"] for e in result["errors"]] == [
        str(folder / "SKILL.md"),
        str(folder / "pipe"),
        str(folder / "scripts" / "planted"),
    ]


def test_a_warning_about_a_place_in_the_body_carries_its_line_and_column(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    write_skill(tmp_path / "demo", "---\nname: demo\ndescription: d\n---\n\nok cat\u202egpj\n")
    code, document = run_json(capsys, "--profile", "compat", str(tmp_path))
    assert code == 0
    [warning] = document["results"][0]["warnings"]
    assert (warning["code"], warning["line"], warning["column"]) == ("hidden_character", 6, 7)
    assert warning["file"] == str(tmp_path / "demo" / "SKILL.md")
    code, out, _ = run(
        capsys, "validate", "--format", "github", "--profile", "compat", str(tmp_path)
    )
    assert ",line=6,col=7,title=skillguard hidden_character::" in out


def test_t111_a_link_planted_in_a_skill_is_annotated_on_the_link_itself(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    folder = write_skill(tmp_path / "demo", GOOD.format(name="demo"))
    (folder / "scripts").mkdir()
    (folder / "scripts" / "planted").symlink_to("/etc/passwd")
    code, out, _ = run(capsys, "validate", "--format", "github", str(tmp_path))
    assert code == 1
    planted = str(folder / "scripts" / "planted").replace(":", "%3A").replace(",", "%2C")
    assert f"::error file={planted},title=skillguard symlink::" in out


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(hostile_workspaces())
def test_t93_no_hostile_workspace_makes_a_ci_command_fail_internally(tree: Workspace) -> None:
    # validate turns an unexpected exception into a result of code "bug", and the
    # other commands into "internal error": neither may ever be printed.
    with tempfile.TemporaryDirectory() as scratch:
        workspace = Path(scratch) / "ws"
        workspace.mkdir()
        write_workspace(tree, workspace)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["validate", "--format", "json", "--max-depth", "20", str(workspace)])
        assert code in (0, 1), err.getvalue()
        codes = {e["code"] for r in json.loads(out.getvalue())["results"] for e in r["errors"]}
        assert "bug" not in codes
        for top in sorted(os.listdir(workspace)):
            for command in ("read-properties", "to-prompt"):
                err = io.StringIO()
                with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
                    code = main([command, str(workspace / top)])
                assert code in (0, 1), err.getvalue()
                assert "internal error" not in err.getvalue()


@pytest.mark.parametrize("profile", ["strict", "compat"])
def test_an_unquoted_argument_hint_passes_validate_with_a_warning(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, profile: str
) -> None:
    folder = write_skill(
        tmp_path / "search", "---\nname: search\ndescription: d\nargument-hint: [query]\n---\n"
    )
    code, document = run_json(capsys, "--profile", profile, str(folder))
    assert code == 0
    assert [(w["code"], w["line"]) for w in document["results"][0]["warnings"]] == [
        ("argument_hint_list", 4)
    ]
