"""What ``skillguard validate`` reads: the operator's paths, through ``SafeRoot``.

A PATH is a ``SKILL.md`` file, a skill folder, or a root searched for skill folders
(threat-model.md T10-T13, T15-T20). The PATH itself is the operator's and is
resolved by the OS, except that a PATH named ``SKILL.md`` is always read as a file
(so a symlinked one is refused). Below it everything goes through ``SafeRoot``:
symlinks are reported and never followed, and each skill's whole folder is checked,
since a loader would refuse to serve a symlinked, special or hard-linked resource.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import attrs

from skillguard._core.errors import (
    MalformedSkillError,
    SkillContainmentError,
    SkillError,
    SkillNotFoundError,
)
from skillguard._fs.containment import SKILL_FILE, SafeRoot, Skipped
from skillguard._fs.paths import split_operator_path
from skillguard._skills.walk import (
    FolderHit,
    find_skill_folders,
    is_case_variant,
    list_resources,
    wrong_case_entry,
)

if TYPE_CHECKING:
    from collections.abc import Iterator

    from skillguard._core.limits import Limits

__all__ = [
    "FOLDER_PROBLEMS",
    "MAX_VALIDATE_FOLDERS",
    "Found",
    "ReportKeys",
    "Scan",
    "iter_scan",
    "scan_for_skills",
]

# Entries inside a skill folder that make the skill fail: the loader would refuse
# to serve them. Limits inside a skill folder (too_deep, too_many_entries) are warnings
# instead; too_many_entries where skill folders are searched fails the run.
FOLDER_PROBLEMS = frozenset(
    {
        "symlink",
        "special_file",
        "hardlink",
        "cross_device",
        "bad_name",
        "hidden_character",
        "unreadable",
    }
)
# validate walks whole repositories: far more folders than one discovery root.
MAX_VALIDATE_FOLDERS = 100_000


@attrs.frozen
class Found:
    """A skill folder (or a PATH that should have been one) and what reading it gave.

    ``file`` is the path of the skill file read (``None`` when none was), which is
    where an error's ``line`` and ``column`` point. ``raw`` and ``error`` are never
    both set; ``problems`` (the rest of the folder) may accompany either, and
    ``problem_files`` holds the path of the entry each problem is about, in step.
    """

    path: str
    folder: str | None
    raw: bytes | None = None
    error: SkillError | None = None
    problems: tuple[SkillError, ...] = ()
    notes: tuple[Skipped, ...] = ()
    file: str | None = None
    problem_files: tuple[str, ...] = ()


@attrs.frozen
class Scan:
    found: tuple[Found, ...]
    skipped: tuple[Skipped, ...]


def _tidy(path: str) -> str:
    """*path* without leading ``./``: git and GitHub name files from the repository's
    top, and an annotation for ``./skills/x/SKILL.md`` is not shown on the pull
    request's diff. The current folder itself stays ``.``."""
    while path.startswith("./") and path.rstrip("/") != ".":
        path = path[2:].lstrip("/") or "."
    return path


def _join(base: str, name: str) -> str:
    return _tidy(f"{base.rstrip('/')}/{name}") if name else base


def scan_for_skills(
    path: str, *, max_depth: int, limits: Limits, max_dirs: int = MAX_VALIDATE_FOLDERS
) -> Scan:
    """Find and read every skill under *path*, searching at most *max_dirs* folders
    and reading at most ``limits.max_dir_entries`` entries of each, the first ones by
    name. Never raises for anything on disk."""
    found: list[Found] = []
    skipped: list[Skipped] = []
    for item in iter_scan(path, max_depth=max_depth, limits=limits, max_dirs=max_dirs):
        if isinstance(item, Found):
            found.append(item)
        else:
            skipped.append(item)
    return Scan(tuple(found), tuple(skipped))


def iter_scan(
    path: str, *, max_depth: int, limits: Limits, max_dirs: int = MAX_VALIDATE_FOLDERS
) -> Iterator[Found | Skipped]:
    """``scan_for_skills`` one result at a time, in the same order, so that a caller
    holds one skill's bytes at a time however many skills there are."""
    if split_operator_path(path.rstrip("/") or "/")[1] == SKILL_FILE:
        yield from _flat(_read_given_file(path, limits))
        return
    try:
        root = SafeRoot(path)
    except SkillError as exc:
        if exc.code in ("not_a_directory", "missing"):
            # A file, a FIFO, a device, a dangling link or nothing: reading it through
            # its parent's SafeRoot reports exactly which.
            yield from _flat(_read_given_file(path, limits))
        else:
            yield Found(path, None, error=exc)
        return
    any_found = False
    found: list[Found] = []
    skipped: list[Skipped] = []
    with root:
        for item in find_skill_folders(root, max_depth=max_depth, max_dirs=max_dirs, limits=limits):
            if isinstance(item, FolderHit):
                found.append(_found(root, path, item, limits, skipped))
            else:
                _report(root, path, item, found, skipped)
            any_found = any_found or bool(found)
            yield from found
            yield from skipped
            found.clear()
            skipped.clear()
    if not any_found:
        error = SkillNotFoundError("no_skill", f"no folder holding {SKILL_FILE} was found")
        yield Found(path, None, error=error)


