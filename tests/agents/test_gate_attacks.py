"""The agent-file approval gate attacked as a hostile repository would (threat-model.md
T131-T134): approver threads under ``aagent_context``, the prompt's wording, and the
races and file kinds that the T121-T126 tests do not reach.

Every test builds a real repository under tmp_path; approvers are plain callables, and
an approver nobody answers blocks on a real ``threading.Event``.
"""

from __future__ import annotations

import asyncio
import gc
import io
import json
import os
import shutil
import subprocess
import sys
import threading
from typing import TYPE_CHECKING

import pytest

from skillguard import (
    AllowPolicy,
    ApprovalDeniedError,
    ApprovalRequest,
    ConsoleApprover,
    Decision,
    Limits,
    Loader,
    SkillError,
    SkillUsageError,
    TrustStore,
    deny_all,
)
from skillguard._cli.main import main
from skillguard._skills.console import render_request
from skillguard._skills.truststore import pin_key
from skillguard.audit import AuditLog, verify_records

if TYPE_CHECKING:
    from pathlib import Path

    from skillguard import AgentSkills

POLICY = {"agents": {"orchestrator": {"skills": [], "tools": ["Read"]}}}
AGENT = (
    "---\nname: Reviewer\ndescription: Reviews code.\n---\n"
    "## Persona\nA careful reviewer.\n\n"
    "## Core Knowledge\n- Read docs/style.md\n\n"
    "## Rules\n- Never approve without tests.\n"
)
YES = Decision(approved=True, by="alice")


def make_repo(root: Path, agent: str = AGENT, knowledge: str = "# Style\nShort lines.\n") -> Path:
    (root / ".claude" / "agents").mkdir(parents=True)
    (root / ".claude" / "agents" / "reviewer.md").write_text(agent)
    (root / "docs").mkdir()
    (root / "docs" / "style.md").write_text(knowledge)
    return root


def handle(tmp_path: Path, approver: object, **kwargs: object) -> AgentSkills:
    loader = Loader(
        AllowPolicy.from_mapping(POLICY),
        audit=AuditLog(tmp_path / "audit.log"),
        approver=approver,  # type: ignore[arg-type]
        **kwargs,  # type: ignore[arg-type]
    )
    return loader.bind("orchestrator")


def records(tmp_path: Path) -> list[dict[str, object]]:
    lines = (tmp_path / "audit.log").read_bytes().splitlines()
    assert verify_records(lines).intact
    return [json.loads(line) for line in lines[1:]]


class AwayHuman:
    """A sync approver whose human is away until the test lets them answer."""

    def __init__(self, *, blocked_calls: int = 1_000) -> None:
        self.back = threading.Event()
        self.asked = threading.Event()
        self.threads: list[threading.Thread] = []
        self.blocked_calls = blocked_calls

    def __call__(self, request: ApprovalRequest) -> Decision:
        del request
        self.threads.append(threading.current_thread())
        self.asked.set()
        if len(self.threads) <= self.blocked_calls:
            self.back.wait()
        return Decision(approved=True, by="late human")

    def answer_all(self) -> None:
        self.back.set()
        for thread in self.threads:
            thread.join(timeout=30)
            assert not thread.is_alive()


def timed_out_code(agents: AgentSkills, repo: Path) -> str:
    async def run() -> str:
        with pytest.raises(ApprovalDeniedError) as info:
            await agents.aagent_context("reviewer", repo=repo, harnesses=("claude",), timeout=0.01)
        return info.value.code

    return asyncio.run(run())


def test_t131_abandoned_agent_file_approvers_share_the_loaders_cap(tmp_path: Path) -> None:
    # A sync approver under aagent_context ran in the loop's default executor: a prompt
    # nobody answered held one of its workers forever, outside the loader's cap, and
    # its late answer vanished without a record.
    repo = make_repo(tmp_path / "repo")
    human = AwayHuman(blocked_calls=1)
    agents = handle(tmp_path, human, limits=Limits(max_abandoned_approvers=1))
    assert timed_out_code(agents, repo) == "timed_out"
    assert human.threads[0].name.startswith("skillguard-approver-")
    # At the cap: refused at once, the human not asked again.
    assert timed_out_code(agents, repo) == "too_many_abandoned"
    assert len(human.threads) == 1
    human.answer_all()
    # The late yes served nothing, and the thread left the count: the human is asked.
    served = asyncio.run(
        agents.aagent_context("reviewer", repo=repo, harnesses=("claude",), timeout=30)
    )
    assert served.approver == "late human"
    events = [(r["event"], r.get("code")) for r in records(tmp_path)]
    assert events == [
        ("agent_approval_requested", None),
        ("agent_context_denied", "timed_out"),
        ("agent_approval_requested", None),
        ("agent_context_denied", "too_many_abandoned"),
        ("approval_late", "late_answer"),
        ("agent_approval_requested", None),
        ("agent_context_served", None),
    ]
    assert not agents._state.pending._abandoned


