"""Several audit logs verified together: one hash-chained file per process or host.

Rules (threat-model.md T135-T137, T190):

* Each file is checked on its own, exactly as ``verify_records`` checks one log: its own
  chain, its own key (or none), its own expected log id and record count. A file that
  cannot be read (missing, not a regular file) is reported as such; it never hides the
  others.
* Then across the files: two files that hold the same log id are one log copied or
  replayed (a rolled-back copy kept beside the live one, or a host's log shipped twice),
  and that is a finding of its own, naming the files, even when each file alone is
  intact. A log's records moved into another file break that file's chain (a second
  ``log_created`` record, or a ``prev_hash`` that is not its predecessor's), so the file
  that received them fails on its own.
* Memory is bounded by the number of files, never by their records: each file is
  streamed a line at a time, and what is kept per file is its ``Verification`` (and, for
  a summary, what is shown of its counts: each table's listed names); the merged total
  adds each file's bounded tables into one as it goes (``_auditcount.TopCounts.merge``),
  so it is no larger than one file's; a merged summary lists each file's latest
  denials, an equal share of one bounded list (``_Denials``).
"""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Final

import attrs

from skillguard._audit.record import MAX_RECORD_BYTES, _check_key
from skillguard._audit.summary import MAX_LISTED_DENIALS, _Summary, _summary
from skillguard._audit.verify import Verification, _checker
from skillguard._core.errors import SkillUsageError
from skillguard._fs.operator import stream_lines
from skillguard._fs.paths import operator_path

if TYPE_CHECKING:
    import os

__all__ = [
    "MAX_LOGS",
    "SAME_LOG_ID",
    "UNREADABLE",
    "LogCheck",
    "LogSetFinding",
    "LogSetVerification",
    "summarize_logs",
    "verify_logs",
]

# A swarm has one log per process or host: thousands at most. The cap keeps what is
# held per file (a Verification, a summary) bounded whatever the caller passes.
MAX_LOGS: Final = 10_000
# The status of a file that could not be read at all (not a regular file, missing).
UNREADABLE: Final = "unreadable"
# The code of the cross-log finding: one log id held by several files.
SAME_LOG_ID: Final = "same_log_id"


@attrs.frozen
class LogCheck:
    """One file of a set: its ``path`` (as given) and the ``Verification`` of its own
    chain. A file that could not be read has ``verification.status == "unreadable"``."""

    path: str
    verification: Verification


@attrs.frozen
class LogSetFinding:
    """A failure across files: ``code`` (``"same_log_id"``), the ``log_id`` concerned,
    the ``paths`` of the files that hold it, in the order given, and a ``reason``."""

    code: str
    log_id: str
    paths: tuple[str, ...]
    reason: str


@attrs.frozen
class LogSetVerification:
    """The result of ``verify_logs``: one ``LogCheck`` per file in the order given, and
    the ``findings`` across them. ``intact`` when every file is intact and nothing was
    found across them; ``records`` counts the records of the intact files."""

    logs: tuple[LogCheck, ...]
    findings: tuple[LogSetFinding, ...]

    @property
    def intact(self) -> bool:
        return not self.findings and all(log.verification.intact for log in self.logs)

    @property
    def records(self) -> int:
        return sum(log.verification.records for log in self.logs if log.verification.intact)


def _entries(value: Sequence[object], name: str) -> list[object]:
    """A caller's sequence copied once, at most ``MAX_LOGS`` entries: its ``__len__``,
    ``__iter__`` or ``__getitem__`` is foreign code, and whatever it raises is a bad
    argument, not an escaping error. The copy is what is checked and used, so a sequence
    that changes between two reads cannot pass the check with one content and be
    verified with another; the length is checked first, so a huge lazy sequence (a
    ``range``) is refused rather than copied."""
    try:
        length = len(value)
        entries = list(value) if length <= MAX_LOGS else []
    except Exception as exc:
        raise SkillUsageError("bad_argument", f"{name} could not be read as a sequence") from exc
    if length > MAX_LOGS:
        raise SkillUsageError("bad_argument", f"give between 1 and {MAX_LOGS} audit logs")
    return entries


