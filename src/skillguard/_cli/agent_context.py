"""``skillguard agent context``: the seed's envelope on stdout, and nothing else.

(``agent compose`` and ``agent validate`` live in ``_compose_command``; they report
like the other commands, not as an envelope.)

Rules (threat-model.md T76, T126): stdout carries exactly one line of ASCII JSON
without a trailing newline, on success and on every error; nothing is written to stderr
(the seed's "no prose output"), not even for a bad option, which argparse would report
as usage text, except the approval prompt of ``--approve prompt``. Exit status: 0 on
success, 1 on an error, 2 for ``MISSING_ARGUMENT`` (an absent or empty ``--agent``, or
any other bad option). A bug is reported as ``INTERNAL_ERROR`` with exit status 1,
never as a traceback.

The envelope goes through the approval gate (``_gate``): an agent file from the
repository is served only when ``--trust-store`` pins its exact snapshot or the human
approves it at the terminal (``--approve prompt``); one from an ``--operator-agents``
folder is the operator's own. Every decision goes to ``--audit-log`` when given.

``--approve prompt`` asks on stdin and stderr when both are terminals, and otherwise on
the controlling terminal (``/dev/tty``), both the question and the answer (T162): an
orchestrating skill that runs the command with its stdout (or stdin) piped still gets
its human asked, and nothing it writes to stdin can answer. With no controlling
terminal either, the answer is no.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, NoReturn

import attrs

from skillguard._agents.envelope import MISSING_ARGUMENT, dumps, error_envelope
from skillguard._agents.gate import Gate, agent_context
from skillguard._agents.resolve import HARNESS_PRESETS
from skillguard._audit.log import AuditLog, Auditor
from skillguard._cli.agent_compose import (
    add_compose_commands,
    run_agent_compose,
    run_agent_validate,
)
from skillguard._cli.epilogs import HelpFormatter, epilog
from skillguard._core.errors import SkillError, SkillUsageError
from skillguard._core.limits import DEFAULT_LIMITS
from skillguard._fs.operator import read_operator_bytes
from skillguard._fs.terminal import controlling_terminal
from skillguard._skills.approval import Decision, deny_all
from skillguard._skills.console import ConsoleApprover
from skillguard._skills.truststore import TrustStore

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import TextIO

    from _typeshed import SupportsWrite

    from skillguard._core.model import Profile
    from skillguard._skills.approval import ApprovalRequest

__all__ = [
    "RESOLUTION_OPTIONS",
    "Resolution",
    "add_agent_actions",
    "add_resolution_options",
    "resolution",
    "run_agent_command",
    "run_agent_context",
]

_EXIT_OK = 0
_EXIT_FAILED = 1
_EXIT_USAGE = 2


_CONTEXT_PROG = "skillguard agent context"
_CONTEXT_HELP = "print an agent's context envelope as one line of JSON"
_CONTEXT_DESCRIPTION = (
    "Resolve --agent in the repository and print its agent-context envelope (the "
    "x-internal-load-agent-context contract): one line of "
    "JSON on stdout, for success and for every error alike."
)


class _UsageError(Exception):
    """A bad option: reported in the envelope, never as argparse's usage text."""


class _HelpShown(Exception):  # noqa: N818 - not an error: --help was answered
    """``--help`` was printed: ``run_agent_context`` returns instead of exiting."""


class _EnvelopeParser(argparse.ArgumentParser):
    """The parser ``run_agent_context`` runs: the registered ``agent context``'s options
    and texts, with a bad option raised for the envelope and ``--help`` written to the
    caller's stream, so that ``agent context --help`` reads like every other command's."""

    def __init__(self, out: TextIO) -> None:
        super().__init__(
            prog=_CONTEXT_PROG,
            description=_CONTEXT_DESCRIPTION,
            epilog=epilog(("agent", "context")),
            formatter_class=HelpFormatter,
        )
        self._out = out
        _options(self)

    def error(self, message: str) -> NoReturn:
        raise _UsageError(message)

    def print_help(self, file: SupportsWrite[str] | None = None) -> None:  # noqa: ARG002
        super().print_help(self._out)

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:  # noqa: ARG002
        # Only the --help action exits here: every usage error goes through error().
        raise _HelpShown


# The options that decide which file an agent name resolves to and how it is read, as
# ``(dest, flag)``: ``agent context`` and ``trust show --agent`` / ``trust add --agent``
# take them from one definition, so that the file reviewed and pinned is the file served.
RESOLUTION_OPTIONS = (
    ("team", "--team"),
    ("repo", "--repo"),
    ("harness", "--harness"),
    ("profile", "--profile"),
    ("operator_agents", "--operator-agents"),
)


def add_resolution_options(parser: argparse.ArgumentParser, *, lead: str = "") -> None:
    """``RESOLUTION_OPTIONS``, each help text behind *lead*. None has a default here:
    an option not given is ``None`` (``resolution`` supplies the default), so that a
    command can tell an option given out of place."""
    parser.add_argument("--team", help=f"{lead}a team folder searched before .team-development")
    parser.add_argument("--repo", help=f"{lead}the repository root (default: .)")
    parser.add_argument(
        "--harness",
        action="append",
        choices=tuple(HARNESS_PRESETS),
        help=f"{lead}also search this harness's agent folder, after the contract's (repeatable, "
        "in order)",
    )
    parser.add_argument(
        "--profile",
        choices=("strict", "compat"),
        help=f"{lead}strict (the default) refuses what compat accepts with a warning",
    )
    parser.add_argument(
        "--operator-agents",
        action="append",
        metavar="DIR",
        help=f"{lead}a folder of the operator's own agent files, trusted and searched first "
        "(repeatable; never inside the repository)",
    )


