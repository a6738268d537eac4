"""Every decision written down: audit events, and a tamper-evident JSON-lines log.

Rules (threat-model.md T27, T50-T56):

* Every decision is an event on the ``skillguard.audit`` logger, and skillguard is quiet
  by default. skillguard never configures logging: when the host configured structlog
  (``structlog.is_configured()`` at emit time) the event goes through structlog;
  otherwise it goes to the stdlib ``logging.getLogger("skillguard.audit")`` at INFO,
  which holds a ``NullHandler``, so a process that configured nothing prints nothing
  (structlog's unconfigured default would print every event to stdout and corrupt any
  stdio protocol spoken there).
* Fields are fixed and non-secret: UTC time, event, agent, skill, source, decision,
  code, reason, path, size, sha256, approver, request id, digest, approval scope
  (``once`` or ``pin``), skillguard version. Never a body. Strings that came from
  untrusted input are escaped (no control characters, no bidi overrides) and bounded.
* ``AuditLog`` adds a hash chain: each record has ``seq``, ``prev_hash`` and ``hash``
  (SHA-256, or HMAC-SHA-256 with a key, over the canonical JSON of the record without
  ``hash``), appended under a lock. Its first record (``log_created``) names the log:
  a random ``log_id``, the creation time, whether it is keyed and, if so, a key id that
  is not the key. If a record cannot be written, ``AuditError`` is raised and the load
  that needed it is denied.
* The writer keeps the chain head (seq, last hash) in memory and re-reads the file only
  when its ``(st_dev, st_ino, st_size)`` differ from what this writer last left, that
  is when another writer (thread or process) appended, or the file was replaced.
* ``verify_records`` names the first edited, inserted, reordered or deleted record.
  Every line is read with caps (``MAX_RECORD_BYTES``, a nesting depth) by a strict
  reader: over a cap, a duplicate key, a byte that is not printable ASCII (CR, U+2028,
  NEL, FF, VT, RS, FS...), an empty line: the log is tampered with at that line. It
  never raises on the content of a line.
* A torn tail (T191) is the one failure that is not tampering: the last line of the
  file, after at least one verified record and every earlier line ended by its
  ``\n``, has no ``\n`` and is no longer than a record can be. That is what a write cut
  short by a crash or a full disk leaves, and the writer refuses to extend it
  (``torn_tail``) until ``audit repair`` (``_auditrepair``) moves it aside. Anything
  else, anywhere else, stays tampering; so do records missing before it, when the
  expected count says so (T211: the torn record was never counted, its writer never
  returned).
* Every OS error says what failed, on which path, and why (T192): a log that cannot be
  opened, locked or appended to is ``write_failed``, one whose records cannot be read
  back is ``unreadable``.
* A summary's tables are bounded (``_auditcount.TopCounts``, T190): exact up to
  ``MAX_COUNTED_NAMES`` names each, approximate with stated bounds past that; the
  number of records is always exact.
"""

from __future__ import annotations

import datetime as dt
import errno
import hashlib
import hmac
import json
import logging
import re
import secrets
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Final

import attrs
import structlog

from ._auditcount import MAX_COUNTED_NAMES, MAX_SHOWN_NAMES, TopCounts, shown_table
from ._errors import SkillError, SkillUsageError
from ._fs import AppendFile, FileLock, display_path, operator_path
from ._json import loads_strict

if TYPE_CHECKING:
    import os

__all__ = [
    "AUDIT_FIELDS",
    "INTACT",
    "MAX_COUNTED_NAMES",
    "MAX_LISTED_DENIALS",
    "MAX_RECORD_BYTES",
    "MAX_SHOWN_NAMES",
    "NEEDS_KEY",
    "TAMPERED",
    "TORN",
    "WRONG_KEY",
    "AuditError",
    "AuditLog",
    "Auditor",
    "Verification",
    "audit_summary",
    "canonical",
    "chain",
    "log_event",
    "parse_since",
    "shown_table",
    "summarize_log",
    "summarize_records",
    "verify_records",
]

