"""OS errors as typed errors: what the file-system edge says when it refuses a path.

Every ``OSError`` met beneath a ``SafeRoot`` (and in an ``OutputFolder``) becomes a
``SkillContainmentError`` (``symlink``, ``cross_device``, ``not_regular_file``,
``not_a_directory``, ``bad_name``) or a ``SkillNotFoundError`` (``missing``,
``unreadable``), keeping the OS error as ``__cause__``. The two helpers are private to
the ``_fs`` floor.
"""

from __future__ import annotations

import errno

from skillguard._core.errors import SkillContainmentError, SkillError, SkillNotFoundError

__all__: list[str] = []


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
