"""Choosing skills for a task (seed 003): a ranking, never a grant.

Rules (threat-model.md T80-T84). The selection module is sans-IO: it ranks names and
descriptions it is handed, and renders bodies it is handed; which skills are candidates,
and which bodies may be served, is decided by the loader's gates
(``AgentSkills.select``), the same as for ``load``.

1. The registry is the operator's own file, read through the one YAML entry point.
   Unknown keys are refused, and so is anything that is not a list of keywords. It
   never grants anything: a name it holds that the agent cannot load is ignored, with a
   warning.
2. Matching is on terms: text is cut into words (letters and digits), lowercased,
   lightly stemmed. A registry keyword or phrase matches when its terms occur in the
   task in order and next to each other, so ``PR`` does not match inside "print" and
   "language server" is a phrase. A registry match always outranks a match on a
   description: the operator's table is trusted, a description is not.
3. A skill the registry does not name is ranked by BM25F over its name and description
   (name terms weigh more). Descriptions are untrusted and a workspace author can stuff
   one with every common word: each term's weight saturates (k1), a term counts once
   however often the task repeats it, and a description's length is normalised against
   a fixed reference length rather than the catalog's mean, which a stuffed description
   would raise to excuse itself. Stop words and the verbs every request starts with
   ("explain", "write", "help") carry nothing. A skill whose score stays under the
   threshold, or that shares a single word with the task and none in its name, is not
   selected: a task unrelated to every skill selects nothing.
4. The optional context (file names, the workspace's signals) adds to the score of a
   skill that the task already matched, at a lower weight; it never selects a skill by
   itself, so the files in front of the agent can tip a choice, not make one.
5. Ranks are deterministic: score, then name.
6. The text is bounded: each block (the activation rendering of one body) is at most
   *per_skill_bytes* of UTF-8, its body cut on a character boundary with a visible
   marker counted inside the cap, and the whole text is at most *total_bytes*. A skill
   that no longer fits is skipped with a reason, never cut to nothing.
"""

from __future__ import annotations

import functools
import hashlib
import math
import re
from collections import Counter
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Final

import attrs

from skillguard._core.errors import MalformedSkillError, SkillUsageError, unknown_key
from skillguard._core.limits import Limits
from skillguard._core.model import FrozenMap
from skillguard._core.strict_yaml import load_document
from skillguard._fs.operator import read_operator_bytes
from skillguard._fs.paths import operator_path
from skillguard._skills.names import is_valid_name
from skillguard._skills.policy import PolicyError
from skillguard._skills.render import activation_text

if TYPE_CHECKING:
    import os
    from collections.abc import Iterable, Sequence

    from skillguard._core.model import YamlValue
    from skillguard._core.strict_yaml import KeyLines

__all__ = [
    "SelectedSkill",
    "Selection",
    "SelectionIndex",
    "SelectionRegistry",
    "SkippedSkill",
    "render_bounded",
    "task_digest",
    "terms",
]

# The registry is a small table; 1 MiB is far above any real one (the seed's has 12
# rows), and the policy file has the same cap.
REGISTRY_LIMITS: Final = Limits(max_frontmatter_bytes=1024 * 1024, max_scalar_bytes=1024)
_MAX_KEYWORDS = 256  # keywords of one skill
_MAX_TASK_CHARS = 100_000  # a task is a request, not a document: the rest is not read
_MAX_CONTEXT_CHARS = 100_000

# BM25F parameters. k1 = 1.2 is the textbook value. A description is normalised almost
# fully by its length (b = 0.9, against the textbook 0.75): a long description earns
# little per word, which is what stuffing needs most. The name is short and is the
# skill's identity, so its terms weigh three times as much.
_K1: Final = 1.2
_B_NAME: Final = 0.5
_B_DESCRIPTION: Final = 0.9
_W_NAME: Final = 3.0
_W_DESCRIPTION: Final = 1.0
# Reference lengths (in terms, stop words out): the typical name has 2-3 terms and the
# typical description of a public skill about 25. Normalising against these fixed values
# instead of the catalog's mean keeps a stuffed description from raising the mean.
_REF_NAME: Final = 2.5
_REF_DESCRIPTION: Final = 25.0
# As if every catalog sat among this many more skills that lack the term: without it, a
# catalog of three skills gives every term a near-zero idf and the threshold means
# something different at every size.
_PRIOR_DOCS: Final = 30
# A context term counts this much of a task term.
_CONTEXT_WEIGHT: Final = 0.3
# The lowest lexical score selected. One distinctive term in a name clears it, one in a
# description of typical length clears it; two terms deep inside a stuffed description
# do not.
THRESHOLD: Final = 3.0
# A description matched by one word of the task ("explain the color blue" against a
# brand skill that mentions colours) is a coincidence more often than a fit: without a
# name term, a skill needs this many distinct task terms.
_MIN_TERMS: Final = 2
# A registry keyword's weight, and how much a longer phrase adds: "language server" is
# a stronger signal than "server".
_KEYWORD_WEIGHT: Final = 1.0
_PHRASE_BONUS: Final = 0.5

