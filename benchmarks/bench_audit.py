"""Audit log throughput and memory: appends, ``audit verify``, ``summarize`` and ``report``.

Usage::

    python benchmarks/bench_audit.py [--appends N] [--megabytes M] [--rounds R]
        [--distinct N,N,...] [--newlines MIB]

Three measurements, each against the way skillguard did it before (kept here, verbatim
in substance, as the ``before`` contestant), interleaved round by round; the best round
counts:

* **append**: records/s of ``AuditLog.write`` on a log already over 1 MiB (the steady
  state of a long-running host). ``before`` re-read up to 1 MiB of the file's tail under
  the lock on every write to find the chain head; ``after`` keeps the head in memory
  and checks ``(st_dev, st_ino, st_size)`` with one ``fstat``.
* **verify** and **summarize**: MB/s and peak memory (``ru_maxrss`` of a fresh child
  process, so each figure is that contestant's alone) over a log of about *M* MB.
  ``before`` read the whole file, decoded it and split it with ``str.splitlines()``;
  ``after`` is the command line's own path: ``stream_lines`` (1 MiB chunks, 64 KiB line
  cap) into ``verify_records`` / ``summarize_log``. The child's baseline (interpreter
  plus skillguard, nothing read) is printed too: ``after`` should sit on it whatever
  the file's size.

* **distinct names**: peak memory (and seconds) of ``verify``, ``summarize`` and
  ``report``, side by side, in fresh child processes, over logs of 10,000, 100,000 and
  1,000,000 records (``--distinct``) in which every record names its own agent, skill,
  event and decision: the worst case for the count tables. ``summarize (before)`` is the
  summary whose tables were unbounded ``Counter`` objects, one entry per distinct name;
  ``summarize`` keeps at most ``MAX_COUNTED_NAMES`` per table (``_auditcount``). There
  is no ``audit export`` command yet: when there is, it belongs in this table.
* **a log that breaks early**: seconds of ``verify`` and ``report`` over a file of
  ``--newlines`` MiB of newlines (tampered at line 1). ``report (before)`` counted every
  line after the bad one, a line at a time; ``report`` reads nothing after it, as
  ``verify`` does.

Prints each figure and the after/before ratios.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import hmac
import json
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import skillguard
import skillguard.audit
from skillguard._audit.export import export_records
from skillguard._audit.record import _HEADER_EVENT, MAX_RECORD_BYTES, canonical
from skillguard._audit.report import render_audit_report
from skillguard._audit.summary import summarize_log, summarize_records
from skillguard._audit.verify import Verification, _checker, verify_records
from skillguard._fs.operator import stream_lines
from skillguard._fs.write import FileLock

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

_GENESIS = "0" * 64


# -- before: the algorithms this benchmark compares against ---------------------------


class RereadingLog:
    """The writer as it was: under the lock, read up to 1 MiB of the tail, parse the
    last line for (seq, hash), then append."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = FileLock(str(path))

    def _tail(self) -> tuple[int, str]:
        with self.path.open("rb") as file:
            file.seek(max(0, self.path.stat().st_size - (1 << 20)))
            data = file.read()
        lines = [line for line in data.split(b"\n") if line.strip()]
        last = json.loads(lines[-1])
        return int(last["seq"]), str(last["hash"])

    def write(self, fields: Mapping[str, object]) -> None:
        with self._lock:
            seq, prev = self._tail()
            record: dict[str, object] = dict(fields)
            record["seq"] = seq + 1
            record["prev_hash"] = prev
            record["hash"] = hashlib.sha256(canonical(record)).hexdigest()
            with self.path.open("ab") as file:
                file.write(canonical(record) + b"\n")


def verify_before(lines: list[str]) -> int:
    """The old ``verify_records``: json.loads per line, canonical compare, hash, chain."""
    prev = _GENESIS
    number = 0
    for number, line in enumerate(lines, start=1):
        record = json.loads(line)
        if canonical(record).decode() != line:
            return -number
        claimed = record.pop("hash")
        if not hmac.compare_digest(hashlib.sha256(canonical(record)).hexdigest(), claimed):
            return -number
        if record.get("prev_hash") != prev or record.get("seq") != number:
            return -number
        prev = claimed
    return number


def summarize_unbounded(lines: Iterable[bytes]) -> int:
    """The summary as it was before its tables were bounded: the chain checked as it
    counts, one ``Counter`` entry per distinct decision, event, agent and skill."""
    checker = _checker([], None, None, None)
    tables: dict[str, Counter[str]] = {
        name: Counter() for name in ("decision", "event", "agent", "skill")
    }
    total = 0
    for line in lines:
        record = checker.feed(line)
        if isinstance(record, Verification):
            break
        if record.get("event") == _HEADER_EVENT:
            continue
        total += 1
        tables["event"][str(record.get("event"))] += 1
        for name in ("decision", "agent", "skill"):
            if record.get(name):
                tables[name][str(record[name])] += 1
    # As the summary's result was: every table copied into a dict for the output.
    shown = {name: dict(table) for name, table in tables.items()}
    assert len(shown) == len(tables)
    return total


