"""Where a path is: the repository's, or the operator's own.

Rules (threat-model.md T125, T133, T134, T202, T204). A folder or file the operator
names as their own (an operator agent folder, the trust store) is refused
(``bad_argument``) when it is the repository, lies inside it, or goes through it:

* judged on real paths, and on where they are on their devices (the mount table,
  ``/proc/self/mountinfo``), so that a link or a bind mount of the repository, or of
  one of its folders, is still the repository;
* judged at every step of the operator's spelling, by where the entry itself lies: a
  link the repository holds is the workspace's to point anywhere, at any moment, so
  where it points now proves nothing; the repository's own folder on the way (its
  ``..``) is not;
* an operator folder starting with ``~`` is refused rather than read from the working
  directory (the shell expands it; the library does not).
"""

from __future__ import annotations

import os
import posixpath
import re

from skillguard._core.errors import SkillUsageError, safe_repr
from skillguard._fs.paths import display_path, operator_path

__all__ = ["check_operator_folders", "check_trust_store", "inside_repo"]


_MOUNTINFO = "/proc/self/mountinfo"
_OCTAL = re.compile(rb"\\([0-7]{3})")


def _unescape(field: bytes) -> bytes:
    return _OCTAL.sub(lambda match: bytes([int(match.group(1), 8) & 0xFF]), field)


def _mounts() -> list[tuple[bytes, bytes, bytes]]:
    """(mount point, device, root within the device) of every mount this process sees,
    in mount order; empty where the system does not say (not Linux)."""
    try:
        with open(_MOUNTINFO, "rb") as file:
            lines = file.read().splitlines()
    except OSError:  # pragma: no cover - a system without a mount table (not Linux)
        return []
    # id, parent, major:minor, root, mount point, ... (proc(5)); a line the kernel
    # did not write in that shape tells nothing.
    fields = [line.split(b" ") for line in lines]
    return [
        (_unescape(field[4]), field[2], _unescape(field[3])) for field in fields if len(field) > 4
    ]


def _beneath(path: bytes, top: bytes) -> bool:
    return path == top or path.startswith(top.rstrip(b"/") + b"/")


def _on_device(real: str, mounts: list[tuple[bytes, bytes, bytes]]) -> tuple[bytes, bytes] | None:
    """Where the real path *real* is on its device: the device and the path from the
    device's root. A bind mount shows a folder at a second path; this is the same for
    both paths. The last mount on the longest mount point holding *real* is the one
    seen there (a later mount hides an earlier one)."""
    path = os.fsencode(real)
    holding = [(len(mount[0]), order, mount) for order, mount in enumerate(mounts)]
    holding = [item for item in holding if _beneath(path, item[2][0])]
    if not holding:  # pragma: no cover - a system without a mount table (not Linux)
        return None
    point, device, root = max(holding)[2]
    rest = path[len(point.rstrip(b"/")) :]
    return device, posixpath.normpath(root.rstrip(b"/") + rest) if rest else root


def check_operator_folders(repo: str, dirs: object) -> tuple[str, ...]:
    """The operator agent folders *dirs*, checked: a list of the operator's paths, none
    starting with ``~`` and none the repository's (``inside_repo``); else
    ``SkillUsageError`` (``bad_argument``)."""
    if isinstance(dirs, (str, bytes)) or not isinstance(dirs, (list, tuple)):
        raise SkillUsageError("bad_argument", "operator_agents must be a list of folders")
    folders = tuple(operator_path(folder, "an operator agent folder") for folder in dirs)
    for folder in folders:
        # Never expanded here (that is the shell's job): taken literally, "~/agents"
        # names a folder of the working directory, which holds nothing, and the
        # operator's own agent would silently give way to the repository's.
        if folder.startswith("~"):
            raise SkillUsageError(
                "bad_argument",
                f"operator agent folder {safe_repr(display_path(folder))} starts with '~', "
                "which is not expanded: pass the folder's own path",
            )
    inside = inside_repo(repo, folders)
    if inside is not None:
        raise SkillUsageError(
            "bad_argument",
            f"operator agent folder {safe_repr(display_path(inside))} is inside the "
            "repository (or reached through it): its files are the workspace's",
        )
    return folders


def _steps(path: str) -> list[str]:
    """Each place the operator's spelling of *path* goes through, then *path* itself:
    ``/a/l/../b`` goes through ``/a``, ``/a/l`` and ``/a/l/..``. Nothing is collapsed,
    since ``..`` after a link leads wherever the link points; a relative path goes
    through the working directory and each folder above it first."""
    absolute = path if path.startswith("/") else os.getcwd() + "/" + path
    parts = [part for part in absolute.split("/") if part]
    return ["/" + "/".join(parts[:count]) for count in range(1, len(parts) + 1)]


def inside_repo(repo: str, paths: tuple[str, ...]) -> str | None:
    """The first of the operator's *paths* that is the repository *repo*, lies inside it
    or goes through it, else ``None``. Judged on real paths, and on where they are on
    their devices (the mount table): a path that reaches the repository through a link
    or a bind mount names a file the workspace wrote, however the operator spelled it.
    Every step of the spelling is judged, not only where the path ends now: a step
    beneath the repository is a folder or link of the workspace's, which it can point
    anywhere at any moment (T204); the repository itself on the way is not (its
    ``..`` is its parent, whatever the workspace does)."""
    real_repo = os.path.realpath(repo)
    mounts = _mounts() if paths else []
    repo_place = _on_device(real_repo, mounts)

    def within(step: str, *, or_at: bool) -> bool:
        # Where the entry itself is (its folder's real path, then its own name), never
        # where it points: a link in the repository is the repository's, wherever it
        # points now; '..' is judged by where it leads.
        folder, name = os.path.split(step)
        real = os.path.realpath(step)
        if name not in (".", ".."):
            real = os.path.join(os.path.realpath(folder), name)
        place = _on_device(real, mounts)
        if real.startswith(real_repo.rstrip("/") + "/") or (or_at and real == real_repo):
            return True
        if place is None or repo_place is None or place[0] != repo_place[0]:
            return False
        return _beneath(place[1], repo_place[1]) and (or_at or place[1] != repo_place[1])

    for path in paths:
        # The path itself, where it leads now, and every step of its spelling.
        if within(os.path.realpath(path), or_at=True) or any(
            within(step, or_at=False) for step in _steps(path)
        ):
            return path
    return None


def check_trust_store(repo: str, store: str) -> None:
    """Refuse a trust store that is the repository's own file (T202): its pins would be
    the workspace approving itself, like an operator folder inside it (T125)."""
    if inside_repo(repo, (store,)) is not None:
        raise SkillUsageError(
            "bad_argument",
            f"the trust store {safe_repr(display_path(store))} is inside the repository (or "
            "reached through it): its pins are the workspace's, and approve nothing",
        )
