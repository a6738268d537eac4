"""The edge where skillguard touches the file system, and the only one.

Rules (threat-model.md T10-T13):

* Only the path the operator names is resolved by the OS (it is trusted, as the
  root of a ``SafeRoot`` will be). Below it, every directory is opened from the
  held descriptor of its parent, one component at a time, with ``O_NOFOLLOW``;
  no path string is ever opened again after it was checked.
* ``SKILL.md`` is looked at with ``lstat`` through the parent's descriptor first,
  so a device, FIFO or socket is refused without ever being opened; it is then
  opened ``O_NOFOLLOW|O_NONBLOCK|O_NOCTTY|O_CLOEXEC`` and ``fstat`` of *that*
  descriptor must say "regular file" (the authoritative check: it cannot race).
* The size from ``fstat`` is checked against the cap, then at most cap+1 bytes are
  read from the same descriptor; the parser hashes and parses exactly those bytes.
* A symlinked folder is never followed; it is reported. Nothing found is dropped:
  every folder that could hold a skill is either read or reported with a reason.
* Every ``OSError`` becomes a ``SkillContainmentError`` or ``SkillNotFoundError``.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import TYPE_CHECKING

import attrs

from ._errors import MalformedSkillError, SkillContainmentError, SkillError, SkillNotFoundError

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["SKILL_FILE", "Found", "Scan", "Skipped", "display_path", "scan_for_skills"]

SKILL_FILE = "SKILL.md"
# Folders that hold tooling, never skills, and can be huge; skipping them is documented.
EXCLUDED_DIRS = frozenset({".git", "node_modules"})

_ROOT_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NONBLOCK | os.O_CLOEXEC
_NOFOLLOW_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_READ_CHUNK = 64 * 1024


def display_path(path: str) -> str:
    """A path as text that is always valid Unicode (undecodable bytes escaped)."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


@attrs.frozen
class Found:
    """A folder that holds (or, as a PATH, should hold) a skill, with its bytes or error."""

    path: str
    folder: str | None
    raw: bytes | None = None
    error: SkillError | None = None


@attrs.frozen
class Skipped:
    """A folder that was deliberately not searched, with a typed reason."""

    path: str
    code: str
    reason: str


@attrs.frozen
class Scan:
    found: tuple[Found, ...]
    skipped: tuple[Skipped, ...]


def _os_error(exc: OSError, what: str, name: str | None) -> SkillError:
    """Map an OS error to a typed one, keeping the OS error as ``__cause__``."""
    error = _classify(exc, what, name)
    error.__cause__ = exc
    return error


def _classify(exc: OSError, what: str, name: str | None) -> SkillError:
    if exc.errno == errno.ELOOP:
        return SkillContainmentError("symlink", f"{what} is a symlink", name=name)
    if exc.errno in (errno.ENXIO, errno.ENODEV, errno.EOPNOTSUPP):
        return SkillContainmentError("not_regular_file", f"{what} is not a regular file", name=name)
    if exc.errno == errno.ENOTDIR:
        return SkillContainmentError("not_a_directory", f"{what} is not a directory", name=name)
    if exc.errno in (errno.ENOENT, errno.ENAMETOOLONG):
        return SkillNotFoundError("missing", f"{what} does not exist", name=name)
    return SkillNotFoundError(
        "unreadable",
        f"{what} cannot be read ({errno.errorcode.get(exc.errno or 0, 'EIO')})",
        name=name,
    )


def _read_capped(fd: int, cap: int, name: str | None) -> bytes:
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        raise SkillContainmentError(
            "not_regular_file", f"{SKILL_FILE} is not a regular file", name=name
        )
    if info.st_size > cap:
        raise MalformedSkillError("too_large", f"the file is larger than {cap} bytes", name=name)
    # Ask for one byte more than fstat reported: a short read is then EOF, so the
    # usual file takes one read() call. A file that grows meanwhile keeps being read,
    # up to one byte past the cap, which is enough for the parser to refuse it.
    limit = cap + 1
    want = min(info.st_size + 1, limit)
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


