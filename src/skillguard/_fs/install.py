"""The operator's install folder, written all or nothing: stage, then commit, or roll back.

Rules (threat-model.md T290-T294). ``skillguard agent install`` writes many files into
one folder the operator named (``--dest``), beside files it did not write. The folder is
the operator's, but what already lies in it may not be (a link planted by another
program, a file the user wrote by hand), so:

* The folder is opened ``O_DIRECTORY|O_NOFOLLOW``: a ``--dest`` that is a symlink is
  refused, and every file and sub-folder is reached beneath that held descriptor, one
  component at a time, ``O_NOFOLLOW``: a symlink planted inside is never followed,
  never written through and never replaced by a write.
* Names are checked components (``split_name``): no ``..``, no ``/`` at the start, no
  empty or hidden part, so nothing is written outside the folder.
* ``stage`` writes each file as a temporary created ``O_EXCL|O_NOFOLLOW`` beside its
  target and synced; nothing the harness reads has changed yet. ``commit`` then puts
  every staged file in place: a new file is *linked* to its name (``link`` fails with
  ``EEXIST`` if anything appeared there since it was checked, so a file planted in the
  race is never overwritten), a file skillguard wrote before is first linked to a
  backup name and then replaced by ``rename``. Files to remove are renamed to a backup
  name. If any step fails, every step already done is undone (the backups renamed
  back, the new names unlinked), so the folder is as it was: all or nothing.
* Reads (``read``) are bounded, ``O_NOFOLLOW``, of regular files only.

Nothing here lists or walks a tree: every name comes from the caller's plan or manifest.
Errors are ``SkillContainmentError`` / ``SkillNotFoundError`` (the OS's refusal, typed);
any other exception is a bug.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import stat
import threading
from typing import TYPE_CHECKING

import attrs

from skillguard._core.errors import SkillContainmentError, SkillError, safe_repr
from skillguard._fs.errors import _classify
from skillguard._fs.paths import split_name
from skillguard._fs.write import CREATE_NEW, open_regular

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["InstallFolder", "Staged"]

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


@attrs.define
class Staged:
    """One file written beside its target and not yet in place."""

    relpath: str
    dir_fd: int
    name: str
    temporary: str
    replace: bool
    backup: str | None = None
    done: bool = False
    # The sha256 of the first cap+1 bytes judged at the name (T317): what is there when
    # it is replaced or removed must still be those bytes.
    expected: str | None = None
    cap: int = 0


def _digest(dir_fd: int, name: str, cap: int) -> str | None:
    """The sha256 of the first *cap* + 1 bytes of the regular file *name* (``None``:
    absent, or not a regular file)."""
    try:
        data = _read_capped(name, dir_fd, name, cap)
    except SkillError:
        return None
    return None if data is None else hashlib.sha256(data).hexdigest()


def _suffix() -> str:
    return f"{os.getpid()}.{threading.get_ident()}"


class InstallFolder:
    """The folder ``--dest``, held by its descriptor (see the module docstring).

    ``InstallFolder(path, create=True)`` makes the folder (and its parents, which are
    the operator's path, resolved by the OS) when it is missing; a symlink as the folder
    itself is refused (``symlink``).
    """

    def __init__(self, path: str, *, create: bool) -> None:
        self.path = path
        if create:
            parent = os.path.dirname(os.path.abspath(path))
            try:
                os.makedirs(parent, mode=0o755, exist_ok=True)
                os.mkdir(path, 0o755)  # a final symlink is never followed by mkdir
            except FileExistsError:
                pass
            except OSError as exc:
                raise _classify(exc, "the install folder", doing="created") from exc
        try:
            self._fd = os.open(path, _DIR_FLAGS)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR) and os.path.islink(path):
                raise SkillContainmentError(
                    "symlink", "the install folder is a symlink; it is not followed"
                ) from exc
            raise _classify(exc, "the install folder") from exc
        self._created: list[tuple[int, str]] = []

    def close(self) -> None:
        fd, self._fd = self._fd, -1
        if fd >= 0:
            os.close(fd)

    def __enter__(self) -> InstallFolder:  # noqa: PYI034 - typing.Self needs Python 3.11
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- names -----------------------------------------------------------------------

    def _folder(self, parts: Sequence[str], *, create: bool) -> int | None:
        """A new descriptor of the folder *parts* beneath the held one (``None`` when it
        is missing and *create* is false); each step ``O_NOFOLLOW``."""
        fd = os.dup(self._fd)
        try:
            for part in parts:
                if create:
                    try:
                        os.mkdir(part, 0o755, dir_fd=fd)
                        self._created.append((os.dup(fd), part))
                    except FileExistsError:
                        pass
                try:
                    child = os.open(part, _DIR_FLAGS, dir_fd=fd)
                except FileNotFoundError:
                    if create:
                        raise
                    os.close(fd)
                    return None
                except OSError as exc:
                    if exc.errno in (errno.ENOTDIR, errno.ELOOP) and stat.S_ISLNK(
                        os.stat(part, dir_fd=fd, follow_symlinks=False).st_mode
                    ):
                        raise SkillContainmentError(
                            "symlink",
                            f"{safe_repr(part)} in the install folder is a symlink; "
                            "it is not followed",
                        ) from exc
                    raise
                os.close(fd)
                fd = child
        except SkillContainmentError:
            os.close(fd)
            raise
        except OSError as exc:
            os.close(fd)
            raise _classify(exc, f"the folder of {safe_repr('/'.join(parts))}") from exc
        return fd

    @staticmethod
    def _split(relpath: str) -> tuple[tuple[str, ...], str]:
        parts = split_name(relpath)
        if not parts or any(part.startswith(".") for part in parts):
            raise SkillContainmentError(
                "bad_name", f"{safe_repr(relpath)} is not a name skillguard installs"
            )
        return parts[:-1], parts[-1]

    def lstat(self, relpath: str) -> os.stat_result | None:
        """What is at *relpath* now, never following a link (``None``: nothing)."""
        folder, name = self._split(relpath)
        fd = self._folder(folder, create=False)
        if fd is None:
            return None
        try:
            return os.stat(name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise _classify(exc, safe_repr(relpath)) from exc
        finally:
            os.close(fd)

    def read(self, relpath: str, *, cap: int) -> bytes | None:
        """At most cap+1 bytes of the regular file *relpath*, or ``None`` if absent;
        a symlink or another kind of file is refused."""
        folder, name = self._split(relpath)
        fd = self._folder(folder, create=False)
        if fd is None:
            return None
        try:
            return _read_capped(name, fd, relpath, cap)
        finally:
            os.close(fd)

    def read_own(self, name: str, *, cap: int) -> bytes | None:
        """Like ``read``, for a top-level file skillguard names itself (the manifest)."""
        return _read_capped(name, self._fd, name, cap)

    # -- staging and committing ----------------------------------------------------

    def stage_own(self, name: str, data: bytes) -> Staged:
        """Stage the top-level file *name* that skillguard names itself (the install
        manifest), replacing what is there."""
        return self._stage([], name, name, data, replace=True)

    def removal_own(self, name: str) -> Staged:
        """A staged removal of the top-level file *name* that skillguard names itself."""
        return Staged(name, os.dup(self._fd), name, "", replace=True)

    def stage(
        self, relpath: str, data: bytes, *, replace: bool, expected: str | None = None, cap: int = 0
    ) -> Staged:
        """Write *data* as a temporary beside *relpath* (see the module docstring).
        *expected*: the sha256 of the first *cap* + 1 bytes the file it replaces must
        still hold when it is replaced (T317)."""
        folder, name = self._split(relpath)
        staged = self._stage(folder, name, relpath, data, replace=replace)
        staged.expected, staged.cap = expected, cap
        return staged

    def _stage(
        self, folder: Sequence[str], name: str, relpath: str, data: bytes, *, replace: bool
    ) -> Staged:
        dir_fd = self._folder(folder, create=True)
        if dir_fd is None:  # pragma: no cover - create=True makes it or raises
            raise SkillContainmentError("not_a_directory", f"no folder for {safe_repr(relpath)}")
        temporary = f".{name}.{_suffix()}.install"
        try:
            fd = open_regular(temporary, CREATE_NEW, mode=0o644, dir_fd=dir_fd)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                os.fsync(fd)
            finally:
                os.close(fd)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(temporary, dir_fd=dir_fd)
            os.close(dir_fd)
            raise _classify(exc, safe_repr(relpath), doing="written") from exc
        return Staged(relpath, dir_fd, name, temporary, replace)

    def removal(self, relpath: str, *, expected: str | None = None, cap: int = 0) -> Staged | None:
        """A staged removal of *relpath* (``None`` when it is gone already); *expected*
        as for ``stage``."""
        folder, name = self._split(relpath)
        dir_fd = self._folder(folder, create=False)
        if dir_fd is None:
            return None
        return Staged(relpath, dir_fd, name, "", replace=True, expected=expected, cap=cap)

    def commit(self, staged: list[Staged]) -> None:
        """Put every staged file in place, or none (see the module docstring).

        Raises ``SkillContainmentError`` (``exists``: a file appeared where a new one
        goes) or the OS's refusal, typed, after undoing every step already done.
        """
        try:
            for item in staged:
                self._commit_one(item)
        except BaseException as exc:
            self._undo(staged)
            self.discard(staged)
            if isinstance(exc, OSError):
                raise _classify(exc, "a staged file", doing="put in place") from exc
            raise
        self._finish(staged)

    def _commit_one(self, item: Staged) -> None:
        fd = item.dir_fd
        if item.replace:
            backup = f".{item.name}.{_suffix()}.old"
            try:
                os.link(item.name, backup, src_dir_fd=fd, dst_dir_fd=fd, follow_symlinks=False)
                item.backup = backup
            except FileNotFoundError:
                item.backup = None
            if (
                item.backup is not None
                and item.expected is not None
                and _digest(fd, item.backup, item.cap) != item.expected
            ):
                # The backup is the very file at the name now: it changed since it was
                # judged (an edit while installing), so it is kept (T317).
                raise SkillContainmentError(
                    "edited_since_install",
                    f"{safe_repr(item.relpath)} changed while installing; it was kept",
                )
            if item.temporary:
                os.rename(item.temporary, item.name, src_dir_fd=fd, dst_dir_fd=fd)
            elif item.backup is not None:
                os.unlink(item.name, dir_fd=fd)
            item.done = True
            return
        try:
            os.link(item.temporary, item.name, src_dir_fd=fd, dst_dir_fd=fd, follow_symlinks=False)
        except FileExistsError as exc:
            raise SkillContainmentError(
                "exists",
                f"{safe_repr(item.relpath)} appeared while installing; it was not overwritten",
            ) from exc
        item.done = True

    def _undo(self, staged: list[Staged]) -> None:
        for item in reversed(staged):
            if not item.done:
                if item.backup is not None:  # linked, then the step failed: the name
                    with contextlib.suppress(OSError):  # still holds the file (T314)
                        os.unlink(item.backup, dir_fd=item.dir_fd)
                    item.backup = None
                continue
            with contextlib.suppress(OSError):
                if item.backup is not None:
                    os.rename(
                        item.backup, item.name, src_dir_fd=item.dir_fd, dst_dir_fd=item.dir_fd
                    )
                    item.backup = None
                elif item.temporary:
                    os.unlink(item.name, dir_fd=item.dir_fd)
            item.done = False
        for fd, name in reversed(self._created):
            with contextlib.suppress(OSError):
                os.rmdir(name, dir_fd=fd)

    def discard(self, staged: list[Staged]) -> None:
        """Remove every temporary and every folder staging made (T310), and close every
        descriptor of *staged*."""
        for item in staged:
            if item.dir_fd < 0:
                continue
            with contextlib.suppress(OSError):
                if item.temporary:
                    os.unlink(item.temporary, dir_fd=item.dir_fd)
            os.close(item.dir_fd)
            item.dir_fd = -1
        for fd, name in reversed(self._created):
            with contextlib.suppress(OSError):
                os.rmdir(name, dir_fd=fd)
        self._close_created()

    def _finish(self, staged: list[Staged]) -> None:
        # Each folder is synced once, after its last name changed, so the new names
        # survive a crash as well as the new bytes (each file was synced when staged).
        synced: set[tuple[int, int]] = set()
        for item in reversed(staged):
            with contextlib.suppress(OSError):
                if item.backup is not None:
                    os.unlink(item.backup, dir_fd=item.dir_fd)
                if item.temporary and not item.replace:
                    os.unlink(item.temporary, dir_fd=item.dir_fd)
            info = os.fstat(item.dir_fd)
            if (info.st_dev, info.st_ino) not in synced:
                synced.add((info.st_dev, info.st_ino))
                with contextlib.suppress(OSError):
                    os.fsync(item.dir_fd)
            os.close(item.dir_fd)
            item.dir_fd = -1
        for fd, _ in self._created:
            info = os.fstat(fd)
            if (info.st_dev, info.st_ino) not in synced:
                synced.add((info.st_dev, info.st_ino))
                with contextlib.suppress(OSError):
                    os.fsync(fd)
        self._close_created()

    def _close_created(self) -> None:
        for fd, _ in self._created:
            os.close(fd)
        self._created = []

    def remove_folder(self, relpath: str) -> bool:
        """Remove the folder *relpath* if it is empty; ``False`` when it is not."""
        folder, name = self._split(relpath)
        fd = self._folder(folder, create=False)
        if fd is None:
            return True
        try:
            info = os.stat(name, dir_fd=fd, follow_symlinks=False)
            if not stat.S_ISDIR(info.st_mode):
                return False
            os.rmdir(name, dir_fd=fd)
        except FileNotFoundError:
            return True
        except OSError as exc:
            if exc.errno in (errno.ENOTEMPTY, errno.EEXIST):
                return False
            raise _classify(exc, safe_repr(relpath), doing="removed") from exc
        finally:
            os.close(fd)
        return True


def _read_capped(name: str, dir_fd: int, shown: str, cap: int) -> bytes | None:
    """At most cap+1 bytes of the regular file *name* in *dir_fd*, or ``None`` if absent;
    a symlink or another kind of file is refused, named as *shown*."""
    try:
        file = open_regular(name, _READ_FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.EINVAL:
            raise SkillContainmentError(
                "not_regular_file", f"{safe_repr(shown)} is not a regular file"
            ) from exc
        raise _classify(exc, safe_repr(shown)) from exc
    try:
        chunks: list[bytes] = []
        size = 0
        while size <= cap and (chunk := os.read(file, cap + 1 - size)):
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(file)
    return b"".join(chunks)
