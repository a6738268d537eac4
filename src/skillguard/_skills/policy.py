"""Who may load what: a closed, per-agent allow-set (seed 004), and its file format.

Rules (threat-model.md T23-T24):

* The policy is closed. An unknown agent, an empty policy, or a name outside the
  agent's set is denied; ``allowed(agent, name)`` is a pure predicate over data in
  memory and never touches the file system.
* Each agent has a set of skill names, a tool grant, a workspace mode (``deny``, the
  default, or ``approve``: workspace skills only after a human approved them) and
  sub-agents. A sub-agent's grant must be a subset of its parent's (skills, tools, and
  workspace mode): a policy that widens is refused when it is loaded, never trimmed.
* The policy file is read through the one YAML entry point skills use
  (``_yaml.load_document``): no anchors, tags or duplicate keys, every scalar a
  string, and the same character rules, so a U+2028 that libyaml reads as a line
  break cannot turn what a reviewer sees as a comment into a grant (T60). It has its
  own limits (``POLICY_LIMITS``), and from disk at most ``cap + 1`` bytes of it are
  ever read (``from_file``, T62).

The format::

    agents:
      planner:
        skills: [pdf-tools, code-review]
        tools: [Read, Grep, "Bash(git diff:*)"]
        workspace: approve
        subagents: [researcher]
      researcher:
        skills: [pdf-tools]
        tools: [Read]
"""

from __future__ import annotations

import errno
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Literal

import attrs

from skillguard._core.errors import MalformedSkillError, SkillUsageError, safe_repr, unknown_key
from skillguard._core.limits import Limits
from skillguard._core.strict_yaml import load_document
from skillguard._fs.operator import read_operator_bytes
from skillguard._fs.paths import operator_path
from skillguard._skills.names import is_valid_name

if TYPE_CHECKING:
    import os

    from skillguard._core.model import YamlValue
    from skillguard._core.strict_yaml import Backend, KeyLines

__all__ = [
    "POLICY_LIMITS",
    "AgentGrant",
    "AllowPolicy",
    "PolicyError",
    "WorkspaceMode",
    "is_valid_agent",
    "parse_policy_with",
]

WorkspaceMode = Literal["deny", "approve"]

# A policy names every agent of a swarm; it is bigger than a skill's frontmatter.
POLICY_LIMITS = Limits(
    max_skill_bytes=1024 * 1024,
    max_frontmatter_bytes=1024 * 1024,
    max_depth=6,
    max_nodes=200_000,
    max_scalar_bytes=1024,
)
_TOP_KEYS = frozenset({"agents"})
_AGENT_KEYS = frozenset({"skills", "tools", "workspace", "subagents"})


def _read_only(agents: Mapping[str, AgentGrant]) -> Mapping[str, AgentGrant]:
    if not isinstance(agents, Mapping):
        raise PolicyError("bad_policy", "agents must map agent names to grants")
    return MappingProxyType(dict(agents))


class PolicyError(SkillUsageError):
    """The policy (the operator's own configuration) is invalid: refused as a whole."""

    kind = "policy"


def is_valid_agent(candidate: object) -> bool:
    """Agent names follow the skill-name rule: 1-64 characters, a-z, 0-9, hyphens."""
    return isinstance(candidate, str) and is_valid_name(candidate)


def _names(value: object, what: str, agent: str, *, slugs: bool) -> frozenset[str]:
    if not isinstance(value, (tuple, list, frozenset, set)):
        raise PolicyError("bad_policy", f"{what} of agent {agent!r} must be a list", agent=agent)
    for name in value:  # checked before hashing: a list item would be unhashable
        if not isinstance(name, str) or not name or (slugs and not is_valid_name(name)):
            raise PolicyError(
                "bad_policy", f"{what} of agent {agent!r} holds an invalid name", agent=agent
            )
    return frozenset(value)


@attrs.frozen
class AgentGrant:
    """What one agent may do."""

    skills: frozenset[str] = frozenset()
    tools: frozenset[str] = frozenset()
    workspace: WorkspaceMode = "deny"
    subagents: frozenset[str] = frozenset()


