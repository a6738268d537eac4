"""A host application fuzzing its own skillguard integration with ``skillguard.testing``.

``ToyHost`` stands for your application: it serves workspace skills to one agent. The
tests below write hostile workspaces and hostile SKILL.md files and check the one
promise a host needs: skillguard answers with a result or a ``SkillError``, never a crash.
Run it with ``pytest examples/test_host_fuzz.py`` after ``pip install 'skillguard[testing]'``.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings

import skillguard
from skillguard.testing import (
    Workspace,
    hostile_skill_files,
    hostile_workspaces,
    write_workspace,
)


def approve_everything(request: skillguard.ApprovalRequest) -> skillguard.Decision:
    """The most permissive human there is: the loader must still refuse what is unsafe."""
    del request
    return skillguard.Decision(approved=True, by="fuzz")


class ToyHost:
    """An application that lists the workspace's skills and loads each one it may."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace

    def prompt_and_contexts(self) -> tuple[str, list[str]]:
        found = skillguard.discover([self.workspace])
        policy = skillguard.AllowPolicy.from_mapping(
            {"agents": {"agent": {"skills": list(found.names()), "workspace": "approve"}}}
        )
        with skillguard.Loader(
            policy, workspace=[self.workspace], approver=approve_everything
        ) as loader:
            agent = loader.bind("agent")
            prompt = agent.catalog_xml()
            contexts = [c for c in (_context(agent, n) for n in found.names()) if c]
        return prompt, contexts


def _context(agent: skillguard.AgentSkills, name: str) -> str | None:
    """The activation text of *name*, or None when skillguard refuses it."""
    try:
        return agent.load(name).activation()
    except skillguard.SkillError:
        # A refused skill is an answer, not a crash: the host moves on.
        return None


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hostile_workspaces())
def test_host_never_crashes_on_a_hostile_workspace(tree: Workspace) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        workspace = Path(scratch) / "skills"
        workspace.mkdir()
        write_workspace(tree, workspace)
        prompt, contexts = ToyHost(workspace).prompt_and_contexts()
        # Nothing an attacker wrote reaches the prompt unapproved; loaded skills did parse.
        assert isinstance(prompt, str)
        assert all(context.startswith("<skill_content") for context in contexts)


@settings(max_examples=50, deadline=None)
@given(hostile_skill_files())
def test_host_parses_or_refuses_every_document(raw: bytes) -> None:
    try:
        skill = skillguard.parse_skill(raw)
    except skillguard.MalformedSkillError:
        return
    assert skill.name
