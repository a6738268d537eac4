"""Composable agent directories (seed 001): read beneath a held descriptor, compose, check.

Rules (threat-model.md T100-T106). An agent directory is ``<agent>/agent.md`` plus, per
harness, ``<harness>/frontmatter.json`` and optional ``<harness>/<section>.md``. A
repository controls every byte of it, and a harness will trust what is composed, so:

* Every read goes through ``SafeRoot`` (no symlink, FIFO or hard link), and every read
  has its own cap in ``ComposeLimits``, as do the number of harnesses and sections and
  the composed text (which is counted while it grows, so ten thousand includes of one
  large section are refused before they are built).
* ``agent.md`` has no frontmatter; ``frontmatter.json`` is strict JSON with the seed's
  closed schema (``name``, ``description``, ``tools`` required; ``model`` and
  ``argumentHint`` optional; any other key is an error).
* Tokens are substituted in a fixed order, each in one pass over the text, so that a
  replacement is never scanned by the pass that made it:

  1. ``{{SECTION:name}}``: ``name`` must be a slug (checked before any file is named,
     so ``{{SECTION:../x}}`` never reaches the file system), and the file must be in
     the harness folder. A section's own ``{{SECTION:}}`` is not expanded again: it is
     left over, and refused in step 4, so an include can never recurse.
  2. ``{{TOOL:name}}``: through the token map for this harness. An unknown tool is an
     error; a ``null`` tool is an error unless the caller asked to drop such tokens
     (then a ``dropped_null_tool`` warning). In ``tools``, an entry that is exactly a
     TOOL token is resolved the same way, and a ``null`` one is omitted.
  3. ``{{PATH:name}}``: through the token map; a name that is not in the map is kept
     as a path, which must be relative (no ``..``, not absolute).
  4. Any ``{{`` left over, in the body or in a frontmatter value, is an error: a
     token split across lines, or never closed, is refused like an unknown one.

* The frontmatter is emitted as YAML that is safe by construction: every scalar is
  double-quoted with every character that YAML could read otherwise escaped, ``tools``
  is a list (a comma-separated string for Claude's native dialect), keys in a fixed
  order. The composed bytes are then read back by ``parse_agent`` and must give the
  JSON's values exactly, or nothing is returned.
* The output is a pure function of the input bytes: the same directory gives
  byte-identical output.

Errors are ``MalformedSkillError``, ``SkillContainmentError`` and ``SkillNotFoundError``
for the directory's faults and ``SkillUsageError`` for the caller's; any other
exception is a bug.
"""

from __future__ import annotations

import hashlib
import os
import re
from typing import TYPE_CHECKING, Final, Literal

import attrs

from skillguard._errors import (
    MalformedSkillError,
    SkillContainmentError,
    SkillError,
    SkillUsageError,
    safe_repr,
)
from skillguard._fs import SafeRoot, operator_path
from skillguard._limits import Limits, _positive
from skillguard._model import SkillWarning
from skillguard._yaml import decode_utf8

from ._parse import parse_agent
from ._tokenmap import (
    EMPTY_TOKEN_MAP,
    SLUG,
    BasePath,
    TokenMap,
    check_relative,
    check_string,
    load_json_object,
)

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = [
    "AGENT_FILE",
    "DEFAULT_COMPOSE_LIMITS",
    "FRONTMATTER_FILE",
    "ComposeLimits",
    "ComposedAgent",
    "Dialect",
    "Frontmatter",
    "compose",
    "compose_in",
    "harness_folders",
    "parse_frontmatter",
]

Dialect = Literal["verbatim", "native"]
AGENT_FILE: Final = "agent.md"
FRONTMATTER_FILE: Final = "frontmatter.json"
_DIALECTS: Final = ("verbatim", "native")
_REQUIRED: Final = ("name", "description", "tools")
_OPTIONAL: Final = ("model", "argumentHint")
_SECTION_RE: Final = re.compile(r"\{\{SECTION:([^{}\n]*)\}\}")
_TOOL_RE: Final = re.compile(r"\{\{TOOL:([^{}\n]*)\}\}")
_PATH_RE: Final = re.compile(r"\{\{PATH:([^{}\n]*)\}\}")
# Characters a double-quoted YAML scalar must spell as escapes: the quote, the
# backslash, every control and every character YAML treats as a line break.
# How much of a leftover token a refusal shows (safe_repr cuts it shorter).
_SHOWN_TOKEN: Final = 256
_YAML_ESCAPES: Final = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t"}
_YAML_ESCAPE_RE: Final = re.compile('[\\\\"\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]')


