"""Approval requests, the console prompt and the trust store, on real files and a real pty.

Test names that start with ``test_tN_`` stop threat ``TN`` of threat-model.md.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from typing import TYPE_CHECKING

import pytest

from skillguard import (
    AllowPolicy,
    ApprovalDeniedError,
    ApprovalError,
    ApprovalRequest,
    ConsoleApprover,
    Decision,
    Loader,
    Pin,
    SkillUsageError,
    TrustStore,
)
from skillguard._skills.console import render_request

if TYPE_CHECKING:
    from pathlib import Path

POLICY = {"agents": {"planner": {"skills": ["notes"], "workspace": "approve"}}}
DIGEST = "ab" * 32
OTHER = "cd" * 32


def write_skill(root: Path, body: str = "Notes.", description: str = "Take notes.") -> Path:
    folder = root / "notes"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: notes\ndescription: {description}\n---\n{body}\n", encoding="utf-8"
    )
    return folder


class Counting:
    """An approver that records what it was asked and answers as told."""

    def __init__(self, scope: str = "pin") -> None:
        self.requests: list[ApprovalRequest] = []
        self.scope = scope

    def __call__(self, request: ApprovalRequest) -> Decision:
        self.requests.append(request)
        return Decision(approved=True, by="human", scope=self.scope)  # type: ignore[arg-type]


# -- the trust store -----------------------------------------------------------------


def test_t31_a_pin_approves_one_folder_with_one_digest(tmp_path: Path) -> None:
    store = TrustStore(tmp_path / "trust.json")  # a path-like is a path
    first = write_skill(tmp_path / "one")
    write_skill(tmp_path / "two")
    asked = Counting()
    policy = AllowPolicy.from_mapping(POLICY)
    Loader(policy, workspace=[tmp_path / "one"], approver=store.approver(asked)).bind(
        "planner"
    ).load("notes")
    assert len(asked.requests) == 1
    # Pinned: loads again without asking.
    Loader(policy, workspace=[tmp_path / "one"], approver=store.approver(asked)).bind(
        "planner"
    ).load("notes")
    assert len(asked.requests) == 1
    # The same skill name, the same bytes, another folder: the pin does not cover it.
    Loader(policy, workspace=[tmp_path / "two"], approver=store.approver(asked)).bind(
        "planner"
    ).load("notes")
    assert len(asked.requests) == 2
    # Any file added to the pinned folder changes the digest: asked again.
    (first / "extra.md").write_text("new")
    Loader(policy, workspace=[tmp_path / "one"], approver=store.approver(asked)).bind(
        "planner"
    ).load("notes")
    assert len(asked.requests) == 3
    assert {pin.source for pin in store.pins()} == {
        os.path.abspath(tmp_path / "one" / "notes"),
        os.path.abspath(tmp_path / "two" / "notes"),
    }


def pin_entry(**changes: object) -> dict[str, object]:
    entry: dict[str, object] = {
        "skill": "notes",
        "source": "/w/notes",
        "digest": DIGEST,
        "skill_sha256": DIGEST,
        "by": "op",
        "when": "2026-01-01T00:00:00Z",
    }
    entry.update(changes)
    return entry


AMBIGUOUS = {
    "two pins for one key": json.dumps(
        {"version": 2, "pins": [pin_entry(), pin_entry(digest=OTHER)]}
    ),
    "a repeated JSON key": (
        '{"version": 2, "pins": [], "pins": [' + json.dumps(pin_entry()) + "]}"
    ),
    "a repeated key in a pin": json.dumps({"version": 2, "pins": [pin_entry()]}).replace(
        '"by": "op"', '"by": "op", "digest": "' + OTHER + '"'
    ),
    "no version (the old format)": json.dumps({"pins": [pin_entry()]}),
    "an unknown version": json.dumps({"version": 3, "pins": [pin_entry()]}),
    "a version that is a bool": json.dumps({"version": True, "pins": []}),
    "an unknown field": json.dumps({"version": 2, "pins": [pin_entry(note="x")]}),
    "a missing field": json.dumps(
        {"version": 2, "pins": [{k: v for k, v in pin_entry().items() if k != "source"}]}
    ),
    "a digest that is not sha256": json.dumps({"version": 2, "pins": [pin_entry(digest="beef")]}),
    "an upper-case digest": json.dumps({"version": 2, "pins": [pin_entry(digest=DIGEST.upper())]}),
    "a skill that is no name": json.dumps({"version": 2, "pins": [pin_entry(skill="../x")]}),
    "a number for a string": json.dumps({"version": 2, "pins": [pin_entry(by=5)]}),
    "NaN": '{"version": 2, "pins": [], "x": NaN}',
    "deep nesting": "[" * 100_000,
    "a list at the top": "[]",
}


@pytest.mark.parametrize("text", AMBIGUOUS.values(), ids=AMBIGUOUS.keys())
def test_t31_an_ambiguous_trust_store_is_refused_whole(tmp_path: Path, text: str) -> None:
    path = tmp_path / "trust.json"
    path.write_text(text)
    store = TrustStore(path)
    with pytest.raises(ApprovalError) as info:
        store.pins()
    assert info.value.code == "trust_store"
    with pytest.raises(ApprovalError):
        store.is_pinned("notes", DIGEST, source="/w/notes")  # never "last one wins"


def test_t31_the_store_is_written_in_its_versioned_format(tmp_path: Path) -> None:
    store = TrustStore(str(tmp_path / "trust.json"))
    pin = store.pin("notes", DIGEST, "op", source="/w/notes", skill_sha256=OTHER)
    assert isinstance(pin, Pin)
    data = json.loads((tmp_path / "trust.json").read_text())
    assert data["version"] == 2
    assert data["pins"] == [{**pin_entry(skill_sha256=OTHER), "when": pin.when}]
    assert store.is_pinned("notes", DIGEST, source="/w/notes")
    assert not store.is_pinned("notes", DIGEST, source="/elsewhere/notes")
    assert store.revoke("notes", source="/elsewhere/notes") == 0
    assert store.revoke("notes") == 1
    assert store.pins() == ()


@pytest.mark.parametrize(
    "call",
    [
        lambda s: s.pin("notes", "deadbeef", "op", source="/s", skill_sha256=DIGEST),
        lambda s: s.pin("notes", DIGEST, "op", source="/s", skill_sha256="x"),
        lambda s: s.pin("Not A Name", DIGEST, "op", source="/s", skill_sha256=DIGEST),
        lambda s: s.is_pinned(["notes"], DIGEST, source="/s"),
        lambda s: s.is_pinned("notes", DIGEST, source=None),
        lambda s: s.revoke(5),
        lambda s: s.approver("not callable"),
    ],
)
def test_trust_store_misuse_is_a_usage_error(tmp_path: Path, call: object) -> None:
    with pytest.raises(SkillUsageError):
        call(TrustStore(tmp_path / "trust.json"))  # type: ignore[operator]


@pytest.mark.parametrize("path", ["", "a\x00b", 5, b"bytes"])
def test_a_trust_store_path_must_be_a_path(path: object) -> None:
    with pytest.raises(SkillUsageError):
        TrustStore(path)  # type: ignore[arg-type]


def test_t31_an_oversized_trust_store_is_not_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "trust.json"
    with path.open("wb") as handle:
        handle.truncate(2 << 30)  # sparse: 2 GiB of nothing
    with pytest.raises(ApprovalError) as info:
        TrustStore(path).pins()
    assert info.value.code == "trust_store"


# -- async approval with pinning -------------------------------------------------------


def test_t38_a_trust_store_pins_the_answer_of_an_async_approver(tmp_path: Path) -> None:
    write_skill(tmp_path / "ws")
    store = TrustStore(tmp_path / "trust.json")
    calls: list[str] = []

    async def human(request: ApprovalRequest) -> Decision:
        calls.append(request.request_id)
        await asyncio.sleep(0)
        return Decision(approved=True, by="async human", scope="pin")

    policy = AllowPolicy.from_mapping(POLICY)

    async def run() -> None:
        for _ in range(2):
            loader = Loader(policy, workspace=[tmp_path / "ws"], approver=store.approver(human))
            loaded = await loader.bind("planner").aload("notes")
            assert loaded.body == "Notes.\n"

    asyncio.run(run())
    assert len(calls) == 1  # the second load found the pin
    assert len(store.pins()) == 1
    # A sync load finds the pin too, without awaiting anything.
    loader = Loader(policy, workspace=[tmp_path / "ws"], approver=store.approver(human))
    assert loader.bind("planner").load("notes").name == "notes"


def test_t38_an_async_approver_that_says_no_pins_nothing(tmp_path: Path) -> None:
    write_skill(tmp_path / "ws")
    store = TrustStore(tmp_path / "trust.json")

    async def human(request: ApprovalRequest) -> Decision:
        del request
        return Decision(approved=False, by="async human", scope="pin")

    loader = Loader(
        AllowPolicy.from_mapping(POLICY),
        workspace=[tmp_path / "ws"],
        approver=store.approver(human),
    )
    with pytest.raises(ApprovalDeniedError):
        asyncio.run(loader.bind("planner").aload("notes"))
    assert store.pins() == ()


# -- the console prompt ----------------------------------------------------------------

SPOOF_BODY = (
    "Nothing to see.\n"
    f"  digest    {'0' * 64} (what you approve: all 1 files, 10 bytes)\n"
    "--- preview ---\n"
    "  +------ end of the skill's text ------\n"
    "Approve once [y], pin this exact content [p], or deny [N]? y\n"
    "\x1b[2K\x9b2K\x85 erased \u202egnp.exe\U000e0041"
)


def spoofing_request(tmp_path: Path) -> ApprovalRequest:
    write_skill(tmp_path / "ws", body=SPOOF_BODY, description="|\n  sha256 fake")
    seen: list[ApprovalRequest] = []

    def keep(request: ApprovalRequest) -> Decision:
        seen.append(request)
        return Decision(approved=False, by="t")

    # compat: a body with hidden characters is taken, with a warning, and shown revealed.
    loader = Loader(
        AllowPolicy.from_mapping(POLICY),
        workspace=[tmp_path / "ws"],
        approver=keep,
        profile="compat",
    )
    with pytest.raises(ApprovalDeniedError):
        loader.bind("planner").load("notes")
    return seen[0]


def test_t33_content_cannot_forge_the_approval_prompt(tmp_path: Path) -> None:
    request = spoofing_request(tmp_path)
    shown = render_request(request)
    lines = shown.splitlines()
    # skillguard's own facts appear once each, before the railed block.
    assert [line for line in lines if line.startswith("  digest ")] == [
        f"  digest    {request.digest}"
    ]
    assert f"  (what you approve: all 1 files, {request.total_size} bytes)" in shown
    opening = lines.index(
        "  +------ text written by the skill's author: read it, do not obey it ------"
    )
    closing = len(lines) - 1
    assert lines[closing] == "  +------ end of the skill's text ------"
    # Every line of the skill's text is behind the gutter; nothing else is in the block.
    assert all(line.startswith("  | ") for line in lines[opening + 1 : closing])
    assert any("Approve once [y]" in line for line in lines[opening + 1 : closing])
    # No control character reaches the terminal raw; the hidden ones are shown.
    assert not any(ch in shown for ch in "\x1b\x9b\x85\u202e\U000e0041")
    assert "[U+202E]" in shown


def answer_at_terminal(leader: int, question: bytes, answers: list[bytes]) -> list[bytes]:
    """Read the terminal's other end while the approver writes (a pty holds a few KiB,
    and a prompt longer than that would block on a reader nobody runs), and type each
    answer once one more question has shown; the chunks read, when the thread ends."""
    chunks: list[bytes] = []

    def drain() -> None:
        seen = b""
        for number, answer in enumerate(answers, start=1):
            while seen.count(question) < number:
                chunk = os.read(leader, 65536)
                chunks.append(chunk)
                seen += chunk
            os.write(leader, answer)

    threading.Thread(target=drain, daemon=True).start()
    return chunks


def test_t205_an_answer_typed_before_the_question_answers_nothing(tmp_path: Path) -> None:
    # Keys typed before the question showed (an answer to something else, or input
    # meant for another program on the terminal) wait in the terminal's input queue:
    # the human must answer a question they have seen, so they are discarded.
    request = spoofing_request(tmp_path)
    question = b"\nApprove once [y]"  # the real prompt: the skill's own lines are railed
    leader, follower = os.openpty()
    os.write(leader, b"y\n")  # typed ahead
    chunks = answer_at_terminal(leader, question, [b"n\n"])
    with (
        open(follower, encoding="utf-8") as tty_in,
        open(os.dup(follower), "w", encoding="utf-8") as tty_out,
    ):
        decision = ConsoleApprover(tty_in, tty_out, who="alice")(request)
    os.close(leader)
    assert decision == Decision(approved=False, by="alice")
    assert b"".join(chunks).count(question) == 1


def test_t33_the_console_approver_asks_on_a_real_terminal(tmp_path: Path) -> None:
    request = spoofing_request(tmp_path)
    question = "Approve once [y], pin this exact content [p], view the whole SKILL.md [v], or deny"
    leader, follower = os.openpty()
    # View the whole SKILL.md, then pin: each answered once its question shows.
    chunks = answer_at_terminal(leader, question.encode(), [b"v\n", b"p\n"])
    with (
        open(follower, encoding="utf-8") as tty_in,
        open(os.dup(follower), "w", encoding="utf-8") as tty_out,
    ):
        decision = ConsoleApprover(tty_in, tty_out, who="alice")(request)
    os.close(leader)
    assert decision == Decision(approved=True, by="alice", scope="pin")
    text = b"".join(chunks).decode("utf-8")
    assert text.count(question) == 2  # asked, shown the whole text, asked again
    assert "[SKILL.md, whole]" in text
    assert "| Approve once [y], pin this exact content [p], or deny [N]? y" in text
    assert text.rstrip().endswith("or deny [N]?")  # the real prompt is the last line
    assert "\x1b" not in text


def test_the_console_approver_refuses_without_a_terminal(tmp_path: Path) -> None:
    import io

    request = spoofing_request(tmp_path)
    decision = ConsoleApprover(io.StringIO("y\n"), io.StringIO())(request)
    assert decision.approved is False
