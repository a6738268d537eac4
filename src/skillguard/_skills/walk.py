"""Walking untrusted folders: a root for its skill folders, a skill folder for its files.

Rules (threat-model.md T10, T15-T21, T94, T108):

* Every file access goes through ``SafeRoot``; this module only decides what to
  look at and what to report.
* Depth-first, in sorted order. A skill is a folder holding ``SKILL.md``; a skill
  folder is not searched for nested skills. ``.git`` and ``node_modules`` are not
  searched, but one that itself holds ``SKILL.md`` is read like any skill folder (T108).
* Symlinks are refused here; following a symlinked skill folder into a trusted target
  is ``discover``'s decision.
* Nothing is dropped: every entry not taken is a ``Skipped`` with a typed reason, and
  a ``SKILL.md`` spelled in another case is said to be one (T94).
* Tier 3 (``list_resources``): the skill's files, read-only, bounded by ``Limits``
  (files, folders, depth, and the entries not taken).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import attrs

from skillguard._core.errors import SkillError, SkillNotFoundError
from skillguard._fs.containment import SKILL_FILE, Skipped
from skillguard._fs.paths import join_relative

if TYPE_CHECKING:
    from collections.abc import Iterator

    from skillguard._core.limits import Limits
    from skillguard._fs.containment import Entry, SafeRoot

__all__ = [
    "EXCLUDED_DIRS",
    "FolderHit",
    "Resource",
    "Resources",
    "find_skill_folders",
    "is_case_variant",
    "list_resources",
    "try_skill",
    "wrong_case_entry",
]

# Folders that hold tooling, never skills, and can be huge; skipping them is documented.
EXCLUDED_DIRS = frozenset({".git", "node_modules"})
_RESOURCE_SLOTS = ("scripts", "references", "assets")


@attrs.frozen
class Resource:
    """A file of a skill (tier 3): its path in the skill folder, slot and size.

    ``slot`` is ``scripts``, ``references``, ``assets`` or ``other``; every slot is
    read-only.
    """

    path: str
    slot: str
    size: int
    access: Literal["read_only"] = "read_only"


@attrs.frozen
class Resources:
    files: tuple[Resource, ...]
    skipped: tuple[Skipped, ...]
    # The resource slot folders (``scripts``, ``references``, ``assets``) the skill
    # folder holds, empty ones included: a tool descriptor has a slot for each.
    folders: tuple[str, ...] = ()


@attrs.frozen
class FolderHit:
    """A folder holding ``SKILL.md``, with the bytes read or the error met."""

    location: str
    raw: bytes | None = None
    error: SkillError | None = None


def try_skill(root: SafeRoot, location: str, cap: int) -> FolderHit | None:
    """Read ``location/SKILL.md``; ``None`` when there is no such entry at all."""
    try:
        raw = root.read_skill_file(location, cap=cap)
    except SkillNotFoundError as exc:
        if exc.code == "missing":
            return None
        return FolderHit(location, error=exc)
    except SkillError as exc:
        return FolderHit(location, error=exc)
    return FolderHit(location, raw=raw)


def find_skill_folders(
    root: SafeRoot, *, max_depth: int, max_dirs: int, limits: Limits
) -> Iterator[FolderHit | Skipped]:
    """Depth-first, in sorted order: every skill folder under *root*, and every entry
    that could have been one but was not searched (symlinks, bad names, folders past
    *max_depth* or *max_dirs*, folders that could not be listed)."""
    cap = limits.max_skill_bytes
    hit = try_skill(root, "", cap)
    if hit is not None:
        yield hit
        return
    folders = 0
    # Each frame: (folder, depth, its entries in name order, still to visit).
    stack: list[tuple[str, int, Iterator[Entry | Skipped]]] = []
    opened = _listing(root, "", limits)
    if isinstance(opened, Skipped):
        yield opened
        return
    stack.append(("", 0, opened))
    while stack:
        location, depth, pending = stack[-1]
        item = next(pending, None)
        if item is None:
            stack.pop()
            continue
        if isinstance(item, Skipped):
            if item.entry in ("dir", "link", "") or item.code == "too_many_entries":
                yield item
            elif is_case_variant(item.path.rsplit("/", 1)[-1]):
                # A FIFO or hard link named skill.md is a case variant all the same: a
                # skill its author expects to be loaded, never passed by (T94).
                yield wrong_case_entry(item.path, item.path.rsplit("/", 1)[-1])
            continue
        child = join_relative(location, item.name)
        if item.kind != "dir":
            # A folder reached here holds no SKILL.md (it would have been a hit), so a
            # case variant such as skill.md is a skill its author expects to be loaded
            # and that this loader never will: say so rather than pass it by (T94).
            if is_case_variant(item.name):
                yield wrong_case_entry(child, item.name)
            continue
        if item.name in EXCLUDED_DIRS:
            # A tooling folder is not searched, but one that holds a SKILL.md of its own
            # is a skill folder that other tools load: it is checked like any other,
            # never passed by in silence (T108).
            hit = try_skill(root, child, cap) if depth + 1 <= max_depth else None
            if hit is not None:
                yield hit
            continue
        if depth + 1 > max_depth:
            yield Skipped(child, "too_deep", f"deeper than {max_depth} levels", entry="dir")
            continue
        folders += 1
        if folders > max_dirs:
            reason = f"more than {max_dirs} folders in this root; the rest were not searched"
            yield Skipped(child, "too_many_entries", reason, entry="dir")
            return
        hit = try_skill(root, child, cap)
        if hit is not None:
            yield hit
            continue
        listed = _listing(root, child, limits)
        if isinstance(listed, Skipped):
            yield listed
        else:
            stack.append((child, depth + 1, listed))


def is_case_variant(name: str) -> bool:
    """Whether *name* is ``SKILL.md`` spelled in another case, such as ``skill.md``."""
    return name != SKILL_FILE and name.casefold() == SKILL_FILE.casefold()


def wrong_case_entry(path: str, name: str) -> Skipped:
    reason = f"{name!r} is not {SKILL_FILE!r}: the file name is case-sensitive"
    return Skipped(path, "wrong_case_skill_file", reason, "not_found", entry="file")


def _listing(root: SafeRoot, location: str, limits: Limits) -> Iterator[Entry | Skipped] | Skipped:
    """The entries of *location* and its skipped items, merged in name order."""
    try:
        listing = root.list_dir(location, max_entries=limits.max_dir_entries)
    except SkillError as exc:
        return Skipped(location, exc.code, exc.reason, exc.kind, entry="dir")
    prefix = f"{location}/" if location else ""
    merged: list[tuple[str, Entry | Skipped]] = [(entry.name, entry) for entry in listing.entries]
    merged.extend((item.path.removeprefix(prefix), item) for item in listing.skipped)
    merged.sort(key=lambda pair: pair[0])
    return iter([item for _, item in merged])


def list_resources(root: SafeRoot, folder: str, *, limits: Limits) -> Resources:
    """Tier 3: the files of the skill in *folder* (``SKILL.md`` itself excluded),
    bounded by ``Limits.max_resource_files`` (files, and folders too: empty folders
    cost a listing each) and ``max_resource_depth``; the entries not taken are bounded
    by ``max_dir_entries``. Whatever a bound stops is a ``too_many_entries`` entry."""
    files: list[Resource] = []
    skipped: list[Skipped] = []
    folders = 0
    slot_folders: list[str] = []
    stack: list[tuple[str, int]] = [("", 0)]
    prefix = f"{folder}/" if folder else ""
    while stack:
        inner, depth = stack.pop()
        listing = root.list_dir(join_relative(folder, inner), max_entries=limits.max_dir_entries)
        skipped.extend(attrs.evolve(s, path=s.path.removeprefix(prefix)) for s in listing.skipped)
        if len(skipped) > limits.max_dir_entries:
            del skipped[limits.max_dir_entries :]
            reason = f"more than {limits.max_dir_entries} entries not taken; the rest not listed"
            skipped.append(Skipped(inner, "too_many_entries", reason, entry="dir"))
            break
        children: list[tuple[str, int]] = []
        for entry in listing.entries:
            path = join_relative(inner, entry.name)
            if entry.kind == "dir":
                if not inner and entry.name in _RESOURCE_SLOTS:
                    slot_folders.append(entry.name)
                if depth + 1 >= limits.max_resource_depth:
                    reason = f"deeper than {limits.max_resource_depth} levels"
                    skipped.append(Skipped(path, "too_deep", reason, entry="dir"))
                elif folders >= limits.max_resource_files:
                    reason = f"more than {limits.max_resource_files} folders in the skill"
                    skipped.append(Skipped(path, "too_many_entries", reason, entry="dir"))
                else:
                    folders += 1
                    children.append((path, depth + 1))
                continue
            if not inner and entry.name == SKILL_FILE:
                continue
            if len(files) >= limits.max_resource_files:
                reason = f"more than {limits.max_resource_files} files in the skill"
                skipped.append(Skipped(path, "too_many_entries", reason, entry="file"))
                stack.clear()
                break
            top = path.split("/", 1)[0]
            slot = top if top in _RESOURCE_SLOTS and "/" in path else "other"
            files.append(Resource(path, slot, entry.size))
        stack.extend(reversed(children))
    files.sort(key=lambda resource: resource.path)
    slots = tuple(slot for slot in _RESOURCE_SLOTS if slot in slot_folders)
    return Resources(tuple(files), tuple(skipped), slots)