@attrs.frozen(kw_only=True)
class ComposeLimits:
    """Caps on everything an agent directory can make the composer read or build.

    Defaults, and why (every limit is inclusive: a value equal to it is accepted):

    * ``max_agent_bytes = 256 KiB``: the same cap as a SKILL.md or an agent file;
      the seed's largest ``agent.md`` is under 20 KB.
    * ``max_section_bytes = 64 KiB``: a section is a paragraph or a loop; the seed's
      are under 2 KB.
    * ``max_frontmatter_bytes = 16 KiB``: five short fields; the seed's are 300 bytes.
    * ``max_token_map_bytes = 1 MiB``: see ``_tokenmap.TOKEN_MAP_MAX_BYTES``.
    * ``max_harnesses = 16``: the seed has three; a folder per harness.
    * ``max_sections = 64``: section files in one harness folder.
    * ``max_composed_bytes = 256 KiB``: the composed file is an agent file, which
      ``parse_agent`` caps at 256 KiB too.
    * ``max_agents = 1000``: agent folders in one agents root.
    """

    max_agent_bytes: int = attrs.field(default=256 * 1024, validator=_positive)
    max_section_bytes: int = attrs.field(default=64 * 1024, validator=_positive)
    max_frontmatter_bytes: int = attrs.field(default=16 * 1024, validator=_positive)
    max_token_map_bytes: int = attrs.field(default=1024 * 1024, validator=_positive)
    max_harnesses: int = attrs.field(default=16, validator=_positive)
    max_sections: int = attrs.field(default=64, validator=_positive)
    max_composed_bytes: int = attrs.field(default=256 * 1024, validator=_positive)
    max_agents: int = attrs.field(default=1000, validator=_positive)


DEFAULT_COMPOSE_LIMITS: Final = ComposeLimits()


@attrs.frozen(kw_only=True)
class Frontmatter:
    """A ``frontmatter.json`` that passed the seed's schema."""

    name: str
    description: str
    tools: tuple[str, ...]
    model: str | None = None
    argument_hint: str | None = None


@attrs.frozen(kw_only=True)
class ComposedAgent:
    """One composed agent file: what to write, where, and what it says.

    ``agent`` is the agent's folder name, ``name`` the ``name`` field as written,
    ``file`` the file name in the output folder, ``data`` the exact bytes (UTF-8 of
    ``text``) and ``sha256`` their digest. ``sections`` lists the section files of the
    harness folder that the body included, ``warnings`` what was accepted with a note.
    """

    agent: str
    harness: str
    dialect: Dialect
    name: str
    file: str
    text: str
    data: bytes
    sha256: str
    sections: tuple[str, ...]
    warnings: tuple[SkillWarning, ...] = ()


def _string(document: dict[str, object], key: str, *, required: bool) -> str | None:
    value = document.get(key)
    if value is None and not required and key not in document:
        return None
    if not isinstance(value, str):
        raise MalformedSkillError("schema_wrong_type", f"field {key} must be a string", key=key)
    if required and not value.strip():
        raise MalformedSkillError("schema_empty_field", f"field {key} must not be empty", key=key)
    check_string(value, f"field {key}")
    return value