def report_counting_the_rest(lines: Iterable[bytes]) -> int:
    """The report as it was: after the first bad line, every other line was counted."""
    iterator = iter(lines)
    result, _ = render_audit_report(iterator)
    return result.records + sum(1 for _ in iterator)


# -- the children: one measurement each, in a fresh process ---------------------------


def child(task: str, path: str) -> None:
    start = time.perf_counter()
    records = 0
    if task == "baseline":
        pass
    elif task == "verify-before":
        records = verify_before(Path(path).read_bytes().decode("utf-8", "replace").splitlines())
    elif task == "summarize-before":
        text = Path(path).read_bytes().decode("utf-8", "replace")
        parsed = [json.loads(line) for line in text.splitlines()]
        records = summarize_records([r for r in parsed if isinstance(r, dict)])["records"]
    else:
        with contextlib.closing(stream_lines(path, max_line=MAX_RECORD_BYTES)) as lines:
            if task == "verify-after":
                records = verify_records(lines).records
            elif task == "summarize-unbounded":
                records = summarize_unbounded(lines)
            elif task == "report-after":
                records = render_audit_report(lines)[0].records
            elif task == "report-counting":
                records = report_counting_the_rest(lines)
            elif task in {"export-jsonl", "export-ocsf"}:
                written = [0]

                def count(text: str) -> None:
                    written[0] += text == "\n"

                export_records(lines, count, output=task.removeprefix("export-"))
                records = written[0]
            else:
                records = summarize_log(lines)[1]["records"]
    elapsed = time.perf_counter() - start
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"seconds": elapsed, "records": records, "peak_kib": peak_kib}))


def run_child(task: str, path: Path) -> dict[str, Any]:
    completed = subprocess.run(  # noqa: S603 - this script, fixed arguments
        [sys.executable, __file__, "--child", task, str(path)],
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, Any] = json.loads(completed.stdout)
    return result


# -- the parent -----------------------------------------------------------------------


def fields(index: int) -> dict[str, object]:
    return {
        "time": "2026-11-30T12:00:00Z",
        "event": "load_denied" if index % 3 else "load_granted",
        "agent": f"agent-{index % 7}",
        "skill": f"skill-{index % 101}",
        "source": "workspace",
        "decision": "deny" if index % 3 else "allow",
        "code": "not_granted" if index % 3 else None,
        "reason": "not in the set" if index % 3 else None,
        "sha256": hashlib.sha256(str(index).encode()).hexdigest(),
        "version": skillguard.__version__,
    }


def bench_appends(folder: Path, count: int, rounds: int) -> None:
    prefill = 4000  # about 1.6 MB: the old writer then reads a full 1 MiB per record
    contestants: dict[str, Callable[[Path], Any]] = {
        "before": RereadingLog,
        "after": skillguard.audit.AuditLog,
    }
    best = dict.fromkeys(contestants, 0.0)
    for round_number in range(rounds):
        for name, make in contestants.items():
            path = folder / f"append-{name}-{round_number}.jsonl"
            seed = skillguard.audit.AuditLog(path)
            for index in range(prefill):
                seed.write(fields(index))
            log = make(path)
            start = time.perf_counter()
            for index in range(count):
                log.write(fields(index))
            rate = count / (time.perf_counter() - start)
            best[name] = max(best[name], rate)
            result = verify_records(path.read_bytes().splitlines())
            assert result.intact, result
            assert result.records == 1 + prefill + count
    print(f"append (log over 1 MiB, {count} records, best of {rounds}):")
    for name, rate in best.items():
        print(f"  {name:<7} {rate:>10,.0f} records/s")
    print(f"  after / before: {best['after'] / best['before']:.1f}x")


