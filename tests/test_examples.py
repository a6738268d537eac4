"""The bundled examples run, and show what the README says they show."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_swarm_example_runs_and_its_audit_log_verifies() -> None:
    completed = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "swarm.py")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=ROOT,
    )
    assert completed.returncode == 0, completed.stderr
    lines = completed.stdout.splitlines()
    assert "lead      release-notes  loaded  (workspace; " in "\n".join(lines)
    assert "reviewer  release-notes  denied  (not_granted/not_granted)" in lines
    assert "clerk     code-review    denied  (not_granted/not_granted)" in lines
    # Before approval the workspace skill is listed by name only; after, with the
    # description a human has seen.
    catalogs = [line for line in lines if line.startswith("lead's catalog:")]
    assert "('release-notes', '')" in catalogs[0]
    assert "('release-notes', 'Write release notes" in catalogs[1]
    assert lines[-1] == "audit log: 11 records, intact=True"
    assert completed.stderr == ""


def test_the_agent_orchestrator_example_runs() -> None:
    completed = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "agent_orchestrator.py")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=ROOT,
    )
    assert completed.returncode == 0, completed.stderr
    lines = completed.stdout.splitlines()
    assert lines[:3] == [
        "without an approver: refused (denied)",
        (
            "approver: asked for devops-engineer: src/agents/devops-engineer.md, "
            "src/knowledge/container-baseline.md; not taken: ../../README.md (path_escape)"
        ),
        "agent: devops-engineer from src/agents/devops-engineer.md",
    ]
    assert "served: approved by example reviewer" in lines
    assert "again: approved by trust-store" in lines
    assert lines[-1] == "audit log: 8 records, intact=True"
    assert "knowledge: src/knowledge/container-baseline.md: read" in lines
    assert "knowledge: ../../README.md: refused (path_escape)" in lines
    assert "effective tools: ['Bash(git diff:*)', 'Grep', 'Read']" in lines
    assert "declared, not granted: ['Bash', 'Write']" in lines
    assert (
        "- NO-GO if a pipeline deploys without a passing test stage, or skips the image scan."
        in lines
    )
    assert "    <name>code-review</name>" in lines
    assert completed.stderr == ""


def test_the_swarm_examples_log_gives_an_audit_report(tmp_path: Path) -> None:
    log = tmp_path / "swarm.jsonl"
    subprocess.run(
        [sys.executable, str(ROOT / "examples" / "swarm.py"), "--keep-log", str(log)],
        capture_output=True,
        timeout=120,
        check=True,
        cwd=ROOT,
    )
    report = tmp_path / "report.html"
    completed = subprocess.run(
        [sys.executable, "-m", "skillguard", "audit", "report", str(log), "--output", str(report)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.stdout == f"intact: 11 records; report written to {report}\n"
    page = report.read_text()
    assert 'data-state="intact-unkeyed"' in page
    assert "Approvals (skills and agent files) (1)" in page
    assert "reviewer@example.org" in page
