"""The approved snapshot of a workspace skill: a manifest of every file, and verified reads.

Rules (threat-model.md T26, T30-T32). An approval covers the whole skill folder, not
only ``SKILL.md``:

* ``take_snapshot`` reads the folder once, within ``Limits``: ``SKILL.md`` is read and
  parsed, every other file is read and hashed, one at a time (never all held at once),
  and the total is capped by ``Limits.max_snapshot_bytes``. The result is the parsed
  skill and a ``Manifest``: each file's relative path, size and sha256, one digest over
  all of them, and every entry that was not taken with its reason.
* Only the parsed skill and the manifest are kept, so a pending or approved snapshot
  costs the body and a few hundred bytes a file, whatever the folder holds. Files are
  verified when they are read: ``read_verified`` serves a path only if the manifest
  lists it, reads at most its recorded size plus one byte through ``SafeRoot``, and
  serves the bytes only if their sha256 is the recorded one. A file changed, removed,
  grown, or swapped for a link after approval is refused with the containment code
  ``changed_after_approval``; a file created after approval does not exist.
* The digest is sha256 over a versioned, length-unambiguous JSON list of
  ``[path, size, sha256]`` in path order, so no two manifests share a digest unless
  they list the same files with the same bytes.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections import Counter
from typing import TYPE_CHECKING

import attrs

from skillguard._core.errors import (
    SkillContainmentError,
    SkillError,
    SkillNotFoundError,
    SkillUsageError,
)
from skillguard._fs.containment import SKILL_FILE, Skipped
from skillguard._fs.paths import join_relative, split_name
from skillguard._skills.parse import parse_skill
from skillguard._skills.walk import list_resources

if TYPE_CHECKING:
    from skillguard._core.limits import Limits
    from skillguard._core.model import Profile, Skill
    from skillguard._fs.containment import SafeRoot

__all__ = [
    "MANIFEST_VERSION",
    "SKIPPED_KEPT",
    "Manifest",
    "ManifestFile",
    "Snapshot",
    "manifest_digest",
    "read_verified",
    "take_snapshot",
]

MANIFEST_VERSION = "skillguard-manifest-1"
# What one manifest entry costs in memory beyond its path (attrs instance, two strs, int).
_ENTRY_OVERHEAD = 256


@attrs.frozen
class ManifestFile:
    """One file of an approved skill: its path in the skill folder, size and sha256."""

    path: str
    size: int
    sha256: str


def manifest_digest(files: tuple[ManifestFile, ...]) -> str:
    """The one digest an approval is bound to (see the module docstring)."""
    listing = [MANIFEST_VERSION, *([f.path, f.size, f.sha256] for f in files)]
    canonical = json.dumps(listing, ensure_ascii=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("ascii")).hexdigest()


SKIPPED_KEPT = 20  # entries not taken that a manifest names one by one; the rest are counted


@attrs.frozen
class Manifest:
    """Every file of a skill folder as read for approval, and what was not taken: the
    first ``SKIPPED_KEPT`` such entries by name, and all of them counted by code (a
    folder of 20,000 links costs a few counters, not 20,000 records)."""

    files: tuple[ManifestFile, ...]
    skipped: tuple[Skipped, ...] = ()
    skipped_counts: tuple[tuple[str, int], ...] = ()
    digest: str = attrs.field(init=False)
    total_bytes: int = attrs.field(init=False)
    _by_path: dict[str, ManifestFile] = attrs.field(init=False, repr=False, eq=False)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "digest", manifest_digest(self.files))
        object.__setattr__(self, "total_bytes", sum(f.size for f in self.files))
        object.__setattr__(self, "_by_path", {f.path: f for f in self.files})

    @property
    def skipped_total(self) -> int:
        return sum(count for _, count in self.skipped_counts)

    def get(self, path: str) -> ManifestFile | None:
        return self._by_path.get(path)

    def paths(self, *, include_skill_file: bool = False) -> tuple[str, ...]:
        return tuple(f.path for f in self.files if include_skill_file or f.path != SKILL_FILE)


@attrs.frozen
class Snapshot:
    """A skill as read once for approval: the parsed ``SKILL.md`` and the manifest."""

    skill: Skill
    manifest: Manifest
    folder: str  # the skill folder's display path, as the approval source
    text: str = ""  # the whole SKILL.md as decoded text, for the approver to read
    # The resource slot folders it held, empty ones included (for tool descriptors;
    # not in the digest: an empty folder holds nothing to approve).
    slots: tuple[str, ...] = ()

    @property
    def digest(self) -> str:
        return self.manifest.digest

    def memory_cost(self) -> int:
        """A close upper bound on the bytes this snapshot keeps alive."""
        skill = self.skill
        manifest = self.manifest
        return (
            sys.getsizeof(skill.body)
            + sys.getsizeof(skill.description)
            + sys.getsizeof(self.text)
            + sum(_ENTRY_OVERHEAD + len(f.path) for f in manifest.files)
            + sum(_ENTRY_OVERHEAD + len(e.path) + len(e.reason) for e in manifest.skipped)
        )


def take_snapshot(
    root: SafeRoot,
    location: str,
    *,
    name: str,
    folder: str,
    limits: Limits,
    profile: Profile,
    namespaces: bool = False,
) -> Snapshot:
    """Read the skill folder *location* beneath *root* once and build its snapshot.

    Raises ``MalformedSkillError`` (``SKILL.md`` does not parse), the containment and
    not-found errors of ``SafeRoot`` for ``SKILL.md`` or the folder, and
    ``SkillContainmentError`` (``too_large``) when the files total more than
    ``Limits.max_snapshot_bytes``. A resource that cannot be read is not served and is
    listed in ``Manifest.skipped`` with its reason, so the approver sees it.
    """
    raw = root.read_skill_file(location, cap=limits.max_skill_bytes)
    skill = parse_skill(
        raw, expected_name=name, limits=limits, profile=profile, namespaces=namespaces
    )
    files = [ManifestFile(SKILL_FILE, len(raw), skill.sha256)]
    total = len(raw)
    listing = list_resources(root, location, limits=limits)
    skipped: list[Skipped] = list(listing.skipped)
    for resource in listing.files:
        try:
            data = root.read_file(
                join_relative(location, resource.path), cap=limits.max_resource_bytes
            )
        except (SkillContainmentError, SkillNotFoundError) as exc:
            # Changed between the listing and the read: the human sees why it is absent.
            skipped.append(Skipped(resource.path, exc.code, exc.reason, exc.kind, entry="file"))
            continue
        total += len(data)
        if total > limits.max_snapshot_bytes:
            raise SkillContainmentError(
                "too_large",
                f"the skill's files total more than {limits.max_snapshot_bytes} bytes",
                name=name,
            )
        files.append(ManifestFile(resource.path, len(data), hashlib.sha256(data).hexdigest()))
    files.sort(key=lambda entry: entry.path)
    counts = Counter(entry.code for entry in skipped)
    manifest = Manifest(tuple(files), tuple(skipped[:SKIPPED_KEPT]), tuple(sorted(counts.items())))
    # parse_skill accepted the bytes, so they decode (the BOM, if any, shown as such).
    return Snapshot(skill, manifest, folder, raw.decode("utf-8"), listing.folders)


def read_verified(root: SafeRoot, location: str, snapshot: Snapshot, path: str) -> bytes:
    """The bytes of *path* in the approved snapshot, read now and verified.

    Raises ``SkillNotFoundError`` (``missing``) for a path the manifest does not list,
    ``SkillContainmentError`` (``path_escape``, ``bad_name``) for a path that is not a
    plain relative path, and ``SkillContainmentError`` (``changed_after_approval``) when
    the file on disk is no longer the approved one.
    """
    parts = split_name(path)  # SkillUsageError for a non-str, containment for escapes
    entry = snapshot.manifest.get("/".join(parts))
    if entry is None:
        raise SkillNotFoundError(
            "missing", "the approved skill has no such file", name=snapshot.skill.name
        )
    try:
        data = root.read_file(join_relative(location, entry.path), cap=entry.size)
    except SkillUsageError:
        raise
    except SkillError as exc:
        raise _changed(snapshot, f"{exc.code}: {exc.reason}") from exc
    if len(data) != entry.size or hashlib.sha256(data).hexdigest() != entry.sha256:
        raise _changed(snapshot, "its bytes differ from the approved ones")
    return data


def _changed(snapshot: Snapshot, why: str) -> SkillContainmentError:
    return SkillContainmentError(
        "changed_after_approval",
        f"a file of the skill changed after approval ({why})",
        name=snapshot.skill.name,
    )
