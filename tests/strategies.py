"""Hypothesis strategies shared by the test modules (attrs' tests/strategies.py habit).

The document, workspace and misuse strategies live in the public ``skillguard.testing``
module, so that hosts fuzz with exactly what the suite fuzzes with; they are re-exported
here under the names the tests use. Only the policy strategies are private to the suite.
"""

from __future__ import annotations

from hypothesis import strategies as st

from skillguard.testing import (
    YAML_ALPHABET,
    Booby,
    BytesPath,
    hostile_fragments,
    hostile_skill_files,
    hostile_values,
    hostile_workspaces,
    meta_keys,
    mutated_documents,
    names,
    near_yaml,
    non_blank_text,
    quote,
    render,
    skill_documents,
    tool_names,
    tool_rules,
    valid_skill_files,
    write_workspace,
)

__all__ = [
    "YAML_ALPHABET",
    "Booby",
    "BytesPath",
    "hostile_fragments",
    "hostile_skill_files",
    "hostile_values",
    "hostile_workspaces",
    "meta_keys",
    "mutated_documents",
    "mutated_policies",
    "names",
    "near_yaml",
    "non_blank_text",
    "policy_documents",
    "policy_fragments",
    "quote",
    "render",
    "skill_documents",
    "tool_grants",
    "tool_names",
    "tool_rules",
    "valid_skill_files",
    "write_workspace",
]

# -- policy files ----------------------------------------------------------------------

tool_grants = st.sampled_from(["Read", "Grep", "Bash(git diff:*)", "Write", "mcp__db__query"])


def _policy_scalar(draw: st.DrawFn, value: str) -> str:
    """*value* as a plain, single-quoted or double-quoted YAML scalar."""
    style = draw(st.sampled_from(["plain", "single", "double"]))
    plain_ok = value and not any(c in value for c in ":?#,[]{}()*'\"") and value[0] != "-"
    if style == "plain" and plain_ok:
        return value
    if style == "single":
        return "'" + value.replace("'", "''") + "'"
    return quote(value)


@st.composite
def policy_documents(draw: st.DrawFn) -> bytes:
    """A policy file in a random mix of block and flow styles, quoting and comments.

    Sub-agents are drawn from the other agents, so some policies are valid and some
    widen a grant; both parsers must agree either way.
    """
    agents = draw(st.lists(names, min_size=0, max_size=4, unique=True))
    indent = " " * draw(st.sampled_from([2, 4]))
    comment = st.sampled_from(["", "   # read-only", " # x: y", "  #"])
    lines = ["agents:" + (" {}" if not agents else "") + draw(comment)]
    for agent in agents:
        lines.append(f"{indent}{agent}:" + draw(comment))
        fields: dict[str, list[str] | str] = {}
        if draw(st.booleans()):
            fields["skills"] = draw(st.lists(names, max_size=3, unique=True))
        if draw(st.booleans()):
            fields["tools"] = draw(st.lists(tool_grants, max_size=3, unique=True))
        if draw(st.booleans()):
            fields["workspace"] = draw(st.sampled_from(["deny", "approve"]))
        others = [a for a in agents if a != agent]
        with_subagents = draw(st.booleans())
        if others and with_subagents:
            fields["subagents"] = draw(st.lists(st.sampled_from(others), max_size=2, unique=True))
        if not fields:
            lines[-1] += " {}"
        for key, value in fields.items():
            head = f"{indent * 2}{key}:"
            if isinstance(value, str):
                lines.append(f"{head} {_policy_scalar(draw, value)}" + draw(comment))
            elif draw(st.booleans()) or not value:
                items = ", ".join(_policy_scalar(draw, item) for item in value)
                lines.append(f"{head} [{items}]" + draw(comment))
            else:
                lines.append(head)
                lines.extend(f"{indent * 3}- {_policy_scalar(draw, item)}" for item in value)
    return ("\n".join(lines) + "\n").encode("utf-8")


# Fragments for policies: hidden line breaks in comments, and grants spelled twice.
policy_fragments = st.sampled_from(
    [
        "    skills: [notes]   # read-only\u2028    workspace: approve",
        "  # note\u2029  x: {workspace: approve}",
        "    tools: [Read]  #\x85    workspace: approve",
        "    workspace: approve",
        "    workspace: 'approve'",
        "    workspace: >\n      approve",
        "  x: {skills: [a]}",
        "  x: {skills: [a]}\n  x: {skills: [b]}",
        "    tools: [Bash(git:*)]",
        '    tools: ["Read\\u2028Write"]',
        "\t  workspace: approve",
    ]
)


@st.composite
def mutated_policies(draw: st.DrawFn) -> bytes:
    """A policy file with policy and YAML fragments spliced in at random lines."""
    lines = draw(policy_documents()).decode("utf-8").split("\n")
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(lines)))
        lines.insert(at, draw(st.one_of(policy_fragments, hostile_fragments)))
    return "\n".join(lines).encode("utf-8")
