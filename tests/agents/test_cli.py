"""``skillguard agent context``: one line of ASCII JSON on stdout, nothing on stderr."""

from __future__ import annotations

import argparse
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from skillguard import (
    AllowPolicy,
    ApprovalError,
    ApprovalRequest,
    Decision,
    Loader,
    MalformedSkillError,
    SkillContainmentError,
    SkillError,
    SkillNotFoundError,
    SkillUsageError,
    TrustStore,
)
from skillguard._cli.agent_context import run_agent_context
from skillguard._cli.main import main
from skillguard._cli.parser import build_parser
from skillguard.agents import AgentNotFoundError, agent_error_code

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "agents"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["agent", "context", *args])
    out, err = capsys.readouterr()
    assert err == ""  # the seed's "no prose output"
    assert "\n" not in out
    assert out.isascii()
    return code, out


def pinned(tmp_path: Path, repo: Path, agent: str, profile: str = "strict") -> str:
    """A trust store pinning *agent* of *repo*, as a human answering "pin" would."""
    store = TrustStore(tmp_path / "trust.json")

    def pin(request: ApprovalRequest) -> Decision:
        del request
        return Decision(approved=True, by="tester", scope="pin")

    loader = Loader(
        AllowPolicy.from_mapping({"agents": {"cli": {"skills": []}}}),
        approver=store.approver(pin),
        profile=profile,  # type: ignore[arg-type]
    )
    loader.bind("cli").agent_context(agent, repo=repo)
    return str(store.path)