def read_file_at(dir_fd: int, filename: str, cap: int, name: str | None) -> bytes:
    """Read the regular file *filename* in the directory *dir_fd*, at most cap+1 bytes.

    Raises ``SkillContainmentError`` (symlink, special file), ``SkillNotFoundError``
    (missing, unreadable) or ``MalformedSkillError`` (``too_large``).
    """
    what = filename if filename == SKILL_FILE else "the skill file"
    try:
        info = os.stat(filename, dir_fd=dir_fd, follow_symlinks=False)
    except OSError as exc:
        raise _os_error(exc, what, name) from exc
    if stat.S_ISLNK(info.st_mode):
        raise SkillContainmentError("symlink", f"{what} is a symlink", name=name)
    if not stat.S_ISREG(info.st_mode):
        raise SkillContainmentError("not_regular_file", f"{what} is not a regular file", name=name)
    try:
        fd = os.open(filename, _FILE_FLAGS, dir_fd=dir_fd)  # noqa: TID251 - this is the edge
    except OSError as exc:
        raise _os_error(exc, what, name) from exc
    try:
        return _read_capped(fd, cap, name)
    except OSError as exc:
        raise _os_error(exc, what, name) from exc
    finally:
        os.close(fd)


def _read_found(dir_fd: int, path: str, folder: str | None, filename: str, cap: int) -> Found:
    try:
        raw = read_file_at(dir_fd, filename, cap, folder)
    except SkillError as exc:
        return Found(path, folder, error=exc)
    return Found(path, folder, raw=raw)