AUDIT_FIELDS = (
    "time",
    "event",
    "agent",
    "skill",
    "source",
    "decision",
    "code",
    "reason",
    "path",
    "size",
    "sha256",
    "approver",
    "request_id",
    "digest",
    "scope",
    "execution_id",
    "version",
)
# A record holds at most 15 fields of 259 escaped characters: 64 KiB is far above any
# record skillguard writes, and low enough that a hostile line costs nothing to refuse.
MAX_RECORD_BYTES: Final = 64 * 1024
# Records are flat objects (depth 1); tool-call arguments may nest a little.
_MAX_RECORD_DEPTH = 1
_MAX_ARGS_DEPTH = 32
_GENESIS = "0" * 64
_MAX_FIELD_CHARS = 256
# A summary lists the latest denials only, so that its memory does not grow with the log;
# the count of all of them is always given.
MAX_LISTED_DENIALS: Final = 1000
# What a summary keeps of a name, and of each field of a listed denial: the writer
# bounds every value to 259 characters, so only a forged value is ever cut.
_MAX_KEPT_CHARS = _MAX_FIELD_CHARS + 3
_HEADER_EVENT = "log_created"
_KEY_ID_LABEL = b"skillguard-key-id"
_HASH = re.compile(r"[0-9a-f]{64}")
_LOG_ID = re.compile(r"[0-9a-f]{32}")
_KEY_ID = re.compile(r"[0-9a-f]{16}")
_STDLIB_LOGGER = logging.getLogger("skillguard.audit")
# The library convention: without this, a host that configured no logging would get
# WARNING and above printed on stderr by Python's last-resort handler.
_STDLIB_LOGGER.addHandler(logging.NullHandler())

# Verification statuses: what the log is, as far as the key at hand can tell.
INTACT = "intact"
TAMPERED = "tampered"
NEEDS_KEY = "needs_key"
WRONG_KEY = "wrong_key"
# The last line is incomplete, after a verified chain: a write cut short (T191).
TORN = "torn_tail"


class AuditError(SkillError):
    """An audit record could not be written or read: the decision it records is void."""

    kind = "audit"


def _os_reason(exc: OSError) -> str:
    """The OS's own words for *exc*, and its errno name: ``No space left on device
    (ENOSPC)``."""
    code = exc.errno or errno.EIO
    words = "a symbolic link" if code == errno.ELOOP else exc.strerror or "an OS error"
    return f"{words} ({errno.errorcode.get(code, 'EIO')})"


def _os_failure(code: str, doing: str, path: str, exc: OSError) -> AuditError:
    """What failed (*doing*), on which file (the one the OS names, else *path*), and
    why: ``write_failed`` or ``unreadable``, never one for the other (T192)."""
    where = exc.filename if isinstance(exc.filename, str) else path
    error = AuditError(code, f"{doing} {display_path(where)}: {_os_reason(exc)}")
    error.__cause__ = exc
    return error


def _clean(value: object) -> object:
    """Escape and bound a field value: what came from untrusted input stays inert.

    A backslash is escaped too, so no value can pass for the escaped form of another.
    """
    if value is None or isinstance(value, (bool, int)):
        return value
    text = str(value)
    if text.isascii() and text.isprintable() and "\\" not in text:
        return text if len(text) <= _MAX_FIELD_CHARS else text[:_MAX_FIELD_CHARS] + "..."
    escaped = text.encode("unicode_escape").decode("ascii")
    return escaped if len(escaped) <= _MAX_FIELD_CHARS else escaped[:_MAX_FIELD_CHARS] + "..."


_ENCODER = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False
)


def canonical(record: Mapping[str, object]) -> bytes:
    """The bytes a record's hash covers: sorted keys, no spaces, ASCII only."""
    return _ENCODER.encode(record).encode()


def _without_hash(line: str, claimed: str) -> bytes:
    """The canonical form of a canonical *line*'s record without its ``hash`` member,
    cut from the line itself (one JSON encoding saved per record).

    A raw ``"hash":"`` can only be that key: inside a JSON string a quote is escaped.
    """
    member = f'"hash":"{claimed}"'
    at = line.index(member)
    if line[at - 1] == ",":
        return (line[: at - 1] + line[at + len(member) :]).encode()
    end = at + len(member)
    return (line[:at] + line[end + 1 :] if line[end] == "," else line[:at] + line[end:]).encode()


