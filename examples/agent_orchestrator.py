"""An orchestrator on skillguard: load an agent's context, bind its skills, build its prompt.

Run it from the repository root:  python examples/agent_orchestrator.py

* The agent file ``examples/agents/src/agents/devops-engineer.md`` is resolved by name
  (seed 000) beneath the repository, read through ``SafeRoot`` and parsed.
* Its ``core_knowledge`` directives are read one by one, contained in the repository:
  the one that points outside it is refused on its own, and the others are used.
* Its ``tools`` is a declaration: the effective tools are the declared tools narrowed
  by the policy grant, and the declared tools the grant does not cover are reported.
* The system prompt is built from the persona, the rules, the knowledge that could be
  read and the catalog of the skills the policy lets this agent load.
"""

from __future__ import annotations

import sys
from pathlib import Path

import skillguard

ROOT = Path(__file__).resolve().parent
REPO = ROOT / "agents"


def system_prompt(
    context: skillguard.AgentContext,
    knowledge: tuple[skillguard.KnowledgeFile, ...],
    catalog: str,
) -> str:
    envelope = context.envelope()  # every string in it shows hidden characters escaped
    rules_list = envelope["rules"]
    assert isinstance(rules_list, list)
    rules = "\n".join(f"- {rule}" for rule in rules_list)
    read = "\n\n".join(entry.text for entry in knowledge if entry.text is not None)
    return (
        f"{envelope['persona']}\n\n## Rules\n{rules}\n\n## Knowledge\n{read}\n\n"
        f"## Skills you may load\n{catalog}"
    )


def main() -> int:
    policy = skillguard.AllowPolicy.from_file(REPO / "policy.yaml")
    context = skillguard.load_agent_context(REPO, "devops-engineer")
    print(f"agent: {context.definition.name} from {context.source_path}")

    knowledge = skillguard.read_core_knowledge(REPO, context)
    for entry in knowledge:
        outcome = "read" if entry.error is None else f"refused ({entry.error.code})"
        print(f"knowledge: {entry.path}: {outcome}")

    tools = skillguard.agent_tools(context, policy, agent=context.identity)
    print(f"effective tools: {sorted(tools.effective)}")
    print(f"declared, not granted: {list(tools.not_granted)}")

    loader = skillguard.Loader(
        policy,
        embedded=skillguard.EmbeddedSkills.from_directory(ROOT / "swarm" / "embedded"),
    )
    handle = loader.bind(context.identity)
    print(system_prompt(context, knowledge, handle.catalog_xml()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
