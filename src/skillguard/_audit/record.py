"""An audit record: its fields, its caps, its canonical bytes, its hash and its chain.

Rules (threat-model.md T27, T50, T53, T192):

* Fields are fixed and non-secret: UTC time (with milliseconds), event, agent, skill,
  source, decision, code, reason, path, size, sha256, approver, request id, digest,
  approval scope (``once`` or ``pin``), execution id, parent agent (a sub-agent's handle),
  channel (``out_of_band`` for a decision a host passed to ``load``), the front end and
  client a decision was asked through (``_audit.origin``), skillguard version. Never a
  body. Strings that came from untrusted input are escaped (no control characters, no
  bidi overrides) and bounded (``_clean``).
* A log's records are chained (``chain``): each has ``seq``, ``prev_hash`` and ``hash``
  (SHA-256, or HMAC-SHA-256 with a key, over the canonical JSON of the record without
  ``hash``). Its first record (``log_created``) names the log: a random ``log_id``, the
  creation time, the host name and process id of its writer, whether it is keyed and, if
  so, a key id that is not the key (logs written before the host and pid lack them and
  still verify: no verifier requires a header field beyond ``log_id`` and ``keyed``). An empty
  key is refused: it would give a log that only looks keyed.
* A record is read back through one strict reader with caps (``MAX_RECORD_BYTES``, a
  nesting depth): over a cap, a duplicate key, ``NaN``, a number too large to be
  finite: a ``ValueError``, never a crash.
* Every OS error says what failed, on which path, and why (T192): a log that cannot be
  opened, locked or appended to is ``write_failed``, one whose records cannot be read
  back is ``unreadable`` (``AuditError``).
"""

from __future__ import annotations

import errno
import hashlib
import hmac
import json
import time
from typing import TYPE_CHECKING, Final

from skillguard._core.errors import SkillError, SkillUsageError
from skillguard._core.strict_json import loads_strict
from skillguard._fs.paths import display_path

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = [
    "AUDIT_FIELDS",
    "MAX_RECORD_BYTES",
    "AuditError",
    "canonical",
    "chain",
    "time_key",
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
    "parent",
    "channel",
    # The front end a decision was asked through (``mcp``) and the peer's own name for
    # itself (``_audit.origin``).
    "via",
    "client",
    "version",
)
# A record holds at most 21 fields of 259 escaped characters: 64 KiB is far above any
# record skillguard writes, and low enough that a hostile line costs nothing to refuse.
MAX_RECORD_BYTES: Final = 64 * 1024
# Records are flat objects (depth 1); tool-call arguments may nest a little.
_MAX_RECORD_DEPTH = 1
_MAX_ARGS_DEPTH = 32
_GENESIS = "0" * 64
_MAX_FIELD_CHARS = 256
_HEADER_EVENT = "log_created"
_KEY_ID_LABEL = b"skillguard-key-id"


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
    # Escaping only lengthens it: cut first, so a peer's huge text costs a field (T302).
    text = text[: _MAX_FIELD_CHARS + 1]
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


# -- the fields every record gets ---------------------------------------------------


def _now() -> str:
    """The UTC time with milliseconds, ``YYYY-MM-DDTHH:MM:SS.mmmZ`` (logs written before
    milliseconds have ``YYYY-MM-DDTHH:MM:SSZ``; ``time_key`` orders both)."""
    now = time.time_ns() // 1_000_000
    seconds, millis = divmod(now, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{millis:03d}Z"


def time_key(value: object) -> str:
    """A record's ``time`` in a form that orders by time as a string: a time in whole
    seconds (``...:SSZ``, as logs written before milliseconds have) gains ``.000``."""
    text = str(value)
    if len(text) == 20 and text.endswith("Z") and text[10:11] == "T":
        return text[:19] + ".000Z"
    return text


def _version() -> str:
    from skillguard._core.version import __version__  # noqa: PLC0415 - the package imports this module

    return __version__


# -- the chain ----------------------------------------------------------------------


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
