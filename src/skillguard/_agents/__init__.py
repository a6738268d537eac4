"""The agent-definition product line (seed 000): parse, resolve, envelope, grant.

An agent file (a Claude Code subagent, a Copilot ``*.agent.md``, a Gemini or OpenCode
agent) is a system prompt and a tool list that a cloned repository controls. It
shares the skills' floors: ``SafeRoot`` for every read, the one YAML entry point, the
character rules and the error tree. The rooms:

* ``_parse``: bytes in, a frozen ``AgentDefinition`` out (sans-IO);
* ``_resolve``: which file an ``--agent`` value names, read beneath the repository,
  and the contained reads of its ``core_knowledge`` files;
* ``_envelope``: the seed's JSON envelope and its four error codes;
* ``_grant``: the declared tools narrowed by the policy, never widened;
* ``_tokenmap``: ``token-map.json`` (seed 001), strict JSON into a frozen ``TokenMap``;
* ``_place``: whether a path the operator names as their own (an operator agent
  folder, the trust store) is the repository's;
* ``_gate``: the approval gate, which decides whether an agent file and its knowledge
  files may reach a prompt (the operator's own, or approved, or refused);
* ``_review``: what approving an agent file covers, read by the gate's own reading for
  an operator who pins it without a prompt;
* ``_compose``: composable agent directories (seed 001), read and composed;
* ``_directory``: which folders are agents, and validating them
  (``validate_agent_directory``);
* ``_compose_command``: ``skillguard agent compose`` and ``agent validate``;
* ``_command``: ``skillguard agent context``, and the resolution options it shares with
  the trust commands;
* ``_trust_command``: ``skillguard trust show --agent`` and ``trust add --agent``.
"""

from __future__ import annotations

from ._compose import ComposedAgent, ComposeLimits, compose
from ._directory import AgentFinding, AgentValidation, validate_agent_directory
from ._envelope import agent_error_code
from ._gate import ServedAgentContext
from ._grant import AgentTools, agent_tools
from ._parse import AgentDefinition, parse_agent
from ._resolve import (
    HARNESS_PRESETS,
    AgentContext,
    AgentNotFoundError,
    KnowledgeFile,
    load_agent_context,
    read_core_knowledge,
)
from ._tokenmap import TokenMap, parse_token_map

__all__ = [
    "HARNESS_PRESETS",
    "AgentContext",
    "AgentDefinition",
    "AgentFinding",
    "AgentNotFoundError",
    "AgentTools",
    "AgentValidation",
    "ComposeLimits",
    "ComposedAgent",
    "KnowledgeFile",
    "ServedAgentContext",
    "TokenMap",
    "agent_error_code",
    "agent_tools",
    "compose",
    "load_agent_context",
    "parse_agent",
    "parse_token_map",
    "read_core_knowledge",
    "validate_agent_directory",
]