@attrs.frozen(eq=False)  # compared by identity: a policy is configuration, not a value
class AllowPolicy:
    """A closed mapping agent -> grant. Build it from data or load it from a file.

    ``AllowPolicy.from_mapping(data)``, ``AllowPolicy.from_yaml(raw_bytes)`` and
    ``AllowPolicy.from_file(path)`` raise :class:`PolicyError` for anything invalid,
    including a sub-agent that widens its parent's grant.
    """

    agents: Mapping[str, AgentGrant] = attrs.field(factory=dict, converter=_read_only)

    def __attrs_post_init__(self) -> None:
        # A policy built directly gets the same checks as one read from a file.
        if not isinstance(self.agents, Mapping):
            raise PolicyError("bad_policy", "agents must map agent names to grants")
        for agent, grant in self.agents.items():
            if not is_valid_agent(agent) or not isinstance(grant, AgentGrant):
                raise PolicyError("bad_policy", "agents must map agent names to AgentGrant")
            if grant.workspace not in ("deny", "approve"):
                raise PolicyError("bad_policy", "workspace is deny or approve", agent=agent)
            for what, names, slugs in (
                ("skills", grant.skills, True),
                ("tools", grant.tools, False),
                ("subagents", grant.subagents, True),
            ):
                if not isinstance(names, frozenset):
                    raise PolicyError(
                        "bad_policy", f"{what} of agent {agent!r} must be a frozenset", agent=agent
                    )
                _names(names, what, agent, slugs=slugs)
        self.check_subagents()

    @classmethod
    def from_mapping(cls, data: Mapping[str, object]) -> AllowPolicy:
        """Build a policy from plain data in the file's shape. Raises
        :class:`PolicyError` for anything invalid; an unknown key is named, with the
        nearest known key when one is close (``did you mean 'tools'?``)."""
        return _from_mapping(cls, data, None)

    @classmethod
    def from_yaml(cls, raw: bytes) -> AllowPolicy:
        """Parse a policy file's bytes (see the module docstring for the format).

        Raises :class:`PolicyError` (``bad_policy``, with the line where known) for a
        document over 1 MiB, not UTF-8, holding a control or line-separator character,
        not plain YAML data, or not a valid policy; :class:`SkillUsageError` when
        *raw* is not bytes. Blank input is the empty policy, which denies everything.
        """
        return parse_policy_with(raw, backend=None)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> AllowPolicy:
        """Read and parse the policy file at *path* (the operator's own file).

        At most ``POLICY_LIMITS.max_frontmatter_bytes + 1`` bytes are read, from a
        regular file only. Raises :class:`PolicyError` when the file cannot be read,
        is not a regular file, or is invalid (as :meth:`from_yaml`), and
        :class:`SkillUsageError` when *path* is not a path.
        """
        name = operator_path(path, "the policy path")
        cap = POLICY_LIMITS.max_frontmatter_bytes
        try:
            raw = read_operator_bytes(name, limit=cap)
        except OSError as exc:
            reasons = {
                errno.EINVAL: "the policy file is not a regular file",
                errno.EFBIG: f"the policy file is larger than {cap} bytes",
            }
            reason = reasons.get(exc.errno or 0, "the policy file cannot be read")
            raise PolicyError("bad_policy", reason) from exc
        return parse_policy_with(raw, backend=None)

    def check_subagents(self) -> None:
        """Refuse a sub-agent that is unknown, or whose grant is wider than its parent's."""
        for parent, grant in self.agents.items():
            for child_name in grant.subagents:
                child = self.agents.get(child_name)
                if child is None or child_name == parent:
                    raise PolicyError(
                        "bad_policy",
                        f"agent {parent!r} names a sub-agent that is not a separate agent",
                        agent=parent,
                    )
                widened = _widened(grant, child)
                if widened:
                    raise PolicyError(
                        "widening_subagent",
                        f"sub-agent {child_name!r} would get more than its parent "
                        f"{parent!r}: {widened}; grant these to {parent!r} too, or take "
                        f"them from {child_name!r}",
                        agent=child_name,
                    )

    def grant(self, agent: str) -> AgentGrant | None:
        return self.agents.get(agent) if isinstance(agent, str) else None

    def allowed(self, agent: str, name: str) -> bool:
        """Whether *agent* may load *name*: a pure membership test, fail-secure."""
        grant = self.grant(agent)
        return grant is not None and isinstance(name, str) and name in grant.skills


