"""Every decision written down: ``Auditor`` emits it, ``AuditLog`` appends it to a file.

Rules (threat-model.md T27, T54, T191, T192):

* ``Auditor`` emits each decision as an event (``_audit.events``) and, given an
  ``AuditLog``, writes it there first: a record that cannot be written raises
  ``AuditError``, and the load that needed it is denied.
* ``AuditLog`` appends hash-chained records (``_audit.record``) under a lock on
  ``path + '.lock'`` (threads and processes alike), so that several writers extend one
  chain. A new or empty file gets its ``log_created`` record at once, so ``log_id`` is
  known from the start.
* The writer keeps the chain head (seq, last hash) in memory and re-reads the file only
  when its ``(st_dev, st_ino, st_size)`` differ from what this writer last left, that
  is when another writer (thread or process) appended, or the file was replaced; it
  then reads the first and the last line, capped, and checks both with its key.
* A torn tail (T191), the last line without its ``\n``, is what a write cut short
  leaves: the writer refuses to extend it (``torn_tail``) until ``audit repair``
  (``_audit.repair``) moves it aside.
* Every OS error says what failed, on which path, and why (T192): ``write_failed`` for
  a log that cannot be opened, locked or appended to, ``unreadable`` for one whose
  records cannot be read back.
"""

from __future__ import annotations

import hmac
import os
import secrets
import socket
from collections.abc import Mapping

from skillguard._audit.events import log_event
from skillguard._audit.origin import current_origin
from skillguard._audit.record import (
    _GENESIS,
    _HEADER_EVENT,
    _MAX_RECORD_DEPTH,
    AUDIT_FIELDS,
    MAX_RECORD_BYTES,
    AuditError,
    _check_key,
    _clean,
    _digest,
    _key_id,
    _load_json,
    _now,
    _os_failure,
    _version,
    canonical,
    chain,
)
from skillguard._audit.repair import repair_log
from skillguard._core.errors import SkillUsageError
from skillguard._fs.paths import display_path, operator_path
from skillguard._fs.write import AppendFile, FileLock

__all__ = ["AuditLog", "Auditor"]


def _check_fields(fields: object) -> dict[str, object]:
    if not isinstance(fields, Mapping):
        raise SkillUsageError("bad_argument", "an audit record must be a mapping")
    record: dict[str, object] = {}
    for name, value in fields.items():
        if not isinstance(name, str):
            raise SkillUsageError("bad_argument", "audit field names must be str")
        if value is not None and not isinstance(value, (str, int)):
            raise SkillUsageError("bad_argument", "audit field values must be str, int or None")
        record[name] = value
    if record.get("event") == _HEADER_EVENT:
        raise SkillUsageError("bad_argument", "log_created is written by AuditLog itself")
    return record


def _read_line(raw: bytes) -> dict[str, object] | None:
    """A record line read back from the log, or ``None`` when it is not one."""
    if not raw or len(raw) > MAX_RECORD_BYTES or not raw.isascii():
        return None
    try:
        record = _load_json(
            raw.decode("ascii"), max_chars=MAX_RECORD_BYTES, max_depth=_MAX_RECORD_DEPTH
        )
    except ValueError:
        return None
    if not isinstance(record, dict) or canonical(record) != raw:
        return None
    return record


