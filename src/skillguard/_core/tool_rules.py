"""Tool rules: how ``allowed-tools`` is split, and when one rule covers another.

A tool rule has the shape of a Claude Code permission rule: ``Tool`` (every use of the
tool) or ``Tool(specifier)`` (some uses of it). This module is pure and sans-IO; it
holds the three decisions skillguard makes about rules (threat-model.md T28, T45-T47).

Splitting (:func:`split_tools`). The string form of ``allowed-tools`` is split on
whitespace and commas *outside* parentheses only, so ``Read, Bash(git diff:*)`` is two
rules, not three. Runs of separators are one separator. Parentheses may nest when they
balance (``Bash(python -c "print(1)")``); an unbalanced ``(`` or ``)`` makes the whole
value unreadable, and :func:`split_tools` raises ``ValueError`` rather than guess where
a rule ends (a guess could turn one narrow rule into a bare, wide tool name).

Covering (:func:`covers`). ``covers(grant, rule)`` is true when every use that *rule*
permits is a use that *grant* permits. It answers true only when that is certain; any
shape not listed here covers nothing but itself. The rules, in order:

1. Every rule covers itself (the same string).
2. A rule that is not ``Name`` or ``Name(specifier)``, with a name of ASCII letters,
   digits, ``_`` and ``-`` that starts with a letter, covers only itself.
3. Tool names are compared exactly (``bash`` is not ``Bash``); different tools never
   cover each other.
4. ``Tool`` and ``Tool(*)`` cover every rule of that tool; a rule with a specifier
   never covers the bare tool.
5. MCP tools: ``mcp__server`` and ``mcp__server__*`` cover every ``mcp__server__tool``.
   A server or tool name holding ``__`` is ambiguous and covers only itself.
6. ``Bash`` specifiers have four shapes:

   - ``cmd``: that exact command line;
   - ``prefix:*`` (legacy) and ``prefix *``: ``prefix`` alone or followed by a space
     and anything, a word boundary (``Bash(git:*)`` covers ``Bash(git diff:*)`` and
     ``Bash(git status)``, never ``Bash(gitk)``);
   - ``prefix*`` (no space): any command line that starts with ``prefix``, with no
     word boundary (``Bash(ls*)`` covers ``Bash(lsof)``);
   - anything else (a ``*`` elsewhere, two of them, a blank prefix, a backslash
     escape): only itself.

   A specifier that holds a shell operator or grouping character (``; & | < > $ ( )``,
   a backtick, a backslash, a tab or a line break) is covered only by itself or by the
   whole tool: Claude Code checks each part of a compound command on its own, so a
   prefix rule cannot be trusted to speak for everything after ``&&``.
7. The specifiers of other tools (paths for ``Read`` and ``Edit``, ``domain:`` for
   ``WebFetch``) have matching rules of their own that skillguard does not copy: such a
   specifier covers only the identical specifier.

Narrowing (:func:`narrow`). A skill's ``allowed-tools`` narrows an agent's grant and can
never widen it: for each pair of a granted rule and an allowed rule, the narrower of
the two is kept when one covers the other, and nothing else. Every rule in the result
is covered by some granted rule.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

__all__ = ["check_rule", "covers", "narrow", "split_tools"]

_ALL: Final = "all"  # every use of the tool
_EXACT: Final = "exact"  # one specifier, compared as a string
_WORD: Final = "word"  # a Bash prefix with a word boundary
_RAW: Final = "raw"  # a Bash prefix without a word boundary
_SEALED: Final = "sealed"  # covered only by itself or the whole tool

# A rule is a tool name, then nothing or a parenthesised specifier: the name is matched
# here and the parentheses checked by hand, so no pattern ever scans for the closing
# ")" from each "(" of a hostile rule (T140).
_TOOL_NAME_RE: Final = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
# One MCP name segment: no empty part and no "__", which would make the split between
# server and tool ambiguous.
_MCP_SEGMENT: Final = r"[A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*"
_MCP_RE: Final = re.compile(rf"mcp__({_MCP_SEGMENT})(?:__({_MCP_SEGMENT}|\*))?")
# Whitespace as str.split() and str.isspace() see it (re's \s for str patterns), and commas.
_SEPARATORS_RE: Final = re.compile(r"([\s,]+)")
_PARENS_RE: Final = re.compile(r"[()]")
_SHELL_SPECIAL: Final = frozenset(";&|<>$()`\\\t\n\r\v\f")


class _Rule(NamedTuple):
    tool: str
    kind: str
    text: str


def split_tools(value: str) -> tuple[str, ...]:
    """Split the string form of ``allowed-tools`` into rules.

    Separators are whitespace and commas outside parentheses; runs of them are one
    separator, so no rule is ever empty. Raises ``ValueError`` when the parentheses do
    not balance.
    """
    if "(" not in value and ")" not in value:
        return tuple(value.replace(",", " ").split())
    # The pieces between runs of separators are cut in C; a piece with a parenthesis
    # moves the depth (only its parentheses are read), and a run of separators ends a
    # rule only outside parentheses.
    rules: list[str] = []
    depth = 0
    start = -1  # where the rule being read starts, or -1 between rules
    position = 0
    for index, piece in enumerate(_SEPARATORS_RE.split(value)):
        if index % 2:  # a run of separators
            if not depth and start >= 0:
                rules.append(value[start:position])
                start = -1
        elif piece:
            if start < 0:
                start = position
            if "(" in piece or ")" in piece:
                depth = _depth_after(piece, depth)
        position += len(piece)
    if depth:
        raise ValueError("a '(' is never closed")
    if start >= 0:
        rules.append(value[start:])
    return tuple(rules)


def check_rule(rule: str) -> None:
    """Raise ``ValueError`` unless the parentheses of one rule balance."""
    if _depth_after(rule, 0):
        raise ValueError("a '(' is never closed")


def _depth_after(text: str, depth: int) -> int:
    """The parenthesis depth after *text*, entered at *depth* (only its parentheses are
    read); ``ValueError`` at a ``)`` that closes no ``(``."""
    for paren in _PARENS_RE.findall(text):
        if paren == "(":
            depth += 1
        elif depth == 0:
            raise ValueError("a ')' closes no '('")
        else:
            depth -= 1
    return depth


def covers(grant: str, rule: str) -> bool:
    """Whether every use that *rule* permits is a use that *grant* permits.

    The matching rules are in this module's docstring; any shape they do not name
    covers only itself.
    """
    return grant == rule or _covers(_parse(grant), _parse(rule))


def _covers(wide: _Rule | None, narrow_: _Rule | None) -> bool:
    """``covers`` for two rules already parsed, other than equal."""
    if wide is None or narrow_ is None or wide.tool != narrow_.tool:
        return False
    if wide.kind == _ALL:
        return True
    if narrow_.kind == _ALL or _SEALED in (wide.kind, narrow_.kind):
        return False
    if wide.kind == _EXACT:
        return narrow_.kind == _EXACT and narrow_.text == wide.text
    if wide.kind == _RAW:
        return narrow_.text.startswith(wide.text)
    # A word-boundary prefix: the prefix itself, or the prefix, a space and more. A
    # raw prefix rule also matches its prefix followed by anything, so it is covered
    # only when the space is already part of it.
    if narrow_.kind != _RAW and narrow_.text == wide.text:
        return True
    return narrow_.text.startswith(wide.text + " ")


def narrow(granted: frozenset[str] | Iterable[str], allowed: Sequence[str]) -> frozenset[str]:
    """The rules of *granted* narrowed by a skill's *allowed* rules, never widened.

    An empty *allowed* means the skill does not narrow: the grant is returned as it is.
    Otherwise, for each granted rule and each allowed rule, the allowed rule is kept
    when the grant covers it, the granted rule is kept when the allowed rule covers
    it, and nothing else is kept.
    """
    grant = frozenset(granted)
    if not allowed:
        return grant
    # Each rule parsed once, not once per pair: a skill's 700 rules against a grant of
    # 100 are 70,000 pairs (threat-model.md T145).
    parsed = {rule: _parse(rule) for rule in (*grant, *allowed)}
    kept: set[str] = set()
    for allowed_rule in allowed:
        narrow_ = parsed[allowed_rule]
        for granted_rule in grant:
            wide = parsed[granted_rule]
            if granted_rule == allowed_rule or _covers(wide, narrow_):
                kept.add(allowed_rule)
            elif _covers(narrow_, wide):
                kept.add(granted_rule)
    return frozenset(kept)


def _parse(rule: str) -> _Rule | None:
    mcp = _MCP_RE.fullmatch(rule)
    if mcp is not None:
        server, tool = mcp.groups()
        if tool is None or tool == "*":
            return _Rule("mcp__" + server, _ALL, "")
        return _Rule("mcp__" + server, _EXACT, tool)
    match = _TOOL_NAME_RE.match(rule)
    if match is None:
        return None
    name, rest = match.group(), rule[match.end() :]
    specifier: str | None = None
    if rest:
        if len(rest) < 2 or rest[0] != "(" or rest[-1] != ")":
            return None
        specifier = rest[1:-1]
    if name.startswith("mcp__"):
        # Not a shape the MCP pattern above reads (a specifier, an ambiguous "__").
        return None
    if specifier is None or specifier == "*":
        return _Rule(name, _ALL, "")
    if name != "Bash":
        return _Rule(name, _EXACT, specifier)
    kind, text = _bash(specifier)
    return _Rule(name, kind, text)


def _bash(specifier: str) -> tuple[str, str]:
    if not _SHELL_SPECIAL.isdisjoint(specifier):
        return _SEALED, specifier
    stars = specifier.count("*")
    if stars == 0:
        return _EXACT, specifier
    if stars > 1 or not specifier.endswith("*"):
        return _SEALED, specifier
    if specifier.endswith((":*", " *")):
        prefix = specifier[:-2]
        if prefix and prefix == prefix.strip():
            return _WORD, prefix
        return _SEALED, specifier
    prefix = specifier[:-1]
    if prefix and prefix == prefix.lstrip():
        return _RAW, prefix
    return _SEALED, specifier
