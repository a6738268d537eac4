"""The swarm facade's one refusal of a name: ``UnknownSkillError``.

A name outside an agent's allow-set is refused with the same error and message whether
or not any source holds a skill of that name (rule 1 of the handle, ``handle``), so an
agent cannot tell a name it may not load from one that does not exist. An agent the
policy does not know is refused with it too (``unknown_agent``, at ``Loader.bind``).
"""

from __future__ import annotations

from skillguard._core.errors import SkillInputError, safe_repr

__all__ = ["UnknownSkillError", "unknown"]


class UnknownSkillError(SkillInputError):
    """The name is not known to, or not authorized for, the requesting agent."""

    kind = "unknown"


def unknown(agent: object, name: object) -> UnknownSkillError:
    shown_agent = safe_repr(agent) if isinstance(agent, str) else "?"
    shown_name = safe_repr(name) if isinstance(name, str) else "?"
    return UnknownSkillError(
        "not_authorized",
        f"agent {shown_agent} may not load skill {shown_name}",
        agent=agent if isinstance(agent, str) else None,
        name=name if isinstance(name, str) else None,
    )
