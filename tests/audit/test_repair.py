"""Mending a torn audit log (``_auditrepair``, ``AuditLog.repair``, ``audit repair``).

Test names that start with ``test_tN_`` stop threat ``TN`` of threat-model.md.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
from typing import TYPE_CHECKING

import pytest
from structlog.testing import capture_logs

from skillguard import SkillUsageError
from skillguard._audit.record import MAX_RECORD_BYTES
from skillguard._audit.report import render_audit_report
from skillguard._audit.verify import TORN
from skillguard._cli.main import main
from skillguard._fs.operator import stream_lines
from skillguard._fs.write import FileLock
from skillguard.audit import AuditError, AuditLog, Auditor, verify_records

if TYPE_CHECKING:
    from pathlib import Path

KEY = b"repair key"

# A writer killed in the middle of its append: the file size limit lets the kernel
# write the first bytes of the record (a real partial write); the next write of the
# loop raises SIGXFSZ, whose handler kills the process with SIGKILL there and then.
_KILLED_MID_APPEND = """
import os, resource, signal, sys
from skillguard.audit import AuditLog
log = AuditLog(sys.argv[1], key=sys.argv[3].encode() or None)
signal.signal(signal.SIGXFSZ, lambda *_: os.kill(os.getpid(), signal.SIGKILL))
resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[2]), resource.RLIM_INFINITY))
log.write({"event": "load_granted", "agent": "planner", "skill": "s", "reason": "r" * 300})
print("the write was not cut short")
"""


def write_log(path: Path, count: int, key: bytes | None = None) -> AuditLog:
    log = AuditLog(path, key=key)
    auditor = Auditor(log)
    for index in range(count):
        auditor.emit("load_granted", agent="planner", skill=f"skill-{index}", decision="allow")
    return log


def kill_mid_append(path: Path, key: bytes | None, torn: int) -> None:
    """A writer process killed by SIGKILL after *torn* bytes of its record."""
    limit = path.stat().st_size + torn
    done = subprocess.run(
        [sys.executable, "-c", _KILLED_MID_APPEND, str(path), str(limit), (key or b"").decode()],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == -signal.SIGKILL, done
    assert done.stdout == ""
    assert path.stat().st_size == limit


def verify(path: Path, key: bytes | None = None) -> object:
    with contextlib.closing(stream_lines(str(path), max_line=MAX_RECORD_BYTES)) as lines:
        return verify_records(lines, key=key)


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("key", [None, KEY], ids=["unkeyed", "keyed"])
def test_t191_a_writer_killed_mid_append_is_mended_and_the_loss_recorded(
    tmp_path: Path, key: bytes | None
) -> None:
    path = tmp_path / "audit.jsonl"
    survivor = write_log(path, 3, key=key)
    good = path.read_bytes()
    kill_mid_append(path, key, 57)
    torn = path.read_bytes()[len(good) :]
    assert len(torn) == 57
    assert b"\n" not in torn
    # Every writer refuses the log, and verify says why: not tampering.
    with pytest.raises(AuditError) as caught:
        AuditLog(path, key=key)
    assert caught.value.code == "torn_tail"
    result = verify(path, key)
    assert (result.status, result.line, result.offset) == (TORN, 5, len(good))  # type: ignore[attr-defined]

    record = AuditLog.repair(path, key=key)

    side = tmp_path / f"audit.jsonl.torn-{len(good)}"
    assert side.read_bytes() == torn
    assert oct(side.stat().st_mode & 0o777) == "0o600"
    assert record["event"] == "log_recovered"
    assert (record["code"], record["size"], record["path"]) == ("torn_tail", 57, str(side))
    assert record["sha256"] == hashlib.sha256(torn).hexdigest()
    assert (record["seq"], record["prev_hash"]) == (5, json.loads(good.splitlines()[-1])["hash"])
    # The good records are untouched, the record that says what was lost follows them,
    # and the chain verifies (with the key of a keyed log).
    assert path.read_bytes().startswith(good)
    assert json.loads(path.read_bytes()[len(good) :]) == record
    after = verify(path, key)
    assert (after.intact, after.records) == (True, 5)  # type: ignore[attr-defined]
    # A writer that had the log open before the crash chains after the new record.
    survivor.write({"event": "load_granted"})
    assert verify(path, key).records == 6  # type: ignore[attr-defined]


def test_t191_a_repair_is_recorded_on_the_audit_logger(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    write_log(path, 1)
    kill_mid_append(path, None, 10)
    with capture_logs() as logs:
        AuditLog.repair(path)
    assert [(log["event"], log["code"], log["size"]) for log in logs] == [
        ("log_recovered", "torn_tail", 10)
    ]


def test_t191_a_crash_between_writing_the_record_and_cutting_the_file_is_mended_again(
    tmp_path: Path,
) -> None:
    # The record is written over the torn bytes before the file is cut after it: a
    # crash between the two leaves the record and what is left of the torn line, a
    # shorter torn tail that a second repair moves aside.
    path = tmp_path / "audit.jsonl"
    write_log(path, 2)
    kill_mid_append(path, None, 20)
    AuditLog.repair(path)
    path.write_bytes(path.read_bytes() + b"x" * 300)
    assert verify(path).status == TORN  # type: ignore[attr-defined]
    second = AuditLog.repair(path)
    assert (second["seq"], second["size"]) == (5, 300)
    assert verify(path).intact  # type: ignore[attr-defined]


def test_t191_a_side_file_a_cut_short_repair_left_is_used(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    write_log(path, 1)
    offset = path.stat().st_size
    kill_mid_append(path, None, 30)
    side = tmp_path / f"audit.jsonl.torn-{offset}"
    side.write_bytes(path.read_bytes()[offset:])  # the first run got this far
    assert AuditLog.repair(path)["path"] == str(side)
    assert verify(path).intact  # type: ignore[attr-defined]


def test_t191_repair_never_writes_over_a_file_or_through_a_link(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    write_log(path, 1)
    offset = path.stat().st_size
    kill_mid_append(path, None, 30)
    before = path.read_bytes()
    side = tmp_path / f"audit.jsonl.torn-{offset}"
    side.write_bytes(b"someone else's file")
    with pytest.raises(AuditError) as caught:
        AuditLog.repair(path)
    assert caught.value.code == "write_failed"
    assert caught.value.reason == (
        f"{side} is there already, and is not a file of the torn bytes: move it away and "
        "repair again"
    )
    assert side.read_bytes() == b"someone else's file"
    side.unlink()
    target = tmp_path / "target"
    target.write_bytes(b"keep")
    side.symlink_to(target)
    with pytest.raises(AuditError):
        AuditLog.repair(path)
    assert target.read_bytes() == b"keep"
    assert path.read_bytes() == before  # nothing changed in the log either


def test_t191_repair_does_not_follow_a_link_at_the_log_path(tmp_path: Path) -> None:
    real = tmp_path / "real.jsonl"
    write_log(real, 1)
    kill_mid_append(real, None, 30)
    before = real.read_bytes()
    link = tmp_path / "audit.jsonl"
    link.symlink_to(real)
    with pytest.raises(AuditError) as caught:
        AuditLog.repair(link)
    assert caught.value.code == "write_failed"
    assert caught.value.reason == f"cannot open for repair {link}: a symbolic link (ELOOP)"
    assert real.read_bytes() == before
    assert not list(tmp_path.glob("*.torn-*"))


@pytest.mark.parametrize(
    ("damage", "code", "reason"),
    [
        pytest.param(
            lambda good: good, "not_torn", "the audit log is intact (3 records)", id="intact"
        ),
        pytest.param(
            lambda good: good.replace(b"skill-0", b"skill-X") + b'{"ev',
            "not_torn",
            "the audit log fails at line 2, which is not a torn last line",
            id="edited-elsewhere",
        ),
        pytest.param(
            lambda good: good.split(b"\n")[0][:30],
            "not_torn",
            "the audit log fails at line 1, which is not a torn last line",
            id="torn-first-line",
        ),
        pytest.param(
            lambda good: good + b"x" * (MAX_RECORD_BYTES + 1),
            "not_torn",
            "the audit log fails at line 4, which is not a torn last line",
            id="over-the-cap",
        ),
        pytest.param(lambda good: good[:0], "not_torn", "not an audit log: empty", id="empty"),
    ],
)
def test_t191_repair_refuses_what_is_not_a_torn_tail_and_changes_nothing(
    tmp_path: Path, damage: object, code: str, reason: str
) -> None:
    # Someone who edited a record cannot have repair throw the edit away.
    path = tmp_path / "audit.jsonl"
    write_log(path, 2)
    path.write_bytes(damage(path.read_bytes()))  # type: ignore[operator]
    before = path.read_bytes()
    with pytest.raises(AuditError) as caught:
        AuditLog.repair(path)
    assert caught.value.code == code
    assert caught.value.reason.startswith(reason)
    assert path.read_bytes() == before
    assert not list(tmp_path.glob("*.torn-*"))


@pytest.mark.parametrize(
    ("key", "reason"),
    [(None, "the audit log is keyed: repair needs its key"), (b"other", "another key")],
)
def test_t191_a_keyed_log_is_repaired_with_its_key_only(
    tmp_path: Path, key: bytes | None, reason: str
) -> None:
    path = tmp_path / "audit.jsonl"
    write_log(path, 1, key=KEY)
    kill_mid_append(path, KEY, 30)
    before = path.read_bytes()
    with pytest.raises(AuditError) as caught:
        AuditLog.repair(path, key=key)
    assert caught.value.code == "key_mismatch"
    assert reason in caught.value.reason
    assert path.read_bytes() == before


def test_t191_repair_of_a_missing_log_creates_nothing(tmp_path: Path) -> None:
    with pytest.raises(AuditError) as caught:
        AuditLog.repair(tmp_path / "missing.jsonl")
    assert caught.value.code == "write_failed"
    assert "No such file or directory (ENOENT)" in caught.value.reason
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("path", [None, "", 3, "a\x00b"])
def test_repair_arguments_are_checked(path: object) -> None:
    with pytest.raises(SkillUsageError):
        AuditLog.repair(path)  # type: ignore[arg-type]
    with pytest.raises(SkillUsageError):
        AuditLog.repair("x", key=b"")


def test_t191_repair_waits_for_the_writers_lock(tmp_path: Path) -> None:
    # Repair takes the lock every writer takes: while a writer holds it, repair waits,
    # and no append can land between its check and its change.
    path = tmp_path / "audit.jsonl"
    write_log(path, 1)
    kill_mid_append(path, None, 30)
    results: list[object] = []
    with FileLock(str(path)):
        repair = threading.Thread(target=lambda: results.append(AuditLog.repair(path)))
        repair.start()
        repair.join(timeout=1)
        assert repair.is_alive()
        assert results == []
    repair.join()
    assert len(results) == 1
    assert verify(path).intact  # type: ignore[attr-defined]


# -- the command line ----------------------------------------------------------------


def test_t191_audit_verify_and_summarize_say_torn_tail(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "audit.jsonl"
    write_log(path, 2)
    size = path.stat().st_size
    kill_mid_append(path, None, 40)
    code, out, _ = run(capsys, "audit", "verify", str(path))
    assert code == 5
    assert out == (
        f"torn tail: line 4: the last line (40 bytes at byte {size}) has no newline: a "
        "write cut short by a crash or a full disk; the 3 records before it verify: "
        "`skillguard audit repair` mends it\n"
    )
    code, out, _ = run(capsys, "audit", "summarize", str(path))
    assert code == 5
    assert out.startswith("NOT VERIFIED: torn tail: line 4:")
    assert "\ncounted: 2 records (every record but log_created)\n" in out
    # Among several logs, a torn tail is the least of the failures.
    other = tmp_path / "other.jsonl"
    write_log(other, 1)
    code, out, _ = run(capsys, "audit", "verify", str(other), str(path))
    assert code == 5
    assert f"{path}: torn tail: line 4:" in out
    code, out, _ = run(capsys, "audit", "summarize", str(path), "--format", "json")
    assert code == 5
    (log,) = json.loads(out)["logs"]
    assert (log["status"], log["line"], log["records"]) == ("torn_tail", 4, 3)


def test_t191_the_report_says_torn_tail(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    write_log(path, 2)
    size = path.stat().st_size
    kill_mid_append(path, None, 40)
    with contextlib.closing(stream_lines(str(path), max_line=MAX_RECORD_BYTES)) as lines:
        result, page = render_audit_report(lines)
    assert result.status == TORN
    assert 'data-state="torn-tail"' in page
    assert f"TORN TAIL at line 4 (byte {size})" in page
    assert "<code>skillguard audit repair</code>" in page
    assert "Lines 1 to 3 form a consistent chain" in page


def test_t191_audit_repair_mends_a_torn_log_and_refuses_an_intact_one(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "audit.jsonl"
    key_file = tmp_path / "key"
    key_file.write_bytes(KEY + b"\n")
    write_log(path, 2, key=KEY)
    size = path.stat().st_size
    kill_mid_append(path, KEY, 40)
    code, out, err = run(
        capsys,
        "load",
        "--policy",
        "p",
        "--agent",
        "a",
        "--audit-log",
        str(path),
        "--audit-key-file",
        str(key_file),
        "x",
    )
    assert code == 1
    assert err.startswith(
        "skillguard: audit/torn_tail: the last line of the audit log is incomplete"
    )
    assert f"`skillguard audit repair {path}`" in err
    code, out, err = run(capsys, "audit", "repair", str(path), "--key-file", str(key_file))
    assert (code, err) == (0, "")
    assert out == (
        f"repaired: 40 torn bytes moved to {path}.torn-{size}; log_recovered written as record 4\n"
    )
    code, out, _ = run(capsys, "audit", "verify", str(path), "--key-file", str(key_file))
    assert (code, out) == (0, "intact: 4 records\n")
    code, out, err = run(capsys, "audit", "repair", str(path), "--key-file", str(key_file))
    assert (code, out) == (1, "")
    assert err == (
        "skillguard: audit/not_torn: the audit log is intact (4 records): there is nothing "
        "to repair\n"
    )
    code, _, err = run(capsys, "audit", "repair", str(path))
    assert (code, err) == (
        1,
        "skillguard: audit/key_mismatch: the audit log is keyed: repair needs its key\n",
    )


@pytest.mark.parametrize(
    "extra",
    [
        ["--expect-records", "0"],
        ["--expect-log-id", "x"],
        ["--agent", "a"],
        ["--since", "2026-01-01"],
        ["--until", "2026-01-01"],
        ["--output", "page.html"],
        ["second.jsonl"],
    ],
)
def test_audit_repair_takes_one_file_and_a_key(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, extra: list[str]
) -> None:
    path = tmp_path / "audit.jsonl"
    write_log(path, 1)
    code, out, err = run(capsys, "audit", "repair", str(path), *extra)
    assert (code, out) == (2, "")
    assert "repair" in err
    assert os.path.getsize(path) > 0


_REPAIR_UNDER_A_LIMIT = """
import resource, signal, sys
from skillguard.audit import AuditError, AuditLog
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[2]), resource.RLIM_INFINITY))
try:
    AuditLog.repair(sys.argv[1])
