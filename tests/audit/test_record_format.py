"""What a record holds: milliseconds, the writer's host and pid, and older logs still
verify (the fixture logs were written by skillguard before either)."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
from pathlib import Path

from skillguard._audit.summary import summarize_log
from skillguard.audit import AuditLog, Auditor, verify_records

FIXTURES = Path(__file__).parent.parent / "fixtures" / "audit"
_MILLIS = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z")


def test_records_carry_milliseconds_and_the_header_names_host_and_pid(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "a.jsonl")
    Auditor(log).emit("load_granted", agent="a", skill="s", decision="allow")
    header, record = (json.loads(line) for line in (tmp_path / "a.jsonl").read_text().splitlines())
    assert _MILLIS.fullmatch(header["time"])
    assert _MILLIS.fullmatch(record["time"])
    assert header["pid"] == os.getpid()
    assert header["host"] == socket.gethostname()


def test_a_log_written_before_milliseconds_still_verifies_and_extends(tmp_path: Path) -> None:
    key = (FIXTURES / "v0-keyed.key").read_bytes()
    for name, with_key in (("v0-unkeyed.jsonl", None), ("v0-keyed.jsonl", key)):
        path = tmp_path / name
        shutil.copyfile(FIXTURES / name, path)
        assert "host" not in json.loads(path.read_text().splitlines()[0])
        with path.open("rb") as lines:
            assert verify_records(lines, key=with_key).records == 4
        Auditor(AuditLog(path, key=with_key)).emit("load_granted", agent="a", decision="allow")
        with path.open("rb") as lines:
            result = verify_records(lines, key=with_key)
        assert (result.intact, result.records) == (True, 5)


def test_since_orders_whole_seconds_and_milliseconds_alike(tmp_path: Path) -> None:
    """An old record at 00:21:32 (whole seconds) is before 00:21:32.5, and a new one at
    00:21:32.600 after: the two forms compare by time, not as strings."""
    path = tmp_path / "a.jsonl"
    shutil.copyfile(FIXTURES / "v0-unkeyed.jsonl", path)
    with path.open("rb") as lines:
        _, summary = summarize_log(lines, since="2026-12-02T00:21:32.5")
    assert summary["records"] == 0
    with path.open("rb") as lines:
        _, summary = summarize_log(lines, since="2026-12-02T00:21:32")
    assert summary["records"] == 3