def parse_frontmatter(raw: bytes, *, max_bytes: int = 16 * 1024) -> Frontmatter:
    """Parse the untrusted bytes of one ``frontmatter.json`` (the seed's strict schema).

    Raises ``MalformedSkillError``: the strict JSON codes, ``json_not_object``,
    ``schema_unknown_field``, ``schema_missing_field``, ``schema_wrong_type``,
    ``schema_empty_field``, ``control_character``, ``forbidden_character``,
    ``not_one_line`` (a name, model or tool of more than one line). Any other
    exception is a bug.
    """
    document = load_json_object(raw, what="frontmatter.json", max_bytes=max_bytes)
    for key in document:
        if key not in _REQUIRED and key not in _OPTIONAL:
            raise MalformedSkillError(
                "schema_unknown_field", f"unknown field: {safe_repr(key)[1:-1]}", key=key
            )
    for key in _REQUIRED:
        if key not in document:
            raise MalformedSkillError(
                "schema_missing_field", f"missing required field: {key}", key=key
            )
    tools = document["tools"]
    if not isinstance(tools, list) or not all(isinstance(item, str) for item in tools):
        raise MalformedSkillError(
            "schema_wrong_type", "field tools must be an array of strings", key="tools"
        )
    if not tools:
        raise MalformedSkillError(
            "schema_empty_field", "field tools must not be empty", key="tools"
        )
    for item in tools:
        if not item.strip():
            raise MalformedSkillError(
                "schema_empty_field", "field tools holds an empty name", key="tools"
            )
        check_string(item, "field tools")
    name = str(_string(document, "name", required=True))
    model = _string(document, "model", required=False)
    # The composed file must read back through parse_agent, where these are one line
    # (T118): said here, in the JSON's own terms.
    for key, values in (("name", [name]), ("model", [model or ""]), ("tools", tools)):
        if any("\n" in value or "\t" in value for value in values):
            raise MalformedSkillError(
                "not_one_line", f"field {key} must be one line (no line break or tab)", key=key
            )
    return Frontmatter(
        name=name,
        description=str(_string(document, "description", required=True)),
        tools=tuple(str(item) for item in tools),
        model=model,
        argument_hint=_string(document, "argumentHint", required=False),
    )


# -- reading beneath the agent folder --------------------------------------------------


def _read(
    root: SafeRoot, relpath: str, cap: int, what: str, record: Callable[[str, bytes], None] | None
) -> str:
    """The text of *relpath* under *root*, with *what* named in any error; *record*
    is told the exact bytes, under *what* (the path in the agent folder)."""
    try:
        raw = root.read_file(relpath, cap=cap, oversize=MalformedSkillError)
        if len(raw) > cap:  # the file grew while it was read
            raise MalformedSkillError("too_large", f"the file is larger than {cap} bytes")
        text = decode_utf8(raw, what=what)
    except SkillError as exc:
        raise type(exc)(exc.code, f"{what}: {exc.reason}", line=exc.line) from exc
    if record is not None:
        record(what, raw)
    return text


def _read_bytes(
    root: SafeRoot, relpath: str, cap: int, what: str, record: Callable[[str, bytes], None] | None
) -> bytes:
    try:
        raw = root.read_file(relpath, cap=cap, oversize=MalformedSkillError)
    except SkillError as exc:
        raise type(exc)(exc.code, f"{what}: {exc.reason}") from exc
    if len(raw) > cap:
        raise MalformedSkillError("too_large", f"{what}: the file is larger than {cap} bytes")
    if record is not None:
        record(what, raw)
    return raw


def harness_folders(root: SafeRoot, limits: ComposeLimits) -> tuple[str, ...]:
    """The harness folders of an agent folder, sorted; the count is capped (T104)."""
    listing = root.list_dir("", max_entries=limits.max_harnesses + 2)
    folders = sorted(entry.name for entry in listing.entries if entry.kind == "dir")
    for skipped in listing.skipped:
        if skipped.code == "too_many_entries":
            raise MalformedSkillError(
                "too_many_harnesses", f"more than {limits.max_harnesses} harness folders"
            )
        error = MalformedSkillError if skipped.code == "bad_name" else SkillContainmentError
        raise error(skipped.code, f"{skipped.path}: {skipped.reason}")
    if len(folders) > limits.max_harnesses:
        raise MalformedSkillError(
            "too_many_harnesses", f"more than {limits.max_harnesses} harness folders"
        )
    return tuple(folders)


