"""Every decision written down: structlog events, and a tamper-evident JSON-lines log.

Rules (threat-model.md T27-T28):

* Every decision is a structlog event on the ``skillguard.audit`` logger. The library
  never configures structlog: the host decides where events go.
* Fields are fixed and non-secret: UTC time, event, agent, skill, source, decision,
  code, reason, path, size, sha256, approver, request id, skillguard version. Never a
  body. Strings that came from untrusted input are escaped (no control characters, no
  bidi overrides) and bounded.
* ``AuditLog`` adds a hash chain: each record has ``seq``, ``prev_hash`` and ``hash``
  (SHA-256, or HMAC-SHA-256 with a key, over the canonical JSON of the record without
  ``hash``), appended under a lock. If a record cannot be written, ``AuditError`` is
  raised and the load that needed it is denied.
* ``verify_records`` names the first edited, inserted, reordered or deleted record.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections import Counter
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import attrs
import structlog

from ._errors import SkillError, SkillUsageError
from ._fs import FileLock, append_record, read_last_line

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = [
    "AUDIT_FIELDS",
    "AuditError",
    "AuditLog",
    "Auditor",
    "Verification",
    "audit_summary",
    "canonical",
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
    "version",
)
_GENESIS = "0" * 64
_MAX_FIELD_CHARS = 256


class AuditError(SkillError):
    """An audit record could not be written or read: the decision it records is void."""

    kind = "audit"


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


def canonical(record: Mapping[str, object]) -> bytes:
    """The bytes a record's hash covers: sorted keys, no spaces, ASCII only."""
    return json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def _digest(payload: bytes, key: bytes | None) -> str:
    if key is None:
        return hashlib.sha256(payload).hexdigest()
    return hmac.new(key, payload, hashlib.sha256).hexdigest()


def _check_key(key: object) -> None:
    if key is not None and not isinstance(key, bytes):
        raise SkillUsageError("bad_argument", "an audit key must be bytes")


class AuditLog:
    """A JSON-lines file of hash-chained records (the operator's own path).

    Each ``write`` takes an exclusive lock on ``path + '.lock'`` (threads and processes
    alike), reads the last record, and appends the next one, so that several writers
    extend one chain. Raises :class:`AuditError` when the record cannot be written.
    """

    def __init__(self, path: str, *, key: bytes | None = None) -> None:
        if not isinstance(path, str):
            raise SkillUsageError("bad_argument", "the audit log path must be a str")
        _check_key(key)
        self.path = path
        self._key = key
        self._lock = FileLock(path)
        try:
            with self._lock:
                self._tail()  # refuse to start on a log whose last record is unreadable
        except OSError as exc:
            raise AuditError("unreadable", "the audit log cannot be read") from exc

    def _tail(self) -> tuple[int, str]:
        last_line = read_last_line(self.path)
        if last_line is None:
            return 0, _GENESIS
        try:
            last = json.loads(last_line)
            return int(last["seq"]), str(last["hash"])
        except (ValueError, KeyError, TypeError, OverflowError, RecursionError) as exc:
            raise AuditError("corrupt", "the last audit record is not readable") from exc

    def write(self, fields: Mapping[str, object]) -> dict[str, object]:
        try:
            with self._lock:
                seq, prev = self._tail()
                record: dict[str, object] = dict(fields)
                record["seq"] = seq + 1
                record["prev_hash"] = prev
                record["hash"] = _digest(canonical(record), self._key)
                append_record(self.path, canonical(record) + b"\n")
        except OSError as exc:
            raise AuditError("write_failed", "the audit record could not be written") from exc
        return record


class Auditor:
    """Emits each decision as a structlog event, and to an ``AuditLog`` when given one."""

    def __init__(self, log: AuditLog | None = None) -> None:
        self.log = log
        self._logger = structlog.get_logger("skillguard.audit")

    def emit(self, event: str, **fields: object) -> None:
        """Record one decision. Raises ``AuditError`` if the log cannot be written."""
        from . import __version__  # noqa: PLC0415 - the package imports this module

        record: dict[str, object] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "event": event,
        }
        for name in AUDIT_FIELDS[2:-1]:
            if fields.get(name) is not None:
                record[name] = _clean(fields[name])
        record["version"] = __version__
        if self.log is not None:
            self.log.write(record)
        self._logger.info(event, **{k: v for k, v in record.items() if k != "event"})


