"""The ``skillguard`` argument parser: every command, its options and their help.

The help texts are part of the interface (README.md's synopses are checked against
them). A usage error is exit 2 with one line and no traceback. Building the parser
imports no command's implementation: ``--version`` and ``--help`` stay cheap. The
options of ``agent`` and of ``trust`` name the agent line's harness presets, so they are
added only when a run names one of those commands (or for the whole tree, which the
docs and the tests walk).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any, NoReturn

from skillguard._cli.epilogs import add_epilogs
from skillguard._cli.scan import MAX_VALIDATE_FOLDERS
from skillguard._core.limits import DEFAULT_LIMITS
from skillguard._skills.truststore import is_digest

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["DEFAULT_MAX_DEPTH", "build_parser"]

EXIT_USAGE = 2
DEFAULT_MAX_DEPTH = 8
_NAMESPACES_HELP = "accept a namespaced name, namespace/short-name"
_AGENT_HELP = "resolve, compose and validate agent definition files"
_AGENT_DESCRIPTION = (
    "Resolve, compose and validate agent definition files: the agent-context envelope "
    "(the x-internal-load-agent-context contract) and composable agent directories "
    "(agent-cortex)."
)


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is exit 2 with one line and no traceback."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 or more")
    return value


def _digest(text: str) -> str:
    if not is_digest(text):
        raise argparse.ArgumentTypeError("a DIGEST is a sha256 of 64 lowercase hex digits")
    return text


def _path(text: str) -> str:
    if not text:
        raise argparse.ArgumentTypeError("a PATH must not be empty")
    return text


def build_parser(words: Sequence[str] | None = None) -> _Parser:
    """The parser of every command; given the *words* of a run, the options of ``agent``
    and ``trust`` (which need the agent line) only when the words name that command."""
    named = None if words is None else next((w for w in words if not w.startswith("-")), "")
    parser = _Parser(
        prog="skillguard",
        description="Fail-secure loading and validation of Agent Skills (SKILL.md).",
    )
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    commands = parser.add_subparsers(dest="command", parser_class=_Parser)
    validate = commands.add_parser(
        "validate",
        help="check SKILL.md files, skill folders, or every skill under a root",
        description=(
            "Check each PATH: a SKILL.md file, a skill folder, or a root under which "
            "every folder holding a SKILL.md is checked (.git and node_modules skipped)."
        ),
    )
    validate.add_argument(
        "--profile",
        choices=("strict", "compat"),
        default="strict",
        help="strict (the default) refuses what compat accepts with a warning",
    )
    validate.add_argument("--namespaces", action="store_true", help=_NAMESPACES_HELP)
    validate.add_argument(
        "--format",
        choices=("text", "json", "github", "sarif"),
        default="text",
        help=(
            "text (the default); json; github: GitHub Actions annotations; "
            "sarif: a SARIF 2.1.0 log for code scanning"
        ),
    )
    validate.add_argument(
        "--max-depth",
        type=_non_negative,
        default=DEFAULT_MAX_DEPTH,
        help=f"how many folder levels below a root to search (default {DEFAULT_MAX_DEPTH})",
    )
    validate.add_argument(
        "--max-entries",
        type=_positive,
        default=DEFAULT_LIMITS.max_dir_entries,
        help=(
            "entries read from one folder, the first ones by name; a folder with more "
            f"fails the run (default {DEFAULT_LIMITS.max_dir_entries})"
        ),
    )
    validate.add_argument(
        "--max-folders",
        type=_positive,
        default=MAX_VALIDATE_FOLDERS,
        help=(
            "folders searched below one PATH, in name order; a PATH with more fails "
            f"the run (default {MAX_VALIDATE_FOLDERS})"
        ),
    )
    validate.add_argument(
        "--quiet",
        action="store_true",
        help="print failures only: no line for a skill that passed, no warnings",
    )
    validate.add_argument(
        "--no-warnings", action="store_true", help="leave warnings out of the output"
    )
    validate.add_argument(
        "--fail-on-skipped",
        action="store_true",
        help="fail the run when any entry was skipped (a too-deep folder, for example)",
    )
    validate.add_argument(
        "--exit-zero",
        action="store_true",
        help="exit 0 even when a skill fails (findings are still printed): for report-only jobs",
    )
    validate.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        type=_path,
        help="a SKILL.md file, a skill folder, or a folder to search for skills",
    )

    found = commands.add_parser(
        "discover",
        help="list the skills of ordered roots, the shadowed ones and everything skipped",
        description=(
            "Discover skills in each ROOT, in order (the first root holding a name wins). "
            "Without ROOT, the conventional roots of --project (default: the current "
            "folder) and of the user are searched."
        ),
    )
    found.add_argument(
        "--format", choices=("text", "json"), default="text", help="text (the default) or json"
    )
    found.add_argument(
        "--profile",
        choices=("strict", "compat"),
        default="strict",
        help="the parser profile: strict (the default) or compat",
    )
    found.add_argument("--namespaces", action="store_true", help=_NAMESPACES_HELP)
    found.add_argument("--project", type=_path, help="the project whose roots to search")
    found.add_argument(
        "--trust-link-target",
        action="append",
        default=[],
        type=_path,
        metavar="DIR",
        help="follow a symlinked skill folder whose target is inside DIR (repeatable)",
    )
    found.add_argument(
        "roots",
        nargs="*",
        metavar="ROOT",
        type=_path,
        help="a folder of skill folders, searched in order (default: the conventional roots)",
    )
    _add_swarm_commands(commands, agent_options=named in (None, "trust"))
    agent = commands.add_parser("agent", help=_AGENT_HELP, description=_AGENT_DESCRIPTION)
    if named in (None, "agent"):
        from skillguard._cli.agent_context import add_agent_actions  # noqa: PLC0415 - the agent line, when it runs

        add_agent_actions(agent)
    _add_select_command(commands)
    _add_skills_ref_commands(commands)
    _add_mcp_command(commands)
    add_epilogs(parser)
    return parser


def _add_skills_ref_commands(commands: Any) -> None:  # noqa: ANN401 - argparse's private type
    """``read-properties`` and ``to-prompt``, the reference tool's commands."""
    read = commands.add_parser(
        "read-properties",
        help="print every frontmatter field of one skill as JSON",
        description="Check the skill at PATH and print its frontmatter fields as JSON.",
    )
    read.add_argument(
        "--profile", choices=("strict", "compat"), default="strict", help="the parser profile"
    )
    read.add_argument("--namespaces", action="store_true", help=_NAMESPACES_HELP)
    read.add_argument("path", metavar="PATH", type=_path, help="a skill folder or its SKILL.md")
    prompt = commands.add_parser(
        "to-prompt",
        help="print the <available_skills> block for the skill folders named",
        description=(
            "Check each skill at PATH and print their <available_skills> block, escaped "
            "like the catalog; nothing is printed if any skill fails."
        ),
    )
    prompt.add_argument(
        "--profile", choices=("strict", "compat"), default="strict", help="the parser profile"
    )
    prompt.add_argument("--namespaces", action="store_true", help=_NAMESPACES_HELP)
    prompt.add_argument(
        "paths", nargs="+", metavar="PATH", type=_path, help="skill folders or their SKILL.md"
    )


