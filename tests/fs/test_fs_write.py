"""Writing the operator's own files: locks, atomic replacement, a dead writer's leftovers.

Real files, links and FIFOs under tmp_path. Test names that start with ``test_tN_``
stop threat ``TN`` of threat-model.md.
"""

from __future__ import annotations

import contextlib
import errno
import os
import resource
import signal
import stat
import subprocess
import sys
import threading
from typing import TYPE_CHECKING

import pytest

from skillguard import ApprovalError, TrustStore
from skillguard._fs.write import FileLock, write_atomic
from skillguard.audit import AuditError, AuditLog

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

DIGEST = "ab" * 32


def open_audit_log(path: Path) -> None:
    AuditLog(path)


def pin(path: Path) -> None:
    TrustStore(path).pin("notes", DIGEST, "op", source="/w/notes", skill_sha256=DIGEST)


WRITERS: dict[str, tuple[Callable[[Path], None], type[Exception]]] = {
    "audit log": (open_audit_log, AuditError),
    "trust store": (pin, ApprovalError),
}


@pytest.mark.parametrize("writer", WRITERS.values(), ids=WRITERS.keys())
def test_t183_a_lock_file_planted_as_a_symlink_is_never_followed(
    tmp_path: Path, writer: tuple[Callable[[Path], None], type[Exception]]
) -> None:
    write, error = writer
    target = tmp_path / "elsewhere" / "created-by-skillguard"
    target.parent.mkdir()
    lock = tmp_path / "file.json.lock"
    lock.symlink_to(target)
    with pytest.raises(error):
        write(tmp_path / "file.json")
    assert not target.exists()  # nothing was created through the link
    assert lock.is_symlink()
    assert not (tmp_path / "file.json").exists()


@pytest.mark.parametrize("writer", WRITERS.values(), ids=WRITERS.keys())
def test_t183_a_lock_file_that_is_not_a_regular_file_is_refused(
    tmp_path: Path, writer: tuple[Callable[[Path], None], type[Exception]]
) -> None:
    write, error = writer
    os.mkfifo(tmp_path / "file.json.lock")
    with pytest.raises(error):
        write(tmp_path / "file.json")
    assert stat.S_ISFIFO(os.lstat(tmp_path / "file.json.lock").st_mode)
    assert not (tmp_path / "file.json").exists()


def test_t183_write_atomic_syncs_the_folder_after_the_rename(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "report.html"
    target.write_bytes(b"old")
    synced: list[tuple[bool, bytes]] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        # What was synced, and what the target held at that moment.
        synced.append((stat.S_ISDIR(os.fstat(fd).st_mode), target.read_bytes()))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    write_atomic(str(target), b"new")
    assert synced == [(False, b"old"), (True, b"new")]
    # The folder synced is the target's own.
    assert target.read_bytes() == b"new"


def test_t183_write_atomic_replaces_a_link_and_never_writes_through_it(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.write_bytes(b"not skillguard's")
    target = tmp_path / "out.html"
    target.symlink_to(outside)
    write_atomic(str(target), b"page")
    assert not target.is_symlink()
    assert target.read_bytes() == b"page"
    assert outside.read_bytes() == b"not skillguard's"


def test_t183_a_link_planted_at_the_temporary_name_is_never_followed(tmp_path: Path) -> None:
    created = tmp_path / "created-by-skillguard"
    temporary = tmp_path / f".out.html.{os.getpid()}.{threading.get_ident()}.tmp"
    temporary.symlink_to(created)
    with pytest.raises(FileExistsError):  # O_EXCL: the link is not followed
        write_atomic(str(tmp_path / "out.html"), b"page")
    assert not created.exists()
    assert temporary.is_symlink()
    assert not (tmp_path / "out.html").exists()


@contextlib.contextmanager
def file_size_limit(limit: int) -> Iterator[None]:
    """A real RLIMIT_FSIZE on this process: a write past *limit* bytes fails (EFBIG)
    instead of the process being killed by SIGXFSZ."""
    before = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, before)


def test_a_write_that_fails_leaves_the_target_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "report.html"
    target.write_bytes(b"old")
    with file_size_limit(4096), pytest.raises(OSError) as info:
        write_atomic(str(target), b"x" * 10_000)
    assert info.value.errno == errno.EFBIG
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]
    assert target.read_bytes() == b"old"


def test_a_path_that_names_no_file_is_refused() -> None:
    with pytest.raises(OSError) as info:
        write_atomic("/", b"")
    assert info.value.errno == errno.EINVAL


LOCK_HOLDER = """
import sys
from skillguard._fs.write import FileLock

with FileLock(sys.argv[1]):
    print("held", flush=True)
    sys.stdin.readline()
"""


def test_a_lock_wait_interrupted_by_a_signal_leaks_nothing(tmp_path: Path) -> None:
    # Another process holds the lock; a signal ends this one's wait with an exception.
    path = str(tmp_path / "trust.json")
    holder = subprocess.Popen(
        [sys.executable, "-c", LOCK_HOLDER, path], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert holder.stdout is not None
    assert holder.stdin is not None
    assert holder.stdout.readline() == b"held\n"
    lock = FileLock(path)
    descriptors = len(os.listdir("/proc/self/fd"))

    def interrupt(signum: int, frame: object) -> None:
        del signum, frame
        raise InterruptedError

    before = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 0.2)
    try:
        with pytest.raises(InterruptedError), lock:
            pytest.fail("the lock was taken while another process held it")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, before)
    assert len(os.listdir("/proc/self/fd")) == descriptors  # the lock file was closed
    holder.stdin.write(b"\n")
    holder.stdin.close()
    assert holder.wait(timeout=60) == 0
    holder.stdout.close()
    with lock:  # the thread lock was released too: the lock is taken at once now
        pass
