"""The agent-definition product line: parse, resolve, envelope, grant, compose, gate.

An agent file (a Claude Code subagent, a Copilot ``*.agent.md``, a Gemini or OpenCode
agent) is a system prompt and a tool list that a cloned repository controls. It
shares the skills' floors: ``SafeRoot`` for every read, the one YAML entry point, the
character rules and the error tree. The rooms:

* ``parse``: bytes in, a frozen ``AgentDefinition`` out (sans-IO);
* ``resolve``: which file an ``--agent`` value names, read beneath the repository,
  and the contained reads of its ``core_knowledge`` files;
* ``envelope``: the agent-context JSON envelope and its four error codes;
* ``grant``: the declared tools narrowed by the policy, never widened;
* ``tokenmap``: ``token-map.json``, strict JSON into a frozen ``TokenMap``;
* ``gate``: the approval gate, which decides whether an agent file and its knowledge
  files may reach a prompt (the operator's own, or approved, or refused);
* ``place``: whether a path the operator names as their own (an operator agent folder,
  the trust store) is the repository's, judged step by step and through the mount table;
* ``operator``: where an agent file's trust comes from (the operator's own folders,
  searched first);
* ``snapshot``: what approving an agent file binds (the agent file and every
  knowledge file read once, one digest) and the request that shows it whole;
* ``review``: what approving an agent file covers, read by the gate's own reading for
  an operator who pins it without a prompt;
* ``compose``: composable agent directories (agent-cortex), composed and checked:
  ``compose_read`` reads the folder (and ``frontmatter.json``), ``compose_tokens``
  substitutes the tokens, ``compose_emit`` writes the frontmatter as safe YAML;
* ``directory``: which folders are agents, and validating them
  (``validate_agent_directory``);
* the command line for agent files lives with the rest of it, in ``skillguard._cli``.

The public names are re-exported by ``skillguard.agents``.
"""

from __future__ import annotations

__all__: list[str] = []