class ReportKeys:
    """What each result of ``iter_scan(path)`` is about, the same whichever PATH reached
    it, so that overlapping PATHs report each thing once (threat-model.md T270).

    Only the operator's PATH (or, for a file, its folder) is resolved, as the OS resolves
    it, once; below it a key is the path the walk wrote, which entered no link. A skill
    folder is keyed as the folder (its ``SKILL.md`` given as a PATH is that folder), with
    the name it was checked under and the code it was refused with, if it was: a link
    found while searching a root (a ``symlink`` error) and the same link given as a PATH
    (the operator's alias, checked under its own name) stay two results. A skipped entry
    is keyed by its path and code.
    """

    def __init__(self, path: str) -> None:
        self._path = path
        try:
            self._parent = split_operator_path(path)[0]
        except OSError:  # the working folder was removed: the parent as written
            self._parent = path.rstrip("/").rpartition("/")[0] or "."
        self._resolved: dict[str, str] = {}

    def _real(self, path: str) -> str:
        if path not in self._resolved:
            try:
                self._resolved[path] = os.path.realpath(path)
            except OSError:  # the working folder was removed: the path stays as given
                self._resolved[path] = path
        return self._resolved[path]

    def _where(self, shown: str) -> str:
        path = self._path
        if shown in (path, _tidy(path)):
            # The PATH itself: its folders resolved, its last name as written.
            head, tail = os.path.split(path.rstrip("/") or "/")
            if tail in ("", ".", ".."):
                return self._real(path)
            return os.path.join(self._real(head or "."), tail)
        for base in (path, self._parent):
            below = _join(base, "x")[:-1]  # how iter_scan writes a path below base
            if shown.startswith(below):
                return os.path.join(self._real(base), shown[len(below) :])
        return shown  # not below the PATH: named as written

    def __call__(self, item: Found | Skipped) -> tuple[str, ...]:
        where = self._where(item.path)
        if isinstance(item, Found):
            head, tail = os.path.split(where)
            if tail == SKILL_FILE or is_case_variant(tail):
                where = head
            refused = item.error.code if item.error is not None else ""
            return ("found", where, item.folder or "", refused)
        return ("skipped", where, item.code)


def _flat(scan: Scan) -> Iterator[Found | Skipped]:
    yield from scan.found
    yield from scan.skipped


def _folder_of(root: SafeRoot, location: str) -> str:
    return location.rsplit("/", 1)[-1] if location else split_operator_path(root.path)[1]


def _found(
    root: SafeRoot, base: str, hit: FolderHit, limits: Limits, skipped: list[Skipped]
) -> Found:
    folder = _folder_of(root, hit.location)
    shown = _join(base, hit.location)
    file = _join(shown, SKILL_FILE)
    # The folder is checked even when its SKILL.md could not be read: a symlinked
    # SKILL.md must not hide a link planted in scripts/ until the next run.
    problems, notes = _check_folder(root, hit.location, limits, skipped, shown)
    return Found(
        shown,
        folder,
        raw=hit.raw,
        error=hit.error,
        problems=tuple(error for error, _ in problems),
        notes=notes,
        file=file,
        problem_files=tuple(entry for _, entry in problems),
    )


def _check_folder(
    root: SafeRoot, location: str, limits: Limits, skipped: list[Skipped], shown: str
) -> tuple[tuple[tuple[SkillError, str], ...], tuple[Skipped, ...]]:
    """The problems of a skill's folder, each with the path of its entry (so that an
    annotation points at a planted link, not at the folder), and its notes."""
    try:
        resources = list_resources(root, location, limits=limits)
    except SkillError as exc:  # the folder changed while it was being checked
        return ((exc, shown),), ()
    # A SKILL.md below a skill folder is a resource of that skill, not a skill of its
    # own: a loader never serves it as one. It is listed as skipped so that its author
    # learns why it is not checked, rather than seeing nothing at all (T94).
    skipped.extend(
        Skipped(
            _join(shown, resource.path[: -len(SKILL_FILE) - 1]),
            "nested_skill",
            f"a {SKILL_FILE} inside the skill folder {shown!r} is not a skill of its own",
            "not_found",
            entry="dir",
        )
        for resource in resources.files
        if resource.path.endswith(f"/{SKILL_FILE}")
    )
    problems: list[tuple[SkillError, str]] = []
    notes: list[Skipped] = []
    for item in resources.skipped:
        if item.path == SKILL_FILE:
            continue  # SKILL.md's own refusal is the skill's error, reported once
        if item.code in FOLDER_PROBLEMS:
            error_type = SkillNotFoundError if item.kind == "not_found" else SkillContainmentError
            problem = error_type(item.code, f"{item.path}: {item.reason}")
            problems.append((problem, _join(shown, item.path)))
        else:
            notes.append(item)
    return tuple(problems), tuple(notes)


