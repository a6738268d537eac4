"""SafeRoot: the one place where skillguard reads the file system.

Writing the operator's own files (atomic replacement, locks) is ``_fs_write``'s.

Rules (threat-model.md T10-T12, T15-T20). A ``SafeRoot`` is opened once on a path
the caller trusts and holds that directory's descriptor; every access below it is
relative to the descriptor, and:

* Names are validated before any system call: relative, no empty component (so no
  trailing ``/`` and no ``//``), no ``.`` or ``..``, no NUL, no control characters,
  no backslash, bounded length. Nothing is ever resolved by a path string again.
* Directories are opened with ``openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
  RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV)`` where the kernel has it, and otherwise
  one component at a time from the held descriptor with
  ``O_DIRECTORY|O_NOFOLLOW|O_CLOEXEC``, checking ``st_dev`` of each. Both resolvers
  give the same answers (every containment test runs against both).
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

import contextlib
import ctypes
import errno
import fcntl
import heapq
import os
import re
import stat
import sys
import termios
from typing import TYPE_CHECKING, Literal, TypeAlias

import attrs

from ._errors import (
    MalformedSkillError,
    SkillContainmentError,
    SkillError,
    SkillNotFoundError,
    SkillUsageError,
    safe_repr,
)
from ._fs_write import FileLock, replace_beneath, write_atomic
from ._text import find_hidden, reveal

if TYPE_CHECKING:
    from collections.abc import Callable, Generator, Iterator
    from types import TracebackType
    from typing import TextIO

__all__ = [
    "SKILL_FILE",
    "AppendFile",
    "Entry",
    "FileLock",
    "Listing",
    "OutputFolder",
    "Resolver",
    "SafeRoot",
    "Skipped",
    "controlling_terminal",
    "discard_typeahead",
    "display_path",
    "join_relative",
    "open_trusted_target",
    "openat2_available",
    "operator_path",
    "printed_path",
    "read_operator_bytes",
    "read_trusted_bytes",
    "read_trusted_file",
    "same_file",
    "split_name",
    "split_operator_path",
    "stream_lines",
    "write_atomic",
]

SKILL_FILE = "SKILL.md"
Resolver: TypeAlias = Literal["auto", "openat2", "walk"]

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
# Folders on the way to a file are opened for searching only (O_PATH on Linux): a
# folder with execute but no read permission is then passable by both resolvers.
_SEARCH_DIR_FLAGS = (
    os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC if hasattr(os, "O_PATH") else _DIR_FLAGS
)
_ROOT_FLAGS = _DIR_FLAGS | os.O_NONBLOCK
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_READ_CHUNK = 64 * 1024
_MAX_NAME_BYTES = 255  # NAME_MAX on Linux and the BSDs
_MAX_PATH_BYTES = 4095  # PATH_MAX, less the terminating NUL
_BAD_PATH_CHAR = re.compile("[\x00-\x1f\x7f-\x9f\\\\]")  # controls and backslash


def display_path(path: str) -> str:
    """A path as text that is always valid Unicode (undecodable bytes escaped)."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def printed_path(path: str) -> str:
    """``display_path`` that cannot be mistaken for another path: a backslash is
    doubled before undecodable bytes become ``\\xNN``, so a name holding the four
    characters ``\\xff`` and one holding the byte 0xff never print alike."""
    return os.fsencode(path).replace(b"\\", b"\\\\").decode("utf-8", "backslashreplace")


# -- names ---------------------------------------------------------------------------


def _bad_name(reason: str, name: str) -> SkillContainmentError:
    return SkillContainmentError("bad_name", f"{reason}: {safe_repr(name)}")


