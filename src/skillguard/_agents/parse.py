"""The fail-secure agent file parser: bytes in, a frozen ``AgentDefinition`` out.

Sans-IO, like ``_parse.parse_skill`` (threat-model.md T70), and through the same
pipeline: the size cap before decoding, strict UTF-8 (one BOM removed, CRLF read as
LF), line-anchored ``---`` fences, the one YAML entry point (``_yaml.load_document``)
and the character rules of T8 (``_text.find_hidden``).

Fields (the frontmatter):

* ``name`` and ``description`` are required, non-blank strings. ``name`` is a display
  string ("C# Expert"), never a path: an agent is identified by its file name.
* ``tools`` is a list of strings, or a string split by ``_tools.split_tools`` (the
  tokenizer of ``allowed-tools``: commas and blanks outside parentheses).
* ``model`` is an optional string, or a non-empty list of strings (Copilot's models
  in order of preference): ``model`` is then the first and ``models`` all of them.
* ``name``, ``model`` and each ``tools`` entry are one line: a line break or a tab in
  one is ``not_one_line`` (T118).
* Every other key is kept as inert data in ``extra``; the keys the harnesses document
  (``HARNESS_KEYS``) give no warning, any other key an ``unknown_field`` warning.

Body sections (only ATX ``##`` headings count; a line inside a fenced code block,
opened by three or more backticks or tildes, is never a heading, item or directive;
an H2 section ends at the next H1 or H2 heading):

* ``persona``: the text of the first H2 titled ``Persona``, or else of the first H2
  whose title contains ``persona``; titles compare case-insensitively. Without
  either, the description. Leading and trailing blank lines are removed.
* ``core_knowledge``: every line of the first ``## Core Knowledge`` section of the
  form ``Read <path>``, after an optional list marker, kept as written from ``Read``
  on (trailing blanks removed).
* ``rules``: the items of the *last* H2 titled ``Rules``: lines starting with ``-``,
  ``*``, ``+`` or a number and ``.`` or ``)``, markers stripped. A non-blank line
  right after an item (no blank line between) that is neither an item nor a heading
  continues it, joined with one space.
* ``full_body``: everything after the closing fence, unchanged.

A character that hides or reorders text in the body (a line or paragraph separator
among them), or a control that some readers take for a line break (T115), is refused
under the ``strict`` profile, with its line and column, and reported by a
``hidden_character`` warning under ``compat``; the envelope then
shows it escaped (``_text.reveal``), never raw (T71). The check is the skills' own
(``_skills.document.hidden_in_body``), so the two bodies follow one rule.

``parse_agent`` returns an ``AgentDefinition`` or raises ``MalformedSkillError`` (and
``SkillUsageError`` for bad arguments); any other exception is a bug.
"""

from __future__ import annotations

import hashlib
import re
from bisect import bisect_right
from itertools import accumulate, repeat
from operator import add
from typing import TYPE_CHECKING, Final

import attrs

from skillguard._core.errors import MalformedSkillError, safe_repr
from skillguard._core.model import EMPTY_MAP, FrozenMap, Profile, SkillWarning, YamlValue
from skillguard._core.text import find_hidden
from skillguard._core.tool_rules import check_rule, split_tools
from skillguard._skills.document import hidden_in_body, read_document

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

    from skillguard._core.limits import Limits
    from skillguard._core.strict_yaml import KeyLines

__all__ = ["AGENT_NAME_MAX", "HARNESS_KEYS", "AgentDefinition", "parse_agent"]

