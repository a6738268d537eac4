"""``skillguard agent install`` and ``skillguard agent uninstall`` (seed 001's delivery).

Rules (threat-model.md T290-T296). ``install`` composes every agent of AGENTS_DIR for
one harness (a deferred agent is copied from ``agents-native/``; ``--native`` names
that folder, by default the ``agents-native`` folder beside AGENTS_DIR), and with
``--skills DIR`` every skill with its tokens substituted, then writes them all into
``--dest`` (by default the harness's documented user folder) through
``_agents.install``: nothing or everything, a manifest of what was written, nothing
overwritten that skillguard did not write unless ``--force`` names it. ``--dry-run``
and ``--check`` write nothing. Every refusal is a typed finding with a code, in text
and JSON.

Exit status: 0 when the action succeeded (``--check``: nothing drifted), 1 when a
finding refused it or something drifted (nothing was written), 2 for the operator's
own mistakes (a bad option, an unreadable or invalid token map, a ``--dest`` or
AGENTS_DIR that cannot be used).
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import TYPE_CHECKING, Any

from skillguard._agents.compose_read import DEFAULT_COMPOSE_LIMITS
from skillguard._agents.install import check_install, install_plan, uninstall
from skillguard._agents.install_plan import HARNESS_DESTINATIONS, NATIVE_FOLDER, plan_install
from skillguard._agents.tokenmap import EMPTY_TOKEN_MAP, TokenMap, parse_token_map
from skillguard._core.errors import SkillError, SkillUsageError
from skillguard._core.text import terminal_line
from skillguard._fs.operator import read_operator_bytes
from skillguard._fs.paths import operator_path

if TYPE_CHECKING:
    import argparse
    from typing import TextIO

    from skillguard._agents.install import InstallReport
    from skillguard._agents.install_plan import InstallPlan

__all__ = ["add_install_commands", "run_agent_install", "run_agent_uninstall"]

_EXIT_OK = 0
_EXIT_FAILED = 1


def add_install_commands(actions: Any) -> None:  # noqa: ANN401 - argparse's private type
    """Register ``agent install`` and ``agent uninstall`` under ``agent``."""
    install = actions.add_parser(
        "install",
        help="compose every agent for a harness and install them into its folder",
        description="Compose AGENTS_DIR for one harness and write the files into --dest, "
        "all or nothing, with a manifest of what was written.",
    )
    install.add_argument(
        "--harness",
        required=True,
        choices=sorted(HARNESS_DESTINATIONS),
        help="the harness to compose for and install into",
    )
    install.add_argument(
        "--dest",
        help="the folder to install into (default: the harness's user folder, "
        + ", ".join(f"{h}: {d}" for h, d in sorted(HARNESS_DESTINATIONS.items()))
        + ")",
    )
    install.add_argument("--skills", help="also install these skills, tokens substituted")
    install.add_argument("--token-map", help="token-map.json (version 1)")
    install.add_argument(
        "--native",
        help=f"the native agents folder (default: {NATIVE_FOLDER} beside AGENTS_DIR)",
    )
    install.add_argument("--dry-run", action="store_true", help="write nothing; say what")
    install.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 if --dest has drifted"
    )
    install.add_argument(
        "--force",
        action="append",
        default=[],
        metavar="NAME",
        help="replace NAME in --dest although skillguard did not write it (repeatable)",
    )
    install.add_argument(
        "--format", choices=("text", "json"), default="text", help="text (the default) or json"
    )
    install.add_argument("agents_dir", metavar="AGENTS_DIR", help="a folder of agent folders")
    remove = actions.add_parser(
        "uninstall",
        help="remove exactly the files agent install wrote",
        description="Remove the files listed in --dest's install manifest, all or none.",
    )
    remove.add_argument("--dest", required=True, help="the folder agent install wrote into")
    remove.add_argument("--dry-run", action="store_true", help="write nothing; say what")
    remove.add_argument(
        "--format", choices=("text", "json"), default="text", help="text (the default) or json"
    )


def _token_map(path: str | None) -> tuple[TokenMap, str]:
    if path is None:
        return EMPTY_TOKEN_MAP, ""
    path = operator_path(path, "--token-map")
    try:
        raw = read_operator_bytes(path, limit=DEFAULT_COMPOSE_LIMITS.max_token_map_bytes)
    except OSError as exc:
        raise SkillUsageError(
            "bad_argument", f"the token map cannot be read ({exc.strerror or 'error'})"
        ) from exc
    try:
        token_map = parse_token_map(raw, max_bytes=DEFAULT_COMPOSE_LIMITS.max_token_map_bytes)
    except SkillError as exc:
        raise SkillUsageError(exc.code, exc.reason) from exc
    return token_map, hashlib.sha256(raw).hexdigest()


def _native_dir(args: argparse.Namespace) -> str | None:
    if args.native is not None:
        return operator_path(args.native, "--native")
    beside = os.path.join(os.path.dirname(os.path.abspath(args.agents_dir)), NATIVE_FOLDER)
    # Whatever is there is used, so a symlink there is refused, never ignored.
    return beside if os.path.lexists(beside) else None


def default_dest(harness: str) -> str:
    """The harness's documented user folder for agent files, ``~`` expanded."""
    return os.path.expanduser(HARNESS_DESTINATIONS[harness])