def split_name(relpath: str) -> tuple[str, ...]:
    """Validate an untrusted relative path and split it into components.

    ``""`` is the root itself. Raises ``SkillContainmentError`` (``path_escape`` for
    absolute paths and ``.``/``..`` components, ``hidden_character`` for a character
    that hides or reorders text, ``bad_name`` for the rest) before any
    system call is made, and ``SkillUsageError`` when *relpath* is not a ``str``.
    """
    if not isinstance(relpath, str):
        raise SkillUsageError("bad_argument", "a path must be a str")
    if not relpath:
        return ()
    if len(relpath) > _MAX_PATH_BYTES:  # a character is at least one byte
        raise _bad_name("the path is too long", relpath)
    if relpath.startswith("/"):
        raise SkillContainmentError("path_escape", f"absolute path {safe_repr(relpath)}")
    if "/" not in relpath and relpath not in (".", "..") and relpath.isascii():
        # One plain ASCII name, the usual case (a skill folder): two checks suffice.
        if _BAD_PATH_CHAR.search(relpath) is not None:
            raise _bad_name("a control character or backslash in the path", relpath)
        if len(relpath) > _MAX_NAME_BYTES:
            raise _bad_name("a path component is too long", relpath)
        return (relpath,)
    if _BAD_PATH_CHAR.search(relpath) is not None:
        raise _bad_name("a control character or backslash in the path", relpath)
    if not relpath.isascii():  # O(1); only then can a lone surrogate be present
        try:
            encoded = relpath.encode("utf-8")
        except UnicodeEncodeError:  # bytes that were never UTF-8
            raise _bad_name("a path component that is not UTF-8", relpath) from None
        if len(encoded) > _MAX_PATH_BYTES:  # both resolvers refuse it alike
            raise _bad_name("the path is too long", relpath)
        hidden = find_hidden(relpath)
        if hidden is not None:
            raise SkillContainmentError(
                "hidden_character",
                f"the invisible or bidirectional character U+{ord(hidden[1]):04X} "
                f"in the path {safe_repr(relpath)}",
            )
    parts = tuple(relpath.split("/"))
    for part in parts:
        if part in (".", ".."):
            raise SkillContainmentError(
                "path_escape", f"'.' or '..' in the path {safe_repr(relpath)}"
            )
        if not part:
            # Also refuses a trailing "/" and "//" (the shape of Go's CVE-2026-39822).
            raise _bad_name("an empty path component", relpath)
        # At most 4 bytes a character: only a long component can be over the limit.
        if len(part) > _MAX_NAME_BYTES // 4 and len(part.encode("utf-8")) > _MAX_NAME_BYTES:
            raise _bad_name("a path component is too long", relpath)
    return parts


# -- openat2 -------------------------------------------------------------------------

_SYS_OPENAT2 = 437  # the same number on every Linux architecture (unified table)
_RESOLVE_NO_XDEV = 0x01
_RESOLVE_NO_MAGICLINKS = 0x02
_RESOLVE_NO_SYMLINKS = 0x04
_RESOLVE_BENEATH = 0x08
_EAGAIN_RETRIES = 8


class _OpenHow(ctypes.Structure):
    _fields_ = (
        ("flags", ctypes.c_uint64),
        ("mode", ctypes.c_uint64),
        ("resolve", ctypes.c_uint64),
    )


def _load_syscall() -> ctypes._CFuncPtr | None:  # type: ignore[name-defined]
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        syscall = libc.syscall
    except (OSError, AttributeError):  # pragma: no cover - a libc without syscall()
        return None
    syscall.restype = ctypes.c_long
    # Declared once, so that each call converts plain ints without wrapper objects.
    syscall.argtypes = (
        ctypes.c_long,
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.POINTER(_OpenHow),
        ctypes.c_size_t,
    )
    return syscall


_syscall = _load_syscall()
_HOW_SIZE = ctypes.sizeof(_OpenHow)


def _openat2(dir_fd: int, path: str, how: _OpenHow) -> int:
    """openat2(2); returns the new descriptor or raises OSError (EAGAIN retried).

    The kernel returns EAGAIN when a rename raced the lookup; retrying a few times
    is what its documentation asks for.
    """
    assert _syscall is not None
    encoded = path.encode("utf-8")
    for _ in range(_EAGAIN_RETRIES):
        result: int = _syscall(_SYS_OPENAT2, dir_fd, encoded, ctypes.byref(how), _HOW_SIZE)
        if result >= 0:
            return result
        code = ctypes.get_errno()
        if code != errno.EAGAIN:
            break
    raise OSError(code, os.strerror(code), path)