def _digest(payload: bytes, key: bytes | None) -> str:
    if key is None:
        return hashlib.sha256(payload).hexdigest()
    return hmac.new(key, payload, hashlib.sha256).hexdigest()


def _key_id(key: bytes) -> str:
    """Names a key without revealing it: a verifier tells a wrong key from an edit."""
    return hmac.new(key, _KEY_ID_LABEL, hashlib.sha256).hexdigest()[:16]


def _check_key(key: object) -> None:
    if key is None:
        return
    if not isinstance(key, bytes):
        raise SkillUsageError("bad_argument", "an audit key must be bytes")
    if not key:
        # An empty HMAC key gives a log that only looks keyed: anyone can extend it.
        raise SkillUsageError("bad_argument", "an audit key must not be empty")


# -- the strict, capped JSON reader ---------------------------------------------------


def _load_json(text: str, *, max_chars: int, max_depth: int) -> object:
    """Strict JSON with caps, through the one strict entry point (``_json``): a
    ``ValueError`` over a cap, on a duplicate key, on ``NaN``/``Infinity`` or a number
    too large to be finite, or on anything ``json`` refuses; never ``RecursionError``."""
    if len(text) > max_chars:
        raise ValueError("over the size cap")
    return loads_strict(text, max_bytes=4 * max_chars, max_depth=max_depth)


# -- writing --------------------------------------------------------------------------


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _version() -> str:
    from . import __version__  # noqa: PLC0415 - the package imports this module

    return __version__


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
        from ._auditrepair import repair_log  # noqa: PLC0415 - it builds on this module

        return repair_log(path, key=key)


def chain(
    records: list[dict[str, object]], seq: int, last: str, key: bytes | None
) -> tuple[bytes, int, str]:
    """The lines of *records* chained after record *seq* whose hash is *last*: each gets
    ``seq``, ``prev_hash`` and ``hash``. Returns the lines, the last seq and hash."""
    lines = []
    for record in records:
        seq += 1
        record["seq"] = seq
        record["prev_hash"] = last
        last = record["hash"] = _digest(canonical(record), key)
        line = canonical(record)
        if len(line) > MAX_RECORD_BYTES:
            raise SkillUsageError("bad_argument", "the audit record is over the size cap")
        lines.append(line + b"\n")
    return b"".join(lines), seq, last


# -- events ---------------------------------------------------------------------------


def _render(record: Mapping[str, object]) -> str:
    """``event name=value ...`` for a plain log line; the stdlib record has its own time,
    and carries every field (time included) as its ``audit`` attribute."""
    return " ".join(
        [str(record["event"])]
        + [f"{name}={value}" for name, value in record.items() if name not in {"event", "time"}]
    )


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
        for name in AUDIT_FIELDS[2:-1]:
            if fields.get(name) is not None:
                record[name] = _clean(fields[name])
        record["version"] = _version()
        if self.log is not None:
            self.log.write(record)
        log_event(record)


def log_event(record: Mapping[str, object]) -> None:
    """Emit *record* on the ``skillguard.audit`` logger: through structlog when the host
    configured it, else the stdlib logger (quiet unless the host asked for INFO)."""
    # Decided per event: a host may configure structlog after building its Loader.
    if structlog.is_configured():
        rest = {k: v for k, v in record.items() if k != "event"}
        structlog.get_logger("skillguard.audit").info(str(record["event"]), **rest)
    elif _STDLIB_LOGGER.isEnabledFor(logging.INFO):
        _STDLIB_LOGGER.info("%s", _render(record), extra={"audit": record})


# -- verifying ------------------------------------------------------------------------


@attrs.frozen
class Verification:
    """The result of checking a log.

    ``status`` is ``"intact"``, ``"tampered"`` (``line`` is the first bad record, and
    ``reason`` says why), ``"torn_tail"`` (``line`` is the last line, incomplete: a write
    cut short after the verified records before it), ``"needs_key"`` (a keyed log
    checked without a key) or ``"wrong_key"`` (a keyed log checked with another key).
    ``log_id`` and ``keyed`` come from the log's first record once it has been read;
    ``offset`` is the byte offset in the file where line ``line`` starts (each line
    counted with its ``\\n``), when the check stopped before the end.
    """

    intact: bool
    records: int
    line: int | None = None
    reason: str = ""
    status: str = INTACT
    log_id: str | None = None
    keyed: bool | None = None
    offset: int | None = None


