"""``skillguard validate``: check skill folders, and write the results in four formats.

Every format (text, JSON, GitHub annotations, SARIF) is written as the run goes, one skill
at a time. No traceback reaches the terminal whatever the input: an unexpected exception
while checking one path becomes a failed result of kind ``internal`` (and is a bug).
Everything printed that came from disk (paths, keys, messages) goes through
``_text.terminal_line`` first (threat-model.md T13, T42), and each text line is also safe
from a CI runner's legacy commands.
"""

from __future__ import annotations

import json
import tempfile
from typing import IO, TYPE_CHECKING, Any, TextIO

import attrs

from skillguard._cli.ci import SarifWriter, github_result, github_skipped, json_log_safe, log_safe
from skillguard._cli.scan import Found, ReportKeys, iter_scan
from skillguard._core.errors import SkillError, safe_repr
from skillguard._core.limits import DEFAULT_LIMITS
from skillguard._core.text import terminal_line
from skillguard._fs.paths import printed_path
from skillguard._skills.parse import check_skill

if TYPE_CHECKING:
    import argparse
    from collections.abc import Mapping, Sequence

    from skillguard._core.model import Profile, SkillWarning

__all__ = ["run_validate"]

EXIT_OK = 0
EXIT_FAILED = 1


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


def _skipped_line(entry: dict[str, Any]) -> str:
    path, message = terminal_line(entry["path"]), terminal_line(entry["message"])
    return log_safe(f"skipped {path}: {entry['code']}: {message}")


def run_validate(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
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

        # Overlapping PATHs (a root and a folder inside it, a root and a link to it) reach
        # some skills twice: each is reported once, for the first PATH that reached it
        # (threat-model.md T270). The keys are paths, a few short strings per result,
        # kept only when there are several PATHs: one walk never reaches a thing twice.
        reported: set[tuple[str, ...]] = set()
        overlap = len(args.paths) > 1
        for path in args.paths:
            report_key = ReportKeys(path)
            try:
                for item in iter_scan(
                    path, max_depth=args.max_depth, max_dirs=args.max_folders, limits=limits
                ):
                    if overlap:
                        key = report_key(item)
                        if key in reported:
                            continue
                        reported.add(key)
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
    # --exit-zero: a report-only job prints every finding and goes on.
    return EXIT_FAILED if failed and not args.exit_zero else EXIT_OK


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