def _section_files(root: SafeRoot, harness: str, limits: ComposeLimits) -> frozenset[str]:
    listing = root.list_dir("", max_entries=limits.max_sections + 2)
    for skipped in listing.skipped:
        if skipped.code == "too_many_entries":
            raise MalformedSkillError(
                "too_many_sections", f"{harness}: more than {limits.max_sections} section files"
            )
        error = MalformedSkillError if skipped.code == "bad_name" else SkillContainmentError
        raise error(skipped.code, f"{harness}/{skipped.path}: {skipped.reason}")
    sections = frozenset(
        entry.name[:-3]
        for entry in listing.entries
        if entry.kind == "file" and entry.name.endswith(".md") and SLUG.fullmatch(entry.name[:-3])
    )
    if len(sections) > limits.max_sections:
        raise MalformedSkillError(
            "too_many_sections", f"{harness}: more than {limits.max_sections} section files"
        )
    return sections


# -- substitution ----------------------------------------------------------------------


class _Builder:
    """Text built from pieces, refused as soon as it would pass the composed cap."""

    __slots__ = ("cap", "parts", "size")

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.parts: list[str] = []
        self.size = 0

    def add(self, piece: str) -> None:
        # A character is at most four bytes: only count exactly when it could matter.
        grown = self.size + (len(piece) if piece.isascii() else len(piece.encode("utf-8")))
        if grown > self.cap:
            raise MalformedSkillError(
                "composed_too_large", f"the composed text is larger than {self.cap} bytes"
            )
        self.parts.append(piece)
        self.size = grown

    def text(self) -> str:
        return "".join(self.parts)


def _substitute(
    text: str, pattern: re.Pattern[str], replace: Callable[[str], str], cap: int
) -> str:
    """One pass of *pattern* over *text*: replacements are never scanned again."""
    out = _Builder(cap)
    last = 0
    for match in pattern.finditer(text):
        out.add(text[last : match.start()])
        out.add(replace(match.group(1)))
        last = match.end()
    out.add(text[last:])
    return out.text()


class _Resolver:
    """The token rules for one harness (see the module docstring)."""

    def __init__(self, token_map: TokenMap, harness: str, *, drop_null_tools: bool) -> None:
        self.map = token_map
        self.harness = harness
        self.drop_null_tools = drop_null_tools
        self.warnings: list[SkillWarning] = []

    def tool(self, name: str) -> str | None:
        entry = self.map.tools.get(name)
        if entry is None or self.harness not in entry:
            raise MalformedSkillError(
                "unknown_tool",
                f"{{{{TOOL:{safe_repr(name)[1:-1]}}}}}: the token map has no tool "
                f"{safe_repr(name)} for the harness {self.harness}",
            )
        return entry[self.harness]

    def prose_tool(self, name: str) -> str:
        resolved = self.tool(name)
        if resolved is not None:
            return resolved
        shown = safe_repr(name)
        if not self.drop_null_tools:
            raise MalformedSkillError(
                "null_tool",
                f"the tool {shown} does not exist for {self.harness} (null in the token "
                "map), and the body names it",
            )
        self.warnings.append(
            SkillWarning(
                "dropped_null_tool", f"the tool {shown} does not exist for {self.harness}: dropped"
            )
        )
        return ""

    def path(self, name: str) -> str:
        entry = self.map.paths.get(name)
        if entry is None:
            check_relative(name, "the unmapped path token")
            return name
        target = entry.get(self.harness)
        if target is None:
            raise MalformedSkillError(
                "unknown_path",
                f"the token map has no path {safe_repr(name)} for the harness {self.harness}",
            )
        if isinstance(target, BasePath):
            # _tokenmap checked that the base is a plain path for this harness.
            return f"{str(self.map.paths[target.base][self.harness]).rstrip('/')}/{target.relative}"
        return target