def test_t131_a_cancelled_agent_file_call_abandons_its_approver_thread(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    human = AwayHuman()
    agents = handle(tmp_path, human, approval_timeout=None)
    loader = agents._loader
    loop = asyncio.new_event_loop()
    try:
        waiting = loop.create_task(
            agents.aagent_context("reviewer", repo=repo, harnesses=("claude",))
        )
        loop.run_until_complete(loop.run_in_executor(None, human.asked.wait, 30))
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            loop.run_until_complete(waiting)
        assert len(loader._state.pending._abandoned) == 1
        human.answer_all()
        loop.run_until_complete(asyncio.sleep(0))
    finally:
        loop.close()
    assert not loader._state.pending._abandoned
    late = [r for r in records(tmp_path) if r["event"] == "approval_late"]
    assert [(r["skill"], r["approver"], r["decision"]) for r in late] == [
        ("reviewer", "late human", "none")
    ]


def test_t131_at_the_cap_a_pinned_agent_file_is_still_served(tmp_path: Path) -> None:
    # A pin is answered by the trust store, not the human who stopped answering; the
    # cap must look the pin up under the agent file's own key (``pin_key``).
    repo = make_repo(tmp_path / "repo")
    human = AwayHuman(blocked_calls=1)
    store = TrustStore(tmp_path / "trust.json")
    agents = handle(tmp_path, store.approver(human), limits=Limits(max_abandoned_approvers=1))
    assert timed_out_code(agents, repo) == "timed_out"
    assert timed_out_code(agents, repo) == "too_many_abandoned"
    seen: list[ApprovalRequest] = []

    def keep(request: ApprovalRequest) -> Decision:
        seen.append(request)
        return Decision(approved=False, by="x")

    (tmp_path / "other").mkdir()
    with pytest.raises(ApprovalDeniedError):
        handle(tmp_path / "other", keep).agent_context("reviewer", repo=repo, harnesses=("claude",))
    (request,) = seen
    name, source = pin_key(request)
    store.pin(name, request.digest, "bob", source=source, skill_sha256=request.sha256)
    served = asyncio.run(agents.aagent_context("reviewer", repo=repo, harnesses=("claude",)))
    assert served.approver == "trust-store"
    assert len(human.threads) == 1
    human.answer_all()


def test_t131_the_console_prompt_for_an_agent_file_names_what_it_shows(
    tmp_path: Path,
) -> None:
    # The prompt offered "view the whole SKILL.md" for an agent file, which has none,
    # and railed the agent file's text as "the skill's".
    repo = make_repo(tmp_path / "repo")
    seen: list[ApprovalRequest] = []

    def keep(request: ApprovalRequest) -> Decision:
        seen.append(request)
        return Decision(approved=False, by="x")

    with pytest.raises(ApprovalDeniedError):
        handle(tmp_path, keep).agent_context("reviewer", repo=repo, harnesses=("claude",))
    (request,) = seen

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    out = Terminal()
    decision = ConsoleApprover(Terminal("v\ny\n"), out, who="alice")(request)
    assert decision == YES
    text = out.getvalue()
    question = "pin this exact content [p], show every file again [v], or deny [N]? "
    assert text.count(question) == 2
    assert "SKILL.md" not in text
    assert "skill's" not in text
    assert text.count("[knowledge file docs/style.md, whole]") == 2
    assert os.linesep not in question


def test_t132_every_tool_and_the_model_are_shown_whole(tmp_path: Path) -> None:
    # The request cut each frontmatter value at 512 characters (and the console at 300)
    # while the envelope serves every tool and the model whole: a long tools list hid
    # its last grants from the human who approved it.
    tools = ", ".join(f"Bash(tool{number:03d}:*)" for number in range(60))
    model = "sonnet" + "x" * 600 + "-hidden-tail"
    agent = AGENT.replace("description: Reviews code.\n", f"description: d\ntools: {tools}\n")
    agent = agent.replace("description: d\n", f"description: d\nmodel: {model}\n")
    repo = make_repo(tmp_path / "repo", agent)
    seen: list[ApprovalRequest] = []

    def keep(request: ApprovalRequest) -> Decision:
        seen.append(request)
        return YES

    served = handle(tmp_path, keep).agent_context("reviewer", repo=repo, harnesses=("claude",))
    (request,) = seen
    envelope = served.envelope()
    shown = "".join(
        line.removeprefix("      ... ").removeprefix("    ")
        for line in render_request(request).splitlines()
    )
    assert envelope["model"] == model
    assert f"'model': '{model}'" in shown
    assert len(envelope["tools"]) == 60  # type: ignore[arg-type]
    assert f"'tools': '{tools}'" in shown
    assert all(len(line) <= 76 for line in render_request(request).splitlines())


BIND = """
import sys
from skillguard import AllowPolicy, Loader, SkillError

agents = Loader(AllowPolicy.from_mapping({"agents": {"o": {"skills": []}}})).bind("o")
try:
    served = agents.agent_context("reviewer", repo=sys.argv[1], operator_agents=[sys.argv[2]])
except SkillError as exc:
    print(exc.code)
else:
    print(served.source)
"""


def _in_mount_namespace(tmp_path: Path, bind: Path, at: Path, *args: str) -> str:
    """Run BIND with *bind* mounted at *at* in a mount namespace of its own."""
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("no unshare(1) to make a bind mount without touching the host")
    script = tmp_path / "bind.py"
    script.write_text(BIND)
    command = f'mount --bind "$1" "$2" && shift 2 && exec "{sys.executable}" "{script}" "$@"'
    done = subprocess.run(
        [
            unshare,
            "--mount",
            "--map-root-user",
            "--propagation",
            "private",
            "sh",
            "-c",
            command,
            "sh",
            str(bind),
            str(at),
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if done.returncode != 0 and "mount" in done.stderr + done.stdout:
        pytest.skip("this system does not allow a private mount namespace")
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_t133_an_operator_folder_on_a_bind_mount_of_the_repo_is_refused(
    tmp_path: Path,
) -> None:
    # Judged on real paths only, an operator folder reaching the repository through a
    # bind mount (a container's /workspace, a second mount point) passed the check,
    # and the repository's own agent file was served unapproved as the operator's.
    repo = make_repo(tmp_path / "repo")
    mount = tmp_path / "mnt"
    mount.mkdir()
    out = _in_mount_namespace(tmp_path, repo, mount, str(repo), str(mount / ".claude/agents"))
    assert out == "bad_argument"
    # The repository named through the mount, the operator folder by its real path.
    out = _in_mount_namespace(tmp_path, repo, mount, str(mount), str(repo / ".claude/agents"))
    assert out == "bad_argument"
    # A folder of the repository mounted elsewhere: no folder above the mount is the
    # repository, but the mount table says where it comes from.
    out = _in_mount_namespace(tmp_path, repo / ".claude", mount, str(repo), str(mount / "agents"))
    assert out == "bad_argument"


def test_t133_a_folder_beside_the_repo_on_the_same_mount_is_the_operators(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo")
    (tmp_path / "home" / "agents").mkdir(parents=True)
    (tmp_path / "home" / "agents" / "reviewer.md").write_text(
        "---\nname: reviewer\ndescription: d\n---\nThe operator's own.\n"
    )
    mount = tmp_path / "mnt"
    mount.mkdir()
    out = _in_mount_namespace(tmp_path, tmp_path / "home", mount, str(repo), str(mount / "agents"))
    assert out == "operator"


def test_t131_an_agent_file_approver_of_a_closed_loop_is_counted_then_heard(
    tmp_path: Path,
) -> None:
    # A host closed its loop while aagent_context waited for the human: the thread
    # still waits, so it counts against the cap (the next sweep finds it), and the
    # orphaned call, collected later, takes no lock and touches no closed loop.
    repo = make_repo(tmp_path / "repo")
    human = AwayHuman(blocked_calls=1)
    agents = handle(tmp_path, human, limits=Limits(max_abandoned_approvers=1))
    loader = agents._loader
    loop = asyncio.new_event_loop()
    waiting = loop.create_task(agents.aagent_context("reviewer", repo=repo, harnesses=("claude",)))
    loop.run_until_complete(loop.run_in_executor(None, human.asked.wait, 30))
    loop.close()
    assert timed_out_code(agents, repo) == "too_many_abandoned"
    assert len(loader._state.pending._abandoned) == 1
    del waiting
    with loader._state._lock:
        collector = threading.Thread(target=gc.collect)
        collector.start()
        collector.join(timeout=30)
        assert not collector.is_alive()
    human.answer_all()
    assert not loader._state.pending._abandoned
    assert not loader._state.pending._alone
    events = [(r["event"], r.get("code")) for r in records(tmp_path)]
    assert ("approval_abandoned", "loop_closed") in events
    assert ("approval_late", "late_answer") in events
    assert not any(event == "agent_context_served" for event, _ in events)


OPERATOR_AGENT = "---\nname: reviewer\ndescription: d\n---\nThe operator's own.\n"


def test_t134_a_tilde_operator_folder_is_refused_not_read_from_the_cwd(tmp_path: Path) -> None:
    # "~/.claude/agents" was taken literally, as a folder of the working directory that
    # holds nothing: the operator's own agent silently gave way to the repository's.
    repo = make_repo(tmp_path / "repo")
    for folder in ("~/.claude/agents", "~", "~operator/agents"):
        with pytest.raises(SkillUsageError) as caught:
            handle(tmp_path, deny_all).agent_context(
                "reviewer", repo=repo, harnesses=("claude",), operator_agents=[folder]
            )
        assert caught.value.code == "bad_argument"
        assert "'~'" in caught.value.reason


def test_t134_the_cli_expands_a_tilde_operator_folder(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # "--operator-agents=~/agents" reaches the command unexpanded by the shell.
    repo = make_repo(tmp_path / "repo")
    (tmp_path / "home" / "agents").mkdir(parents=True)
    (tmp_path / "home" / "agents" / "reviewer.md").write_text(OPERATOR_AGENT)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    code = main(
        [
            "agent",
            "context",
            *("--agent", "reviewer", "--repo", str(repo), "--harness", "claude"),
            "--operator-agents=~/agents",
        ]
    )
    envelope = json.loads(capsys.readouterr().out)
    assert (code, envelope["full_body"]) == (0, "The operator's own.\n")


def test_t134_a_relative_operator_folder_inside_the_repo_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Relative folders are the working directory's: run from inside the repository,
    # ".claude/agents" is the repository's own folder.
    repo = make_repo(tmp_path / "repo")
    monkeypatch.chdir(repo / "docs")
    for folder in ("../.claude/agents", ".", "../../repo/docs"):
        with pytest.raises(SkillUsageError, match="inside the repository"):
            handle(tmp_path, deny_all).agent_context(
                "reviewer", repo="..", harnesses=("claude",), operator_agents=[folder]
            )


def test_t122_a_repo_racing_renames_never_gets_unshown_text_served(tmp_path: Path) -> None:
    # A thread swaps the agent file and the knowledge file (atomic renames, and the
    # knowledge folder for a link to /etc) while the gate resolves, snapshots, asks and
    # serves: whatever is served is byte for byte what the human was shown.
    repo = make_repo(tmp_path / "repo")
    agent_file = repo / ".claude" / "agents" / "reviewer.md"
    knowledge = repo / "docs" / "style.md"

    def swap(path: Path, text: str) -> None:
        staged = path.with_name(path.name + ".new")
        staged.write_text(text)
        staged.replace(path)

    stop = threading.Event()

    def swapper() -> None:
        turn = 0
        while not stop.is_set():
            turn += 1
            swap(knowledge, ("EVIL" if turn % 2 else "good") + " knowledge\n")
            swap(agent_file, AGENT.replace("careful", "EVIL" if turn % 3 else "careful"))
            if turn % 5 == 0:
                (repo / "docs").rename(repo / "docs.old")
                (repo / "docs").symlink_to("/etc")
                (repo / "docs").unlink()
                (repo / "docs.old").rename(repo / "docs")

    seen: list[ApprovalRequest] = []

    def keep(request: ApprovalRequest) -> Decision:
        seen.append(request)
        return YES

    agents = handle(tmp_path, keep)
    racer = threading.Thread(target=swapper)
    racer.start()
    served_count = 0
    try:
        for _ in range(150):
            seen.clear()
            try:
                served = agents.agent_context("reviewer", repo=repo, harnesses=("claude",))
            except SkillError:
                continue
            served_count += 1
            (request,) = seen
            assert served.envelope()["full_body"] == request.full_text
            assert served.digest == request.digest
            texts = [entry.text for entry in served.knowledge if entry.text is not None]
            assert texts == [text for _, text in request.attachments]
    finally:
        stop.set()
        racer.join(timeout=30)
    assert served_count > 0
