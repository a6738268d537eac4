"""The skill tool's shapes handed to the model SDKs' own parameter types, with no cast.

Not a test module: ``mypy`` checks it (the ``type`` gate, whose extra installs the
SDKs; ``test_tool_sdk_types.py`` runs the same check where mypy and the SDKs are
installed). A shape that drifts from an SDK's type fails type checking here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

    import mcp.types
    from anthropic.types import ToolParam, ToolUnionParam
    from openai.types.chat import ChatCompletionToolParam, ChatCompletionToolUnionParam
    from openai.types.responses import FunctionToolParam
    from openai.types.responses import ToolParam as ResponsesToolParam

    from skillguard import ToolInfo


def openai_chat(info: ToolInfo) -> Iterable[ChatCompletionToolUnionParam]:
    tool: ChatCompletionToolParam = info.as_openai()
    return [tool, info.as_openai(api="chat")]


def openai_responses(info: ToolInfo) -> Iterable[ResponsesToolParam]:
    tool: FunctionToolParam = info.as_openai(api="responses")
    return [tool]


def anthropic_messages(info: ToolInfo) -> Iterable[ToolUnionParam]:
    tool: ToolParam = info.as_anthropic()
    return [tool]


def mcp_tool(info: ToolInfo) -> mcp.types.Tool:
    import mcp.types

    return mcp.types.Tool(
        **info.as_mcp(),
        annotations=mcp.types.ToolAnnotations(read_only_hint=True, open_world_hint=False),
    )