def _with_last(lines: Iterable[object]) -> Iterator[tuple[object, bool]]:
    """Each of *lines* and whether it is the last: one line is read ahead."""
    iterator = iter(lines)
    sentinel = object()
    current = next(iterator, sentinel)
    while current is not sentinel:
        following = next(iterator, sentinel)
        yield current, following is sentinel
        current = following


class _Checker:
    """The chain check, one line at a time (the CLI streams a file through it)."""

    def __init__(
        self, key: bytes | None, expected_log_id: str | None, expected_records: int | None
    ) -> None:
        self.key = key
        self.expected_log_id = expected_log_id
        self.expected_records = expected_records
        self.count = 0
        self.prev = _GENESIS
        self.log_id: str | None = None
        self.keyed: bool | None = None
        # Where the current line starts in the file, where the next one will, and
        # whether every line so far came with its ``\n`` (lines read from a file do;
        # lines split without it cannot tell a torn tail from an edit).
        self.start = 0
        self.offset = 0
        self.ended = True

    def stop(self, reason: str, status: str = TAMPERED) -> Verification:
        return Verification(
            intact=False,
            records=self.count,
            line=self.count,
            reason=reason,
            status=status,
            log_id=self.log_id,
            keyed=self.keyed,
            offset=self.start,
        )

    def run(
        self, lines: Iterable[object], sink: Callable[[dict[str, object]], None] | None = None
    ) -> Verification | None:
        """Check *lines* in order, handing each verified record but the header to *sink*:
        the ``Verification`` that stopped the check, or ``None`` at the end (then call
        ``finish``)."""
        for raw, last in _with_last(lines):
            result = self.feed(raw, last=last)
            if isinstance(result, Verification):
                return result
            if sink is not None and result.get("event") != _HEADER_EVENT:
                sink(result)
        return None

    def feed(self, raw: object, *, last: bool = False) -> dict[str, object] | Verification:
        """The record on *raw* (one line, with or without its ``\\n``), or the
        ``Verification`` that ends the check there. *last*: no line follows."""
        self.count += 1
        self.start = self.offset
        if isinstance(raw, (bytes, str)):
            ended = raw.endswith(b"\n") if isinstance(raw, bytes) else raw.endswith("\n")
            size = len(raw) - ended
            self.offset += size + 1
            if last and not ended and self.ended and self.count > 1 and size <= MAX_RECORD_BYTES:
                # T191: only the file's last line, after a verified record, every line
                # before it whole, and no longer than a record: what a write cut short
                # leaves. Its content is not read: it is no record, whatever it holds.
                # A record the writer never finished was never counted: records missing
                # before it are still missing (T211).
                short = self._short(self.count - 1, self.start, ", and the last line is torn")
                if short is not None:
                    return short
                return self.stop(
                    f"the last line ({size} bytes at byte {self.start}) has no newline: "
                    "a write cut short by a crash or a full disk",
                    TORN,
                )
            self.ended = self.ended and ended
        if isinstance(raw, bytes):
            if not raw.isascii():
                return self.stop("a byte that is not printable ASCII")
            raw = raw.decode("ascii")
        if not isinstance(raw, str):
            return self.stop("not a line of text")
        line = raw.removesuffix("\n")
        if not line:
            return self.stop("an empty line")
        if len(line) > MAX_RECORD_BYTES:
            return self.stop("a line over the size cap")
        if not (line.isascii() and line.isprintable()):
            # CR, U+2028, NEL, FF, VT, RS, FS... join records for str.splitlines().
            return self.stop("a character that is not printable ASCII")
        try:
            record = _load_json(line, max_chars=MAX_RECORD_BYTES, max_depth=_MAX_RECORD_DEPTH)
        except ValueError:
            return self.stop("not a valid record")
        # The line must be exactly the canonical form: a duplicate key, an escaped key
        # spelling or any other byte edit changes it.
        if not isinstance(record, dict) or canonical(record).decode() != line:
            return self.stop("edited: not the record as written")
        claimed = record.pop("hash", None)
        if not isinstance(claimed, str) or not _HASH.fullmatch(claimed):
            return self.stop("not a valid record")
        if self.count == 1:
            stopped = self._header(record)
            if stopped is not None:
                return stopped
        elif record.get("event") == _HEADER_EVENT:
            return self.stop("a second log_created record: another log spliced in")
        if not hmac.compare_digest(_digest(_without_hash(line, claimed), self.key), claimed):
            return self.stop("edited: its hash does not match")
        if record.get("prev_hash") != self.prev:
            return self.stop("inserted, reordered or a record before it deleted")
        if record.get("seq") != self.count:
            return self.stop("out of sequence")
        if self.count == 1 and self.expected_log_id not in (None, self.log_id):
            return self.stop("another log: its log id is not the one expected")
        self.prev = claimed
        return record

    def _header(self, record: dict[str, object]) -> Verification | None:
        keyed, log_id, key_id = record.get("keyed"), record.get("log_id"), record.get("key_id")
        if (
            record.get("event") != _HEADER_EVENT
            or not isinstance(log_id, str)
            or not _LOG_ID.fullmatch(log_id)
            or not isinstance(keyed, bool)
            or (keyed and not (isinstance(key_id, str) and _KEY_ID.fullmatch(key_id)))
            or (not keyed and key_id is not None)
        ):
            return self.stop("not an audit log: no log_created record first")
        self.log_id, self.keyed = log_id, keyed
        if keyed and self.key is None:
            return self.stop("keyed: needs its key", NEEDS_KEY)
        if keyed and self.key is not None and key_id != _key_id(self.key):
            return self.stop("keyed with another key (or its key id edited)", WRONG_KEY)
        if not keyed and self.key is not None:
            return self.stop("written without a key (or rewritten without one)")
        return None

    def finish(self) -> Verification:
        if self.count == 0:
            self.count = 1
            return self.stop("not an audit log: empty")
        short = self._short(self.count, self.offset)
        if short is not None:
            return short
        return Verification(intact=True, records=self.count, log_id=self.log_id, keyed=self.keyed)

    def _short(self, records: int, offset: int, note: str = "") -> Verification | None:
        """The verdict when *records* verified records are not the expected count."""
        expected = self.expected_records
        if expected is None or records == expected:
            return None
        missing = expected - records
        counted = (
            f"{missing} records missing at the end"
            if missing > 0
            else f"{-missing} records more than expected"
        )
        return Verification(
            intact=False,
            records=records,
            line=records + 1,
            reason=counted + note,
            status=TAMPERED,
            log_id=self.log_id,
            keyed=self.keyed,
            offset=offset,
        )