# A display name ("C# Expert"), not an identifier: bounded so that a catalog line stays
# a line. The longest of the public agent files measured is under 60 characters.
AGENT_NAME_MAX: Final = 128
_CORE_FIELDS: Final = frozenset({"name", "description", "tools", "model"})
# The frontmatter keys the harnesses document for their agent files; they are kept as
# inert data without a warning.
HARNESS_KEYS: Final = frozenset(
    {
        # Claude Code subagents.
        "disallowedTools",
        "permissionMode",
        "maxTurns",
        "skills",
        "mcpServers",
        "hooks",
        "memory",
        "color",
        "background",
        "isolation",
        "effort",
        "initialPrompt",
        # GitHub Copilot custom agents (*.agent.md).
        "target",
        "argument-hint",
        "metadata",
        "handoffs",
        "mcp-servers",
        "infer",
        "disable-model-invocation",
        "user-invocable",
        "user-invokable",
        "agents",
        "hidden",
        # Gemini CLI subagents.
        "kind",
        "temperature",
        "max_turns",
        "timeout_mins",
        # OpenCode agents.
        "mode",
        "top_p",
        "permission",
        "disable",
        "prompt",
        "steps",
        "maxSteps",
    }
)


@attrs.frozen(kw_only=True)
class AgentDefinition:
    """An agent file that passed every check, as immutable data.

    Built only by :func:`parse_agent`. ``tools`` is ``None`` when the file declares
    no ``tools`` (the harnesses then give the agent every tool it may have); ``sha256``
    and ``size`` describe the exact bytes parsed; ``models`` is every model the file
    names, in its order (``model`` is the first). ``extra`` holds every other
    frontmatter key as inert data.
    """

    name: str
    description: str
    tools: tuple[str, ...] | None
    model: str | None
    persona: str
    core_knowledge: tuple[str, ...]
    rules: tuple[str, ...]
    full_body: str
    sha256: str
    size: int
    models: tuple[str, ...] = ()
    extra: Mapping[str, YamlValue] = EMPTY_MAP
    warnings: tuple[SkillWarning, ...] = ()


def parse_agent(
    raw: bytes, *, limits: Limits | None = None, profile: Profile = "strict"
) -> AgentDefinition:
    """Parse the untrusted bytes of one agent definition file.

    Returns a frozen :class:`AgentDefinition`. Raises :class:`MalformedSkillError`
    when the bytes are not a valid agent file (``limits.max_skill_bytes`` caps the
    file), and :class:`SkillUsageError` when the arguments are wrong. Any other
    exception is a bug.
    """
    # The same checks, decoder, fences and YAML entry point as a SKILL.md (T70).
    fields, lines, body, body_line = read_document(raw, limits, profile)
    return _build(fields, lines, body, body_line, raw, profile)


