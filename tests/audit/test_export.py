"""``audit export`` and ``--format json``: verified records for machines (T250-T252)."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from skillguard._audit.export import export_records
from skillguard._cli.audit import _ACTION_OPTIONS, SUMMARY_SCHEMA, VERIFY_SCHEMA
from skillguard._cli.main import main
from skillguard._cli.parser import build_parser
from skillguard.audit import AuditLog, Auditor
from tests.audit_logs import HOSTILE, forged_lines

if TYPE_CHECKING:
    from collections.abc import Iterator

FIXTURES = Path(__file__).parent.parent / "fixtures" / "audit"
OCSF = json.loads((FIXTURES / "ocsf-1.2.0-attributes.json").read_text())
KEY = b"export-test-key"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def write_log(path: Path, count: int, *, key: bytes | None = None) -> list[bytes]:
    """A real log: a header, then *count* decisions (every other one a denial); its
    lines as written."""
    auditor = Auditor(AuditLog(path, key=key))
    for index in range(count):
        auditor.emit(
            "load_denied" if index % 2 else "load_granted",
            agent="planner",
            skill=f"skill-{index}",
            decision="deny" if index % 2 else "allow",
            code="not_allowed" if index % 2 else None,
            reason="not in the set" if index % 2 else None,
            sha256=f"{index:064x}",
        )
    return path.read_bytes().splitlines(keepends=True)


def exported(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines()]


# -- JSON Lines -------------------------------------------------------------------------


def test_t251_export_writes_every_verified_record_with_its_log_id(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    lines = write_log(tmp_path / "a.jsonl", 4, key=KEY)
    (tmp_path / "key").write_bytes(KEY)
    code, out, err = run(
        capsys, "audit", "export", str(tmp_path / "a.jsonl"), "--key-file", str(tmp_path / "key")
    )
    assert (code, err) == (0, "")
    records = exported(out)
    log_id = json.loads(lines[0])["log_id"]
    assert [r["seq"] for r in records] == [1, 2, 3, 4, 5]
    assert {r["log_id"] for r in records} == {log_id}
    # Each is the record as written, hash included, plus its log id.
    for record, line in zip(records, lines, strict=True):
        assert record == {**json.loads(line), "log_id": log_id}


def test_t251_a_tampered_log_exports_what_came_before_the_bad_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "a.jsonl"
    lines = write_log(path, 5)
    lines[3] = lines[3].replace(b"planner", b"PLANNER")
    path.write_bytes(b"".join(lines))
    code, out, err = run(capsys, "audit", "export", str(path))
    assert code == 1
    assert [r["seq"] for r in exported(out)] == [1, 2, 3]
    assert err == f"skillguard: {path}: tampered: line 4: edited: its hash does not match\n"


def test_t251_a_torn_tail_exports_the_records_before_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "a.jsonl"
    write_log(path, 2)
    with path.open("ab") as file:
        file.write(b'{"agent":"pla')
    code, out, err = run(capsys, "audit", "export", str(path))
    assert code == 5
    assert [r["seq"] for r in exported(out)] == [1, 2, 3]
    assert err.startswith(f"skillguard: {path}: torn tail: line 4:")


@pytest.mark.parametrize(
    ("content", "code"),
    [(b"", 6), (b"name: a\ndescription: b\n", 6), (b"{}\n", 6), (b"\n" * 1000, 6)],
)
def test_t250_what_is_not_a_log_exports_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, content: bytes, code: int
) -> None:
    path = tmp_path / "skill.yaml"
    path.write_bytes(content)
    result = run(capsys, "audit", "export", str(path))
    assert result[:2] == (code, "")
    assert result[2].startswith(f"skillguard: {path}: not an audit log: ")


def test_t251_a_keyed_log_without_its_key_exports_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    write_log(tmp_path / "a.jsonl", 2, key=KEY)
    code, out, err = run(capsys, "audit", "export", str(tmp_path / "a.jsonl"))
    assert (code, out) == (3, "")
    assert err == f"skillguard: {tmp_path / 'a.jsonl'}: keyed: needs its key (--key-file)\n"


def test_t251_several_logs_export_in_order_each_under_its_own_id(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    first, second, broken = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "c.jsonl"
    write_log(first, 1)
    write_log(second, 2)
    broken.write_bytes(b"\n")
    code, out, err = run(capsys, "audit", "export", str(first), str(broken), str(second))
    assert code == 6
    records = exported(out)
    assert [r["seq"] for r in records] == [1, 2, 1, 2, 3]
    ids = [json.loads(path.read_bytes().splitlines()[0])["log_id"] for path in (first, second)]
    assert [r["log_id"] for r in records] == [ids[0]] * 2 + [ids[1]] * 3
    assert err == f"skillguard: {broken}: not an audit log: an empty line\n"


def test_t251_since_leaves_records_out_but_still_checks_them(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    lines = [json.loads(line) for line in write_log(tmp_path / "a.jsonl", 3)]
    code, out, _ = run(
        capsys, "audit", "export", str(tmp_path / "a.jsonl"), "--since", "9999-01-01"
    )
    assert (code, out) == (0, "")
    since = lines[2]["time"]  # milliseconds: records at or after it
    code, out, _ = run(capsys, "audit", "export", str(tmp_path / "a.jsonl"), "--since", since)
    assert code == 0
    assert [r["seq"] for r in exported(out)] == [r["seq"] for r in lines if r["time"] >= since]


def test_t251_export_holds_one_record_at_a_time() -> None:
    """Each record is written before the next line is read (one line read ahead, to
    know the last): what is held never grows with the log."""
    lines = forged_lines([{"event": "load_granted", "agent": "a", "decision": "allow"}] * 50)
    pulled = 0
    trace: list[tuple[int, int]] = []
    written = 0

    def source() -> Iterator[bytes]:
        nonlocal pulled
        for line in lines:
            pulled += 1
            yield line

    def write(text: str) -> None:
        nonlocal written
        if text != "\n":
            written += 1
            trace.append((pulled, written))

    assert export_records(source(), write).intact
    assert written == len(lines)
    assert all(pulled - done <= 1 for pulled, done in trace)


# -- OCSF ---------------------------------------------------------------------------------


def _paths(value: object, prefix: str = "") -> Iterator[tuple[str, object]]:
    """Every attribute of an OCSF event, by its dotted path (arrays by their element)."""
    if not isinstance(value, dict):
        return
    for name, item in value.items():
        path = f"{prefix}{name}"
        yield path, item
        if prefix.startswith("unmapped") or path == "unmapped":
            continue  # free-form by definition (object_t)
        for element in item if isinstance(item, list) else [item]:
            yield from _paths(element, f"{path}.")


_PYTHON_TYPES = {
    "integer_t": int,
    "long_t": int,
    "timestamp_t": int,
    "string_t": str,
    "hostname_t": str,
}


def _check_against_schema(event: dict[str, Any]) -> None:
    for name in OCSF["required"]:
        assert name in event, name
    for path, value in _paths(event):
        if path.startswith("unmapped."):
            continue
        attribute = OCSF["attributes"].get(path)
        assert attribute is not None, f"{path} is no OCSF {OCSF['ocsf_version']} attribute used"
        if attribute["is_array"]:
            assert isinstance(value, list), path
            values = value
        else:
            values = [value]
        for item in values:
            wanted = _PYTHON_TYPES.get(attribute["type"], dict)
            assert isinstance(item, wanted), (path, attribute["type"], item)
            assert not isinstance(item, bool), path


def test_t251_ocsf_events_use_only_published_attributes_of_their_type(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    lines = write_log(tmp_path / "a.jsonl", 4)
    code, out, _ = run(capsys, "audit", "export", str(tmp_path / "a.jsonl"), "--format", "ocsf")
    assert code == 0
    events = exported(out)
    assert len(events) == 5
    for event in events:
        _check_against_schema(event)
        assert event["class_uid"] == 6003 == OCSF["class"]["category_uid"] * 1000 + 3
        assert event["type_uid"] == event["class_uid"] * 100 + event["activity_id"]
        assert event["metadata"]["version"] == OCSF["ocsf_version"]
    header, granted, denied = events[0], events[1], events[2]
    log_id = json.loads(lines[0])["log_id"]
    assert header["src_endpoint"] == {"hostname": socket.gethostname()}
    assert granted["metadata"]["uid"] == f"{log_id}:2"
    assert (granted["status_id"], granted["actor"]["app_name"]) == (1, "planner")
    assert granted["resources"] == [{"name": "skill-0", "type": "skill", "uid": f"{0:064x}"}]
    assert (denied["status_id"], denied["severity_id"]) == (2, 3)
    assert (denied["status_code"], denied["status_detail"]) == ("not_allowed", "not in the set")
    assert denied["actor"]["authorizations"] == [{"decision": "deny"}]
    written = json.loads(lines[2])
    assert denied["time"] == _millis(written["time"])


def _millis(text: str) -> int:
    import datetime as dt

    moment = dt.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=dt.timezone.utc)
    return int(moment.timestamp() * 1000)


def test_t251_ocsf_of_a_hostile_log_stays_in_its_shape() -> None:
    records = [
        {"event": text, "agent": text, "skill": text, "decision": text, "reason": text}
        for text in HOSTILE
    ] + [{"event": "load_granted", "time": "yesterday", "decision": "allow", "seq_extra": 5}]
    out: list[str] = []
    result = export_records(forged_lines(records), out.append, output="ocsf")
    assert result.intact
    events = [json.loads(line) for line in "".join(out).splitlines()]
    assert len(events) == len(records) + 1
    for event in events:
        _check_against_schema(event)
    assert "".join(out).isascii()
    assert events[-1]["time"] == 0
    assert events[-1]["metadata"]["original_time"] == "yesterday"


# -- verify and summarize in JSON -------------------------------------------------------


VERIFY_LOG_FIELDS = {
    "file",
    "status",
    "verified",
    "records",
    "line",
    "offset",
    "reason",
    "log_id",
    "key",
}


def test_t252_verify_json_is_pinned_by_its_schema(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    good, bad = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    write_log(good, 2)
    lines = write_log(bad, 3)
    bad.write_bytes(b"".join(lines[:2] + lines[3:]))
    code, out, _ = run(capsys, "audit", "verify", "--format", "json", str(good), str(bad))
    document = json.loads(out)
    assert code == document["exit_status"] == 1
    assert document["schema"] == VERIFY_SCHEMA == "skillguard.audit.verify/1"
    assert set(document) == {"schema", "verified", "exit_status", "records", "logs", "findings"}
    assert document["verified"] is False
    assert document["records"] == 3
    first, second = document["logs"]
    assert set(first) == set(second) == VERIFY_LOG_FIELDS
    assert first == {
        "file": str(good),
        "status": "intact",
        "verified": True,
        "records": 3,
        "line": None,
        "offset": None,
        "reason": None,
        "log_id": json.loads(good.read_bytes().splitlines()[0])["log_id"],
        "key": "unkeyed",
    }
    assert (second["status"], second["line"], second["records"]) == ("tampered", 3, 2)
    assert second["reason"] == "inserted, reordered or a record before it deleted"
    assert second["offset"] == len(lines[0]) + len(lines[1])


@pytest.mark.parametrize(
    ("content", "status", "key"),
    [(b"name: a\n", "not_a_log", None), (b"", "not_a_log", None)],
)
def test_t250_verify_json_says_not_a_log(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, content: bytes, status: str, key: None
) -> None:
    path = tmp_path / "a.yaml"
    path.write_bytes(content)
    code, out, _ = run(capsys, "audit", "verify", "--format", "json", str(path))
    (log,) = json.loads(out)["logs"]
    assert (code, log["status"], log["key"], log["records"]) == (6, status, key, 0)
    code, out, _ = run(capsys, "audit", "verify", str(path))
    assert code == 6
    assert out.startswith("not an audit log: ")


def test_t252_verify_json_names_the_key_state(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    write_log(tmp_path / "a.jsonl", 1, key=KEY)
    (tmp_path / "key").write_bytes(KEY)
    (tmp_path / "other").write_bytes(b"other")
    states = []
    for extra in (
        [],
        ["--key-file", str(tmp_path / "other")],
        ["--key-file", str(tmp_path / "key")],
    ):
        _, out, _ = run(
            capsys, "audit", "verify", "--format", "json", str(tmp_path / "a.jsonl"), *extra
        )
        states.append(json.loads(out)["logs"][0]["key"])
    assert states == ["needs_key", "wrong_key", "keyed"]


def test_t252_summarize_json_agrees_with_verify(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    write_log(tmp_path / "a.jsonl", 4)
    _, verified, _ = run(capsys, "audit", "verify", "--format", "json", str(tmp_path / "a.jsonl"))
    _, summary, _ = run(capsys, "audit", "summarize", "--format", "json", str(tmp_path / "a.jsonl"))
    verified_doc, summary_doc = json.loads(verified), json.loads(summary)
    assert summary_doc["schema"] == SUMMARY_SCHEMA == "skillguard.audit.summary/1"
    assert summary_doc["records"] == verified_doc["records"] == 5
    (log,) = summary_doc["logs"]
    assert {k: v for k, v in log.items() if k != "summary"} == verified_doc["logs"][0]
    assert log["summary"]["records"] == summary_doc["total"]["records"] == 4
    _, text, _ = run(capsys, "audit", "summarize", str(tmp_path / "a.jsonl"))
    _, verify_text, _ = run(capsys, "audit", "verify", str(tmp_path / "a.jsonl"))
    assert text.splitlines()[0] == verify_text.strip() == "intact: 5 records"


def test_summarize_prints_no_none_for_a_missing_field(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(b"".join(forged_lines([{"event": "bind_denied", "decision": "deny"}])))
    code, out, _ = run(capsys, "audit", "summarize", str(path))
    assert code == 0
    assert "None" not in out
    assert out.splitlines()[-1] == "denied - bind_denied"


# -- every action refuses an option it would ignore --------------------------------------


_GIVEN = {
    "key_file": ["--key-file", "k"],
    "expect_records": ["--expect-records", "3"],
    "expect_log_id": ["--expect-log-id", "x"],
    "agent": ["--agent", "a"],
    "since": ["--since", "2026-01-01"],
    "until": ["--until", "2026-01-01"],
    "format": ["--format", "json"],
    "output": ["--output", "page.html"],
}


@pytest.mark.parametrize("action", sorted(_ACTION_OPTIONS))
def test_t252_each_action_refuses_what_it_would_ignore(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, action: str
) -> None:
    write_log(tmp_path / "a.jsonl", 1)
    for dest, option in _GIVEN.items():
        if dest in _ACTION_OPTIONS[action]:
            continue
        code, out, err = run(capsys, "audit", action, str(tmp_path / "a.jsonl"), *option)
        assert (code, out) == (2, ""), (action, option)
        assert err == f"skillguard: [usage/bad_argument] audit {action} does not take {option[0]}\n"


@pytest.mark.parametrize(
    ("action", "wrong"), [("verify", "ocsf"), ("summarize", "jsonl"), ("export", "json")]
)
def test_t252_each_action_refuses_a_format_it_does_not_write(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, action: str, wrong: str
) -> None:
    write_log(tmp_path / "a.jsonl", 1)
    code, out, err = run(capsys, "audit", action, str(tmp_path / "a.jsonl"), "--format", wrong)
    assert (code, out) == (2, "")
    assert "--format is" in err


def test_the_options_each_action_takes_match_their_help() -> None:
    """The table that refuses options is the one the help (and the README) states."""
    import argparse
    import re

    parser = build_parser()
    (commands,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    audit = commands.choices["audit"]
    for action, wanted in _ACTION_OPTIONS.items():
        taken = set()
        for option in audit._actions:
            if not option.option_strings or option.dest == "help":
                continue
            scope = re.match(r"([a-z]+(?:, [a-z]+)*): ", option.help or "")
            if scope is None or action in scope.group(1).split(", "):
                taken.add(option.dest)
        assert taken == wanted, action


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (b'":', b'": '),  # one space: no longer the canonical line
        (b'"hash":"', b'"hash":"0'),  # a hash one digit too long
        (b"log_created", b"log_cr\xc3\xa9ated"),  # a byte that is not ASCII
        (b'"event"', b'"ev\\u0065nt"'),  # a key spelled with an escape
    ],
)
def test_t313_an_edited_first_record_is_tampering_not_a_file_that_is_no_log(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, old: bytes, new: bytes
) -> None:
    lines = write_log(tmp_path / "a.jsonl", 2)
    (tmp_path / "a.jsonl").write_bytes(b"".join([lines[0].replace(old, new, 1), *lines[1:]]))
    code, out, err = run(capsys, "audit", "verify", str(tmp_path / "a.jsonl"))
    assert code == 1
    assert out.startswith("tampered: line 1: ")
    code, out, err = run(capsys, "audit", "export", str(tmp_path / "a.jsonl"))
    assert (code, out) == (1, "")
    assert "tampered: line 1" in err


@pytest.mark.parametrize("first", [b"{}\n", b"name: a skill\n", b"\n"])
def test_t316_a_log_whose_first_line_was_replaced_is_tampered(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, first: bytes
) -> None:
    lines = write_log(tmp_path / "a.jsonl", 2)
    (tmp_path / "a.jsonl").write_bytes(b"".join([first, *lines[1:]]))
    for action in ("verify", "summarize"):
        code, out, err = run(capsys, "audit", action, str(tmp_path / "a.jsonl"))
        assert code == 1
        assert "tampered: line 1: " in out + err
        assert "the log's first line was replaced" in out + err
    code, out, err = run(capsys, "audit", "verify", "--format", "json", str(tmp_path / "a.jsonl"))
    (log,) = json.loads(out)["logs"]
    assert (code, log["status"], log["records"]) == (1, "tampered", 0)
    code, out, err = run(capsys, "audit", "export", str(tmp_path / "a.jsonl"))
    assert (code, out) == (1, "")
