"""The swarm facade's refusals of a name: ``NotGrantedError`` and ``UnknownSkillError``.

A name outside an agent's allow-set is refused with the same error and message whether
or not any source holds a skill of that name (rule 1 of the handle, ``handle``), so an
agent cannot tell a name it may not load from one that does not exist: the cause it is
told is the one that holds for both, "not granted" (``NotGrantedError``, kind and code
``not_granted``). A skill the agent may load but not this way (a model asking for a
``disable-model-invocation`` skill, a user for a ``user-invocable: false`` one) is
refused with the same class and its own code. An agent the policy does not know is
refused with ``UnknownSkillError`` (kind ``unknown``, ``unknown_agent``, at
``Loader.bind``).
"""

from __future__ import annotations

from skillguard._core.errors import SkillInputError, safe_repr

__all__ = ["NotGrantedError", "UnknownSkillError", "unknown"]


class UnknownSkillError(SkillInputError):
    """The requesting agent is not known to the policy (``unknown_agent``)."""

    kind = "unknown"


class NotGrantedError(UnknownSkillError):
    """The policy does not grant the requesting agent this skill, whether or not any
    source holds one of that name (``not_granted``), or not this use of it
    (``user_invocation_only``, ``not_user_invocable``).

    A subclass of ``UnknownSkillError`` so that code written before the two causes
    had their own kinds (``except UnknownSkillError``) still catches it.
    """

    kind = "not_granted"


def unknown(agent: object, name: object) -> NotGrantedError:
    """The one refusal of a name the policy does not grant *agent* (T23)."""
    shown_agent = safe_repr(agent) if isinstance(agent, str) else "?"
    shown_name = safe_repr(name) if isinstance(name, str) else "?"
    return NotGrantedError(
        "not_granted",
        f"agent {shown_agent} may not load skill {shown_name}",
        agent=agent if isinstance(agent, str) else None,
        name=name if isinstance(name, str) else None,
    )
