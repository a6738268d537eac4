"""The end of each command's ``--help``: its exit statuses and one example.

Every command's help closes with the same two paragraphs, ``exit status:`` and
``example:``, kept here in one table so that they are read side by side and a test
(tests/cli/test_help.py) holds every command of the parser to having them.
"""

from __future__ import annotations

import argparse

__all__ = ["HelpFormatter", "add_epilogs", "epilog"]

# The statuses every command shares, after its own.
_COMMON = (
    "  2    a usage error: a bad option, or an operator's file (policy, key) refused\n"
    "  130  interrupted (Ctrl-C)\n"
    "  141  the reader of the output went away (| head)"
)
_REFUSAL = "  1    a refusal or failure, said in one line on stderr\n"

_AUDIT_STATUSES = (
    "  0    intact (summarize, export: the records of a verified log)\n"
    "  1    tampered (the first bad line is named), or a FILE that cannot be read\n"
    "  3    the log is keyed and no --key-file was given: nothing was checked\n"
    "  4    the log is keyed with another key than --key-file's\n"
    "  5    a torn tail: the last line has no newline (audit repair mends it)\n"
    "  6    not an audit log\n"
)

# (command words): (its own statuses, one example).
_EPILOGS: dict[tuple[str, ...], tuple[str, str]] = {
    (): (
        "  0    done\n" + _REFUSAL,
        "skillguard validate .claude/skills",
    ),
    ("validate",): (
        "  0    every result is ok (or --exit-zero)\n  1    a skill failed\n",
        "skillguard validate --format github --fail-on-skipped .claude/skills",
    ),
    ("discover",): (
        "  0    listed (what was skipped is a result, not a failure)\n",
        "skillguard discover --format json .agents/skills ~/.agents/skills",
    ),
    ("catalog",): (
        "  0    printed (nothing at all when the agent may load nothing)\n" + _REFUSAL,
        "skillguard catalog --policy policy.yaml --agent planner --format json",
    ),
    ("load",): (
        "  0    the activation text printed\n" + _REFUSAL,
        "skillguard load --policy policy.yaml --agent planner --approve prompt pdf-tools",
    ),
    ("trust",): (
        "  0    done\n" + _REFUSAL,
        "skillguard trust show pdf-tools --project .",
    ),
    ("trust", "list"): (
        "  0    listed\n" + _REFUSAL,
        "skillguard trust list --trust-store trust.json",
    ),
    ("trust", "show"): ("  0    shown\n" + _REFUSAL, "skillguard trust show pdf-tools --full"),
    ("trust", "add"): (
        "  0    pinned\n" + _REFUSAL,
        "skillguard trust add pdf-tools --trust-store trust.json --project .",
    ),
    ("trust", "revoke"): (
        "  0    removed\n" + _REFUSAL,
        "skillguard trust revoke pdf-tools --trust-store trust.json",
    ),
    ("audit",): (
        _AUDIT_STATUSES,
        "skillguard audit verify audit.jsonl --key-file audit.key --expect-records 120",
    ),
    ("agent",): (
        "  0    done\n  1    an agent failed, was refused or drifted\n",
        "skillguard agent validate agents/plan",
    ),
    ("agent", "context"): (
        (
            "  0    the envelope, status ok\n"
            "  1    AGENT_NOT_FOUND, AGENT_FILE_UNREADABLE or AGENT_PARSE_FAILED\n"
            "  2    MISSING_ARGUMENT: --agent absent or empty, or any bad option\n"
            "Every outcome is one line of JSON on stdout; nothing on stderr."
        ),
        "skillguard agent context --agent devops-engineer --repo .",
    ),
    ("agent", "compose"): (
        "  0    everything composed (and nothing drifted)\n  1    an agent failed or drifted\n",
        "skillguard agent compose --harness copilot --output .github/agents agents",
    ),
    ("agent", "validate"): (
        "  0    every agent directory is valid\n  1    an agent failed\n",
        "skillguard agent validate --format json agents/plan agents/ralph",
    ),
    ("agent", "install"): (
        (
            "  0    installed (with --check: nothing drifted)\n"
            "  1    a finding refused it, or something drifted\n"
        ),
        "skillguard agent install --harness claude --dest ~/.claude/agents agents",
    ),
    ("agent", "uninstall"): (
        "  0    removed what the manifest lists\n  1    a finding refused it\n",
        "skillguard agent uninstall --dest ~/.claude/agents",
    ),
    ("select",): (
        "  0    selected (whether or not anything matched)\n" + _REFUSAL,
        'skillguard select --policy policy.yaml --agent planner "summarise this PDF"',
    ),
    ("read-properties",): (
        "  0    printed\n" + _REFUSAL,
        "skillguard read-properties skills/pdf-tools",
    ),
    ("to-prompt",): (
        "  0    printed\n" + _REFUSAL,
        "skillguard to-prompt skills/pdf-tools skills/code-review",
    ),
    ("mcp",): (
        "  0    the client closed the session\n  2    a usage error, or the mcp extra is missing\n",
        "skillguard mcp --policy policy.yaml --agent planner --embedded app/skills --project .",
    ),
}


def epilog(words: tuple[str, ...]) -> str:
    """The closing paragraphs of the help of ``skillguard <words>``: its exit statuses
    and one example. A command without its own entry has its parent command's."""
    while words not in _EPILOGS:
        words = words[:-1]
    statuses, example = _EPILOGS[words]
    common = "" if "\n  2 " in f"\n{statuses}" else _COMMON
    if common and not statuses.endswith("\n"):
        statuses += "\n"
    return f"exit status:\n{statuses}{common}\n\nexample:\n  {example}"


class HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter, except that the closing ``exit status:`` and ``example:``
    paragraphs keep their lines (argparse would run them together into one)."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith("exit status:\n"):
            return "".join(indent + line + "\n" for line in text.splitlines()).rstrip("\n")
        return super()._fill_text(text, width, indent)


def add_epilogs(parser: argparse.ArgumentParser, words: tuple[str, ...] = ()) -> None:
    """Give *parser* and every command beneath it its exit statuses and example."""
    parser.epilog = epilog(words)
    parser.formatter_class = HelpFormatter
    for action in parser._actions:  # noqa: SLF001 - argparse keeps its subcommands here
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            for name, sub in action.choices.items():
                add_epilogs(sub, (*words, name))
