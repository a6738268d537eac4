"""Explicit, documented limits on everything an untrusted skill can make skillguard do.

Each default has a one-line reason. Every limit is inclusive: a value equal to the
limit is accepted, one more is refused (tests check both sides of each).
"""

from __future__ import annotations

import attrs

from skillguard._core.errors import SkillUsageError

__all__ = ["Limits"]


def _positive(instance: object, attribute: attrs.Attribute[int], value: object) -> None:
    del instance
    if type(value) is not int or value < 1:
        raise SkillUsageError(
            "bad_limit", f"Limits.{attribute.name} must be a positive int", key=attribute.name
        )


@attrs.frozen(kw_only=True)
class Limits:
    """Caps applied to every skill that skillguard reads or parses.

    Defaults, and why:

    * ``max_skill_bytes = 256 KiB``: the largest of 18,639 public SKILL.md files
      measured is 160 KB; a file over the cap is refused before it is decoded.
    * ``max_frontmatter_bytes = 32 KiB``: the largest frontmatter seen is 3.5 KB; ten
      times that still bounds the YAML parser's work.
    * ``max_depth = 8``: real frontmatter nests at most three levels (``metadata`` under
      the top mapping); eight leaves room without letting a ``[[[[...`` bomb through.
    * ``max_nodes = 4096``: a 32 KiB frontmatter of one-character flow items holds about
      16,000 nodes; real ones hold a few hundred.
    * ``max_scalar_bytes = 8 KiB``: the longest field the spec allows is the
      1,024-character description (4 KiB of UTF-8 at most); twice that covers ``compat``.

    Discovery and resources (defaults from the Agent Skills client guide where it
    gives one):

    * ``max_discovery_depth = 6``: how many folder levels below a root are searched.
    * ``max_dirs_per_root = 2000``: folders looked at in one root before giving up on
      the rest of it (with a reported reason).
    * ``max_skills = 10000``: skills across all roots of one discovery.
    * ``max_dir_entries = 10000``: entries read from one folder listing; a root of
      2,000 skills fits, a folder of a million files is cut short and reported.
    * ``max_resource_files = 1000``: files listed in one skill folder.
    * ``max_resource_depth = 6``: folder levels inside one skill folder.
    * ``max_resource_bytes = 8 MiB``: one resource file read through tier 3.
    * ``max_snapshot_bytes = 32 MiB``: all the files of one skill folder, read and
      hashed for an approval; one file is held at a time, and 32 MiB is read and
      hashed in well under a second.

    Pending approvals (``prepare`` calls not yet loaded): a pending snapshot keeps its
    body alive, so a flood of ``prepare`` calls is bounded by count and by bytes, with
    a share per agent so that one agent's flood evicts only its own requests.

    * ``max_pending_per_agent = 64``: more than any human works through at once.
    * ``max_pending_bytes_per_agent = 16 MiB``: 64 skills of the largest size seen.
    * ``max_pending_bytes = 128 MiB``: the whole loader; past it the agent holding
      the most bytes loses its oldest request first.
    * ``max_abandoned_approvers = 8``: under ``aload`` a sync approver runs in a thread
      that cannot be stopped; a thread whose every load timed out or was cancelled
      waits for its human until they answer. Eight unanswered prompts mean nobody is
      answering: a further load that needs a new one is refused at once.
    """

    max_skill_bytes: int = attrs.field(default=256 * 1024, validator=_positive)
    max_frontmatter_bytes: int = attrs.field(default=32 * 1024, validator=_positive)
    max_depth: int = attrs.field(default=8, validator=_positive)
    max_nodes: int = attrs.field(default=4096, validator=_positive)
    max_scalar_bytes: int = attrs.field(default=8 * 1024, validator=_positive)
    max_discovery_depth: int = attrs.field(default=6, validator=_positive)
    max_dirs_per_root: int = attrs.field(default=2000, validator=_positive)
    max_skills: int = attrs.field(default=10_000, validator=_positive)
    max_dir_entries: int = attrs.field(default=10_000, validator=_positive)
    max_resource_files: int = attrs.field(default=1000, validator=_positive)
    max_resource_depth: int = attrs.field(default=6, validator=_positive)
    max_resource_bytes: int = attrs.field(default=8 * 1024 * 1024, validator=_positive)
    max_snapshot_bytes: int = attrs.field(default=32 * 1024 * 1024, validator=_positive)
    max_pending_per_agent: int = attrs.field(default=64, validator=_positive)
    max_pending_bytes_per_agent: int = attrs.field(default=16 * 1024 * 1024, validator=_positive)
    max_pending_bytes: int = attrs.field(default=128 * 1024 * 1024, validator=_positive)
    max_abandoned_approvers: int = attrs.field(default=8, validator=_positive)


DEFAULT_LIMITS = Limits()
