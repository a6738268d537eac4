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

_HEADING_RE: Final = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*")
_FENCE_OPEN_RE: Final = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")
_ITEM_RE: Final = re.compile(r"[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+(\S.*)")
_READ_RE: Final = re.compile(r"[ \t]*(?:(?:[-*+]|\d{1,9}[.)])[ \t]+)?(Read[ \t]+\S.*?)[ \t]*")


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

    def body(self, body: str, first_line: int) -> None:
        # The skills' body rule, shared so that the two can never drift apart.
        found = hidden_in_body(body, first_line)
        if found is None:
            return
        code, line, column, what = found
        if not self.compat:
            raise MalformedSkillError(code, what, line=line, column=column)
        self.warnings.append(
            SkillWarning(
                "hidden_character",
                f"line {line}, column {column}: {what}; the envelope shows it escaped",
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
    check.body(body, body_line)
    sections = _sections(body)
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

# A line that can be a heading or a fence: '#', '`' or '~' after at most three spaces.
# Searched from its "\n" (a literal first character lets the regex engine skip ahead,
# four times faster than '^' with MULTILINE); the first line is matched on its own.
_MARKUP_FIRST_RE: Final = re.compile(r" {0,3}[#`~][^\n]*")
_MARKUP_NEXT_RE: Final = re.compile(r"\n( {0,3}[#`~][^\n]*)")


class _Section:
    """One H2 section: its title and where its text is in the body.

    The body is scanned once for the lines that can matter (a heading or a fence line
    starts with '#', '`' or '~' after at most three spaces); the lines of a section are
    split only for the few sections that are read.
    """

    __slots__ = ("body", "end", "fences", "start", "title")

    def __init__(self, title: str, body: str, start: int, fences: list[tuple[int, int]]) -> None:
        self.title = title
        self.body = body
        self.start = start
        self.end = len(body)
        self.fences = fences  # every fenced span of the body, shared by all sections

    def text(self) -> str:
        return self.body[self.start : self.end]

    def lines(self) -> list[tuple[str, bool]]:
        """Each line, with whether it is inside a fenced code block (never a heading,
        an item or a directive there)."""
        spans = [(s, e) for s, e in self.fences if s < self.end and e > self.start]
        out: list[tuple[str, bool]] = []
        offset = self.start
        for line in self.text().split("\n"):
            out.append((line, any(s <= offset < e for s, e in spans)))
            offset += len(line) + 1
        return out


def _markup_lines(body: str) -> Iterator[tuple[str, int, int]]:
    """Each line that can be a heading or a fence, with its start and end offsets."""
    first = _MARKUP_FIRST_RE.match(body)
    if first is not None:
        yield first.group(), 0, first.end()
    for match in _MARKUP_NEXT_RE.finditer(body):
        yield match.group(1), match.start(1), match.end(1)


def _sections(body: str) -> list[_Section]:
    """The H2 sections of *body*, in order; text before the first H2 is in none."""
    sections: list[_Section] = []
    fences: list[tuple[int, int]] = []
    current: _Section | None = None
    fence: tuple[str, int, int] | None = None  # character, length, start when open
    for line, line_start, line_end in _markup_lines(body):
        stripped = line.lstrip(" ")
        if fence is not None:
            char, length, start = fence
            if stripped.startswith(char * length) and not stripped.rstrip(" \t").strip(char):
                fences.append((start, line_end))
                fence = None
            continue
        opening = _FENCE_OPEN_RE.fullmatch(line)
        if opening is not None and not (opening.group(1)[0] == "`" and "`" in opening.group(2)):
            fence = (opening.group(1)[0], len(opening.group(1)), line_start)
            continue
        heading = _HEADING_RE.fullmatch(line)
        if heading is None or len(heading.group(1)) > 2:
            continue
        if current is not None:
            # The section ends before the newline that precedes this heading.
            current.end = line_start - 1
            current = None
        if len(heading.group(1)) == 2:
            start = min(line_end + 1, len(body))
            current = _Section((heading.group(2) or "").strip(), body, start, fences)
            sections.append(current)
    if fence is not None:
        fences.append((fence[2], len(body)))
    return sections


def _persona(sections: list[_Section]) -> str | None:
    chosen = next((s for s in sections if s.title.casefold() == "persona"), None)
    if chosen is None:
        chosen = next((s for s in sections if "persona" in s.title.casefold()), None)
    if chosen is None:
        return None
    return chosen.text().strip("\n").rstrip()


def _core_knowledge(sections: list[_Section]) -> tuple[str, ...]:
    chosen = next((s for s in sections if s.title.casefold() == "core knowledge"), None)
    if chosen is None:
        return ()
    found: list[str] = []
    for line, fenced in chosen.lines():
        if fenced:
            continue
        match = _READ_RE.fullmatch(line)
        if match is not None:
            found.append(match.group(1))
    return tuple(found)


def _rules(sections: list[_Section]) -> tuple[str, ...]:
    chosen = next((s for s in reversed(sections) if s.title.casefold() == "rules"), None)
    if chosen is None:
        return ()
    items: list[list[str]] = []
    open_item = False
    for line, fenced in chosen.lines():
        if fenced or not line.strip():
            open_item = False
            continue
        item = _ITEM_RE.fullmatch(line)
        if item is not None:
            items.append([item.group(1).strip()])
            open_item = True
        elif open_item and _HEADING_RE.fullmatch(line) is None:
            items[-1].append(line.strip())
        else:
            open_item = False
    return tuple(" ".join(parts) for parts in items)