def bench_reads(folder: Path, megabytes: int, rounds: int) -> None:
    path = folder / "big.jsonl"
    log = skillguard.audit.AuditLog(path)
    index = 0
    while path.stat().st_size < megabytes * 1_000_000:
        for _ in range(1000):
            log.write(fields(index))
            index += 1
    size_mb = path.stat().st_size / 1_000_000
    baseline = min(run_child("baseline", path)["peak_kib"] for _ in range(rounds))
    print(f"\nverify and summarize ({size_mb:.0f} MB, {index + 1:,} records, best of {rounds};")
    print(f"  child baseline, interpreter + skillguard: {baseline / 1024:.0f} MiB peak RSS):")
    for action in ("verify", "summarize"):
        best: dict[str, dict[str, Any]] = {}
        for _ in range(rounds):
            for when in ("before", "after"):
                result = run_child(f"{action}-{when}", path)
                assert result["records"] in {index + 1, index}, result  # summary: no header
                if when not in best or result["seconds"] < best[when]["seconds"]:
                    best[when] = {**result, "peak_kib": result["peak_kib"]}
        for when, result in best.items():
            print(
                f"  {action:<9} {when:<7} {size_mb / result['seconds']:>7.1f} MB/s  "
                f"peak {result['peak_kib'] / 1024:>7.0f} MiB"
            )
        speed = best["before"]["seconds"] / best["after"]["seconds"]
        memory = best["after"]["peak_kib"] / best["before"]["peak_kib"]
        print(f"  {action:<9} after / before: {speed:.2f}x speed, {memory:.2f}x peak memory")


def write_distinct(path: Path, count: int) -> None:
    """A valid unkeyed chain of a header and *count* records, each naming its own
    agent, skill, event and decision."""
    previous = _GENESIS
    with path.open("wb") as out:
        for seq in range(1, count + 2):
            if seq == 1:
                record: dict[str, object] = {
                    "time": "2026-11-30T12:00:00Z",
                    "event": "log_created",
                    "log_id": "0" * 32,
                    "keyed": False,
                    "version": skillguard.__version__,
                }
            else:
                record = {
                    "time": "2026-11-30T12:00:00Z",
                    "event": f"event-{seq}",
                    "agent": f"agent-{seq}",
                    "skill": f"skill-{seq}",
                    "decision": f"decision-{seq}",
                    "reason": "a name of its own in every table",
                    "version": skillguard.__version__,
                }
            record["seq"] = seq
            record["prev_hash"] = previous
            record["hash"] = previous = hashlib.sha256(canonical(record)).hexdigest()
            out.write(canonical(record) + b"\n")


def bench_distinct(folder: Path, counts: list[int]) -> None:
    tasks = (
        ("verify", "verify-after"),
        ("summarize (before)", "summarize-unbounded"),
        ("summarize", "summarize-after"),
        ("report", "report-after"),
        ("export", "export-jsonl"),
        ("export --format ocsf", "export-ocsf"),
    )
    baseline = run_child("baseline", folder)["peak_kib"]
    print("\npeak memory over logs whose every record names its own agent, skill, event")
    print(f"and decision (child baseline {baseline / 1024:.0f} MiB):")
    print(f"  {'records':>9}  " + "  ".join(f"{name:>20}" for name, _ in tasks))
    for count in counts:
        path = folder / f"distinct-{count}.jsonl"
        write_distinct(path, count)
        cells = []
        for _, task in tasks:
            result = run_child(task, path)
            assert result["records"] in {count, count + 1}, result
            cells.append(f"{result['peak_kib'] / 1024:>6.0f} MiB {result['seconds']:>7.1f} s")
        print(f"  {count:>9,}  " + "  ".join(f"{cell:>20}" for cell in cells))
        path.unlink()


def bench_newlines(folder: Path, mebibytes: int, rounds: int) -> None:
    path = folder / "newlines.jsonl"
    path.write_bytes(b"\n" * (mebibytes << 20))
    print(f"\na log that breaks at line 1: {mebibytes} MiB of newlines (best of {rounds}):")
    for name, task in (
        ("verify", "verify-after"),
        ("report (before)", "report-counting"),
        ("report", "report-after"),
        ("export", "export-jsonl"),
        ("export --format ocsf", "export-ocsf"),
    ):
        seconds = min(run_child(task, path)["seconds"] for _ in range(rounds))
        print(f"  {name:<16} {seconds:>8.3f} s")
    path.unlink()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--appends", type=int, default=5000)
    parser.add_argument("--megabytes", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--distinct",
        default="10000,100000,1000000",
        help="record counts of the distinct-names logs, comma-separated (empty: none)",
    )
    parser.add_argument("--newlines", type=int, default=10, help="MiB of newlines (0: none)")
    parser.add_argument(
        "--only", choices=("appends", "reads", "distinct", "newlines"), help="one measurement"
    )
    parser.add_argument("--child", nargs=2, metavar=("TASK", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    with tempfile.TemporaryDirectory() as tmp:
        if args.only in {None, "appends"}:
            bench_appends(Path(tmp), args.appends, args.rounds)
        if args.only in {None, "reads"}:
            bench_reads(Path(tmp), args.megabytes, args.rounds)
        counts = [int(count) for count in args.distinct.split(",") if count]
        if args.only in {None, "distinct"} and counts:
            bench_distinct(Path(tmp), counts)
        if args.only in {None, "newlines"} and args.newlines:
            bench_newlines(Path(tmp), args.newlines, args.rounds)


if __name__ == "__main__":
    main()
