"""Finding skills across ordered roots, and progressive disclosure (seed 002).

Rules (threat-model.md T10, T15-T21):

* Every file access goes through ``SafeRoot``; this module only decides what to
  look at and what to report.
* Roots are ordered. The first root (and, within a root, the first folder in sorted
  order) that holds a skill name wins; every later skill of that name is reported as
  shadowed, never merged and never silently replaced.
* A skill is a folder holding ``SKILL.md``; its folder name is its identifier and
  must equal the frontmatter ``name`` (``parse_skill(expected_name=...)``). A skill
  folder is not searched for nested skills. ``.git`` and ``node_modules`` are not
  searched, but one that itself holds ``SKILL.md`` is read like any skill folder (T108).
* Symlinks are refused everywhere, except a symlinked skill folder directly under a
  root whose target resolves inside one of ``trusted_link_targets``: that target
  becomes a ``SafeRoot`` of its own (with no further links), and a folder reached twice
  is kept once, by ``(st_dev, st_ino)``.
* Everything not taken is in ``Discovery.skipped`` with a typed reason.
* Tier 1 is metadata (``SkillMeta``), tier 2 the parsed body (``SkillRoots.load``),
  tier 3 the skill's files (``SkillRoots.resources`` and ``read_resource``), read-only
  and each bounded by ``Limits``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal

import attrs

from skillguard._core.errors import (
    SkillContainmentError,
    SkillError,
    SkillNotFoundError,
    SkillUsageError,
)
from skillguard._core.limits import DEFAULT_LIMITS, Limits
from skillguard._fs.containment import SKILL_FILE, Entry, SafeRoot, Skipped, open_trusted_target
from skillguard._fs.paths import display_path, join_relative, operator_path, split_name
from skillguard._skills.parse import parse_skill

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from types import TracebackType

    from skillguard._core.model import Profile, Skill, SkillWarning

__all__ = [
    "EXCLUDED_DIRS",
    "PROJECT_ROOTS",
    "USER_ROOTS_ENV",
    "Discovery",
    "FolderHit",
    "Resource",
    "Resources",
    "RootPath",
    "Shadowed",
    "SkillMeta",
    "SkillRoots",
    "SkippedEntry",
    "aide_roots",
    "default_roots",
    "discover",
    "find_skill_folders",
    "is_case_variant",
    "list_resources",
    "source_folder",
    "wrong_case_entry",
]

# Folders that hold tooling, never skills, and can be huge; skipping them is documented.
EXCLUDED_DIRS = frozenset({".git", "node_modules"})
# The conventional project roots of the agent harnesses, in precedence order.
PROJECT_ROOTS = (
    ".agents/skills",
    ".claude/skills",
    ".github/skills",
    ".cursor/skills",
    ".codex/skills",
)
USER_ROOTS_ENV = "SKILLGUARD_USER_SKILLS"
_RESOURCE_SLOTS = ("scripts", "references", "assets")


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


def _root_arguments(
    project: object, home: object, environ: object
) -> tuple[str, str, Mapping[str, str]]:
    """The project folder, the user's home and the environment, checked: raises
    ``SkillUsageError`` for a project or home that is not a path, or an environ that
    is not a mapping."""
    if project is not None and not isinstance(project, (str, os.PathLike)):
        raise SkillUsageError("bad_argument", "project must be a path")
    if home is not None and not isinstance(home, (str, os.PathLike)):
        raise SkillUsageError("bad_argument", "home must be a path")
    if environ is not None and not isinstance(environ, Mapping):
        raise SkillUsageError("bad_argument", "environ must be a mapping")
    env: Mapping[str, str] = os.environ if environ is None else environ
    base = operator_path(project, "project") if project is not None else "."
    user_home = os.path.expanduser(operator_path(home, "home") if home is not None else "~")
    return base, user_home, env


def _variable(env: Mapping[str, str], name: str) -> str | None:
    value = env.get(name)
    if value is not None and not isinstance(value, str):
        raise SkillUsageError("bad_argument", f"environ[{name!r}] must be a str")
    return value


def default_roots(
    project: str | os.PathLike[str] | None = None,
    *,
    home: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> list[RootPath]:
    """The conventional skill roots for *project* and the user, in precedence order.

    Project roots first (``.agents/skills``, ``.claude/skills``, ``.github/skills``,
    ``.cursor/skills``, ``.codex/skills`` under *project*, by default the current
    folder), each opened beneath the project folder with no symlink followed; then the
    user's ``~/.agents/skills`` (the user's own, resolved as given). The environment
    variable ``SKILLGUARD_USER_SKILLS`` replaces the user root with its own list of
    folders (separated by ``os.pathsep``); set to the empty string, it removes it. A
    leading ``~`` in a user root is the user's home (*home* when given), as a shell
    would read it: ``SKILLGUARD_USER_SKILLS="~/skills"`` set from a config file that
    no shell expanded must not become a folder named ``~`` below the working folder.
    """
    base, user_home, env = _root_arguments(project, home, environ)
    roots = [RootPath(base, relative) for relative in PROJECT_ROOTS]
    override = _variable(env, USER_ROOTS_ENV)
    if override is not None:
        roots.extend(
            RootPath(_expand_home(folder, user_home))
            for folder in override.split(os.pathsep)
            if folder
        )
    else:
        roots.append(RootPath(os.path.join(user_home, ".agents", "skills")))
    return roots


# Seed 003's root list, in its precedence order; its user root is AIDE_SKILLS_ROOT.
AIDE_PROJECT_ROOTS = (
    "skills/packs",
    ".agents/skills",
    ".github/skills",
    ".claude/skills",
    ".cursor/skills",
    ".codex/skills",
)
AIDE_USER_ROOT_ENV = "AIDE_SKILLS_ROOT"


def aide_roots(
    project: str | os.PathLike[str] | None = None,
    *,
    home: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> list[RootPath]:
    """Seed 003's named preset of roots, in precedence order: ``skills/packs``,
    ``.agents/skills``, ``.github/skills``, ``.claude/skills``, ``.cursor/skills`` and
    ``.codex/skills`` under *project* (each opened beneath it, no symlink followed),
    then the user root: the folder ``AIDE_SKILLS_ROOT`` names (one folder; a leading
    ``~`` is the home folder), else ``~/.agents/skills``. Raises ``SkillUsageError``
    for an argument that is not a path."""
    base, user_home, env = _root_arguments(project, home, environ)
    roots = [RootPath(base, relative) for relative in AIDE_PROJECT_ROOTS]
    override = _variable(env, AIDE_USER_ROOT_ENV)
    if override:
        roots.append(RootPath(_expand_home(override, user_home)))
    else:
        roots.append(RootPath(os.path.join(user_home, ".agents", "skills")))
    return roots


def source_folder(root: str, location: str) -> str:
    """A skill folder's absolute path as text: the source a pin is keyed by.

    *root* is a root's display path (as discovery reports it), *location* the folder's
    path below it. Only ``os.path`` string work: nothing is resolved on disk.
    """
    joined = os.path.join(root, location) if location else root
    return display_path(os.path.abspath(joined))


def _expand_home(folder: str, user_home: str) -> str:
    if folder == "~" or folder.startswith("~/"):
        return user_home + folder[1:]
    # "~other/skills" names another user's home, which only the OS can look up.
    return os.path.expanduser(folder)


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


# -- walking -------------------------------------------------------------------------


def _try_skill(root: SafeRoot, location: str, cap: int) -> FolderHit | None:
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
    hit = _try_skill(root, "", cap)
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
            hit = _try_skill(root, child, cap) if depth + 1 <= max_depth else None
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
        hit = _try_skill(root, child, cap)
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
        hit = _try_skill(linked, "", self.limits.max_skill_bytes)
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
