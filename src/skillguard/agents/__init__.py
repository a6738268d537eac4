"""Agent definition files: parse, resolve, compose, and the approval gate.

An agent file (a Claude Code subagent, a Copilot custom agent ``*.agent.md``, a Gemini or
OpenCode agent, an agent-cortex composable agent directory) is a system prompt and a tool
list that a cloned repository controls. This package is its public API; the skill loader
(``skillguard``) does not import it until a host does.

* ``parse_agent``: bytes in, a frozen ``AgentDefinition`` out;
* ``load_agent_context``, ``read_core_knowledge``, ``HARNESS_PRESETS``: which file an
  agent name or path names, read beneath the repository (the operator's own tool);
* ``AgentSkills.agent_context`` (on the handle) and ``ServedAgentContext``: the approval
  gate in front of a prompt;
* ``compose``, ``parse_token_map``, ``validate_agent_directory``: composable agent
  directories and their token map;
* ``plan_install``, ``install_plan``, ``check_install``, ``uninstall``: agents (composed or
  native) and skills put into a harness's folder, all or nothing, with a manifest;
* ``agent_tools``: the declared tools narrowed by the policy, never widened.
"""

from __future__ import annotations

from skillguard._agents.compose import ComposedAgent, compose
from skillguard._agents.compose_read import ComposeLimits
from skillguard._agents.directory import AgentFinding, AgentValidation, validate_agent_directory
from skillguard._agents.envelope import agent_error_code
from skillguard._agents.gate import ServedAgentContext
from skillguard._agents.grant import AgentTools, agent_tools
from skillguard._agents.install import InstallReport, check_install, install_plan, uninstall
from skillguard._agents.install_plan import InstallFinding, InstallPlan, plan_install
from skillguard._agents.parse import AgentDefinition, parse_agent
from skillguard._agents.resolve import (
    HARNESS_PRESETS,
    AgentContext,
    AgentNotFoundError,
    KnowledgeFile,
    load_agent_context,
    read_core_knowledge,
)
from skillguard._agents.tokenmap import TokenMap, parse_token_map

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
    "InstallFinding",
    "InstallPlan",
    "InstallReport",
    "KnowledgeFile",
    "ServedAgentContext",
    "TokenMap",
    "agent_error_code",
    "agent_tools",
    "check_install",
    "compose",
    "install_plan",
    "load_agent_context",
    "parse_agent",
    "parse_token_map",
    "plan_install",
    "read_core_knowledge",
    "uninstall",
    "validate_agent_directory",
]