def _add_swarm_commands(commands: Any, *, agent_options: bool) -> None:  # noqa: ANN401 - argparse's private type
    def loader_options(command: argparse.ArgumentParser) -> None:
        command.add_argument("--policy", required=True, type=_path, help="the policy file")
        command.add_argument("--agent", required=True, help="the agent to act for")
        command.add_argument("--project", type=_path, help="whose workspace roots to use")
        command.add_argument("--embedded", type=_path, help="a folder of trusted skills")

    catalog = commands.add_parser("catalog", help="the skills an agent may load")
    loader_options(catalog)
    catalog.add_argument(
        "--format", choices=("xml", "json"), default="xml", help="xml (the default) or json"
    )
    catalog.add_argument(
        "--trust-store", type=_path, help="pinned workspace skills show their description"
    )

    load = commands.add_parser("load", help="load one skill for an agent")
    loader_options(load)
    load.add_argument(
        "--approve",
        choices=("deny", "prompt", "trust"),
        default="deny",
        help=(
            "who approves a workspace skill: deny (the default: nobody), prompt (ask on "
            "the terminal), trust (the pins of --trust-store, else ask)"
        ),
    )
    load.add_argument("--trust-store", type=_path, help="pinned approvals (for --approve trust)")
    load.add_argument("--audit-log", type=_path, help="append hash-chained records here")
    load.add_argument("--audit-key-file", type=_path, help="key the audit records (HMAC)")
    load.add_argument("name", metavar="NAME", help="the skill to load")

    trust = commands.add_parser("trust", help="show, pin, list or revoke approvals")
    actions = trust.add_subparsers(dest="action", required=True, parser_class=_Parser)
    listing = actions.add_parser("list", help="every pin of the trust store")
    listing.add_argument("--trust-store", required=True, type=_path, help="the trust store")
    show = actions.add_parser(
        "show",
        help="what approving a workspace skill (or an agent file, --agent) covers: its "
        "digest, files and grants",
    )
    show.add_argument("name", metavar="NAME", nargs="?", help="the workspace skill")
    show.add_argument("--project", type=_path, help="whose workspace roots to use")
    show.add_argument(
        "--full", action="store_true", help="print every file's text too, as the digest covers it"
    )
    if agent_options:
        _agent_trust_options(show)
    add = actions.add_parser(
        "add",
        help="pin a workspace skill (or an agent file, --agent), if its digest is DIGEST "
        "(see 'trust show')",
    )
    add.add_argument("name", metavar="NAME", nargs="?", help="the workspace skill")
    add.add_argument(
        "digest", metavar="DIGEST", nargs="?", type=_digest, help="the digest 'trust show' printed"
    )
    add.add_argument(
        "--digest",
        dest="digest_option",
        metavar="DIGEST",
        type=_digest,
        help="DIGEST, as an option",
    )
    add.add_argument("--trust-store", required=True, type=_path, help="the trust store")
    add.add_argument("--project", type=_path, help="whose workspace roots to use")
    add.add_argument("--by", default="operator", help="who pins")
    if agent_options:
        _agent_trust_options(add)
    revoke = actions.add_parser("revoke", help="remove the pins of a skill or agent file")
    revoke.add_argument(
        "name", metavar="NAME", help="the skill (or agent file's path) whose pins to remove"
    )
    revoke.add_argument("--trust-store", required=True, type=_path, help="the trust store")
    revoke.add_argument("--source", help="only the pin for this skill folder")

    audit = commands.add_parser(
        "audit",
        help="verify, summarize or report on an audit log (an HTML page), repair its"
        " torn tail, or export its verified records; verify, summarize and export take"
        " several logs, one per process or host",
    )
    audit.add_argument(
        "action",
        choices=("verify", "summarize", "report", "repair", "export"),
        help="verify the chain, summarize the log, write its HTML report, move a torn"
        " last line aside and record it, or export the verified records",
    )
    audit.add_argument(
        "file",
        metavar="FILE",
        nargs="+",
        type=_path,
        help="the audit log (verify, summarize, export: several, one per process or host)",
    )
    audit.add_argument(
        "--key-file",
        type=_path,
        action="append",
        help="the HMAC key the log was written with (once for all FILEs, or once per FILE)",
    )
    audit.add_argument(
        "--expect-records",
        type=_non_negative,
        action="append",
        help="verify, report: the record count shipped elsewhere (catches a deleted tail;"
        " once per FILE)",
    )
    audit.add_argument(
        "--expect-log-id",
        metavar="ID",
        action="append",
        help="verify, summarize, report: the log id shipped elsewhere (catches another log"
        " swapped in; once per FILE)",
    )
    audit.add_argument("--agent", help="summarize, report: only this agent")
    audit.add_argument(
        "--since",
        help="summarize, report, export: only records at or after this ISO 8601 time"
        " (UTC if naive)",
    )
    audit.add_argument(
        "--format",
        choices=("text", "json", "jsonl", "ocsf"),
        help="verify, summarize, export: text (the default) or json; export: jsonl (the"
        " default) or ocsf",
    )
    _add_audit_report_options(audit)


