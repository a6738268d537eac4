"""The audit log: write it, verify it, summarize it, render it for a reviewer.

Every decision skillguard makes is an audit record. ``AuditLog`` appends hash-chained
(optionally keyed) JSON lines to one file per process or host; the ``Loader`` takes one
as its ``audit=`` sink. ``Auditor`` emits the same records as structlog events only.

* ``AuditLog``, ``Auditor``, ``AuditError``: the sinks, and the error a failed write raises;
* ``verify_records``, ``Verification``, ``audit_summary``: one log checked and summarized;
* ``verify_logs``, ``LogSetVerification``, ``LogCheck``, ``LogSetFinding``: several logs
  (one per process or host) checked together;
* ``render_audit_report``: a self-contained HTML page for a reviewer.

``import skillguard`` does not import this package's report; ``import skillguard.audit``
does.
"""

from __future__ import annotations

from skillguard._audit.log import AuditLog, Auditor
from skillguard._audit.logset import LogCheck, LogSetFinding, LogSetVerification, verify_logs
from skillguard._audit.record import AuditError
from skillguard._audit.report import render_audit_report
from skillguard._audit.summary import audit_summary
from skillguard._audit.verify import Verification, verify_records

__all__ = [
    "AuditError",
    "AuditLog",
    "Auditor",
    "LogCheck",
    "LogSetFinding",
    "LogSetVerification",
    "Verification",
    "audit_summary",
    "render_audit_report",
    "verify_logs",
    "verify_records",
]