class _Check:
    __slots__ = ("compat", "fields", "lines", "warnings")

    def __init__(self, fields: dict[str, YamlValue], lines: KeyLines, profile: Profile) -> None:
        self.fields = fields
        self.lines = lines
        self.compat = profile == "compat"
        self.warnings: list[SkillWarning] = []

    def error(self, code: str, reason: str, key: str) -> MalformedSkillError:
        return MalformedSkillError(code, reason, key=key, line=self.lines.get(key))

    def visible(self, value: str, key: str) -> None:
        if value.isascii():  # every character the rules refuse is non-ASCII
            return
        found = find_hidden(value)
        if found is not None:
            raise self.error(
                "forbidden_character",
                f"{key!r} holds the invisible or bidirectional character U+{ord(found[1]):04X}",
                key,
            )

    def one_line(self, value: str, key: str) -> None:
        # A name, a model and a tool rule are one line wherever they are shown (a
        # catalog, a prompt, a harness's settings, a report lane): a YAML escape or a
        # block scalar could otherwise start a heading or a rule of its own in the
        # orchestrator's prompt (T118).
        if "\n" in value or "\t" in value:
            raise self.error(
                "not_one_line", f"{key!r} must be one line: it holds a line break or a tab", key
            )

    def text(self, key: str) -> str:
        value = self.fields[key]
        if not isinstance(value, str):
            raise self.error("wrong_type", f"{key!r} must be a string", key)
        self.visible(value, key)
        if not value.strip():
            raise self.error("empty_field", f"{key!r} must not be blank", key)
        return value

    def tools(self) -> tuple[str, ...]:
        value = self.fields["tools"]
        items: tuple[str, ...]
        if isinstance(value, str):
            self.visible(value, "tools")
            try:
                items = split_tools(value)
            except ValueError as exc:
                raise self.error(
                    "malformed_tools", f"'tools' is not a list of tool rules: {exc}", "tools"
                ) from exc
            for item in items:
                self.one_line(item, "tools")
            return items
        if not isinstance(value, tuple) or not all(isinstance(item, str) for item in value):
            raise self.error(
                "wrong_type", "'tools' must be a string of tool rules or a list of strings", "tools"
            )
        items = tuple(str(item).strip() for item in value)
        for item in items:
            self.visible(item, "tools")
            if not item:
                raise self.error("empty_field", "'tools' holds a blank entry", "tools")
            self.one_line(item, "tools")
            try:
                check_rule(item)
            except ValueError as exc:
                raise self.error(
                    "malformed_tools", f"'tools' is not a list of tool rules: {exc}", "tools"
                ) from exc
        return items

    def models(self) -> tuple[str, ...]:
        value = self.fields["model"]
        if isinstance(value, str):
            model = self.text("model")
            self.one_line(model, "model")
            return (model,)
        if not isinstance(value, tuple) or not value:
            raise self.error(
                "wrong_type", "'model' must be a string or a non-empty list of strings", "model"
            )
        for item in value:
            if not isinstance(item, str):
                raise self.error("wrong_type", "'model' must list strings only", "model")
            self.visible(item, "model")
            if not item.strip():
                raise self.error("empty_field", "'model' holds a blank entry", "model")
            self.one_line(item, "model")
        return tuple(str(item) for item in value)

    def body(self, body: str, first_line: int, source: bytes) -> None:
        # The skills' body rule, shared so that the two can never drift apart.
        found = hidden_in_body(body, first_line, source=source)
        if found is None:
            return
        code, line, column, what = found
        if not self.compat:
            raise MalformedSkillError(code, what, line=line, column=column)
        self.warnings.append(
            SkillWarning(
                "hidden_character",
                f"line {line}, column {column}: {what}; the envelope shows it escaped",
                line=line,
                column=column,
            )
        )

    def extra(self) -> FrozenMap:
        extra = {key: value for key, value in self.fields.items() if key not in _CORE_FIELDS}
        for key in extra:
            if key not in HARNESS_KEYS:
                self.warnings.append(
                    SkillWarning(
                        "unknown_field", f"unknown field {safe_repr(key)} kept as inert data", key
                    )
                )
        return FrozenMap(extra) if extra else EMPTY_MAP


def _build(
    fields: dict[str, YamlValue],
    lines: KeyLines,
    body: str,
    body_line: int,
    raw: bytes,
    profile: Profile,
) -> AgentDefinition:
    for required in ("name", "description"):
        if required not in fields:
            raise MalformedSkillError(
                "missing_field", f"the required field {required!r} is missing", key=required
            )
    check = _Check(fields, lines, profile)
    name = check.text("name")
    if len(name) > AGENT_NAME_MAX:
        raise check.error(
            "field_too_long", f"'name' is longer than {AGENT_NAME_MAX} characters", "name"
        )
    check.one_line(name, "name")
    description = check.text("description")
    tools = check.tools() if "tools" in fields else None
    models = check.models() if "model" in fields else ()
    check.body(body, body_line, raw)
    sections = _Sections(body)
    persona = _persona(sections)
    return AgentDefinition(
        name=name,
        description=description,
        tools=tools,
        model=models[0] if models else None,
        models=models,
        persona=description if persona is None else persona,
        core_knowledge=_core_knowledge(sections),
        rules=_rules(sections),
        full_body=body,
        sha256=hashlib.sha256(raw).hexdigest(),
        size=len(raw),
        extra=check.extra(),
        warnings=tuple(check.warnings),
    )


# -- body sections ------------------------------------------------------------------
#
# The body is read by three patterns, each searched from a "\n" (a literal the regex
# engine skips ahead to; the text searched gets one in front): every line that can
# matter is found in C, and Python sees only the headings, items and directives it
# keeps (threat-model.md T140). A fenced code block is taken whole, from its opening
# line to its closing line (the same character, at least as many, then blanks only)
# or to the end of the text; a backtick fence's info string holds no backtick. A
# section holds every fence it opens (a fence still open at its end would have hidden
# the heading that ends it), so each section is read on its own.