def _has_entry(dir_fd: int, filename: str) -> bool:
    try:
        os.stat(filename, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    except OSError:
        return True  # present but odd: reading it reports the exact reason
    return True


def scan_for_skills(path: str, *, max_depth: int, cap: int) -> Scan:
    """Find and read every skill under *path*, the operator's trusted starting point.

    *path* is a ``SKILL.md`` file, a skill folder, or a root searched down to
    *max_depth* levels. Returns one ``Found`` per skill folder (or one ``not_found``
    when there is none) and the folders deliberately not searched. Never raises for
    anything on disk.
    """
    if os.path.basename(path.rstrip(os.sep)) == SKILL_FILE:
        # Named as the skill file itself: read as a file, so that a SKILL.md that is
        # a symlink (even to a folder) is refused, never followed.
        return Scan((_read_given_file(path, cap),), ())
    try:
        # O_DIRECTORY makes open() fail with ENOTDIR before a FIFO or device is
        # opened, and O_NONBLOCK guards the rest; nothing here can block.
        root_fd = os.open(path, _ROOT_FLAGS)  # noqa: TID251 - the operator's own path
    except OSError:
        # Not a directory we can open: a file, or a link, FIFO, device, or nothing.
        # Reading it through its parent's descriptor reports exactly which.
        return Scan((_read_given_file(path, cap),), ())
    found: list[Found] = []
    skipped: list[Skipped] = []
    try:
        _walk(root_fd, path, _folder_name(path), max_depth, cap, found, skipped)
    finally:
        os.close(root_fd)
    if not found:
        error = SkillNotFoundError("no_skill", f"no folder holding {SKILL_FILE} was found")
        found.append(Found(path, None, error=error))
    return Scan(tuple(found), tuple(skipped))


def _folder_name(path: str) -> str:
    return os.path.basename(os.path.abspath(path))


def _read_given_file(path: str, cap: int) -> Found:
    parent, filename = os.path.split(os.path.abspath(path))
    folder = os.path.basename(parent) or None
    if path.endswith(os.sep):
        error: SkillError = SkillContainmentError(
            "not_a_directory", "the path ends with '/' but is not a folder", name=folder
        )
        return Found(path, folder, error=error)
    try:
        parent_fd = os.open(parent, _ROOT_FLAGS)  # noqa: TID251 - the operator's own path
    except OSError as exc:
        return Found(path, folder, error=_os_error(exc, "the folder", folder))
    try:
        found = _read_found(parent_fd, path, folder, filename, cap)
    finally:
        os.close(parent_fd)
    if isinstance(found.error, SkillNotFoundError) and found.error.code == "missing":
        # Nothing is there at all: it was no skill file, so it names no skill either.
        error = SkillNotFoundError("missing", "the path does not exist")
        error.__cause__ = found.error.__cause__
        return Found(path, None, error=error)
    return found


def _subdirs(dir_fd: int) -> Iterator[tuple[str, bool]]:
    """Sorted (name, is_symlink) of the entries that are directories or symlinks."""
    with os.scandir(dir_fd) as entries:
        names = sorted(
            (entry.name, entry.is_symlink())
            for entry in entries
            if entry.is_symlink() or entry.is_dir(follow_symlinks=False)
        )
    return iter(names)


def _enter(
    dir_fd: int, path: str, folder: str, cap: int, found: list[Found]
) -> Iterator[tuple[str, bool]] | None:
    """Read the skill in this folder, or list its sub-folders to search them.

    Returns the sub-folders to visit, or ``None`` when the folder is a skill folder
    (skills are not searched for nested skills) or cannot be listed (reported).
    """
    if _has_entry(dir_fd, SKILL_FILE):
        found.append(_read_found(dir_fd, path, folder, SKILL_FILE, cap))
        return None
    try:
        return _subdirs(dir_fd)
    except OSError as exc:  # pragma: no cover - EACCES/EIO on a folder that opened
        found.append(Found(path, folder, error=_os_error(exc, "the folder", folder)))
        return None


def _walk(
    root_fd: int,
    root_path: str,
    root_folder: str,
    max_depth: int,
    cap: int,
    found: list[Found],
    skipped: list[Skipped],
) -> None:
    """Depth-first search from *root_fd*; at most one descriptor per level is open."""
    children = _enter(root_fd, root_path, root_folder, cap, found)
    if children is None:
        return
    # Each frame: (fd, path, depth, iterator over its sub-folders). The root fd is
    # owned by the caller; the others are closed here when their frame is popped.
    stack = [(root_fd, root_path, 0, children)]
    try:
        while stack:
            fd, base, depth, children = stack[-1]
            entry = next(children, None)
            if entry is None:
                stack.pop()
                if fd != root_fd:
                    os.close(fd)
                continue
            name, is_link = entry
            if name in EXCLUDED_DIRS:
                continue
            child_path = os.path.join(base, name)
            if is_link:
                target = _link_target_kind(fd, name)
                if target == "dir":
                    error = SkillContainmentError(
                        "symlink", "a symlinked folder is not followed", name=name
                    )
                    found.append(Found(child_path, name, error=error))
                elif target == "none":
                    # It could have been a skill folder; say that it was not followed.
                    reason = "a symlink that resolves to nothing is not followed"
                    skipped.append(Skipped(child_path, "symlink", reason))
                continue
            if depth + 1 > max_depth:
                reason = f"deeper than --max-depth {max_depth}"
                skipped.append(Skipped(child_path, "too_deep", reason))
                continue
            try:
                child_fd = os.open(name, _NOFOLLOW_DIR_FLAGS, dir_fd=fd)  # noqa: TID251
            except OSError as exc:  # swapped for a link or removed since it was listed
                found.append(Found(child_path, name, error=_os_error(exc, "the folder", name)))
                continue
            grandchildren = _enter(child_fd, child_path, name, cap, found)
            if grandchildren is None:
                os.close(child_fd)
                continue
            stack.append((child_fd, child_path, depth + 1, grandchildren))
    finally:
        for fd, _, _, _ in stack:
            if fd != root_fd:
                os.close(fd)


def _link_target_kind(dir_fd: int, name: str) -> str:
    """ "dir", "other" or "none" (dangling or a loop). Only classifies the link for
    the report: nothing is opened through it."""
    try:
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=True)
    except OSError:
        return "none"
    return "dir" if stat.S_ISDIR(info.st_mode) else "other"
