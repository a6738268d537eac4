"""Several audit logs verified together: one hash-chained file per process or host."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING

import pytest

from skillguard._audit.counts import MAX_COUNTED_NAMES, MAX_SHOWN_NAMES
from skillguard._audit.logset import MAX_LOGS, SAME_LOG_ID, UNREADABLE, _verify, summarize_logs
from skillguard._audit.record import _GENESIS, _digest, canonical
from skillguard._audit.summary import MAX_LISTED_DENIALS
from skillguard._cli.main import main
from skillguard._core.errors import SkillUsageError
from skillguard.audit import (
    AuditLog,
    Auditor,
    LogCheck,
    LogSetFinding,
    LogSetVerification,
    Verification,
    verify_logs,
)

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

KEY_A = b"host-a-key-0123456789"
KEY_B = b"host-b-key-9876543210"


def write_log(
    path: Path, count: int, *, key: bytes | None = None, agent: str = "planner"
) -> AuditLog:
    """A real log as a host writes it: a header, then *count* decisions (every other one
    a denial)."""
    log = AuditLog(path, key=key)
    auditor = Auditor(log)
    for index in range(count):
        auditor.emit(
            "load_denied" if index % 2 else "load_granted",
            agent=agent,
            skill=f"skill-{index}",
            decision="deny" if index % 2 else "allow",
            reason="not in the set" if index % 2 else None,
        )
    return log


def forge(path: Path, log_id: str, times: list[str]) -> None:
    """A valid unkeyed chain with log id *log_id* and one denial at each of *times*."""
    lines, previous = [], _GENESIS
    header = {"time": "2026-01-01T00:00:00Z", "event": "log_created", "log_id": log_id}
    records = [{**header, "keyed": False}] + [
        {"time": time, "event": "load_denied", "decision": "deny", "agent": "a", "skill": time}
        for time in times
    ]
    for seq, fields in enumerate(records, start=1):
        record = {**fields, "seq": seq, "prev_hash": previous}
        record["hash"] = previous = _digest(canonical(record), None)
        lines.append(canonical(record) + b"\n")
    path.write_bytes(b"".join(lines))


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def two_hosts(tmp_path: Path, **keys: bytes | None) -> tuple[Path, Path]:
    first, second = tmp_path / "host-a.jsonl", tmp_path / "host-b.jsonl"
    write_log(first, 3, key=keys.get("a"), agent="planner")
    write_log(second, 4, key=keys.get("b"), agent="coder")
    return first, second


# -- each log on its own, then the total ----------------------------------------------


def test_t137_every_log_is_checked_and_named(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    first, second = two_hosts(tmp_path)
    result = verify_logs([first, second])
    assert result.intact
    assert [log.path for log in result.logs] == [str(first), str(second)]
    assert [log.verification.records for log in result.logs] == [4, 5]
    assert result.records == 9
    assert result.findings == ()
    code, out, _ = run(capsys, "audit", "verify", str(first), str(second))
    assert code == 0
    assert out == (
        f"{first}: intact: 4 records\n"
        f"{second}: intact: 5 records\n"
        "intact: 2 of 2 logs intact, 9 records verified\n"
    )


def test_t137_a_tampered_log_cannot_hide_among_intact_ones(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    first, second = two_hosts(tmp_path)
    lines = second.read_bytes().splitlines(keepends=True)
    second.write_bytes(b"".join([*lines[:2], lines[2].replace(b"skill-1", b"skill-X"), *lines[3:]]))
    result = verify_logs([first, second])
    assert not result.intact
    assert result.logs[0].verification.intact
    assert (result.logs[1].verification.line, result.logs[1].verification.reason) == (
        3,
        "edited: its hash does not match",
    )
    assert result.records == 4  # only what verified counts
    code, out, _ = run(capsys, "audit", "verify", str(first), str(second))
    assert code == 1
    assert f"{second}: tampered: line 3: edited: its hash does not match\n" in out
    assert out.endswith("NOT VERIFIED: 1 of 2 logs intact, 4 records verified\n")


def test_t137_an_unreadable_log_is_a_failure_and_the_others_are_still_checked(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    first, _ = two_hosts(tmp_path)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    missing = tmp_path / "missing.jsonl"
    result = verify_logs([first, fifo, missing])
    assert [log.verification.status for log in result.logs] == ["intact", UNREADABLE, UNREADABLE]
    assert not result.intact
    code, out, _ = run(capsys, "audit", "verify", str(first), str(fifo), str(missing))
    assert code == 1
    assert out.splitlines() == [
        f"{first}: intact: 4 records",
        f"{fifo}: unreadable: a regular file is needed",
        f"{missing}: unreadable: a regular file is needed",
        "NOT VERIFIED: 1 of 3 logs intact, 4 records verified",
    ]


# -- one log in two files --------------------------------------------------------------


def test_t135_a_copied_log_is_found_even_when_each_copy_is_intact(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    first, second = two_hosts(tmp_path)
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes(first.read_bytes())
    result = verify_logs([first, second, copy])
    assert all(log.verification.intact for log in result.logs)
    log_id = result.logs[0].verification.log_id
    assert log_id is not None
    assert result.findings == (
        LogSetFinding(
            code=SAME_LOG_ID,
            log_id=log_id,
            paths=(str(first), str(copy)),
            reason="2 files hold one log: copied or replayed",
        ),
    )
    assert not result.intact
    code, out, _ = run(capsys, "audit", "verify", str(first), str(second), str(copy))
    assert code == 1
    assert f"same log id {log_id} in {first}, {copy}: one log copied or replayed\n" in out
    assert out.endswith("NOT VERIFIED: 3 of 3 logs intact, 13 records verified\n")


def test_t135_a_truncated_copy_of_a_log_is_found(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A rolled-back copy (the log as it was before its last records) kept beside the
    live log: each file is a valid chain on its own."""
    first, second = two_hosts(tmp_path)
    old = tmp_path / "old.jsonl"
    old.write_bytes(b"".join(second.read_bytes().splitlines(keepends=True)[:2]))
    result = verify_logs([first, second, old])
    assert [log.verification.records for log in result.logs] == [4, 5, 2]
    assert [finding.paths for finding in result.findings] == [(str(second), str(old))]
    assert run(capsys, "audit", "verify", str(first), str(second), str(old))[0] == 1


