"""The ``audit`` command: ``verify``, ``summarize``, ``report``, ``repair``, ``export``.

Each action streams its FILEs a line at a time (a regular file only, each line capped)
and always checks the chain. Rules:

* Each action takes the options it uses and refuses the others (``_ACTION_OPTIONS``),
  so that no option is silently ignored (T252): an operator who asked for
  ``--expect-records`` or ``--format json`` gets it or an error, never less.
* ``--format json`` (verify, summarize) prints one JSON document whose shape is
  versioned by its ``"schema"`` member (``VERIFY_SCHEMA``, ``SUMMARY_SCHEMA``); the
  README documents every field and a test pins them.
* ``export`` writes verified records only, each as it is verified (``_audit.export``):
  the records of a log before its first bad line, then a line on stderr naming the
  file and the line, and the exit status of ``verify``.
* Everything printed that came from a log is escaped for the terminal (T42).
"""

from __future__ import annotations

import contextlib
import json
from typing import TYPE_CHECKING, Any, Final

from skillguard._audit.counts import MAX_COUNTED_NAMES, rest_line, span
from skillguard._audit.export import export_records
from skillguard._audit.log import AuditLog
from skillguard._audit.logset import UNREADABLE, LogSetVerification, summarize_logs, verify_logs
from skillguard._audit.record import MAX_RECORD_BYTES
from skillguard._audit.report import render_audit_report
from skillguard._audit.summary import parse_since, summarize_log
from skillguard._audit.verify import (
    NEEDS_KEY,
    NOT_A_LOG,
    TAMPERED,
    TORN,
    WRONG_KEY,
    Verification,
    verify_records,
)
from skillguard._cli.commands import EXIT_FAILED, EXIT_OK, EXIT_USAGE, _key
from skillguard._core.errors import SkillUsageError, safe_repr
from skillguard._core.text import terminal_line
from skillguard._fs.operator import same_file, stream_lines
from skillguard._fs.write import write_atomic

if TYPE_CHECKING:
    import argparse
    from typing import TextIO

__all__ = ["SUMMARY_SCHEMA", "VERIFY_SCHEMA", "run_audit"]

# A keyed log checked without its key, or with another key, is neither intact nor proven
# tampered with.
EXIT_NEEDS_KEY = 3
EXIT_WRONG_KEY = 4
# A torn tail (T191): the records before it verify, and ``audit repair`` mends it.
EXIT_TORN = 5
# A file whose first line is no log_created record (T250): not an audit log at all.
EXIT_NOT_A_LOG = 6

# The version of the JSON documents: a field removed or changing meaning is a new one.
VERIFY_SCHEMA: Final = "skillguard.audit.verify/1"
SUMMARY_SCHEMA: Final = "skillguard.audit.summary/1"

# The options each action takes (their ``dest``); any other given is refused (T252).
_ACTION_OPTIONS: Final = {
    "verify": {"key_file", "expect_records", "expect_log_id", "format"},
    "summarize": {"key_file", "expect_log_id", "agent", "since", "format"},
    "report": {"key_file", "expect_records", "expect_log_id", "agent", "since", "until", "output"},
    "repair": {"key_file"},
    "export": {"key_file", "since", "format"},
}
_FORMATS: Final = {
    "verify": ("text", "json"),
    "summarize": ("text", "json"),
    "export": ("jsonl", "ocsf"),
}
_OPTION_NAMES: Final = {
    "key_file": "--key-file",
    "expect_records": "--expect-records",
    "expect_log_id": "--expect-log-id",
    "agent": "--agent",
    "since": "--since",
    "until": "--until",
    "format": "--format",
    "output": "--output",
}
# The statuses whose records before the bad line verified (a summary shows them).
_PARTLY_VERIFIED = {TAMPERED, TORN}


def _check_options(args: argparse.Namespace) -> None:
    """Refuse an option the action would ignore, and a format it does not write."""
    wanted = _ACTION_OPTIONS[args.action]
    for dest, option in _OPTION_NAMES.items():
        if getattr(args, dest, None) is not None and dest not in wanted:
            raise SkillUsageError("bad_argument", f"audit {args.action} does not take {option}")
    formats = _FORMATS.get(args.action)
    if formats is not None:
        if args.format is None:
            args.format = formats[0]
        elif args.format not in formats:
            raise SkillUsageError(
                "bad_argument", f"audit {args.action} --format is {' or '.join(formats)}"
            )


def _verified(result: Verification) -> int:
    """How many records verified (the header included): those before the bad line."""
    if result.intact:
        return result.records
    return max(0, (result.line or 1) - 1)


