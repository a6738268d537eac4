"""Composable agent directories (seed 001): read beneath a held descriptor, compose, check.

Rules (threat-model.md T100-T106). An agent directory is ``<agent>/agent.md`` plus, per
harness, ``<harness>/frontmatter.json`` and optional ``<harness>/<section>.md``. A
repository controls every byte of it, and a harness will trust what is composed. This
module runs the steps in order; each has its own room:

1. ``compose_read``: every read beneath the agent folder, each capped by
   ``ComposeLimits``, and ``frontmatter.json``'s closed schema. ``agent.md`` has no
   frontmatter: one that starts with a ``---`` fence is refused.
2. ``compose_tokens``: the tokens (``{{SECTION:}}``, ``{{TOOL:}}``, ``{{PATH:}}``),
   substituted in a fixed order, one pass each; anything left over is an error.
3. ``compose_emit``: the frontmatter emitted as YAML that is safe by construction.
4. Here: the composed bytes are read back by ``parse_agent`` and must give the JSON's
   values exactly, or nothing is returned.

The output is a pure function of the input bytes: the same directory gives
byte-identical output.

Errors are ``MalformedSkillError``, ``SkillContainmentError`` and ``SkillNotFoundError``
for the directory's faults and ``SkillUsageError`` for the caller's; any other
exception is a bug.
"""

from __future__ import annotations

import hashlib
import os
from typing import TYPE_CHECKING, Final, Literal

import attrs

from skillguard._agents.compose_emit import emit, native_name
from skillguard._agents.compose_read import (
    AGENT_FILE,
    DEFAULT_COMPOSE_LIMITS,
    FRONTMATTER_FILE,
    ComposeLimits,
    Frontmatter,
    harness_folders,
    parse_frontmatter,
    read,
    read_bytes,
    section_files,
)
from skillguard._agents.compose_tokens import (
    PATH_RE,
    SECTION_RE,
    TOOL_RE,
    Resolver,
    refuse_leftover,
    substitute,
)
from skillguard._agents.parse import parse_agent
from skillguard._agents.tokenmap import EMPTY_TOKEN_MAP, SLUG, TokenMap
from skillguard._core.errors import MalformedSkillError, SkillUsageError, safe_repr
from skillguard._core.limits import Limits
from skillguard._core.model import SkillWarning
from skillguard._fs.containment import SafeRoot
from skillguard._fs.paths import operator_path

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = [
    "ComposedAgent",
    "Dialect",
    "compose",
    "compose_in",
]

Dialect = Literal["verbatim", "native"]
_DIALECTS: Final = ("verbatim", "native")


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
    body = read(root, AGENT_FILE, limits.max_agent_bytes, AGENT_FILE, record)
    if body.split("\n", 1)[0].rstrip(" \t") == "---":
        raise MalformedSkillError(
            "frontmatter_in_agent_md",
            "agent.md starts with a '---' fence: it holds no frontmatter (the "
            "frontmatter lives in <harness>/frontmatter.json)",
            line=1,
        )
    harness_root = root.open_dir(harness)
    try:
        available = section_files(harness_root, harness, limits)
        frontmatter = parse_frontmatter(
            read_bytes(
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
                sections[name] = read(
                    harness_root,
                    f"{name}.md",
                    limits.max_section_bytes,
                    f"{harness}/{name}.md",
                    record,
                )
            return sections[name]

        body = substitute(body, SECTION_RE, section, limits.max_composed_bytes)
    finally:
        harness_root.close()
    resolver = Resolver(token_map, harness, drop_null_tools=drop_null_tools)
    # TOOL and PATH in the map's contract order (SECTION was first, as it must be).
    passes = {"TOOL": (TOOL_RE, resolver.prose_tool), "PATH": (PATH_RE, resolver.path)}
    for kind in token_map.substitution_order:
        if kind in passes:
            pattern, replace = passes[kind]
            body = substitute(body, pattern, replace, limits.max_composed_bytes)
    refuse_leftover(body, f"the body composed for {harness}")
    tools = _tools(frontmatter.tools, resolver)
    for key, value in (
        ("name", frontmatter.name),
        ("description", frontmatter.description),
        ("model", frontmatter.model),
        ("argumentHint", frontmatter.argument_hint),
    ):
        if value is not None:
            refuse_leftover(value, f"{harness}/{FRONTMATTER_FILE} field {key}")
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


def _tools(listed: tuple[str, ...], resolver: Resolver) -> tuple[str, ...]:
    tools: list[str] = []
    for item in listed:
        token = TOOL_RE.fullmatch(item)
        if token is None:
            refuse_leftover(item, f"{resolver.harness}/{FRONTMATTER_FILE} field tools")
            tools.append(item)
            continue
        resolved = resolver.tool(token.group(1))
        if resolved is not None:  # a null tool in a list is omitted (seed 001)
            tools.append(resolved)
    if not tools:
        raise MalformedSkillError(
            "empty_field",
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
        name = native_name(name, token_map, harness)
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
    text = emit(fields, body)
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