def run_agent_install(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Run ``agent install``; returns the exit status (see the module docstring)."""
    if args.check and (args.dry_run or args.force):
        err.write("skillguard: --check writes nothing: it takes no --dry-run or --force\n")
        return 2
    token_map, digest = _token_map(args.token_map)
    dest = operator_path(args.dest, "--dest") if args.dest else default_dest(args.harness)
    try:
        plan = plan_install(
            operator_path(args.agents_dir, "AGENTS_DIR"),
            args.harness,
            token_map=token_map,
            token_map_digest=digest,
            native_dir=_native_dir(args),
            skills_dir=None if args.skills is None else operator_path(args.skills, "--skills"),
        )
        if args.check:
            report = check_install(plan, dest)
        else:
            report = install_plan(plan, dest, force=frozenset(args.force), dry_run=args.dry_run)
    except SkillUsageError:
        raise
    except SkillError as exc:
        raise SkillUsageError(exc.code, exc.reason) from exc
    _write(report, out, plan, token_map, args.format)
    return _EXIT_OK if report.ok else _EXIT_FAILED


def run_agent_uninstall(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:  # noqa: ARG001
    """Run ``agent uninstall``; returns the exit status."""
    try:
        report = uninstall(operator_path(args.dest, "--dest"), dry_run=args.dry_run)
    except SkillUsageError:
        raise
    except SkillError as exc:
        raise SkillUsageError(exc.code, exc.reason) from exc
    _write(report, out, None, None, args.format)
    return _EXIT_OK if report.ok else _EXIT_FAILED


def _write(
    report: InstallReport,
    out: TextIO,
    plan: InstallPlan | None,
    token_map: TokenMap | None,
    form: str,
) -> None:
    warnings = [] if plan is None else list(plan.warnings)
    if token_map is not None:
        warnings.extend(("token map", w) for w in token_map.warnings)
    if form == "json":
        document = {
            "action": report.action,
            "harness": report.harness,
            "dest": report.dest,
            "dry_run": report.dry_run,
            "ok": report.ok,
            "written": list(report.written),
            "removed": list(report.removed),
            "unchanged": list(report.unchanged),
            "findings": [finding.as_dict() for finding in report.findings],
            "warnings": [{"subject": s, **w.as_dict()} for s, w in warnings],
        }
        out.write(json.dumps(document, indent=2, ensure_ascii=True) + "\n")
        return
    done = not report.dry_run and report.ok
    out.write(
        f"{report.action} {terminal_line(report.harness or '-')} -> {terminal_line(report.dest)}\n"
    )
    out.writelines(
        f"{'wrote' if done else 'would write'} {terminal_line(path)}\n" for path in report.written
    )
    out.writelines(
        f"{'removed' if done else 'would remove'} {terminal_line(path)}\n"
        for path in report.removed
    )
    for subject, warning in warnings:
        shown = f"{warning.code}: {terminal_line(warning.message)}"
        out.write(f"warning {terminal_line(subject)}: {shown}\n")
    for finding in report.findings:
        status = "note  " if finding.severity == "note" else "FAILED"
        out.write(
            f"{status} {terminal_line(finding.subject)}: {finding.kind}/{finding.code}: "
            f"{terminal_line(finding.message)}\n"
        )
    errors = sum(1 for finding in report.findings if finding.severity == "error")
    if report.action == "check":
        out.write(f"{len(report.unchanged)} unchanged, {errors} drifted or failed\n")
    elif errors:
        what = "removed" if report.action == "uninstall" else "written"
        out.write(f"{errors} refused: nothing was {what} (all or nothing)\n")
    else:
        count = len(report.written) if report.action == "install" else len(report.removed)
        tense = "would be " if report.dry_run else ""
        what = "written" if report.action == "install" else "removed"
        out.write(f"{count} file(s) {tense}{what}\n")