def _verdict(result: Verification) -> tuple[int, str]:
    """The exit status and the one line that says what the check found."""
    if result.intact:
        return EXIT_OK, f"intact: {result.records} records"
    if result.status == NEEDS_KEY:
        return EXIT_NEEDS_KEY, "keyed: needs its key (--key-file)"
    if result.status == WRONG_KEY:
        return EXIT_WRONG_KEY, "wrong key: the log was keyed with another key"
    if result.status == NOT_A_LOG:
        return EXIT_NOT_A_LOG, f"not an audit log: {terminal_line(result.reason)}"
    if result.status == TORN:
        return EXIT_TORN, (
            f"torn tail: line {result.line}: {terminal_line(result.reason)}; the "
            f"{result.records - 1} records before it verify: `skillguard audit repair` mends it"
        )
    return EXIT_FAILED, f"tampered: line {result.line}: {terminal_line(result.reason)}"


def _log_document(path: str, result: Verification) -> dict[str, Any]:
    """One log's verdict in a JSON document (``VERIFY_SCHEMA``)."""
    if result.status == UNREADABLE:
        key = None
    elif result.status in {NEEDS_KEY, WRONG_KEY}:
        key = result.status
    else:
        key = None if result.keyed is None else ("keyed" if result.keyed else "unkeyed")
    return {
        "file": path,
        "status": result.status,
        "verified": result.intact,
        "records": _verified(result),
        "line": result.line,
        "offset": result.offset,
        "reason": result.reason or None,
        "log_id": result.log_id,
        "key": key,
    }


def _set_document(result: LogSetVerification, code: int) -> dict[str, Any]:
    return {
        "verified": result.intact,
        "exit_status": code,
        "records": result.records,
        "logs": [_log_document(log.path, log.verification) for log in result.logs],
        "findings": [
            {"code": finding.code, "log_id": finding.log_id, "files": list(finding.paths)}
            for finding in result.findings
        ],
    }


def _write_json(out: TextIO, document: dict[str, Any]) -> None:
    out.write(json.dumps(document, indent=2, ensure_ascii=True, sort_keys=True) + "\n")