def test_success_is_one_line_of_json(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    store = pinned(tmp_path, EXAMPLE, "devops-engineer")
    code, out = run(
        capsys, "--agent", "devops-engineer", "--repo", str(EXAMPLE), "--trust-store", store
    )
    assert code == 0
    envelope = json.loads(out)
    assert envelope["status"] == "ok"
    assert envelope["source_path"] == "src/agents/devops-engineer.md"
    assert envelope["tools"] == ["Read", "Grep", "Bash", "Write"]
    assert envelope["rules"][1] == (
        "NO-GO if a pipeline deploys without a passing test stage, or skips the image scan."
    )


@pytest.mark.parametrize(
    "args",
    [(), ("--agent", ""), ("--agent",), ("--agent", "x", "--bogus"), ("--harness", "vim")],
)
def test_t76_a_missing_argument_is_an_envelope_not_usage_text(
    capsys: pytest.CaptureFixture[str], args: tuple[str, ...]
) -> None:
    code, out = run(capsys, "--repo", str(EXAMPLE), *args)
    assert code == 2
    envelope = json.loads(out)
    assert list(envelope) == ["status", "code", "message"]
    assert (envelope["status"], envelope["code"]) == ("error", "MISSING_ARGUMENT")


def test_t76_errors_are_envelopes(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out = run(capsys, "--agent", "nobody", "--repo", str(EXAMPLE), "--team", "t")
    assert code == 1
    assert json.loads(out) == {
        "status": "error",
        "code": "AGENT_NOT_FOUND",
        "message": "Agent 'nobody' not found. Searched: src/agents/, t/src/agents/, "
        ".team-development/src/agents/",
    }
    (tmp_path / "src" / "agents").mkdir(parents=True)
    (tmp_path / "src" / "agents" / "x.md").write_text(
        "---\nname: x\ndescription: SECRET-VALUE\nname: y\n---\n"
    )
    code, out = run(capsys, "--agent", "x", "--repo", str(tmp_path))
    envelope = json.loads(out)
    assert (code, envelope["code"]) == (1, "AGENT_PARSE_FAILED")
    assert "SECRET-VALUE" not in out
    assert envelope["message"].endswith("(line 4, column 1)")
    code, out = run(capsys, "--agent", "../x\u202e.md", "--repo", str(tmp_path))
    message = json.loads(out)["message"]
    assert json.loads(out)["code"] == "AGENT_FILE_UNREADABLE"
    assert code == 1
    # The hostile name is escaped in the message itself, not only by the JSON encoding.
    assert "\u202e" not in message
    assert "\\u202e" in message


def test_t76_hidden_text_is_escaped_in_the_cli_envelope(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    (repo / "src" / "agents").mkdir(parents=True)
    (repo / "src" / "agents" / "x.md").write_text("---\nname: x\ndescription: d\n---\na\u202eb\n")
    code, out = run(capsys, "--agent", "x", "--repo", str(repo))
    assert (code, json.loads(out)["code"]) == (1, "AGENT_PARSE_FAILED")
    store = pinned(tmp_path, repo, "x", "compat")  # outside the repository (T202)
    code, out = run(
        capsys,
        "--agent",
        "x",
        "--repo",
        str(repo),
        "--profile",
        "compat",
        "--trust-store",
        store,
    )
    assert code == 0
    assert json.loads(out)["full_body"] == "a[U+202E]b\n"


def test_a_bug_is_an_envelope_not_a_traceback(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from skillguard._cli import agent_context as _command

    def broken(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError

    monkeypatch.setattr(_command, "agent_context", broken)
    code, out = run(capsys, "--agent", "x")
    assert (code, json.loads(out)["code"]) == (1, "INTERNAL_ERROR")


def test_the_console_script_writes_no_trailing_newline() -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "skillguard", "agent", "context", "--repo", str(EXAMPLE)],
        capture_output=True,
        check=False,
    )
    assert completed.returncode == 2
    assert completed.stderr == b""
    assert completed.stdout.startswith(b'{"status":"error","code":"MISSING_ARGUMENT"')
    assert completed.stdout.endswith(b"}")


def test_agent_appears_in_the_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    assert "agent" in capsys.readouterr().out


def _agent_parsers() -> dict[str, argparse.ArgumentParser]:
    """``agent`` and each of its subcommands, as registered in the CLI's parser."""

    def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
        action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        return dict(action.choices)

    agent = subcommands(build_parser())["agent"]
    return {"agent": agent, **{f"agent {k}": v for k, v in subcommands(agent).items()}}


def test_every_agent_subcommand_and_option_has_help() -> None:
    parsers = _agent_parsers()
    assert sorted(parsers) == [
        "agent",
        "agent compose",
        "agent context",
        "agent install",
        "agent uninstall",
        "agent validate",
    ]
    for name, parser in parsers.items():
        assert parser.description, name
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                # The subcommands' list: each of them has its own help line.
                assert all(choice.help for choice in action._choices_actions), name
            else:
                assert action.help, (name, action.dest)


def test_agent_context_help_is_the_registered_help(capsys: pytest.CaptureFixture[str]) -> None:
    # ``agent context`` runs its own parser (its errors are envelopes); its --help is the
    # same text as the registered parser's, like every other command's help.
    expected = _agent_parsers()["agent context"].format_help()
    for words in (["--help"], ["-h"], ["--agent", "x", "--help"]):
        assert main(["agent", "context", *words]) == 0
        out, err = capsys.readouterr()
        assert (out, err) == (expected, "")
    flat = " ".join(expected.split())
    assert "one line of JSON on stdout, for success and for every error alike" in flat
    assert "--profile {strict,compat} strict (the default) refuses" in flat


def test_agent_context_help_goes_to_the_stream_given() -> None:
    out = io.StringIO()
    assert run_agent_context(["--help"], out) == 0
    assert out.getvalue().startswith("usage: skillguard agent context")


def test_the_docs_envelope_table_matches_the_code() -> None:
    readme = (ROOT / "docs" / "tutorials" / "agent-files.md").read_text()
    rows = re.findall(r"^\| `(\w+)` / (.+?) \| `([A-Z_]+)` \|$", readme, flags=re.MULTILINE)
    assert len(rows) == 7
    classes: dict[str, type[SkillError]] = {
        "approval": ApprovalError,
        "malformed": MalformedSkillError,
        "containment": SkillContainmentError,
        "not_found": SkillNotFoundError,
        "usage": SkillUsageError,
    }
    seen = set()
    for kind, codes, envelope in rows:
        named = re.findall(r"`(\w+)`", codes)
        for code in named or ["some_other_code"]:
            error_class = AgentNotFoundError if code == "agent_not_found" else classes[kind]
            assert agent_error_code(error_class(code, "r")) == envelope, (kind, code)
        seen.add(envelope)
    assert seen == {
        "AGENT_NOT_FOUND",
        "AGENT_FILE_UNREADABLE",
        "AGENT_PARSE_FAILED",
        "MISSING_ARGUMENT",
    }