def _agent_trust_options(parser: argparse.ArgumentParser) -> None:
    from skillguard._cli.agent_trust import add_agent_trust_options  # noqa: PLC0415 - the agent line, when it runs

    add_agent_trust_options(parser)


def _add_audit_report_options(audit: argparse.ArgumentParser) -> None:
    audit.add_argument(
        "--until", help="report: only records before this ISO 8601 time (UTC if naive)"
    )
    audit.add_argument(
        "--output", type=_path, metavar="FILE", help="report: write the HTML page here"
    )


def _add_select_command(commands: Any) -> None:  # noqa: ANN401 - argparse's private type
    select = commands.add_parser("select", help="the skills an agent needs for a task")
    select.add_argument("--policy", required=True, type=_path, help="the policy file")
    select.add_argument("--agent", required=True, help="the agent to act for")
    select.add_argument("--registry", type=_path, help="the operator's keyword registry")
    select.add_argument("--embedded", type=_path, help="a folder of trusted skills")
    select.add_argument("--project", type=_path, help="whose workspace roots to use")
    select.add_argument(
        "--roots", choices=("default", "aide"), default="default", help="the root preset"
    )
    select.add_argument("--trust-store", type=_path, help="pinned workspace skills")
    select.add_argument(
        "--approve",
        choices=("deny", "prompt"),
        default="deny",
        help=(
            "who approves a matching workspace skill nobody pinned: deny (the default: "
            "nobody) or prompt (ask on the terminal)"
        ),
    )
    select.add_argument("--context-file", type=_path, help="workspace signals (file names)")
    select.add_argument(
        "--max-skills", type=_positive, default=3, help="at most N skills (default 3)"
    )
    select.add_argument(
        "--per-skill-bytes",
        type=_positive,
        default=8000,
        help="each skill's block at most N bytes, cut visibly (default 8000)",
    )
    select.add_argument(
        "--total-bytes",
        type=_positive,
        default=32000,
        help="the whole text at most N bytes (default 32000)",
    )
    select.add_argument("--audit-log", type=_path, help="append hash-chained records here")
    select.add_argument("--audit-key-file", type=_path, help="key the audit records (HMAC)")
    select.add_argument(
        "--format", choices=("text", "json"), default="text", help="text (the default) or json"
    )
    select.add_argument(
        "--explain",
        action="store_true",
        help="say why each skill considered was or was not selected",
    )
    select.add_argument("task", metavar="TASK", help="the task, as the agent was given it")


