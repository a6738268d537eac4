"""Hypothesis strategies shared by the test modules (attrs' tests/strategies.py habit)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

from skillguard._parse import FORBIDDEN_CHARS

# Characters a valid field may hold: any Unicode letter, number, punctuation, symbol
# or plain space, minus the invisible and bidirectional ones the parser refuses.
_SAFE_TEXT_CHARS = st.characters(
    categories=("L", "N", "P", "S", "Zs"),
    exclude_characters="".join(FORBIDDEN_CHARS) + "\u2028\u2029\x85\xa0",
)

names = st.from_regex(r"[a-z0-9]{1,8}(-[a-z0-9]{1,8}){0,5}", fullmatch=True).filter(
    lambda n: len(n) <= 64
)
non_blank_text = st.text(_SAFE_TEXT_CHARS, min_size=1, max_size=80).filter(str.strip)
tool_names = st.from_regex(
    r"[A-Za-z][A-Za-z0-9_.-]{0,12}(\([A-Za-z0-9 _,:*.-]{0,12}\))?", fullmatch=True
)

# Tool rules over a small alphabet, so that rules often share a tool and a prefix and
# the covering relation is exercised rather than always false.
_rule_words = st.sampled_from(["git", "gitk", "diff", "ls", "lsof", "npm", "run", "a", "-v"])
_bash_commands = st.lists(_rule_words, min_size=1, max_size=3).map(" ".join)
_bash_specifiers = st.one_of(
    _bash_commands,
    _bash_commands.map(lambda c: c + ":*"),
    _bash_commands.map(lambda c: c + " *"),
    _bash_commands.map(lambda c: c + "*"),
    st.sampled_from(["*", "git * main", "* --version", "git && rm", "a; b", " git:*", ":*"]),
)
tool_rules = st.one_of(
    st.sampled_from(["Bash", "Read", "Grep", "bash", "mcp__gh", "mcp__gh__*", "mcp__gh__pr"]),
    _bash_specifiers.map(lambda s: f"Bash({s})"),
    st.sampled_from(["Read(./src/**)", "Read(*)", "WebFetch(domain:example.com)", "Read()"]),
    st.text(st.sampled_from("Bash(git:*) ,"), max_size=12),
)
meta_keys = st.from_regex(r"[a-z][a-z0-9_-]{0,15}", fullmatch=True).filter(
    lambda k: k not in ("name", "<<")
)


@st.composite
def skill_documents(draw: st.DrawFn) -> dict[str, Any]:
    """A valid skill as data: the fields and body to render, and the folder name."""
    fields: dict[str, Any] = {
        "name": draw(names),
        "description": draw(non_blank_text),
    }
    if draw(st.booleans()):
        fields["license"] = draw(non_blank_text)
    if draw(st.booleans()):
        fields["compatibility"] = draw(non_blank_text)
    if draw(st.booleans()):
        fields["version"] = draw(st.sampled_from(["1.0", "2.1.3", "0.0.1-beta", "on", "010"]))
    if draw(st.booleans()):
        fields["metadata"] = draw(st.dictionaries(meta_keys, non_blank_text, max_size=4))
    if draw(st.booleans()):
        tools = draw(st.lists(tool_names, max_size=5))
        fields["allowed-tools"] = tools if draw(st.booleans()) else " ".join(tools)
    if draw(st.booleans()):
        fields["steps"] = draw(st.lists(non_blank_text, max_size=5))
    for flag in ("disable-model-invocation", "user-invocable"):
        if draw(st.booleans()):
            fields[flag] = draw(st.sampled_from(["true", "false", "True", "FALSE"]))
    for key in ("argument-hint", "model", "context", "agent"):
        if draw(st.booleans()):
            fields[key] = draw(non_blank_text)
    # Any text but NUL, CR and the characters the strict body check looks at.
    body_chars = st.characters(
        codec="utf-8", exclude_characters="\x00\r" + "".join(FORBIDDEN_CHARS)
    )
    body = draw(st.text(body_chars, max_size=200))
    return {"fields": fields, "body": body}


def quote(value: str) -> str:
    """A YAML double-quoted scalar (JSON strings are valid YAML double-quoted scalars)."""
    return json.dumps(value, ensure_ascii=False)


def render(fields: dict[str, Any], body: str) -> bytes:
    """Render fields as block-style YAML frontmatter with every scalar double-quoted."""
    lines = ["---"]
    for key, value in fields.items():
        if isinstance(value, dict):
            lines.append(f"{quote(key)}:" + ("" if value else " {}"))
            lines.extend(f"  {quote(k)}: {quote(v)}" for k, v in value.items())
        elif isinstance(value, list):
            lines.append(f"{quote(key)}:" + ("" if value else " []"))
            lines.extend(f"  - {quote(item)}" for item in value)
        else:
            lines.append(f"{quote(key)}: {quote(value)}")
    lines.append("---")
    return ("\n".join(lines) + "\n" + body).encode("utf-8")


# Fragments that exercise the parser's edges when spliced into otherwise valid input.
hostile_fragments = st.sampled_from(
    [
        "&a x",
        "*a",
        "!!python/object:os.system",
        "!foo",
        "<<: {a: b}",
        "? [a]\n: b",
        "%YAML 1.1\n---",
        "%TAG ! tag:x,2000:\n---",
        "...\n---\nb: c",
        "[" * 50,
        "{" * 50,
        "- - - - - - - - - - -",
        '"\\x00"',
        '"\\u202e"',
        "\x00",
        "\x1b[2J",
        "\u2028",
        "\x85",
        "\ufeff",
        "\t",
        "---",
        "----x",
        "'a'",
        '"a"',
        "a",
        "a: 1\na: 2",
        "|\n  block",
        ">-\n  folded",
        "k: >\n \n  leading spaces",
        "k: |#glued",
        "m: [a?b, c:d]",
        "m: {k?r: v}",
    ]
)


@st.composite
def mutated_documents(draw: st.DrawFn) -> bytes:
    """A valid document with hostile fragments spliced in at random lines."""
    doc = draw(skill_documents())
    text = render(doc["fields"], doc["body"]).decode("utf-8")
    lines = text.split("\n")
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(lines)))
        lines.insert(at, draw(hostile_fragments))
    return "\n".join(lines).encode("utf-8")


# Characters that make YAML's grammar work hard, for generated near-YAML text.
YAML_ALPHABET = " \n\t-:?[]{},#&*!|>'\"%@`\\abnxuLP01.~\u00e9\u20ac"

near_yaml = st.text(YAML_ALPHABET, max_size=120).map(
    lambda t: ("---\nname: demo\ndescription: x\n" + t + "\n---\n").encode()
)


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


# -- hostile arguments for the public API (T14) ----------------------------------------


class Booby:
    """An object whose comparison, hash, path and string forms all raise."""

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("__eq__")

    def __hash__(self) -> int:
        raise RuntimeError("__hash__")

    def __fspath__(self) -> str:
        raise RuntimeError("__fspath__")

    def __str__(self) -> str:
        raise RuntimeError("__str__")

    def __repr__(self) -> str:
        return "Booby()"


class BytesPath:
    """A path-like object that returns bytes, which ``os.fspath`` passes through."""

    def __fspath__(self) -> bytes:
        return b"/tmp/skillguard-bytes-path"

    def __repr__(self) -> str:
        return "BytesPath()"


def _nested(depth: int) -> list[object]:
    value: list[object] = []
    for _ in range(depth):
        value = [value]
    return value


# Values a confused or hostile caller may pass anywhere: wrong types, wrong values,
# and objects that raise from the dunder methods a library is tempted to call. A value
# may become a path that skillguard creates, so the drawn text never starts with "/"
# nor climbs more than one folder: a test that uses these runs from a scratch folder.
hostile_values: st.SearchStrategy[object] = st.one_of(
    st.sampled_from(
        [
            None,
            True,
            False,
            0,
            -1,
            10**100,
            -(10**100),
            float("nan"),
            float("inf"),
            -0.5,
            b"",
            b"hello",
            "",
            "\x00",
            "hel\x00lo",
            "\ud800",
            "../x",
            # Absolute paths that can be neither created nor written: the callers
            # that create files (audit logs, trust stores) are called with these.
            "/",
            "/nonexistent-skillguard/passwd",
            ".",
            "x" * 100_000,
            [],
            ["hello"],
            {},
            {"name": "hello"},
            {"name": "x", 1: 2},
            (),
            frozenset({"hello"}),
            object(),
            BytesPath(),
            _nested(200),
            print,
        ]
    ),
    # Built fresh per example: Hypothesis hashes sampled values, and these refuse.
    st.builds(Booby),
    st.builds(lambda: [Booby()]),
    st.builds(lambda: {"name": Booby()}),
    st.integers(),
    st.floats(),
    st.binary(max_size=20),
    st.text(max_size=20).filter(lambda text: not text.startswith("/") and "../.." not in text),
    st.lists(st.text(max_size=5), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
)
