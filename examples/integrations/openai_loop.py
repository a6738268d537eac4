"""The skill tool in the OpenAI SDK's Chat Completions tool loop: a refusal is the tool
message's content (Chat Completions has no error flag), one line the model can read."""

from __future__ import annotations

from typing import Any

from skillguard import AgentSkills, SkillError


def chat(client: Any, handle: AgentSkills, messages: list[Any], model: str) -> str:  # noqa: ANN401
    """Ask *model* until it stops calling tools; its last text."""
    tools = [handle.tool_info().as_openai()]
    while True:
        response = client.chat.completions.create(model=model, messages=messages, tools=tools)
        message = response.choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        if not message.tool_calls:
            return str(message.content or "")
        for call in message.tool_calls:
            try:
                content = handle.invoke(call.function.arguments)
            except SkillError as exc:
                content = f"error: {exc.kind} {exc.code} {exc.reason}"
            messages.append({"role": "tool", "tool_call_id": call.id, "content": content})
