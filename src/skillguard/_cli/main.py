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

The parser (``parser``) is built from this module; a command's own module, and the
product line behind it, is imported only when that command runs: ``--version`` and
``--help`` import no command, no agent line, no swarm, no audit report.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from typing import TYPE_CHECKING

from skillguard._cli.parser import build_parser
from skillguard._core.errors import SkillError, SkillUsageError
from skillguard._core.text import terminal_line

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Sequence
    from typing import TextIO

__all__ = ["main"]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE


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
    try:
        words = list(sys.argv[1:] if argv is None else argv)
        if words[:2] == ["agent", "context"]:
            from skillguard._cli.agent_context import run_agent_context  # noqa: PLC0415 - imported when it runs

            # The seed's envelope, even for a bad option: never argparse's usage text.
            return run_agent_context(words[2:], sys.stdout)
        parser = build_parser(words)
        args = parser.parse_args(words)
        if args.version:
            from skillguard._core.version import __version__  # noqa: PLC0415 - avoids an import cycle

            sys.stdout.write(f"skillguard {__version__}\n")
            return EXIT_OK
        if args.command is None:
            parser.print_help(sys.stderr)
            return EXIT_USAGE
        if args.command == "validate":
            from skillguard._cli.validate import run_validate  # noqa: PLC0415 - imported when it runs

            return run_validate(args, sys.stdout, sys.stderr)
        try:
            if args.command == "discover":
                from skillguard._cli.discover import run_discover  # noqa: PLC0415 - imported when it runs

                return run_discover(args, sys.stdout)
            return _command(args.command)(args, sys.stdout, sys.stderr)
        except SkillUsageError as exc:  # the operator's own mistake (a bad policy file)
            sys.stderr.write(f"skillguard: {terminal_line(str(exc))}\n")
            return EXIT_USAGE
        except SkillError as exc:  # a refusal: one line, exit 1
            from skillguard._cli.commands import report  # noqa: PLC0415 - imported when it runs

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


def _command(name: str) -> Callable[[argparse.Namespace, TextIO, TextIO], int]:
    """The function that runs the command *name*. Its module, and the product line behind
    it, is imported only now: ``--version``, ``--help`` and ``validate`` never import the
    agent line, the swarm, the audit log or its report."""
    if name == "agent":
        from skillguard._cli.agent_context import run_agent_command  # noqa: PLC0415 - imported when it runs

        return run_agent_command
    if name in ("read-properties", "to-prompt"):
        from skillguard._cli import skillref  # noqa: PLC0415 - imported when it runs

        return skillref.run_read_properties if name == "read-properties" else skillref.run_to_prompt
    if name == "mcp":
        from skillguard._cli.serve_mcp import run_mcp  # noqa: PLC0415 - imported when it runs

        return run_mcp
    if name == "audit":
        from skillguard._cli.audit import run_audit  # noqa: PLC0415 - imported when it runs

        return run_audit
    from skillguard._cli import commands  # noqa: PLC0415 - imported when it runs

    return {
        "select": commands.run_select,
        "catalog": commands.run_catalog,
        "load": commands.run_load,
        "trust": commands.run_trust,
    }[name]
