"""The trust store at its cap, a pin that cannot be written, and a writer killed mid-pin.

Real files, real processes and real signals; the full disk is a real tmpfs of 64 KiB,
mounted in a mount namespace of the test's own (skipped, with the reason, where the
system allows none). Test names that start with ``test_tN_`` stop threat ``TN`` of
threat-model.md.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import signal
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from skillguard import AllowPolicy, ApprovalError, ApprovalRequest, Decision, Loader, TrustStore
from skillguard._cli.main import main
from skillguard.audit import AuditLog, verify_records
from tests.fs.test_fs_write import file_size_limit

if TYPE_CHECKING:
    from pathlib import Path

CAP = 4 * 1024 * 1024  # the trust store's documented cap, in bytes
DIGEST = "ab" * 32
POLICY = {"agents": {"planner": {"skills": ["notes"], "workspace": "approve"}}}
AGENT_POLICY = {"agents": {"orchestrator": {"skills": [], "tools": ["Read"]}}}


def entry(number: int, source_chars: int, by: str = "op") -> dict[str, object]:
    """A pin as the documented format holds it, with a long source folder."""
    return {
        "by": by,
        "digest": DIGEST,
        "skill": "notes",
        "skill_sha256": DIGEST,
        "source": f"/w/{number:06d}/" + "s" * source_chars,
        "when": "2026-01-01T00:00:00Z",
    }


def document(entries: list[dict[str, object]]) -> bytes:
    return json.dumps({"version": 2, "pins": entries}, indent=2, sort_keys=True).encode() + b"\n"


def fill(path: Path, free: int, source_chars: int = 4000) -> int:
    """Write a store of exactly ``CAP - free`` bytes (big pins, the last one padded by its
    approver's name); the number of pins it holds."""
    per_pin = len(document([entry(0, source_chars)] * 2)) - len(document([entry(0, source_chars)]))
    count = (CAP - free - len(document([]))) // per_pin - 1
    entries = [entry(number, source_chars) for number in range(count)]
    last = entry(count, source_chars, by="p")
    short = len(document([*entries, last]))
    last["by"] = "p" * (1 + CAP - free - short)  # one more byte per ASCII character
    data = document([*entries, last])
    assert len(data) == CAP - free
    path.write_bytes(data)
    return count + 1


def write_skill(root: Path) -> Path:
    folder = root / "notes"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: notes\ndescription: Take notes.\n---\nNotes.\n")
    return root


def audit_records(path: Path) -> list[dict[str, object]]:
    lines = path.read_bytes().splitlines()
    assert verify_records(lines).intact
    return [json.loads(line) for line in lines[1:]]


class Human:
    """Approves and asks for a pin, counting how often it was asked."""

    def __init__(self) -> None:
        self.asked = 0

    def __call__(self, request: ApprovalRequest) -> Decision:
        del request
        self.asked += 1
        return Decision(approved=True, by="alice", scope="pin")


# -- T180: the store at its cap ------------------------------------------------------------


def test_t180_a_pin_that_would_pass_the_cap_is_refused_and_the_store_stays_readable(
    tmp_path: Path,
) -> None:
    # The reliability run's case: a store a few pins below its cap, then pin after pin.
    path = tmp_path / "trust.json"
    held = fill(path, free=3 * 4400)
    store = TrustStore(path)
    added = 0
    while True:
        before = path.read_bytes()
        try:
            store.pin(
                "notes", DIGEST, "op", source=f"/w/new/{added}/" + "n" * 4000, skill_sha256=DIGEST
            )
        except ApprovalError as exc:
            refused = exc
            break
        added += 1
        # Every write leaves a store the reader takes whole.
        assert len(store.pins()) == held + added
    assert added >= 1
    assert refused.code == "trust_store_full"
    assert path.read_bytes() == before  # the store is unchanged
    assert len(before) <= CAP
    # Every pin still works: the reader, the lookup, and the command line.
    assert len(store.pins()) == held + added
    assert store.is_pinned("notes", DIGEST, source=f"/w/new/0/{'n' * 4000}")


def test_t180_the_cap_holds_at_its_limit_and_refuses_one_byte_more(tmp_path: Path) -> None:
    path = tmp_path / "trust.json"
    fill(path, free=8000)
    store = TrustStore(path)
    store.pin("notes", DIGEST, "x", source="/w/edge", skill_sha256=DIGEST)
    written = path.stat().st_size
    # Re-pinning the same key with a longer name grows the file by one byte a character.
    store.pin("notes", DIGEST, "x" * (1 + CAP - written), source="/w/edge", skill_sha256=DIGEST)
    at_cap = path.read_bytes()
    assert len(at_cap) == CAP
    assert store.pinned("notes", "/w/edge") is not None  # exactly at the cap: read whole
    with pytest.raises(ApprovalError) as info:
        store.pin("notes", DIGEST, "x" * (2 + CAP - written), source="/w/edge", skill_sha256=DIGEST)
    assert info.value.code == "trust_store_full"
    assert path.read_bytes() == at_cap


def test_t180_trust_list_and_revoke_work_on_a_full_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "trust.json"
    held = fill(path, free=10)
    store = ["--trust-store", str(path)]
    assert main(["trust", "list", *store]) == 0
    assert capsys.readouterr().out.count("\n") == held
    with pytest.raises(ApprovalError) as info:
        TrustStore(path).pin("notes", DIGEST, "op", source="/w/one-more", skill_sha256=DIGEST)
    assert info.value.code == "trust_store_full"
    assert main(["trust", "revoke", "notes", "--source", f"/w/000000/{'s' * 4000}", *store]) == 0
    assert "revoked notes" in capsys.readouterr().out
    # Room again: the pin that was refused now fits.
    TrustStore(path).pin("notes", DIGEST, "op", source="/w/one-more", skill_sha256=DIGEST)
    assert main(["trust", "list", *store]) == 0
    assert capsys.readouterr().out.count("\n") == held


def test_t180_a_store_over_the_cap_says_so(tmp_path: Path) -> None:
    # A file written past the cap by hand (or by an older skillguard) approves nothing,
    # and the refusal names the cap instead of "cannot be read".
    path = tmp_path / "trust.json"
    path.write_bytes(document([entry(number, 4000) for number in range(1000)]))
    with pytest.raises(ApprovalError) as info:
        TrustStore(path).pins()
    assert info.value.code == "trust_store"
    assert str(CAP) in info.value.reason


# -- T181: a pin that cannot be written ------------------------------------------------------


def test_t181_a_failed_pin_is_recorded_and_the_approved_skill_served_once(
    tmp_path: Path,
) -> None:
    workspace = write_skill(tmp_path / "ws")
    fill(tmp_path / "trust.json", free=10)
    full = (tmp_path / "trust.json").read_bytes()
    store = TrustStore(tmp_path / "trust.json")
    human = Human()
    log = tmp_path / "audit.jsonl"
    loader = Loader(
        AllowPolicy.from_mapping(POLICY),
        workspace=[workspace],
        approver=store.approver(human),
        audit=AuditLog(log),
    )
    assert loader.bind("planner").load("notes").body == "Notes.\n"  # served once
    assert (tmp_path / "trust.json").read_bytes() == full
    events = [
        (r["event"], r.get("approver"), r.get("code"), r.get("scope")) for r in audit_records(log)
    ]
    assert events == [
        ("approval_requested", None, None, None),
        ("approval_granted", "alice", None, "pin"),  # the human's answer, as given
        ("pin_failed", "alice", "trust_store_full", "pin"),
        ("load_granted", "alice", None, None),
    ]
    assert "served this once" in str(audit_records(log)[-2]["reason"])
    # Nothing was pinned: the next load asks the human again.
    loader = Loader(
        AllowPolicy.from_mapping(POLICY), workspace=[workspace], approver=store.approver(human)
    )
    assert loader.bind("planner").load("notes").body == "Notes.\n"
    assert human.asked == 2


def test_t181_a_failed_pin_of_an_async_answer_is_recorded_too(tmp_path: Path) -> None:
    workspace = write_skill(tmp_path / "ws")
    fill(tmp_path / "trust.json", free=10)
    store = TrustStore(tmp_path / "trust.json")

    async def human(request: ApprovalRequest) -> Decision:
        del request
        await asyncio.sleep(0)
        return Decision(approved=True, by="async alice", scope="pin")

    log = tmp_path / "audit.jsonl"
    loader = Loader(
        AllowPolicy.from_mapping(POLICY),
        workspace=[workspace],
        approver=store.approver(human),
        audit=AuditLog(log),
    )
    loaded = asyncio.run(loader.bind("planner").aload("notes"))
    assert loaded.body == "Notes.\n"
    failed = [r for r in audit_records(log) if r["event"] == "pin_failed"]
    assert [(r["approver"], r["code"]) for r in failed] == [("async alice", "trust_store_full")]


def test_t181_a_failed_pin_of_an_agent_file_is_recorded_and_served_once(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".claude" / "agents").mkdir(parents=True)
    (repo / ".claude" / "agents" / "reviewer.md").write_text(
        "---\nname: reviewer\ndescription: Reviews code.\n---\nA careful reviewer.\n"
    )
    fill(tmp_path / "trust.json", free=10)
    log = tmp_path / "audit.jsonl"
    loader = Loader(
        AllowPolicy.from_mapping(AGENT_POLICY),
        approver=TrustStore(tmp_path / "trust.json").approver(Human()),
        audit=AuditLog(log),
    )
    served = loader.bind("orchestrator").agent_context("reviewer", repo=repo, harnesses=("claude",))
    assert served.approver == "alice"
    events = [(r["event"], r.get("approver"), r.get("code")) for r in audit_records(log)]
    assert events[-2:] == [
        ("pin_failed", "alice", "trust_store_full"),
        ("agent_context_served", "alice", None),
    ]


def test_t181_an_approver_name_no_pin_can_hold_is_a_failed_pin_not_a_denial(
    tmp_path: Path,
) -> None:
    workspace = write_skill(tmp_path / "ws")
    store = TrustStore(tmp_path / "trust.json")
    log = tmp_path / "audit.jsonl"
    for by in ("", "alice\nbob"):  # a pin holds one line of visible text

        def human(request: ApprovalRequest, by: str = by) -> Decision:
            del request
            return Decision(approved=True, by=by, scope="pin")

        loader = Loader(
            AllowPolicy.from_mapping(POLICY),
            workspace=[workspace],
            approver=store.approver(human),
            audit=AuditLog(log),
        )
        assert loader.bind("planner").load("notes").body == "Notes.\n"
    failed = [r for r in audit_records(log) if r["event"] == "pin_failed"]
    assert [r["code"] for r in failed] == ["bad_argument", "bad_argument"]
    assert store.pins() == ()


def test_t181_a_pin_the_file_system_refuses_is_a_failed_pin(tmp_path: Path) -> None:
    # The same failure as a full disk, where no tmpfs can be mounted: a real file-size
    # limit on this process makes the store's write fail (EFBIG), a store of 44 KB
    # against a limit of 16 KB, which the audit log stays under.
    workspace = write_skill(tmp_path / "ws")
    held = document([entry(number, 4000) for number in range(10)])
    (tmp_path / "trust.json").write_bytes(held)
    store = TrustStore(tmp_path / "trust.json")
    log = tmp_path / "audit.jsonl"
    loader = Loader(
        AllowPolicy.from_mapping(POLICY),
        workspace=[workspace],
        approver=store.approver(Human()),
        audit=AuditLog(log),
    )
    handle = loader.bind("planner")
    prepared = handle.prepare("notes")
    with file_size_limit(16 * 1024):
        loaded = handle.load(prepared)
    assert loaded.body == "Notes.\n"
    (failed,) = [r for r in audit_records(log) if r["event"] == "pin_failed"]
    assert (failed["code"], failed["approver"]) == ("trust_store", "alice")
    assert "EFBIG" in str(failed["reason"])
    assert (tmp_path / "trust.json").read_bytes() == held
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "audit.jsonl",
        "audit.jsonl.lock",
        "trust.json",
        "trust.json.lock",
        "ws",
    ]


