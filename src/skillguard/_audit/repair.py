"""Mending an audit log whose last write was cut short: ``skillguard audit repair``.

A process killed while it appends a record, or a disk that fills up under it, leaves
the log's last line incomplete, and every writer then refuses the log (``torn_tail``),
so every audited load is denied until the log is mended. Rules (threat-model.md T191):

* Only a torn tail is mended: the last line of the file, without its newline and no
  longer than a record can be, after a chain that verifies with the key from its first
  record to the line before (``_audit._Checker`` decides, as ``audit verify`` does). An
  intact log, one that fails anywhere else (an edit, an insertion, a line over the cap,
  another log), a torn first line, a keyed log without its key or with another:
  refused, and nothing is changed. So someone who edits a record cannot have repair
  throw the edit away: an edit is a torn tail only when it is the last line and its
  newline is gone, and then its bytes are kept and the loss is recorded, exactly as
  for a crash.
* Everything happens under the log's lock, the one every writer takes, and on one
  descriptor of the log opened without following a link: the check and the change see
  the same file, and no skillguard writer appends in between.
* The torn bytes go first to a new file beside the log, ``LOG.torn-OFFSET`` (0600),
  whole or not at all: written to a temporary beside it, synced, and linked at that
  name, never over anything that is there (``_fs.write.write_new_file``); a temporary a
  killed repair left goes with the next one (T214). A file of that name that already
  holds exactly those bytes is what a repair cut short left, and is used; anything
  else there refuses the repair.
* Then a ``log_recovered`` record, chained to the last verified record (with the key of
  a keyed log), is written over the torn bytes and the file is cut just after it. A
  crash between the two leaves the record followed by a shorter torn tail, which a
  second repair moves aside; never the log without the record. The record says what
  was lost: the side file, the number of bytes, their sha256, and where they were.
  A record that cannot be written whole (a full disk) puts the torn bytes back, so the
  side file still holds exactly them and the next repair uses it (T213).
  It is also emitted on the ``skillguard.audit`` logger.
"""

from __future__ import annotations

import contextlib
import hashlib
from typing import TYPE_CHECKING

from skillguard._audit.events import log_event
from skillguard._audit.record import (
    MAX_RECORD_BYTES,
    AuditError,
    _check_key,
    _clean,
    _now,
    _os_failure,
    _version,
    chain,
)
from skillguard._audit.verify import NEEDS_KEY, TORN, WRONG_KEY, _checker
from skillguard._fs.paths import display_path, operator_path
from skillguard._fs.write import AppendFile, FileLock, sweep_temporaries, write_new_file

if TYPE_CHECKING:
    import os

    from skillguard._audit.verify import Verification, _Checker

__all__ = ["repair_log"]


def repair_log(path: str | os.PathLike[str], *, key: bytes | None = None) -> dict[str, object]:
    """``AuditLog.repair``: mend the torn tail of the log at *path*; the
    ``log_recovered`` record written. Raises ``AuditError`` (``not_torn``,
    ``key_mismatch``, ``write_failed``, ``unreadable``) or ``SkillUsageError``."""
    name = operator_path(path, "the audit log path")
    _check_key(key)
    try:
        # Opened before the lock is taken, so that a mistyped path gets no lock file;
        # nothing is read before the lock is held.
        with AppendFile(name, create=False) as file, FileLock(name):
            return _repair(file, name, key)
    except OSError as exc:
        raise _os_failure("write_failed", "cannot open for repair", name, exc) from exc


def _repair(file: AppendFile, name: str, key: bytes | None) -> dict[str, object]:
    size = file.identity()[2]
    checker = _checker([], key, None, None)
    try:
        with contextlib.closing(file.lines(max_line=MAX_RECORD_BYTES)) as lines:
            stopped = checker.run(lines)
    except OSError as exc:
        raise _os_failure("unreadable", "cannot read", name, exc) from exc
    offset = _torn_offset(checker, stopped)
    try:
        torn = file.read_at(offset, MAX_RECORD_BYTES + 1)
        changed = file.identity()[2] != size
    except OSError as exc:
        raise _os_failure("unreadable", "cannot read", name, exc) from exc
    if changed or not torn or len(torn) > MAX_RECORD_BYTES or b"\n" in torn:
        # Only a writer that ignores the lock could have changed it.
        raise AuditError("not_torn", "the audit log changed while it was checked: try again")
    side = f"{name}.torn-{offset}"
    try:
        # A repair killed while it wrote the side file left a temporary, never a part
        # of the side file: every repair holds this lock, so it is a leftover.
        sweep_temporaries(side)
        write_new_file(side, torn)
    except FileExistsError as exc:
        raise AuditError(
            "write_failed",
            f"{display_path(side)} is there already, and is not a file of the torn bytes: "
            "move it away and repair again",
        ) from exc
    except OSError as exc:
        raise _os_failure("write_failed", "cannot write the torn bytes to", side, exc) from exc
    event = "log_recovered"
    record: dict[str, object] = {
        "time": _now(),
        "event": event,
        "code": "torn_tail",
        "reason": f"a torn last line (line {checker.count}, {len(torn)} bytes at byte "
        f"{offset}) was moved to the path named here",
        "path": _clean(display_path(side)),
        "size": len(torn),
        "sha256": hashlib.sha256(torn).hexdigest(),
        "version": _version(),
    }
    data, _, _ = chain([record], checker.count - 1, checker.prev, key)
    try:
        file.replace_tail(offset, data, old=torn)
    except OSError as exc:
        raise _os_failure(
            "write_failed", "cannot write the log_recovered record to", name, exc
        ) from exc
    log_event(record)
    return record


def _torn_offset(checker: _Checker, stopped: Verification | None) -> int:
    """Where the torn tail starts; ``AuditError`` when the log has none to mend."""
    if stopped is None:
        result = checker.finish()
        reason = (
            f"the audit log is intact ({result.records} records): there is nothing to repair"
            if result.intact
            else f"{result.reason}: nothing to repair"
        )
        raise AuditError("not_torn", reason)
    if stopped.status == NEEDS_KEY:
        raise AuditError("key_mismatch", "the audit log is keyed: repair needs its key")
    if stopped.status == WRONG_KEY:
        raise AuditError("key_mismatch", "the audit log was keyed with another key")
    if stopped.status != TORN or stopped.offset is None:
        raise AuditError(
            "not_torn",
            f"the audit log fails at line {stopped.line}, which is not a torn last line "
            f"({stopped.reason}): nothing was changed",
        )
    return stopped.offset
