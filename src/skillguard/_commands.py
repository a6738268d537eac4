"""The swarm commands: ``catalog``, ``load``, ``trust`` and ``audit``.

Each returns an exit code and writes its output; ``_cli`` wires them to argparse and
keeps the last-resort guard. Everything printed that came from a skill or a folder is
escaped for its format (XML, JSON), and then for the terminal (``_text.terminal_safe``:
no ESC, C1 control, DEL or hidden character reaches it raw; threat-model.md T42).
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

from ._approval import ConsoleApprover, TrustStore, deny_all
from ._audit import AuditLog, Auditor, summarize_records, verify_records
from ._discover import default_roots
from ._errors import SkillUsageError, safe_repr
from ._fs import read_trusted_bytes, read_trusted_file
from ._loader import EmbeddedSkills, Loader
from ._policy import AllowPolicy, PolicyError
from ._text import terminal_line, terminal_safe

if TYPE_CHECKING:
    import argparse
    from typing import TextIO

    from ._approval import Approver
    from ._errors import SkillError

__all__ = ["report", "run_audit", "run_catalog", "run_load", "run_trust"]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


def _policy(path: str) -> AllowPolicy:
    try:
        raw = read_trusted_bytes(path)
    except OSError as exc:
        raise PolicyError("bad_policy", "the policy file cannot be read") from exc
    return AllowPolicy.from_yaml(raw)


def _loader(args: argparse.Namespace, approver: Approver = deny_all) -> Loader:
    embedded = EmbeddedSkills.from_directory(args.embedded) if args.embedded else None
    audit = None
    if getattr(args, "audit_log", None):
        key_file = getattr(args, "audit_key_file", None)
        try:
            key = read_trusted_bytes(key_file).strip() if key_file else None
        except OSError as exc:
            raise SkillUsageError("bad_argument", "the audit key file cannot be read") from exc
        audit = AuditLog(args.audit_log, key=key)
    return Loader(
        _policy(args.policy),
        embedded=embedded,
        workspace=default_roots(args.project),
        approver=approver,
        audit=Auditor(audit),
    )


def report(err: TextIO, error: SkillError) -> int:
    """One escaped line for a refusal; the exit code of a failed command."""
    reason = safe_repr(error.reason, limit=300)[1:-1]
    err.write(f"skillguard: {error.kind}/{error.code}: {reason}\n")
    return EXIT_FAILED


def run_catalog(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    del err  # refusals are reported by the caller (``report``)
    handle = _loader(args).bind(args.agent)
    text = handle.catalog_json() + "\n" if args.format == "json" else handle.catalog_xml()
    out.write(terminal_safe(text))
    return EXIT_OK


def run_load(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    approver: Approver = deny_all
    prompt = ConsoleApprover(sys.stdin, sys.stderr)
    if args.approve == "prompt":
        approver = prompt
    elif args.approve == "trust":
        if not args.trust_store:
            err.write("skillguard: --approve trust needs --trust-store\n")
            return EXIT_USAGE
        approver = TrustStore(args.trust_store).approver(prompt)
    loaded = _loader(args, approver).bind(args.agent).load(args.name)
    out.write(terminal_safe(loaded.activation()))
    return EXIT_OK


def run_trust(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    store = TrustStore(args.trust_store)
    if args.action == "list":
        for pin in store.pins():
            skill, digest, by, when = (
                safe_repr(value)[1:-1] for value in (pin.skill, pin.sha256, pin.by, pin.when)
            )
            out.write(f"{skill}  {digest}  by {by}  {when}\n")
        return EXIT_OK
    if not args.name or (args.action == "add" and not args.sha256):
        err.write(
            f"skillguard: trust {args.action} needs NAME"
            + (" and SHA256\n" if args.action == "add" else "\n")
        )
        return EXIT_USAGE
    name = safe_repr(args.name)[1:-1]
    if args.action == "add":
        store.pin(args.name, args.sha256, args.by)
        out.write(f"pinned {name} {safe_repr(args.sha256)[1:-1]}\n")
        return EXIT_OK
    if not store.revoke(args.name):
        err.write(f"skillguard: {name} is not pinned\n")
        return EXIT_FAILED
    out.write(f"revoked {name}\n")
    return EXIT_OK


def run_audit(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    try:
        lines = read_trusted_file(args.file).splitlines()
        key = read_trusted_bytes(args.key_file).strip() if args.key_file else None
    except OSError:
        err.write("skillguard: the audit log (or key) cannot be read\n")
        return EXIT_FAILED
    if args.action == "verify":
        result = verify_records(lines, key=key, expected_records=args.expect_records)
        if result.intact:
            out.write(f"intact: {result.records} records\n")
            return EXIT_OK
        out.write(f"tampered: line {result.line}: {terminal_line(result.reason)}\n")
        return EXIT_FAILED
    records: list[dict[str, Any]] = []
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            records.append(record)
    summary = summarize_records(records, agent=args.agent, since=args.since)
    if args.format == "json":
        out.write(json.dumps(summary, indent=2, ensure_ascii=True, sort_keys=True) + "\n")
        return EXIT_OK
    out.write(f"{summary['records']} records\n")
    for title in ("by_decision", "by_agent", "by_skill"):
        counts = ", ".join(
            f"{safe_repr(str(k))[1:-1]}={v}" for k, v in sorted(summary[title].items())
        )
        out.write(f"{title.replace('_', ' ')}: {counts or '-'}\n")
    for denial in summary["denials"]:
        shown = {k: safe_repr(str(v))[1:-1] for k, v in denial.items()}
        out.write(
            f"denied {shown['time']} agent={shown['agent']} skill={shown['skill']} "
            f"{shown['event']} {shown['code']}: {shown['reason']}\n"
        )
    return EXIT_OK