def _probe_openat2() -> bool:
    if _syscall is None:
        return False
    probe = os.open("/", _DIR_FLAGS)  # probing the kernel
    try:
        how = _OpenHow(_DIR_FLAGS, 0, _RESOLVE_BENEATH | _RESOLVE_NO_SYMLINKS)
        fd = _openat2(probe, ".", how)
    except OSError:  # ENOSYS (old kernel), EPERM (seccomp filter) or anything else
        return False
    finally:
        os.close(probe)
    os.close(fd)
    return True


_OPENAT2 = _probe_openat2()


def openat2_available() -> bool:
    """Whether this kernel lets skillguard use openat2(2) (Linux 5.6 and newer)."""
    return _OPENAT2


def _platform_supported() -> bool:
    return (
        hasattr(os, "O_NOFOLLOW")
        and hasattr(os, "O_DIRECTORY")
        and os.open in os.supports_dir_fd
        and os.stat in os.supports_dir_fd
        and os.stat in os.supports_follow_symlinks
        and os.scandir in os.supports_fd
    )


# -- errors --------------------------------------------------------------------------


def _os_error(exc: OSError, what: str) -> SkillError:
    """Map an OS error to a typed one, keeping the OS error as ``__cause__``."""
    error = _classify(exc, what)
    error.__cause__ = exc
    return error


def _classify(exc: OSError, what: str, *, doing: str = "read") -> SkillError:
    code = exc.errno
    if code == errno.ELOOP:
        return SkillContainmentError("symlink", f"{what} is or passes through a symlink")
    if code == errno.EXDEV:
        return SkillContainmentError("cross_device", f"{what} is on another file system")
    if code in (errno.ENXIO, errno.ENODEV, errno.EOPNOTSUPP):
        return SkillContainmentError("not_regular_file", f"{what} is not a regular file")
    if code == errno.ENOTDIR:
        return SkillContainmentError("not_a_directory", f"{what}: a component is not a folder")
    if code == errno.ENAMETOOLONG:
        return SkillContainmentError("bad_name", f"{what}: the path is too long")
    if code == errno.ENOENT:
        return SkillNotFoundError("missing", f"{what} does not exist")
    return SkillNotFoundError(
        "unreadable", f"{what} cannot be {doing} ({errno.errorcode.get(code or 0, 'EIO')})"
    )


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


def join_relative(base: str, name: str) -> str:
    """``base/name`` for relative ``/``-separated paths (``""`` is the root)."""
    if not base:
        return name
    return f"{base}/{name}" if name else base


# -- SafeRoot ------------------------------------------------------------------------


