"""SafeRoot: where skillguard reads untrusted files and folders, beneath a held root.

Everything by which hostile bytes or names enter lives on this side of the file-system
edge, and never writes: the names (``_fs.paths.split_name``), the held-descriptor walk
(``_fs.walk``), the reads and listings (here), the errors they give (``_fs.errors``).
Writing the operator's own files is ``_fs.write``'s.

Rules (threat-model.md T10-T12, T15-T20). A ``SafeRoot`` is opened once on a path
the caller trusts and holds that directory's descriptor; every access below it is
relative to the descriptor (``_fs.walk``), from names validated before any system call
(``_fs.paths``), and:

* A file is looked at with ``lstat`` through its directory's descriptor (a device,
  FIFO or socket is refused without being opened), opened
  ``O_NOFOLLOW|O_NONBLOCK|O_NOCTTY|O_CLOEXEC``, and ``fstat`` of *that* descriptor
  must show a regular file with one link on the root's device (the authoritative
  check: it cannot race). The size from ``fstat`` is checked against the cap, then at
  most cap+1 bytes are read from the same descriptor; callers hash and parse exactly
  those bytes.
* Listings are bounded, and every entry not taken has a typed reason.
* Every ``OSError`` becomes a ``SkillContainmentError`` or ``SkillNotFoundError``.
"""

from __future__ import annotations

import errno
import heapq
import os
import stat
from typing import TYPE_CHECKING, Literal

import attrs

from skillguard._core.errors import (
    MalformedSkillError,
    SkillContainmentError,
    SkillError,
    SkillNotFoundError,
    SkillUsageError,
)
from skillguard._core.text import reveal
from skillguard._fs.errors import _os_error
from skillguard._fs.paths import _bad_name, join_relative, split_name
from skillguard._fs.walk import _DIR_FLAGS, HeldRoot

if TYPE_CHECKING:
    from collections.abc import Iterator
    from types import TracebackType

    from skillguard._fs.walk import Resolver

__all__ = [
    "SKILL_FILE",
    "Entry",
    "Listing",
    "SafeRoot",
    "Skipped",
    "open_trusted_target",
]

SKILL_FILE = "SKILL.md"

_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_READ_CHUNK = 64 * 1024


# -- values --------------------------------------------------------------------------


@attrs.frozen
class Entry:
    """A directory entry a listing took: a folder or a regular single-link file."""

    name: str
    kind: Literal["dir", "file"]
    size: int = 0


@attrs.frozen
class Skipped:
    """An entry that was not taken, with a typed reason (nothing is dropped silently).

    ``entry`` says what the entry was, as far as the listing could tell without
    following anything: ``dir``, ``file``, ``link``, ``special`` or ``""``.
    """

    path: str
    code: str
    reason: str
    kind: str = "containment"
    entry: str = ""


@attrs.frozen
class Listing:
    entries: tuple[Entry, ...]
    skipped: tuple[Skipped, ...]


# -- SafeRoot ------------------------------------------------------------------------


