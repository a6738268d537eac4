"""Finding skills across ordered roots, and progressive disclosure (seed 002).

Rules (threat-model.md T10, T15-T21):

* Every file access goes through ``SafeRoot``; this module only decides what to
  look at and what to report (``walk`` finds the folders).
* Roots are ordered. The first root (and, within a root, the first folder in sorted
  order) that holds a skill name wins; every later skill of that name is reported as
  shadowed, never merged and never silently replaced.
* A skill is a folder holding ``SKILL.md``; its folder name is its identifier and
  must equal the frontmatter ``name`` (``parse_skill(expected_name=...)``).
* Symlinks are refused everywhere, except a symlinked skill folder directly under a
  root whose target resolves inside one of ``trusted_link_targets``: that target
  becomes a ``SafeRoot`` of its own (with no further links), and a folder reached twice
  is kept once, by ``(st_dev, st_ino)``.
* Everything not taken is in ``Discovery.skipped`` with a typed reason.
* Tier 1 is metadata (``SkillMeta``), tier 2 the parsed body (``SkillRoots.load``),
  tier 3 the skill's files (``SkillRoots.resources`` and ``read_resource``), read-only
  and each bounded by ``Limits``.

The conventional roots (``default_roots``, ``aide_roots``) are in ``roots``.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Literal

import attrs

from skillguard._core.errors import (
    SkillContainmentError,
    SkillError,
    SkillNotFoundError,
    SkillUsageError,
)
from skillguard._core.limits import DEFAULT_LIMITS, Limits
from skillguard._fs.containment import SKILL_FILE, SafeRoot, Skipped, open_trusted_target
from skillguard._fs.paths import display_path, join_relative, operator_path, split_name
from skillguard._skills.parse import parse_skill
from skillguard._skills.walk import FolderHit, find_skill_folders, list_resources, try_skill

if TYPE_CHECKING:
    from collections.abc import Sequence
    from types import TracebackType

    from skillguard._core.model import Profile, Skill, SkillWarning
    from skillguard._skills.walk import Resources

__all__ = [
    "Discovery",
    "RootPath",
    "Shadowed",
    "SkillMeta",
    "SkillRoots",
    "SkippedEntry",
    "discover",
    "source_folder",
]


@attrs.frozen
class RootPath:
    """A skill root named as a *base* folder the caller trusts and a *relative* path
    below it that the workspace controls: the relative part is opened beneath the
    base's descriptor with no symlink followed (a symlinked ``.claude/skills`` in a
    cloned repository is refused, not followed)."""

    base: str
    relative: str = ""

    @property
    def path(self) -> str:
        return os.path.join(self.base, self.relative) if self.relative else self.base

    def __str__(self) -> str:
        return self.path


def _is_paths(value: object, *, allow: tuple[type, ...]) -> bool:
    return isinstance(value, (list, tuple)) and all(
        isinstance(item, allow) and not isinstance(item, bytes) for item in value
    )


def source_folder(root: str, location: str) -> str:
    """A skill folder's absolute path as text: the source a pin is keyed by.

    *root* is a root's display path (as discovery reports it), *location* the folder's
    path below it. Only ``os.path`` string work: nothing is resolved on disk.
    """
    joined = os.path.join(root, location) if location else root
    return display_path(os.path.abspath(joined))


# -- values --------------------------------------------------------------------------


@attrs.frozen
class SkillMeta:
    """Tier 1: what a catalog needs, without the body."""

    name: str
    description: str
    root: str
    location: str
    sha256: str
    size: int
    warnings: tuple[SkillWarning, ...] = ()
    # Claude Code's ``disable-model-invocation``: a catalog shown to a model can leave
    # such a skill out without reading its body.
    disable_model_invocation: bool = False
    # The namespace of a namespaced name (``SkillRoots(namespaces=True)``); ``name``
    # stays the short name, the identifier paths and policies use.
    namespace: str | None = None


@attrs.frozen
class Shadowed:
    """A skill not used because an earlier root (or folder) has the same name."""

    name: str
    root: str
    location: str
    by_root: str
    by_location: str


@attrs.frozen
class SkippedEntry:
    """An entry discovery did not take, and why (``kind`` and ``code`` as on errors)."""

    root: str
    path: str
    kind: str
    code: str
    reason: str


@attrs.frozen
class Discovery:
    skills: tuple[SkillMeta, ...]
    shadowed: tuple[Shadowed, ...]
    skipped: tuple[SkippedEntry, ...]

    def names(self) -> tuple[str, ...]:
        return tuple(skill.name for skill in self.skills)


# -- roots ---------------------------------------------------------------------------


def _root_name(root: SafeRoot) -> str:
    return os.path.basename(os.path.normpath(root.path))


class SkillRoots:
    """Skills from ordered roots, read through ``SafeRoot`` only.

    ``SkillRoots(roots, ...)`` opens each root that exists (a missing one is reported
    by ``discover``). ``discover()`` gives tier 1 for every skill, ``load(name)`` the
    parsed skill (tier 2), ``resources(name)`` and ``read_resource(name, path)`` its
    files (tier 3). Use it as a context manager, or call ``close()``.
    """

    def __init__(
        self,
        roots: Sequence[str | os.PathLike[str] | RootPath],
        *,
        limits: Limits | None = None,
        profile: Profile = "strict",
        trusted_link_targets: Sequence[str | os.PathLike[str]] = (),
        allow_hardlinks: bool = False,
        allow_cross_device: bool = False,
        resolver: Literal["auto", "openat2", "walk"] = "auto",
        namespaces: bool = False,
    ) -> None:
        if not _is_paths(roots, allow=(str, os.PathLike, RootPath)):
            raise SkillUsageError("bad_argument", "roots must be a list of paths")
        if not _is_paths(trusted_link_targets, allow=(str, os.PathLike)):
            raise SkillUsageError("bad_argument", "trusted_link_targets must be a list of paths")
        self.limits = DEFAULT_LIMITS if limits is None else limits
        if not isinstance(self.limits, Limits):
            raise SkillUsageError("bad_argument", "limits must be a skillguard.Limits")
        if not isinstance(profile, str) or profile not in ("strict", "compat"):
            raise SkillUsageError("bad_profile", "profile must be 'strict' or 'compat'")
        self.profile: Profile = profile
        if not isinstance(namespaces, bool):
            raise SkillUsageError("bad_argument", "namespaces must be a bool")
        # Whether a namespaced ``name`` is accepted (``parse_skill(namespaces=...)``).
        self.namespaces = namespaces
        self.trusted = tuple(
            operator_path(target, "a trusted link target") for target in trusted_link_targets
        )
        # Every root is checked before any is opened, so a bad one cannot leave the
        # earlier ones open behind the error.
        for root in roots:
            if not isinstance(root, RootPath):
                operator_path(root, "a root")
        self.roots: list[tuple[str, SafeRoot | None, SkillError | None]] = []
        self._linked: list[SafeRoot] = []
        # name -> (the SafeRoot holding the skill folder, location in it)
        self._index: dict[str, tuple[SafeRoot, str]] = {}
        self._discovered = False
        self._options = {
            "allow_hardlinks": allow_hardlinks,
            "allow_cross_device": allow_cross_device,
            "resolver": resolver,
        }
        for root in roots:
            path = root.path if isinstance(root, RootPath) else operator_path(root, "a root")
            try:
                opened = self._open_root(root)
            except SkillUsageError:
                self.close()
                raise
            except SkillError as exc:
                self.roots.append((path, None, exc))
            else:
                self.roots.append((path, opened, None))

    def _open_root(self, root: str | os.PathLike[str] | RootPath) -> SafeRoot:
        if not isinstance(root, RootPath):
            return SafeRoot(root, **self._options)  # type: ignore[arg-type]
        with SafeRoot(root.base, **self._options) as base:  # type: ignore[arg-type]
            return base.open_dir(root.relative)

    def close(self) -> None:
        for _, root, _ in self.roots:
            if root is not None:
                root.close()
        for linked in self._linked:
            linked.close()

    def __enter__(self) -> SkillRoots:  # noqa: PYI034 - typing.Self needs Python 3.11
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    # Tier 1 ------------------------------------------------------------------------

    def discover(self) -> Discovery:
        """Every skill in every root, the shadowed ones, and every entry skipped."""
        for linked in self._linked:  # the previous discovery's linked folders
            linked.close()
        self._linked = []
        state = _DiscoveryState(self.limits)
        seen: set[tuple[int, int]] = set()
        for path, root, error in self.roots:
            label = display_path(path)
            if root is None:
                assert error is not None  # a root is either open or has its error
                state.skip(label, "", error.kind, error.code, error.reason)
                continue
            for found in find_skill_folders(
                root,
                max_depth=self.limits.max_discovery_depth,
                max_dirs=self.limits.max_dirs_per_root,
                limits=self.limits,
            ):
                if isinstance(found, FolderHit):
                    self._take(state, seen, label, root, found, shown=found.location)
                elif found.code == "symlink" and "/" not in found.path and self.trusted:
                    self._follow_link(state, seen, label, root, found)
                else:
                    state.skip(label, found.path, found.kind, found.code, found.reason)
                if state.full:
                    break
        self._index = state.index
        self._discovered = True
        return Discovery(tuple(state.skills), tuple(state.shadowed), tuple(state.skipped))

    def _take(
        self,
        state: _DiscoveryState,
        seen: set[tuple[int, int]],
        label: str,
        root: SafeRoot,
        hit: FolderHit,
        *,
        shown: str,
    ) -> None:
        """Parse one skill folder's bytes and add it, shadow it or skip it.

        *shown* is the location reported (for a followed link: the link's name, which
        is also the name the skill must carry).
        """
        folder = shown.rsplit("/", 1)[-1] if shown else _root_name(root)
        if hit.error is not None:
            state.skip(label, shown, hit.error.kind, hit.error.code, hit.error.reason)
            return
        assert hit.raw is not None  # a FolderHit holds either bytes or an error
        try:
            identity = root.folder_identity(hit.location)
        except SkillError as exc:  # swapped or removed since it was read
            state.skip(label, shown, exc.kind, exc.code, exc.reason)
            return
        if identity in seen:
            state.skip(label, shown, "containment", "duplicate", "the same folder reached twice")
            return
        seen.add(identity)
        try:
            skill = parse_skill(
                hit.raw,
                expected_name=folder,
                limits=self.limits,
                profile=self.profile,
                namespaces=self.namespaces,
            )
        except SkillError as exc:
            state.skip(label, shown, exc.kind, exc.code, exc.reason)
            return
        state.add(skill, label, shown, root, hit.location)

    def _follow_link(
        self,
        state: _DiscoveryState,
        seen: set[tuple[int, int]],
        label: str,
        root: SafeRoot,
        link: Skipped,
    ) -> None:
        target = root.link_target(link.path)
        try:
            linked = (
                None
                if target is None
                else open_trusted_target(target, self.trusted, **self._options)  # type: ignore[arg-type]
            )
        except SkillError as exc:  # inside a trusted folder, but not a folder to open
            state.skip(label, link.path, exc.kind, exc.code, exc.reason)
            return
        if linked is None:
            reason = "a symlinked skill folder whose target is not in a trusted folder"
            state.skip(label, link.path, "containment", "symlink", reason)
            return
        self._linked.append(linked)
        hit = try_skill(linked, "", self.limits.max_skill_bytes)
        if hit is None:
            state.skip(label, link.path, "not_found", "no_skill", f"no {SKILL_FILE} in the target")
            return
        # The link's own name is the folder name the skill must carry.
        self._take(state, seen, label, linked, hit, shown=link.path)

    # Tier 2 and 3 ------------------------------------------------------------------

    def _locate(self, name: str) -> tuple[SafeRoot, str]:
        if not self._discovered:
            self.discover()
        if not isinstance(name, str):
            raise SkillUsageError("bad_argument", "a skill name must be a str")
        found = self._index.get(name)
        if found is None:
            raise SkillNotFoundError(
                "unknown_skill", "no discovered skill has this name", name=name
            )
        return found

    def locate(self, name: str) -> tuple[SafeRoot, str]:
        """The ``SafeRoot`` holding the skill *name* and its folder's location in it.

        Raises ``SkillUsageError`` (not a str) and ``SkillNotFoundError``
        (``unknown_skill``).
        """
        return self._locate(name)

    def load(self, name: str) -> Skill:
        """Tier 2: the skill *name*, read again and parsed (the body included)."""
        root, location = self._locate(name)
        raw = root.read_skill_file(location, cap=self.limits.max_skill_bytes)
        return parse_skill(
            raw,
            expected_name=name,
            limits=self.limits,
            profile=self.profile,
            namespaces=self.namespaces,
        )

    def resources(self, name: str) -> Resources:
        """Tier 3: the files of the skill *name* (read-only, bounded)."""
        root, location = self._locate(name)
        return list_resources(root, location, limits=self.limits)

    def read_resource(self, name: str, path: str) -> bytes:
        """Tier 3: one file of the skill *name*, by its path in the skill folder."""
        root, location = self._locate(name)
        # Validated on its own first: joined to the location, "/etc/passwd" would
        # look like an empty component instead of the absolute path it is.
        inner = split_name(path)
        if not inner:
            raise SkillContainmentError("bad_name", "a resource path is required")
        return root.read_file(
            join_relative(location, "/".join(inner)), cap=self.limits.max_resource_bytes
        )


class _DiscoveryState:
    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.skills: list[SkillMeta] = []
        self.shadowed: list[Shadowed] = []
        self.skipped: list[SkippedEntry] = []
        self.index: dict[str, tuple[SafeRoot, str]] = {}
        self.by_name: dict[str, SkillMeta] = {}
        self.full = False

    def skip(self, root: str, path: str, kind: str, code: str, reason: str) -> None:
        self.skipped.append(SkippedEntry(root, display_path(path), kind, code, reason))

    def add(self, skill: Skill, root_label: str, shown: str, root: SafeRoot, location: str) -> None:
        winner = self.by_name.get(skill.name)
        if winner is not None:
            self.shadowed.append(
                Shadowed(skill.name, root_label, shown, winner.root, winner.location)
            )
            return
        if len(self.skills) >= self.limits.max_skills:
            reason = f"more than {self.limits.max_skills} skills"
            self.skip(root_label, shown, "containment", "too_many_skills", reason)
            self.full = True
            return
        self.index[skill.name] = (root, location)
        meta = SkillMeta(
            skill.name,
            skill.description,
            root_label,
            shown,
            skill.sha256,
            skill.size,
            skill.warnings,
            skill.disable_model_invocation,
            skill.namespace,
        )
        self.by_name[skill.name] = meta
        self.skills.append(meta)


def discover(
    roots: Sequence[str | os.PathLike[str] | RootPath],
    *,
    limits: Limits | None = None,
    profile: Profile = "strict",
    trusted_link_targets: Sequence[str | os.PathLike[str]] = (),
    namespaces: bool = False,
) -> Discovery:
    """Tier 1 for every skill in *roots* (ordered: the first root with a name wins).

    Returns the skills (metadata only), the shadowed ones and every entry skipped with
    its reason. Raises only ``SkillUsageError`` for bad arguments; everything found on
    disk is a result, never an exception.
    """
    with SkillRoots(
        roots,
        limits=limits,
        profile=profile,
        trusted_link_targets=trusted_link_targets,
        namespaces=namespaces,
    ) as sources:
        return sources.discover()