class SafeRoot:
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

    _fd: int | None = None  # until __init__ has opened the root

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        allow_hardlinks: bool = False,
        allow_cross_device: bool = False,
        resolver: Resolver = "auto",
    ) -> None:
        if not _platform_supported():  # pragma: no cover - POSIX platforms all qualify
            raise SkillUsageError(
                "unsupported_platform",
                "this platform lacks O_NOFOLLOW and dir_fd support; skillguard will not "
                "fall back to path checks",
            )
        if not isinstance(resolver, str) or resolver not in ("auto", "openat2", "walk"):
            raise SkillUsageError("bad_argument", "resolver must be 'auto', 'openat2' or 'walk'")
        if resolver == "openat2" and not _OPENAT2:
            raise SkillUsageError("unsupported_platform", "openat2(2) is not available here")
        self.path = operator_path(path, "the root")
        self.allow_hardlinks = allow_hardlinks
        self.allow_cross_device = allow_cross_device
        self.resolver: Literal["openat2", "walk"] = (
            "openat2" if resolver == "openat2" or (resolver == "auto" and _OPENAT2) else "walk"
        )
        resolve = _RESOLVE_BENEATH | _RESOLVE_NO_SYMLINKS | _RESOLVE_NO_MAGICLINKS
        if not allow_cross_device:
            resolve |= _RESOLVE_NO_XDEV
        self._how = _OpenHow(_DIR_FLAGS, 0, resolve)
        self._search_how = _OpenHow(_SEARCH_DIR_FLAGS, 0, resolve)
        try:
            # O_DIRECTORY fails with ENOTDIR before a FIFO or device is opened.
            fd = os.open(self.path, _ROOT_FLAGS)  # the trusted root itself
        except OSError as exc:
            raise _os_error(exc, "the root") from exc
        except ValueError as exc:  # a NUL in the path
            raise SkillUsageError("bad_argument", "the root path holds a NUL") from exc
        self._fd: int | None = fd
        info = os.fstat(fd)
        # Containment is judged against the device of the outermost root.
        self.device = info.st_dev
        self.identity = (info.st_dev, info.st_ino)

    # The descriptor's lifetime -----------------------------------------------------

    def close(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    def __enter__(self) -> SafeRoot:  # noqa: PYI034 - typing.Self needs Python 3.11
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def __del__(self) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"SafeRoot({self.path!r}, resolver={self.resolver!r})"

    @property
    def fd(self) -> int:
        if self._fd is None:
            raise SkillUsageError("closed", "the SafeRoot is closed")
        return self._fd

    # Opening -----------------------------------------------------------------------

    def _open_dir(
        self,
        parts: tuple[str, ...],
        what: str,
        *,
        check_device: bool = True,
        search_only: bool = False,
    ) -> int:
        """A descriptor for the folder *parts* beneath the root (the root's own for ``()``:
        callers close what is not ``self._fd``).

        A single component is opened with ``openat(O_NOFOLLOW|O_DIRECTORY)`` by both
        resolvers: for one name that is all openat2 would do, in one call less. With
        *check_device* false the caller checks the device of what it opens inside; with
        *search_only* the descriptor is good only as a ``dir_fd`` (and for ``fstat``).
        """
        root = self.fd
        if not parts:
            return root
        if self.resolver == "openat2" and len(parts) > 1:
            try:
                how = self._search_how if search_only else self._how
                return _openat2(root, "/".join(parts), how)
            except OSError as exc:
                if exc.errno not in (errno.ENOSYS, errno.EPERM):
                    raise _os_error(exc, what) from exc
                # A seccomp filter installed after start-up: walk instead, from now on.
                self.resolver = "walk"
        current = root
        last = len(parts) - 1
        try:
            for index, part in enumerate(parts):
                flags = _DIR_FLAGS if index == last and not search_only else _SEARCH_DIR_FLAGS
                try:
                    fd = os.open(part, flags | os.O_NOFOLLOW, dir_fd=current)
                except OSError as exc:
                    if exc.errno == errno.ENOTDIR and self._is_link(part, current):
                        # O_DIRECTORY|O_NOFOLLOW reports a symlink as ENOTDIR; openat2
                        # says ELOOP. Both resolvers give the same answer: "symlink".
                        exc = OSError(errno.ELOOP, os.strerror(errno.ELOOP), part)
                    raise _os_error(exc, what) from exc
                if current != root:
                    os.close(current)
                current = fd
                if check_device:
                    self._check_device(fd, what)
        except BaseException:
            if current != root:
                os.close(current)
            raise
        return current

    def folder_identity(self, relpath: str) -> tuple[int, int]:
        """``(st_dev, st_ino)`` of the folder *relpath*, to recognise one reached twice."""
        parts = split_name(relpath)
        if not parts:
            return self.identity
        fd = self._open_dir(parts, "the folder", search_only=True)
        try:
            info = os.fstat(fd)
        finally:
            os.close(fd)
        return (info.st_dev, info.st_ino)

    def _check_device(self, fd: int, what: str) -> None:
        if not self.allow_cross_device and os.fstat(fd).st_dev != self.device:
            raise SkillContainmentError("cross_device", f"{what} is on another file system")

    @staticmethod
    def _is_link(name: str, dir_fd: int) -> bool:
        try:
            info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except OSError:
            return False
        return stat.S_ISLNK(info.st_mode)

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


def split_operator_path(path: str) -> tuple[str, str]:
    """(parent folder, final name) of a path the operator gave, made absolute."""
    parent, name = os.path.split(os.path.abspath(path))
    return parent, name


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


# -- the operator's own files (audit log, trust store) --------------------------------
# These paths are configuration the operator names, not workspace content: they are
# resolved by the OS. Writes never follow a symlink at the final component; the atomic
# writes and the locks live in ``_fs_write`` (re-exported here for the modules that
# import them from this one).


def read_trusted_file(path: str) -> str:
    """The text of an operator's file (undecodable bytes replaced, so never raises on them)."""
    return read_trusted_bytes(path).decode("utf-8", "replace")


def read_trusted_bytes(path: str) -> bytes:
    """The bytes of an operator's own file (a policy, a log): a regular file only."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", path)
        chunks = []
        while chunk := os.read(fd, _READ_CHUNK):
            chunks.append(chunk)
    finally:
        os.close(fd)
    return b"".join(chunks)


# -- the audit log: one appender, one streaming reader (the operator's own files) ------
# An audit log can be large and can be handed to ``audit verify`` by anyone: it is read
# in chunks from one descriptor, a line at a time, never more than the size ``fstat``
# gave (a ``/proc`` file says 0 and is read as empty), and a line over the caller's cap
# ends the stream at once, so memory stays flat whatever the file holds.

_STREAM_CHUNK = 1 << 20
_LOG_FLAGS = (
    os.O_RDWR
    | os.O_APPEND
    | os.O_CREAT
    | os.O_CLOEXEC
    | os.O_NOFOLLOW
    | os.O_NONBLOCK
    | os.O_NOCTTY
)


def operator_path(path: object, what: str) -> str:
    """A path the operator named (a ``str`` or a path-like object), as a ``str``.

    Raises ``SkillUsageError`` for anything else, an empty path, a NUL in it (which
    ``open`` would refuse with a ``ValueError``) or a character the file system cannot
    encode (a lone surrogate, which ``open`` would refuse with a ``UnicodeEncodeError``).
    """
    if isinstance(path, os.PathLike):
        # A caller's __fspath__ is foreign code: whatever it raises is a bad argument.
        try:
            path = os.fspath(path)
        except Exception as exc:
            raise SkillUsageError(
                "bad_argument", f"{what} could not be turned into a path"
            ) from exc
    if not isinstance(path, str):
        raise SkillUsageError("bad_argument", f"{what} must be a str or a path-like object")
    if not path or "\x00" in path:
        raise SkillUsageError("bad_argument", f"{what} must not be empty or hold a NUL")
    try:
        os.fsencode(path)
    except UnicodeEncodeError as exc:
        raise SkillUsageError("bad_argument", f"{what} holds a character no path can") from exc
    return path


def read_operator_bytes(path: str, *, limit: int) -> bytes:
    """At most *limit* bytes of an operator's small regular file (a key): ``OSError``
    (``EFBIG``) when it holds more, ``EINVAL`` when it is not a regular file."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", path)
        chunks: list[bytes] = []
        size = 0
        while size <= limit and (chunk := os.read(fd, limit + 1 - size)):
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    if size > limit:
        raise OSError(errno.EFBIG, "file too large", path)
    return b"".join(chunks)


