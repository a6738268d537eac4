"""An audit record as an OCSF 1.2.0 API Activity event (class 6003), for a SIEM.

Rules (threat-model.md T251):

* Only a record that verified is mapped (``_audit.export`` feeds this module), and the
  mapping adds nothing a reader could take for a verified fact: every value comes from
  the record or its log's ``log_created`` record, or is a constant of the mapping.
* Each attribute used is an attribute of the published OCSF 1.2.0 schema, with its
  type (``tests/fixtures/audit/ocsf-1.2.0-attributes.json`` lists them, and a test
  walks every event against it): ``class_uid`` 6003 (API Activity) in ``category_uid``
  6 (Application Activity); ``type_uid`` is ``class_uid * 100 + activity_id``.
* The decision is the event's status: ``allow`` is Success (``status_id`` 1), ``deny``
  is Failure (2) at severity Medium (3), anything else is Other (99); the agent is the
  actor (``actor.app_name``), the decision is also ``actor.authorizations[0].decision``,
  the skill or agent file is the resource (``type`` ``skill`` or ``agent_file``), the
  writer's host (from ``log_created``) is ``src_endpoint.hostname``. ``metadata.uid``
  is ``<log id>:<seq>``, unique across a swarm's logs, and ``metadata.sequence`` the
  record's ``seq``. Every field without an OCSF attribute goes to ``unmapped`` under its
  skillguard name, so nothing is lost.
"""

from __future__ import annotations

import calendar
import re
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["OCSF_VERSION", "to_ocsf"]

OCSF_VERSION: Final = "1.2.0"
_CLASS_UID = 6003  # API Activity
_CATEGORY_UID = 6  # Application Activity
_READ, _DELETE, _OTHER = 2, 4, 99
_TIME = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{3}))?Z"
)
# The record fields the mapping places; the others go to ``unmapped``.
_MAPPED = frozenset(
    {"time", "event", "agent", "skill", "decision", "code", "reason", "seq", "sha256", "digest"}
)


def _millis(text: object) -> int | None:
    """A record's time (``...SS.mmmZ``, or ``...SSZ`` in older logs) in ms since 1970."""
    found = _TIME.fullmatch(str(text))
    if found is None:
        return None
    year, month, day, hour, minute, second, millis = found.groups()
    seconds = calendar.timegm(
        (int(year), int(month), int(day), int(hour), int(minute), int(second), 0, 0, 0)
    )
    return seconds * 1000 + int(millis or 0)


def _activity(record: Mapping[str, object]) -> tuple[int, str]:
    if record.get("decision") == "revoke":
        return _DELETE, "Delete"
    if record.get("skill") is not None or record.get("decision") in {"allow", "deny", "none"}:
        return _READ, "Read"  # an agent asked to read a skill or an agent file
    return _OTHER, "Other"


def _status(decision: object) -> tuple[int, str, int, str]:
    """``status_id``, ``status``, ``severity_id``, ``severity`` of a decision."""
    if decision == "allow":
        return 1, "Success", 1, "Informational"
    if decision == "deny":
        return 2, "Failure", 3, "Medium"
    return 99, "Other", 1, "Informational"


def to_ocsf(
    record: Mapping[str, object], *, log_id: str, host: str | None, version: str
) -> dict[str, Any]:
    """*record* (verified) as an OCSF API Activity event. *log_id* and *host* come from
    its log's ``log_created`` record (*host* ``None`` for a log written before hosts
    were recorded); *version* is skillguard's own."""
    activity_id, activity = _activity(record)
    status_id, status, severity_id, severity = _status(record.get("decision"))
    event_name = str(record.get("event"))
    event: dict[str, Any] = {
        "activity_id": activity_id,
        "activity_name": activity,
        "category_uid": _CATEGORY_UID,
        "category_name": "Application Activity",
        "class_uid": _CLASS_UID,
        "class_name": "API Activity",
        "type_uid": _CLASS_UID * 100 + activity_id,
        "type_name": f"API Activity: {activity}",
        "severity_id": severity_id,
        "severity": severity,
        "status_id": status_id,
        "status": status,
        "message": f"{event_name} {record.get('decision') or ''}".rstrip(),
        "metadata": {
            "version": OCSF_VERSION,
            "uid": f"{log_id}:{record.get('seq')}",
            "sequence": record.get("seq"),
            "log_name": log_id,
            "log_provider": "skillguard",
            "event_code": event_name,
            "original_time": str(record.get("time")),
            "product": {"name": "skillguard", "vendor_name": "skillguard", "version": version},
        },
        "api": {"operation": event_name, "service": {"name": "skillguard"}},
        "actor": {},
        "src_endpoint": {"hostname": host} if host else {"name": "unknown"},
    }
    # ``time`` is required: a time skillguard never writes (a forged unkeyed log) is 0,
    # and ``metadata.original_time`` keeps what the record said.
    event["time"] = _millis(record.get("time")) or 0
    if record.get("code") is not None:
        event["status_code"] = str(record["code"])
    if record.get("reason") is not None:
        event["status_detail"] = str(record["reason"])
    if record.get("agent") is not None:
        event["actor"]["app_name"] = str(record["agent"])
    if record.get("decision") is not None:
        event["actor"]["authorizations"] = [{"decision": str(record["decision"])}]
    if record.get("skill") is not None:
        # The agent line's events (``agent_context_served`` ...) name an agent file.
        kind = "agent_file" if event_name.startswith("agent_") else "skill"
        resource: dict[str, Any] = {"name": str(record["skill"]), "type": kind}
        digest = record.get("digest") or record.get("sha256")
        if digest is not None:
            resource["uid"] = str(digest)
        event["resources"] = [resource]
    unmapped = {name: value for name, value in record.items() if name not in _MAPPED}
    if unmapped:
        event["unmapped"] = unmapped
    return event