def _per_file(value: object, count: int, name: str, check: Callable[[object], None]) -> list[Any]:
    """*value* as one entry per file: ``None`` (none), or a sequence of *count* entries."""
    if value is None:
        return [None] * count
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise SkillUsageError("bad_argument", f"{name} must be a sequence, one entry per log")
    entries = _entries(value, name)
    if len(entries) != count:
        raise SkillUsageError("bad_argument", f"{name} must have one entry per log")
    for entry in entries:
        check(entry)
    return entries


def _check_log_id(value: object) -> None:
    if value is not None and not isinstance(value, str):
        raise SkillUsageError("bad_argument", "an expected log id must be a str or None")


def _check_count(value: object) -> None:
    if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
        raise SkillUsageError("bad_argument", "an expected record count must be an int >= 0")


def _arguments(
    paths: object, keys: object, expected_log_ids: object, expected_records: object
) -> tuple[list[str], list[bytes | None], list[str | None], list[int | None]]:
    if isinstance(paths, (str, bytes)) or not isinstance(paths, Sequence):
        raise SkillUsageError("bad_argument", "paths must be a sequence of paths")
    entries = _entries(paths, "paths")
    if not entries:
        raise SkillUsageError("bad_argument", f"give between 1 and {MAX_LOGS} audit logs")
    names = [operator_path(path, "an audit log path") for path in entries]
    if keys is None or isinstance(keys, bytes):
        # One key (or none) for every file: the hosts share it.
        _check_key(keys)
        key_list: list[bytes | None] = [keys] * len(names)
    else:
        key_list = _per_file(keys, len(names), "keys", _check_key)
    return (
        names,
        key_list,
        _per_file(expected_log_ids, len(names), "expected_log_ids", _check_log_id),
        _per_file(expected_records, len(names), "expected_records", _check_count),
    )


def _check_file(
    path: str,
    key: bytes | None,
    expected_log_id: str | None,
    expected_records: int | None,
    summary: _Summary | None,
) -> Verification:
    """One file streamed through the chain check (and into *summary* when given)."""
    checker = _checker([], key, expected_records, expected_log_id)
    try:
        with contextlib.closing(stream_lines(path, max_line=MAX_RECORD_BYTES)) as lines:
            stopped = checker.run(lines, None if summary is None else summary.add)
            if stopped is not None:
                return stopped
    except OSError:
        return Verification(
            intact=False,
            records=0,
            reason="the file cannot be read (a regular file is needed)",
            status=UNREADABLE,
        )
    return checker.finish()


def _findings(logs: Sequence[LogCheck]) -> tuple[LogSetFinding, ...]:
    """Files that hold the same log id, whether or not each one verifies: a copy of a
    log is found even when the copy (or the original) was tampered with further on."""
    holders: dict[str, list[str]] = {}
    for log in logs:
        log_id = log.verification.log_id
        if log_id is not None:
            holders.setdefault(log_id, []).append(log.path)
    return tuple(
        LogSetFinding(
            code=SAME_LOG_ID,
            log_id=log_id,
            paths=tuple(paths),
            reason=f"{len(paths)} files hold one log: copied or replayed",
        )
        for log_id, paths in holders.items()
        if len(paths) > 1
    )


def verify_logs(
    paths: Sequence[str | os.PathLike[str]],
    *,
    keys: bytes | Sequence[bytes | None] | None = None,
    expected_log_ids: Sequence[str | None] | None = None,
    expected_records: Sequence[int | None] | None = None,
) -> LogSetVerification:
    """Verify several audit logs (one per process or host) together.

    Each file is streamed through the same check as ``verify_records``, with its own key:
    *keys* is ``None`` (no file keyed), one ``bytes`` key for every file, or a sequence
    with one entry per file (``None`` for an unkeyed one). *expected_log_ids* and
    *expected_records*, when given, hold one entry per file (``None`` to skip a file).
    Then two files with the same log id are a ``"same_log_id"`` finding: one log copied
    or replayed. At most ``MAX_LOGS`` files.

    Never raises on what the files hold, nor when one cannot be read (its status is
    ``"unreadable"``); raises ``SkillUsageError`` for bad arguments.
    """
    result, _, _, _ = _verify(paths, keys, expected_log_ids, expected_records, None)
    return result


