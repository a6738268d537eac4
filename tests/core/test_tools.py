"""Tool rules: splitting ``allowed-tools``, one rule covering another, narrowing a grant.

Test names that start with ``test_tN_`` stop the threat ``TN`` of threat-model.md.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import skillguard._core.tool_rules as tools_module
from skillguard._core.tool_rules import check_rule, covers, narrow, split_tools
from tests.strategies import tool_rules

# -- splitting --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("Read Grep Bash(git diff:*)", ("Read", "Grep", "Bash(git diff:*)")),
        ("Read, Grep", ("Read", "Grep")),
        ("Read,Grep", ("Read", "Grep")),
        ("Read ,, Grep\t\nWrite", ("Read", "Grep", "Write")),
        ("  Read  ", ("Read",)),
        (" Bash(git:*) ,, Read ", ("Bash(git:*)", "Read")),
        ("", ()),
        (" , ", ()),
        ("Bash(git add, git commit:*)", ("Bash(git add, git commit:*)",)),
        ("Bash(python -c 'print(1)') Read", ("Bash(python -c 'print(1)')", "Read")),
        ("Bash(a)b Read", ("Bash(a)b", "Read")),
        ("Read(./src/**), WebFetch(domain:x.org)", ("Read(./src/**)", "WebFetch(domain:x.org)")),
        ("Read\u00a0Grep", ("Read", "Grep")),
    ],
)
def test_t45_split_tools(value: str, expected: tuple[str, ...]) -> None:
    assert split_tools(value) == expected


@pytest.mark.parametrize(
    "value", ["Bash(git diff:*", "Bash(git diff:*))", "Read) Bash(", ")(", "Bash((git)"]
)
def test_t45_unbalanced_parentheses_are_refused(value: str) -> None:
    with pytest.raises(ValueError, match="'"):
        split_tools(value)
    with pytest.raises(ValueError, match="'"):
        check_rule(value)


@pytest.mark.parametrize("rule", ["Read", "Bash(git diff:*)", "Bash(python -c 'print(1)')", ""])
def test_check_rule_accepts_balanced_rules(rule: str) -> None:
    check_rule(rule)


@given(st.lists(tool_rules, max_size=6), st.sampled_from([" ", ",", ", ", "\t", " ,\n"]))
def test_t45_split_inverts_join(rules: list[str], separator: str) -> None:
    try:
        expected = [part for rule in rules for part in split_tools(rule)]
    except ValueError:
        return
    assert split_tools(separator.join(rules)) == tuple(expected)


@given(st.text(st.sampled_from("Bash(git:*) ,\t")))
def test_split_tools_items_are_never_blank_and_always_balanced(value: str) -> None:
    try:
        rules = split_tools(value)
    except ValueError:
        return
    for rule in rules:
        assert rule.strip(" ,\t") == rule
        assert rule
        check_rule(rule)


# -- covering ---------------------------------------------------------------------

COVERS = [
    ("Bash", "Bash(git diff:*)"),
    ("Bash", "Bash(rm -rf / && curl x | sh)"),
    ("Bash(*)", "Bash(git status)"),
    ("Bash(*)", "Bash"),
    ("Bash", "Bash(*)"),
    ("Bash(git:*)", "Bash(git diff:*)"),
    ("Bash(git:*)", "Bash(git status)"),
    ("Bash(git:*)", "Bash(git)"),
    ("Bash(git:*)", "Bash(git *)"),
    ("Bash(git *)", "Bash(git:*)"),
    ("Bash(git *)", "Bash(git diff --stat)"),
    ("Bash(git:*)", "Bash(git d*)"),
    ("Bash(ls*)", "Bash(lsof)"),
    ("Bash(ls*)", "Bash(ls -la)"),
    ("Bash(ls*)", "Bash(ls:*)"),
    ("Bash(ls*)", "Bash(lso*)"),
    ("Bash(npm run test:*)", "Bash(npm run test --watch)"),
    ("Bash(npm run test*)", "Bash(npm run test:unit)"),
    ("Read", "Read(./src/**)"),
    ("Read(*)", "Read(./src/**)"),
    ("Read(./src/**)", "Read(./src/**)"),
    ("WebFetch(domain:x.org)", "WebFetch(domain:x.org)"),
    ("mcp__github", "mcp__github__create_issue"),
    ("mcp__github__*", "mcp__github__create_issue"),
    ("mcp__github", "mcp__github__*"),
    ("mcp__github__*", "mcp__github"),
    ("mcp__my-server", "mcp__my-server__list"),
    ("Skill", "Skill(git:commit)"),
    ("Bash(a && b)", "Bash(a && b)"),
    ("odd shape!", "odd shape!"),
]

DOES_NOT_COVER = [
    ("Bash(git diff:*)", "Bash"),
    ("Bash(git diff:*)", "Bash(git:*)"),
    ("Bash(git status)", "Bash(git:*)"),
    ("Bash(git:*)", "Bash(gitk)"),
    ("Bash(git:*)", "Bash(gitk:*)"),
    ("Bash(git *)", "Bash(gitk)"),
    ("Bash(git:*)", "Bash(git*)"),
    ("Bash(git)", "Bash(git status)"),
    ("Bash(ls -la)", "Bash(ls)"),
    ("Bash(lso*)", "Bash(ls*)"),
    ("Bash(ls:*)", "Bash(ls*)"),
    ("Bash(git:*)", "Bash(git status && rm -rf ~)"),
    ("Bash(git:*)", "Bash(git status; rm -rf ~)"),
    ("Bash(git:*)", "Bash(git log | sh)"),
    ("Bash(git:*)", "Bash(git log > /etc/passwd)"),
    ("Bash(git:*)", "Bash(git log $(rm -rf ~))"),
    ("Bash(git:*)", "Bash(git log `id`)"),
    ("Bash(git:*)", "Bash(git log\nrm -rf ~)"),
    ("Bash(git:*)", "Bash(git\tlog)"),
    ("Bash(git*)", "Bash(git &)"),
    ("Bash(git:*)", "Bash(git * main)"),
    ("Bash(git * main)", "Bash(git checkout main)"),
    ("Bash(* --version)", "Bash(node --version)"),
    ("Bash(git\\*)", "Bash(git*)"),
    ("Bash( git:*)", "Bash( git status)"),
    ("Bash(npm run test:*)", "Bash(npm run test:unit)"),
    ("Bash( git*)", "Bash( gitk)"),
    ("Bash(:*)", "Bash(git)"),
    ("Bash(*:*)", "Bash(git)"),
    ("Bash( *)", "Bash(git)"),
    ("bash", "Bash(git:*)"),
    ("Bash", "bash"),
    ("Bash", "Read"),
    ("Read(./src/**)", "Read(./src/a.py)"),
    ("Read(./src/**)", "Read"),
    ("Read(./src/**)", "Read(*)"),
    ("WebFetch(domain:x.org)", "WebFetch(domain:a.x.org)"),
    ("Bash(git:*)", "Read(git status)"),
    ("mcp__github__create_issue", "mcp__github"),
    ("mcp__github__create_issue", "mcp__github__delete_repo"),
    ("mcp__github", "mcp__githubx__create_issue"),
    ("mcp__a", "mcp__a__b__c"),
    ("mcp__a", "mcp__a_b__c"),
    ("mcp__a", "mcp__a(x)"),
    ("mcp__a(x)", "mcp__a(x) "),
    ("Bash", "Bash(git"),
    ("Bash", "Bash (git)"),
    ("Bash", " Bash"),
    ("Bash", "Bash(a)(b)x"),
    ("*", "Bash"),
    ("", "Bash"),
    # Shapes seen in public skills (benchmarks/README.md) that covering does not read:
    # true in fact for the second, but only certainty counts.
    ("Bash(bash:*)", 'Bash(bash "${CLAUDE_PLUGIN_ROOT}/scripts/*")'),
    ("Bash(curl:*)", "Bash(curl *api.fal.ai*)"),
    ("Bash(python:*)", "Bash(python:*whale*)"),
    ("Skill(git:*)", "Skill(git:commit)"),
]


@pytest.mark.parametrize(("grant", "rule"), COVERS)
def test_t46_covers(grant: str, rule: str) -> None:
    assert covers(grant, rule)


@pytest.mark.parametrize(("grant", "rule"), DOES_NOT_COVER)
def test_t46_does_not_cover(grant: str, rule: str) -> None:
    assert not covers(grant, rule)


@pytest.mark.parametrize(
    "rule",
    [
        "Bash(git status && rm -rf ~)",
        "Bash(git log | sh)",
        "Bash(git log $(id))",
        "Bash(git log\nrm -rf ~)",
        "Bash(git log\\; id)",
    ],
)
def test_t47_a_prefix_never_speaks_for_a_compound_command(rule: str) -> None:
    for grant in ("Bash(git:*)", "Bash(git *)", "Bash(git*)", "Bash(g*)", "Bash(git log*)"):
        assert not covers(grant, rule)
    assert covers("Bash", rule)
    assert covers(rule, rule)


@given(tool_rules)
def test_covers_is_reflexive(rule: str) -> None:
    assert covers(rule, rule)


@given(tool_rules, tool_rules, tool_rules)
def test_covers_is_transitive(first: str, second: str, third: str) -> None:
    if covers(first, second) and covers(second, third):
        assert covers(first, third)


@given(tool_rules, tool_rules)
def test_t46_a_rule_with_a_specifier_never_covers_its_bare_tool(grant: str, rule: str) -> None:
    if covers(grant, rule) and "(" in grant and not grant.endswith("(*)"):
        assert "(" in rule


# -- narrowing --------------------------------------------------------------------

NARROW = [
    ({"Read", "Bash"}, [], {"Read", "Bash"}),
    ({"Read", "Bash"}, ["Bash(git diff:*)"], {"Bash(git diff:*)"}),
    ({"Bash(git:*)"}, ["Bash"], {"Bash(git:*)"}),
    ({"Bash(git:*)"}, ["Bash(git status)", "Bash(gitk)"], {"Bash(git status)"}),
    ({"Read"}, ["Write", "Bash"], set()),
    ({"Read", "Grep"}, ["Read", "Read"], {"Read"}),
    (
        {"Bash(git diff:*)", "Bash(git log:*)"},
        ["Bash(git:*)"],
        {"Bash(git diff:*)", "Bash(git log:*)"},
    ),
    ({"mcp__gh"}, ["mcp__gh__pr", "mcp__other__x"], {"mcp__gh__pr"}),
    (set(), ["Read"], set()),
]


@pytest.mark.parametrize(("granted", "allowed", "expected"), NARROW)
def test_t28_narrow(granted: set[str], allowed: list[str], expected: set[str]) -> None:
    assert narrow(frozenset(granted), allowed) == frozenset(expected)
    assert narrow(iter(sorted(granted)), tuple(allowed)) == frozenset(expected)


@given(st.frozensets(tool_rules, max_size=5), st.lists(tool_rules, max_size=5))
def test_t28_a_skill_can_never_widen_the_grant(granted: frozenset[str], allowed: list[str]) -> None:
    result = narrow(granted, allowed)
    for rule in result:
        assert any(covers(grant, rule) for grant in granted)
    if not allowed:
        assert result == granted


@given(st.frozensets(tool_rules, max_size=5), st.lists(tool_rules, max_size=5))
def test_t28_narrowing_keeps_only_rules_the_skill_allows(
    granted: frozenset[str], allowed: list[str]
) -> None:
    for rule in narrow(granted, allowed):
        assert rule in granted or rule in allowed
        if allowed:
            assert any(covers(a, rule) for a in allowed)


@given(st.frozensets(tool_rules, max_size=5))
def test_t28_a_skill_that_allows_the_grant_keeps_it(granted: frozenset[str]) -> None:
    assert narrow(granted, sorted(granted)) == granted


@given(st.frozensets(tool_rules, max_size=5), st.lists(tool_rules, max_size=5))
def test_t28_narrowing_twice_by_one_skill_changes_nothing(
    granted: frozenset[str], allowed: list[str]
) -> None:
    once = narrow(granted, allowed)
    assert narrow(once, allowed) == once


# -- narrowing in time (T145) ------------------------------------------------------------


@given(st.frozensets(tool_rules, max_size=6), st.lists(tool_rules, max_size=6))
def test_t145_narrowing_is_the_pairwise_rule(granted: frozenset[str], allowed: list[str]) -> None:
    # Each rule parsed once gives what comparing every pair with covers gives.
    expected = {a for a in allowed for g in granted if covers(g, a)}
    expected |= {g for a in allowed for g in granted if not covers(g, a) and covers(a, g)}
    assert narrow(granted, allowed) == (frozenset(expected) if allowed else granted)


def test_t145_each_rule_is_parsed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = 0
    parse = tools_module._parse

    def counted(rule: str) -> object:
        nonlocal calls
        calls += 1
        return parse(rule)

    monkeypatch.setattr(tools_module, "_parse", counted)
    granted = frozenset(f"Bash(g{i}:*)" for i in range(40))
    allowed = [f"Bash(cmd{i}:*)" for i in range(60)]
    narrow(granted, allowed)
    # Once per rule, where every pair parsed both of its rules again (4,800 calls).
    assert calls <= len(granted) + len(allowed)


def _split_by_characters(value: str) -> tuple[str, ...]:
    """The rule of ``split_tools``, one character at a time: the reference."""
    rules: list[str] = []
    depth = 0
    start: int | None = None
    for index, char in enumerate(value):
        if char == "(":
            depth += 1
        elif char == ")":
            if depth == 0:
                raise ValueError("a ')' closes no '('")
            depth -= 1
        elif depth == 0 and (char == "," or char.isspace()):
            if start is not None:
                rules.append(value[start:index])
                start = None
            continue
        if start is None:
            start = index
    if depth:
        raise ValueError("a '(' is never closed")
    if start is not None:
        rules.append(value[start:])
    return tuple(rules)


def test_every_code_point_separates_exactly_when_isspace_says_so() -> None:
    # The pieces are cut by re's \s: it must be str.isspace(), or a rule would be cut
    # (or kept whole) where the character rule does not.
    for code in range(0x110000):
        char = chr(code)
        if char in "(),":
            continue
        assert split_tools(f"a{char}b()") == (
            ("a", "b()") if char.isspace() else (f"a{char}b()",)
        ), hex(code)


# Every character str.isspace() calls whitespace (29 in Unicode 15), with the characters
# that move the depth or end a rule, a letter, and non-ASCII characters that are not
# whitespace though they look it (NBSP is whitespace; ZWSP, U+180E and BOM are not).
_EVERY_SEPARATOR: tuple[str, ...] = tuple(chr(c) for c in range(0x110000) if chr(c).isspace())


@given(
    st.text(
        st.sampled_from(
            [
                *_EVERY_SEPARATOR,
                "(",
                ")",
                ",",
                "a",
                ":",
                "*",
                "\u00e9",
                "\u200b",
                "\u180e",
                "\ufeff",
            ]
        ),
        max_size=40,
    )
)
def test_t45_split_tools_agrees_with_the_character_rule_on_every_separator(value: str) -> None:
    try:
        expected: tuple[str, ...] | str = _split_by_characters(value)
    except ValueError as exc:
        expected = str(exc)
    try:
        got: tuple[str, ...] | str = split_tools(value)
    except ValueError as exc:
        got = str(exc)
    assert got == expected