def _positive(value: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise argparse.ArgumentTypeError("must be a positive integer")
    return int(value)


def _add_mcp_command(commands: Any) -> None:  # noqa: ANN401 - argparse's private type
    serve = commands.add_parser(
        "mcp",
        help="serve one agent's skills to an MCP client over stdio (skillguard[mcp])",
        description=(
            "Serve the skills of one agent of the policy as MCP tools (skill, "
            "skill_resource, select_skills) over stdin and stdout. Needs the mcp extra."
        ),
    )
    serve.add_argument("--policy", required=True, type=_path, help="the policy file")
    serve.add_argument("--agent", required=True, help="the one agent this server serves")
    serve.add_argument("--embedded", type=_path, help="a folder of trusted skills")
    serve.add_argument(
        "--project",
        action="append",
        default=[],
        type=_path,
        metavar="DIR",
        help="a project whose workspace roots to serve from (repeatable; none by default)",
    )
    serve.add_argument(
        "--user-roots", action="store_true", help="serve from the user's own skill roots too"
    )
    serve.add_argument("--trust-store", type=_path, help="pinned approvals, and where pins go")
    serve.add_argument(
        "--approve",
        choices=("deny", "elicit"),
        default="deny",
        help=(
            "who approves a workspace skill nobody pinned: deny (the default: nobody) or "
            "elicit (the human, asked through a client that supports elicitation)"
        ),
    )
    serve.add_argument("--audit-log", type=_path, help="append hash-chained records here")
    serve.add_argument("--audit-key-file", type=_path, help="key the audit records (HMAC)")
    serve.add_argument("--registry", type=_path, help="the operator's keyword registry")
    serve.add_argument(
        "--profile",
        choices=("strict", "compat"),
        default="strict",
        help="the parser profile: strict (the default) or compat",
    )
