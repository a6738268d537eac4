"""Audit logs for the report tests, written as an attacker who can write the file would.

A forged log is a valid chain (unkeyed, or keyed with the key given) whose values hold
whatever the test wants, including what skillguard's own writer would have escaped: raw
bidi overrides, controls and markup.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skillguard._audit.record import _GENESIS, _digest, _key_id, canonical

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

LOG_ID = "0123456789abcdef0123456789abcdef"
HOSTILE = (
    '<script>document.title="pwned"</script>',
    '"><img src=x onerror="document.title=1">',
    "' onmouseover='alert(1)",
    "\u202eevil\u202c \u2066isolate\u2069",
    "zero\u200bwidth \U000e0041tag \x1b[31mred\x07",
    "</title></svg><svg onload=alert(1)>",
    "line\nbreak\r\u2028sep",
    "&lt;already-escaped&gt; &amp;",
)


def forged_lines(
    records: Iterable[Mapping[str, object]], *, key: bytes | None = None
) -> list[bytes]:
    """The lines of a chained log: a ``log_created`` header, then *records* in order."""
    header: dict[str, object] = {
        "time": "2026-01-01T00:00:00Z",
        "event": "log_created",
        "log_id": LOG_ID,
        "keyed": key is not None,
        "version": "0.1.0",
    }
    if key is not None:
        header["key_id"] = _key_id(key)
    lines: list[bytes] = []
    previous = _GENESIS
    for seq, fields in enumerate([header, *records], start=1):
        record = {**fields, "seq": seq, "prev_hash": previous}
        record["hash"] = previous = _digest(canonical(record), key)
        lines.append(canonical(record) + b"\n")
    return lines


def swarm_records(count: int, *, text: str = "plain") -> list[dict[str, object]]:
    """*count* records cycling through grants, approvals, denials, containment
    refusals and shadowing refusals of three agents, every string made of *text*."""
    kinds: list[dict[str, object]] = [
        {"event": "load_granted", "decision": "allow", "source": "embedded"},
        {
            "event": "approval_granted",
            "decision": "allow",
            "approver": f"{text} approver",
            "scope": "once",
            "source": "workspace",
            "digest": "a" * 64,
            "sha256": "b" * 64,
            "request_id": "c" * 16,
        },
        {"event": "load_denied", "decision": "deny", "code": "not_granted"},
        {"event": "containment_violation", "decision": "deny", "code": "symlink"},
        {"event": "shadowing_refused", "decision": "deny", "code": "embedded_wins"},
        {"event": "approval_requested", "source": "workspace"},
    ]
    records = []
    for index in range(count):
        record = dict(kinds[index % len(kinds)])
        second = index % 60
        record.update(
            time=f"2026-01-01T00:{index // 60 % 60:02d}:{second:02d}Z",
            agent=f"{text} agent {index % 3}",
            skill=f"{text} skill {index % 4}",
            reason=f"{text} reason",
            path=f"{text}/path",
        )
        records.append(record)
    return records
