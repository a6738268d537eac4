"""Skill documents: valid ones, spliced with hostile fragments, near-YAML and raw."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

from skillguard._core.limits import Limits
from skillguard._skills.document import FORBIDDEN_CHARS, LINE_BREAK_CONTROLS

__all__ = [
    "YAML_ALPHABET",
    "hostile_fragments",
    "hostile_skill_files",
    "meta_keys",
    "mutated_documents",
    "names",
    "near_yaml",
    "non_blank_text",
    "quote",
    "render",
    "skill_documents",
    "tool_names",
    "tool_rules",
    "valid_skill_files",
]


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
        codec="utf-8",
        exclude_characters="\x00\r" + "".join(FORBIDDEN_CHARS) + LINE_BREAK_CONTROLS,
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


# -- hostile arguments for the public API (T14) ----------------------------------------


@st.composite
def valid_skill_files(draw: st.DrawFn) -> bytes:
    """A rendered ``SKILL.md`` that ``parse_skill`` accepts (its folder must be its name)."""
    doc = draw(skill_documents())
    return render(doc["fields"], doc["body"])


_CAP = Limits().max_skill_bytes
_HEAD = b"---\nname: demo\ndescription: x\n---\n"

# Whole-document tricks that no splice produces: encodings, fences and sizes.
_document_tricks = st.sampled_from(
    [
        b"",
        b"---",
        b"---\n",
        b"---\n---\n",
        b"name: demo\ndescription: x\n",
        b"---\nname: demo\ndescription: x\n",
        b"\xef\xbb\xbf" + _HEAD,
        b"\xef\xbb\xbf\xef\xbb\xbf" + _HEAD,
        _HEAD.replace(b"\n", b"\r\n"),
        _HEAD.replace(b"\n", b"\r"),
        b"---\nname: d\xe9mo\ndescription: x\n---\n",
        b"---\nname: demo\ndescription: \xed\xa0\x80\n---\n",
        b"\xff\xfe-\x00-\x00-\x00",
        b"---\nname: demo\ndescription: x\n---\n---\nname: other\n---\n",
        b"--- \nname: demo\ndescription: x\n--- \n",
        b"---\nname: demo\ndescription: x\n...\n",
        b"---\nname: demo\ndescription: x\n---\nbody\x00",
        b"---\nname: demo\ndescription: a: b\n---\n",
    ]
)

# Documents at the size caps: the whole file at its cap and one byte over, and a scalar
# and a frontmatter just over theirs.
_sized_documents = st.sampled_from(
    [
        _HEAD + b"x" * (_CAP - len(_HEAD)),
        _HEAD + b"x" * (_CAP - len(_HEAD) + 1),
        b"---\nname: demo\ndescription: " + b"d" * (Limits().max_scalar_bytes + 1) + b"\n---\n",
        b"---\nname: demo\ndescription: x\n"
        + b"# c\n" * (Limits().max_frontmatter_bytes // 4 + 1)
        + b"---\n",
    ]
)


def hostile_skill_files() -> st.SearchStrategy[bytes]:
    """Any ``SKILL.md`` bytes: valid, spliced, near-YAML, raw, broken or oversized.

    ``parse_skill`` must return a ``Skill`` or raise ``MalformedSkillError`` for each.
    """
    return st.one_of(
        valid_skill_files(),
        mutated_documents(),
        near_yaml,
        _document_tricks,
        _sized_documents,
        st.binary(max_size=512),
    )


# -- hostile workspaces ------------------------------------------------------------------
