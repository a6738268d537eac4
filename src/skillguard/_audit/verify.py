"""Checking a log's hash chain: ``verify_records`` and the ``Verification`` it gives.

Rules (threat-model.md T27, T50, T51, T53, T54, T191):

* ``verify_records`` names the first edited, inserted, reordered or deleted record.
  Every line is read with caps (``MAX_RECORD_BYTES``, a nesting depth) by a strict
  reader: over a cap, a duplicate key, a byte that is not printable ASCII (CR, U+2028,
  NEL, FF, VT, RS, FS...), an empty line: the log is tampered with at that line. It
  never raises on the content of a line.
* A keyed log checked without its key, or with another, says so (``needs_key``,
  ``wrong_key``) rather than "tampered"; another log swapped in is caught by its
  ``log_id`` when the caller expects one.
* A torn tail (T191) is the one failure that is not tampering: the last line of the
  file, after at least one verified record and every earlier line ended by its
  ``\n``, has no ``\n`` and is no longer than a record can be. That is what a write cut
  short by a crash or a full disk leaves, and the writer refuses to extend it
  (``torn_tail``) until ``audit repair`` (``_audit.repair``) moves it aside. Anything
  else, anywhere else, stays tampering; so do records missing before it, when the
  expected count says so (T211: the torn record was never counted, its writer never
  returned).
* A file whose first line is no chained record at all (a YAML file, an empty file,
  ``{}``) is ``not_a_log``, not "tampered" (T250): nothing in it was ever a chain. A first
  line that is a chained record (a ``seq``, ``prev_hash`` or ``hash`` member, or the text
  ``"prev_hash":`` however the rest was edited, T313) but no valid ``log_created``
  record is tampering, as anywhere else.
* ``_Checker`` is the one chain check, a line at a time: ``verify_records``, the
  summaries, the report, the log set and ``audit repair`` all stream through it.
"""

from __future__ import annotations

import hmac
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

import attrs

from skillguard._audit.record import (
    _GENESIS,
    _HEADER_EVENT,
    _MAX_RECORD_DEPTH,
    MAX_RECORD_BYTES,
    _check_key,
    _digest,
    _key_id,
    _load_json,
    canonical,
)
from skillguard._core.errors import SkillUsageError

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

__all__ = [
    "INTACT",
    "NEEDS_KEY",
    "NOT_A_LOG",
    "TAMPERED",
    "TORN",
    "WRONG_KEY",
    "Verification",
    "verify_records",
]


_HASH = re.compile(r"[0-9a-f]{64}")
_LOG_ID = re.compile(r"[0-9a-f]{32}")
_KEY_ID = re.compile(r"[0-9a-f]{16}")

# Verification statuses: what the log is, as far as the key at hand can tell.
INTACT = "intact"
TAMPERED = "tampered"
NEEDS_KEY = "needs_key"
WRONG_KEY = "wrong_key"
# The last line is incomplete, after a verified chain: a write cut short (T191).
TORN = "torn_tail"
# The first line is no ``log_created`` record (T250): a file that is not an audit log
# at all (a YAML file, an empty file), or one whose first line was replaced whole.
NOT_A_LOG = "not_a_log"


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


@attrs.frozen
class Verification:
    """The result of checking a log.

    ``status`` is ``"intact"``, ``"tampered"`` (``line`` is the first bad record, and
    ``reason`` says why), ``"torn_tail"`` (``line`` is the last line, incomplete: a write
    cut short after the verified records before it), ``"not_a_log"`` (the first line is
    no ``log_created`` record: a file that is not an audit log, or one whose first line
    was replaced whole; ``line`` is 1), ``"needs_key"`` (a keyed log
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


def _with_last(lines: Iterable[object]) -> Iterator[tuple[object, bool, object]]:
    """Each of *lines*, whether it is the last, and the line after it (``None`` after
    the last): one line is read ahead."""
    iterator = iter(lines)
    sentinel = object()
    current = next(iterator, sentinel)
    while current is not sentinel:
        following = next(iterator, sentinel)
        yield current, following is sentinel, None if following is sentinel else following
        current = following


def _holds_link(raw: object) -> bool:
    """Whether a line holds a chain link's ``"prev_hash":`` member, however edited."""
    if isinstance(raw, bytes):
        return b'"prev_hash":' in raw
    return isinstance(raw, str) and '"prev_hash":' in raw


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
        # Whether the first line is a chained record (``seq``, ``prev_hash``, ``hash``),
        # and whether the line after it is one.
        self.chained = False
        self.link_follows = False

    def stop(self, reason: str, status: str = TAMPERED) -> Verification:
        if status == TAMPERED and self.count == 1 and self.log_id is None and not self.chained:
            # Stopped at a first line that is no chained record at all: no chain to call
            # tampered. A chained record first (a log_created moved or deleted) is, and
            # so is any first line followed by a chained record (T316: a log whose
            # first line was replaced whole).
            if self.link_follows:
                reason = f"{reason}; a chained record follows: the log's first line was replaced"
            else:
                status = NOT_A_LOG
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
        for raw, last, following in _with_last(lines):
            result = self.feed(raw, last=last, following=following)
            if isinstance(result, Verification):
                return result
            if sink is not None and result.get("event") != _HEADER_EVENT:
                sink(result)
        return None

    def feed(
        self, raw: object, *, last: bool = False, following: object = None
    ) -> dict[str, object] | Verification:
        """The record on *raw* (one line, with or without its ``\\n``), or the
        ``Verification`` that ends the check there. *last*: no line follows;
        *following*: the line that does, when the caller read it ahead."""
        self.count += 1
        self.start = self.offset
        if self.count == 1:
            # T313: a first line that holds a chain link's member is a record, however
            # it was edited (a byte, a space, a hash): tampering, never "not a log".
            self.chained = _holds_link(raw)
            self.link_follows = _holds_link(following)
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
        if self.count == 1 and isinstance(record, dict):
            self.chained = self.chained or not {"seq", "prev_hash", "hash"}.isdisjoint(record)
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
