"""What approving the whole skill folder costs, beside approving SKILL.md alone.

    python benchmarks/bench_approval.py [--root DIR] [--rounds N]

For every skill folder under ROOT (default: a generated set), in one process, round by
round: ``before`` reads and parses ``SKILL.md`` through ``SafeRoot`` (what an approval
covered until the snapshot), ``after`` builds the approval snapshot (``SKILL.md``
parsed, every other file read once and hashed, the manifest and its digest), and
``load`` is a full ``Loader.load`` with an approver that says yes (snapshot, request,
three audit events to structlog); ``aload`` is the same through ``aload``, one skill
after another, with that approver as a sync callable (asked in a thread of its own)
and as a coroutine function. It prints skills per second, MB hashed per second, the
ratio after/before, the aload ratios, and what one pending approval is counted at
(``Limits``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path

import skillguard
from skillguard._skills.approval import Approver, AsyncApprover, make_request, request_cost
from skillguard._skills.discover import source_folder
from skillguard._skills.snapshot import take_snapshot


def generated(root: Path, count: int = 200) -> Path:
    """*count* skill folders, each with a body, two scripts and a reference."""
    for index in range(count):
        folder = root / f"skill-{index:04d}"
        (folder / "scripts").mkdir(parents=True)
        (folder / "references").mkdir()
        (folder / "SKILL.md").write_text(
            f"---\nname: skill-{index:04d}\ndescription: Generated skill {index}.\n---\n"
            + "Do the thing carefully.\n" * 80
        )
        (folder / "scripts" / "run.py").write_text("print('x')\n" * 200)
        (folder / "scripts" / "util.sh").write_text("echo x\n" * 300)
        (folder / "references" / "guide.md").write_text("# Guide\n" + "Text. " * 2000)
    return root


def approvers() -> dict[str, Approver | AsyncApprover]:
    def sync(request: skillguard.ApprovalRequest) -> skillguard.Decision:
        del request
        return skillguard.Decision(approved=True, by="bench")

    async def async_(request: skillguard.ApprovalRequest) -> skillguard.Decision:
        return sync(request)

    return {"sync": sync, "async": async_}


async def aload_all(handle: skillguard.AgentSkills, names: list[str]) -> None:
    for name in names:
        await handle.aload(name)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", type=Path)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--profile", choices=("strict", "compat"), default="compat")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        root = args.root or generated(Path(temporary) / "skills")
        roots = skillguard.SkillRoots([root], profile=args.profile)
        found = roots.discover()
        names = [meta.name for meta in found.skills]
        metas = {meta.name: meta for meta in found.skills}
        policy = skillguard.AllowPolicy.from_mapping(
            {"agents": {"a": {"skills": names, "workspace": "approve"}}}
        )
        total_bytes = 0
        for name in names:
            snap = take_snapshot(
                *roots.locate(name),
                name=name,
                folder=source_folder(metas[name].root, metas[name].location),
                limits=roots.limits,
                profile=args.profile,
            )
            total_bytes += snap.manifest.total_bytes
        before: list[float] = []
        after: list[float] = []
        loads: list[float] = []
        aloads: dict[str, list[float]] = {"sync": [], "async": []}
        costs: list[int] = []
        for _ in range(args.rounds):
            start = time.perf_counter()
            for name in names:
                roots.load(name)
            before.append(time.perf_counter() - start)
            start = time.perf_counter()
            for name in names:
                meta = metas[name]
                snap = take_snapshot(
                    *roots.locate(name),
                    name=name,
                    folder=source_folder(meta.root, meta.location),
                    limits=roots.limits,
                    profile=args.profile,
                )
                costs.append(snap.memory_cost() + request_cost(make_request("a", snap, "r", "")))
            after.append(time.perf_counter() - start)
            loader = skillguard.Loader(
                policy,
                workspace=[root],
                profile=args.profile,
                approver=lambda _: skillguard.Decision(approved=True, by="bench"),
            )
            handle = loader.bind("a")
            start = time.perf_counter()
            for name in names:
                handle.load(name)
            loads.append(time.perf_counter() - start)
            loader.close()
            for kind, approver in approvers().items():
                loader = skillguard.Loader(
                    policy, workspace=[root], profile=args.profile, approver=approver
                )
                start = time.perf_counter()
                asyncio.run(aload_all(loader.bind("a"), names))
                aloads[kind].append(time.perf_counter() - start)
                loader.close()
        roots.close()
    count = len(names)
    best_before, best_after, best_load = min(before), min(after), min(loads)
    print(f"{count} skills, {total_bytes / 1e6:.1f} MB in their folders ({os.fspath(root)})")
    print(f"before  SKILL.md only      {count / best_before:9.0f} skills/s")
    print(
        f"after   whole folder       {count / best_after:9.0f} skills/s"
        f"  ({total_bytes / 1e6 / best_after:.0f} MB/s hashed)"
        f"  after/before {best_before / best_after:.2f}x"
    )
    print(f"load    Loader.load, yes   {count / best_load:9.0f} skills/s")
    best_sync, best_async = min(aloads["sync"]), min(aloads["async"])
    print(
        f"aload   sync approver      {count / best_sync:9.0f} skills/s"
        f"  (a thread per call; sync/async {best_async / best_sync:.2f}x,"
        f" sync/load {best_load / best_sync:.2f}x)"
    )
    print(f"aload   async approver     {count / best_async:9.0f} skills/s")
    print(
        f"a pending approval is counted at {statistics.median(costs) / 1024:.1f} KiB "
        f"(median; max {max(costs) / 1024:.1f} KiB)"
    )


if __name__ == "__main__":
    main()
