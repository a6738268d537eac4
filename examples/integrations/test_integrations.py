"""The recipes against each SDK's real client, with the model's answers faked at the
HTTP layer (no network): a granted skill is served, a refused one comes back as that
SDK's error result. ``tox -e integrations`` installs the SDKs and runs this."""

from __future__ import annotations

import asyncio
import copy
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from skillguard import AllowPolicy, EmbeddedSkills, Loader

sys.path.insert(0, str(Path(__file__).resolve().parent))

if TYPE_CHECKING:
    from skillguard import AgentSkills

POLICY = "agents:\n  planner:\n    skills: [pdf-tools]\n  other:\n    skills: [secret-ops]\n"


@pytest.fixture
def planner(tmp_path: Path) -> AgentSkills:
    for name in ("pdf-tools", "secret-ops"):
        folder = tmp_path / "embedded" / name
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: {name}.\n---\nUse {name}.\n"
        )
    (tmp_path / "policy.yaml").write_text(POLICY)
    loader = Loader(
        AllowPolicy.from_file(tmp_path / "policy.yaml"),
        embedded=EmbeddedSkills.from_directory(tmp_path / "embedded"),
    )
    return loader.bind("planner")


def fake_model(
    answers: list[dict[str, Any]], sent: list[dict[str, Any]], *, asynchronous: bool = False
) -> Any:  # noqa: ANN401
    """An HTTP client whose every POST gets the next canned answer; bodies kept in *sent*."""
    httpx2 = pytest.importorskip("httpx2")

    def handler(request: Any) -> Any:  # noqa: ANN401
        sent.append(json.loads(request.content))
        return httpx2.Response(200, json=answers.pop(0))

    client = httpx2.AsyncClient if asynchronous else httpx2.Client
    return client(transport=httpx2.MockTransport(handler))


def test_anthropic_tool_loop(planner: AgentSkills) -> None:
    anthropic = pytest.importorskip("anthropic")
    from anthropic_loop import chat  # noqa: PLC0415 - needs the SDK, imported once it is there

    def message(content: list[dict[str, Any]], stop: str) -> dict[str, Any]:
        usage = {"input_tokens": 1, "output_tokens": 1}
        return {
            "id": "msg",
            "type": "message",
            "role": "assistant",
            "model": "m",
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": usage,
        }

    answers = [
        message(
            [
                {"type": "tool_use", "id": "a", "name": "skill", "input": {"name": "pdf-tools"}},
                {"type": "tool_use", "id": "b", "name": "skill", "input": {"name": "secret-ops"}},
            ],
            "tool_use",
        ),
        message([{"type": "text", "text": "done"}], "end_turn"),
    ]
    sent: list[dict[str, Any]] = []
    client = anthropic.Anthropic(api_key="test", http_client=fake_model(answers, sent))
    assert chat(client, planner, [{"role": "user", "content": "a PDF"}], "m") == "done"
    assert sent[0]["tools"][0]["name"] == "skill"
    served, refused = sent[1]["messages"][-1]["content"]
    assert "Use pdf-tools." in served["content"]
    assert "is_error" not in served
    assert refused["is_error"] is True
    assert refused["content"].startswith("not_granted not_granted ")


def completion(message: dict[str, Any], finish: str) -> dict[str, Any]:
    """A Chat Completions answer holding *message*."""
    choice = {"index": 0, "finish_reason": finish, "message": message}
    return {"id": "c", "object": "chat.completion", "created": 0, "model": "m", "choices": [choice]}


def call(call_id: str, name: str) -> dict[str, Any]:
    """A Chat Completions call of the skill tool for skill *name*."""
    arguments = json.dumps({"name": name})
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": "skill", "arguments": arguments},
    }


# The model calls the skill tool for a granted skill and a refused one, then answers.
CHAT_ANSWERS = [
    completion(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [call("a", "pdf-tools"), call("b", "secret-ops")],
        },
        "tool_calls",
    ),
    completion({"role": "assistant", "content": "done"}, "stop"),
]


