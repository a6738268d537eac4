"""The conventional skill roots: where a host looks for skills, in precedence order.

``default_roots`` (the agent harnesses' project roots, then the user's) and
``aide_roots`` (seed 003's preset). Each project root is a ``RootPath``: a base folder
the caller trusts and a relative path the workspace controls, opened beneath the base
with no symlink followed. A user root comes from the operator's environment and is
resolved as given; a leading ``~`` is the user's home, as a shell would read it. Only
``os.path`` string work: nothing here opens a file.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from skillguard._core.errors import SkillUsageError
from skillguard._fs.paths import operator_path
from skillguard._skills.discover import RootPath

__all__ = [
    "AIDE_PROJECT_ROOTS",
    "AIDE_USER_ROOT_ENV",
    "PROJECT_ROOTS",
    "USER_ROOTS_ENV",
    "aide_roots",
    "default_roots",
]

# The conventional project roots of the agent harnesses, in precedence order.
PROJECT_ROOTS = (
    ".agents/skills",
    ".claude/skills",
    ".github/skills",
    ".cursor/skills",
    ".codex/skills",
)
USER_ROOTS_ENV = "SKILLGUARD_USER_SKILLS"


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


def _expand_home(folder: str, user_home: str) -> str:
    if folder == "~" or folder.startswith("~/"):
        return user_home + folder[1:]
    # "~other/skills" names another user's home, which only the OS can look up.
    return os.path.expanduser(folder)