_FENCE: Final = (
    # The opening line, the lines that do not close the fence, and the closing line.
    "{open}(?:\n(?! {{0,3}}(?P={name}){char}*[ \t]*(?:\n|\\Z))[^\n]*)*"
    "(?:\n {{0,3}}(?P={name}){char}*[ \t]*(?=\n|\\Z))?"
)
_FENCES: Final = (
    _FENCE.format(open="(?P<tick>`{3,})(?!`)[^`\n]*(?=\n|\\Z)", name="tick", char="`")
    + "|"
    + _FENCE.format(open="(?P<tilde>~{3,})[^\n]*", name="tilde", char="~")
)
# An H1 or H2 heading (the title is what follows the blank), or a fenced block, whole,
# so that the body can be split around them (the pieces put back make a section).
_BLOCK_RE: Final = re.compile(
    f"\n(?: {{0,3}}(?P<level>##?)(?:[ \t](?P<title>[^\n]*))?(?=\n|\\Z)"
    f"|(?P<fence> {{0,3}}(?:{_FENCES})))"
)
# Where a match's groups are in what split returns: [text, *groups, text, ...].
_STRIDE: Final = _BLOCK_RE.groups + 1
_LEVEL: Final = _BLOCK_RE.groupindex["level"]
_TITLE: Final = _BLOCK_RE.groupindex["title"]
_FENCE_TEXT: Final = _BLOCK_RE.groupindex["fence"]
_MARKER: Final = r"(?:[-*+]|\d{1,9}[.)])"
_ITEM: Final = rf"[ \t]*{_MARKER}[ \t]+"
# A rule item and the lines that continue it (each next line that is not blank, an
# item, a heading or the opening line of a fence), or a fenced block.
_RULE_RE: Final = re.compile(
    f"\n(?:{_ITEM}(?P<item>\\S[^\n]*)"
    f"(?P<more>(?:\n(?![^\\S\n]*(?:\n|\\Z)|{_ITEM}\\S| {{0,3}}(?:#{{1,6}}(?:[ \t]|\n|\\Z)"
    f"|`{{3,}}[^`\n]*(?:\n|\\Z)|~{{3,}}))[^\n]*)*)"
    f"| {{0,3}}(?:{_FENCES}))"
)
# A "Read" directive, after an optional list marker, or a fenced block.
_READ_RE: Final = re.compile(
    f"\n(?:[ \t]*(?:{_MARKER}[ \t]+)?(?P<read>Read[ \t]+\\S[^\n]*)| {{0,3}}(?:{_FENCES}))"
)


