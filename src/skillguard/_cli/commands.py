"""The swarm commands: ``catalog``, ``load``, ``trust`` and ``audit``.

Each returns an exit code and writes its output; ``_cli`` wires them to argparse and
keeps the last-resort guard. Everything printed that came from a skill or a folder is
escaped for its format (XML, JSON), and then for the terminal (``_text.terminal_safe``:
no ESC, C1 control, DEL or hidden character reaches it raw; threat-model.md T42).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from typing import TYPE_CHECKING, Any

from skillguard._audit.counts import MAX_COUNTED_NAMES, rest_line, span
from skillguard._audit.log import AuditLog, Auditor
from skillguard._audit.logset import UNREADABLE, LogSetVerification, summarize_logs, verify_logs
from skillguard._audit.record import MAX_RECORD_BYTES
from skillguard._audit.report import render_audit_report
from skillguard._audit.summary import summarize_log
from skillguard._audit.verify import (
    NEEDS_KEY,
    TAMPERED,
    TORN,
    WRONG_KEY,
    Verification,
    verify_records,
)
from skillguard._core.errors import SkillUsageError, safe_repr
from skillguard._core.text import terminal_line, terminal_safe
from skillguard._fs.operator import read_operator_bytes, same_file, stream_lines
from skillguard._fs.write import write_atomic
from skillguard._skills.approval import deny_all, make_request
from skillguard._skills.console import ConsoleApprover, render_file, render_request
from skillguard._skills.discover import SkillRoots, source_folder
from skillguard._skills.embedded import EmbeddedSkills
from skillguard._skills.policy import AllowPolicy
from skillguard._skills.roots import aide_roots, default_roots
from skillguard._skills.select import SelectionRegistry
from skillguard._skills.snapshot import Snapshot, read_verified, take_snapshot
from skillguard._skills.truststore import TrustStore
from skillguard._swarm.loader import Loader

if TYPE_CHECKING:
    import argparse
    from typing import TextIO

    from skillguard._core.errors import SkillError
    from skillguard._skills.approval import ApprovalRequest, Approver, AsyncApprover, Decision
    from skillguard._skills.truststore import PinningApprover

__all__ = [
    "report",
    "run_audit",
    "run_audit_logs",
    "run_audit_repair",
    "run_audit_report",
    "run_catalog",
    "run_load",
    "run_select",
    "run_trust",
]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
# ``audit verify`` and ``audit summarize``: a keyed log checked without its key, or with
# another key, is neither intact nor proven tampered with.
EXIT_NEEDS_KEY = 3
EXIT_WRONG_KEY = 4
# A torn tail (T191): the records before it verify, and ``audit repair`` mends it.
EXIT_TORN = 5
_MAX_KEY_BYTES = 4096
# Workspace signals are file names and the like: 64 KiB is thousands of them.
_MAX_CONTEXT_BYTES = 64 * 1024


def _policy(path: str) -> AllowPolicy:
    return AllowPolicy.from_file(path)


def _key(path: str) -> bytes:
    """The HMAC key in *path*, surrounding whitespace removed: an empty key is refused,
    since it gives a log that only looks keyed."""
    try:
        key = read_operator_bytes(path, limit=_MAX_KEY_BYTES).strip()
    except OSError as exc:
        raise SkillUsageError("bad_argument", "the audit key file cannot be read") from exc
    if not key:
        raise SkillUsageError("bad_argument", "the audit key file is empty")
    return key


def _loader(
    args: argparse.Namespace,
    approver: Approver | PinningApprover = deny_all,
    trust_store: TrustStore | None = None,
) -> Loader:
    embedded = EmbeddedSkills.from_directory(args.embedded) if args.embedded else None
    audit = None
    if getattr(args, "audit_log", None):
        key_file = getattr(args, "audit_key_file", None)
        audit = AuditLog(args.audit_log, key=_key(key_file) if key_file else None)
    return Loader(
        _policy(args.policy),
        embedded=embedded,
        workspace=default_roots(args.project),
        approver=approver,
        audit=Auditor(audit),
        trust_store=trust_store,
    )


def report(err: TextIO, error: SkillError) -> int:
    """One escaped line for a refusal; the exit code of a failed command."""
    reason = safe_repr(error.reason, limit=300)[1:-1]
    err.write(f"skillguard: {error.kind}/{error.code}: {reason}\n")
    return EXIT_FAILED


def run_catalog(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    del err  # refusals are reported by the caller (``report``)
    store = None
    if args.trust_store:
        store = TrustStore(args.trust_store)
        # Read once now: a store the operator named and that cannot be read is an error
        # here, not a catalog that quietly shows pinned skills by name only.
        store.pins()
    handle = _loader(args, trust_store=store).bind(args.agent)
    text = handle.catalog_json() + "\n" if args.format == "json" else handle.catalog_xml()
    out.write(terminal_safe(text))
    return EXIT_OK


def run_load(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    approver: Approver | PinningApprover = deny_all
    prompt = ConsoleApprover(sys.stdin, sys.stderr)
    if args.approve == "prompt":
        approver = prompt
    elif args.approve == "trust":
        if not args.trust_store:
            err.write("skillguard: --approve trust needs --trust-store\n")
            return EXIT_USAGE
        approver = TrustStore(args.trust_store).approver(prompt)
    with _loader(args, approver) as loader:
        loaded = loader.bind(args.agent).load(args.name)
        out.write(terminal_safe(loaded.activation()))
    return EXIT_OK


def run_select(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``select``: exit 0 whether or not anything matched, 1 when the audit record
    cannot be written (or a refusal), 2 for a usage error or a bad registry."""
    del err  # refusals are reported by the caller (``report``)
    registry = SelectionRegistry.from_file(args.registry) if args.registry else None
    context = ""
    if args.context_file:
        try:
            raw = read_operator_bytes(args.context_file, limit=_MAX_CONTEXT_BYTES)
            context = raw.decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise SkillUsageError(
                "bad_argument",
                f"the context file cannot be read, is not UTF-8 or is over "
                f"{_MAX_CONTEXT_BYTES} bytes",
            ) from exc
    # With --approve prompt a human is asked, on the terminal, about each matching
    # workspace skill nobody approved or pinned (in rank order, only until --max-skills
    # are served); otherwise nobody is asked and only pinned skills are served.
    console = ConsoleApprover(sys.stdin, sys.stderr)

    async def ask_here(request: ApprovalRequest) -> Decision:
        # Asked in the event loop's own thread, not in a worker: Ctrl-C at the prompt
        # then ends the command at once, with no thread left blocked on the terminal.
        return console(request)

    fallback: Approver | AsyncApprover = ask_here if args.approve == "prompt" else deny_all
    approver: Approver | AsyncApprover | PinningApprover = fallback
    if args.trust_store:
        approver = TrustStore(args.trust_store).approver(fallback)
    audit = None
    if args.audit_log:
        audit = AuditLog(
            args.audit_log, key=_key(args.audit_key_file) if args.audit_key_file else None
        )
    roots = aide_roots(args.project) if args.roots == "aide" else default_roots(args.project)
    embedded = EmbeddedSkills.from_directory(args.embedded) if args.embedded else None
    with Loader(
        _policy(args.policy),
        embedded=embedded,
        workspace=roots,
        approver=approver,
        audit=Auditor(audit),
        registry=registry,
        # A human at the terminal answers in their own time, as for ``load``.
        approval_timeout=None,
    ) as loader:
        handle = loader.bind(args.agent)
        caps: dict[str, int] = {
            "max_skills": args.max_skills,
            "per_skill_bytes": args.per_skill_bytes,
            "total_bytes": args.total_bytes,
        }
        if args.approve == "prompt":
            selection = asyncio.run(handle.aselect(args.task, context=context, **caps))
        else:
            selection = handle.select(args.task, context=context, **caps)
    if args.format == "json":
        data = selection.as_dict()
        if args.explain:
            data["considered"] = [item.as_dict() for item in selection.considered]
            data["unlisted"] = selection.unlisted
        out.write(json.dumps(data, indent=2, ensure_ascii=True) + "\n")
        return EXIT_OK
    if args.explain:
        out.write(selection.explain())
    for item in selection.items:
        flag = ", truncated" if item.truncated else ""
        matched = ", ".join(item.matched)
        out.write(
            terminal_line(
                f"selected {item.name} ({item.source}, score {item.score}, {item.bytes} bytes"
                f"{flag}; matched: {matched})"
            )
            + "\n"
        )
    out.writelines(
        terminal_line(f"skipped {skipped.name}: {skipped.code}: {skipped.reason}") + "\n"
        for skipped in selection.skipped
    )
    out.writelines(terminal_line(f"warning: {warning}") + "\n" for warning in selection.warnings)
    if not selection.items:
        out.write("nothing selected\n")
    out.write(terminal_safe(selection.text))
    return EXIT_OK


