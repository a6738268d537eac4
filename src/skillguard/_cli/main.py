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

import argparse
import contextlib
import io
import json
import os
import sys
import tempfile
from typing import IO, TYPE_CHECKING, Any, NoReturn, TextIO

import attrs

from skillguard._cli.agent_context import add_agent_command, run_agent_command, run_agent_context
from skillguard._cli.agent_trust import add_agent_trust_options
from skillguard._cli.ci import SarifWriter, github_result, github_skipped, json_log_safe, log_safe
from skillguard._cli.commands import report, run_audit, run_catalog, run_load, run_select, run_trust
from skillguard._cli.scan import MAX_VALIDATE_FOLDERS, Found, iter_scan
from skillguard._cli.skillref import run_read_properties, run_to_prompt
from skillguard._core.errors import SkillError, SkillUsageError, safe_repr
from skillguard._core.limits import DEFAULT_LIMITS
from skillguard._core.text import terminal_line
from skillguard._fs.containment import display_path, printed_path
from skillguard._skills.approval import is_digest
from skillguard._skills.discover import discover
from skillguard._skills.parse import check_skill
from skillguard._skills.roots import default_roots

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from skillguard._core.model import Profile, SkillWarning

__all__ = ["main"]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE
DEFAULT_MAX_DEPTH = 8
_NAMESPACES_HELP = "accept a namespaced name, namespace/short-name (seed 002)"


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


def _build_parser() -> _Parser:
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
    _add_swarm_commands(commands)
    add_agent_command(commands)
    _add_select_command(commands)
    _add_skills_ref_commands(commands)
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


def _add_swarm_commands(commands: Any) -> None:  # noqa: ANN401 - argparse's private type
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
    add_agent_trust_options(show)
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
    add_agent_trust_options(add)
    revoke = actions.add_parser("revoke", help="remove the pins of a skill or agent file")
    revoke.add_argument(
        "name", metavar="NAME", help="the skill (or agent file's path) whose pins to remove"
    )
    revoke.add_argument("--trust-store", required=True, type=_path, help="the trust store")
    revoke.add_argument("--source", help="only the pin for this skill folder")

    audit = commands.add_parser(
        "audit",
        help="verify, summarize or report on an audit log (an HTML page), or repair its"
        " torn tail; verify and summarize take several logs, one per process or host",
    )
    audit.add_argument(
        "action",
        choices=("verify", "summarize", "report", "repair"),
        help="verify the chain, summarize the log, write its HTML report, or move a torn"
        " last line aside and record it",
    )
    audit.add_argument(
        "file",
        metavar="FILE",
        nargs="+",
        type=_path,
        help="the audit log (verify, summarize: several, one per process or host)",
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
        help="summarize, report: only records at or after this ISO 8601 time (UTC if naive)",
    )
    audit.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="summarize: text (the default) or json",
    )
    _add_audit_report_options(audit)


def _add_audit_report_options(audit: argparse.ArgumentParser) -> None:
    audit.add_argument(
        "--until", help="report: only records before this ISO 8601 time (UTC if naive)"
    )
    audit.add_argument(
        "--output", type=_path, metavar="FILE", help="report: write the HTML page here"
    )


def _error_entry(error: SkillError, file: str | None) -> dict[str, Any]:
    if error.line is None:
        message = error.reason
    elif error.column is None:
        message = f"line {error.line}: {error.reason}"
    else:
        message = f"line {error.line}, column {error.column}: {error.reason}"
    entry: dict[str, Any] = {"kind": error.kind, "code": error.code, "message": message}
    # Additive keys: where the error is, so CI annotations can point at it.
    if file is not None:
        entry["file"] = file
    if error.line is not None:
        entry["line"] = error.line
        if error.column is not None:
            entry["column"] = error.column
    return entry


def _warning_entries(
    warnings: Sequence[SkillWarning], file: str | None, lines: Mapping[str, int]
) -> list[dict[str, Any]]:
    """The warnings of one skill, ``unknown_field`` grouped into one entry naming every
    unknown key (a collection with many extra keys is otherwise mostly this warning)."""
    entries: list[dict[str, Any]] = []
    unknown = [w.key for w in warnings if w.code == "unknown_field" and w.key is not None]
    for warning in warnings:
        if warning.code == "unknown_field" and warning.key is not None:
            if warning.key != unknown[0]:
                continue
            if len(unknown) == 1:
                message = warning.message
            else:
                names = ", ".join(safe_repr(key) for key in unknown)
                message = f"unknown fields {names} kept as inert data"
            entry: dict[str, Any] = {"code": warning.code, "message": message, "keys": unknown}
        else:
            entry = {"code": warning.code, "message": warning.message}
        if file is not None:
            entry["file"] = file
        line = lines.get(warning.key) if warning.key is not None else warning.line
        if line is not None:
            entry["line"] = line
            if warning.key is None and warning.column is not None:
                entry["column"] = warning.column
        entries.append(entry)
    return entries


