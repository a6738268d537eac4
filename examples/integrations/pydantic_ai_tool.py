"""The skill tool as a pydantic-ai Tool: a refusal raises ToolFailed, which pydantic-ai
returns to the model as a failed tool result (final: no retry of the same call)."""

from __future__ import annotations

import json
from typing import Any

from pydantic_ai import Tool, ToolFailed

from skillguard import AgentSkills, SkillError


def skill_tool(handle: AgentSkills) -> Tool[Any]:
    info = handle.tool_info()

    async def load(**args: Any) -> str:  # noqa: ANN401
        try:
            return await handle.ainvoke(json.dumps(args))
        except SkillError as exc:
            raise ToolFailed(f"{exc.kind} {exc.code} {exc.reason}") from exc

    tool: Tool[Any] = Tool.from_schema(load, info.name, info.description, info.parameters)
    return tool