DISK_FULL = """
import json, os, sys
from skillguard import AllowPolicy, Decision, Loader, SkillError, TrustStore
from skillguard.audit import AuditLog

store_folder, workspace, log = sys.argv[1:4]
# Fill the file system until it takes no more bytes.
filler = os.open(os.path.join(store_folder, "filler"), os.O_WRONLY | os.O_CREAT, 0o600)
try:
    while os.write(filler, b"x" * 4096):
        pass
except OSError:
    pass
os.close(filler)
store = TrustStore(os.path.join(store_folder, "trust.json"))
POLICY = {"agents": {"planner": {"skills": ["notes"], "workspace": "approve"}}}
human = lambda request: Decision(approved=True, by="alice", scope="pin")
loader = Loader(
    AllowPolicy.from_mapping(POLICY),
    workspace=[workspace],
    approver=store.approver(human),
    audit=AuditLog(log),
)
try:
    body = loader.bind("planner").load("notes").body
except SkillError as exc:
    body = f"refused: {exc.code}"
print(json.dumps({"body": body, "left": sorted(os.listdir(store_folder))}))
"""


def test_t181_a_pin_on_a_full_disk_is_recorded_as_a_failed_pin(tmp_path: Path) -> None:
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("no unshare(1) to mount a small tmpfs without touching the host")
    workspace = write_skill(tmp_path / "ws")
    (tmp_path / "small").mkdir()
    script = tmp_path / "disk_full.py"
    script.write_text(DISK_FULL)
    log = tmp_path / "audit.jsonl"
    command = f'mount -t tmpfs -o size=64k tmpfs "$1" && exec "{sys.executable}" "{script}" "$@"'
    namespace = [unshare, "--mount", "--map-root-user", "--propagation", "private"]
    arguments = [str(tmp_path / "small"), str(workspace), str(log)]
    done = subprocess.run(
        [*namespace, "sh", "-c", command, "sh", *arguments],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if done.returncode != 0 and "mount" in done.stderr:
        pytest.skip(f"this system does not allow a tmpfs in a mount namespace: {done.stderr}")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["body"] == "Notes.\n"  # the human approved: served this once
    assert result["left"] == ["filler", "trust.json.lock"]  # no temporary, no store
    records = audit_records(log)
    granted = next(r for r in records if r["event"] == "approval_granted")
    assert granted["approver"] == "alice"  # never "no valid answer"
    (failed,) = [r for r in records if r["event"] == "pin_failed"]
    assert (failed["code"], failed["approver"]) == ("trust_store", "alice")
    assert "ENOSPC" in str(failed["reason"])
    assert not any(r["event"] == "approval_denied" for r in records)


# -- T182: a writer killed mid-pin -------------------------------------------------------------

KILLED_MID_PIN = """
import os, signal, sys
from skillguard import TrustStore

real_fsync = os.fsync

def fsync(fd):
    # The temporary is written and synced, not yet renamed: say so, and wait for the kill.
    real_fsync(fd)
    os.write(1, b"synced\\n")
    while True:
        signal.pause()

os.fsync = fsync
TrustStore(sys.argv[1]).pin(
    "notes", "ab" * 32, "killed", source="/w/" + sys.argv[2], skill_sha256="ab" * 32
)
"""


def kill_mid_pin(script: Path, store: Path, number: int) -> int:
    """Run a writer that stops between writing its temporary and renaming it, SIGKILL it
    there, reap it; its pid (now free)."""
    writer = subprocess.Popen(
        [sys.executable, str(script), str(store), str(number)], stdout=subprocess.PIPE
    )
    assert writer.stdout is not None
    assert writer.stdout.readline() == b"synced\n"
    writer.send_signal(signal.SIGKILL)
    assert writer.wait(timeout=60) == -signal.SIGKILL
    writer.stdout.close()
    return writer.pid


def test_t182_temporaries_of_writers_killed_mid_pin_go_on_the_next_write(tmp_path: Path) -> None:
    script = tmp_path / "killed.py"
    script.write_text(KILLED_MID_PIN)
    store = tmp_path / "trust.json"
    TrustStore(store).pin("notes", DIGEST, "op", source="/w/first", skill_sha256=DIGEST)
    dead = []
    for number in range(3):
        dead.append(kill_mid_pin(script, store, number))
        # The killed writer's temporary is left; each writer removed the one before.
        leftovers = [p.name.split(".")[3] for p in tmp_path.glob(".trust.json.*.tmp")]
        assert leftovers == [str(dead[-1])]
    # What is not a dead writer's temporary stays: one of a live writer (another
    # process, alive; pid 1, which is another user's unless the tests run as root), a
    # pid 0 (kill(0) names a process group), a pid longer than any pid, a symlink named
    # like a dead writer's temporary (its target untouched), and another file's
    # temporary. (This process's own pid is no live writer: T215.)
    waiting = [sys.executable, "-c", "import sys; sys.stdin.read()"]
    alive = subprocess.Popen(waiting, stdin=subprocess.PIPE)
    live = tmp_path / f".trust.json.{alive.pid}.1.tmp"
    live.write_text("a live writer's")
    odd = [".trust.json.1.1.tmp", ".trust.json.0.1.tmp", ".trust.json.12345678901.1.tmp"]
    for name in odd:
        (tmp_path / name).write_text("not a dead writer's")
    target = tmp_path / "target"
    target.write_text("not skillguard's")
    link = tmp_path / f".trust.json.{dead[0]}.7.tmp"
    link.symlink_to(target)
    other = tmp_path / f".other.json.{dead[0]}.1.tmp"
    other.write_text("another file's")
    # The killed writers changed nothing: the store holds what it held.
    assert [pin.source for pin in TrustStore(store).pins()] == ["/w/first"]
    TrustStore(store).pin("notes", DIGEST, "op", source="/w/second", skill_sha256=DIGEST)
    assert sorted(p.name for p in tmp_path.glob(".*.tmp")) == sorted(
        [live.name, link.name, other.name, *odd]
    )
    assert link.is_symlink()
    assert target.read_text() == "not skillguard's"
    assert len(TrustStore(store).pins()) == 2
    assert alive.stdin is not None
    alive.stdin.close()
    assert alive.wait(timeout=60) == 0


def test_t210_a_temporary_named_with_a_pid_no_process_can_have_never_breaks_a_pin(
    tmp_path: Path,
) -> None:
    # Ten digits pass the temporaries' pattern, but kill() takes a C int: a name a
    # repository (or a teammate) commits beside the store, with a pid past 2**31 - 1,
    # made every pin raise OverflowError, and the human's approval was recorded as
    # "no valid answer".
    workspace = write_skill(tmp_path / "ws")
    planted = [tmp_path / f".trust.json.{pid}.1.tmp" for pid in (2**31, 9_999_999_999)]
    for path in planted:
        path.write_text("not a writer's")
    store = TrustStore(tmp_path / "trust.json")
    log = tmp_path / "audit.jsonl"
    loader = Loader(
        AllowPolicy.from_mapping(POLICY),
        workspace=[workspace],
        approver=store.approver(Human()),
        audit=AuditLog(log),
    )
    assert loader.bind("planner").load("notes").body == "Notes.\n"
    events = [(r["event"], r.get("approver")) for r in audit_records(log)]
    assert events == [
        ("approval_requested", None),
        ("approval_granted", "alice"),
        ("load_granted", "alice"),
    ]
    assert [pin.by for pin in store.pins()] == ["alice"]
    # No process can have such a pid: no skillguard writer wrote these, and they stay.
    assert all(path.read_text() == "not a writer's" for path in planted)


PIN_BESIDE_A_MOUNT = """
import json, sys
from skillguard import ApprovalError, TrustStore
try:
    TrustStore(sys.argv[1]).pin("notes", "ab" * 32, "op", source="/w/n", skill_sha256="ab" * 32)
    print(json.dumps("pinned"))
except ApprovalError as exc:
    print(json.dumps(f"{exc.code}: {exc.reason}"))
"""


def test_t212_a_temporary_that_cannot_be_removed_never_stops_a_pin(tmp_path: Path) -> None:
    # A dead writer's temporary that unlink refuses: in a shared folder with the sticky
    # bit (/tmp, a team folder), one a teammate planted is theirs and EPERM; here, as a
    # test can make it anywhere, a mount point (EBUSY). Either made every pin fail.
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("no unshare(1) to make a bind mount without touching the host")
    store = tmp_path / "trust.json"
    planted = tmp_path / f".trust.json.{2**22 + 1}.1.tmp"  # past any pid_max: no process
    planted.write_text("a dead writer's, or so its name says")
    source = tmp_path / "mounted"
    source.write_text("mounted over it")
    script = tmp_path / "pin.py"
    script.write_text(PIN_BESIDE_A_MOUNT)
    command = f'mount --bind "$2" "$3" && exec "{sys.executable}" "{script}" "$1"'
    done = subprocess.run(
        [
            *(unshare, "--mount", "--map-root-user", "--propagation", "private"),
            *("sh", "-c", command, "sh", str(store), str(source), str(planted)),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if done.returncode != 0 and ("mount" in done.stderr or "unshare" in done.stderr):
        pytest.skip(f"this system does not allow a bind mount in a namespace: {done.stderr}")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == "pinned"
    assert [pin.source for pin in TrustStore(store).pins()] == ["/w/n"]
    assert planted.read_text() == "a dead writer's, or so its name says"  # left as it was


CRASHING_PINNER = """
import json, os, sys
from skillguard import ApprovalError, TrustStore

real_fsync = os.fsync

def fsync(fd):
    real_fsync(fd)
    if sys.argv[2] == "crash":
        os._exit(9)  # the temporary is written, not yet renamed: nothing unwinds

os.fsync = fsync
try:
    TrustStore(sys.argv[1]).pin(
        "notes", "ab" * 32, "op", source="/w/" + sys.argv[3], skill_sha256="ab" * 32
    )
    print(json.dumps([os.getpid(), "pinned"]))
except ApprovalError as exc:
    print(json.dumps([os.getpid(), f"{exc.code}: {exc.reason}"]))
"""


def test_t215_a_writer_that_crashed_with_this_writers_pid_leaves_nothing_for_good(
    tmp_path: Path,
) -> None:
    # A container restarted after a crash mid-pin: its process is pid 1 each time, so
    # the temporary the crashed one left looked alive for ever (kill(1, 0): ourselves);
    # with address randomisation off the thread id is the same too, and every later
    # pin failed on that name (EEXIST).
    unshare, setarch = shutil.which("unshare"), shutil.which("setarch")
    if unshare is None or setarch is None:
        pytest.skip("no unshare(1) or setarch(8) to run a writer as pid 1 of its own")
    store = tmp_path / "trust.json"
    script = tmp_path / "pinner.py"
    script.write_text(CRASHING_PINNER)
    namespace = [unshare, "--pid", "--fork", "--map-root-user"]
    outcomes = []
    for number, (how, fixed_addresses) in enumerate(
        [("crash", True), ("crash", False), ("pin", True)]
    ):
        same_thread_id = [setarch, "-R"] if fixed_addresses else []
        done = subprocess.run(
            [
                *namespace,
                *same_thread_id,
                sys.executable,
                str(script),
                str(store),
                how,
                str(number),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        if done.returncode not in (0, 9) and "unshare" in done.stderr + done.stdout:
            pytest.skip(f"this system allows no pid namespace: {done.stderr}")
        if done.returncode not in (0, 9) and "setarch" in done.stderr:
            pytest.skip(f"this system cannot turn address randomisation off: {done.stderr}")
        outcomes.append((done.returncode, done.stdout))
    assert [code for code, _ in outcomes] == [9, 9, 0]
    assert json.loads(outcomes[-1][1]) == [1, "pinned"]
    assert [pin.source for pin in TrustStore(store).pins()] == ["/w/2"]
    assert sorted(p.name for p in tmp_path.glob(".trust.json.*")) == []
