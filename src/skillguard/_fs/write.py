"""The operator's own files, written: atomic replacement, locks, a dead writer's leftovers.

Rules (threat-model.md T182, T183). The files skillguard writes (the trust store, an
audit report, the lock files beside the trust store and the audit log; the audit log
itself through ``AppendFile``, the torn bytes ``audit repair`` moves aside through
``write_new_file``, and composed agent files through ``OutputFolder``, by the same
rules) are the operator's, named by a path the operator gave: the folders on the way
are resolved by the OS, as for every operator path, but the last component is never
followed, and nothing is written into anything but a regular file. The folder they are
in may still hold what someone else put there (a repository can commit a symlink where
a lock file will go), so:

* Every file is opened with ``O_NOFOLLOW|O_NONBLOCK|O_NOCTTY|O_CLOEXEC`` and must be a
  regular file on ``fstat`` of that descriptor (``OSError`` otherwise): a planted
  ``audit.jsonl.lock -> target`` link is refused with ``ELOOP`` and ``target`` is
  never created, a FIFO never blocks, a device is never written.
* ``write_atomic`` holds the folder's descriptor and works beneath it: the target must
  be nothing, a regular file, or a symlink (which is replaced, never followed); the
  temporary ``.NAME.PID.TID.tmp`` is created ``O_EXCL|O_NOFOLLOW`` beside it, written,
  synced, renamed over the target, and then the folder is synced, so that the new name
  survives a crash as well as the new bytes.
* A writer killed between creating its temporary and renaming it leaves the temporary
  behind. ``sweep_temporaries`` removes the ones dead writers of one file left, and is
  called by a writer that holds the lock every writer of that file takes (the trust
  store's): only names of exactly that file's pattern, only regular files (a symlink
  named like a temporary is left alone, and nothing is ever opened through it), and
  only when no process has the pid the name carries (``kill(pid, 0)`` says ``ESRCH``;
  a pid no process can have, 0 or past ``2**31 - 1``, is no writer's: it stays).
  A temporary with this process's own pid is a leftover too, since no writer of this
  process is at work while it holds the lock: a container's process is pid 1 after
  every restart, and with address randomisation off its thread id is the same too, so
  the name a crashed writer left was the one every later write needed (T215).
  A pid the kernel has given to another process since keeps its temporary until that
  process is gone too: a leftover costs a few bytes, while removing a live writer's
  temporary would fail its write. One that cannot be removed (another user's, in a
  folder with the sticky bit) stays too: the sweep never fails the write (T212). The
  lock is the first guard (no writer that takes it is between creating and renaming),
  the pid the second (a writer that lost its lock, on a file system whose locks are
  local to one host).
* The audit log is appended to through one ``AppendFile`` descriptor held for one
  locked update; it reads back only what it needs from that same descriptor (``pread``,
  bounded by the caller; lines as ``_fs.operator.stream_lines`` splits them), never by
  the path again.
* An ``OutputFolder`` is held by its descriptor and every generated file is written
  beneath it; its one read (``agent compose --check``) is bounded, and only compared
  with the bytes that would be written.

Nothing here lists or walks an untrusted tree: the one listing is ``sweep_temporaries``,
of the operator's own folder, for names of one pattern, and nothing is opened through
what it finds. Untrusted reads are ``_fs.containment``'s.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import stat
import threading
from typing import TYPE_CHECKING

from skillguard._core.errors import SkillContainmentError, safe_repr
from skillguard._fs.errors import _classify
from skillguard._fs.operator import _STREAM_CHUNK, _split_lines
from skillguard._fs.paths import _bad_name, split_name

if TYPE_CHECKING:
    from collections.abc import Generator

__all__ = [
    "CREATE_NEW",
    "AppendFile",
    "FileLock",
    "OutputFolder",
    "open_regular",
    "replace_beneath",
    "sweep_temporaries",
    "temporary_name",
    "write_atomic",
    "write_new_file",
]

_NO_FOLLOW = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_LOCK_FLAGS = os.O_RDWR | os.O_CREAT
# A new file, never one that is there already (nor a link of that name).
CREATE_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL
_FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
# A pid is at most 2**22 on Linux and below 2**31 everywhere; a thread id is an
# unsigned long. Longer runs of digits, or larger pids, are not a temporary skillguard
# wrote (and kill() takes a C int: a larger pid raises OverflowError, T210).
_PID_DIGITS = 10
_MAX_PID = 2**31 - 1
_TID_DIGITS = 20


def open_regular(path: str, flags: int, *, mode: int = 0o600, dir_fd: int | None = None) -> int:
    """A descriptor of *path* opened with *flags* and ``O_NOFOLLOW|O_NONBLOCK|O_NOCTTY|
    O_CLOEXEC`` (a file it creates gets *mode*), refused with ``OSError`` (``EINVAL``)
    unless ``fstat`` shows a regular file."""
    fd = os.open(path, flags | _NO_FOLLOW, mode, dir_fd=dir_fd)
    try:
        _require_regular(fd, path)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _require_regular(fd: int, path: str) -> None:
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        raise OSError(errno.EINVAL, "not a regular file", path)


def temporary_name(name: str) -> str:
    """The temporary this thread writes beside the file *name* before renaming it."""
    return f".{name}.{os.getpid()}.{threading.get_ident()}.tmp"


def _split(path: str) -> tuple[str, str]:
    folder, name = os.path.split(os.path.abspath(path))
    if not name:  # "/" itself
        raise OSError(errno.EINVAL, "not a file name", path)
    return folder, name


def write_atomic(path: str, data: bytes) -> None:
    """Replace *path* with *data* atomically (the module's rules): a new file beside it,
    synced, renamed, and the folder synced.

    Only a regular file, a symlink (replaced, not followed) or nothing is ever replaced:
    a FIFO, socket, device or folder at *path* raises ``OSError`` (``EINVAL``) before
    anything is written, so a mistyped output path can never turn ``/dev/null`` into a
    file. The temporary file is removed whatever fails. Raises ``OSError``.
    """
    folder, name = _split(path)
    dir_fd = os.open(folder, _FOLDER_FLAGS)
    try:
        try:
            info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            pass
        else:
            if not (stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode)):
                raise OSError(errno.EINVAL, "not a regular file", path)
        replace_beneath(dir_fd, name, data)
    finally:
        os.close(dir_fd)


def replace_beneath(dir_fd: int, name: str, data: bytes, *, mode: int = 0o600) -> None:
    """Replace *name* in the folder held by *dir_fd* with *data* (a new file gets
    *mode*): this thread's temporary beside it (``O_EXCL|O_NOFOLLOW``), written,
    synced, renamed over it, and the folder synced, so that the new name survives a
    crash as well as the new bytes. What is at *name* is the caller's to check first.
    The temporary is removed whatever fails. Raises ``OSError``."""
    temporary = temporary_name(name)
    fd = open_regular(temporary, CREATE_NEW, mode=mode, dir_fd=dir_fd)
    try:
        try:
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.rename(temporary, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary, dir_fd=dir_fd)
        raise
    _sync_folder(dir_fd)  # the rename itself, made durable


def write_new_file(path: str, data: bytes) -> bool:
    """Create *path* (0600) holding *data*, whole or not at all, synced with its folder,
    and ``True``; never over anything that is there.

    The bytes go first to this thread's temporary beside *path* (``O_EXCL|O_NOFOLLOW``),
    synced, and are then linked at *path*: ``link`` fails on any name that is there, a
    link included, and never follows one. So a crash leaves at most the temporary
    (``sweep_temporaries(path)`` removes it), never a part of the file at *path* (T214).
    ``False`` when a regular file holding exactly *data* is there already (a run cut
    short that is run again); ``FileExistsError`` when anything else is, ``OSError`` on
    any other failure (the temporary is then removed).
    """
    folder, name = _split(path)
    dir_fd = os.open(folder, _FOLDER_FLAGS)
    try:
        temporary = temporary_name(name)
        fd = open_regular(temporary, CREATE_NEW, dir_fd=dir_fd)
        try:
            try:
                _write_all(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.link(temporary, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
        except FileExistsError:
            if _holds_exactly(name, data, dir_fd):
                return False
            raise
        finally:
            with contextlib.suppress(OSError):
                os.unlink(temporary, dir_fd=dir_fd)
        _sync_folder(dir_fd)
    finally:
        os.close(dir_fd)
    return True


def _holds_exactly(name: str, data: bytes, dir_fd: int) -> bool:
    """Whether *name* in the folder *dir_fd* is a regular file holding exactly *data*."""
    try:
        fd = open_regular(name, os.O_RDONLY, dir_fd=dir_fd)
    except OSError:
        return False
    try:
        return os.fstat(fd).st_size == len(data) and os.pread(fd, len(data) + 1, 0) == data
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _sync_folder(dir_fd: int) -> None:
    """Make a new or renamed name in the folder durable."""
    try:
        os.fsync(dir_fd)
    except OSError as exc:
        if exc.errno != errno.EINVAL:  # a file system that cannot sync a folder
            raise


def _pid_gone(pid: int) -> bool:
    """Whether no writer with *pid* can be at work now. ``EPERM`` is another user's live
    process. This process's own pid is a writer that had it before (T215): the caller
    holds the lock that every writer of this process takes too."""
    if not 0 < pid <= _MAX_PID:
        # 0 would name a process group; past a C int, no process has it (T210).
        return False
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        pass  # a live process of another user
    return False


def sweep_temporaries(path: str) -> int:
    """Remove the temporaries that dead writers of *path* left beside it; how many.

    Call it only while holding the lock every writer of *path* takes (the module's
    rules say which names go and why). A name that cannot be removed stays: a leftover
    never stops the write that follows. Raises ``OSError`` when the folder cannot be
    listed.
    """
    folder, name = _split(path)
    pattern = re.compile(
        rf"\.{re.escape(name)}\.([0-9]{{1,{_PID_DIGITS}}})\.[0-9]{{1,{_TID_DIGITS}}}\.tmp"
    )
    dir_fd = os.open(folder, _FOLDER_FLAGS)
    removed = 0
    try:
        prefix = f".{name}."
        with os.scandir(dir_fd) as entries:
            # The prefix first: a folder of many other files costs one string test each.
            candidates = [
                entry.name
                for entry in entries
                if entry.name.startswith(prefix)
                and (match := pattern.fullmatch(entry.name))
                and _pid_gone(int(match.group(1)))
            ]
        for candidate in candidates:
            try:
                info = os.stat(candidate, dir_fd=dir_fd, follow_symlinks=False)
                if not stat.S_ISREG(info.st_mode):
                    continue  # a link or anything else named like a temporary stays
                # unlink never follows a link: even an entry swapped for one since the
                # lstat above would be the link itself, never what it points at.
                os.unlink(candidate, dir_fd=dir_fd)
            except OSError:
                # Gone already, or not ours to remove (another user's file in a sticky
                # folder, a mount point): it stays, and the write goes on (T212).
                continue
            removed += 1
    finally:
        os.close(dir_fd)
    return removed


class FileLock:
    """An exclusive ``flock`` on ``path + '.lock'``, across threads and processes.

    The lock file is opened like every file skillguard writes (the module's rules): a
    symlink, FIFO or device there raises ``OSError`` and nothing is created through it.
    """

    def __init__(self, path: str) -> None:
        self.path = f"{path}.lock"
        self._fd: int | None = None
        self._thread_lock = threading.Lock()

    def __enter__(self) -> FileLock:  # noqa: PYI034 - typing.Self needs Python 3.11
        self._thread_lock.acquire()
        try:
            fd = open_regular(self.path, _LOCK_FLAGS)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
            except BaseException:
                os.close(fd)
                raise
        except BaseException:
            self._thread_lock.release()
            raise
        self._fd = fd
        return self

    def __exit__(self, *exc: object) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
        self._thread_lock.release()


# -- the audit log: one appender (the operator's own file) ---------------------------

_LOG_FLAGS = (
    os.O_RDWR
    | os.O_APPEND
    | os.O_CREAT
    | os.O_CLOEXEC
    | os.O_NOFOLLOW
    | os.O_NONBLOCK
    | os.O_NOCTTY
)


class AppendFile:
    """An operator's append-only log file, held open for one locked update.

    Opened ``O_RDWR|O_APPEND|O_CREAT|O_NOFOLLOW|O_NONBLOCK`` (created 0600; not created
    when *create* is false) and refused unless ``fstat`` shows a regular file; ``OSError``
    otherwise. Reads are positional (``pread``) and bounded by the caller; every append
    is one ``write`` loop at the end.
    """

    def __init__(self, path: str, *, create: bool = True) -> None:
        fd = os.open(path, _LOG_FLAGS if create else _LOG_FLAGS & ~os.O_CREAT, 0o600)
        try:
            _require_regular(fd, path)
        except OSError:
            os.close(fd)
            raise
        self._fd = fd

    def __enter__(self) -> AppendFile:  # noqa: PYI034 - typing.Self needs Python 3.11
        return self

    def __exit__(self, *exc: object) -> None:
        os.close(self._fd)

    def identity(self) -> tuple[int, int, int]:
        """``(st_dev, st_ino, st_size)``: what another writer's append or a swap changes."""
        info = os.fstat(self._fd)
        return info.st_dev, info.st_ino, info.st_size

    def read_at(self, offset: int, size: int) -> bytes:
        """At most *size* bytes from *offset* (fewer at the end of the file)."""
        chunks: list[bytes] = []
        while size > 0 and (chunk := os.pread(self._fd, min(size, _STREAM_CHUNK), offset)):
            chunks.append(chunk)
            offset += len(chunk)
            size -= len(chunk)
        return b"".join(chunks)

    def lines(self, *, max_line: int) -> Generator[bytes, None, None]:
        """The file's lines as ``stream_lines`` gives them, read from this descriptor
        (never by the path again) up to the size it has now."""
        offset = 0

        def read(size: int) -> bytes:
            nonlocal offset
            chunk = os.pread(self._fd, size, offset)
            offset += len(chunk)
            return chunk

        yield from _split_lines(read, self.identity()[2], max_line)

    def append(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view) :]

    def replace_tail(self, offset: int, data: bytes, *, old: bytes) -> None:
        """Write *data* over the file's last bytes, *old* at *offset*, cut the file just
        after it, and sync. The one write that is not an append (``audit repair``): the
        new bytes are written before the old ones are cut, so a crash between the two
        leaves them both, never neither; a write that fails part way (a full disk, when
        *data* is longer than *old*) puts *old* back, since it fitted before (T213)."""
        flags = fcntl.fcntl(self._fd, fcntl.F_GETFL)
        # pwrite on a descriptor opened O_APPEND writes at the end on Linux.
        fcntl.fcntl(self._fd, fcntl.F_SETFL, flags & ~os.O_APPEND)
        try:
            try:
                self._write_at(offset, data)
            except OSError:
                with contextlib.suppress(OSError):  # the first failure is the one to say
                    self._write_at(offset, old)
                raise
        finally:
            fcntl.fcntl(self._fd, fcntl.F_SETFL, flags)

    def _write_at(self, offset: int, data: bytes) -> None:
        view = memoryview(data)
        while view:
            written = os.pwrite(self._fd, view, offset)
            view = view[written:]
            offset += written
        os.ftruncate(self._fd, offset)
        os.fsync(self._fd)


# -- generated files (composed agents) ------------------------------------------------
# The output folder is the operator's, but what is already in it may not be: a
# repository can commit a symlink where a generated file will go. Every write is made
# relative to one held descriptor of the folder, nothing is followed, and a name that
# is not a plain regular file is refused rather than replaced.

_OUTPUT_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# Opened to compare a generated file with what would be written (``--check``).
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


class OutputFolder:
    """A folder that generated files are written into, held by its descriptor.

    ``OutputFolder(path, create=True)`` makes the folder if it is missing (its parents
    must exist) and opens it ``O_DIRECTORY|O_NOFOLLOW``: a symlink as the folder is
    refused. Names are single components checked by :func:`split_name`.

    Raises ``SkillContainmentError`` (``symlink``, ``not_a_directory``, ``bad_name``,
    ``not_regular_file``) and ``SkillNotFoundError`` (``missing``, ``unreadable``).
    """

    def __init__(self, path: str, *, create: bool = False) -> None:
        self.path = path
        if create:
            try:
                os.mkdir(path, 0o755)  # a final symlink is never followed by mkdir
            except FileExistsError:
                pass
            except OSError as exc:
                raise _classify(exc, "the output folder") from exc
        try:
            self._fd = os.open(path, _OUTPUT_DIR_FLAGS)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR) and os.path.islink(path):
                raise SkillContainmentError(
                    "symlink", "the output folder is a symlink; it is not followed"
                ) from exc
            raise _classify(exc, "the output folder") from exc

    def close(self) -> None:
        fd, self._fd = self._fd, -1
        if fd >= 0:
            os.close(fd)

    def __enter__(self) -> OutputFolder:  # noqa: PYI034 - typing.Self needs Python 3.11
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @staticmethod
    def _name(name: str) -> str:
        parts = split_name(name)
        if len(parts) != 1:
            raise _bad_name("a generated file name is one path component", name)
        return parts[0]

    def _existing(self, name: str) -> os.stat_result | None:
        try:
            info = os.stat(name, dir_fd=self._fd, follow_symlinks=False)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise _classify(exc, "the generated file") from exc
        if stat.S_ISLNK(info.st_mode):
            raise SkillContainmentError(
                "symlink",
                f"{safe_repr(name)} in the output folder is a symlink; it is not replaced",
            )
        if not stat.S_ISREG(info.st_mode):
            raise SkillContainmentError(
                "not_regular_file", f"{safe_repr(name)} in the output folder is not a regular file"
            )
        return info

    def read(self, name: str, *, cap: int) -> bytes | None:
        """The bytes of the regular file *name* (at most cap+1), or ``None`` if absent."""
        name = self._name(name)
        if self._existing(name) is None:
            return None
        try:
            fd = os.open(name, _FILE_FLAGS, dir_fd=self._fd)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise _classify(exc, "the generated file") from exc
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise SkillContainmentError(
                    "not_regular_file", f"{safe_repr(name)} in the output folder is not a file"
                )
            chunks: list[bytes] = []
            size = 0
            while size <= cap and (chunk := os.read(fd, cap + 1 - size)):
                chunks.append(chunk)
                size += len(chunk)
        finally:
            os.close(fd)
        return b"".join(chunks)

    def write(self, name: str, data: bytes) -> None:
        """Replace *name* with *data* atomically: a new file in the folder, synced, renamed.

        The temporary file is created ``O_EXCL|O_NOFOLLOW`` beside the target and
        renamed over it within the held descriptor (``replace_beneath``); a symlink or a
        non-regular file already at *name* is refused, never replaced or followed. A
        write that fails (a full disk) raises ``SkillNotFoundError`` (``unreadable``)
        with the OS's reason, and leaves *name* as it was.
        """
        name = self._name(name)
        self._existing(name)
        try:
            replace_beneath(self._fd, name, data, mode=0o644)
        except OSError as exc:
            # A full disk, a quota, a file-size limit: this file fails, typed (T216).
            raise _classify(exc, "the generated file", doing="written") from exc
