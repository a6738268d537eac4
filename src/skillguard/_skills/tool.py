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
   string. Anything else is ``malformed/bad_arguments``. The SDKs that parse the
   arguments themselves (Anthropic, MCP, LangChain, pydantic-ai) hand over a mapping:
   it is held to the same rules (T217). It is read once, without trusting it: at most
   two items are taken from it, a key or value that is not a real ``str`` (a subclass
   may answer comparisons as it likes) is refused without being looked into, the name
   is bounded before it is copied, and then the one-item object goes through the very
   JSON path text does, so both refuse exactly the same names. Whatever the mapping
   raises while it is read is ``bad_arguments`` too. A repeated key can only occur in
   text.
3. The requested name must be a bounded ASCII slug (the skill-name rule) before it is
   authorized or looked up: empty, ``.``, ``..``, a separator, a control character,
   uppercase or over 64 characters is ``containment/bad_name``, so a hostile name
   never reaches a lookup, a path or the audit log unescaped.
4. An execution id (the host's id of one tool call) is at most 128 characters of
   ``[A-Za-z0-9._:-]`` or a ``uuid.UUID``; it travels in the ``ApprovalRequest`` and
   in the audit records of the call.
"""

from __future__ import annotations

import itertools
import json
import re
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, Literal, TypedDict, overload

import attrs

from skillguard._core.errors import (
    MalformedSkillError,
    SkillContainmentError,
    SkillUsageError,
    safe_repr,
)
from skillguard._core.strict_json import StrictJSONError, loads_strict
from skillguard._skills.names import is_valid_name

if TYPE_CHECKING:
    # The SDKs' own parameter types, for type checkers only: skillguard never imports
    # an SDK at run time. A host with the SDK installed gets them exactly, whatever its
    # version; without it, they are unknown (Any) to its type checker.
    from anthropic.types import ToolParam as AnthropicTool
    from openai.types.chat import ChatCompletionToolParam as OpenAIChatTool
    from openai.types.responses import FunctionToolParam as OpenAIResponsesTool

__all__ = [
    "MAX_ARGUMENT_BYTES",
    "TOOL_NAME",
    "MCPTool",
    "ToolInfo",
    "execution_id",
    "requested_name",
]

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


class MCPTool(TypedDict):
    """``as_mcp()``: the keyword arguments of ``mcp.types.Tool`` (the MCP SDK 2),
    ``mcp.types.Tool(**info.as_mcp())``, which type-checks as it is."""

    name: str
    description: str
    input_schema: dict[str, Any]


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

    @overload
    def as_openai(self, *, api: Literal["chat"] = "chat") -> OpenAIChatTool: ...
    @overload
    def as_openai(self, *, api: Literal["responses"]) -> OpenAIResponsesTool: ...
    def as_openai(self, *, api: str = "chat") -> OpenAIChatTool | OpenAIResponsesTool:
        """An OpenAI function tool: the Chat Completions shape
        (``openai.types.chat.ChatCompletionToolParam``), or with ``api="responses"``
        the Responses API's flat shape (``openai.types.responses.FunctionToolParam``).
        Both are strict (the schema already lists every property as required, with no
        others)."""
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

    def as_anthropic(self) -> AnthropicTool:
        """An Anthropic Messages API tool (``anthropic.types.ToolParam``)."""
        return {"name": self.name, "description": self.description, "input_schema": _schema()}

    def as_mcp(self) -> MCPTool:
        """The keyword arguments of ``mcp.types.Tool`` (``MCPTool``). Its read-only
        hint is the host's to add: ``annotations=ToolAnnotations(read_only_hint=True,
        open_world_hint=False)``."""
        return {"name": self.name, "description": self.description, "input_schema": _schema()}


def requested_name(raw_args: object) -> str:
    """The skill name in a model's tool-call arguments (rules 2 and 3): JSON text
    (``str`` or ``bytes``) or a mapping an SDK already parsed.

    Raises ``MalformedSkillError`` (``bad_arguments``), ``SkillContainmentError``
    (``bad_name``) and ``SkillUsageError`` when *raw_args* is neither text nor a
    mapping.
    """
    if isinstance(raw_args, Mapping) and not isinstance(raw_args, (str, bytes)):
        raw_args = _from_mapping(raw_args)
    if not isinstance(raw_args, (str, bytes)):
        raise SkillUsageError(
            "bad_argument", "the arguments must be JSON text (str or bytes) or a mapping"
        )
    try:
        value = loads_strict(raw_args, max_bytes=MAX_ARGUMENT_BYTES, max_depth=2)
    except StrictJSONError as exc:
        raise MalformedSkillError("bad_arguments", f"the arguments are refused: {exc}") from exc
    if not isinstance(value, dict) or set(value) != {"name"}:
        raise MalformedSkillError("bad_arguments", _NOT_ONE_NAME)
    name = value["name"]
    if not isinstance(name, str):
        raise MalformedSkillError("bad_arguments", _NOT_A_STRING)
    if not is_valid_name(name):
        raise SkillContainmentError(
            "bad_name",
            f"the requested name {safe_repr(name)} is not a skill name: 1-64 characters "
            "of a-z, 0-9 and single hyphens",
        )
    return name


_NOT_ONE_NAME = 'the arguments must be an object holding exactly "name"'
_NOT_A_STRING = '"name" must be a string'


def _from_mapping(untrusted: Mapping[object, object]) -> str:
    """The JSON text of a mapping holding exactly a ``str`` ``name`` (rule 2), read
    once, for the text path to check; never trusts the mapping's own methods beyond
    handing over two items, and turns whatever they raise into ``bad_arguments``."""
    try:
        items = list(itertools.islice(iter(untrusted.items()), 2))
    except Exception as exc:
        raise MalformedSkillError(
            "bad_arguments", "the arguments mapping could not be read"
        ) from exc
    if len(items) != 1 or type(items[0]) is not tuple or len(items[0]) != 2:
        raise MalformedSkillError("bad_arguments", _NOT_ONE_NAME)
    key, value = items[0]
    # type() rather than isinstance(): an object may claim to be a str (``__class__``).
    if type(key) is not str or key != "name":
        raise MalformedSkillError("bad_arguments", _NOT_ONE_NAME)
    if type(value) is not str:
        raise MalformedSkillError("bad_arguments", _NOT_A_STRING)
    if len(value) > MAX_ARGUMENT_BYTES:
        # Its text would be over the cap whatever it holds: refused before it is copied.
        raise MalformedSkillError(
            "bad_arguments",
            f"the arguments are refused: the name is over {MAX_ARGUMENT_BYTES} characters",
        )
    # The text a host that did not parse the arguments would have been given.
    return json.dumps({"name": value}, ensure_ascii=False)


def execution_id(value: object) -> str:
    """The host's id of one tool call, as text (rule 4). Raises ``SkillUsageError``."""
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, str) and _EXECUTION_ID.fullmatch(value):
        return value
    raise SkillUsageError(
        "bad_argument", "execution_id must be a uuid.UUID or 1-128 characters of [A-Za-z0-9._:-]"
    )
