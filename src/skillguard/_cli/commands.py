"""The swarm commands: ``catalog``, ``load`` and ``trust`` (``audit`` is ``_cli.audit``).

Each returns an exit code and writes its output; ``_cli`` wires them to argparse and
keeps the last-resort guard. Everything printed that came from a skill or a folder is
escaped for its format (XML, JSON), and then for the terminal (``_text.terminal_safe``:
no ESC, C1 control, DEL or hidden character reaches it raw; threat-model.md T42).
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import TYPE_CHECKING

from skillguard._audit.log import AuditLog, Auditor
from skillguard._core.errors import SkillUsageError, safe_repr
from skillguard._core.text import terminal_line, terminal_safe
from skillguard._fs.operator import read_operator_bytes
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
    "run_catalog",
    "run_load",
    "run_select",
    "run_trust",
]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
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
