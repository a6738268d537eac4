"""An agent file's ``tools`` is a declaration, never a grant (threat-model.md T77).

``agent_tools`` combines an ``AgentDefinition`` with the operator's ``AllowPolicy``:
the effective tools are the declared tools narrowed by the agent's grant, with the
permission-rule matching of ``_tools.narrow`` (the one ``effective_tools`` uses for a
skill's ``allowed-tools``). The result never holds a rule that no granted rule covers.

* A file without ``tools`` declares nothing to narrow with: the effective tools are the
  grant (the harnesses give such an agent every tool it may have).
* ``tools: []`` declares no tools: the effective set is empty.
* An agent the policy does not know has an empty grant: nothing is effective, and
  every declared tool is reported as not granted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from skillguard._agents.parse import AgentDefinition
from skillguard._agents.resolve import AgentContext
from skillguard._core.errors import SkillUsageError
from skillguard._core.tool_rules import covers, narrow
from skillguard._skills.policy import AllowPolicy

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["AgentTools", "agent_tools"]


@attrs.frozen(kw_only=True)
class AgentTools:
    """What an agent may use: ``effective``, and the declared rules ``not_granted``.

    ``not_granted`` holds, in declaration order, every declared rule that the grant
    does not cover in full; ``effective`` still holds any narrower granted part of it
    (declared ``Bash`` with a grant of ``Bash(git:*)`` gives ``Bash(git:*)``).
    """

    declared: tuple[str, ...] | None
    granted: frozenset[str]
    effective: frozenset[str]
    not_granted: tuple[str, ...]


def _uncovered(grant: Iterable[str], declared: tuple[str, ...]) -> tuple[str, ...]:
    rules = tuple(grant)
    return tuple(rule for rule in declared if not any(covers(g, rule) for g in rules))


def agent_tools(
    definition: AgentDefinition | AgentContext, policy: AllowPolicy, *, agent: str
) -> AgentTools:
    """The tools the policy agent *agent* may use when it runs as *definition*.

    Raises ``SkillUsageError`` for arguments of the wrong type; never widens the grant.
    """
    if isinstance(definition, AgentContext):
        definition = definition.definition
    if not isinstance(definition, AgentDefinition):
        raise SkillUsageError(
            "bad_argument", "definition must be an AgentDefinition or AgentContext"
        )
    if not isinstance(policy, AllowPolicy):
        raise SkillUsageError("bad_argument", "policy must be a skillguard.AllowPolicy")
    if not isinstance(agent, str):
        raise SkillUsageError("bad_argument", "agent must be a str")
    grant = policy.grant(agent)
    granted = grant.tools if grant is not None else frozenset()
    declared = definition.tools
    if declared is None:
        effective = granted
        missing: tuple[str, ...] = ()
    elif not declared:
        effective = frozenset()
        missing = ()
    else:
        effective = narrow(granted, declared) if granted else frozenset()
        missing = _uncovered(granted, declared)
    return AgentTools(declared=declared, granted=granted, effective=effective, not_granted=missing)