def _refuse_leftover(text: str, what: str) -> None:
    """Refuse any "{{" left after the substitutions: every well-formed token on one
    line was resolved or refused, so what is left is a typo, a section's own token, or
    a token split across lines (``{{TOOL:\ntask}}``), which no pass resolves and a
    harness might (T103, T143). One search, never a scan of the line from every "{{"
    (T142)."""
    start = text.find("{{")
    if start < 0:
        return
    # Name the token up to its "}}" or its line's end, as far as safe_repr shows.
    shown = text[start : start + _SHOWN_TOKEN]
    shown = shown.partition("\n")[0]
    close = shown.find("}}", 2)
    if close >= 0:
        shown = shown[: close + 2]
    raise MalformedSkillError(
        "leftover_token", f"{what}: the token {safe_repr(shown)} was not resolved"
    )


# -- emitting --------------------------------------------------------------------------


def _quote(value: str) -> str:
    """*value* as a double-quoted YAML scalar that reads back as exactly *value*."""

    def escape(match: re.Match[str]) -> str:
        char = match.group()
        return _YAML_ESCAPES.get(char) or f"\\u{ord(char):04X}"

    return '"' + _YAML_ESCAPE_RE.sub(escape, value) + '"'


def _native_name(name: str, token_map: TokenMap, harness: str) -> str:
    prefix = token_map.prefixes.get(harness, "")
    # The map's prefix for this harness when the name carries it, else any "ns:" part.
    slug = name[len(prefix) :] if prefix and name.startswith(prefix) else name.rpartition(":")[2]
    if SLUG.fullmatch(slug) is None:
        raise MalformedSkillError(
            "bad_agent_name",
            f"the native name {safe_repr(slug)} (from {safe_repr(name)}) is not a lowercase slug",
            key="name",
        )
    return slug


def _emit(fields: list[tuple[str, str | tuple[str, ...]]], body: str) -> str:
    lines = ["---"]
    for key, value in fields:
        if isinstance(value, tuple):
            lines.append(f"{key}:")
            lines.extend(f"  - {_quote(item)}" for item in value)
        else:
            lines.append(f"{key}: {_quote(value)}")
    lines.append("---")
    return "\n".join(lines) + "\n" + body


# -- composing -------------------------------------------------------------------------


def _check_arguments(
    harness: object, token_map: object, dialect: object, limits: object
) -> tuple[str, TokenMap, ComposeLimits]:
    if not isinstance(harness, str) or SLUG.fullmatch(harness) is None:
        raise SkillUsageError("bad_argument", "harness must be a lowercase slug")
    if token_map is None:
        token_map = EMPTY_TOKEN_MAP
    if not isinstance(token_map, TokenMap):
        raise SkillUsageError("bad_argument", "token_map must be a TokenMap or None")
    if not token_map.knows(harness):
        raise SkillUsageError(
            "unknown_harness", f"the token map does not list the harness {harness}"
        )
    if dialect not in _DIALECTS:
        raise SkillUsageError("bad_dialect", "dialect must be 'verbatim' or 'native'")
    if limits is None:
        limits = DEFAULT_COMPOSE_LIMITS
    if not isinstance(limits, ComposeLimits):
        raise SkillUsageError("bad_argument", "limits must be a ComposeLimits")
    return harness, token_map, limits


