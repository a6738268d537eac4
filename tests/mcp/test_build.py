"""build_server's own refusals, and the elicit approver's answers, in process."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import anyio
import pytest

pytest.importorskip("mcp")

import mcp_types as types

from skillguard import (
    AllowPolicy,
    Decision,
    EmbeddedSkills,
    Loader,
    SkillUsageError,
    TrustStore,
    deny_all,
)
from skillguard.mcp import build_server, elicit
from skillguard.mcp._elicit import client_label, literal_block
from skillguard.mcp._server import _execution_id
from tests.mcp.test_server import call, connect, options, records, run, setup  # noqa: F401

if TYPE_CHECKING:
    from pathlib import Path

POLICY = "agents:\n  planner:\n    skills: [pdf-tools]\n"


def handle(tmp_path: Path, approver: Any = deny_all) -> Any:
    folder = tmp_path / "embedded" / "pdf-tools"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: pdf-tools\ndescription: PDFs.\n---\nUse.\n")
    (tmp_path / "policy.yaml").write_text(POLICY)
    loader = Loader(
        AllowPolicy.from_file(tmp_path / "policy.yaml"),
        embedded=EmbeddedSkills.from_directory(tmp_path / "embedded"),
        approver=approver,
    )
    return loader.bind("planner")


def test_build_server_refuses_what_it_cannot_serve(tmp_path: Path) -> None:
    planner = handle(tmp_path)
    with pytest.raises(SkillUsageError) as caught:
        build_server("planner")  # type: ignore[arg-type]
    assert caught.value.code == "bad_argument"
    with pytest.raises(SkillUsageError):
        build_server(planner, approve="ask")
    # Elicitation over a loader whose approver cannot elicit would ask nobody.
    with pytest.raises(SkillUsageError, match="elicit"):
        build_server(planner, approve="elicit")
    assert build_server(planner).name == "skillguard"


def test_t242_elicit_outside_a_call_asks_nobody(tmp_path: Path) -> None:
    planner = handle(tmp_path, elicit)
    assert build_server(planner, approve="elicit").name == "skillguard"
    request = object()
    answer = anyio.run(elicit, request)  # type: ignore[arg-type]
    assert answer == Decision(approved=False, by="mcp:nobody asked")


def test_t246_the_client_label_is_escaped_and_bounded() -> None:
    assert client_label("Claude Code") == "mcp:Claude Code"
    assert client_label("a\u202eb\n") == "mcp:a\\u202eb\\n"
    assert client_label("") == client_label(None) == "mcp:unnamed client"
    assert len(client_label("x" * 1000)) < 80


def test_an_execution_id_is_derived_only_from_a_safe_request_id() -> None:
    assert _execution_id(7) == "mcp:7"
    assert _execution_id("abc-1") == "mcp:abc-1"
    assert _execution_id("a b") is None
    assert _execution_id("x" * 200) is None
    assert _execution_id(None) is None


def test_t243_an_answer_outside_the_schema_or_an_error_is_a_denial(
    setup: dict[str, Path],  # noqa: F811
) -> None:
    async def bogus(context: object, params: object) -> types.ElicitResult:
        del context, params
        return types.ElicitResult(action="accept", content={"approval": "always"})

    async def broken(context: object, params: object) -> types.ErrorData:
        del context, params
        return types.ErrorData(code=types.INTERNAL_ERROR, message="the UI fell over")

    async def scenario() -> None:
        argv = options(setup, "planner", "--approve", "elicit")
        for answer in (bogus, broken):
            async with connect("memory", argv, on_elicit=answer) as session:
                error, line = await call(session, "skill", {"name": "notes"})
                assert error
                assert line.startswith("approval denied ")

    run(scenario)
    denied = [r for r in records(setup) if r["event"] == "approval_denied"]
    assert len(denied) == 2
    assert not [r for r in records(setup) if r["event"] == "load_granted"]


def test_a_resource_that_is_not_text_is_refused(setup: dict[str, Path]) -> None:  # noqa: F811
    (setup["embedded"] / "pdf-tools" / "logo.bin").write_bytes(b"\xff\xfe\x00binary")

    async def scenario() -> None:
        async with connect("memory", options(setup)) as session:
            # Read before any skill call: the server loads the skill first.
            error, line = await call(
                session, "skill_resource", {"name": "pdf-tools", "path": "logo.bin"}
            )
            assert error
            assert line.startswith("malformed not_text ")
            long_path = {"name": "pdf-tools", "path": "a/" * 3000}
            error, line = await call(session, "skill_resource", long_path)
            assert line.startswith("malformed bad_arguments ")
            error, line = await call(session, "select_skills", {"task": "x" * 20000})
            assert line.startswith("malformed bad_arguments ")

    run(scenario)


def test_t242_a_connection_that_cannot_carry_a_request_asks_nobody(
    setup: dict[str, Path],  # noqa: F811
) -> None:
    from mcp.client._memory import InMemoryTransport
    from mcp.client.session import ClientSession

    from skillguard._cli.parser import build_parser
    from skillguard._cli.serve_mcp import open_server

    asked: list[object] = []

    async def accept(context: object, params: object) -> types.ElicitResult:
        del context
        asked.append(params)
        return types.ElicitResult(action="accept", content={"approval": "once"})

    argv = options(setup, "planner", "--approve", "elicit")
    loader, server = open_server(build_parser(["mcp"]).parse_args(["mcp", *argv]))

    async def scenario() -> None:
        async with (
            InMemoryTransport(server) as (read, write),
            ClientSession(read, write, elicitation_callback=accept) as session,
        ):
            await session.discover()  # the per-request era: no server-to-client request
            error, line = await call(session, "skill", {"name": "notes"})
            assert error
            assert line.startswith("approval denied ")
            assert not (await call(session, "skill", {"name": "pdf-tools"}))[0]

    with loader:
        run(scenario)
    assert asked == []


def test_t304_deny_refuses_a_loader_whose_approver_would_answer(tmp_path: Path) -> None:
    # "deny" promises that a workspace skill is served only when pinned: a loader whose
    # own approver says yes (or asks someone) would break that promise silently.
    def yes(request: object) -> Decision:
        del request
        return Decision(approved=True, by="auto")

    with pytest.raises(SkillUsageError, match="deny_all") as caught:
        build_server(handle(tmp_path, yes))
    assert caught.value.code == "bad_argument"
    store = TrustStore(tmp_path / "trust.json")
    with pytest.raises(SkillUsageError, match="deny_all"):
        build_server(handle(tmp_path / "pinning", store.approver(yes)), approve="deny")
    # What a pin alone decides, or elicitation turned off, is "deny".
    assert build_server(handle(tmp_path / "pins", store.approver(deny_all))).name
    assert build_server(handle(tmp_path / "off", elicit), approve="deny").name


# -- T305: the author's text in the elicitation message stays as typed -------------------


@pytest.mark.parametrize(
    "text",
    [
        "plain",
        "![x](https://attacker.example/track.png) [click](https://attacker.example)",
        "# Approved by security\n<img src=x>",
        "```\nclosing the fence early\n```",
        "a run ````````` of nine",
        "~~~\ntilde fence\n~~~",
    ],
)
def test_t305_author_text_in_the_elicitation_is_one_code_block(text: str) -> None:
    block = literal_block(text + "\n")
    lines = block.split("\n")
    fence = lines[0]
    assert set(fence) == {"`"}
    assert len(fence) >= 3
    assert lines[-1] == fence
    assert "\n".join(lines[1:-1]) == text  # the text itself, unchanged
    # Nothing inside can close it: no line of the text is a run of backticks as long.
    assert all(
        not (set(line.strip()) == {"`"} and len(line.strip()) >= len(fence)) for line in lines[1:-1]
    )
    assert len(fence) > max((len(run) for run in re.findall("`+", text)), default=0)
