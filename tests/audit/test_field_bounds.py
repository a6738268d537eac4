"""A field's text is cut before it is escaped: its cost is bounded by the field's cap,
not by what a peer sent (an MCP client chooses its own name, of any length).

A real ``Auditor`` writing a real hash-chained log under ``tmp_path``. Test names that
start with ``test_tN_`` stop threat ``TN`` of threat-model.md.
"""

from __future__ import annotations

import json
import tracemalloc
from typing import TYPE_CHECKING

from skillguard._audit.origin import origin
from skillguard.audit import AuditLog, Auditor

if TYPE_CHECKING:
    from pathlib import Path


def test_t302_a_huge_client_name_costs_one_fields_worth_per_record(tmp_path: Path) -> None:
    auditor = Auditor(AuditLog(tmp_path / "audit.log"))
    auditor.emit("catalog_served", agent="planner", decision="allow")  # the log is open
    name = "\U0001f600" * 1_000_000  # 4 MB held by the client's session already
    tracemalloc.start()
    try:
        with origin("mcp", name):
            auditor.emit("catalog_served", agent="planner", decision="allow")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # Escaped whole, the name took 10 MB of bytes and 10 MB of text per record.
    assert peak < 1_000_000
    written = json.loads((tmp_path / "audit.log").read_text().splitlines()[-1])
    shown = "\\U0001f600" * 26  # the name escaped, cut at the 256 characters a field holds
    assert written["client"] == shown[:256] + "..."
