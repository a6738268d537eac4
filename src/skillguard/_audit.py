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
import threading
import time
from collections import Counter
from typing import TYPE_CHECKING, Any

import attrs
import structlog

from ._errors import SkillError, safe_repr
from ._fs import append_record, read_trusted_file

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

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
    "version",
)
_GENESIS = "0" * 64
_MAX_FIELD_CHARS = 256


class AuditError(SkillError):
    """An audit record could not be written or read: the decision it records is void."""

    kind = "audit"


def _clean(value: object) -> object:
    """Escape and bound a field value: what came from untrusted input stays inert."""
    if value is None or isinstance(value, (bool, int)):
        return value
    text = str(value)
    if text.isascii() and text.isprintable() and len(text) <= _MAX_FIELD_CHARS:
        return text
    return safe_repr(text, limit=_MAX_FIELD_CHARS)[1:-1]


def canonical(record: Mapping[str, object]) -> bytes:
    """The bytes a record's hash covers: sorted keys, no spaces, ASCII only."""
    return json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def _digest(payload: bytes, key: bytes | None) -> str:
    if key is None:
        return hashlib.sha256(payload).hexdigest()
    return hmac.new(key, payload, hashlib.sha256).hexdigest()


class AuditLog:
    """A JSON-lines file of hash-chained records (the operator's own path).

    Continues the chain of an existing file. ``write`` is thread-safe and raises
    :class:`AuditError` when the record cannot be written.
    """

    def __init__(self, path: str, *, key: bytes | None = None) -> None:
        self.path = path
        self._key = key
        self._lock = threading.Lock()
        self._seq, self._prev = self._tail()

    def _tail(self) -> tuple[int, str]:
        try:
            raw = read_trusted_file(self.path)
        except FileNotFoundError:
            return 0, _GENESIS
        except OSError as exc:
            raise AuditError("unreadable", "the audit log cannot be read") from exc
        lines = [line for line in raw.splitlines() if line.strip()]
        if not lines:
            return 0, _GENESIS
        try:
            last = json.loads(lines[-1])
            return int(last["seq"]), str(last["hash"])
        except (ValueError, KeyError, TypeError) as exc:
            raise AuditError("corrupt", "the last audit record is not readable") from exc

    def write(self, fields: Mapping[str, object]) -> dict[str, object]:
        with self._lock:
            record: dict[str, object] = dict(fields)
            record["seq"] = self._seq + 1
            record["prev_hash"] = self._prev
            record["hash"] = _digest(canonical(record), self._key)
            try:
                append_record(self.path, canonical(record) + b"\n")
            except OSError as exc:
                raise AuditError("write_failed", "the audit record could not be written") from exc
            self._seq += 1
            self._prev = str(record["hash"])
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


def _broken(count: int, line: int, reason: str) -> Verification:
    return Verification(intact=False, records=count, line=line, reason=reason)


def verify_records(lines: Iterable[str], *, key: bytes | None = None) -> Verification:
    """Check the hash chain. Names the first edited, inserted, reordered or deleted record.

    A deleted last record cannot be seen from the file alone: compare ``records`` with
    the count the host expects (``AuditLog`` keeps it) to catch a truncated tail.
    """
    prev = _GENESIS
    seq = 0
    count = 0
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        count += 1
        try:
            record = json.loads(line)
            claimed = record.pop("hash")
        except (ValueError, KeyError, TypeError, AttributeError):
            return _broken(count, number, "not a valid record")
        if not isinstance(record, dict) or not isinstance(claimed, str):
            return _broken(count, number, "not a valid record")
        if not hmac.compare_digest(_digest(canonical(record), key), claimed):
            return _broken(count, number, "edited: its hash does not match")
        if record.get("prev_hash") != prev:
            return _broken(count, number, "inserted, reordered or a record before it deleted")
        if record.get("seq") != seq + 1:
            return _broken(count, number, "out of sequence")
        prev = claimed
        seq += 1
    return Verification(intact=True, records=count)


def summarize_records(
    records: Iterable[Mapping[str, Any]], *, agent: str | None = None, since: str | None = None
) -> dict[str, Any]:
    """Counts by decision, event, agent and skill, and every denial with its reason."""
    by_decision: Counter[str] = Counter()
    by_event: Counter[str] = Counter()
    by_agent: Counter[str] = Counter()
    by_skill: Counter[str] = Counter()
    denials = []
    total = 0
    for record in records:
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
