"""Hostile workspaces: a tree description drawn by Hypothesis, then written safely."""

from __future__ import annotations

import contextlib
import os
import stat
import unicodedata
from pathlib import Path
from typing import Literal

import attrs
from hypothesis import strategies as st

from skillguard._core.errors import SkillUsageError
from skillguard.testing._documents import (
    _CAP,
    _HEAD,
    hostile_skill_files,
    names,
    render,
    skill_documents,
)

__all__ = ["Workspace", "WorkspaceEntry", "entry_names", "hostile_workspaces", "write_workspace"]


EntryKind = Literal["dir", "file", "sparse", "fifo", "symlink", "hardlink"]


@attrs.frozen
class WorkspaceEntry:
    """One entry of a ``Workspace``: *path* is its components beneath the folder.

    *kind* ``"file"`` holds *content*; ``"sparse"`` holds *content* and then is extended
    to *size* bytes without writing them; ``"symlink"`` points at *target* (any text: it
    may name a place outside the folder, itself, or nothing); ``"hardlink"`` is a second
    name of the file at *target* (components joined by ``/``, inside the tree).
    """

    kind: EntryKind
    path: tuple[str, ...]
    content: bytes = b""
    target: str = ""
    size: int = 0


@attrs.frozen
class Workspace:
    """A tree to write with ``write_workspace``, and the skill names it may hold."""

    entries: tuple[WorkspaceEntry, ...]

    @property
    def skill_names(self) -> tuple[str, ...]:
        """The folder names that hold a ``SKILL.md`` entry of any kind."""
        return tuple(
            sorted(
                {e.path[-2] for e in self.entries if len(e.path) >= 2 and e.path[-1] == "SKILL.md"}
            )
        )


# Names a file system accepts but a careless loader, log or terminal does not expect.
_odd_names = st.sampled_from(
    [
        "with space",
        " leading-space",
        "trailing-space ",
        "-dash-first",
        ".hidden",
        "...",
        "new\nline",
        "back\\slash",
        "tab\there",
        "esc\x1b[2Jape",
        "r\u202eevil",
        "zero\u200bwidth",
        "tag\U000e0041",
        "caf\u00e9",
        "\u0441yrillic",
        "NUL-free-but-\x7f",
        "skill.md",
        "SKILL.MD",
        "node_modules",
        ".git",
        "x" * 255,
        "\u00e9" * 127,
    ]
)

# Any single path component: not empty, no "/" or NUL, not "." or "..", at most 255
# bytes in UTF-8 (the usual NAME_MAX).
entry_names: st.SearchStrategy[str] = st.one_of(
    names,
    _odd_names,
    st.text(
        st.characters(codec="utf-8", exclude_characters="/\x00"), min_size=1, max_size=12
    ).filter(lambda n: n not in (".", "..")),
).filter(lambda n: len(n.encode("utf-8")) <= 255)


def _name_key(name: str) -> str:
    """The name as a case-insensitive file system that normalizes Unicode (macOS's
    APFS, Windows' NTFS) compares it: two names with one key are one entry there."""
    return unicodedata.normalize("NFD", name).casefold()


_link_targets = st.one_of(
    st.sampled_from(["/", "/etc", "/etc/passwd", "..", "../..", "../../..", "nowhere", "."]),
    names,
)


@st.composite
def _skill_folder(draw: st.DrawFn, name: str, others: list[str]) -> list[WorkspaceEntry]:
    """A folder *name* whose SKILL.md is a file, a link, a FIFO or huge, with extras."""
    base = (name,)
    md = (*base, "SKILL.md")
    how = draw(st.sampled_from(["file", "file", "file", "symlink", "fifo", "sparse", "hardlink"]))
    entries: list[WorkspaceEntry] = []
    if how == "file" or (how == "hardlink" and not others):
        doc = draw(skill_documents())
        # Mostly the folder's own name and a valid document, so that the loader's later
        # stages (approval, snapshot, activation) see many skills, not only refusals.
        if draw(st.integers(0, 3)):
            doc["fields"]["name"] = name
        valid = render(doc["fields"], doc["body"])
        content = valid if draw(st.integers(0, 2)) else draw(hostile_skill_files())
        entries.append(WorkspaceEntry("file", md, content=content))
    elif how == "symlink":
        target = draw(st.one_of(_link_targets, st.just("SKILL.md"), st.just("/etc/passwd")))
        entries.append(WorkspaceEntry("symlink", md, target=target))
    elif how == "fifo":
        entries.append(WorkspaceEntry("fifo", md))
    elif how == "sparse":
        size = draw(st.sampled_from([_CAP + 1, 64 * 2**20, 2**33]))
        entries.append(WorkspaceEntry("sparse", md, content=_HEAD, size=size))
    else:
        # A second name for a file that exists elsewhere in the tree.
        other = draw(st.sampled_from(others))
        entries.append(WorkspaceEntry("hardlink", md, target=f"{other}/SKILL.md"))
    # Names unique as a case-insensitive file system sees them, so that a tree written
    # on macOS holds every entry that was drawn: skill.md beside SKILL.md is one file
    # there, so no case variant of SKILL.md is drawn beside it.
    extras = draw(
        st.lists(
            entry_names.filter(lambda n: _name_key(n) != _name_key("SKILL.md")),
            max_size=3,
            unique_by=_name_key,
        )
    )
    for extra in extras:
        kind = draw(st.sampled_from(["file", "dir", "symlink", "fifo"]))
        path = (*base, extra)
        if kind == "file":
            entries.append(WorkspaceEntry("file", path, content=draw(st.binary(max_size=64))))
        elif kind == "dir":
            entries.append(WorkspaceEntry("file", (*path, "run.sh"), content=b"#!/bin/sh\n"))
        elif kind == "symlink":
            entries.append(WorkspaceEntry("symlink", path, target=draw(_link_targets)))
        else:
            entries.append(WorkspaceEntry("fifo", path))
    return entries