def _checker(
    lines: object, key: object, expected_records: object, expected_log_id: object
) -> _Checker:
    if isinstance(lines, (str, bytes)) or not isinstance(lines, Iterable):
        raise SkillUsageError("bad_argument", "lines must be an iterable of lines")
    _check_key(key)
    if expected_records is not None and (
        not isinstance(expected_records, int)
        or isinstance(expected_records, bool)
        or expected_records < 0
    ):
        raise SkillUsageError("bad_argument", "expected_records must be an int >= 0")
    if expected_log_id is not None and not isinstance(expected_log_id, str):
        raise SkillUsageError("bad_argument", "expected_log_id must be a str")
    assert key is None or isinstance(key, bytes)  # checked by _check_key
    return _Checker(key, expected_log_id, expected_records)


def verify_records(
    lines: Iterable[str | bytes],
    *,
    key: bytes | None = None,
    expected_records: int | None = None,
    expected_log_id: str | None = None,
) -> Verification:
    """Check the hash chain. Names the first edited, inserted, reordered or deleted record.

    *lines* are the log's lines split on ``\\n`` only (``str`` or ``bytes``, each with or
    without its ``\\n``): a file opened in binary mode is one. A blank line, a line over
    ``MAX_RECORD_BYTES`` or one holding anything but printable ASCII is tampering.
    A deleted *last* record leaves a valid shorter chain: pass *expected_records* (the
    count the host shipped elsewhere, say with its log pipeline) to catch it, and
    *expected_log_id* (``AuditLog.log_id``) to catch another log swapped in. Use a key,
    without which anyone can rewrite the whole chain consistently.

    When the lines keep their ``\\n`` (a file's lines), a last line without one, after at
    least one verified record, is a torn tail (``status`` ``"torn_tail"``): a write cut
    short, which ``AuditLog.repair`` mends; anything else that does not verify is
    tampering, and so is a torn tail after fewer or more records than
    *expected_records* (the torn record's writer never returned, so it was never
    counted).

    Never raises on the content of *lines*; raises ``SkillUsageError`` for bad arguments.
    """
    checker = _checker(lines, key, expected_records, expected_log_id)
    return checker.run(lines) or checker.finish()


