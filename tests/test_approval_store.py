"""The trust store at its cap, and a writer killed mid-pin.

Real files, real processes and real signals. Test names that start with ``test_tN_``
stop threat ``TN`` of threat-model.md.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from skillguard import (
    ApprovalError,
    TrustStore,
)
from skillguard._cli import main

if TYPE_CHECKING:
    from pathlib import Path

CAP = 4 * 1024 * 1024  # the trust store's documented cap, in bytes
DIGEST = "ab" * 32


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
    # What is not a dead writer's temporary stays: one of a live writer (this process;
    # pid 1, which is another user's unless the tests run as root), a pid 0 (kill(0)
    # names a process group), a pid longer than any pid, a symlink named like a dead
    # writer's temporary (its target untouched), and another file's temporary.
    live = tmp_path / f".trust.json.{os.getpid()}.1.tmp"
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
