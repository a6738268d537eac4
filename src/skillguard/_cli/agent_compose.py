"""``skillguard agent compose`` and ``skillguard agent validate`` (seed 001).

Rules (threat-model.md T105, T106, T117, T151). ``compose`` without ``--output``
prints one agent's composed text on stdout, every control and hidden character in it
shown as ``[U+XXXX]`` (``_text.terminal_safe``), so that it cannot act on a terminal. With
``--output DIR`` every composed file is written atomically beneath ``DIR`` through one
held descriptor (``_fs.OutputFolder``): no symlink is followed, in ``DIR`` or as a file
already there, and an agent that fails writes nothing; nor do two agents that would
compose one file name (both are ``duplicate_output``). ``--check`` writes nothing and
fails when a file in ``DIR`` differs from what would be composed (drift). ``validate``
composes every harness of every agent in both dialects and writes nothing.

Exit status: 0 when everything composed (and, with ``--check``, nothing drifted), 1
when an agent failed or drifted, 2 for the operator's own mistakes (a bad option, an
unreadable or invalid token map, an unknown harness, an output folder that cannot be
used).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from skillguard._agents.compose import ComposedAgent, compose_in
from skillguard._agents.compose_read import DEFAULT_COMPOSE_LIMITS
from skillguard._agents.directory import AgentFolder, SkippedAgent, agent_folders, validate_agent
from skillguard._agents.tokenmap import EMPTY_TOKEN_MAP, SLUG, TokenMap, parse_token_map
from skillguard._core.errors import SkillError, SkillNotFoundError, SkillUsageError
from skillguard._core.text import terminal_line, terminal_safe
from skillguard._fs.operator import read_operator_bytes
from skillguard._fs.paths import operator_path
from skillguard._fs.write import OutputFolder

if TYPE_CHECKING:
    import argparse
    from typing import TextIO

__all__ = ["add_compose_commands", "run_agent_compose", "run_agent_validate"]

_EXIT_OK = 0
_EXIT_FAILED = 1
_EXIT_USAGE = 2


def add_compose_commands(actions: Any) -> None:  # noqa: ANN401 - argparse's private type
    """Register ``agent compose`` and ``agent validate`` under ``agent``."""
    compose = actions.add_parser(
        "compose",
        help="compose agent directories (agent-cortex) into harness agent files",
        description="Compose AGENTS_ROOT (every agent in it) or AGENT_DIR for one harness.",
    )
    compose.add_argument("--harness", required=True, help="the harness folder to compose")
    compose.add_argument("--token-map", help="token-map.json (version 1)")
    compose.add_argument(
        "--dialect",
        choices=("verbatim", "native"),
        default="verbatim",
        help="verbatim (the default): the JSON's fields as written; native: each harness's own",
    )
    compose.add_argument(
        "--drop-null-tools",
        action="store_true",
        help="drop a {{TOOL:}} that is null for the harness, with a warning",
    )
    compose.add_argument("--output", help="write every composed file beneath this folder")
    compose.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 if --output has drifted"
    )
    compose.add_argument(
        "--format", choices=("text", "json"), default="text", help="text (the default) or json"
    )
    compose.add_argument(
        "path",
        metavar="AGENTS_ROOT|AGENT_DIR",
        help="one agent folder (holding agent.md), or a folder of agent folders",
    )
    validate = actions.add_parser(
        "validate",
        help="check agent directories (agent-cortex) without writing",
        description="Check every agent directory under each PATH, for every harness.",
    )
    validate.add_argument(
        "--format", choices=("text", "json"), default="text", help="text (the default) or json"
    )
    validate.add_argument("--token-map", help="token-map.json (version 1)")
    validate.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="an agent folder (holding agent.md), or a folder of agent folders",
    )


def _token_map(path: str | None) -> TokenMap:
    if path is None:
        return EMPTY_TOKEN_MAP
    path = operator_path(path, "--token-map")
    try:
        raw = read_operator_bytes(path, limit=DEFAULT_COMPOSE_LIMITS.max_token_map_bytes)
    except OSError as exc:
        raise SkillUsageError(
            "bad_argument", f"the token map cannot be read ({exc.strerror or 'error'})"
        ) from exc
    try:
        return parse_token_map(raw, max_bytes=DEFAULT_COMPOSE_LIMITS.max_token_map_bytes)
    except SkillError as exc:
        raise SkillUsageError(exc.code, exc.reason) from exc


def _agent_entry(composed: ComposedAgent) -> dict[str, Any]:
    return {
        "agent": composed.agent,
        "name": composed.name,
        "file": composed.file,
        "sha256": composed.sha256,
        "bytes": len(composed.data),
        "warnings": [warning.as_dict() for warning in composed.warnings],
    }


def _skipped_entry(skipped: SkippedAgent) -> dict[str, str]:
    return {
        "agent": skipped.agent,
        "kind": skipped.kind,
        "code": skipped.code,
        "message": skipped.message,
    }


def _compose_all(
    args: argparse.Namespace, token_map: TokenMap
) -> tuple[list[ComposedAgent], list[SkippedAgent]]:
    composed: list[ComposedAgent] = []
    skipped: list[SkippedAgent] = []
    files: dict[str, list[str]] = {}
    for found in agent_folders(args.path, DEFAULT_COMPOSE_LIMITS):
        if isinstance(found, SkippedAgent):
            skipped.append(found)
            continue
        try:
            if not found.root.has_entry(args.harness):
                skipped.append(
                    SkippedAgent(
                        found.name, "not_agent", "no_harness", "no folder for this harness"
                    )
                )
                continue
            agent = compose_in(
                found.root,
                found.name,
                args.harness,
                token_map=token_map,
                dialect=args.dialect,
                drop_null_tools=args.drop_null_tools,
            )
        except SkillUsageError:
            raise
        except SkillError as exc:
            skipped.append(SkippedAgent(found.name, exc.kind, exc.code, exc.reason))
            continue
        files.setdefault(agent.file, []).append(agent.agent)
        composed.append(agent)
    # Two agents that would write one file: neither is written, and each is named. The
    # first is not the rightful one: a folder sorted before the real agent can name
    # itself so that it composes the real agent's file (T151).
    for agent in composed:
        others = [name for name in files[agent.file] if name != agent.agent]
        if others:
            skipped.append(
                SkippedAgent(
                    agent.agent,
                    "malformed",
                    "duplicate_output",
                    f"{agent.file} is also composed from {', '.join(others)}",
                )
            )
    return [agent for agent in composed if len(files[agent.file]) == 1], skipped


def _check_drift(output: str, composed: list[ComposedAgent]) -> list[SkippedAgent]:
    drift: list[SkippedAgent] = []
    try:
        folder = OutputFolder(operator_path(output, "--output"))
    except SkillNotFoundError:
        return [
            SkippedAgent(agent.agent, "drift", "missing_file", f"{agent.file} does not exist")
            for agent in composed
        ]
    except SkillError as exc:
        raise SkillUsageError(exc.code, f"--output: {exc.reason}") from exc
    with folder:
        for agent in composed:
            try:
                existing = folder.read(agent.file, cap=len(agent.data))
            except SkillError as exc:
                drift.append(SkippedAgent(agent.agent, exc.kind, exc.code, exc.reason))
                continue
            if existing is None:
                drift.append(
                    SkippedAgent(
                        agent.agent, "drift", "missing_file", f"{agent.file} does not exist"
                    )
                )
            elif existing != agent.data:
                drift.append(
                    SkippedAgent(
                        agent.agent,
                        "drift",
                        "differs",
                        f"{agent.file} differs from what would be composed",
                    )
                )
    return drift


def _write_all(
    output: str, composed: list[ComposedAgent], skipped: list[SkippedAgent]
) -> list[ComposedAgent]:
    """Write each composed file; one that cannot be written is reported, the rest go on."""
    try:
        folder = OutputFolder(operator_path(output, "--output"), create=True)
    except SkillError as exc:
        raise SkillUsageError(exc.code, f"--output: {exc.reason}") from exc
    written: list[ComposedAgent] = []
    with folder:
        for agent in composed:
            try:
                folder.write(agent.file, agent.data)
            except SkillError as exc:  # noqa: PERF203 - one failed file must not stop the others
                skipped.append(SkippedAgent(agent.agent, exc.kind, exc.code, exc.reason))
            else:
                written.append(agent)
    return written


def run_agent_compose(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Run ``agent compose``; returns the exit status (see the module docstring)."""
    if args.output is None and (args.check or args.format == "json"):
        err.write("skillguard: --check and --format json need --output DIR\n")
        return _EXIT_USAGE
    if SLUG.fullmatch(args.harness) is None:
        raise SkillUsageError("bad_argument", "--harness must be a lowercase slug")
    token_map = _token_map(args.token_map)
    if not token_map.knows(args.harness):
        raise SkillUsageError(
            "unknown_harness", f"the token map does not list the harness {args.harness!r}"
        )
    composed, skipped = _compose_all(args, token_map)
    if args.output is None:
        return _to_stdout(composed, skipped, out, err)
    if args.check:
        drifted = _check_drift(args.output, composed)
        names = {entry.agent for entry in drifted}
        composed = [agent for agent in composed if agent.agent not in names]
        skipped.extend(drifted)
    else:
        composed = _write_all(args.output, composed, skipped)
    failed = [entry for entry in skipped if entry.kind != "not_agent"]
    if args.format == "json":
        document = {
            "harness": args.harness,
            "output": args.output,
            "agents": [_agent_entry(agent) for agent in composed],
            "skipped": [_skipped_entry(entry) for entry in skipped],
            "summary": {"composed": len(composed), "skipped": len(skipped)},
        }
        out.write(json.dumps(document, indent=2, ensure_ascii=True) + "\n")
    else:
        verb = "up to date" if args.check else "wrote"
        for agent in composed:
            out.write(
                f"{verb} {terminal_line(agent.file)} ({terminal_line(agent.agent)}, "
                f"{len(agent.data)} bytes, sha256 {agent.sha256[:16]})\n"
            )
            out.writelines(
                f"    warning {w.code}: {terminal_line(w.message)}\n" for w in agent.warnings
            )
        out.writelines(_skipped_line(entry) for entry in skipped)
        out.write(f"{len(composed)} composed, {len(skipped)} skipped\n")
    return _EXIT_FAILED if failed else _EXIT_OK