def test_t135_a_copy_is_found_even_when_it_was_also_tampered_with(tmp_path: Path) -> None:
    first, _ = two_hosts(tmp_path)
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes(first.read_bytes() + b"not a record\n")
    result = verify_logs([first, copy])
    assert result.logs[1].verification.line == 5
    assert [finding.code for finding in result.findings] == [SAME_LOG_ID]


def test_t135_the_same_file_named_twice_is_one_log_twice(tmp_path: Path) -> None:
    first, _ = two_hosts(tmp_path)
    assert [f.paths for f in verify_logs([first, first]).findings] == [(str(first),) * 2]


# -- one host's records cannot pass in another's log ----------------------------------


def test_t136_records_moved_into_another_log_break_its_chain(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    first, second = two_hosts(tmp_path)
    moved = second.read_bytes().splitlines(keepends=True)
    # Host B's decisions (without its header) appended to host A's log.
    first.write_bytes(first.read_bytes() + b"".join(moved[1:]))
    result = verify_logs([first, second])
    assert (result.logs[0].verification.line, result.logs[0].verification.reason) == (
        5,
        "inserted, reordered or a record before it deleted",
    )
    assert result.logs[1].verification.intact
    assert run(capsys, "audit", "verify", str(first), str(second))[0] == 1


def test_t136_a_whole_log_spliced_into_another_is_named(tmp_path: Path) -> None:
    first, second = two_hosts(tmp_path)
    spliced = tmp_path / "spliced.jsonl"
    spliced.write_bytes(first.read_bytes() + second.read_bytes())
    result = verify_logs([spliced, second])
    assert result.logs[0].verification.reason == (
        "a second log_created record: another log spliced in"
    )
    assert result.logs[0].verification.line == 5


def test_t136_hosts_with_different_keys_are_each_checked_with_their_own(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    first, second = two_hosts(tmp_path, a=KEY_A, b=KEY_B)
    assert verify_logs([first, second], keys=[KEY_A, KEY_B]).intact
    key_a, key_b = tmp_path / "a.key", tmp_path / "b.key"
    key_a.write_bytes(KEY_A + b"\n")
    key_b.write_bytes(KEY_B)
    verify = ("audit", "verify", str(first), str(second))
    assert run(capsys, *verify, "--key-file", str(key_a), "--key-file", str(key_b))[0] == 0
    # Swapped, the keys name the wrong host: neither log is called tampered with.
    result = verify_logs([first, second], keys=[KEY_B, KEY_A])
    assert [log.verification.status for log in result.logs] == ["wrong_key", "wrong_key"]
    code, out, _ = run(capsys, *verify, "--key-file", str(key_b), "--key-file", str(key_a))
    assert code == 4
    assert "wrong key: the log was keyed with another key" in out
    # One key for both: host B's log is checked with host A's key.
    code, out, _ = run(capsys, *verify, "--key-file", str(key_a))
    assert code == 4
    assert out.splitlines()[:2] == [
        f"{first}: intact: 4 records",
        f"{second}: wrong key: the log was keyed with another key",
    ]
    # Without keys nothing is checked: exit 3, the mildest failure.
    assert run(capsys, *verify)[0] == 3


def test_t136_a_key_that_verifies_one_host_cannot_vouch_for_an_unkeyed_log(
    tmp_path: Path,
) -> None:
    first, second = two_hosts(tmp_path, a=KEY_A)
    result = verify_logs([first, second], keys=KEY_A)
    assert result.logs[0].verification.intact
    assert result.logs[1].verification.reason == "written without a key (or rewritten without one)"
    assert verify_logs([first, second], keys=[KEY_A, None]).intact


def test_t137_the_exit_status_is_the_worst_of_the_logs(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    keyed, plain = two_hosts(tmp_path, a=KEY_A)
    key = tmp_path / "b.key"
    key.write_bytes(KEY_B)
    not_a_log = tmp_path / "not-a-log.jsonl"
    not_a_log.write_bytes(b"{}\n")
    broken = tmp_path / "broken.jsonl"
    broken.write_bytes(plain.read_bytes().replace(b"coder", b"CODER", 1))
    # needs key (3) < wrong key (4) < not a log (6) < tampered (1).
    assert run(capsys, "audit", "verify", str(plain), str(keyed))[0] == 3
    files = ("audit", "verify", str(keyed), str(plain))
    assert run(capsys, *files, "--key-file", str(key), "--key-file", str(key))[0] == 1
    assert run(capsys, "audit", "verify", str(keyed), str(not_a_log))[0] == 6
    assert run(capsys, "audit", "verify", str(not_a_log), str(broken))[0] == 1
    code, out, _ = run(capsys, "audit", "verify", str(broken), str(keyed))
    assert code == 1
    assert out.splitlines()[1] == f"{keyed}: keyed: needs its key (--key-file)"


# -- what was shipped elsewhere, per file ---------------------------------------------


def test_t135_expected_log_ids_and_counts_are_one_per_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    id_a, id_b = write_log(first, 2).log_id, write_log(second, 1).log_id
    assert verify_logs([first, second], expected_log_ids=[id_a, id_b]).intact
    assert verify_logs([first, second], expected_records=[3, None]).intact
    swapped = verify_logs([first, second], expected_log_ids=[id_b, id_a])
    assert [log.verification.reason for log in swapped.logs] == [
        "another log: its log id is not the one expected"
    ] * 2
    short = verify_logs([first, second], expected_records=[4, 2])
    assert short.logs[0].verification.reason == "1 records missing at the end"
    assert short.logs[1].verification.intact
    files = ("audit", "verify", str(first), str(second))
    ids = ("--expect-log-id", id_a, "--expect-log-id", id_b)
    assert run(capsys, *files, *ids)[0] == 0
    assert run(capsys, *files, *ids, "--expect-records", "3", "--expect-records", "3")[0] == 1
    # Given once for two files, a log id or a count would hold for neither: refused.
    code, _, err = run(capsys, *files, "--expect-log-id", id_a)
    assert code == 2
    assert "--expect-log-id must be given once per FILE, or not at all" in err
    assert run(capsys, *files, "--expect-records", "3")[0] == 2
    # Per-file options with one FILE are a mistake too.
    assert run(capsys, "audit", "verify", str(first), *ids)[0] == 2


def test_t135_one_file_keeps_the_single_log_output(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    first, _ = two_hosts(tmp_path)
    assert run(capsys, "audit", "verify", str(first))[:2] == (0, "intact: 4 records\n")


# -- summaries: per log and merged ------------------------------------------------------


def test_t137_summarize_merges_counts_and_labels_denials(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    first, second = two_hosts(tmp_path)
    result, summaries, total = summarize_logs([str(first), str(second)])
    assert result.intact
    assert [summary["records"] for summary in summaries] == [3, 4]
    assert total["records"] == 7
    assert total["by_agent"] == {"planner": 3, "coder": 4}
    assert total["by_decision"] == {"allow": 4, "deny": 3}
    assert total["denials_total"] == 3
    assert sorted(denial["log"] for denial in total["denials"]) == [
        str(first),
        str(second),
        str(second),
    ]
    code, out, _ = run(capsys, "audit", "summarize", str(first), str(second))
    assert code == 0
    counted = "records (every record but log_created)"
    assert out.startswith(f"== {first}: intact: 4 records\ncounted: 3 {counted}\n")
    assert f"== {second}: intact: 5 records\ncounted: 4 {counted}\n" in out
    # Each file gives its counts; its denials are listed once, merged, under the total.
    assert out.split("== total: ")[0].count("denials: ") == 2
    assert "denied " not in out.split("== total: ")[0]
    total_part = out.split("== total: ")[1]
    assert total_part.startswith(
        f"intact: 2 of 2 logs intact, 9 records verified\ncounted: 7 {counted}\n"
    )
    assert "by agent: coder=4, planner=3\n" in total_part
    assert f"not in the set log={second}\n" in total_part


def test_t137_summarize_json_has_each_log_and_the_total(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    first, second = two_hosts(tmp_path)
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes(second.read_bytes())
    lines = first.read_bytes().splitlines(keepends=True)
    first.write_bytes(b"".join(lines[:3]) + b"\n" + b"".join(lines[3:]))
    files = (str(first), str(second), str(copy))
    code, out, _ = run(capsys, "audit", "summarize", "--format", "json", *files)
    assert code == 1
    document = json.loads(out)
    assert document["verified"] is False
    assert [log["file"] for log in document["logs"]] == list(files)
    assert [log["verified"] for log in document["logs"]] == [False, True, True]
    assert [log["summary"]["records"] for log in document["logs"]] == [2, 4, 4]
    assert [log["records"] for log in document["logs"]] == [3, 5, 5]
    assert document["total"]["records"] == 10
    assert [(log["status"], log["line"]) for log in document["logs"]] == [
        ("tampered", 4),
        ("intact", None),
        ("intact", None),
    ]
    assert document["logs"][0]["reason"] == "an empty line"
    assert document["findings"] == [
        {
            "code": "same_log_id",
            "log_id": document["logs"][1]["log_id"],
            "files": [str(second), str(copy)],
        }
    ]
    code, out, _ = run(capsys, "audit", "summarize", *files)
    assert code == 1
    total = out.split("== total: ")[1].splitlines()
    assert total[0] == "NOT VERIFIED: 2 of 3 logs intact, 10 records verified"
    assert total[1] == (
        f"same log id {document['logs'][1]['log_id']} in {second}, {copy}: "
        "one log copied or replayed"
    )
    assert total[2] == "counted: 10 records (every record but log_created)"


def test_t137_summarize_filters_apply_to_every_log(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    first, second = two_hosts(tmp_path)
    code, out, _ = run(
        capsys,
        "audit",
        "summarize",
        "--format",
        "json",
        "--agent",
        "coder",
        str(first),
        str(second),
    )
    assert code == 0
    assert json.loads(out)["total"]["by_agent"] == {"coder": 4}
    code, _, err = run(capsys, "audit", "summarize", "--since", "never", str(first), str(second))
    assert code == 2
    assert "since is not an ISO 8601 time" in err


def test_t137_merged_denials_stay_bounded(tmp_path: Path) -> None:
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    write_log(first, 2 * MAX_LISTED_DENIALS + 2)
    write_log(second, 4)
    _, _, total = summarize_logs([str(first), str(second)])
    assert total["denials_total"] == MAX_LISTED_DENIALS + 3
    listed = total["denials"]
    assert len(listed) <= MAX_LISTED_DENIALS
    # Each file keeps its own share: its latest denials, the last ones it holds.
    from_first = [d["skill"] for d in listed if d["log"] == str(first)]
    assert len(from_first) == MAX_LISTED_DENIALS // 2
    assert from_first[-1] == f"skill-{2 * MAX_LISTED_DENIALS + 1}"
    assert [d["skill"] for d in listed if d["log"] == str(second)] == ["skill-1", "skill-3"]


def test_audit_report_takes_one_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    first, second = two_hosts(tmp_path)
    page = tmp_path / "page.html"
    code, _, err = run(capsys, "audit", "report", str(first), str(second), "--output", str(page))
    assert code == 2
    assert "audit report takes one FILE" in err
    assert not page.exists()


# -- the library call ----------------------------------------------------------------


def test_verify_logs_refuses_bad_arguments(tmp_path: Path) -> None:
    first, _ = two_hosts(tmp_path)
    bad: list[dict[str, object]] = [
        {"paths": str(first)},
        {"paths": []},
        {"paths": [first] * (MAX_LOGS + 1)},
        {"paths": [first], "keys": b""},
        {"paths": [first], "keys": "key"},
        {"paths": [first], "keys": [KEY_A, KEY_B]},
        {"paths": [first], "keys": [b""]},
        {"paths": [first], "expected_log_ids": "0" * 32},
        {"paths": [first], "expected_log_ids": [1]},
        {"paths": [first], "expected_records": [-1]},
        {"paths": [first], "expected_records": [True]},
        {"paths": [first, first], "expected_records": [1]},
        {"paths": [first.read_bytes()]},
    ]
    for arguments in bad:
        with pytest.raises(SkillUsageError):
            verify_logs(**arguments)  # type: ignore[arg-type]


def test_verify_logs_results_are_frozen(tmp_path: Path) -> None:
    first, _ = two_hosts(tmp_path)
    result = verify_logs([first])
    assert isinstance(result, LogSetVerification)
    assert isinstance(result.logs[0], LogCheck)
    assert isinstance(result.logs[0].verification, Verification)
    with pytest.raises(AttributeError):
        result.logs = ()  # type: ignore[misc]


def test_t137_merged_denials_are_the_latest_of_all_logs_by_time(tmp_path: Path) -> None:
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    forge(first, "a" * 32, [f"2026-01-01T00:00:{s:02d}Z" for s in (1, 3, 5)])
    forge(second, "b" * 32, [f"2026-01-01T00:00:{s:02d}Z" for s in (2, 4, 6)])
    result, summaries, total = summarize_logs([str(first), str(second)])
    assert result.intact
    assert all("denials" not in summary for summary in summaries)
    assert [(d["skill"], d["log"]) for d in total["denials"]] == [
        (f"2026-01-01T00:00:{s:02d}Z", str(first if s % 2 else second)) for s in range(1, 7)
    ]
    # Over the cap, each file keeps its latest share, by the order its records were
    # written: a host that stamps a flood of denials far in the future cannot push
    # another host's denial out of the list.
    flood = [f"9999-12-31T23:{m:02d}:{s:02d}Z" for m in range(17) for s in range(60)][:1001]
    forge(first, "a" * 32, flood)
    forge(second, "b" * 32, ["2026-01-02T00:00:00Z"])
    _, _, total = summarize_logs([str(first), str(second)])
    assert total["denials_total"] == 1002
    listed = total["denials"]
    assert len(listed) <= MAX_LISTED_DENIALS
    assert listed[0] == {**listed[0], "log": str(second), "skill": "2026-01-02T00:00:00Z"}
    assert [d["skill"] for d in listed[1:]] == flood[-(MAX_LISTED_DENIALS // 2) :]


def test_t135_summarize_refuses_a_record_count_it_would_not_check(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    first, second = two_hosts(tmp_path)
    # The tail of the second log deleted: only --expect-records can tell.
    second.write_bytes(b"".join(second.read_bytes().splitlines(keepends=True)[:2]))
    counts = ("--expect-records", "4", "--expect-records", "5")
    assert run(capsys, "audit", "verify", str(first), str(second), *counts)[0] == 1
    for files, given in (((first, second), counts), ((second,), counts[:2])):
        code, out, err = run(capsys, "audit", "summarize", *map(str, files), *given)
        assert (code, out) == (2, "")
        assert "audit summarize does not take --expect-records" in err


class _Hostile(list[object]):
    """A sequence whose iteration is foreign code that fails."""

    def __iter__(self) -> Iterator[object]:
        raise RuntimeError("a caller's sequence failed")


def test_t137_a_hostile_sequence_argument_is_a_usage_error(tmp_path: Path) -> None:
    first, _ = two_hosts(tmp_path)
    bad: list[dict[str, object]] = [
        {"paths": _Hostile([first])},
        {"paths": [first], "keys": _Hostile([KEY_A])},
        {"paths": [first], "expected_log_ids": _Hostile([None])},
        {"paths": [first], "expected_records": _Hostile([None])},
    ]
    for arguments in bad:
        with pytest.raises(SkillUsageError, match="could not be read as a sequence"):
            verify_logs(**arguments)  # type: ignore[arg-type]
    # A huge lazy sequence is refused by its length, before it is copied.
    with pytest.raises(SkillUsageError, match="between 1 and"):
        verify_logs(range(10**15))  # type: ignore[arg-type]
    with pytest.raises(SkillUsageError, match="between 1 and"):
        verify_logs([first], expected_records=range(10**15))


# -- T190: the total is as bounded as one log ------------------------------------------


def test_t190_the_merged_total_keeps_a_bounded_number_of_names(tmp_path: Path) -> None:
    # Every file names 1,500 skills of its own, and "common" 200 times: the total of
    # the set keeps one table's worth of names, finds the name that matters, and counts
    # every record exactly.
    paths = []
    for host in ("a", "b", "c"):
        path = tmp_path / f"{host}.jsonl"
        log = Auditor(AuditLog(path))
        for n in range(1500):
            log.emit("load_granted", agent=host, skill=f"{host}-{n}", decision="allow")
        for _ in range(200):
            log.emit("load_granted", agent=host, skill="common", decision="allow")
        paths.append(str(path))
    result, summaries, merged, _ = _verify(paths, None, None, None, (None, None))
    assert result.intact
    assert len(merged.tables["by_skill"]) <= MAX_COUNTED_NAMES
    total = merged.result()
    assert total["records"] == 3 * 1700
    assert next(iter(total["by_skill"])) == "common"
    assert total["by_agent"] == {"a": 1700, "b": 1700, "c": 1700}
    facts = total["tables"]["by_skill"]
    assert (facts["records"], facts["exact"], facts["names"]) == (5100, False, None)
    least = facts["least"].get("common", total["by_skill"]["common"])
    assert least <= 600 <= total["by_skill"]["common"]
    # What is kept per file is what is shown of it.
    assert all(len(summary["by_skill"]) == MAX_SHOWN_NAMES for summary in summaries)