def _workspace_snapshot(args: argparse.Namespace, out: TextIO | None = None) -> Snapshot:
    """The snapshot an approval of workspace skill NAME would cover, read now. With
    *out*, every file's text is written there too, each read back and verified against
    the snapshot: what the operator reads is exactly what the digest covers."""
    with SkillRoots(default_roots(args.project)) as roots:
        found = roots.discover()
        root, location = roots.locate(args.name)
        meta = next(m for m in found.skills if m.name == args.name)  # located: it is there
        snapshot = take_snapshot(
            root,
            location,
            name=args.name,
            folder=source_folder(meta.root, meta.location),
            limits=roots.limits,
            profile=roots.profile,
        )
        if out is not None:
            for entry in snapshot.manifest.files:
                data = read_verified(root, location, snapshot, entry.path)
                out.write(render_file(entry.path, data))
        return snapshot


def run_trust(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.action in ("show", "add"):
        # An agent file (--agent) has its own reading; a skill's options are checked.
        from skillguard._cli.agent_trust import run_agent_trust  # noqa: PLC0415 - agent line

        code = run_agent_trust(args, out, err)
        if code is not None:
            return code
    if args.action == "show":
        snapshot = _workspace_snapshot(args, out if args.full else None)
        out.write(render_request(make_request("(operator)", snapshot, snapshot.folder, "")))
        return EXIT_OK
    store = TrustStore(args.trust_store)
    if args.action == "list":
        for pin in store.pins():
            # Whole values (a folder path is long), every control character escaped.
            skill, source, by, when = (
                terminal_line(value) for value in (pin.skill, pin.source, pin.by, pin.when)
            )
            out.write(f"{skill}  {pin.digest}  {source}  by {by}  {when}\n")
        return EXIT_OK
    name = safe_repr(terminal_safe(args.name))[1:-1]
    if args.action == "add":
        snapshot = _workspace_snapshot(args)
        if snapshot.digest != args.digest:
            err.write(
                f"skillguard: {name} is not the reviewed content: its digest is now "
                f"{snapshot.digest}; nothing was pinned\n"
            )
            return EXIT_FAILED
        store.pin(
            args.name,
            snapshot.digest,
            args.by,
            source=snapshot.folder,
            skill_sha256=snapshot.skill.sha256,
        )
        out.write(f"pinned {name} {snapshot.digest}\n")
        return EXIT_OK
    if not store.revoke(args.name, source=args.source):
        err.write(f"skillguard: {name} is not pinned\n")
        return EXIT_FAILED
    out.write(f"revoked {name}\n")
    return EXIT_OK


def _verdict(result: Verification) -> tuple[int, str]:
    """The exit status and the one line that says what the check found."""
    if result.intact:
        return EXIT_OK, f"intact: {result.records} records"
    if result.status == NEEDS_KEY:
        return EXIT_NEEDS_KEY, "keyed: needs its key (--key-file)"
    if result.status == WRONG_KEY:
        return EXIT_WRONG_KEY, "wrong key: the log was keyed with another key"
    if result.status == TORN:
        return EXIT_TORN, (
            f"torn tail: line {result.line}: {terminal_line(result.reason)}; the "
            f"{result.records - 1} records before it verify: `skillguard audit repair` mends it"
        )
    return EXIT_FAILED, f"tampered: line {result.line}: {terminal_line(result.reason)}"


def run_audit(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``audit verify`` and ``audit summarize``: the file is streamed a line at a time
    (a regular file only, each line capped), and the chain is always checked. Several
    FILEs are verified together (``run_audit_logs``)."""
    if args.action == "summarize" and args.expect_records:
        # A summary does not check the record count: accepting the option would report
        # a log whose tail was deleted as verified to an operator who asked for the check.
        raise SkillUsageError(
            "bad_argument", "--expect-records is checked by verify and report, not summarize"
        )
    if len(args.file) > 1 or any(
        len(values or ()) > 1 for values in (args.key_file, args.expect_log_id, args.expect_records)
    ):
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
    expected_log_id = args.expect_log_id
    try:
        with contextlib.closing(stream_lines(args.file, max_line=MAX_RECORD_BYTES)) as lines:
            if args.action == "verify":
                result = verify_records(
                    lines,
                    key=key,
                    expected_records=args.expect_records,
                    expected_log_id=expected_log_id,
                )
                summary = None
            else:
                result, summary = summarize_log(
                    lines,
                    key=key,
                    agent=args.agent,
                    since=args.since,
                    expected_log_id=expected_log_id,
                )
    except OSError:
        err.write("skillguard: the audit log cannot be read (a regular file is needed)\n")
        return EXIT_FAILED
    code, verdict = _verdict(result)
    if summary is None:
        out.write(f"{verdict}\n")
        return code
    if not result.intact and (result.line == 1 or result.status not in {TAMPERED, TORN}):
        # Nothing was verified: a file that is not a log, or a log we cannot check.
        err.write(f"skillguard: {verdict}\n")
        return code
    header = "" if result.intact else f"NOT VERIFIED: {verdict}"
    if args.format == "json":
        document = {"verified": result.intact, "problem": header or None, **summary}
        out.write(json.dumps(document, indent=2, ensure_ascii=True, sort_keys=True) + "\n")
        return code
    if header:
        out.write(f"{header}\n")
    _write_counts(out, summary)
    return code


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
    given = (args.expect_records, args.expect_log_id, args.agent, args.since, args.until)
    if any(value is not None for value in (*given, args.output)):
        raise SkillUsageError("bad_argument", "audit repair takes FILE and --key-file only")
    record = AuditLog.repair(args.file, key=_key(args.key_file) if args.key_file else None)
    out.write(
        f"repaired: {record['size']} torn bytes moved to {terminal_line(str(record['path']))}; "
        f"log_recovered written as record {record['seq']}\n"
    )
    return EXIT_OK


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


def _write_counts(out: TextIO, summary: dict[str, Any]) -> None:
    """A summary as text: counts, then the listed denials (with their log when merged)."""
    out.write(f"{summary['records']} records\n")
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
    for denial in summary["denials"]:
        shown = {k: safe_repr(str(v))[1:-1] for k, v in denial.items() if k != "log"}
        out.write(
            f"denied {shown['time']} agent={shown['agent']} skill={shown['skill']} "
            f"{shown['event']} {shown['code']}: {shown['reason']}"
            + (f" log={terminal_line(str(denial['log']))}\n" if "log" in denial else "\n")
        )


# The exit status of several logs is the worst of theirs, in this order: a log tampered
# with (or unreadable, or two files holding one log) outranks one checked with the
# wrong key, which outranks one that needed a key and got none, which outranks a torn
# tail (every record before it verified).
_SEVERITY = {EXIT_OK: 0, EXIT_TORN: 1, EXIT_NEEDS_KEY: 2, EXIT_WRONG_KEY: 3, EXIT_FAILED: 4}


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
    """``audit verify`` and ``audit summarize`` of several logs (one per process or host):
    each checked on its own, then across them; the exit status is the worst of theirs."""
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
        out.write("".join(f"{line}\n" for line in lines))
        return code
    result, summaries, total = summarize_logs(
        args.file, agent=args.agent, since=args.since, **options
    )
    code, lines = _set_verdicts(result)
    if args.format == "json":
        document = {
            "verified": result.intact,
            "problems": [
                line
                for line, log in zip(lines, result.logs, strict=False)
                if not log.verification.intact
            ]
            + lines[len(result.logs) : -1],
            "logs": [
                {
                    "file": log.path,
                    "log_id": log.verification.log_id,
                    "verified": log.verification.intact,
                    **summary,
                }
                for log, summary in zip(result.logs, summaries, strict=True)
            ],
            "total": total,
        }
        out.write(json.dumps(document, indent=2, ensure_ascii=True, sort_keys=True) + "\n")
        return code
    for line, summary in zip(lines, summaries, strict=False):
        out.write(f"== {line}\n")
        _write_counts(out, summary)
    out.write(f"== total: {lines[-1]}\n")
    for line in lines[len(summaries) : -1]:
        out.write(f"{line}\n")
    _write_counts(out, total)
    return code