def run_audit(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``audit ACTION FILE...``: the options are checked against the action first."""
    _check_options(args)
    if args.action == "export":
        return run_audit_export(args, out, err)
    several = len(args.file) > 1 or any(
        len(values or ()) > 1 for values in (args.key_file, args.expect_log_id, args.expect_records)
    )
    if several or args.format == "json":
        return run_audit_logs(args, out, err)
    # One log: the options hold at most one value each.
    args.file = args.file[0]
    args.key_file = args.key_file[0] if args.key_file else None
    args.expect_log_id = args.expect_log_id[0] if args.expect_log_id else None
    args.expect_records = args.expect_records[0] if args.expect_records else None
    if args.action == "report":
        return run_audit_report(args, out, err)
    if args.action == "repair":
        return run_audit_repair(args, out, err)
    key = _key(args.key_file) if args.key_file else None
    try:
        with contextlib.closing(stream_lines(args.file, max_line=MAX_RECORD_BYTES)) as lines:
            if args.action == "verify":
                result = verify_records(
                    lines,
                    key=key,
                    expected_records=args.expect_records,
                    expected_log_id=args.expect_log_id,
                )
                summary = None
            else:
                result, summary = summarize_log(
                    lines,
                    key=key,
                    agent=args.agent,
                    since=args.since,
                    expected_log_id=args.expect_log_id,
                )
    except OSError:
        err.write("skillguard: the audit log cannot be read (a regular file is needed)\n")
        return EXIT_FAILED
    code, verdict = _verdict(result)
    if summary is None:
        out.write(f"{verdict}\n")
        return code
    if not result.intact and (result.line == 1 or result.status not in _PARTLY_VERIFIED):
        # Nothing was verified: a file that is not a log, or a log we cannot check.
        err.write(f"skillguard: {verdict}\n")
        return code
    # The verdict line is verify's, word for word: the two agree on the count.
    out.write(f"{verdict if result.intact else 'NOT VERIFIED: ' + verdict}\n")
    _write_counts(out, summary, _filters(args))
    return code


def _filters(args: argparse.Namespace) -> str:
    return ", ".join(
        f"{option} {terminal_line(str(value))}"
        for option, value in (("--agent", args.agent), ("--since", args.since))
        if value is not None
    )


def run_audit_report(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``audit report``: the HTML page of a log, written atomically to ``--output``
    whatever the check found; the exit status and line are those of ``audit verify``."""
    if not args.output:
        err.write("skillguard: audit report needs --output FILE\n")
        return EXIT_USAGE
    if same_file(args.output, args.file):
        # Replacing the log with its own report would destroy the evidence.
        err.write("skillguard: --output must not be the audit log itself\n")
        return EXIT_USAGE
    key = _key(args.key_file) if args.key_file else None
    try:
        with contextlib.closing(stream_lines(args.file, max_line=MAX_RECORD_BYTES)) as lines:
            result, page = render_audit_report(
                lines,
                key=key,
                expected_records=args.expect_records,
                expected_log_id=args.expect_log_id,
                agent=args.agent,
                since=args.since,
                until=args.until,
            )
    except OSError:
        err.write("skillguard: the audit log cannot be read (a regular file is needed)\n")
        return EXIT_FAILED
    try:
        write_atomic(args.output, page.encode("utf-8"))
    except OSError:
        err.write("skillguard: the report cannot be written to --output\n")
        return EXIT_FAILED
    code, verdict = _verdict(result)
    out.write(f"{verdict}; report written to {terminal_line(args.output)}\n")
    return code


def run_audit_repair(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``audit repair``: move a torn tail aside and record it (``AuditLog.repair``);
    a refusal (an intact log, one tampered with, no key) is an ``AuditError``."""
    del err  # refusals are reported by the caller (``report``)
    record = AuditLog.repair(args.file, key=_key(args.key_file) if args.key_file else None)
    out.write(
        f"repaired: {record['size']} torn bytes moved to {terminal_line(str(record['path']))}; "
        f"log_recovered written as record {record['seq']}\n"
    )
    return EXIT_OK


def run_audit_export(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``audit export``: each FILE's verified records, in order, one JSON line each
    (``_audit.export``). A FILE that stops verifying has exported the records before
    its bad line; stderr names it and the line, and the exit status is the worst of
    verify's, as for several logs."""
    keys = _set_arguments(args)["keys"]
    since = None if args.since is None else parse_since(args.since)
    code = EXIT_OK
    for index, path in enumerate(args.file):
        key = keys[index] if isinstance(keys, list) else keys
        try:
            with contextlib.closing(stream_lines(path, max_line=MAX_RECORD_BYTES)) as lines:
                result = export_records(lines, out.write, key=key, since=since, output=args.format)
        except OSError:
            log_code, verdict = EXIT_FAILED, "unreadable: a regular file is needed"
        else:
            log_code, verdict = _verdict(result)
        if log_code != EXIT_OK:
            err.write(f"skillguard: {terminal_line(path)}: {verdict}\n")
        if _SEVERITY[log_code] > _SEVERITY[code]:
            code = log_code
    return code


def _table_line(title: str, listed: dict[str, int], facts: dict[str, Any]) -> str:
    """One table of a summary as text: its listed names, largest first (a range when
    the table is approximate), and what it left out (T190)."""
    least = facts["least"]
    entries = ", ".join(
        f"{safe_repr(str(name))[1:-1]}={span(least.get(name, most), most)}"
        for name, most in sorted(listed.items(), key=lambda item: (-item[1], item[0]))
    )
    label = title.replace("_", " ")
    if not facts["exact"]:
        label += (
            f" (approximate, over {MAX_COUNTED_NAMES} names: a range is the least and the "
            "most a name can hold)"
        )
    line = f"{label}: {entries or '-'}"
    rest = rest_line(facts, len(listed))
    return f"{line}; {rest}" if rest else line


def _denial_line(denial: dict[str, Any]) -> str:
    """One listed denial: the fields it has (a missing one is left out, never
    ``None``), escaped for the terminal."""
    shown = {k: safe_repr(str(v))[1:-1] for k, v in denial.items() if k != "log" and v is not None}
    words = [f"denied {shown.get('time', '-')}"]
    words += [f"{name}={shown[name]}" for name in ("agent", "skill") if name in shown]
    words += [shown[name] for name in ("event", "code") if name in shown]
    line = " ".join(words)
    if "reason" in shown:
        line += f": {shown['reason']}"
    if "log" in denial:
        line += f" log={terminal_line(str(denial['log']))}"
    return line + "\n"


def _write_counts(out: TextIO, summary: dict[str, Any], filters: str = "") -> None:
    """A summary as text: counts, then the listed denials (with their log when merged)."""
    counted = "every record but log_created" + (f"; {filters}" if filters else "")
    out.write(f"counted: {summary['records']} records ({counted})\n")
    out.writelines(
        _table_line(title, summary[title], summary["tables"][title]) + "\n"
        for title in ("by_decision", "by_agent", "by_skill")
    )
    if "denials" not in summary:  # one log of a set: its denials are listed in the total
        out.write(f"denials: {summary['denials_total']}\n")
        return
    earlier = summary["denials_total"] - len(summary["denials"])
    if earlier:
        out.write(f"({earlier} earlier denials not listed: narrow with --since or --agent)\n")
    out.writelines(_denial_line(denial) for denial in summary["denials"])


# The exit status of several logs is the worst of theirs, in this order: a log tampered
# with (or unreadable, or two files holding one log) outranks one that is no log at all,
# which outranks one checked with the wrong key, which outranks one that needed a key
# and got none, which outranks a torn tail (every record before it verified).
_SEVERITY = {
    EXIT_OK: 0,
    EXIT_TORN: 1,
    EXIT_NEEDS_KEY: 2,
    EXIT_WRONG_KEY: 3,
    EXIT_NOT_A_LOG: 4,
    EXIT_FAILED: 5,
}


def _per_file(values: list[Any] | None, count: int, what: str) -> list[Any] | None:
    """An option given once per FILE, in order; ``None`` when it was not given."""
    if values is None:
        return None
    if len(values) != count:
        raise SkillUsageError("bad_argument", f"{what} must be given once per FILE, or not at all")
    return values


def _set_arguments(args: argparse.Namespace) -> dict[str, Any]:
    count = len(args.file)
    keys: bytes | list[bytes | None] | None = None
    if args.key_file and len(args.key_file) == 1:
        keys = _key(args.key_file[0])  # one key for every FILE: the hosts share it
    elif args.key_file:
        keys = [_key(path) for path in _per_file(args.key_file, count, "--key-file") or ()]
    return {
        "keys": keys,
        "expected_log_ids": _per_file(args.expect_log_id, count, "--expect-log-id"),
    }


def _set_verdicts(result: LogSetVerification) -> tuple[int, list[str]]:
    """The worst exit status, and one line per file, per finding and for the total."""
    code, lines = EXIT_OK, []
    for log in result.logs:
        if log.verification.status == UNREADABLE:
            log_code, verdict = EXIT_FAILED, "unreadable: a regular file is needed"
        else:
            log_code, verdict = _verdict(log.verification)
        if _SEVERITY[log_code] > _SEVERITY[code]:
            code = log_code
        lines.append(f"{terminal_line(log.path)}: {verdict}")
    for finding in result.findings:
        code = EXIT_FAILED
        names = ", ".join(terminal_line(path) for path in finding.paths)
        lines.append(f"same log id {finding.log_id} in {names}: one log copied or replayed")
    intact = sum(log.verification.intact for log in result.logs)
    lines.append(
        f"{'intact' if result.intact else 'NOT VERIFIED'}: {intact} of {len(result.logs)} logs"
        f" intact, {result.records} records verified"
    )
    return code, lines


def run_audit_logs(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``audit verify`` and ``audit summarize`` of several logs (one per process or host),
    and of any number in JSON: each checked on its own, then across them; the exit
    status is the worst of theirs."""
    if args.action in {"report", "repair"}:
        err.write(
            f"skillguard: audit {args.action} takes one FILE (one --key-file, --expect-* each)\n"
        )
        return EXIT_USAGE
    options = _set_arguments(args)
    if args.action == "verify":
        result = verify_logs(
            args.file,
            expected_records=_per_file(args.expect_records, len(args.file), "--expect-records"),
            **options,
        )
        code, lines = _set_verdicts(result)
        if args.format == "json":
            _write_json(out, {"schema": VERIFY_SCHEMA, **_set_document(result, code)})
        else:
            out.write("".join(f"{line}\n" for line in lines))
        return code
    result, summaries, total = summarize_logs(
        args.file, agent=args.agent, since=args.since, **options
    )
    code, lines = _set_verdicts(result)
    if args.format == "json":
        document = {"schema": SUMMARY_SCHEMA, **_set_document(result, code), "total": total}
        for log, summary in zip(document["logs"], summaries, strict=True):
            log["summary"] = summary
        _write_json(out, document)
        return code
    for line, summary in zip(lines, summaries, strict=False):
        out.write(f"== {line}\n")
        _write_counts(out, summary, _filters(args))
    out.write(f"== total: {lines[-1]}\n")
    for line in lines[len(summaries) : -1]:
        out.write(f"{line}\n")
    _write_counts(out, total, _filters(args))
    return code
