"""The skill tool in the Anthropic SDK's tool loop: a refusal is a tool_result with
is_error, so the model reads why and nothing is served."""

from __future__ import annotations

import json
from typing import Any

from skillguard import AgentSkills, SkillError


def run_skill_calls(handle: AgentSkills, blocks: list[Any]) -> list[dict[str, Any]]:
    """The tool_result blocks answering every skill tool_use block of one response."""
    results = []
    for block in blocks:
        if block.type != "tool_use":
            continue
        try:
            text = handle.invoke(json.dumps(block.input))
        except SkillError as exc:
            line = f"{exc.kind} {exc.code} {exc.reason}"
            results.append(
                {"type": "tool_result", "tool_use_id": block.id, "content": line, "is_error": True}
            )
        else:
            results.append({"type": "tool_result", "tool_use_id": block.id, "content": text})
    return results


def chat(client: Any, handle: AgentSkills, messages: list[Any], model: str) -> str:  # noqa: ANN401
    """Ask *model* until it stops calling tools; its last text."""
    tools = [handle.tool_info().as_anthropic()]
    while True:
        response = client.messages.create(
            model=model, max_tokens=1024, tools=tools, messages=messages
        )
        messages.append({"role": "assistant", "content": response.content})
        results = run_skill_calls(handle, response.content)
        if not results:
            return "".join(block.text for block in response.content if block.type == "text")
        messages.append({"role": "user", "content": results})