except AuditError as exc:
    print(exc.code, exc.reason, sep="\\n")
"""


def repair_under_a_limit(path: Path, limit: int) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", _REPAIR_UNDER_A_LIMIT, str(path), str(limit)],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.splitlines()


def test_t191_a_repair_that_cannot_write_changes_nothing_and_can_be_run_again(
    tmp_path: Path,
) -> None:
    path = tmp_path / "audit.jsonl"
    write_log(path, 2)
    offset = path.stat().st_size
    kill_mid_append(path, None, 30)
    before = path.read_bytes()
    side = tmp_path / f"audit.jsonl.torn-{offset}"
    # The side file cannot be written (a file size limit, as a full disk): nothing is
    # left of it, and the log is as it was.
    assert repair_under_a_limit(path, 10) == [
        "write_failed",
        f"cannot write the torn bytes to {side}: File too large (EFBIG)",
    ]
    assert not side.exists()
    assert path.read_bytes() == before
    # The side file is written, but the record cannot be: the log is still torn, and a
    # second run uses the side file the first one left.
    assert repair_under_a_limit(path, 100) == [
        "write_failed",
        f"cannot write the log_recovered record to {path}: File too large (EFBIG)",
    ]
    assert side.read_bytes() == before[offset:]
    assert path.read_bytes() == before
    AuditLog.repair(path)
    assert verify(path).intact  # type: ignore[attr-defined]


def test_t211_a_torn_tail_does_not_hide_records_deleted_before_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # The host shipped the count (6 lines); someone deletes the last two records and
    # leaves a fragment where they were: the expected count still finds them missing,
    # in every reader, rather than a torn tail that repair is said to mend.
    path = tmp_path / "audit.jsonl"
    write_log(path, 5)
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:-2]) + b'{"code":')
    result = verify(path)
    assert result.status == TORN  # type: ignore[attr-defined]
    with contextlib.closing(stream_lines(str(path), max_line=MAX_RECORD_BYTES)) as stream:
        counted = verify_records(stream, expected_records=6)
    assert (counted.status, counted.line, counted.records) == ("tampered", 5, 4)
    assert counted.reason == "2 records missing at the end, and the last line is torn"
    code, out, _ = run(capsys, "audit", "verify", str(path), "--expect-records", "6")
    assert (code, out) == (
        1,
        "tampered: line 5: 2 records missing at the end, and the last line is torn\n",
    )
    other = tmp_path / "other.jsonl"
    write_log(other, 1)
    code, out, _ = run(
        capsys, "audit", "verify", str(other), str(path), "--expect-records", "2",
        "--expect-records", "6",
    )  # fmt: skip
    assert code == 1
    with contextlib.closing(stream_lines(str(path), max_line=MAX_RECORD_BYTES)) as stream:
        reported, page = render_audit_report(stream, expected_records=6)
    assert reported.status == "tampered"
    assert 'data-state="torn-tail"' not in page
    # Fewer lines than the torn one are more records than expected: tampering too.
    with contextlib.closing(stream_lines(str(path), max_line=MAX_RECORD_BYTES)) as stream:
        fewer = verify_records(stream, expected_records=3)
    assert (fewer.status, fewer.reason) == (
        "tampered",
        "1 records more than expected, and the last line is torn",
    )
    # The count a writer cut short leaves (its record never counted) is a torn tail.
    with contextlib.closing(stream_lines(str(path), max_line=MAX_RECORD_BYTES)) as stream:
        assert verify_records(stream, expected_records=4).status == TORN


def test_t213_a_repair_that_fills_the_disk_mid_record_leaves_the_torn_bytes_as_they_were(
    tmp_path: Path,
) -> None:
    # The record is longer than the torn bytes it replaces: on a full disk (a file size
    # limit here) its write stops part way, past the torn bytes' end. The log used to
    # keep the record's first bytes in place of the torn ones, so the next repair
    # found the side file "not a file of the torn bytes" and refused, and the message
    # said to move away the only copy of what was lost.
    path = tmp_path / "audit.jsonl"
    write_log(path, 2)
    offset = path.stat().st_size
    kill_mid_append(path, None, 30)
    before = path.read_bytes()
    side = tmp_path / f"audit.jsonl.torn-{offset}"
    assert repair_under_a_limit(path, offset + 100) == [
        "write_failed",
        f"cannot write the log_recovered record to {path}: File too large (EFBIG)",
    ]
    assert path.read_bytes() == before
    assert side.read_bytes() == before[offset:]
    record = AuditLog.repair(path)
    assert record["sha256"] == hashlib.sha256(before[offset:]).hexdigest()
    assert verify(path).intact  # type: ignore[attr-defined]


_REPAIR_KILLED_MID_WRITE = """
import os, resource, signal, sys
from skillguard.audit import AuditLog
signal.signal(signal.SIGXFSZ, lambda *_: os.kill(os.getpid(), signal.SIGKILL))
resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[2]), resource.RLIM_INFINITY))
AuditLog.repair(sys.argv[1])
print("the repair was not cut short")
"""


def test_t214_a_repair_killed_while_it_writes_the_torn_bytes_aside_can_be_run_again(
    tmp_path: Path,
) -> None:
    # A repair killed part way through writing the side file (SIGKILL there, as a
    # crash) used to leave the side file with the first torn bytes only, which the
    # next repair refused as "not a file of the torn bytes".
    path = tmp_path / "audit.jsonl"
    write_log(path, 2)
    offset = path.stat().st_size
    kill_mid_append(path, None, 300)
    before = path.read_bytes()
    done = subprocess.run(
        [sys.executable, "-c", _REPAIR_KILLED_MID_WRITE, str(path), "100"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stdout) == (-signal.SIGKILL, "")
    assert path.read_bytes() == before
    side = tmp_path / f"audit.jsonl.torn-{offset}"
    assert not side.exists()  # the side file is there whole or not at all
    record = AuditLog.repair(path)
    assert (record["path"], record["size"]) == (str(side), 300)
    assert side.read_bytes() == before[offset:]
    assert verify(path).intact  # type: ignore[attr-defined]
    # The killed repair's leftover went with the next one.
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "audit.jsonl",
        "audit.jsonl.lock",
        side.name,
    ]