def test_openai_tool_loop(planner: AgentSkills) -> None:
    openai = pytest.importorskip("openai")
    from openai_loop import chat  # noqa: PLC0415 - needs the SDK, imported once it is there

    answers = copy.deepcopy(CHAT_ANSWERS)
    sent: list[dict[str, Any]] = []
    client = openai.OpenAI(api_key="test", http_client=fake_model(answers, sent))
    assert chat(client, planner, [{"role": "user", "content": "a PDF"}], "m") == "done"
    assert sent[0]["tools"][0]["function"]["name"] == "skill"
    served, refused = sent[1]["messages"][-2:]
    assert "Use pdf-tools." in served["content"]
    assert refused["content"].startswith("error: not_granted not_granted ")


def test_langchain_structured_tool(planner: AgentSkills) -> None:
    pytest.importorskip("langchain_core")
    from langchain_tool import skill_tool  # noqa: PLC0415 - needs the SDK, imported once it is there

    tool = skill_tool(planner)
    served = tool.invoke(
        {"name": "skill", "args": {"name": "pdf-tools"}, "id": "a", "type": "tool_call"}
    )
    refused = tool.invoke(
        {"name": "skill", "args": {"name": "secret-ops"}, "id": "b", "type": "tool_call"}
    )
    assert "Use pdf-tools." in served.content
    assert served.status == "success"
    assert refused.status == "error"
    assert refused.content.startswith("not_granted not_granted ")


def test_openai_agents_function_tool(planner: AgentSkills) -> None:
    openai = pytest.importorskip("openai")
    agents = pytest.importorskip("agents")
    from openai_agents_tool import skill_tool  # noqa: PLC0415 - needs the SDK

    sent: list[dict[str, Any]] = []
    client = openai.AsyncOpenAI(
        api_key="test", http_client=fake_model(copy.deepcopy(CHAT_ANSWERS), sent, asynchronous=True)
    )
    agent = agents.Agent(
        name="planner",
        tools=[skill_tool(planner)],
        model=agents.OpenAIChatCompletionsModel(model="m", openai_client=client),
    )
    config = agents.RunConfig(tracing_disabled=True)
    result = asyncio.run(agents.Runner.run(agent, "a PDF", run_config=config))
    assert result.final_output == "done"
    tool = sent[0]["tools"][0]["function"]
    assert (tool["name"], tool["strict"]) == ("skill", True)
    served, refused = sent[1]["messages"][-2:]
    assert "Use pdf-tools." in served["content"]
    assert refused["content"].startswith("error: not_granted not_granted ")


def test_pydantic_ai_tool(planner: AgentSkills) -> None:
    pydantic_ai = pytest.importorskip("pydantic_ai")
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart  # noqa: PLC0415
    from pydantic_ai.models.function import FunctionModel  # noqa: PLC0415
    from pydantic_ai_tool import skill_tool  # noqa: PLC0415 - needs the SDK

    seen: list[Any] = []

    def model(messages: list[Any], info: Any) -> ModelResponse:  # noqa: ANN401
        seen.append((messages, info))
        if len(messages) == 1:
            calls = [
                ToolCallPart("skill", {"name": "pdf-tools"}, tool_call_id="a"),
                ToolCallPart("skill", {"name": "secret-ops"}, tool_call_id="b"),
            ]
            return ModelResponse(parts=calls)
        return ModelResponse(parts=[TextPart("done")])

    agent = pydantic_ai.Agent(FunctionModel(model), tools=[skill_tool(planner)])
    assert asyncio.run(agent.run("a PDF")).output == "done"
    (tool,) = seen[0][1].function_tools
    assert tool.name == "skill"
    assert tool.parameters_json_schema == planner.tool_info().parameters
    parts = {part.tool_call_id: part for part in seen[1][0][-1].parts}
    assert parts["a"].outcome == "success"
    assert "Use pdf-tools." in parts["a"].content
    assert parts["b"].outcome == "failed"
    assert parts["b"].content.startswith("not_granted not_granted ")
