"""The audit report on large logs: speed, peak memory and page size.

Usage::

    python benchmarks/bench_report.py [--megabytes M] [--rounds R]

Two logs of about *M* MB each, forged as a valid unkeyed chain:

* **swarm**: short records as skillguard writes them, from 40 agents (more than the
  timeline's lanes) and 3,000 skills (more than a count table keeps), mixing grants,
  approvals, denials, containment and shadowing refusals;
* **hostile**: records whose reason is 26 KB of markup and bidi overrides (a forged log).

For each, ``audit summarize`` and ``audit report`` run in fresh child processes (so that
``ru_maxrss`` is each one's own), through the command line's path: ``stream_lines``
into ``summarize_log`` / ``render_audit_report``. Prints MB/s, the peak memory against
the child's baseline (interpreter plus skillguard, nothing read), the page's size, and
the report/summarize ratios; the best of *R* rounds counts.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from skillguard._audit.record import MAX_RECORD_BYTES, canonical
from skillguard._audit.report import render_audit_report
from skillguard._audit.summary import summarize_log
from skillguard._fs.operator import stream_lines

_GENESIS = "0" * 64
_KINDS = (
    {"event": "load_granted", "decision": "allow", "source": "embedded"},
    {"event": "approval_granted", "decision": "allow", "approver": "alice", "scope": "once"},
    {"event": "load_denied", "decision": "deny", "code": "not_granted"},
    {"event": "containment_violation", "decision": "deny", "code": "symlink"},
    {"event": "shadowing_refused", "decision": "deny", "code": "embedded_wins"},
    {"event": "load_denied", "decision": "deny", "code": "not_granted"},
)


def write_log(path: Path, megabytes: int, *, hostile: bool) -> int:
    """A valid unkeyed chain of about *megabytes* MB; returns its record count."""
    # About 26 KB once JSON-escaped: well under the 64 KiB line cap.
    reason = "<script>alert(1)</script>\u202e" * 800 if hostile else "not in the set"
    previous = _GENESIS
    count = 0
    size = 0
    with path.open("wb") as out:
        while size < megabytes * 1_000_000:
            if count == 0:
                record: dict[str, object] = {
                    "time": "2026-11-30T12:00:00Z",
                    "event": "log_created",
                    "log_id": "0" * 32,
                    "keyed": False,
                }
            else:
                record = {
                    **_KINDS[count % len(_KINDS)],
                    "time": f"2026-11-30T{count // 3600 % 24:02d}:{count // 60 % 60:02d}:"
                    f"{count % 60:02d}Z",
                    "agent": f"agent-{count % 40}",
                    "skill": f"skill-{count % 3000}",
                    "reason": reason,
                    "digest": hashlib.sha256(str(count).encode()).hexdigest(),
                }
            count += 1
            record.update(seq=count, prev_hash=previous)
            previous = hashlib.sha256(canonical(record)).hexdigest()
            record["hash"] = previous
            line = canonical(record) + b"\n"
            out.write(line)
            size += len(line)
    return count


def child(task: str, path: str) -> None:
    start = time.perf_counter()
    records = 0
    page_bytes = 0
    if task != "baseline":
        with contextlib.closing(stream_lines(path, max_line=MAX_RECORD_BYTES)) as lines:
            if task == "summarize":
                result = summarize_log(lines)[0]
            else:
                result, page = render_audit_report(lines)
                page_bytes = len(page.encode())
        assert result.intact, result
        records = result.records
    elapsed = time.perf_counter() - start
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(
        json.dumps(
            {"seconds": elapsed, "records": records, "peak_kib": peak_kib, "page": page_bytes}
        )
    )


def run_child(task: str, path: Path) -> dict[str, Any]:
    completed = subprocess.run(  # noqa: S603 - this script, fixed arguments
        [sys.executable, __file__, "--child", task, str(path)],
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, Any] = json.loads(completed.stdout)
    return result


def bench(folder: Path, megabytes: int, rounds: int, *, hostile: bool) -> None:
    path = folder / ("hostile.jsonl" if hostile else "swarm.jsonl")
    count = write_log(path, megabytes, hostile=hostile)
    size_mb = path.stat().st_size / 1_000_000
    baseline = min(run_child("baseline", path)["peak_kib"] for _ in range(rounds))
    name = "hostile" if hostile else "swarm"
    print(f"\n{name} log: {size_mb:.0f} MB, {count:,} records, best of {rounds}")
    print(f"  child baseline, interpreter + skillguard: {baseline / 1024:.0f} MiB peak RSS")
    best: dict[str, dict[str, Any]] = {}
    for _ in range(rounds):
        for task in ("summarize", "report"):
            result = run_child(task, path)
            assert result["records"] == count, result
            if task not in best or result["seconds"] < best[task]["seconds"]:
                best[task] = result
    for task, result in best.items():
        page = f"  page {result['page'] / 1_000_000:.2f} MB" if task == "report" else ""
        print(
            f"  {task:<9} {size_mb / result['seconds']:>7.1f} MB/s  "
            f"peak {result['peak_kib'] / 1024:>5.0f} MiB "
            f"(+{(result['peak_kib'] - baseline) / 1024:.0f} over baseline){page}"
        )
    speed = best["report"]["seconds"] / best["summarize"]["seconds"]
    memory = best["report"]["peak_kib"] / best["summarize"]["peak_kib"]
    print(f"  report / summarize: {speed:.2f}x the time, {memory:.2f}x the peak memory")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--child", nargs=2, metavar=("TASK", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    with tempfile.TemporaryDirectory() as tmp:
        bench(Path(tmp), args.megabytes, args.rounds, hostile=False)
        bench(Path(tmp), args.megabytes, args.rounds, hostile=True)


if __name__ == "__main__":
    main()
