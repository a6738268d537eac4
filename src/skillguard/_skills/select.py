"""Choosing skills for a task (seed 003): a ranking, never a grant.

Rules (threat-model.md T80-T84, T260-T263). The selection modules are sans-IO: this
one reads the registry and renders bodies it is handed, ``_skills.rank`` ranks the names
and descriptions it is handed (the terms, the index, the abstention rule); which skills
are candidates,
and which bodies may be served, is decided by the loader's gates
(``AgentSkills.select``), the same as for ``load``.

1. The registry is the operator's own file, read through the one YAML entry point.
   Unknown keys are refused, and so is anything that is not a list of keywords. It
   never grants anything: a name it holds that the agent cannot load is ignored, with a
   warning.
2. Matching is on terms: text is cut into words (letters and digits), lowercased,
   lightly stemmed. A registry keyword or phrase matches when its words, stop words
   included, occur in the task in order and next to each other, so ``PR`` does not
   match inside "print" and "language server" is a phrase. A registry match always
   outranks a match on a description: the operator's table is trusted, a description
   is not.
3. A skill the registry does not name is ranked by BM25F over its name and description
   (name terms weigh more). Descriptions are untrusted and a workspace author can stuff
   one with every common word: each term's weight saturates (k1), a term counts once
   however often the task repeats it, and a description's length is normalised against
   a fixed reference length rather than the catalog's mean, which a stuffed description
   would raise to excuse itself. Stop words and the verbs every request starts with
   ("explain", "write", "help") carry nothing. A skill whose score stays under the
   threshold, or that shares a single word with the task and none in its name, is not
   selected; nor is one that explains too little of the task, or that the task cannot
   tell apart from the next (``_skills.rank``: the evidence floor and the margin): a
   task unrelated to every skill selects nothing.
4. The optional context (file names, the workspace's signals) adds to the score of a
   skill that the task already matched, at a lower weight; it never selects a skill by
   itself, so the files in front of the agent can tip a choice, not make one.
5. Ranks are deterministic: tier, evidence, then name. ``Selection.explain`` says why
   each skill considered was or was not selected, escaped and bounded.
6. The text is bounded: each block (the activation rendering of one body) is at most
   *per_skill_bytes* of UTF-8, its body cut on a character boundary with a visible
   marker counted inside the cap, and the whole text is at most *total_bytes*. A skill
   that no longer fits is skipped with a reason, never cut to nothing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Final

import attrs

from skillguard._core.errors import MalformedSkillError, SkillUsageError, unknown_key
from skillguard._core.limits import Limits
from skillguard._core.model import FrozenMap
from skillguard._core.strict_yaml import load_document
from skillguard._core.text import terminal_line
from skillguard._fs.operator import read_operator_bytes
from skillguard._fs.paths import operator_path
from skillguard._skills.names import is_valid_name
from skillguard._skills.policy import PolicyError
from skillguard._skills.rank import (
    STOP_WORDS,
    THRESHOLD,
    Considered,
    Match,
    SelectionIndex,
    stem,
    terms,
    words,
)
from skillguard._skills.render import activation_text

if TYPE_CHECKING:
    import os
    from collections.abc import Sequence

    from skillguard._core.model import YamlValue
    from skillguard._core.strict_yaml import KeyLines

__all__ = [
    "CUT_MARKER",
    "STOP_WORDS",
    "THRESHOLD",
    "Considered",
    "Match",
    "SelectedSkill",
    "Selection",
    "SelectionIndex",
    "SelectionRegistry",
    "SkippedSkill",
    "render_bounded",
    "stem",
    "task_digest",
    "terms",
    "words",
]

# The registry is a small table; 1 MiB is far above any real one (the seed's has 12
# rows), and the policy file has the same cap.
REGISTRY_LIMITS: Final = Limits(max_frontmatter_bytes=1024 * 1024, max_scalar_bytes=1024)
_MAX_KEYWORDS = 256  # keywords of one skill

CUT_MARKER: Final = "\n[... cut by skillguard at the byte cap ...]"
# ``Selection.explain``: at most this many characters of one matched term or name.
_EXPLAIN_TERM_CHARS = 64


def task_digest(task: str) -> str:
    """The sha256 of the task text: what the audit log keeps instead of the text."""
    return hashlib.sha256(task.encode("utf-8", "surrogatepass")).hexdigest()


# -- the registry --------------------------------------------------------------------


def _registry_error(reason: str, line: int | None = None) -> PolicyError:
    return PolicyError("bad_registry", reason, line=line)


def _checked_table(table: object) -> Mapping[str, tuple[str, ...]]:
    """The registry's table, read-only, whichever way it was built: skill names to
    keywords that each hold a letter or digit. Raises ``SkillUsageError``."""
    if not isinstance(table, Mapping) or not all(
        is_valid_name(name)
        and isinstance(keywords, tuple)
        and all(isinstance(keyword, str) and words(keyword) for keyword in keywords)
        for name, keywords in table.items()
    ):
        raise SkillUsageError(
            "bad_argument", "keywords must map skill names to tuples of keyword strings"
        )
    return MappingProxyType(dict(table))


@attrs.frozen
class SelectionRegistry:
    """The operator's detection table: skill name -> keywords and phrases.

    Build it with ``from_yaml(raw)`` or ``from_file(path)``; the format is::

        skills:
          aide-arch-protocols:
            keywords: [debug, breakpoint, DAP, "language server"]

    It never grants anything: a name the agent may not load is ignored.
    """

    keywords: Mapping[str, tuple[str, ...]] = attrs.field(repr=False, converter=_checked_table)

    @classmethod
    def from_yaml(cls, raw: bytes) -> SelectionRegistry:
        """Parse a registry file's bytes. Raises :class:`PolicyError` (``bad_registry``)
        for a document that is not plain YAML data within 1 MiB, holds an unknown key,
        a skill name that is not a valid name, or keywords that are not a list of
        non-blank strings; :class:`SkillUsageError` when *raw* is not bytes."""
        if not isinstance(raw, bytes):
            raise SkillUsageError("bad_argument", "raw must be bytes")
        try:
            data, lines = load_document(
                raw, REGISTRY_LIMITS, what="the registry file", allow_empty=True, nested_keys=True
            )
        except MalformedSkillError as exc:
            raise _registry_error(f"{exc.reason} ({exc.code})", exc.line) from exc
        return cls(_parse_registry(data, lines))

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> SelectionRegistry:
        """Read and parse the registry at *path* (the operator's own file): at most
        1 MiB + 1 bytes, from a regular file only. Raises what ``from_yaml`` raises."""
        name = operator_path(path, "the registry path")
        cap = REGISTRY_LIMITS.max_frontmatter_bytes
        try:
            raw = read_operator_bytes(name, limit=cap)
        except OSError as exc:
            raise _registry_error("the registry file cannot be read, or is too large") from exc
        return cls.from_yaml(raw)


def _parse_registry(data: Mapping[str, YamlValue], lines: KeyLines) -> dict[str, tuple[str, ...]]:
    unknown = sorted(set(data) - {"skills"})
    if unknown:
        raise _registry_error(unknown_key(unknown[0], ("skills",)), lines.get(unknown[0]))
    skills = data.get("skills", FrozenMap({}))
    if not isinstance(skills, FrozenMap):
        raise _registry_error("skills must be a mapping of skill names", lines.get("skills"))
    table: dict[str, tuple[str, ...]] = {}
    for name, entry in skills.items():
        if not is_valid_name(name):
            raise _registry_error(f"{name[:64]!r} is not a valid skill name")
        if not isinstance(entry, FrozenMap):
            raise _registry_error(f"the entry of {name!r} must be a mapping")
        extra = sorted(set(entry) - {"keywords"})
        if extra:
            raise _registry_error(
                unknown_key(extra[0], ("keywords",), where=f" in the entry of {name!r}"),
                lines.at(("skills", name, extra[0])),
            )
        keywords = entry.get("keywords", ())
        if (
            not isinstance(keywords, tuple)
            or not all(isinstance(item, str) and words(item) for item in keywords)
            or len(keywords) > _MAX_KEYWORDS
        ):
            raise _registry_error(
                f"the keywords of {name!r} must be a list of at most {_MAX_KEYWORDS} "
                "strings holding a letter or digit"
            )
        table[name] = tuple(str(item) for item in keywords)
    return table


# -- the values a selection returns ---------------------------------------------------


@attrs.frozen
class SelectedSkill:
    """One selected skill: its rank signal and what it costs in the prompt.

    ``digest`` is the manifest digest of the files it was served from: the approved
    snapshot of a workspace skill, or the same digest over an embedded skill's files
    (what ``trust show`` prints for that folder). It is in the ``skill_selected`` audit
    record, so a reviewer can tell exactly what the agent was given.
    """

    name: str
    source: str
    score: float
    matched: tuple[str, ...]
    bytes: int
    truncated: bool
    via: str  # "registry" or "description"
    digest: str = ""

    def as_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "source": self.source,
            "score": self.score,
            "bytes": self.bytes,
            "truncated": self.truncated,
            "matched": list(self.matched),
            "via": self.via,
            "digest": self.digest,
        }


@attrs.frozen
class SkippedSkill:
    """A skill that matched and was not selected, and why (``code``, ``reason``)."""

    name: str
    code: str
    reason: str

    def as_dict(self) -> dict[str, str]:
        return {"name": self.name, "code": self.code, "reason": self.reason}


@attrs.frozen
class Selection:
    """The skills chosen for one task, in rank order, and the prompt text they make.

    ``names`` is ``()`` and ``text`` is ``""`` when nothing fits. ``skipped`` lists the
    skills that matched and were not taken; ``warnings`` the registry names ignored;
    ``considered`` the skills the ranking looked at and why each was or was not
    selected (at most ten, best first; ``explain`` prints them), and ``unlisted`` how
    many more the ranking scored and left out of that list.
    """

    agent: str
    task_sha256: str
    items: tuple[SelectedSkill, ...]
    skipped: tuple[SkippedSkill, ...]
    text: str
    warnings: tuple[str, ...] = ()
    considered: tuple[Considered, ...] = ()
    unlisted: int = 0

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(item.name for item in self.items)

    @property
    def total_bytes(self) -> int:
        return len(self.text.encode("utf-8"))

    @property
    def text_sha256(self) -> str:
        """The sha256 of ``text`` as UTF-8: what the ``skills_selected`` record keeps."""
        return hashlib.sha256(self.text.encode("utf-8", "surrogatepass")).hexdigest()

    def as_dict(self) -> dict[str, object]:
        return {
            "agent": self.agent,
            "task_sha256": self.task_sha256,
            "text_sha256": self.text_sha256,
            "selected": [item.as_dict() for item in self.items],
            "skipped": [item.as_dict() for item in self.skipped],
            "warnings": list(self.warnings),
            "total_bytes": self.total_bytes,
            "text": self.text,
        }

    def explain(self) -> str:
        """Why each considered skill came in or stayed out, one block per skill: its
        score, coverage, naming (the IDF-weighted share of a skill's name terms the task
        holds) and evidence, the rule that decided, and each matched term with its
        weight. Every name and term is escaped for a terminal line and cut
        at 64 characters, and at most ten skills are listed (``considered``), so the
        text is bounded whatever the task or the catalog held."""
        lines = []
        for item in self.considered:
            verdict = "selected" if item.selected else "not selected"
            naming = f", naming {item.naming}" if item.via == "description" else ""
            lines.append(
                f"{_shown(item.name)}: {verdict} ({item.rule}; via {item.via}, score "
                f"{item.score}, coverage {item.coverage}{naming}, evidence {item.evidence})"
            )
            lines.extend(f"  {_shown(term)}: {weight}" for term, weight in item.terms)
        if self.unlisted:
            lines.append(
                f"{self.unlisted} more skills were scored for the task and not listed "
                f"(under {THRESHOLD}, or below the ones listed)"
            )
        if not lines:
            lines.append("no skill shares a term with the task")
        return "\n".join(lines) + "\n"


def _shown(text: str) -> str:
    if len(text) > _EXPLAIN_TERM_CHARS:
        text = text[:_EXPLAIN_TERM_CHARS] + "..."
    return terminal_line(text)


# -- rendering -----------------------------------------------------------------------


def render_bounded(
    name: str, body: str, resources: Sequence[str], cap: int
) -> tuple[str, bool] | None:
    """The activation block of one skill within *cap* UTF-8 bytes: ``(text, cut)``,
    the body cut on a character boundary with ``CUT_MARKER`` when it does not fit;
    ``None`` when even the marker alone does not fit."""
    whole = activation_text(name, body, resources)
    if len(whole.encode("utf-8")) <= cap:
        return whole, False

    def size(keep: int) -> int:
        return len(activation_text(name, body[:keep] + CUT_MARKER, resources).encode("utf-8"))

    if size(0) > cap:
        return None
    # Escaping can make one character several bytes: search on characters, measure
    # the rendered bytes, keep the longest prefix that fits.
    low, high = 0, len(body)
    while low < high:
        middle = (low + high + 1) // 2
        if size(middle) <= cap:
            low = middle
        else:
            high = middle - 1
    return activation_text(name, body[:low] + CUT_MARKER, resources), True