def _unknown_key(
    key: object, known: frozenset[str], lines: KeyLines | None, agent: str | None = None
) -> PolicyError:
    """``bad_policy`` for an unknown *key* at the top (or in *agent*'s grant), on its
    line when the policy was read from a file, the nearest known key named (``did you
    mean 'tools'?``) and the key escaped and bounded (``safe_repr``)."""
    line = None
    if lines is not None and isinstance(key, str):
        line = lines.at(("agents", agent, key) if agent is not None else (key,))
    where = f" of agent {agent!r}" if agent is not None else ""
    return PolicyError(
        "bad_policy",
        unknown_key(key, known, where=where),
        line=line,
        key=key if isinstance(key, str) else None,
        agent=agent,
    )


def _from_mapping(
    cls: type[AllowPolicy], data: Mapping[str, object], lines: KeyLines | None
) -> AllowPolicy:
    if not isinstance(data, Mapping):
        raise PolicyError("bad_policy", "a policy must be a mapping with an 'agents' key")
    for key in data:
        if key != "agents":
            raise _unknown_key(key, _TOP_KEYS, lines)
    raw_agents = data.get("agents", {})
    if not isinstance(raw_agents, Mapping):
        raise PolicyError("bad_policy", "'agents' must map agent names to grants")
    agents: dict[str, AgentGrant] = {}
    for agent, raw in raw_agents.items():
        if not is_valid_agent(agent):
            raise PolicyError("bad_policy", "an agent name is not a valid identifier")
        if not isinstance(raw, Mapping):
            raise PolicyError(
                "bad_policy",
                f"agent {agent!r} takes a mapping of {sorted(_AGENT_KEYS)}",
                agent=agent,
            )
        for key in raw:
            if key not in _AGENT_KEYS:
                raise _unknown_key(key, _AGENT_KEYS, lines, agent)
        workspace = raw.get("workspace", "deny")
        if workspace not in ("deny", "approve"):
            raise PolicyError(
                "bad_policy", f"workspace of agent {agent!r} is deny or approve", agent=agent
            )
        agents[agent] = AgentGrant(
            skills=_names(raw.get("skills", ()), "skills", agent, slugs=True),
            tools=_names(raw.get("tools", ()), "tools", agent, slugs=False),
            workspace=workspace,
            subagents=_names(raw.get("subagents", ()), "subagents", agent, slugs=True),
        )
    return cls(agents)


# How many widened names an error lists; the rest are counted. Tools are the
# operator's own strings, but still shown escaped and bounded (safe_repr).
_MAX_WIDENED_SHOWN = 8


def _listed(names: frozenset[str]) -> str:
    ordered = sorted(names)
    shown = ", ".join(safe_repr(name) for name in ordered[:_MAX_WIDENED_SHOWN])
    more = len(ordered) - _MAX_WIDENED_SHOWN
    return f"{shown} and {more} more" if more > 0 else shown


def _widened(parent: AgentGrant, child: AgentGrant) -> str:
    """What *child* has and *parent* has not, named: ``skills 'b'; tools 'Bash'``, or
    ``""`` when the child's grant is within the parent's."""
    parts = []
    skills = child.skills - parent.skills
    if skills:
        parts.append(f"skills {_listed(skills)}")
    tools = child.tools - parent.tools
    if tools:
        parts.append(f"tools {_listed(tools)}")
    if child.workspace == "approve" and parent.workspace != "approve":
        parts.append(f"workspace approve (the parent's is {parent.workspace})")
    return "; ".join(parts)


def parse_policy_with(raw: bytes, *, backend: Backend | None) -> AllowPolicy:
    """``AllowPolicy.from_yaml`` with an explicit YAML backend (for the differential
    tests and fuzz target, which must see both parsers agree on every policy)."""
    if not isinstance(raw, bytes):
        raise SkillUsageError("bad_argument", "raw must be bytes")
    try:
        data, lines = load_document(
            raw,
            POLICY_LIMITS,
            what="the policy file",
            backend=backend,
            allow_empty=True,
            nested_keys=True,
        )
    except MalformedSkillError as exc:
        # The operator's own file is at fault, not untrusted input: a usage error,
        # with the composer's code kept in the reason and its line kept as is.
        raise PolicyError("bad_policy", f"{exc.reason} ({exc.code})", line=exc.line) from exc
    return _from_mapping(AllowPolicy, _plain(data), lines)  # type: ignore[arg-type]


def _plain(value: YamlValue) -> object:
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, tuple):
        return [_plain(item) for item in value]
    return value