def _problem_entries(found: Found) -> list[dict[str, Any]]:
    """The errors of a skill's folder, each pointing at its entry (a planted link, a
    FIFO), which is what a reviewer sees in a pull request's diff."""
    return [
        _error_entry(problem, file)
        for problem, file in zip(found.problems, found.problem_files, strict=True)
    ]


def _check(found: Found, profile: Profile, *, namespaces: bool) -> dict[str, Any]:
    """The result of one skill folder, its paths as found (``_printed`` makes them
    printable for text and JSON; the CI formats name the real files)."""
    result: dict[str, Any] = {
        "path": found.path,
        "skill": found.folder,
        "ok": False,
        "errors": [],
        "warnings": [],
    }
    if found.error is not None:
        result["errors"].append(_error_entry(found.error, found.file))
        result["errors"].extend(_problem_entries(found))
        return result
    assert found.raw is not None  # a Found holds either bytes or an error
    checked = check_skill(
        found.raw, expected_name=found.folder, profile=profile, namespaces=namespaces
    )
    result["errors"].extend(_error_entry(error, found.file) for error in checked.errors)
    if checked.skill is not None:
        result["skill"] = checked.skill.name
        result["warnings"] = _warning_entries(checked.skill.warnings, found.file, checked.key_lines)
    # The whole folder: what a loader would refuse to serve fails the skill too.
    result["errors"].extend(_problem_entries(found))
    result["warnings"].extend(
        {"code": note.code, "message": f"{note.path}: {note.reason}"} for note in found.notes
    )
    result["ok"] = not result["errors"]
    return result


def _internal_error(path: str, exc: BaseException) -> dict[str, Any]:
    return {
        "path": path,
        "skill": None,
        "ok": False,
        "errors": [
            {
                "kind": "internal",
                "code": "bug",
                "message": f"unexpected {type(exc).__name__}; please report it",
            }
        ],
        "warnings": [],
    }


def _discover(args: argparse.Namespace, out: TextIO) -> int:
    roots = args.roots or default_roots(args.project)
    found = discover(
        roots,
        profile=args.profile,
        trusted_link_targets=tuple(args.trust_link_target),
        namespaces=args.namespaces,
    )
    summary = {
        "skills": len(found.skills),
        "shadowed": len(found.shadowed),
        "skipped": len(found.skipped),
    }
    if args.format == "json":
        document = {
            "roots": [display_path(str(root)) for root in roots],
            "skills": [
                {
                    "name": meta.name,
                    "description": meta.description,
                    "root": meta.root,
                    "location": display_path(meta.location),
                    "sha256": meta.sha256,
                    "size": meta.size,
                    "warnings": [w.as_dict() for w in meta.warnings],
                }
                for meta in found.skills
            ],
            "shadowed": [attrs.asdict(item) for item in found.shadowed],
            "skipped": [attrs.asdict(item) for item in found.skipped],
            "summary": summary,
        }
        out.write(json.dumps(document, indent=2, ensure_ascii=True) + "\n")
        return EXIT_OK
    for meta in found.skills:
        place = terminal_line(f"{meta.root}/{meta.location}".rstrip("/"))
        out.write(f"skill    {terminal_line(meta.name)}  {place}\n")
        out.writelines(f"    warning {w.code}: {terminal_line(w.message)}\n" for w in meta.warnings)
    for item in found.shadowed:
        place = terminal_line(f"{item.root}/{item.location}".rstrip("/"))
        winner = terminal_line(f"{item.by_root}/{item.by_location}".rstrip("/"))
        out.write(f"shadowed {terminal_line(item.name)}  {place}  (by {winner})\n")
    for entry in found.skipped:
        place = terminal_line(f"{entry.root}/{entry.path}".rstrip("/"))
        out.write(f"skipped  {place}: {entry.kind}/{entry.code}: {terminal_line(entry.reason)}\n")
    out.write(
        f"{summary['skills']} skills, {summary['shadowed']} shadowed, "
        f"{summary['skipped']} skipped\n"
    )
    return EXIT_OK


def _skipped_line(entry: dict[str, Any]) -> str:
    path, message = terminal_line(entry["path"]), terminal_line(entry["message"])
    return log_safe(f"skipped {path}: {entry['code']}: {message}")