# -- summarizing ----------------------------------------------------------------------


# The ISO 8601 times ``--since`` and ``--until`` take, read by this pattern rather than
# ``datetime.fromisoformat``, whose grammar changed in Python 3.11 (3.10 refuses a
# fraction of other than 3 or 6 digits, ``Z`` and ``+0100``): a time means the same on
# every Python skillguard supports. A date, then optionally ``T`` (or a space) and
# ``HH[:MM[:SS[.fraction]]]``, then optionally ``Z`` or an offset ``+HH[:MM]``.
# ASCII digits only ([0-9], not \d, which matches every script's digits).
_ISO_TIME = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})"
    r"(?:[T ]([0-9]{2})(?::([0-9]{2})(?::([0-9]{2})(?:[.,]([0-9]+))?)?)?"
    r"(?:([Zz])|([+-])([0-9]{2})(?::?([0-9]{2}))?)?)?"
)


def _read_iso_time(text: str) -> dt.datetime:
    """*text* as an aware UTC time, rounded up to the next whole second. Raises
    ``ValueError`` (not this grammar, or a field out of range) or ``OverflowError``."""
    found = _ISO_TIME.fullmatch(text)
    if found is None:
        raise ValueError(text)
    year, month, day, hour, minute, second, fraction, _, sign, off_h, off_m = found.groups()
    zone = dt.timezone.utc
    if sign is not None:
        if int(off_h) > 23 or int(off_m or 0) > 59:
            raise ValueError(text)
        offset = dt.timedelta(hours=int(off_h), minutes=int(off_m or 0))
        zone = dt.timezone(-offset if sign == "-" else offset)
    moment = dt.datetime(
        int(year),
        int(month),
        int(day),
        int(hour or 0),
        int(minute or 0),
        int(second or 0),
        tzinfo=zone,
    ).astimezone(dt.timezone.utc)
    if fraction is not None and fraction.strip("0"):
        # Records have whole seconds: the next one is the first after.
        moment += dt.timedelta(seconds=1)
    return moment


def parse_since(since: object) -> str:
    """*since* (ISO 8601: a date, or a date and time, with ``Z``, an offset or neither;
    naive is UTC) in the records' own form, ``YYYY-MM-DDTHH:MM:SSZ``, a fraction of a
    second rounded up. Raises ``SkillUsageError`` otherwise."""
    if not isinstance(since, str):
        raise SkillUsageError("bad_argument", "since must be a str (an ISO 8601 time)")
    try:
        moment = _read_iso_time(since)
    except (ValueError, OverflowError):  # not ISO 8601, or beyond year 1 to 9999 in UTC
        raise SkillUsageError("bad_argument", "since is not an ISO 8601 time") from None
    # Not strftime: its %Y does not pad years before 1000 on every platform.
    return (
        f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}"
        f"T{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d}Z"
    )


_TABLES = ("by_decision", "by_event", "by_agent", "by_skill")


def _kept(value: object) -> object:
    """A value as a summary keeps it: a string over the writer's own bound is cut, so
    that a forged log cannot make what is kept per name or per denial large."""
    if isinstance(value, str) and len(value) > _MAX_KEPT_CHARS:
        return value[:_MAX_KEPT_CHARS] + "..."
    return value


