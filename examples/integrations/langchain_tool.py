"""The skill tool as a LangChain StructuredTool: a refusal is a ToolException, which
LangChain turns into a ToolMessage with status "error"."""

from __future__ import annotations

import json

from langchain_core.tools import StructuredTool, ToolException

from skillguard import AgentSkills, SkillError


def skill_tool(handle: AgentSkills) -> StructuredTool:
    info = handle.tool_info()

    def load(name: str) -> str:
        try:
            return handle.invoke(json.dumps({"name": name}))
        except SkillError as exc:
            raise ToolException(f"{exc.kind} {exc.code} {exc.reason}") from exc

    return StructuredTool.from_function(
        func=load,
        name=info.name,
        description=info.description,
        args_schema=info.parameters,
        handle_tool_error=True,
    )