class _Sections:
    """The H2 sections of a body, in order (text before the first H2 is in none).

    The body is split around its headings and fenced blocks in C. The titles are
    searched in bulk (joined, casefolded once), so Python looks only at the headings
    whose title holds a name asked for, and at the pieces of the sections read.
    """

    __slots__ = ("count", "folded", "levels", "parts", "title_ends", "titles")

    def __init__(self, body: str) -> None:
        # "\n" in front: every match starts at the "\n" before its line.
        self.parts = _BLOCK_RE.split("\n" + body)
        self.levels: list[str | None] = self.parts[_LEVEL::_STRIDE]
        self.titles: list[str | None] = self.parts[_TITLE::_STRIDE]
        self.count = len(self.levels)
        # Every title (a fenced block's missing one reads "none"), each followed by a
        # NUL (which no body holds), casefolded; where each ends is worked out only
        # when some title holds a name asked for.
        self.folded = "\x00".join(map(str, self.titles)).casefold() + "\x00"
        self.title_ends: list[int] | None = None

    def text(self, index: int) -> str:
        """The text of the section whose heading is match *index*: the pieces and
        fenced blocks up to the next heading, without the heading's own line break."""
        following = self._next_heading(index)
        # The pieces between the matches, and each fenced block with the line break
        # before it that its match took, alternately (slices and maps: C loops).
        pieces = self.parts[(index + 1) * _STRIDE : following * _STRIDE + 1 : _STRIDE]
        fences = self.parts[(index + 1) * _STRIDE + _FENCE_TEXT : following * _STRIDE : _STRIDE]
        joined: list[str] = [""] * (2 * len(pieces) - 1)
        joined[::2] = pieces
        joined[1::2] = map("\n".__add__, fences)
        return "".join(joined)[1:]

    def _next_heading(self, index: int) -> int:
        """The match index of the first heading after match *index*, or the count."""
        levels = self.levels
        # list.index searches in C; a level absent after *index* is counted past the end.
        return min(
            levels.index(level, index + 1) if level in levels[index + 1 :] else self.count
            for level in ("#", "##")
        )

    def titled(self, name: str, *, last: bool = False, within: bool = False) -> int | None:
        """The match index of the first (or *last*) H2 heading whose title is *name*,
        or holds it (*within*), compared case-insensitively; ``None`` when none is."""
        # A title is part of its raw title (what follows the blank), so a title that
        # holds *name* is in a raw title that holds it: only those are looked at.
        for index in self._holding(name, last=last):
            raw = self.titles[index]
            if self.levels[index] != "##" or raw is None:
                continue
            title = _heading_title(raw).casefold()
            if name in title if within else title == name:
                return index
        return None

    def _holding(self, name: str, *, last: bool) -> Iterator[int]:
        """The match index of each raw title that holds *name*, casefolded, in order
        (or in reverse order)."""
        folded = self.folded
        found = folded.rfind(name) if last else folded.find(name)
        if found < 0:
            return
        if self.title_ends is None:
            # Where each title's NUL is, in C: accumulated lengths, plus one each.
            lengths = map(len, folded[:-1].split("\x00"))
            self.title_ends = list(accumulate(map(add, lengths, repeat(1))))
        while found >= 0:
            index = bisect_right(self.title_ends, found)
            yield index
            if last:
                start = self.title_ends[index - 1] if index else 0
                found = folded.rfind(name, 0, start)
            else:
                found = folded.find(name, self.title_ends[index])


def _heading_title(rest: str | None) -> str:
    """The title of a heading, from what follows the blank after its run of '#':
    blanks around it and a closing run of '#' after a blank removed; a title of '#'
    characters only is kept as it is."""
    if not rest:
        return ""
    title = rest.strip(" \t")
    bare = title.rstrip("#")
    if bare != title and bare and bare[-1] in " \t":
        title = bare.rstrip(" \t")
    return title.strip()


def _persona(sections: _Sections) -> str | None:
    chosen = sections.titled("persona")
    if chosen is None:
        chosen = sections.titled("persona", within=True)
    if chosen is None:
        return None
    return sections.text(chosen).strip("\n").rstrip()


def _core_knowledge(sections: _Sections) -> tuple[str, ...]:
    chosen = sections.titled("core knowledge")
    if chosen is None:
        return ()
    # findall gives "" for the directive of a fenced block; a directive is never "".
    return tuple(
        [
            read.rstrip(" \t")
            for read, _tick, _tilde in _READ_RE.findall("\n" + sections.text(chosen))
            if read
        ]
    )


def _rules(sections: _Sections) -> tuple[str, ...]:
    chosen = sections.titled("rules", last=True)
    if chosen is None:
        return ()
    # findall gives "" for the item of a fenced block (an item is never ""). An item
    # and its continuation lines are each stripped and joined with one space, all in
    # C: every line stripped, the lines joined with a space, then each item stripped
    # where a NUL (which no body holds) parts it from the next.
    items = [
        item + more
        for item, more, _tick, _tilde in _RULE_RE.findall("\n" + sections.text(chosen))
        if item
    ]
    if not items:
        return ()
    lines = " ".join(map(str.strip, "\x00".join(items).split("\n")))
    return tuple(map(str.strip, lines.split("\x00")))
