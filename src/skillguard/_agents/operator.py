"""Where an agent file's trust comes from: the operator's own folders, and the file there.

Rules (threat-model.md T121, T122, T134):

* Where a file is decides its trust. A file beneath one of the folders the host names
  as the operator's own (``operator_agents``: ``~/.claude/agents`` and the like) is
  trusted, like an embedded skill. Every file beneath the repository is the
  workspace's, whichever folder it is in (``src/agents``, ``.claude/agents``, a team
  folder): untrusted. An operator folder inside the repository, or the repository
  itself, is refused (``bad_argument``): it would make the workspace's files the
  operator's. It is judged on real paths and through the mount table (a bind mount
  of the repository or of one of its folders is still the repository), and a folder
  starting with ``~`` is refused rather than read from the working directory.
* An operator folder is searched first, for ``<name>.md``, and wins: a workspace file
  of the same name is never served instead. The first operator folder holding the name
  is the answer, even when that file cannot be read (fail-secure, like resolution).

The gate (``gate``) asks ``_check_dirs`` and ``_operator_agent`` before it reads the
repository.
"""

from __future__ import annotations

import os
import posixpath
import re
from typing import TYPE_CHECKING

from skillguard._agents.parse import parse_agent
from skillguard._agents.resolve import AgentContext
from skillguard._core.errors import MalformedSkillError, SkillInputError, SkillUsageError, safe_repr
from skillguard._fs.containment import SafeRoot, display_path, operator_path
from skillguard._skills.parse import is_valid_name

if TYPE_CHECKING:
    from skillguard._core.limits import Limits
    from skillguard._core.model import Profile
    from skillguard._fs.containment import Resolver

__all__: list[str] = []


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


def _check_dirs(repo: str, dirs: object) -> tuple[str, ...]:
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
    # Judged on real paths, and on where they are on their devices (the mount table):
    # an operator folder that is the repository or lies inside it, through a link or
    # a bind mount, would turn files the workspace wrote into the operator's.
    real_repo = os.path.realpath(repo)
    mounts = _mounts() if folders else []
    repo_place = _on_device(real_repo, mounts)
    for folder in folders:
        real = os.path.realpath(folder)
        place = _on_device(real, mounts)
        if (
            real == real_repo
            or real.startswith(real_repo.rstrip("/") + "/")
            or (
                place is not None
                and repo_place is not None
                and place[0] == repo_place[0]
                and _beneath(place[1], repo_place[1])
            )
        ):
            raise SkillUsageError(
                "bad_argument",
                f"operator agent folder {safe_repr(display_path(folder))} is inside the "
                "repository: its files are the workspace's",
            )
    return folders


def _operator_agent(
    folders: tuple[str, ...], name: str, limits: Limits, profile: Profile, resolver: Resolver
) -> tuple[AgentContext, str, str] | None:
    """The operator's own agent file named *name*, its absolute path and its folder."""
    if not is_valid_name(name):
        return None  # a path names a file of the repository
    file = f"{name}.md"
    for folder in folders:
        # The operator's own path, so looking before opening races with no attacker:
        # a folder that does not exist holds nothing, and anything else is opened.
        if not os.path.lexists(folder):
            continue
        with SafeRoot(folder, resolver=resolver) as root:
            if not root.has_entry(file):
                continue
            try:
                raw = root.read_file(file, cap=limits.max_skill_bytes, oversize=MalformedSkillError)
                definition = parse_agent(raw, limits=limits, profile=profile)
            except SkillInputError as exc:
                raise type(exc)(
                    exc.code,
                    f"operator agent file {safe_repr(file)}: {exc.reason}",
                    line=exc.line,
                    column=exc.column,
                    key=exc.key,
                ) from exc
            shown = display_path(os.path.abspath(folder))
            context = AgentContext(definition=definition, source_path=file, identity=name)
            return context, f"{shown}/{file}", shown
    return None
