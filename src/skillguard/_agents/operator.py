"""Where an agent file's trust comes from: the operator's own folders, and the file there.

Rules (threat-model.md T121, T122, T134, T202, T204):

* Where a file is decides its trust. A file beneath one of the folders the host names
  as the operator's own (``operator_agents``: ``~/.claude/agents`` and the like) is
  trusted, like an embedded skill. Every file beneath the repository is the
  workspace's, whichever folder it is in (``src/agents``, ``.claude/agents``, a team
  folder): untrusted. An operator folder inside the repository, or the repository
  itself, is refused (``bad_argument``): it would make the workspace's files the
  operator's. It is judged on real paths, through the mount table (a bind mount of
  the repository or of one of its folders is still the repository) and at every step
  of its spelling, and a folder starting with ``~`` is refused rather than read from
  the working directory (``place``). So is a trust store of the approver's that is
  the repository's (T202): its pins would be the workspace approving itself.
* An operator folder is searched first, for ``<name>.md``, and wins: a workspace file
  of the same name is never served instead. The first operator folder holding the name
  is the answer, even when that file cannot be read (fail-secure, like resolution).

The gate (``gate``) asks ``place.check_operator_folders`` and ``_operator_agent`` before
it reads the repository.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from skillguard._agents.parse import parse_agent
from skillguard._agents.resolve import AgentContext
from skillguard._core.errors import MalformedSkillError, SkillInputError, safe_repr
from skillguard._fs.containment import SafeRoot
from skillguard._fs.paths import display_path
from skillguard._skills.names import is_valid_name

if TYPE_CHECKING:
    from skillguard._core.limits import Limits
    from skillguard._core.model import Profile
    from skillguard._fs.walk import Resolver

__all__: list[str] = []


def _operator_agent(
    folders: tuple[str, ...], name: str, limits: Limits, profile: Profile, resolver: Resolver
) -> tuple[AgentContext, str, str] | None:
    """The operator's own agent file named *name*, its absolute path and its folder."""
    if not is_valid_name(name):
        return None  # a path names a file of the repository
    file = f"{name}.md"
    for folder in folders:
        # The operator's own path, so looking before opening races with no attacker:
        # a folder that does not exist holds nothing, and anything else is opened.
        if not os.path.lexists(folder):
            continue
        with SafeRoot(folder, resolver=resolver) as root:
            if not root.has_entry(file):
                continue
            try:
                raw = root.read_file(file, cap=limits.max_skill_bytes, oversize=MalformedSkillError)
                definition = parse_agent(raw, limits=limits, profile=profile)
            except SkillInputError as exc:
                raise type(exc)(
                    exc.code,
                    f"operator agent file {safe_repr(file)}: {exc.reason}",
                    line=exc.line,
                    column=exc.column,
                    key=exc.key,
                ) from exc
            shown = display_path(os.path.abspath(folder))
            context = AgentContext(definition=definition, source_path=file, identity=name)
            return context, f"{shown}/{file}", shown
    return None