_LINK_REASONS = {
    "dir": "a symlinked folder is not followed",
    "other": "a symlink to a file is not followed",
    "none": "a symlink that resolves to nothing (or to itself, a loop) is not followed",
}


def _report(
    root: SafeRoot, base: str, item: Skipped, found: list[Found], skipped: list[Skipped]
) -> None:
    """A folder entry that could have been a skill folder but was not searched."""
    shown = _join(base, item.path)
    name = item.path.rsplit("/", 1)[-1]
    if item.code == "symlink":
        # validate never follows a link, so what it points at does not matter: a link
        # to a folder, to a file, to nothing, or a loop planted in a searched folder
        # fails the run alike (threat-model.md T90). Only the reason says which.
        reason = _LINK_REASONS[root.link_kind(item.path)]
        found.append(Found(shown, name, error=SkillContainmentError("symlink", reason)))
        return
    if item.code == "wrong_case_skill_file":
        # The folder that holds the misnamed file is the skill its author meant.
        folder = _join(base, item.path.rpartition("/")[0])
        error = SkillNotFoundError("wrong_case_skill_file", item.reason)
        found.append(
            Found(folder, _folder_of(root, item.path.rpartition("/")[0]), error=error, file=shown)
        )
        return
    if item.code == "too_many_entries":
        # Part of the tree was not checked, so the run cannot say that it passed: the
        # operator either fixes the folder or raises the limit (T94).
        folder = shown.rstrip("/") if item.path else base
        cut = SkillContainmentError("too_many_entries", item.reason)
        found.append(Found(folder, _folder_of(root, item.path), error=cut))
        return
    if item.code in ("bad_name", "hidden_character", "unreadable") or (
        item.entry == "dir"
        and item.code
        in (
            "not_a_directory",
            "cross_device",
        )
    ):
        error_type = SkillNotFoundError if item.kind == "not_found" else SkillContainmentError
        found.append(Found(shown, name, error=error_type(item.code, item.reason)))
        return
    skipped.append(attrs.evolve(item, path=shown))


def _read_given_file(given: str, limits: Limits) -> Scan:
    parent, filename = split_operator_path(given)
    folder = split_operator_path(parent)[1] or None
    path = _tidy(given)
    if path.endswith("/"):
        not_folder = SkillContainmentError(
            "not_a_directory", "the path ends with '/' but is not a folder"
        )
        return Scan((Found(path, folder, error=not_folder),), ())
    try:
        root = SafeRoot(parent)
    except SkillError as exc:
        return Scan((Found(path, folder, error=exc),), ())
    with root:
        raw: bytes | None = None
        error: SkillError | None = None
        try:
            raw = root.read_file(filename, cap=limits.max_skill_bytes, oversize=MalformedSkillError)
        except SkillNotFoundError as exc:
            if exc.code == "missing":
                # Nothing is there at all: it was no skill file, so it names no skill.
                return Scan((Found(path, None, error=exc),), ())
            return Scan((Found(path, folder, error=exc),), ())
        except SkillError as exc:
            error = exc
        if is_case_variant(filename):
            # A case variant names a skill its author expects and no loader serves: it
            # fails as it does inside a searched folder (T94), whatever it holds.
            wrong_case = wrong_case_entry(path, filename)
            error = SkillNotFoundError(wrong_case.code, wrong_case.reason)
            return Scan((Found(path, folder, error=error, file=path),), ())
        if filename != SKILL_FILE:
            return Scan((Found(path, folder, raw=raw, error=error, file=path),), ())
        # A refused SKILL.md does not stop the check of the rest of its folder.
        skipped: list[Skipped] = []
        problems, notes = _check_folder(root, "", limits, skipped, parent)
    found = Found(
        path,
        folder,
        raw=raw,
        error=error,
        problems=tuple(problem for problem, _ in problems),
        notes=notes,
        file=path,
        problem_files=tuple(entry for _, entry in problems),
    )
    return Scan((found,), tuple(skipped))