def _skipped_line(entry: SkippedAgent) -> str:
    status = "note  " if entry.kind == "not_agent" else "FAILED"
    return (
        f"{status} {terminal_line(entry.agent)}: {entry.kind}/{entry.code}: "
        f"{terminal_line(entry.message)}\n"
    )


def _to_stdout(
    composed: list[ComposedAgent], skipped: list[SkippedAgent], out: TextIO, err: TextIO
) -> int:
    failed = [entry for entry in skipped if entry.kind != "not_agent"]
    if failed or len(composed) != 1:
        err.writelines(f"skillguard: {_skipped_line(entry)}" for entry in skipped)
        if not failed:
            err.write(
                "skillguard: without --output, PATH must be one agent folder with a "
                f"folder for this harness ({len(composed)} composed)\n"
            )
            return _EXIT_USAGE
        return _EXIT_FAILED
    agent = composed[0]
    err.writelines(
        f"skillguard: warning {w.code}: {terminal_line(w.message)}\n" for w in agent.warnings
    )
    # The composed text is the agent folder's own words, and a control in it (ESC, CSI,
    # DEL) would act on the terminal like any other (T42, T117): it is shown escaped, as
    # `load` shows a skill. A file that needs none is printed as composed; --output
    # writes the exact bytes.
    out.write(terminal_safe(agent.text))
    return _EXIT_OK