def compose_in(
    root: SafeRoot,
    agent: str,
    harness: str,
    *,
    token_map: TokenMap | None = None,
    dialect: Dialect = "verbatim",
    drop_null_tools: bool = False,
    limits: ComposeLimits | None = None,
    record: Callable[[str, bytes], None] | None = None,
) -> ComposedAgent:
    """Compose the agent folder held by *root* (named *agent*) for *harness*.

    See :func:`compose`; the errors are the same. *record*, when given, is called with
    the path in the agent folder and the exact bytes of every file the composition
    read (``agent.md``, ``frontmatter.json``, each section), so that a caller can bind
    an approval to them.
    """
    harness, token_map, limits = _check_arguments(harness, token_map, dialect, limits)
    if SLUG.fullmatch(agent) is None:
        raise MalformedSkillError(
            "bad_agent_name", f"the agent folder {safe_repr(agent)} is not a lowercase slug"
        )
    harness_folders(root, limits)
    body = _read(root, AGENT_FILE, limits.max_agent_bytes, AGENT_FILE, record)
    if body.split("\n", 1)[0].rstrip(" \t") == "---":
        raise MalformedSkillError(
            "frontmatter_in_agent_md",
            "agent.md starts with a '---' fence: it holds no frontmatter (the "
            "frontmatter lives in <harness>/frontmatter.json)",
            line=1,
        )
    harness_root = root.open_dir(harness)
    try:
        available = _section_files(harness_root, harness, limits)
        frontmatter = parse_frontmatter(
            _read_bytes(
                harness_root,
                FRONTMATTER_FILE,
                limits.max_frontmatter_bytes,
                f"{harness}/{FRONTMATTER_FILE}",
                record,
            ),
            max_bytes=limits.max_frontmatter_bytes,
        )
        sections: dict[str, str] = {}

        def section(name: str) -> str:
            # The name is checked before it names a file: a slug has no '/' or '..'.
            if SLUG.fullmatch(name) is None:
                raise MalformedSkillError(
                    "bad_section_name",
                    f"{{{{SECTION:{safe_repr(name)[1:-1]}}}}}: a section name is a lowercase slug",
                )
            if name not in available:
                raise MalformedSkillError(
                    "missing_section",
                    f"{{{{SECTION:{name}}}}}: there is no {harness}/{name}.md",
                )
            if name not in sections:
                sections[name] = _read(
                    harness_root,
                    f"{name}.md",
                    limits.max_section_bytes,
                    f"{harness}/{name}.md",
                    record,
                )
            return sections[name]

        body = _substitute(body, _SECTION_RE, section, limits.max_composed_bytes)
    finally:
        harness_root.close()
    resolver = _Resolver(token_map, harness, drop_null_tools=drop_null_tools)
    body = _substitute(body, _TOOL_RE, resolver.prose_tool, limits.max_composed_bytes)
    body = _substitute(body, _PATH_RE, resolver.path, limits.max_composed_bytes)
    _refuse_leftover(body, f"the body composed for {harness}")
    tools = _tools(frontmatter.tools, resolver)
    for key, value in (
        ("name", frontmatter.name),
        ("description", frontmatter.description),
        ("model", frontmatter.model),
        ("argumentHint", frontmatter.argument_hint),
    ):
        if value is not None:
            _refuse_leftover(value, f"{harness}/{FRONTMATTER_FILE} field {key}")
    warnings = resolver.warnings
    warnings.extend(
        SkillWarning("unused_section", f"{harness}/{name}.md is never included")
        for name in sorted(available - set(sections))
    )
    return _finish(
        agent,
        harness,
        dialect,
        frontmatter,
        tools,
        body,
        token_map,
        limits,
        warnings,
        tuple(sorted(sections)),
    )


def _tools(listed: tuple[str, ...], resolver: _Resolver) -> tuple[str, ...]:
    tools: list[str] = []
    for item in listed:
        token = _TOOL_RE.fullmatch(item)
        if token is None:
            _refuse_leftover(item, f"{resolver.harness}/{FRONTMATTER_FILE} field tools")
            tools.append(item)
            continue
        resolved = resolver.tool(token.group(1))
        if resolved is not None:  # a null tool in a list is omitted (seed 001)
            tools.append(resolved)
    if not tools:
        raise MalformedSkillError(
            "schema_empty_field",
            "field tools names no tool that exists for this harness",
            key="tools",
        )
    return tuple(tools)


