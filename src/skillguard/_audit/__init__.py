"""The audit floor: the hash-chained log, its verification, summaries and report.

* ``log``: ``AuditLog`` and ``Auditor`` (writing), ``verify_records`` and summaries;
* ``logset``: several logs (one per process or host) verified together;
* ``report``: the HTML report for a reviewer.

The public names are re-exported by ``skillguard.audit``.
"""

__all__: list[str] = []
