"""Several audit logs verified together against one log of the same total size.

Usage::

    python benchmarks/bench_auditset.py [--megabytes M] [--logs N] [--rounds R]

Writes *N* valid unkeyed chains (distinct log ids) of about *M* / *N* MB each, and one
chain of about *M* MB. In fresh child processes (so that ``ru_maxrss`` is each one's
own) it runs ``summarize_logs`` over the *N* files and ``summarize_log`` over the one,
through the command line's path, and prints MB/s, the peak memory against the child's
baseline (interpreter plus skillguard, nothing read), and the ratios; the best of *R*
rounds counts. Memory should stay flat: a set keeps counts, not records.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import resource
import subprocess
import sys
import tempfile
import time
from hashlib import sha256
from pathlib import Path
from typing import Any

from skillguard._audit.logset import summarize_logs
from skillguard._audit.record import MAX_RECORD_BYTES, canonical
from skillguard._audit.summary import summarize_log
from skillguard._fs.operator import stream_lines


def write_log(path: Path, size: int, log_id: str) -> int:
    """A valid unkeyed chain of about *size* bytes; returns its record count."""
    previous, count, written = "0" * 64, 0, 0
    with path.open("wb") as out:
        while written < size:
            if count == 0:
                record: dict[str, object] = {
                    "time": "2026-11-30T12:00:00Z",
                    "event": "log_created",
                    "log_id": log_id,
                    "keyed": False,
                }
            else:
                deny = count % 3 == 0
                record = {
                    "time": f"2026-11-30T{count // 3600 % 24:02d}:{count // 60 % 60:02d}:"
                    f"{count % 60:02d}Z",
                    "event": "load_denied" if deny else "load_granted",
                    "decision": "deny" if deny else "allow",
                    "agent": f"agent-{count % 40}",
                    "skill": f"skill-{count % 3000}",
                    "reason": "not in the set",
                }
            count += 1
            record.update(seq=count, prev_hash=previous)
            previous = sha256(canonical(record)).hexdigest()
            record["hash"] = previous
            line = canonical(record) + b"\n"
            out.write(line)
            written += len(line)
    return count


def child(task: str, paths: list[str]) -> None:
    start = time.perf_counter()
    records = 0
    if task == "set":
        result, _, _ = summarize_logs(paths)
        assert result.intact, result
        records = result.records
    elif task == "one":
        with contextlib.closing(stream_lines(paths[0], max_line=MAX_RECORD_BYTES)) as lines:
            verification = summarize_log(lines)[0]
        assert verification.intact, verification
        records = verification.records
    elapsed = time.perf_counter() - start
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"seconds": elapsed, "records": records, "peak_kib": peak_kib}))


def run_child(task: str, paths: list[Path]) -> dict[str, Any]:
    completed = subprocess.run(  # noqa: S603 - this script, fixed arguments
        [sys.executable, __file__, "--child", task, *map(str, paths)],
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, Any] = json.loads(completed.stdout)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=int, default=100)
    parser.add_argument("--logs", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], args.child[1:])
        return
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        total = args.megabytes * 1_000_000
        many = [folder / f"host-{index}.jsonl" for index in range(args.logs)]
        records = {
            "set": sum(
                write_log(path, total // args.logs, f"{index:032x}")
                for index, path in enumerate(many)
            ),
            "one": write_log(folder / "one.jsonl", total, "f" * 32),
        }
        paths = {"set": many, "one": [folder / "one.jsonl"]}
        baseline = min(run_child("baseline", many[:1])["peak_kib"] for _ in range(args.rounds))
        print(
            f"{args.megabytes} MB: {args.logs} logs ({records['set']:,} records) "
            f"against one log ({records['one']:,} records), best of {args.rounds}"
        )
        print(f"  child baseline, interpreter + skillguard: {baseline / 1024:.0f} MiB peak RSS")
        best: dict[str, dict[str, Any]] = {}
        for _ in range(args.rounds):
            for task in ("set", "one"):
                result = run_child(task, paths[task])
                assert result["records"] == records[task], result
                if task not in best or result["seconds"] < best[task]["seconds"]:
                    best[task] = result
        for task, result in best.items():
            print(
                f"  {task:<4} {args.megabytes / result['seconds']:>7.1f} MB/s  "
                f"peak {result['peak_kib'] / 1024:>5.0f} MiB "
                f"(+{(result['peak_kib'] - baseline) / 1024:.0f} over baseline)"
            )
        speed = best["set"]["seconds"] / best["one"]["seconds"]
        memory = best["set"]["peak_kib"] / best["one"]["peak_kib"]
        print(f"  set / one: {speed:.2f}x the time, {memory:.2f}x the peak memory")


if __name__ == "__main__":
    main()
