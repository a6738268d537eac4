"""``read-properties`` and ``to-prompt``: the two commands of the reference tool
(skills-ref), for skills the operator names.

Each PATH is a skill folder or its ``SKILL.md``, read through ``_scan`` (so through
``SafeRoot``: a symlinked ``SKILL.md`` is refused) and checked with every rule
``validate`` applies, folder included. Nothing is printed for a run in which any skill
failed: its errors go to stderr and the exit status is 1, so a script can never take a
partial listing for a whole one.

- ``read-properties PATH``: one JSON object (ASCII only) with every frontmatter field,
  typed as skillguard reads it: every scalar a string (``version: 1.0`` is ``"1.0"``),
  lists and mappings as JSON arrays and objects.
- ``to-prompt PATH...``: the ``<available_skills>`` block of ``_render.catalog_xml``,
  escaped like the catalog (threat-model.md T13, T29), with no policy: it is the
  operator's own listing of skills the operator named, each name once.

Both take ``--namespaces`` as ``validate`` does: a namespaced ``name`` is accepted, and
a skill is listed by its short name, the identifier every catalog shows.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillguard._cli.scan import Found, scan_for_skills
from skillguard._core.limits import DEFAULT_LIMITS
from skillguard._core.model import FrozenMap
from skillguard._core.text import terminal_line, terminal_safe
from skillguard._fs.containment import SKILL_FILE
from skillguard._fs.paths import display_path, split_operator_path
from skillguard._skills.document import frontmatter_fields
from skillguard._skills.parse import check_skill
from skillguard._skills.render import catalog_xml

if TYPE_CHECKING:
    import argparse
    from typing import TextIO

    from skillguard._core.model import Profile, Skill, YamlValue

__all__ = ["run_read_properties", "run_to_prompt"]

EXIT_OK = 0
EXIT_FAILED = 1


def _plain(value: YamlValue) -> Any:  # noqa: ANN401 - JSON data
    if isinstance(value, FrozenMap):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, tuple):
        return [_plain(item) for item in value]
    return value


def _one_skill(
    path: str, profile: Profile, err: TextIO, *, namespaces: bool
) -> tuple[Skill, Found] | None:
    """The skill at *path* (a skill folder or its SKILL.md), or ``None`` after its
    errors were written to *err*. *namespaces* accepts ``namespace/short-name``, as
    ``validate --namespaces`` does."""
    scan = scan_for_skills(path, max_depth=0, limits=DEFAULT_LIMITS)
    found = scan.found[0]
    errors = [found.error] if found.error is not None else []
    skill = None
    if found.raw is not None:
        checked = check_skill(
            found.raw, expected_name=found.folder, profile=profile, namespaces=namespaces
        )
        errors.extend(checked.errors)
        skill = checked.skill
    errors.extend(found.problems)
    if len(scan.found) == 1:
        # Why PATH is no skill (a symlink loop, nothing there) comes before the verdict.
        for error in errors:
            assert error is not None
            where = "" if error.line is None else f"line {error.line}: "
            err.write(
                f"skillguard: {terminal_line(display_path(found.path))}: "
                f"{error.kind}/{error.code}: {where}{terminal_line(error.reason)}\n"
            )
    # A file by another name (notes.md, a case variant skill.md) is no skill that any
    # loader serves, so it is neither listed nor read as one.
    named = found.file is None or split_operator_path(found.file)[1] == SKILL_FILE
    if len(scan.found) != 1 or found.folder is None or not named:
        err.write(f"skillguard: {terminal_line(display_path(path))}: not one skill folder\n")
        return None
    if errors or skill is None:
        return None
    return skill, found


def run_read_properties(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    read = _one_skill(args.path, args.profile, err, namespaces=args.namespaces)
    if read is None:
        return EXIT_FAILED
    _, found = read
    assert found.raw is not None  # a checked skill was read
    fields = frontmatter_fields(found.raw)
    out.write(json.dumps({k: _plain(v) for k, v in fields.items()}, indent=2, ensure_ascii=True))
    out.write("\n")
    return EXIT_OK


def run_to_prompt(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    entries = []
    failed = False
    first_path: dict[str, str] = {}
    for path in args.paths:
        read = _one_skill(path, args.profile, err, namespaces=args.namespaces)
        if read is None:
            failed = True
            continue
        skill, found = read
        assert found.file is not None  # a checked skill was read from its file
        # A model picks a skill by name: two entries of one name (the same folder named
        # twice, or two folders) would leave it to guess which one is meant.
        if skill.name in first_path:
            err.write(
                f"skillguard: {terminal_line(display_path(path))}: a second skill named "
                f"{skill.name!r} (the first is {terminal_line(first_path[skill.name])})\n"
            )
            failed = True
            continue
        first_path[skill.name] = display_path(path)
        location = display_path(str(Path(found.file).absolute()))
        entries.append((skill.name, skill.description, location, "operator"))
    if failed:
        return EXIT_FAILED
    out.write(terminal_safe(catalog_xml(entries)))
    return EXIT_OK