CUT_MARKER: Final = "\n[... cut by skillguard at the byte cap ...]"

_WORD = re.compile(r"[^\W_]+")

# Function words, and the verbs and nouns nearly every request to an agent holds; none
# of them says which skill a task needs.
_STOP_TEXT = """
    a about above after again all also am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for
    from further had has have having he her here hers him his how i if in into is it its
    itself just me more most my no nor not now of off on once only or other our ours out
    over own same she should so some such than that the their them then there these they
    this those through to too under until up very was we were what when where which while
    who whom why will with would you your yours
    please want need needs like let lets get gets make makes made use uses using used
    help helps explain explains write writes create creates show tell give do done thing
    things something anything way ways new one two can't cannot i'm it's
    skill skills task tasks user users agent agents when whenever
"""
STOP_WORDS: Final = frozenset(_STOP_TEXT.split())


@functools.lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """A light, deterministic suffix stripper for English: plurals, -ing, -ed, -ly and
    a final -e, so that "debugging", "debugged" and "debug" meet, and "release",
    "releases" and "releasing" do. Short words are left alone."""
    if not word.isascii() or len(word) < 3:
        return word
    if len(word) == 3:
        # "PRs", "CIs": a plural of a short initialism; "bus" and "gas" keep theirs.
        return word[:-1] if word[-1] == "s" and word[-2] not in "aeiousy" else word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith(("sses", "xes", "ches", "shes", "zes")):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "lsz":
                word = word[:-1]
            break
    if word.endswith("ly") and len(word) > 5:
        word = word[:-2]
    if word.endswith("e") and len(word) > 4:
        word = word[:-1]
    return word


def words(text: str) -> list[str]:
    """The lowercased words of *text*, stemmed, stop words kept (phrases need them)."""
    return [stem(word) for word in _WORD.findall(text.lower())]


def terms(text: str) -> list[str]:
    """The terms of *text* that carry meaning: words, stemmed, without stop words."""
    return [
        stem(word)
        for word in _WORD.findall(text.lower())
        if word not in STOP_WORDS and len(word) > 1
    ]


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
    skills that matched and were not taken; ``warnings`` the registry names ignored.
    """

    agent: str
    task_sha256: str
    items: tuple[SelectedSkill, ...]
    skipped: tuple[SkippedSkill, ...]
    text: str
    warnings: tuple[str, ...] = ()

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


# -- ranking -------------------------------------------------------------------------


@attrs.frozen
class Match:
    """One candidate's rank: ``tier`` 1 for a registry match, 0 for a description."""

    name: str
    tier: int
    score: float
    matched: tuple[str, ...]


def _phrase_in(phrase: Sequence[str], text: Sequence[str], starts: Mapping[str, list[int]]) -> bool:
    size = len(phrase)
    return any(
        tuple(text[start : start + size]) == tuple(phrase) for start in starts.get(phrase[0], ())
    )


