"""The held-descriptor walk: a folder beneath a root, reached without following anything.

Rules (threat-model.md T10, T15, T16, T18). A root is opened once on a path the caller trusts
(resolved by the OS: it is the caller's own) and its descriptor is held; every folder
beneath it is opened relative to that descriptor, from names ``_fs.paths.split_name``
has validated:

* with ``openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
  RESOLVE_NO_XDEV)`` where the kernel has it (called through ``ctypes``; a kernel or a
  seccomp filter that refuses it makes the root fall back to the walk),
* and otherwise one component at a time from the held descriptor with
  ``O_DIRECTORY|O_NOFOLLOW|O_CLOEXEC``, checking ``st_dev`` of each.

Both resolvers give the same answers (every containment test runs against both).
``HeldRoot`` holds the descriptor and walks; ``SafeRoot`` (``_fs.containment``) builds
its reads and listings on it.
"""

from __future__ import annotations

import ctypes
import errno
import os
import stat
import sys
from typing import Literal, TypeAlias

from skillguard._core.errors import SkillContainmentError, SkillUsageError
from skillguard._fs.errors import _os_error
from skillguard._fs.paths import operator_path, split_name

__all__ = ["HeldRoot", "Resolver", "openat2_available"]


Resolver: TypeAlias = Literal["auto", "openat2", "walk"]

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
# Folders on the way to a file are opened for searching only (O_PATH on Linux): a
# folder with execute but no read permission is then passable by both resolvers.
_SEARCH_DIR_FLAGS = (
    os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC if hasattr(os, "O_PATH") else _DIR_FLAGS
)
_ROOT_FLAGS = _DIR_FLAGS | os.O_NONBLOCK


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


class HeldRoot:
    """A root folder's held descriptor, and the walk to a folder beneath it: what
    ``SafeRoot`` (``_fs.containment``) is built on, and whose constructor it takes."""

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

    def __del__(self) -> None:
        self.close()

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