def _validate_folder(found: AgentFolder, token_map: TokenMap) -> dict[str, Any]:
    errors, warnings = validate_agent(found, token_map, DEFAULT_COMPOSE_LIMITS)
    return {
        "path": found.path,
        "skill": found.name,
        "ok": not errors,
        "errors": errors,
        "warnings": [warning.as_dict() for warning in warnings],
    }


def _failed(path: str, skill: str | None, kind: str, code: str, message: str) -> dict[str, Any]:
    return {
        "path": path,
        "skill": skill,
        "ok": False,
        "errors": [{"kind": kind, "code": code, "message": message}],
        "warnings": [],
    }


def _validate_path(
    path: str, token_map: TokenMap, notes: list[SkippedAgent]
) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = []
    try:
        for found in agent_folders(path, DEFAULT_COMPOSE_LIMITS):
            if isinstance(found, AgentFolder):
                results.append(_validate_folder(found, token_map))
            elif found.kind == "not_agent":
                notes.append(found)
            else:
                results.append(
                    _failed(found.agent, found.agent, found.kind, found.code, found.message)
                )
    except SkillError as exc:
        results.append(_failed(path, None, exc.kind, exc.code, exc.reason))
    return results


def run_agent_validate(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Run ``agent validate``; returns the exit status (see the module docstring)."""
    token_map = _token_map(args.token_map)
    results: list[dict[str, Any]] = []
    notes: list[SkippedAgent] = []
    for path in args.paths:
        results.extend(_validate_path(path, token_map, notes))
    ok = sum(1 for result in results if result["ok"])
    summary = {"checked": len(results), "ok": ok, "failed": len(results) - ok}
    if args.format == "json":
        out.write(json.dumps({"results": results, "summary": summary}, indent=2) + "\n")
        err.writelines(f"skillguard: {_skipped_line(note)}" for note in notes)
    else:
        for result in results:
            status = "ok    " if result["ok"] else "FAILED"
            out.write(f"{status} {terminal_line(str(result['path']))}\n")
            out.writelines(
                f"    error {e['kind']}/{e['code']}: {terminal_line(e['message'])}\n"
                for e in result["errors"]
            )
            out.writelines(
                f"    warning {w['code']}: {terminal_line(w['message'])}\n"
                for w in result["warnings"]
            )
        out.writelines(_skipped_line(note) for note in notes)
        out.write(f"{summary['checked']} checked, {summary['ok']} ok, {summary['failed']} failed\n")
    return _EXIT_OK if summary["failed"] == 0 and results else _EXIT_FAILED