def _positions(text: Sequence[str]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for index, word in enumerate(text):
        out.setdefault(word, []).append(index)
    return out


class SelectionIndex:
    """The ranking structure for one catalog, built once and queried per task.

    *candidates* is ``(name, description)`` for each skill an agent may select;
    *registry* the operator's keywords for some of them (those skills are matched by
    keywords only). Building is linear in the catalog; a query touches only the
    postings of the task's terms.
    """

    def __init__(
        self,
        candidates: Iterable[tuple[str, str]],
        registry: Mapping[str, tuple[str, ...]] | None = None,
    ) -> None:
        registry = registry or {}
        self._phrases: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
        self._names: list[str] = []
        # Per skill (by position): term -> its weighted, length-normalised frequency,
        # then (below) term -> its whole BM25 gain; and the terms of its name.
        self._gains: list[dict[str, float]] = []
        self._name_terms: list[frozenset[str]] = []
        frequency: Counter[str] = Counter()
        for name, description in candidates:
            keywords = registry.get(name)
            if keywords is not None:
                self._phrases[name] = [(keyword, tuple(words(keyword))) for keyword in keywords]
                continue
            name_terms = Counter(terms(name.replace("-", " ")))
            # A word counts once in a description: repeating it is stuffing, not
            # relevance (rule 3).
            description_terms = set(terms(description))
            name_norm = 1 - _B_NAME + _B_NAME * sum(name_terms.values()) / _REF_NAME
            description_norm = (
                1 - _B_DESCRIPTION + _B_DESCRIPTION * len(description_terms) / _REF_DESCRIPTION
            )
            weighted = {term: _W_NAME * count / name_norm for term, count in name_terms.items()}
            for term in description_terms:
                weighted[term] = weighted.get(term, 0.0) + _W_DESCRIPTION / description_norm
            self._names.append(name)
            self._name_terms.append(frozenset(name_terms))
            self._gains.append(weighted)
            frequency.update(weighted.keys())
        total = len(self._names) + _PRIOR_DOCS
        idf = {
            term: math.log(1 + (total - seen + 0.5) / (seen + 0.5))
            for term, seen in frequency.items()
        }
        # Everything a query needs is summed here, once: a query only adds numbers.
        postings: dict[str, tuple[list[int], list[float]]] = {}
        for index, weighted in enumerate(self._gains):
            for term, tf in weighted.items():
                gain = idf[term] * tf * (_K1 + 1) / (tf + _K1)
                weighted[term] = gain
                ids, gains = postings.setdefault(term, ([], []))
                ids.append(index)
                gains.append(gain)
        self._postings = postings

    def rank(self, task: str, context: str = "") -> list[Match]:
        """The candidates the task matches, best first (tier, score, then name)."""
        task = task[:_MAX_TASK_CHARS]
        context = context[:_MAX_CONTEXT_CHARS]
        matches = self._registry_matches(task, context)
        matches.extend(self._lexical_matches(task, context))
        matches.sort(key=lambda match: (-match.tier, -match.score, match.name))
        return matches

    def _registry_matches(self, task: str, context: str) -> list[Match]:
        if not self._phrases:
            return []
        task_words = words(task)
        context_words = words(context)
        task_at = _positions(task_words)
        context_at = _positions(context_words)
        out = []
        for name, phrases in self._phrases.items():
            score = 0.0
            matched = []
            hit_task = False
            for keyword, phrase in phrases:
                weight = _KEYWORD_WEIGHT + _PHRASE_BONUS * (len(phrase) - 1)
                if _phrase_in(phrase, task_words, task_at):
                    score += weight
                    matched.append(keyword)
                    hit_task = True
                elif _phrase_in(phrase, context_words, context_at):
                    score += _CONTEXT_WEIGHT * weight
                    matched.append(f"context:{keyword}")
            if hit_task:
                out.append(Match(name, 1, round(score, 4), tuple(matched)))
        return out

    def _lexical_matches(self, task: str, context: str) -> list[Match]:
        task_terms = sorted(set(terms(task)))
        scores: dict[int, float] = {}
        get = scores.get
        for term in task_terms:
            posting = self._postings.get(term)
            if posting is not None:
                for index, gain in zip(*posting, strict=True):
                    scores[index] = get(index, 0.0) + gain
        context_terms = sorted(set(terms(context)) - set(task_terms))
        # Without context a score cannot grow any more: most of the skills that share
        # a common word with the task are dropped here, before any other work.
        floor = 0.0 if context_terms else THRESHOLD
        out = []
        for index, task_score in scores.items():
            if task_score < floor:
                continue
            gains = self._gains[index]
            matched = [term for term in task_terms if term in gains]
            if not self._enough(index, matched):
                continue
            # Context tips a choice the task made; it never makes one (rule 4).
            score = task_score
            for term in context_terms:
                extra = gains.get(term)
                if extra is not None:
                    score += _CONTEXT_WEIGHT * extra
                    matched.append(f"context:{term}")
            if score >= THRESHOLD:
                out.append(Match(self._names[index], 0, round(score, 4), tuple(matched)))
        return out

    def _enough(self, index: int, matched: Sequence[str]) -> bool:
        """One word of a description is not a match: a skill needs two of the task's
        terms, or one of them in its name (rule 3)."""
        return len(matched) >= _MIN_TERMS or not self._name_terms[index].isdisjoint(matched)


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
