"""Reading a composable agent folder (seed 001): its files, beneath a held descriptor.

Rules (threat-model.md T100, T104). An agent directory is ``<agent>/agent.md`` plus,
per harness, ``<harness>/frontmatter.json`` and optional ``<harness>/<section>.md``. A
repository controls every byte of it, so:

* Every read goes through ``SafeRoot`` (no symlink, FIFO or hard link), and every read
  has its own cap in ``ComposeLimits``, as do the number of harnesses and sections and
  the composed text.
* ``frontmatter.json`` is strict JSON with the seed's closed schema (``name``,
  ``description``, ``tools`` required; ``model`` and ``argumentHint`` optional; any
  other key is an error); ``parse_frontmatter`` is sans-IO.

Errors are ``MalformedSkillError``, ``SkillContainmentError`` and ``SkillNotFoundError``
for the directory's faults; any other exception is a bug.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import attrs

from skillguard._agents.tokenmap import SLUG, check_string, load_json_object
from skillguard._core.errors import (
    MalformedSkillError,
    SkillContainmentError,
    SkillError,
    safe_repr,
)
from skillguard._core.limits import _positive
from skillguard._core.strict_yaml import decode_utf8

if TYPE_CHECKING:
    from collections.abc import Callable

    from skillguard._fs.containment import SafeRoot

__all__ = [
    "AGENT_FILE",
    "DEFAULT_COMPOSE_LIMITS",
    "FRONTMATTER_FILE",
    "ComposeLimits",
    "Frontmatter",
    "harness_folders",
    "parse_frontmatter",
    "read",
    "read_bytes",
    "section_files",
]

AGENT_FILE: Final = "agent.md"
FRONTMATTER_FILE: Final = "frontmatter.json"
_REQUIRED: Final = ("name", "description", "tools")
_OPTIONAL: Final = ("model", "argumentHint")


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


def _string(document: dict[str, object], key: str, *, required: bool) -> str | None:
    value = document.get(key)
    if value is None and not required and key not in document:
        return None
    if not isinstance(value, str):
        raise MalformedSkillError("wrong_type", f"field {key} must be a string", key=key)
    if required and not value.strip():
        raise MalformedSkillError("empty_field", f"field {key} must not be empty", key=key)
    check_string(value, f"field {key}")
    return value


def parse_frontmatter(raw: bytes, *, max_bytes: int = 16 * 1024) -> Frontmatter:
    """Parse the untrusted bytes of one ``frontmatter.json`` (the seed's strict schema).

    Raises ``MalformedSkillError``: the strict JSON codes, ``not_a_mapping``,
    ``unknown_field``, ``missing_field``, ``wrong_type``,
    ``empty_field``, ``control_character``, ``forbidden_character``,
    ``not_one_line`` (a name, model or tool of more than one line). Any other
    exception is a bug.
    """
    document = load_json_object(raw, what="frontmatter.json", max_bytes=max_bytes)
    for key in document:
        if key not in _REQUIRED and key not in _OPTIONAL:
            raise MalformedSkillError(
                "unknown_field", f"unknown field: {safe_repr(key)[1:-1]}", key=key
            )
    for key in _REQUIRED:
        if key not in document:
            raise MalformedSkillError("missing_field", f"missing required field: {key}", key=key)
    tools = document["tools"]
    if not isinstance(tools, list) or not all(isinstance(item, str) for item in tools):
        raise MalformedSkillError(
            "wrong_type", "field tools must be an array of strings", key="tools"
        )
    if not tools:
        raise MalformedSkillError("empty_field", "field tools must not be empty", key="tools")
    for item in tools:
        if not item.strip():
            raise MalformedSkillError("empty_field", "field tools holds an empty name", key="tools")
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


def read(
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


def read_bytes(
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


def section_files(root: SafeRoot, harness: str, limits: ComposeLimits) -> frozenset[str]:
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
