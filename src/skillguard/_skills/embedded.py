"""Embedded skills: the trusted skills a host ships, parsed once and cached.

An embedded skill is part of the host: it needs no approval and always wins over a
workspace skill of the same name (threat-model.md T25). Because it is trusted, a skill
that does not parse, or an entry of its folder that cannot be taken, is the host's own
bug: construction fails with its typed error instead of skipping it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from skillguard._core.errors import SkillNotFoundError, SkillUsageError, input_error
from skillguard._core.limits import DEFAULT_LIMITS, Limits
from skillguard._core.model import Skill
from skillguard._fs.paths import display_path
from skillguard._skills.discover import SkillRoots
from skillguard._skills.parse import parse_skill
from skillguard._skills.walk import _RESOURCE_SLOTS

if TYPE_CHECKING:
    import os
    from collections.abc import Sequence
    from importlib.abc import Traversable

    from skillguard._core.model import Profile

__all__ = ["EmbeddedSkills"]


class EmbeddedSkills:
    """Trusted skills shipped with the host, parsed once and cached.

    ``EmbeddedSkills.from_directory(path)`` reads a folder of skill folders through
    ``SafeRoot``; ``EmbeddedSkills.from_package("pkg", "skills")`` reads package data
    through ``importlib.resources``. A skill that does not parse is the host's own bug:
    construction raises its ``MalformedSkillError``.
    """

    def __init__(
        self,
        skills: Mapping[str, Skill],
        resources: Mapping[str, Mapping[str, bytes]] | None = None,
        *,
        origin: str = "embedded",
        slots: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        if not isinstance(skills, Mapping) or not all(
            isinstance(name, str) and isinstance(skill, Skill) for name, skill in skills.items()
        ):
            raise SkillUsageError("bad_argument", "skills must map names to parsed Skills")
        if resources is not None and not (
            isinstance(resources, Mapping)
            and all(
                isinstance(name, str) and isinstance(files, Mapping)
                for name, files in resources.items()
            )
            and all(
                isinstance(path, str) and isinstance(data, bytes)
                for files in resources.values()
                for path, data in files.items()
            )
        ):
            raise SkillUsageError("bad_argument", "resources must map names to their files")
        if not isinstance(origin, str):
            raise SkillUsageError("bad_argument", "origin must be a str")
        if slots is not None and not hasattr(slots, "items"):
            raise SkillUsageError("bad_argument", "slots must map names to slot folders")
        self._skills = dict(skills)
        self._resources = {name: dict(files) for name, files in (resources or {}).items()}
        self.origin = origin
        # The slot folders of each skill, empty ones included; without the folders'
        # own listing, the slots its files are in.
        self._slots = {
            name: tuple(slot for slot in _RESOURCE_SLOTS if slot in set(folders))
            for name, folders in (slots or {}).items()
        }
        # The manifest digest of each skill's files, computed when first selected: the
        # files never change, and hashing them at every selection would cost as much as
        # the files weigh (15 ms for 5 MB of resources).
        self._digests: dict[str, str] = {}

    @classmethod
    def from_directory(
        cls,
        path: str | os.PathLike[str],
        *,
        limits: Limits | None = None,
        profile: Profile = "strict",
        namespaces: bool = False,
    ) -> EmbeddedSkills:
        limits = limits or DEFAULT_LIMITS
        with SkillRoots([path], limits=limits, profile=profile, namespaces=namespaces) as roots:
            found = roots.discover()
            for skipped in found.skipped:
                raise input_error(skipped.kind, skipped.code, f"embedded skill: {skipped.reason}")
            skills = {meta.name: roots.load(meta.name) for meta in found.skills}
            listings = {name: roots.resources(name) for name in skills}
            resources = {
                name: {item.path: roots.read_resource(name, item.path) for item in listing.files}
                for name, listing in listings.items()
            }
            slots = {name: listing.folders for name, listing in listings.items()}
        return cls(skills, resources, origin=display_path(str(path)), slots=slots)

    @classmethod
    def from_package(
        cls,
        package: str,
        folder: str = "skills",
        *,
        profile: Profile = "strict",
        namespaces: bool = False,
    ) -> EmbeddedSkills:
        if not isinstance(package, str) or not isinstance(folder, str):
            raise SkillUsageError("bad_argument", "package and folder must be str")
        # Imported here: importlib.resources brings pathlib, tempfile and shutil, which
        # only this constructor needs (``import skillguard`` stays cheap).
        import importlib.resources  # noqa: PLC0415

        try:
            base = importlib.resources.files(package).joinpath(folder)
            entries = sorted(base.iterdir(), key=lambda item: item.name)
        except (ImportError, OSError, TypeError, ValueError) as exc:
            raise SkillNotFoundError(
                "missing", "the package or its skills folder cannot be found"
            ) from exc
        skills: dict[str, Skill] = {}
        resources: dict[str, dict[str, bytes]] = {}
        slots: dict[str, tuple[str, ...]] = {}
        for entry in entries:
            skill_file = entry.joinpath("SKILL.md")
            if not entry.is_dir() or not skill_file.is_file():
                continue
            skill = parse_skill(
                skill_file.read_bytes(),
                expected_name=entry.name,
                profile=profile,
                namespaces=namespaces,
            )
            skills[skill.name] = skill
            resources[skill.name] = dict(_package_files(entry, ""))
            slots[skill.name] = tuple(
                slot for slot in _RESOURCE_SLOTS if entry.joinpath(slot).is_dir()
            )
        return cls(skills, resources, origin=f"{package}:{folder}", slots=slots)

    def names(self) -> frozenset[str]:
        return frozenset(self._skills)

    def get(self, name: str) -> Skill | None:
        return self._skills.get(name) if isinstance(name, str) else None

    def resources(self, name: str) -> tuple[str, ...]:
        """The resource paths of the embedded skill *name* (none for an unknown one).
        Raises ``SkillUsageError`` for a name that is not a str."""
        if not isinstance(name, str):
            raise SkillUsageError("bad_argument", "a skill name must be a str")
        return tuple(sorted(self._resources.get(name, {})))

    def slots(self, name: str) -> tuple[str, ...]:
        """The resource slot folders of skill *name*, empty ones included. Raises
        ``SkillUsageError`` when *name* is not a str."""
        if not isinstance(name, str):
            raise SkillUsageError("bad_argument", "a skill name must be a str")
        known = self._slots.get(name)
        if known is not None:
            return known
        folders = {path.split("/", 1)[0] for path in self.resources(name) if "/" in path}
        return tuple(slot for slot in _RESOURCE_SLOTS if slot in folders)

    def read_resource(self, name: str, path: str) -> bytes:
        """One file of the embedded skill *name*. Raises ``SkillUsageError`` for a path
        that is not a str and ``SkillNotFoundError`` (``missing``) for an unknown one."""
        if not isinstance(name, str) or not isinstance(path, str):
            raise SkillUsageError("bad_argument", "a skill name and a resource path must be str")
        data = self._resources.get(name, {}).get(path)
        if data is None:
            raise SkillNotFoundError("missing", "no such resource in the embedded skill", name=name)
        return data


def _package_files(folder: Traversable, prefix: str, depth: int = 0) -> list[tuple[str, bytes]]:
    files: list[tuple[str, bytes]] = []
    if depth > DEFAULT_LIMITS.max_resource_depth:
        return files
    for entry in sorted(folder.iterdir(), key=lambda item: item.name):
        path = f"{prefix}{entry.name}"
        if entry.is_dir():
            files.extend(_package_files(entry, f"{path}/", depth + 1))
        elif path != "SKILL.md" and len(files) < DEFAULT_LIMITS.max_resource_files:
            files.append((path, entry.read_bytes()))
    return files
