"""Hypothesis strategies for fuzzing a host application that embeds skillguard.

Install the extra (``pip install 'skillguard[testing]'``, which brings Hypothesis), then
draw from these strategies in your own tests. skillguard's own test suite and fuzz
harnesses use exactly these generators, so what you fuzz with is what we fuzz with.

Documents (``bytes`` or data to render):

- ``skill_documents()``: a valid skill as ``{"fields": ..., "body": ...}``;
  ``render(fields, body)`` turns it into ``SKILL.md`` bytes that ``parse_skill`` accepts.
- ``valid_skill_files()``: the same, already rendered.
- ``mutated_documents()``: a valid document with hostile fragments spliced in (anchors,
  aliases, tags, merge keys, directives, deep flow nesting, duplicate keys, hidden and
  control characters, stray fences).
- ``near_yaml``: frontmatter built from the characters that make YAML's grammar work.
- ``hostile_skill_files()``: any of the above, plus raw bytes, broken encodings, missing
  or doubled fences and documents at and over the size cap.

Workspaces (a tree description, then written):

- ``hostile_workspaces()`` draws a ``Workspace``: skill folders with valid or hostile
  ``SKILL.md`` files, symlinks (to outside the tree, to their own folder, to nothing, to a
  sibling), FIFOs, hard links, deep trees, huge sparse files and names with spaces,
  Unicode, hidden characters and control characters.
- ``write_workspace(tree, folder)`` writes one beneath *folder*. It creates entries only
  beneath *folder*: it never follows a symlink while writing (links are made last and
  never written through), refuses a name that could leave the folder, and refuses an
  existing entry rather than overwrite it. A link may *point* outside the folder, which is
  the point: a loader must not follow it.

Misuse: ``hostile_values`` are wrong-typed and booby-trapped arguments for any public
function (objects whose ``__eq__``, ``__hash__``, ``__fspath__`` and ``__str__`` raise).
Some are relative paths that a function under test may create, so run such a test from a
scratch folder (``monkeypatch.chdir(tmp_path)``).

This module is not imported by ``import skillguard``; only importing it needs Hypothesis.
"""

from __future__ import annotations

try:
    import hypothesis  # noqa: F401 - the one dependency this package needs
except ImportError as error:  # pragma: no cover - the test environment has Hypothesis
    raise ImportError(
        "skillguard.testing needs Hypothesis: pip install 'skillguard[testing]'"
    ) from error

from skillguard.testing._documents import (
    YAML_ALPHABET,
    hostile_fragments,
    hostile_skill_files,
    meta_keys,
    mutated_documents,
    names,
    near_yaml,
    non_blank_text,
    quote,
    render,
    skill_documents,
    tool_names,
    tool_rules,
    valid_skill_files,
)
from skillguard.testing._values import Booby, BytesPath, hostile_values
from skillguard.testing._workspaces import (
    Workspace,
    WorkspaceEntry,
    entry_names,
    hostile_workspaces,
    write_workspace,
)

__all__ = [
    "YAML_ALPHABET",
    "Booby",
    "BytesPath",
    "Workspace",
    "WorkspaceEntry",
    "entry_names",
    "hostile_fragments",
    "hostile_skill_files",
    "hostile_values",
    "hostile_workspaces",
    "meta_keys",
    "mutated_documents",
    "names",
    "near_yaml",
    "non_blank_text",
    "quote",
    "render",
    "skill_documents",
    "tool_names",
    "tool_rules",
    "valid_skill_files",
    "write_workspace",
]
