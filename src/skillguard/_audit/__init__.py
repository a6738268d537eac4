"""The audit floor: the hash-chained log, its verification, summaries and report.

* ``record``: what a record is (fields, caps, canonical bytes, hash, chain) and
  ``AuditError``;
* ``events``: each decision emitted on the ``skillguard.audit`` logger;
* ``log``: ``Auditor`` and ``AuditLog`` (writing);
* ``verify``: ``verify_records``, ``Verification`` and the one chain check;
* ``summary``: a log's summary in bounded memory, ISO 8601 times, ``audit_summary``;
* ``counts``: counts by name in bounded memory (the summary's and report's tables);
* ``repair``: mending a torn tail (``audit repair``);
* ``logset``: several logs (one per process or host) verified together;
* ``report``: the HTML report for a reviewer (``render_audit_report``): the page, its
  verdict, its style sheet and script; ``report_data`` gathers what it shows in
  bounded memory, ``report_html`` draws it (every value from the log through ``_cell``).

The public names are re-exported by ``skillguard.audit``.
"""

__all__: list[str] = []
