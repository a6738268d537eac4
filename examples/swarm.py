"""A small asyncio swarm on skillguard: three agents, three grants, one approval.

Run it from the repository root:  python examples/swarm.py [--keep-log FILE]

(``--keep-log`` copies the audit log to FILE, for ``skillguard audit report``.)

* ``lead`` may load every skill, including the workspace skill ``release-notes``,
  which an async approver (standing in for a human reviewing in a UI) approves after
  looking at the request. The approval covers the whole skill folder: the request
  carries a digest over every file, and everything served afterwards (body, files,
  tools) is that snapshot. Until it is approved, lead's catalog lists it by name only.
* ``reviewer`` and ``clerk`` are sub-agents with narrower grants; asking for a skill
  outside their set is denied, and so is every workspace skill.
* Every decision goes to a hash-chained audit log, verified at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import shutil
import sys
import tempfile
from pathlib import Path

import structlog

import skillguard
import skillguard.audit

HERE = Path(__file__).resolve().parent / "swarm"


async def human_reviewer(request: skillguard.ApprovalRequest) -> skillguard.Decision:
    """An async approver: a real one would show the request in a UI and wait."""
    await asyncio.sleep(0)  # yield to the event loop, as waiting for a human would
    files = ", ".join(path for path, _, _ in request.files)
    print(
        f"  [approver] {request.agent} asks for {request.skill}: "
        f"digest={request.digest[:12]} files=[{files}] grants={list(request.grants)}"
    )
    looks_fine = "release notes" in request.preview.lower()
    return skillguard.Decision(approved=looks_fine, by="reviewer@example.org")


async def agent_turn(handle: skillguard.AgentSkills, wanted: str) -> str:
    try:
        loaded = await handle.aload(wanted)
    except skillguard.SkillError as error:
        return f"{handle.agent:<9} {wanted:<14} denied  ({error.kind}/{error.code})"
    tools = sorted(handle.effective_tools(loaded))
    return f"{handle.agent:<9} {wanted:<14} loaded  ({loaded.source}; tools {tools})"


async def run_swarm(loader: skillguard.Loader) -> None:
    lead, reviewer, clerk = (loader.bind(a) for a in ("lead", "reviewer", "clerk"))
    print("lead's catalog:", [(m.name, m.description[:24]) for m in lead.catalog()])
    turns = [
        agent_turn(lead, "release-notes"),
        agent_turn(lead, "pdf-tools"),
        agent_turn(reviewer, "code-review"),
        agent_turn(reviewer, "release-notes"),
        agent_turn(clerk, "pdf-tools"),
        agent_turn(clerk, "code-review"),
    ]
    for line in await asyncio.gather(*turns):
        print(line)
    # Approved now: the catalog shows the description a human has seen.
    print("lead's catalog:", [(m.name, m.description[:24]) for m in lead.catalog()])


def main() -> int:
    parser = argparse.ArgumentParser(description="A small asyncio swarm on skillguard.")
    parser.add_argument("--keep-log", metavar="FILE", help="copy the audit log here")
    args = parser.parse_args()
    # The host decides where audit events go: here they are in the hash-chained log,
    # so the terminal shows only warnings. A real swarm sends them to its log pipeline.
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    policy = skillguard.AllowPolicy.from_file(HERE / "policy.yaml")
    with tempfile.TemporaryDirectory() as tmp:
        log_path = Path(tmp) / "audit.jsonl"
        loader = skillguard.Loader(
            policy,
            embedded=skillguard.EmbeddedSkills.from_directory(HERE / "embedded"),
            workspace=skillguard.default_roots(HERE / "project", environ={}),
            approver=human_reviewer,
            audit=skillguard.audit.AuditLog(str(log_path)),
        )
        asyncio.run(run_swarm(loader))
        with log_path.open("rb") as lines:  # split on newline only, as written
            verdict = skillguard.audit.verify_records(lines)
        if args.keep_log:
            shutil.copyfile(log_path, args.keep_log)
    print(f"audit log: {verdict.records} records, intact={verdict.intact}")
    return 0 if verdict.intact else 1


if __name__ == "__main__":
    sys.exit(main())