@attrs.frozen
class Verification:
    """The result of checking a log: ``intact``, or the first bad record and why."""

    intact: bool
    records: int
    line: int | None = None
    reason: str = ""


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict[str, object]:
    record = dict(pairs)
    if len(record) != len(pairs):
        raise ValueError("duplicate key")
    return record


def _broken(count: int, line: int, reason: str) -> Verification:
    return Verification(intact=False, records=count, line=line, reason=reason)


def verify_records(
    lines: Iterable[str], *, key: bytes | None = None, expected_records: int | None = None
) -> Verification:
    """Check the hash chain. Names the first edited, inserted, reordered or deleted record.

    Every line must be exactly one record as written (a blank line is an insertion).
    A deleted *last* record leaves a valid shorter chain: pass *expected_records* (the
    count the host shipped elsewhere, say with its log pipeline) to catch it, and use a
    key, without which anyone can rewrite the whole chain consistently.
    """
    _check_key(key)
    prev = _GENESIS
    number = 0
    for number, line in enumerate(lines, start=1):
        try:
            record = json.loads(line, object_pairs_hook=_no_duplicates)
            # The line must be exactly the canonical form: a duplicate key, an escaped
            # key spelling or any other byte edit changes it.
            if not isinstance(record, dict) or canonical(record).decode() != line:
                return _broken(number, number, "edited: not the record as written")
            claimed = record.pop("hash")
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
            return _broken(number, number, "not a valid record")
        if not isinstance(claimed, str):
            return _broken(number, number, "not a valid record")
        if not hmac.compare_digest(_digest(canonical(record), key), claimed):
            return _broken(number, number, "edited: its hash does not match")
        if record.get("prev_hash") != prev:
            return _broken(number, number, "inserted, reordered or a record before it deleted")
        if record.get("seq") != number:
            return _broken(number, number, "out of sequence")
        prev = claimed
    if expected_records is not None and number != expected_records:
        return _broken(
            number, number + 1, f"{expected_records - number} records missing at the end"
        )
    return Verification(intact=True, records=number)


def summarize_records(
    records: Iterable[object], *, agent: str | None = None, since: str | None = None
) -> dict[str, Any]:
    """Counts by decision, event, agent and skill, and every denial with its reason."""
    by_decision: Counter[str] = Counter()
    by_event: Counter[str] = Counter()
    by_agent: Counter[str] = Counter()
    by_skill: Counter[str] = Counter()
    denials = []
    total = 0
    if since is not None and not isinstance(since, str):
        raise SkillUsageError("bad_argument", "since must be a str (an ISO 8601 UTC time)")
    for record in records:
        if not isinstance(record, Mapping):
            continue
        if agent is not None and record.get("agent") != agent:
            continue
        if since is not None and str(record.get("time", "")) < since:
            continue
        total += 1
        by_event[str(record.get("event"))] += 1
        if record.get("decision"):
            by_decision[str(record["decision"])] += 1
        if record.get("agent"):
            by_agent[str(record["agent"])] += 1
        if record.get("skill"):
            by_skill[str(record["skill"])] += 1
        if record.get("decision") == "deny":
            denials.append(
                {k: record.get(k) for k in ("time", "agent", "skill", "event", "code", "reason")}
            )
    return {
        "records": total,
        "by_decision": dict(by_decision),
        "by_event": dict(by_event),
        "by_agent": dict(by_agent),
        "by_skill": dict(by_skill),
        "denials": denials,
    }


def audit_summary(args: str | Mapping[str, object]) -> str:
    """A one-line, escaped summary of a skill tool call, for tool-call UIs."""
    data: object = args
    if isinstance(args, str):
        try:
            data = json.loads(args)
        except ValueError:
            return "skill call with unreadable arguments"
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        return "skill call without a skill name"
    name = _clean(data["name"])
    extra = sorted(key for key in data if key != "name")
    tail = f" (+{', '.join(str(_clean(k)) for k in extra[:5])})" if extra else ""
    return f"load skill {name}{tail}"
