"""The ``skillguard`` command line.

Exit codes: 0 when every result is ok, 1 when any failed, 2 on a usage error; ``audit``
adds 3 (a keyed log checked without its key), 4 (with another key) and 5 (a torn tail).
A reader that goes away (``| head``) ends any command quietly with 141, the status a
shell reports for a Unix tool ended by SIGPIPE. No traceback reaches the terminal
whatever the input: an unexpected exception while checking one path becomes a failed
result of kind ``internal`` (and is a bug). Everything printed that came from disk
(paths, keys, messages) goes through ``_text.terminal_line`` first (threat-model.md T13,
T42): no control sequence, C1 control, bidi override or invisible character reaches the
terminal raw. The command line configures no logging: audit events go to ``--audit-log``
(hash chained), never to stdout, which carries the command's output.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from typing import TYPE_CHECKING

from skillguard._cli.agent_context import run_agent_command, run_agent_context
from skillguard._cli.commands import report, run_audit, run_catalog, run_load, run_select, run_trust
from skillguard._cli.discover import run_discover
from skillguard._cli.parser import build_parser
from skillguard._cli.skillref import run_read_properties, run_to_prompt
from skillguard._cli.validate import run_validate
from skillguard._core.errors import SkillError, SkillUsageError
from skillguard._core.text import terminal_line

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["main"]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE


_SWARM_COMMANDS = {
    "select": run_select,
    "agent": run_agent_command,
    "catalog": run_catalog,
    "load": run_load,
    "trust": run_trust,
    "audit": run_audit,
    "read-properties": run_read_properties,
    "to-prompt": run_to_prompt,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    # A closed stdout or stderr (``>&-``) is None in Python: write into nothing then.
    if sys.stdout is None:
        sys.stdout = io.StringIO()
    if sys.stderr is None:
        sys.stderr = io.StringIO()
    for stream in (sys.stdout, sys.stderr):
        # A terminal or pipe that cannot encode a character must not turn output into a
        # traceback: unencodable characters are escaped instead.
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")
    try:
        code = _run(argv)
        # Flushed here, not at exit: a reader gone away is then seen below.
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader went away (``| head``): nothing more to say, and no traceback, not
        # even from the interpreter flushing stdout at exit (Python's documented recipe).
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except OSError as exc:
        # The output cannot be written (a full disk, a device gone): one line and exit
        # 1, never a traceback, so that a CI step fails with the reason. Nothing more is
        # written to stdout, not even by the interpreter flushing it at exit.
        _silence_stdout()
        with contextlib.suppress(OSError):
            sys.stderr.write(
                f"skillguard: cannot write the output ({os.strerror(exc.errno or 0)})\n"
            )
        return EXIT_FAILED
    return code


def _silence_stdout() -> None:
    # Python's documented recipe: stdout's descriptor now leads nowhere.
    with contextlib.suppress(OSError, ValueError):  # a stream with no descriptor
        devnull = os.open(os.devnull, os.O_WRONLY)  # noqa: TID251 - not skill input
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def _run(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    try:
        words = list(sys.argv[1:] if argv is None else argv)
        if words[:2] == ["agent", "context"]:
            # The seed's envelope, even for a bad option: never argparse's usage text.
            return run_agent_context(words[2:], sys.stdout)
        args = parser.parse_args(words)
        if args.version:
            from skillguard._core.version import __version__  # noqa: PLC0415 - avoids an import cycle

            sys.stdout.write(f"skillguard {__version__}\n")
            return EXIT_OK
        if args.command is None:
            parser.print_help(sys.stderr)
            return EXIT_USAGE
        if args.command == "validate":
            return run_validate(args, sys.stdout, sys.stderr)
        try:
            if args.command == "discover":
                return run_discover(args, sys.stdout)
            return _SWARM_COMMANDS[args.command](args, sys.stdout, sys.stderr)
        except SkillUsageError as exc:  # the operator's own mistake (a bad policy file)
            sys.stderr.write(f"skillguard: {terminal_line(str(exc))}\n")
            return EXIT_USAGE
        except SkillError as exc:  # a refusal: one line, exit 1
            return report(sys.stderr, exc)
        except BrokenPipeError:
            raise  # not a bug: the reader went away (``main`` ends quietly)
        except Exception as exc:  # a bug; reported in one line, never a traceback
            sys.stderr.write(f"skillguard: internal error ({type(exc).__name__})\n")
            return EXIT_FAILED
    except SystemExit as exc:  # argparse's --help and usage errors
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    except KeyboardInterrupt:
        return 130