@attrs.frozen
class Resolution:
    """The resolution options as the gate takes them, defaults supplied."""

    repo: str
    team: str | None
    harnesses: tuple[str, ...]
    profile: Profile
    operator_agents: tuple[str, ...]


def resolution(args: argparse.Namespace) -> Resolution:
    """``RESOLUTION_OPTIONS`` as given. An empty ``--repo`` stays empty (and is refused
    as the repository): only an absent one is the working directory."""
    return Resolution(
        repo="." if args.repo is None else args.repo,
        team=args.team,
        harnesses=tuple(args.harness or ()),
        profile=args.profile or "strict",
        # "--operator-agents=~/x" reaches here unexpanded (a shell expands "~" only at
        # the start of a word): expanded like the shell would, for the operator.
        operator_agents=tuple(os.path.expanduser(folder) for folder in args.operator_agents or ()),
    )


def _options(parser: argparse.ArgumentParser) -> None:
    """The options of ``agent context``, for ``--help`` and for the run alike."""
    parser.add_argument("--agent", help="an agent name, or a path relative to the repository")
    add_resolution_options(parser)
    parser.add_argument(
        "--approve",
        choices=("deny", "prompt"),
        default="deny",
        help="an agent file from the repository: refuse unless pinned (deny, the "
        "default), or ask at the terminal, on stderr or else the controlling terminal "
        "(prompt)",
    )
    parser.add_argument("--trust-store", help="pinned approvals of agent files")
    parser.add_argument("--audit-log", help="append hash-chained records here")
    parser.add_argument("--audit-key-file", help="key the audit records (HMAC)")


def add_agent_actions(agent: argparse.ArgumentParser) -> None:
    """Register ``agent context`` for ``--help`` (``run_agent_context`` parses it), and
    ``agent compose`` and ``agent validate``, under the ``agent`` command's parser."""
    actions = agent.add_subparsers(dest="action", required=True)
    context = actions.add_parser("context", help=_CONTEXT_HELP, description=_CONTEXT_DESCRIPTION)
    _options(context)
    add_compose_commands(actions)
    from skillguard._cli.agent_install import add_install_commands  # noqa: PLC0415 - with the agent line

    add_install_commands(actions)


def run_agent_command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Run ``agent compose``, ``validate``, ``install`` or ``uninstall`` (``agent
    context`` runs on its own)."""
    if args.action == "compose":
        return run_agent_compose(args, out, err)
    if args.action in ("install", "uninstall"):
        from skillguard._cli.agent_install import (  # noqa: PLC0415 - imported when it runs
            run_agent_install,
            run_agent_uninstall,
        )

        return (run_agent_install if args.action == "install" else run_agent_uninstall)(
            args, out, err
        )
    return run_agent_validate(args, out, err)


_MAX_KEY_BYTES = 4096
NO_TERMINAL = "console (no terminal: neither stdin nor a controlling one)"
INTERRUPTED = "console (interrupted)"


def ask_terminal(request: ApprovalRequest) -> Decision:
    """``--approve prompt``: the human at stdin and stderr when both are terminals,
    else at the controlling terminal, asked and answered there; never an answer read
    from a stdin that is not a terminal (T162). Ctrl-C instead of an answer is a
    refusal like any other (T203): audited, and reported in the envelope."""
    try:
        if sys.stdin.isatty() and sys.stderr.isatty():
            return ConsoleApprover(sys.stdin, sys.stderr)(request)
        with controlling_terminal() as terminal:
            if terminal is None:
                return Decision(approved=False, by=NO_TERMINAL)
            return ConsoleApprover(*terminal)(request)
    except KeyboardInterrupt:
        return Decision(approved=False, by=INTERRUPTED)


def _gate(args: argparse.Namespace) -> Gate:
    """Deny by default: the terminal is asked only with ``--approve prompt``, and then
    on stderr or the controlling terminal, so stdout stays the one line of JSON."""
    fallback = ask_terminal if args.approve == "prompt" else deny_all
    approver = TrustStore(args.trust_store).approver(fallback) if args.trust_store else fallback
    log = None
    if args.audit_log:
        key = None
        if args.audit_key_file:
            try:
                key = read_operator_bytes(args.audit_key_file, limit=_MAX_KEY_BYTES).strip()
            except OSError as exc:
                raise SkillUsageError("bad_argument", "the audit key file cannot be read") from exc
        log = AuditLog(args.audit_log, key=key)
    return Gate("cli", approver, Auditor(log), DEFAULT_LIMITS, resolution(args).profile)


def _write(out: TextIO, envelope: dict[str, object]) -> None:
    out.write(dumps(envelope))


def run_agent_context(argv: Sequence[str], out: TextIO) -> int:
    """Run ``agent context`` with the arguments after it; returns the exit status."""
    parser = _EnvelopeParser(out)
    try:
        args = parser.parse_args(list(argv))
    except _UsageError as exc:
        _write(out, {"status": "error", "code": MISSING_ARGUMENT, "message": str(exc)})
        return _EXIT_USAGE
    except _HelpShown:
        return _EXIT_OK
    try:
        where = resolution(args)
        served = agent_context(
            _gate(args),
            where.repo,
            args.agent,
            team=where.team,
            harnesses=where.harnesses,
            operator_agents=where.operator_agents,
        )
    except SkillError as exc:
        _write(out, error_envelope(exc))
        return _EXIT_USAGE if isinstance(exc, SkillUsageError) else _EXIT_FAILED
    except Exception as exc:  # noqa: BLE001 - a bug becomes an envelope, never a traceback
        _write(
            out,
            {
                "status": "error",
                "code": "INTERNAL_ERROR",
                "message": f"internal error ({type(exc).__name__})",
            },
        )
        return _EXIT_FAILED
    _write(out, served.envelope())
    return _EXIT_OK