def _validate(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    # Every format is written as the run goes, one skill at a time, so that memory does
    # not grow with the number of skills. Text and JSON list skipped entries and the
    # summary last, the skipped entries kept meanwhile in a spooled temporary file (a
    # hostile tree can hold any number); GitHub and SARIF write each one as it is found.
    from skillguard._core.version import __version__  # noqa: PLC0415 - avoids an import cycle

    counts = {"checked": 0, "ok": 0, "shown": 0, "skipped": 0}
    sarif = SarifWriter(out, version=__version__) if args.format == "sarif" else None
    if args.format == "json":
        out.write('{\n  "results": [')
    limits = attrs.evolve(DEFAULT_LIMITS, max_dir_entries=args.max_entries)

    def emit(result: dict[str, Any]) -> None:
        counts["checked"] += 1
        counts["ok"] += 1 if result["ok"] else 0
        if args.quiet or args.no_warnings:
            result["warnings"] = []
        if args.quiet and result["ok"]:
            return
        if args.format == "json":
            text = json.dumps(_printed(result), indent=2, ensure_ascii=True)
            text = json_log_safe(text.replace("\n", "\n    "))
            out.write(f"{',' if counts['shown'] else ''}\n    {text}")
        elif args.format == "text":
            _write_result(_printed(result), out)
        elif sarif is not None:
            sarif.result(result)
        else:
            out.writelines(f"{line}\n" for line in github_result(result))
        counts["shown"] += 1

    with tempfile.SpooledTemporaryFile(max_size=1 << 20, mode="w+", encoding="utf-8") as spool:

        def skip(entry: dict[str, Any]) -> None:
            counts["skipped"] += 1
            if sarif is not None:
                sarif.skipped(entry)
            elif args.format == "github":
                out.write(f"{github_skipped(entry)}\n")
            else:
                spool.write(json.dumps(_printed(entry), ensure_ascii=True) + "\n")

        for path in args.paths:
            try:
                for item in iter_scan(
                    path, max_depth=args.max_depth, max_dirs=args.max_folders, limits=limits
                ):
                    if isinstance(item, Found):
                        emit(_check(item, args.profile, namespaces=args.namespaces))
                        continue
                    skip(
                        {
                            "path": item.path,
                            "code": item.code,
                            "message": item.reason,
                            "fails": args.fail_on_skipped,
                        }
                    )
            except Exception as exc:  # a bug; reported, never a traceback
                emit(_internal_error(path, exc))
        summary = {
            "checked": counts["checked"],
            "ok": counts["ok"],
            "failed": counts["checked"] - counts["ok"],
            "skipped": counts["skipped"],
        }
        if sarif is not None:
            sarif.close()
        else:
            spool.seek(0)
            _finish(args.format, spool, summary, counts["shown"], out, err)
    failed = summary["failed"] > 0 or (args.fail_on_skipped and summary["skipped"] > 0)
    return EXIT_FAILED if failed else EXIT_OK


def _finish(
    form: str,
    spool: IO[str],
    summary: dict[str, int],
    shown: int,
    out: TextIO,
    err: TextIO,
) -> None:
    """The end of a text, JSON or GitHub ``validate`` run: skipped entries read back
    from *spool* (text, JSON) and the summary."""
    line = (
        f"{summary['checked']} checked, {summary['ok']} ok, {summary['failed']} failed, "
        f"{summary['skipped']} skipped"
    )
    if form == "github":
        out.write(f"skillguard: {line}\n")
        return
    entries = (json.loads(text) for text in spool)
    if form == "text":
        out.writelines(f"{_skipped_line(entry)}\n" for entry in entries)
        out.write(f"{line}\n")
        return
    # The JSON document keeps its documented shape (new keys are additive): the summary,
    # then the skipped entries, each also reported on stderr so that nothing is skipped
    # silently.
    head = json.dumps({"summary": summary}, indent=2, ensure_ascii=True)
    out.write(f'{chr(10) + "  " if shown else ""}],\n{head[2:-2]},\n  "skipped": [')
    written = 0
    for entry in entries:
        del entry["fails"]
        text = json.dumps(entry, indent=2, ensure_ascii=True).replace("\n", "\n    ")
        text = json_log_safe(text)
        out.write(f"{',' if written else ''}\n    {text}")
        err.write(f"skillguard: {_skipped_line(entry)}\n")
        written += 1
    out.write(f"{chr(10) + '  ' if written else ''}]\n}}\n")


def _printed(item: dict[str, Any]) -> dict[str, Any]:
    """A result or skipped entry with its paths as text and JSON print them
    (``printed_path``: a backslash doubled, undecodable bytes as ``\\xNN``)."""
    printed = dict(item)
    for key in ("path", "file", "skill"):
        if isinstance(printed.get(key), str):
            printed[key] = printed_path(printed[key])
    for key in ("errors", "warnings"):
        if key in printed:
            printed[key] = [_printed(entry) for entry in printed[key]]
    return printed


def _write_result(result: dict[str, Any], out: TextIO) -> None:
    status = "ok    " if result["ok"] else "FAILED"
    skill = f" ({terminal_line(result['skill'])})" if result["skill"] else ""
    # Each line also safe from a CI runner's legacy commands: text output is what a
    # workflow step prints by default.
    out.write(log_safe(f"{status} {terminal_line(result['path'])}{skill}") + "\n")
    out.writelines(
        log_safe(f"    error {error['kind']}/{error['code']}: {terminal_line(error['message'])}")
        + "\n"
        for error in result["errors"]
    )
    out.writelines(
        log_safe(f"    warning {warning['code']}: {terminal_line(warning['message'])}") + "\n"
        for warning in result["warnings"]
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
    select.add_argument("task", metavar="TASK", help="the task, as the agent was given it")


def _positive(value: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise argparse.ArgumentTypeError("must be a positive integer")
    return int(value)


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
    parser = _build_parser()
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
            return _validate(args, sys.stdout, sys.stderr)
        try:
            if args.command == "discover":
                return _discover(args, sys.stdout)
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
