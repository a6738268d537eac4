"""The skill tool as an OpenAI Agents SDK FunctionTool: a refusal is the tool's output,
one error line the model reads (the SDK's own failure results are strings too)."""

from __future__ import annotations

from typing import Any

from agents import FunctionTool, RunContextWrapper

from skillguard import AgentSkills, SkillError


def skill_tool(handle: AgentSkills) -> FunctionTool:
    info = handle.tool_info()

    async def load(_ctx: RunContextWrapper[Any], args_json: str) -> str:
        try:
            return await handle.ainvoke(args_json)
        except SkillError as exc:
            return f"error: {exc.kind} {exc.code} {exc.reason}"

    return FunctionTool(
        name=info.name,
        description=info.description,
        params_json_schema=info.parameters,
        on_invoke_tool=load,
    )
