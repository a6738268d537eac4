"""The ``skill`` tool over MCP stdio, against ``handle.load`` in process, in one run.

Usage::

    python benchmarks/bench_mcp.py [--calls N]

Both sides serve the same embedded skill to the same agent with an audit log of their
own: the in-process side calls ``handle.load(name).activation()``; the MCP side starts
``skillguard mcp`` as a subprocess and calls the ``skill`` tool with the SDK's client
session over stdio, one call at a time, after a warm-up. It prints calls per second,
p50 and p99 latency of each, and the difference: the protocol's cost (JSON-RPC framing,
the pipe, pydantic validation on both ends). Goal: p99 of an MCP call under 5 ms on a
warm server.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

POLICY = "agents:\n  bench:\n    skills: [pdf-tools]\n"
SKILL = "---\nname: pdf-tools\ndescription: Work with PDF files.\n---\n" + (
    "Use the PDF tools for every PDF task.\n" * 40
)
WARMUP = 50


def _setup(root: Path) -> dict[str, str]:
    (root / "policy.yaml").write_text(POLICY)
    folder = root / "embedded" / "pdf-tools"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(SKILL)
    return {"policy": str(root / "policy.yaml"), "embedded": str(root / "embedded")}


def _summary(label: str, seconds: list[float]) -> tuple[float, float]:
    ordered = sorted(seconds)
    p50 = statistics.median(ordered) * 1000
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000
    rate = len(seconds) / sum(seconds)
    print(f"{label:<22} {rate:>10.0f} calls/s   p50 {p50:7.3f} ms   p99 {p99:7.3f} ms")
    return p50, p99


def in_process(paths: dict[str, str], root: Path, calls: int) -> list[float]:
    from skillguard import AllowPolicy, EmbeddedSkills, Loader
    from skillguard.audit import AuditLog

    loader = Loader(
        AllowPolicy.from_file(paths["policy"]),
        embedded=EmbeddedSkills.from_directory(paths["embedded"]),
        audit=AuditLog(root / "in-process.jsonl"),
    )
    handle = loader.bind("bench")
    for _ in range(WARMUP):
        handle.load("pdf-tools").activation()
    seconds = []
    for _ in range(calls):
        start = time.perf_counter()
        handle.load("pdf-tools").activation()
        seconds.append(time.perf_counter() - start)
    return seconds


def over_stdio(paths: dict[str, str], root: Path, calls: int) -> list[float]:
    import anyio
    import mcp_types as types
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "skillguard",
            "mcp",
            "--policy",
            paths["policy"],
            "--agent",
            "bench",
            "--embedded",
            paths["embedded"],
            "--audit-log",
            str(root / "mcp.jsonl"),
        ],
        env={**os.environ, "SKILLGUARD_USER_SKILLS": ""},
    )
    seconds: list[float] = []

    async def run() -> None:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            for _ in range(WARMUP):
                await session.call_tool("skill", {"name": "pdf-tools"})
            for _ in range(calls):
                start = time.perf_counter()
                result = await session.call_tool("skill", {"name": "pdf-tools"})
                seconds.append(time.perf_counter() - start)
                assert isinstance(result, types.CallToolResult)
                assert not result.is_error

    anyio.run(run)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000, help="timed calls per side")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        paths = _setup(root)
        local = in_process(paths, root, args.calls)
        remote = over_stdio(paths, root, args.calls)
    print(f"{args.calls} calls of the skill tool, each with its audit record, after {WARMUP}")
    _, local_p99 = _summary("handle.load in process", local)
    _, remote_p99 = _summary("skill over MCP stdio", remote)
    print(f"protocol overhead at p99: {remote_p99 - local_p99:.3f} ms")
    print(f"goal: p99 over MCP under 5 ms: {'met' if remote_p99 < 5 else 'NOT met'}")


if __name__ == "__main__":
    main()