@st.composite
def hostile_workspaces(draw: st.DrawFn, max_entries: int = 6) -> Workspace:
    """A workspace tree of up to *max_entries* top-level entries, to ``write_workspace``.

    Each top-level entry is a skill folder (its ``SKILL.md`` a valid or hostile file, a
    symlink, a FIFO, a hard link or a huge sparse file, next to odd extras), a symlink
    (outside, to itself, dangling or to a sibling), a FIFO, a stray file, or a deep chain
    of folders with a skill at the bottom.
    """
    # Half the names are valid skill names, so that many skills parse and get served.
    tops = draw(
        st.lists(
            st.one_of(names, entry_names), min_size=1, max_size=max_entries, unique_by=_name_key
        )
    )
    entries: list[WorkspaceEntry] = []
    skills: list[str] = []
    for top in tops:
        kind = draw(st.sampled_from(["skill", "skill", "symlink", "fifo", "file", "deep"]))
        if kind == "skill":
            # Hard links point at skills written before this one, so they always resolve.
            hardlinkable = [s for s in skills if s != top]
            folder = draw(_skill_folder(top, hardlinkable))
            entries.extend(folder)
            if folder[0].kind == "file":
                skills.append(top)
        elif kind == "symlink":
            target = draw(st.one_of(_link_targets, st.just(top), st.sampled_from(tops)))
            entries.append(WorkspaceEntry("symlink", (top,), target=target))
        elif kind == "fifo":
            entries.append(WorkspaceEntry("fifo", (top,)))
        elif kind == "file":
            entries.append(WorkspaceEntry("file", (top,), content=draw(st.binary(max_size=64))))
        else:
            depth = draw(st.integers(2, 12))
            chain = (top, *(f"d{i}" for i in range(depth)))
            leaf = draw(names)
            doc = draw(skill_documents())
            doc["fields"]["name"] = leaf
            body = render(doc["fields"], doc["body"])
            entries.append(WorkspaceEntry("file", (*chain, leaf, "SKILL.md"), content=body))
    return Workspace(tuple(entries))


def _check_component(name: str) -> None:
    if (
        not isinstance(name, str)
        or not name
        or name in (".", "..")
        or "/" in name
        or "\x00" in name
    ):
        raise SkillUsageError("bad_argument", "a workspace entry name must be one path component")


def _make_parents(folder: Path, parts: tuple[str, ...]) -> Path:
    """Create the folders of *parts* beneath *folder*, refusing anything but a real folder."""
    here = folder
    for part in parts:
        here /= part
        with contextlib.suppress(FileExistsError):
            os.mkdir(here)
        # lstat, not stat: a symlink standing where a folder should be is never entered.
        if not stat.S_ISDIR(os.lstat(here).st_mode):
            raise SkillUsageError("bad_argument", "a workspace entry is beneath a non-folder")
    return here


def _create(path: Path) -> int:
    # O_EXCL with O_NOFOLLOW: never write through a link nor over an existing entry.
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    return os.open(path, flags, 0o644)


def write_workspace(tree: Workspace, folder: Path) -> None:
    """Write *tree* beneath *folder* (which must be an existing, real folder).

    Folders and files come first, then hard links, then symlinks, so nothing is ever
    written through a link. Every entry is created only beneath *folder*; a missing
    *folder*, an entry that already exists (two entries of the tree whose names a
    case-insensitive file system takes for one, too), a hard link to no file of the
    tree, or a name that is not one path component, is ``SkillUsageError``.
    """
    if not isinstance(tree, Workspace):
        raise SkillUsageError("bad_argument", "tree must be a Workspace")
    root = Path(folder)
    try:
        is_folder = stat.S_ISDIR(os.lstat(root).st_mode)
    except (FileNotFoundError, NotADirectoryError):
        is_folder = False
    if not is_folder:
        raise SkillUsageError("bad_argument", "folder must be an existing folder, not a link")
    for entry in tree.entries:
        for part in entry.path:
            _check_component(part)
    order = {"dir": 0, "file": 0, "sparse": 0, "fifo": 0, "hardlink": 1, "symlink": 2}
    try:
        for entry in sorted(tree.entries, key=lambda e: order[e.kind]):
            _write_entry(root, entry)
    except FileExistsError:
        # Two entries of one tree, or an entry and what the folder already held (on a
        # case-insensitive file system, skill.md and SKILL.md are one name).
        raise SkillUsageError(
            "bad_argument", "a workspace entry already exists; nothing is overwritten"
        ) from None
    except (FileNotFoundError, NotADirectoryError):
        raise SkillUsageError(
            "bad_argument",
            "a hard link's target is not a file of the tree, or the "
            "folder was removed while the tree was written",
        ) from None


def _write_entry(root: Path, entry: WorkspaceEntry) -> None:
    parent = _make_parents(root, entry.path[:-1])
    path = parent / entry.path[-1]
    if entry.kind == "dir":
        _make_parents(parent, entry.path[-1:])
    elif entry.kind in ("file", "sparse"):
        fd = _create(path)
        try:
            os.write(fd, entry.content)
            if entry.kind == "sparse":
                # Extend without writing: the file reports its size and uses no disk.
                os.ftruncate(fd, entry.size)
        finally:
            os.close(fd)
    elif entry.kind == "fifo":
        os.mkfifo(path, 0o644)
    elif entry.kind == "hardlink":
        source = entry.target.split("/")
        for part in source:
            _check_component(part)
        os.link(root.joinpath(*source), path, follow_symlinks=False)
    else:
        os.symlink(entry.target, path)
