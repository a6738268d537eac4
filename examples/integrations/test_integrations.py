"""The recipes against each SDK's real client, with the model's answers faked at the
HTTP layer (no network): a granted skill is served, a refused one comes back as that
SDK's error result. ``tox -e integrations`` installs the SDKs and runs this."""

from __future__ import annotations

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


def fake_model(answers: list[dict[str, Any]], sent: list[dict[str, Any]]) -> Any:  # noqa: ANN401
    """An HTTP client whose every POST gets the next canned answer; bodies kept in *sent*."""
    httpx2 = pytest.importorskip("httpx2")

    def handler(request: Any) -> Any:  # noqa: ANN401
        sent.append(json.loads(request.content))
        return httpx2.Response(200, json=answers.pop(0))

    return httpx2.Client(transport=httpx2.MockTransport(handler))


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


def test_openai_tool_loop(planner: AgentSkills) -> None:
    openai = pytest.importorskip("openai")
    from openai_loop import chat  # noqa: PLC0415 - needs the SDK, imported once it is there

    def completion(message: dict[str, Any], finish: str) -> dict[str, Any]:
        choice = {"index": 0, "finish_reason": finish, "message": message}
        return {
            "id": "c",
            "object": "chat.completion",
            "created": 0,
            "model": "m",
            "choices": [choice],
        }

    def call(call_id: str, name: str) -> dict[str, Any]:
        arguments = json.dumps({"name": name})
        return {
            "id": call_id,
            "type": "function",
            "function": {"name": "skill", "arguments": arguments},
        }

    answers = [
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