_TERMINAL = "/dev/tty"


@contextlib.contextmanager
def controlling_terminal() -> Iterator[tuple[TextIO, TextIO] | None]:
    """The process's controlling terminal (``/dev/tty``), as a text reader and a text
    writer of one descriptor, closed on exit; ``None`` when the process has none (a
    daemon, a new session, a CI runner). Never stdin or stdout: a caller that pipes
    them cannot answer a question meant for the human at the terminal (T162)."""
    try:
        fd = os.open(_TERMINAL, os.O_RDWR | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError:  # ENXIO: no controlling terminal; ENOENT: no /dev/tty at all
        yield None
        return
    try:
        # Two buffered streams over the one descriptor; each is closed without it.
        with (
            open(fd, encoding="utf-8", errors="replace", closefd=False) as reader,
            open(fd, "w", encoding="utf-8", errors="backslashreplace", closefd=False) as writer,
        ):
            yield reader, writer
    finally:
        os.close(fd)


def discard_typeahead(stream: object) -> None:
    """Discard what was typed on the terminal *stream* reads from and not read yet, so
    that the next line read was typed after the question it answers was shown: keys
    typed ahead (an answer to something else, input meant for another program on the
    terminal) answer nothing (T205). A stream that is no terminal is left alone."""
    fileno = getattr(stream, "fileno", None)
    try:
        descriptor = fileno() if callable(fileno) else None
        if isinstance(descriptor, int) and os.isatty(descriptor):
            termios.tcflush(descriptor, termios.TCIFLUSH)
    except (OSError, ValueError, termios.error):  # closed, or no descriptor (io.StringIO)
        return


def same_file(first: str, second: str) -> bool:
    """Whether two operator paths name one file (symlinks followed, as an open would):
    ``False`` when either cannot be reached."""
    try:
        one, other = os.stat(first), os.stat(second)
    except (OSError, ValueError):
        return False
    return (one.st_dev, one.st_ino) == (other.st_dev, other.st_ino)


def stream_lines(path: str, *, max_line: int) -> Generator[bytes, None, None]:
    """The lines of an operator's regular file, split on ``\\n`` only, each with its
    ``\\n`` (the last may lack it).

    The file is opened once (``O_NONBLOCK``, so a FIFO cannot block the open) and must be
    a regular file on ``fstat`` (``OSError`` ``EINVAL`` otherwise); at most the size
    ``fstat`` gave is read. A line longer than *max_line* bytes is cut to
    ``max_line + 1`` bytes and ends the stream. Close the generator (``contextlib.closing``)
    to close the descriptor at once.
    """
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", path)
        yield from _split_lines(lambda size: os.read(fd, size), info.st_size, max_line)
    finally:
        os.close(fd)


def _split_lines(
    read: Callable[[int], bytes], remaining: int, max_line: int
) -> Generator[bytes, None, None]:
    """The lines of the next *remaining* bytes that *read* gives (``stream_lines``)."""
    pending = b""
    while remaining > 0 and (chunk := read(min(_STREAM_CHUNK, remaining))):
        remaining -= len(chunk)
        buffer = pending + chunk if pending else chunk
        start = 0
        while (end := buffer.find(b"\n", start)) != -1:
            if end - start > max_line:
                yield buffer[start : start + max_line + 1]
                return
            yield buffer[start : end + 1]
            start = end + 1
        pending = buffer[start:]
        if len(pending) > max_line:
            yield pending[: max_line + 1]
            return
    if pending:
        yield pending


def _require_regular(fd: int, path: str) -> None:
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        raise OSError(errno.EINVAL, "not a regular file", path)


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
        renamed over it within the held descriptor (``_fs_write.replace_beneath``); a
        symlink or a non-regular file already at *name* is refused, never replaced or
        followed. A write that fails (a full disk) raises ``SkillNotFoundError``
        (``unreadable``) with the OS's reason, and leaves *name* as it was.
        """
        name = self._name(name)
        self._existing(name)
        try:
            replace_beneath(self._fd, name, data, mode=0o644)
        except OSError as exc:
            # A full disk, a quota, a file-size limit: this file fails, typed (T216).
            raise _classify(exc, "the generated file", doing="written") from exc