class _Summary:
    """Counts of the records that pass the filters, in memory that does not grow with
    the log (T190): four bounded tables, the latest denials, exact totals."""

    def __init__(self, agent: str | None, since: str | None) -> None:
        self.agent = agent
        self.since = since
        self.tables = {title: TopCounts() for title in _TABLES}
        self.denials: deque[dict[str, object]] = deque(maxlen=MAX_LISTED_DENIALS)
        self.denial_count = 0
        self.total = 0

    def add(self, record: Mapping[str, object]) -> None:
        if self.agent is not None and record.get("agent") != self.agent:
            return
        if self.since is not None and str(record.get("time", "")) < self.since:
            return
        self.total += 1
        tables = self.tables
        tables["by_event"].add(str(_kept(str(record.get("event")))))
        for field, title in (
            ("decision", "by_decision"),
            ("agent", "by_agent"),
            ("skill", "by_skill"),
        ):
            value = record.get(field)
            if value:
                tables[title].add(str(_kept(str(value))))
        if record.get("decision") == "deny":
            self.denial_count += 1
            self.denials.append(
                {
                    k: _kept(record.get(k))
                    for k in ("time", "agent", "skill", "event", "code", "reason")
                }
            )

    def merge(self, other: _Summary) -> None:
        """Add *other*'s counts (not its denials, which a set lists apart)."""
        self.total += other.total
        self.denial_count += other.denial_count
        for title, counts in self.tables.items():
            counts.merge(other.tables[title])

    def result(self) -> dict[str, Any]:
        document: dict[str, Any] = {"records": self.total, "tables": {}}
        for title, counts in self.tables.items():
            document[title], document["tables"][title] = shown_table(counts)
        document["denials"] = list(self.denials)
        document["denials_total"] = self.denial_count
        return document


def _summary(agent: object, since: object) -> _Summary:
    if agent is not None and not isinstance(agent, str):
        raise SkillUsageError("bad_argument", "agent must be a str")
    return _Summary(agent, None if since is None else parse_since(since))


def summarize_records(
    records: Iterable[object], *, agent: str | None = None, since: str | None = None
) -> dict[str, Any]:
    """Counts by decision, event, agent and skill, and the latest ``MAX_LISTED_DENIALS``
    denials with their reasons (``denials_total`` counts them all).

    Each table lists its ``MAX_SHOWN_NAMES`` largest names and says what it left out
    under ``tables`` (``shown_table``); memory stays bounded whatever the records hold
    (T190). ``records`` and ``denials_total`` are exact; so is every count while a
    table has seen at most ``MAX_COUNTED_NAMES`` names, and past that each listed
    count is the most that name can hold, ``tables[...]["least"]`` the least.

    *since* is an ISO 8601 time (``SkillUsageError`` otherwise). What is not a mapping
    is skipped: check the chain first (``summarize_log`` does both).
    """
    summary = _summary(agent, since)
    for record in records:
        if isinstance(record, Mapping):
            summary.add(record)
    return summary.result()


def summarize_log(
    lines: Iterable[str | bytes],
    *,
    key: bytes | None = None,
    agent: str | None = None,
    since: str | None = None,
    expected_log_id: str | None = None,
) -> tuple[Verification, dict[str, Any]]:
    """Check the chain and summarize it in one pass: the ``Verification`` and the
    summary of the records before the first bad one (all of them when intact)."""
    summary = _summary(agent, since)
    checker = _checker(lines, key, None, expected_log_id)
    result = checker.run(lines, summary.add) or checker.finish()
    return result, summary.result()


def audit_summary(args: object) -> str:
    """A one-line, escaped summary of a skill tool call, for tool-call UIs.

    Total: *args* (a model's tool-call arguments, untrusted) is a JSON ``str`` or a
    mapping; anything else, or JSON over 64 KiB or nested deeper than 32, gives a fixed
    text. Keys that are not ``str`` are shown by their ``str()``. Never raises.
    """
    data: object = args
    if isinstance(args, str):
        try:
            data = _load_json(args, max_chars=MAX_RECORD_BYTES, max_depth=_MAX_ARGS_DEPTH)
        except ValueError:
            return "skill call with unreadable arguments"
    if not isinstance(data, Mapping) or not isinstance(data.get("name"), str):
        return "skill call without a skill name"
    name = _clean(data["name"])
    extra = sorted(str(_clean(key)) for key in data if key != "name")
    tail = f" (+{', '.join(extra[:5])})" if extra else ""
    return f"load skill {name}{tail}"
