"""An orchestrator on skillguard: an agent's context through the approval gate, its
skills, its prompt.

Run it from the repository root:  python examples/agent_orchestrator.py

* The agent file ``examples/agents/src/agents/devops-engineer.md`` is in the
  repository, so it is the workspace's text: the loader's gate serves it only once a
  human approved the exact snapshot (the agent file and every knowledge file), or a
  trust store pinned it. Without an approver the answer is ``denied``.
* Its ``core_knowledge`` directives are read one by one, contained in the repository:
  the one that points outside it is refused on its own (the approver sees that), and
  the others are served from the approved snapshot.
* Its ``tools`` is a declaration: the effective tools are the declared tools narrowed
  by the policy grant, and the declared tools the grant does not cover are reported.
* The system prompt is built from the persona, the rules, the approved knowledge and
  the catalog of the skills the policy lets this agent load.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import skillguard
import skillguard.agents
import skillguard.audit

ROOT = Path(__file__).resolve().parent
REPO = ROOT / "agents"


def system_prompt(served: skillguard.agents.ServedAgentContext, catalog: str) -> str:
    envelope = served.envelope()  # every string in it shows hidden characters escaped
    rules_list = envelope["rules"]
    assert isinstance(rules_list, list)
    rules = "\n".join(f"- {rule}" for rule in rules_list)
    read = "\n\n".join(entry.text for entry in served.knowledge if entry.text is not None)
    return (
        f"{envelope['persona']}\n\n## Rules\n{rules}\n\n## Knowledge\n{read}\n\n"
        f"## Skills you may load\n{catalog}"
    )


def reviewer(request: skillguard.ApprovalRequest) -> skillguard.Decision:
    """Stands in for the human so that the example runs unattended, and pins what it
    is asked. A real host asks with ``ConsoleApprover`` (which shows the whole request:
    the agent file, every knowledge file, what was not taken) and lets the human say no."""
    files = ", ".join(path for path, _, _ in request.files)
    skipped = ", ".join(f"{path} ({code})" for path, code, _ in request.skipped)
    print(f"approver: asked for {request.skill}: {files}; not taken: {skipped}")
    return skillguard.Decision(approved=True, by="example reviewer", scope="pin")


def main() -> int:
    policy = skillguard.AllowPolicy.from_file(REPO / "policy.yaml")
    embedded = skillguard.EmbeddedSkills.from_directory(ROOT / "swarm" / "embedded")
    with tempfile.TemporaryDirectory() as scratch:
        store = skillguard.TrustStore(Path(scratch) / "trust.json")
        log = skillguard.audit.AuditLog(Path(scratch) / "audit.jsonl")

        # Nobody to ask: the agent file from the repository stays out of the prompt.
        unattended = skillguard.Loader(policy, embedded=embedded, audit=log)
        try:
            unattended.bind("devops-engineer").agent_context("devops-engineer", repo=REPO)
        except skillguard.ApprovalDeniedError as exc:
            print(f"without an approver: refused ({exc.code})")

        loader = skillguard.Loader(
            policy, embedded=embedded, approver=store.approver(reviewer), audit=log
        )
        handle = loader.bind("devops-engineer")
        served = handle.agent_context("devops-engineer", repo=REPO)
        context = served.context
        print(f"agent: {context.definition.name} from {context.source_path}")
        print(f"served: approved by {served.approver}")
        for entry in served.knowledge:
            outcome = "read" if entry.error is None else f"refused ({entry.error.code})"
            print(f"knowledge: {entry.path}: {outcome}")
        again = handle.agent_context("devops-engineer", repo=REPO)
        print(f"again: approved by {again.approver}")

        tools = skillguard.agents.agent_tools(context, policy, agent=context.identity)
        print(f"effective tools: {sorted(tools.effective)}")
        print(f"declared, not granted: {list(tools.not_granted)}")
        print(system_prompt(served, handle.catalog_xml()))
        lines = (Path(scratch) / "audit.jsonl").read_bytes().splitlines()
        verdict = skillguard.audit.verify_records(lines)
        print(f"audit log: {len(lines)} records, intact={verdict.intact}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