class AuditLog:
    """A JSON-lines file of hash-chained records (the operator's own path).

    ``AuditLog(path, key=None)``: *path* a ``str`` or path-like object; *key* ``None``
    (SHA-256 chain) or non-empty ``bytes`` (HMAC-SHA-256). A new or empty file gets its
    ``log_created`` record at once, so ``log_id`` is known from the start.

    Each ``write`` takes an exclusive lock on ``path + '.lock'`` (threads and processes
    alike) and appends the next record, so that several writers extend one chain; the
    file is re-read (its first and last line, capped) only when another writer changed
    it. Raises ``SkillUsageError`` for bad arguments, and :class:`AuditError` when the
    log or its lock cannot be opened for writing, or a record cannot be written
    (``write_failed``), the log's records cannot be read back (``unreadable``), its last
    line is incomplete (``torn_tail``: see ``skillguard audit repair``), its last or
    first record does not verify with this key (``corrupt``), or it was written with
    another key or without one (``key_mismatch``). The reason of an OS failure names
    the file and the OS's reason.
    """

    def __init__(self, path: str | os.PathLike[str], *, key: bytes | None = None) -> None:
        self.path = operator_path(path, "the audit log path")
        _check_key(key)
        self._key = key
        self._lock = FileLock(self.path)
        # The chain head this writer knows, and the file identity it last left.
        self._seq = 0
        self._last = _GENESIS
        self._log_id = ""
        self._seen: tuple[int, int, int] | None = None
        try:
            with self._lock, AppendFile(self.path) as file:
                self._sync(file)
                if self._seq == 0:
                    self._append(file, [])
        except OSError as exc:
            # The lock file or the log could not be opened for writing (a read-only or
            # full file system, a folder that is not writable, not a regular file).
            raise _os_failure("write_failed", "cannot open for writing", self.path, exc) from exc

    @property
    def log_id(self) -> str:
        """The random id of the log (from its ``log_created`` record): ship it elsewhere
        with the record count to catch a swapped or rolled-back log."""
        return self._log_id

    def _sync(self, file: AppendFile) -> None:
        try:
            identity = file.identity()
            if identity == self._seen:
                return
            size = identity[2]
            if size == 0:  # a new log, or one moved away (rotated): start a new chain
                self._seq, self._last, self._log_id = 0, _GENESIS, ""
                self._seen = identity
                return
            head = file.read_at(0, MAX_RECORD_BYTES + 1)
            start = max(0, size - MAX_RECORD_BYTES - 2)
            tail = file.read_at(start, size - start)
        except OSError as exc:
            raise _os_failure("unreadable", "cannot read", self.path, exc) from exc
        first = self._first_record(head)
        if not tail.endswith(b"\n"):
            # What a write cut short leaves (T191): say how to mend it, not just that
            # the log is broken; ``audit repair`` checks the whole chain before it acts.
            raise AuditError(
                "torn_tail",
                "the last line of the audit log is incomplete (a write cut short by a "
                "crash or a full disk?): check it with `skillguard audit verify` and "
                f"mend it with `skillguard audit repair {display_path(self.path)}`",
            )
        cut = tail.rfind(b"\n", 0, len(tail) - 1)
        if cut == -1 and start > 0:
            raise AuditError("corrupt", "the last audit record is over the size cap")
        last = self._checked(tail[cut + 1 : -1], "the last audit record")
        seq = last.get("seq")
        if not isinstance(seq, int) or isinstance(seq, bool) or seq < 1:
            raise AuditError("corrupt", "the last audit record has no sequence number")
        self._seq, self._last, self._log_id = seq, str(last["hash"]), first
        self._seen = identity

    def _checked(self, raw: bytes, what: str) -> dict[str, object]:
        record = _read_line(raw)
        if record is None or not isinstance(record.get("hash"), str):
            raise AuditError("corrupt", f"{what} is not readable")
        claimed = str(record.pop("hash"))
        if not hmac.compare_digest(_digest(canonical(record), self._key), claimed):
            raise AuditError("corrupt", f"{what} does not verify with this key")
        record["hash"] = claimed
        return record

    def _first_record(self, head: bytes) -> str:
        cut = head.find(b"\n")
        if cut == -1:
            raise AuditError("corrupt", "the first audit record is not readable")
        record = _read_line(head[:cut])
        if record is None or record.get("event") != _HEADER_EVENT or record.get("seq") != 1:
            raise AuditError("corrupt", "the file is not a skillguard audit log")
        keyed = record.get("keyed")
        if keyed is not (self._key is not None) or (
            self._key is not None and record.get("key_id") != _key_id(self._key)
        ):
            raise AuditError(
                "key_mismatch", "the audit log was written with another key, or without one"
            )
        self._checked(head[:cut], "the first audit record")
        return str(record.get("log_id"))

    def _header(self) -> dict[str, object]:
        header: dict[str, object] = {
            "time": _now(),
            "event": _HEADER_EVENT,
            "log_id": secrets.token_hex(16),
            # Which host and process wrote the log: several logs are verified together.
            "host": _clean(socket.gethostname()),
            "pid": os.getpid(),
            "keyed": self._key is not None,
            "version": _version(),
        }
        if self._key is not None:
            header["key_id"] = _key_id(self._key)
        return header

    def _append(self, file: AppendFile, records: list[dict[str, object]]) -> None:
        """Chain *records* (after a ``log_created`` record on an empty log) and append
        them in one write; the head in memory moves only once the write succeeded."""
        seq, last, log_id = self._seq, self._last, self._log_id
        if seq == 0:
            header = self._header()
            log_id = str(header["log_id"])
            records = [header, *records]
        data, seq, last = chain(records, seq, last, self._key)
        self._seen = None  # until the write is known to be whole
        try:
            file.append(data)
        except OSError as exc:  # a full disk, a quota, a file size limit, an I/O error
            raise _os_failure("write_failed", "cannot append to", self.path, exc) from exc
        self._seq, self._last, self._log_id = seq, last, log_id
        self._seen = file.identity()

    def write(self, fields: Mapping[str, object]) -> dict[str, object]:
        """Append one record (flat: ``str`` keys; ``str``, ``int`` or ``None`` values)
        and return it with ``seq``, ``prev_hash`` and ``hash``."""
        record = _check_fields(fields)
        try:
            with self._lock, AppendFile(self.path) as file:
                self._sync(file)
                self._append(file, [record])
        except OSError as exc:
            raise _os_failure("write_failed", "cannot open for writing", self.path, exc) from exc
        return record

    @staticmethod
    def repair(path: str | os.PathLike[str], *, key: bytes | None = None) -> dict[str, object]:
        """Mend a log whose last line was torn by a write cut short (a crash, a full
        disk): the torn bytes are moved to a new file beside the log, and a
        ``log_recovered`` record chained to the last verified one says where they went,
        how many there were and their sha256. Returns that record.

        Done under the log's lock, from one descriptor of the log (no link followed),
        and only when the whole chain verifies with *key* up to the torn line: raises
        :class:`AuditError` ``not_torn`` for an intact log, one tampered with elsewhere,
        or not a log, ``key_mismatch`` for a keyed log without its key (or with
        another), ``write_failed`` / ``unreadable`` when a file cannot be written or
        read, and ``SkillUsageError`` for bad arguments. See ``_auditrepair``.
        """
        return repair_log(path, key=key)


class Auditor:
    """Emits each decision as an event (structlog if the host configured it, else the
    stdlib ``skillguard.audit`` logger), and to an ``AuditLog`` when given one.

    Raises ``SkillUsageError`` when *log* is neither ``None`` nor an ``AuditLog``.
    """

    def __init__(self, log: AuditLog | None = None) -> None:
        if log is not None and not isinstance(log, AuditLog):
            raise SkillUsageError("bad_argument", "the audit log must be an AuditLog or None")
        self.log = log

    def emit(self, event: str, **fields: object) -> None:
        """Record one decision. Raises ``AuditError`` if the log cannot be written."""
        record: dict[str, object] = {"time": _now(), "event": event}
        asked = current_origin()
        if asked is not None:
            fields = {**fields, "via": asked[0], "client": asked[1]}
        for name in AUDIT_FIELDS[2:-1]:
            if fields.get(name) is not None:
                record[name] = _clean(fields[name])
        record["version"] = _version()
        if self.log is not None:
            self.log.write(record)
        log_event(record)