class _Denials:
    """The latest denials of each file, each labelled with its file, merged.

    Each file gets an equal share of ``MAX_LISTED_DENIALS`` (at least one): its own
    summary keeps the last ones read from it (``share`` bounds its list), never the ones
    whose ``time`` looks latest: a record's time is whatever its writer put there, so one
    host stamping its records far in the future cannot crowd the other hosts' denials out
    of the list. The merged list is shown in time order.
    """

    def __init__(self, files: int) -> None:
        self.share = max(1, MAX_LISTED_DENIALS // max(1, files))
        self.kept: list[tuple[str, int, dict[str, object]]] = []

    def keep(self, path: str, denials: Iterable[dict[str, object]]) -> None:
        """Keep one file's share, labelled with the file; ties in time keep the order
        the records were read in."""
        for denial in denials:
            self.kept.append((str(denial["time"]), len(self.kept), {**denial, "log": path}))

    def listed(self) -> list[dict[str, object]]:
        return [denial for _, _, denial in sorted(self.kept, key=lambda item: item[:2])]


def _verify(
    paths: object,
    keys: object,
    expected_log_ids: object,
    expected_records: object,
    summarize: tuple[str | None, str | None] | None,
) -> tuple[LogSetVerification, list[dict[str, Any]], _Summary, _Denials]:
    names, key_list, log_ids, counts = _arguments(paths, keys, expected_log_ids, expected_records)
    # The filters are checked before any file is read; the total merges each file's
    # tables as it goes, so it is as bounded as one file's (``_auditcount``).
    total = _summary(*summarize) if summarize is not None else _summary(None, None)
    logs = []
    summaries = []
    denials = _Denials(len(names))
    for path, key, log_id, count in zip(names, key_list, log_ids, counts, strict=True):
        summary = None
        if summarize is not None:
            summary = _summary(*summarize)
            # The set lists denials once, merged (``_Denials``): a file keeps its share.
            summary.denials = deque(maxlen=denials.share)
        verification = _check_file(path, key, log_id, count, summary)
        logs.append(LogCheck(path=path, verification=verification))
        if summary is not None:
            # What is kept per file is what is shown of it: its listed names, not its
            # whole tables, so memory grows with the files by a bounded amount each.
            counts_only = summary.result()
            denials.keep(path, counts_only.pop("denials"))
            summaries.append(counts_only)
            total.merge(summary)
    return (
        LogSetVerification(logs=tuple(logs), findings=_findings(logs)),
        summaries,
        total,
        denials,
    )


def summarize_logs(
    paths: Sequence[str],
    *,
    keys: bytes | Sequence[bytes | None] | None = None,
    expected_log_ids: Sequence[str | None] | None = None,
    agent: str | None = None,
    since: str | None = None,
) -> tuple[LogSetVerification, list[dict[str, Any]], dict[str, Any]]:
    """``verify_logs`` and, in the same pass, each file's counts (of the records before
    its first bad one; no denials listed) and the merged total: counts added up (each
    table bounded as one file's is, exact while it has seen at most
    ``MAX_COUNTED_NAMES`` names), and each file's latest denials (an equal share of
    ``MAX_LISTED_DENIALS``) in time order, each labelled with its file (``log``). Memory
    grows with the number of files, never with their records."""
    result, summaries, merged, denials = _verify(
        paths, keys, expected_log_ids, None, (agent, since)
    )
    total = merged.result()
    total["denials"] = denials.listed()
    return result, summaries, total
