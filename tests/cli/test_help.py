"""Every command's ``--help`` ends with its exit statuses and one example that runs."""

from __future__ import annotations

import argparse
import io
import shlex
from typing import TYPE_CHECKING

import pytest

from skillguard._cli.agent_context import run_agent_context
from skillguard._cli.main import main
from skillguard._cli.parser import build_parser

if TYPE_CHECKING:
    from collections.abc import Iterator


def _parsers(
    parser: argparse.ArgumentParser, words: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every command and sub-command of the CLI, with its words, the top level first."""
    yield words, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, (*words, name))


COMMANDS = list(_parsers(build_parser()))


def _closing(help_text: str) -> tuple[list[str], str]:
    """The exit statuses and the example at the end of *help_text*."""
    assert "\nexit status:\n" in help_text, help_text
    statuses, example = help_text.split("\nexit status:\n", 1)[1].split("\n\nexample:\n", 1)
    codes = [line.split()[0] for line in statuses.splitlines() if line.startswith("  ")]
    return codes, example.strip()


@pytest.mark.parametrize(
    ("words", "parser"), COMMANDS, ids=[" ".join(w) or "skillguard" for w, _ in COMMANDS]
)
def test_every_help_lists_exit_statuses_and_an_example_that_parses(
    words: tuple[str, ...], parser: argparse.ArgumentParser
) -> None:
    codes, example = _closing(parser.format_help())
    assert codes[0] == "0"
    assert "2" in codes  # a usage error, for every command
    argv = shlex.split(example)
    assert argv[0] == "skillguard"
    # The example is of this command (the top level's: of any), and the parser takes it.
    assert tuple(argv[1 : 1 + len(words)]) == words
    args = build_parser(argv[1:]).parse_args(argv[1:])
    assert args.command == (words[0] if words else argv[1])


def test_the_help_printed_by_the_command_ends_with_the_example(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["load", "--help"]) == 0
    printed = capsys.readouterr().out
    example = "skillguard load --policy policy.yaml --agent planner --approve prompt pdf-tools"
    assert printed.rstrip().endswith(f"example:\n  {example}")
    assert "\n  1    a refusal or failure, said in one line on stderr\n" in printed


def test_agent_context_help_has_its_envelope_statuses() -> None:
    out = io.StringIO()
    assert run_agent_context(["--help"], out) == 0
    codes, example = _closing(out.getvalue())
    assert codes == ["0", "1", "2"]
    assert example == "skillguard agent context --agent devops-engineer --repo ."