class SafeRoot(HeldRoot):
    """A directory the caller trusts, and nothing outside it.

    ``SafeRoot(path)`` opens *path* (resolved by the OS: it is the caller's own) and
    holds its descriptor. Every method takes a relative, ``/``-separated path that is
    validated by :func:`split_name` and resolved beneath the held descriptor only.

    *allow_hardlinks* accepts files with more than one link (a hard link can alias a
    file outside the root); *allow_cross_device* accepts entries on another file
    system (a mount point inside the root). *resolver* picks ``openat2`` or the
    component ``walk``; ``auto`` uses openat2 where the kernel has it.

    Raises ``SkillUsageError`` on a platform without ``O_NOFOLLOW`` and ``dir_fd``
    support (there is no safe fallback to path checks), and ``SkillContainmentError``
    / ``SkillNotFoundError`` when *path* is not an openable directory.
    """

    # The descriptor's lifetime (``close`` and ``fd`` are ``HeldRoot``'s) ------------

    def __enter__(self) -> SafeRoot:  # noqa: PYI034 - typing.Self needs Python 3.11
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"SafeRoot({self.path!r}, resolver={self.resolver!r})"

    # Opening (the walk beneath the descriptor is ``HeldRoot``'s) --------------------

    def open_dir(self, relpath: str) -> SafeRoot:
        """A ``SafeRoot`` of its own for the folder *relpath*, with the same options.

        Its ``identity`` is the folder's own ``(st_dev, st_ino)``; containment stays
        judged against this root's device.
        """
        parts = split_name(relpath)
        fd = self._open_dir(parts, "the folder")
        if fd == self._fd:
            fd = os.dup(fd)  # the child owns a descriptor of its own
        child = object.__new__(SafeRoot)
        child.path = os.path.join(self.path, *parts)
        child.allow_hardlinks = self.allow_hardlinks
        child.allow_cross_device = self.allow_cross_device
        child.resolver = self.resolver
        child._how = self._how
        child._search_how = self._search_how
        child._fd = fd
        child.device = self.device
        info = os.fstat(fd)
        child.identity = (info.st_dev, info.st_ino)
        return child

    # Reading -----------------------------------------------------------------------

    def read_file(
        self,
        relpath: str,
        *,
        cap: int,
        oversize: type[SkillError] = SkillContainmentError,
    ) -> bytes:
        """The bytes of the regular file *relpath*: at most cap+1 of them.

        A file whose ``fstat`` size is over *cap* raises *oversize* (code
        ``too_large``) without being read. Raises ``SkillContainmentError``
        (``symlink``, ``not_regular_file``, ``hardlink``, ``cross_device``,
        ``not_a_directory``, ``bad_name``, ``path_escape``) and ``SkillNotFoundError``
        (``missing``, ``unreadable``).
        """
        parts = split_name(relpath)
        if not parts:
            raise _bad_name("a file path is required", relpath)
        if type(cap) is not int or cap < 0:
            raise SkillUsageError("bad_argument", "cap must be an int of 0 or more")
        return self._read_parts(parts, cap, oversize)

    def read_skill_file(self, folder: str = "", *, cap: int) -> bytes:
        """``SKILL.md`` in *folder*, where an oversize file is a ``MalformedSkillError``."""
        if type(cap) is not int or cap < 0:
            raise SkillUsageError("bad_argument", "cap must be an int of 0 or more")
        return self._read_parts((*split_name(folder), SKILL_FILE), cap, MalformedSkillError)

    def _read_parts(self, parts: tuple[str, ...], cap: int, oversize: type[SkillError]) -> bytes:
        what = "the file" if parts[-1] != SKILL_FILE else SKILL_FILE
        # The file's own fstat checks its device, which covers the folders above it.
        dir_fd = self._open_dir(parts[:-1], what, check_device=False, search_only=True)
        try:
            return self._read_at(dir_fd, parts[-1], cap, oversize, what)
        finally:
            if dir_fd != self._fd:
                os.close(dir_fd)

    def _read_at(
        self, dir_fd: int, name: str, cap: int, oversize: type[SkillError], what: str
    ) -> bytes:
        try:
            info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except OSError as exc:
            if exc.errno == errno.EACCES:
                # Looking a name up needs only search permission on the folder, so this
                # refusal is the folder's: saying the file cannot be read would send
                # the operator after a file that may not even be there.
                raise _os_error(exc, f"the folder holding {what}") from exc
            raise _os_error(exc, what) from exc
        if not stat.S_ISREG(info.st_mode):
            if stat.S_ISLNK(info.st_mode):
                raise SkillContainmentError("symlink", f"{what} is a symlink")
            raise SkillContainmentError("not_regular_file", f"{what} is not a regular file")
        try:
            fd = os.open(name, _FILE_FLAGS, dir_fd=dir_fd)
        except OSError as exc:
            raise _os_error(exc, what) from exc
        try:
            return self._read_fd(fd, cap, oversize, what)
        except OSError as exc:
            raise _os_error(exc, what) from exc
        finally:
            os.close(fd)

    def _read_fd(self, fd: int, cap: int, oversize: type[SkillError], what: str) -> bytes:
        info = os.fstat(fd)
        # The authoritative checks, on fstat of the descriptor that is read.
        if (
            not stat.S_ISREG(info.st_mode)
            or (info.st_nlink != 1 and not self.allow_hardlinks)
            or (info.st_dev != self.device and not self.allow_cross_device)
        ):
            self._refuse_file(info, what)
        size = info.st_size
        if size > cap:
            raise oversize("too_large", f"{what} is larger than {cap} bytes")
        # Ask for one byte more than fstat reported: a short read is then EOF, so the
        # usual file takes one read() call. A file that grows meanwhile keeps being
        # read, up to one byte past the cap, which is enough to refuse it.
        limit = cap + 1
        want = size + 1 if size < cap else limit
        chunk = os.read(fd, want)
        if len(chunk) < want:
            return chunk
        chunks = [chunk]
        total = len(chunk)
        while total < limit:
            chunk = os.read(fd, min(limit - total, _READ_CHUNK))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        return b"".join(chunks)

    def _refuse_file(self, info: os.stat_result, what: str) -> None:
        """Raise the reason an opened file is refused (one of the checks failed)."""
        if not stat.S_ISREG(info.st_mode):
            raise SkillContainmentError("not_regular_file", f"{what} is not a regular file")
        if info.st_nlink != 1 and not self.allow_hardlinks:
            raise SkillContainmentError(
                "hardlink", f"{what} has {info.st_nlink} hard links; it may alias a file outside"
            )
        if info.st_dev != self.device and not self.allow_cross_device:
            raise SkillContainmentError("cross_device", f"{what} is on another file system")
        raise AssertionError("unreachable: _refuse_file called for an acceptable file")

    # Looking -----------------------------------------------------------------------

    def has_entry(self, relpath: str) -> bool:
        """Whether *relpath* names anything at all (of any type, never followed).

        Raises ``SkillContainmentError`` when the folders on the way to it break
        containment (a symlink, another file system), like every other method.
        """
        parts = split_name(relpath)
        if not parts:
            return True
        try:
            dir_fd = self._open_dir(parts[:-1], "the folder", search_only=True)
        except SkillNotFoundError as exc:
            # Only a folder that is not there makes the entry absent: one that cannot be
            # searched (EACCES) is a refusal, never "absent", or a caller that searches
            # several places would fall through to the next one (threat-model.md T74).
            if exc.code == "missing":
                return False
            raise
        try:
            os.stat(parts[-1], dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            return False
        except OSError:
            return True  # present but odd: reading it reports the exact reason
        finally:
            if dir_fd != self._fd:
                os.close(dir_fd)
        return True

    def list_dir(self, relpath: str = "", *, max_entries: int) -> Listing:
        """The folders and regular files directly in *relpath*, sorted by name.

        Every entry is counted, but only the first *max_entries* by name are looked
        at, whatever order the file system lists them in; if there are more, a
        ``too_many_entries`` item says how many. Every entry not taken is in ``skipped``
        with its reason: ``symlink``, ``special_file``, ``hardlink``, ``cross_device``,
        ``bad_name``, ``unreadable``.
        """
        if type(max_entries) is not int or max_entries < 1:
            raise SkillUsageError("bad_argument", "max_entries must be a positive int")
        parts = split_name(relpath)
        if parts:
            dir_fd = self._open_dir(parts, "the folder")
        else:
            # A fresh descriptor: scandir() of the held one would share its offset
            # with every thread listing the root at the same time.
            try:
                dir_fd = os.open(".", _DIR_FLAGS, dir_fd=self.fd)
            except OSError as exc:
                raise _os_error(exc, "the root") from exc
        entries: list[Entry] = []
        skipped: list[Skipped] = []
        seen = 0

        def counted(scan: Iterator[os.DirEntry[str]]) -> Iterator[os.DirEntry[str]]:
            nonlocal seen
            for item in scan:
                seen += 1
                yield item

        try:
            with os.scandir(dir_fd) as scan:
                # Which entries are taken must not depend on the order the file system
                # happens to list them in: the first max_entries by name are taken, kept
                # in a heap of that size, so memory stays bounded however many there are.
                chosen = heapq.nsmallest(max_entries, counted(scan), key=lambda item: item.name)
                for item in chosen:
                    self._classify_entry(relpath, item, entries, skipped)
        except OSError as exc:
            raise _os_error(exc, "the folder") from exc
        finally:
            if dir_fd != self._fd:
                os.close(dir_fd)
        entries.sort(key=lambda entry: entry.name)
        skipped.sort(key=lambda item: item.path)
        if seen > max_entries:
            reason = (
                f"{seen} entries, more than the limit of {max_entries}; only the first "
                f"{max_entries} by name were read"
            )
            skipped.append(Skipped(relpath, "too_many_entries", reason))
        return Listing(tuple(entries), tuple(skipped))

    def _classify_entry(
        self, base: str, item: os.DirEntry[str], entries: list[Entry], skipped: list[Skipped]
    ) -> None:
        name = item.name
        path = join_relative(base, name)
        try:
            # d_type from the listing itself: no further system call, nothing followed.
            if item.is_symlink():
                kind = "link"
            elif item.is_dir(follow_symlinks=False):
                kind = "dir"
            elif item.is_file(follow_symlinks=False):
                kind = "file"
            else:
                kind = "special"
            split_name(name)
            if kind == "link":
                skipped.append(Skipped(path, "symlink", "a symlink is not followed", entry=kind))
            elif kind == "dir":
                entries.append(Entry(name, "dir"))
            elif kind == "special":
                reason = "a FIFO, socket or device is not read"
                skipped.append(Skipped(path, "special_file", reason, entry=kind))
            else:
                info = item.stat(follow_symlinks=False)
                if info.st_nlink != 1 and not self.allow_hardlinks:
                    reason = f"a file with {info.st_nlink} hard links"
                    skipped.append(Skipped(path, "hardlink", reason, entry=kind))
                elif info.st_dev != self.device and not self.allow_cross_device:
                    reason = "on another file system"
                    skipped.append(Skipped(path, "cross_device", reason, entry=kind))
                else:
                    entries.append(Entry(name, "file", info.st_size))
        except SkillContainmentError as exc:
            if exc.code == "hidden_character":
                # The name itself would hide text from whoever reads the report.
                path = join_relative(base, reveal(name))
            skipped.append(Skipped(path, exc.code, exc.reason, entry=kind))
        except OSError as exc:  # removed or swapped while being listed
            reason = _os_error(exc, "the entry").reason
            skipped.append(Skipped(path, "unreadable", reason, "not_found"))

    # Links, on purpose -------------------------------------------------------------

    def link_kind(self, relpath: str) -> Literal["dir", "other", "none"]:
        """What the symlink *relpath* resolves to: ``dir``, ``other`` or ``none``
        (dangling, or a loop). Only classifies the link for a report: nothing is
        opened through it."""
        parts = split_name(relpath)
        if not parts:
            return "none"
        try:
            dir_fd = self._open_dir(parts[:-1], "the folder", search_only=True)
        except SkillError:
            return "none"
        try:
            info = os.stat(parts[-1], dir_fd=dir_fd, follow_symlinks=True)
        except OSError:
            return "none"
        finally:
            if dir_fd != self._fd:
                os.close(dir_fd)
        return "dir" if stat.S_ISDIR(info.st_mode) else "other"

    def link_target(self, name: str) -> str | None:
        """Where the symlink *name* (directly in the root) points, made absolute.

        ``None`` when *name* is not a symlink. Nothing is opened through the link;
        the caller decides whether the target is trusted.
        """
        parts = split_name(name)
        if len(parts) != 1:
            raise _bad_name("a link name is one path component", name)
        try:
            target = os.readlink(parts[0], dir_fd=self.fd)
        except OSError:
            return None
        return os.path.normpath(os.path.join(self.path, target))


def open_trusted_target(
    target: str,
    trusted: tuple[str, ...],
    *,
    allow_hardlinks: bool = False,
    allow_cross_device: bool = False,
    resolver: Resolver = "auto",
) -> SafeRoot | None:
    """A ``SafeRoot`` of *target*, if it lies strictly inside one of the *trusted* folders.

    The check compares whole path components (``/a/skills-evil`` is not inside
    ``/a/skills``) after resolving both sides; then the target is opened *beneath* the
    trusted folder's descriptor, one component at a time, with no symlink followed, so
    a folder swapped for a link after the check is refused, never followed. ``None``
    when the target is not inside a trusted folder (or could not be resolved).
    """
    try:
        resolved = os.path.realpath(target)
        for folder in trusted:
            base = os.path.realpath(folder)
            if resolved == base or os.path.commonpath([resolved, base]) != base:
                continue
            relative = os.path.relpath(resolved, base)
            with SafeRoot(
                base,
                allow_hardlinks=allow_hardlinks,
                allow_cross_device=allow_cross_device,
                resolver=resolver,
            ) as trusted_root:
                return trusted_root.open_dir(relative.replace(os.sep, "/"))
    except (OSError, ValueError):  # a link changed mid-resolution: not trusted
        return None
    return None
