"""The ready skill tool (seed 004): what a model is given, and how its call is read.

Rules (threat-model.md T85-T86). The module is sans-IO; ``AgentSkills.tool_info``,
``invoke`` and ``prepare_call`` put it in front of the loader's gates.

1. The tool has one fixed name, ``skill``, valid for every host (OpenAI function
   names allow ``[A-Za-z0-9_-]{1,64}``; a descriptor name such as
   ``embedded/pdf-tools`` does not). Its description embeds the agent's catalog,
   escaped as ``catalog_xml`` escapes it. Its input schema has exactly one property,
   ``name``, a string of at most 64 characters, and no other property.
2. The arguments a model sends are untrusted: at most 4 KiB, strict JSON (a repeated
   key, ``NaN`` or deep nesting is refused), an object holding exactly ``name``, a
   string. Anything else is ``malformed/bad_arguments``.
3. The requested name must be a bounded ASCII slug (the skill-name rule) before it is
   authorized or looked up: empty, ``.``, ``..``, a separator, a control character,
   uppercase or over 64 characters is ``containment/bad_name``, so a hostile name
   never reaches a lookup, a path or the audit log unescaped.
4. An execution id (the host's id of one tool call) is at most 128 characters of
   ``[A-Za-z0-9._:-]`` or a ``uuid.UUID``; it travels in the ``ApprovalRequest`` and
   in the audit records of the call.
"""

from __future__ import annotations

import re
import uuid
from typing import Final

import attrs

from skillguard._core.errors import (
    MalformedSkillError,
    SkillContainmentError,
    SkillUsageError,
    safe_repr,
)
from skillguard._core.strict_json import StrictJSONError, loads_strict
from skillguard._skills.names import is_valid_name

__all__ = ["MAX_ARGUMENT_BYTES", "TOOL_NAME", "ToolInfo", "execution_id", "requested_name"]

TOOL_NAME: Final = "skill"
# The arguments are one short name in a JSON object: 4 KiB is sixty times that, and
# small enough that a model's runaway output costs nothing to refuse.
MAX_ARGUMENT_BYTES: Final = 4096
_MAX_NAME_CHARS: Final = 64
_EXECUTION_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")

_INTRO = (
    "Load a skill: a folder of instructions for one kind of task. Call this tool with the "
    "exact name of one skill listed below when the task matches its description; the "
    "result is the skill's instructions. Only the skills listed are available."
)


def _schema() -> dict[str, object]:
    return {
        "type": "object",
        "properties": {
            "name": {
                "type": "string",
                "maxLength": _MAX_NAME_CHARS,
                "description": "The name of one skill from the list in the description.",
            }
        },
        "required": ["name"],
        "additionalProperties": False,
    }


@attrs.frozen
class ToolInfo:
    """The skill tool as a model is given it: ``name``, ``description`` (with the
    escaped catalog) and ``parameters`` (a JSON Schema). ``as_openai()``,
    ``as_anthropic()`` and ``as_mcp()`` return the exact shapes those hosts take."""

    name: str
    description: str
    parameters: dict[str, object] = attrs.field(eq=False)

    @classmethod
    def for_catalog(cls, catalog_xml: str) -> ToolInfo:
        """The skill tool whose description embeds *catalog_xml* (already escaped, as
        ``AgentSkills.catalog_xml`` gives it). Raises ``SkillUsageError`` for a non-str."""
        if not isinstance(catalog_xml, str):
            raise SkillUsageError("bad_argument", "catalog_xml must be a str")
        description = _INTRO + ("\n\n" + catalog_xml if catalog_xml else "\n\nNo skills.")
        return cls(TOOL_NAME, description, _schema())

    def as_openai(self, *, api: str = "chat") -> dict[str, object]:
        """An OpenAI function tool: the Chat Completions shape, or with
        ``api="responses"`` the Responses API's flat shape. Both are strict (the
        schema already lists every property as required, with no others)."""
        if not isinstance(api, str) or api not in ("chat", "responses"):
            raise SkillUsageError("bad_argument", "api must be 'chat' or 'responses'")
        if api == "responses":
            return {
                "type": "function",
                "name": self.name,
                "description": self.description,
                "parameters": _schema(),
                "strict": True,
            }
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": _schema(),
                "strict": True,
            },
        }

    def as_anthropic(self) -> dict[str, object]:
        """An Anthropic Messages API tool."""
        return {"name": self.name, "description": self.description, "input_schema": _schema()}

    def as_mcp(self) -> dict[str, object]:
        """An MCP ``tools/list`` entry."""
        return {
            "name": self.name,
            "description": self.description,
            "inputSchema": _schema(),
            "annotations": {"readOnlyHint": True, "openWorldHint": False},
        }


def requested_name(raw_args: object) -> str:
    """The skill name in a model's tool-call arguments (rules 2 and 3).

    Raises ``MalformedSkillError`` (``bad_arguments``), ``SkillContainmentError``
    (``bad_name``) and ``SkillUsageError`` when *raw_args* is neither str nor bytes.
    """
    if not isinstance(raw_args, (str, bytes)):
        raise SkillUsageError("bad_argument", "the arguments must be JSON text (str or bytes)")
    try:
        value = loads_strict(raw_args, max_bytes=MAX_ARGUMENT_BYTES, max_depth=2)
    except StrictJSONError as exc:
        raise MalformedSkillError("bad_arguments", f"the arguments are refused: {exc}") from exc
    if not isinstance(value, dict) or set(value) != {"name"}:
        raise MalformedSkillError(
            "bad_arguments", 'the arguments must be an object holding exactly "name"'
        )
    name = value["name"]
    if not isinstance(name, str):
        raise MalformedSkillError("bad_arguments", '"name" must be a string')
    if not is_valid_name(name):
        raise SkillContainmentError(
            "bad_name",
            f"the requested name {safe_repr(name)} is not a skill name: 1-64 characters "
            "of a-z, 0-9 and single hyphens",
        )
    return name


def execution_id(value: object) -> str:
    """The host's id of one tool call, as text (rule 4). Raises ``SkillUsageError``."""
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, str) and _EXECUTION_ID.fullmatch(value):
        return value
    raise SkillUsageError(
        "bad_argument", "execution_id must be a uuid.UUID or 1-128 characters of [A-Za-z0-9._:-]"
    )