def _finish(
    agent: str,
    harness: str,
    dialect: Dialect,
    frontmatter: Frontmatter,
    tools: tuple[str, ...],
    body: str,
    token_map: TokenMap,
    limits: ComposeLimits,
    warnings: list[SkillWarning],
    sections: tuple[str, ...],
) -> ComposedAgent:
    name = frontmatter.name
    file = f"{agent}.md"
    fields: list[tuple[str, str | tuple[str, ...]]] = [("name", name)]
    fields.append(("description", frontmatter.description))
    native = harness if dialect == "native" else None
    if native == "claude":
        name = _native_name(name, token_map, harness)
        fields[0] = ("name", name)
        file = f"{name}.md"
        fields.append(("tools", ", ".join(tools)))
    else:
        fields.append(("tools", tools))
    if frontmatter.model is not None:
        fields.append(("model", frontmatter.model))
    if frontmatter.argument_hint is not None:
        if native == "claude":
            warnings.append(
                SkillWarning(
                    "dropped_argument_hint",
                    "argumentHint has no place in a Claude agent file: dropped",
                    "argumentHint",
                )
            )
        elif native == "copilot":
            fields.append(("argument-hint", frontmatter.argument_hint))
        else:
            fields.append(("argumentHint", frontmatter.argument_hint))
    if native == "copilot":
        file = f"{agent}.agent.md"
        body = (
            f"<!-- Generated by skillguard agent compose from {agent}/ for {harness}: "
            "edit the agent directory, not this file. -->\n\n" + body
        )
    text = _emit(fields, body)
    data = text.encode("utf-8")
    if len(data) > limits.max_composed_bytes:
        raise MalformedSkillError(
            "composed_too_large",
            f"the composed text is larger than {limits.max_composed_bytes} bytes",
        )
    _read_back(data, name, frontmatter, tools, limits)
    return ComposedAgent(
        agent=agent,
        harness=harness,
        dialect=dialect,
        name=name,
        file=file,
        text=text,
        data=data,
        sha256=hashlib.sha256(data).hexdigest(),
        sections=sections,
        warnings=tuple(warnings),
    )


def _read_back(
    data: bytes, name: str, frontmatter: Frontmatter, tools: tuple[str, ...], limits: ComposeLimits
) -> None:
    """The composed bytes must read back, as an agent file, to exactly the JSON's values."""
    try:
        parsed = parse_agent(
            data,
            limits=Limits(
                max_skill_bytes=limits.max_composed_bytes,
                max_frontmatter_bytes=max(limits.max_frontmatter_bytes * 8, 32 * 1024),
                max_scalar_bytes=max(limits.max_frontmatter_bytes * 8, 8 * 1024),
            ),
        )
    except MalformedSkillError as exc:
        raise MalformedSkillError(
            "composed_invalid",
            f"the composed file is not a valid agent file: [{exc.code}] {exc.reason}",
            line=exc.line,
        ) from exc
    read = (parsed.name, parsed.description, parsed.tools, parsed.model)
    if read != (name, frontmatter.description, tools, frontmatter.model):
        raise MalformedSkillError(
            "composed_invalid",
            "the composed file reads back to other values than frontmatter.json holds "
            "(a tool name that a comma-separated list cannot carry?)",
        )


def compose(
    directory: str | os.PathLike[str],
    harness: str,
    *,
    token_map: TokenMap | None = None,
    dialect: Dialect = "verbatim",
    drop_null_tools: bool = False,
    limits: ComposeLimits | None = None,
) -> ComposedAgent:
    """Compose the agent directory *directory* for *harness* (see the module docstring).

    *directory* is opened beneath its parent folder, so a symlink as the agent folder
    is refused like one inside it. *token_map* defaults to an empty map (every harness,
    no tool, no mapped path). *dialect* is ``"verbatim"`` (the JSON fields as they are)
    or ``"native"`` (what the harness expects: Claude, Copilot; pi is verbatim).
    With *drop_null_tools*, a ``{{TOOL:}}`` that is ``null`` for the harness is dropped
    from the body with a warning instead of being an error.

    Raises ``MalformedSkillError``, ``SkillContainmentError`` and ``SkillNotFoundError``
    for the directory's faults, ``SkillUsageError`` for bad arguments (``bad_argument``,
    ``bad_dialect``, ``unknown_harness``); any other exception is a bug.
    """
    harness, token_map, limits = _check_arguments(harness, token_map, dialect, limits)
    path = os.path.abspath(operator_path(directory, "directory"))
    parent, agent = os.path.split(path)
    with SafeRoot(parent) as outer, outer.open_dir(agent) as root:
        return compose_in(
            root,
            agent,
            harness,
            token_map=token_map,
            dialect=dialect,
            drop_null_tools=drop_null_tools,
            limits=limits,
        )
