"""Ranking skills for a task, and knowing when none fits (seed 003; rules 2 to 5 of
``_skills.select``). Sans-IO: names, descriptions and keywords in, ranked names out.

The rule, in the order it is applied (threat-model.md T80, T260, T261):

1. A registry keyword or phrase found in the task selects its skill (tier 1, always
   ahead of descriptions): the operator's table is trusted.
2. Any other skill is scored by BM25F over its name and description, every gain summed
   at build time; a query only adds the postings of the task's terms (the inverted
   index). A skill that shares no term with the task is never looked at. A term is a
   word, lowercased and lightly stemmed; a camelCase or PascalCase word also gives its
   parts, and snake_case and kebab-case are words already (``_skills.terms``).
3. Under ``THRESHOLD``, or with a single word of the task in its description (the parts
   of a camelCase word are one) and none in its name, a skill is not selected (T80).
4. Evidence: the score, times the share of the task the skill's name and description
   explain, ``coverage ** GAMMA``, times what naming the skill adds,
   ``1 + NAME_BONUS * naming``. Coverage is the IDF-weighted share of the task's
   distinct terms that the skill holds, where a word no skill holds weighs the most
   (``UNSEEN_WEIGHT`` times the IDF of a word of document frequency zero): a task made
   mostly of words the catalog does not know is explained by no skill. Naming is the
   IDF-weighted share of the skill's name terms that the task holds (the task alone,
   never the context): a task that says "weather forecast" names ``weather-forecast``
   whole. A skill is selected only when its evidence reaches ``EVIDENCE_FLOOR``: the
   longer the task, the more of it a skill must explain, so the floor on the score
   scales with the task's length (``EVIDENCE_FLOOR * coverage ** -GAMMA``, divided by
   at most ``1 + NAME_BONUS`` for a skill the task names whole, T318).
5. Margin: when the first description match and the next that is no copy of it (T335)
   are within ``MARGIN`` of each other and the first is weak (under twice the floor),
   no description match is selected: the task does not tell them apart, so it likely
   needs neither. Any other over the floor is selected too (``max_skills`` caps them).
6. Context terms add to the score of a skill the task already selected (rule 4 of
   ``_skills.select``); the floor and margin are judged on the task alone.
7. Ties break by name: ranks are deterministic.

``consider`` returns, beside the selected matches, what an operator needs to see why
(``Considered``): the matched terms and their weights, the score, the coverage, the
naming, the evidence, and the rule that decided; at most ``MAX_CONSIDERED`` skills,
best first.
"""

from __future__ import annotations

import heapq
import math
from collections import Counter
from typing import TYPE_CHECKING, Final, NamedTuple

import attrs

from skillguard._skills.terms import STOP_WORDS, keyword_texts, stem, terms, word_of, words

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

__all__ = [
    "EVIDENCE_FLOOR",
    "NAME_BONUS",
    "STOP_WORDS",
    "THRESHOLD",
    "UNSEEN_WEIGHT",
    "Considered",
    "Match",
    "SelectionIndex",
    "stem",
    "terms",
    "words",
]

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


# The abstention rule (rules 4 and 5 above), tuned on the "tune" half of the public
# MetaTool queries (benchmarks/bench_select.py) and reported on the held-out half; the
# README of benchmarks/ gives the numbers and what was tried.
# GAMMA: how much a low coverage costs; 0 would be the score alone.
GAMMA: Final = 0.75
EVIDENCE_FLOOR: Final = 1.75
MARGIN: Final = 0.05
# NAME_BONUS: how much naming the skill adds: the evidence is multiplied by
# ``1 + NAME_BONUS * name coverage``, the IDF-weighted share of the skill's name terms
# that the task holds (a task that says "weather forecast" names all of
# ``weather-forecast``). The name is the skill's identity, and the operator sees it in
# the allow-list; a description is free text.
NAME_BONUS: Final = 2.0
# UNSEEN_WEIGHT: in the task's whole weight (the denominator of coverage), a task word
# that no skill in the catalog holds counts this many times the IDF of a word of
# document frequency zero: a task made mostly of words the catalog does not know is
# explained by no skill, however well one of its words matches.
UNSEEN_WEIGHT: Final = 2.0
# How many considered skills a selection keeps for ``explain``, and how many matched
# terms of each (the heaviest).
MAX_CONSIDERED: Final = 10
MAX_TERMS: Final = 16


@attrs.frozen
class Match:
    """One candidate's rank: ``tier`` 1 for a registry match, 0 for a description."""

    name: str
    tier: int
    score: float
    matched: tuple[str, ...]


@attrs.frozen
class Considered:
    """Why one skill was or was not selected (``Selection.explain``).

    ``terms`` holds each matched term (a registry keyword, or a stemmed term of the
    task, ``context:`` before a term of the context) with its weight in the score;
    ``rule`` names the rule that decided: ``keyword``, ``evidence`` (selected);
    ``one_word``, ``under_floor``, ``ambiguous`` (not selected). ``evidence`` is
    ``score * coverage ** GAMMA * (1 + NAME_BONUS * naming)``, where ``naming`` is the
    IDF-weighted share of the skill's name that the task holds.
    """

    name: str
    via: str  # "registry" or "description"
    selected: bool
    rule: str
    score: float
    coverage: float
    evidence: float
    terms: tuple[tuple[str, float], ...]
    naming: float = 0.0

    def as_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "via": self.via,
            "selected": self.selected,
            "rule": self.rule,
            "score": self.score,
            "coverage": self.coverage,
            "evidence": self.evidence,
            "naming": self.naming,
            "terms": [[term, weight] for term, weight in self.terms],
        }


def _evidence(score: float, coverage: float, naming: float) -> float:
    """Rule 4's evidence: one formula for the task's score and for the score with
    context added, so that the two cannot drift apart."""
    evidence: float = score * coverage**GAMMA * (1 + NAME_BONUS * naming)
    return evidence


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


def _keyword_positions(text: str) -> list[tuple[list[str], dict[str, list[int]]]]:
    return [(sequence, _positions(sequence)) for sequence in keyword_texts(text)]


class _Scored(NamedTuple):
    """A description match that passed rule 3, before rules 4 and 5 (a tuple: a query
    makes hundreds of them on a large catalog)."""

    position: int  # the skill's, in the index
    score: float  # the task's score
    coverage: float
    naming: float
    evidence: float
    matched: tuple[str, ...]


class SelectionIndex:
    """The ranking structure for one catalog, built once and queried per task.

    *candidates* is ``(name, description)`` for each skill an agent may select;
    *registry* the operator's keywords for some of them (those skills are matched by
    keywords only). Building is linear in the catalog; a query touches only the
    postings of the task's terms, and the registry's keywords that start with a word
    of the task.
    """

    def __init__(
        self,
        candidates: Iterable[tuple[str, str]],
        registry: Mapping[str, tuple[str, ...]] | None = None,
    ) -> None:
        registry = registry or {}
        # First word of a keyword -> (skill, keyword, its words): a query looks up only
        # the keywords that can start at a word of the task.
        self._keywords: dict[str, list[tuple[str, int, str, tuple[str, ...]]]] = {}
        self._names: list[str] = []
        # Per skill (by position): term -> its weighted, length-normalised frequency,
        # then (below) term -> its whole BM25 gain; and the terms of its name.
        self._gains: list[dict[str, float]] = []
        self._name_terms: list[frozenset[str]] = []
        frequency: Counter[str] = Counter()
        for name, description in candidates:
            keywords = registry.get(name)
            if keywords is not None:
                for position, keyword in enumerate(keywords):
                    phrase = tuple(words(keyword))
                    entry = (name, position, keyword, phrase)
                    self._keywords.setdefault(phrase[0], []).append(entry)
                continue
            # A word counts once in a description, and once in a name: repeating it is
            # stuffing, not relevance (rule 3; "find-find-find" is the name "find",
            # T332).
            name_terms = frozenset(terms(name.replace("-", " ")))
            description_terms = set(terms(description))
            name_norm = 1 - _B_NAME + _B_NAME * len(name_terms) / _REF_NAME
            description_norm = (
                1 - _B_DESCRIPTION + _B_DESCRIPTION * len(description_terms) / _REF_DESCRIPTION
            )
            weighted = dict.fromkeys(sorted(name_terms), _W_NAME / name_norm)
            for term in description_terms:
                weighted[term] = weighted.get(term, 0.0) + _W_DESCRIPTION / description_norm
            self._names.append(name)
            self._name_terms.append(name_terms)
            self._gains.append(weighted)
            frequency.update(weighted.keys())
        total = len(self._names) + _PRIOR_DOCS
        self._idf = {
            term: math.log(1 + (total - seen + 0.5) / (seen + 0.5))
            for term, seen in frequency.items()
        }
        # A task word no skill holds weighs the most: the catalog explains none of it.
        self._idf_unseen = UNSEEN_WEIGHT * math.log(1 + (total + 0.5) / 0.5)
        # Each name term's share of its name's IDF mass, per skill and per term; the
        # mass summed exactly, as a set's order changes with the hash seed (T333).
        # ``_named`` lists, per term, the skills whose name holds it.
        self._name_shares: list[dict[str, float]] = []
        self._named: dict[str, list[int]] = {}
        for index, held in enumerate(self._name_terms):
            mass = math.fsum(self._idf[term] for term in held)
            self._name_shares.append({term: self._idf[term] / mass for term in held})
            for term in held:
                self._named.setdefault(term, []).append(index)
        # Everything a query needs is summed here, once: a query only adds numbers.
        postings: dict[str, tuple[list[int], list[float]]] = {}
        for index, weighted in enumerate(self._gains):
            for term, tf in weighted.items():
                gain = self._idf[term] * tf * (_K1 + 1) / (tf + _K1)
                weighted[term] = gain
                ids, gains = postings.setdefault(term, ([], []))
                ids.append(index)
                gains.append(gain)
        self._postings = postings
        # The largest gain of each term: a query skips the skills that even every
        # term still to come could not lift to the threshold (MaxScore).
        self._max_gain = {term: max(gains) for term, (_, gains) in postings.items()}

    def rank(self, task: str, context: str = "") -> list[Match]:
        """The candidates selected for the task, best first (tier, score, then name)."""
        return self.consider(task, context)[0]

    def consider(
        self, task: str, context: str = ""
    ) -> tuple[list[Match], tuple[Considered, ...], int]:
        """The selected matches, best first; the skills considered (at most
        ``MAX_CONSIDERED``, best first) and why each was or was not selected; and how
        many more were scored without being listed."""
        task = task[:_MAX_TASK_CHARS]
        context = context[:_MAX_CONTEXT_CHARS]
        registry, registry_seen = self._registry_matches(task, context)
        lexical, lexical_seen, unlisted = self._lexical_matches(task, context)
        matches = registry + lexical
        matches.sort(key=lambda match: (-match.tier, -match.score, match.name))
        seen = registry_seen + lexical_seen
        listed = tuple(seen[:MAX_CONSIDERED])
        return matches, listed, unlisted + len(seen) - len(listed)

    def _registry_matches(self, task: str, context: str) -> tuple[list[Match], list[Considered]]:
        if not self._keywords:
            return [], []
        task_texts = _keyword_positions(task)
        context_texts = _keyword_positions(context)
        found: dict[str, list[tuple[int, str, float]]] = {}
        hit: set[str] = set()
        firsts = {word for _, at in task_texts + context_texts for word in at}
        for first in firsts:
            for name, position, keyword, phrase in self._keywords.get(first, ()):
                weight = _KEYWORD_WEIGHT + _PHRASE_BONUS * (len(phrase) - 1)
                if any(_phrase_in(phrase, text, at) for text, at in task_texts):
                    found.setdefault(name, []).append((position, keyword, weight))
                    hit.add(name)
                elif any(_phrase_in(phrase, text, at) for text, at in context_texts):
                    found.setdefault(name, []).append(
                        (position, f"context:{keyword}", _CONTEXT_WEIGHT * weight)
                    )
        out = []
        considered = []
        for name in sorted(hit):
            # In the registry's own order, as the operator wrote the keywords.
            pairs = [(keyword, weight) for _, keyword, weight in sorted(found[name])]
            score = round(sum(weight for _, weight in pairs), 4)
            out.append(Match(name, 1, score, tuple(keyword for keyword, _ in pairs)))
            considered.append(
                Considered(
                    name,
                    "registry",
                    selected=True,
                    rule="keyword",
                    score=score,
                    coverage=1.0,
                    evidence=score,
                    terms=tuple((keyword, round(weight, 4)) for keyword, weight in pairs)[
                        :MAX_TERMS
                    ],
                )
            )
        considered.sort(key=lambda item: (-item.score, item.name))
        return out, considered

    def _lexical_matches(
        self, task: str, context: str
    ) -> tuple[list[Match], list[Considered], int]:
        task_terms = sorted(set(terms(task)))
        whole_of = word_of(task)
        scores, cover = self._scores(task_terms)
        naming_of = self._naming(task_terms, scores).get
        unseen = self._idf_unseen
        whole = sum(self._idf.get(term, unseen) for term in task_terms)
        names = self._names
        # Rejected skills, as plain values: only the few explained become ``Considered``.
        under_floor: list[tuple[float, float, str, int, float]] = []
        rejected: list[tuple[_Scored, str]] = []
        passed: list[_Scored] = []
        under = 0
        for position, score in scores.items():
            # Most of the skills that share a common word with the task stop here,
            # before any other work (rule 3).
            if score < THRESHOLD:
                under += 1
                continue
            coverage = cover[position] / whole
            naming = naming_of(position, 0.0)
            evidence = _evidence(score, coverage, naming)
            if evidence < EVIDENCE_FLOOR:  # rule 4
                under_floor.append((-evidence, -score, names[position], position, naming))
                continue
            matched = self._matched(position, task_terms)
            scored = _Scored(position, score, coverage, naming, evidence, matched)
            if not self._enough(position, matched, whole_of):
                rejected.append((scored, "one_word"))
                continue
            passed.append(scored)
        passed.sort(key=lambda item: (-item.evidence, names[item.position]))
        chosen = passed
        # Rule 5 compares the first with the best skill that is no copy of it (the same
        # name terms, the same task terms matched), or any copy would veto it (T335).
        runner = next((item for item in passed[1:] if not self._copies(item, passed[0])), None)
        if runner is not None:
            first, second = passed[0].evidence, runner.evidence
            if first < 2 * EVIDENCE_FLOOR and first - second < MARGIN * first:  # rule 5
                rejected += [(item, "ambiguous") for item in passed]
                chosen = []
        context_terms = set(terms(context)).difference(task_terms) if chosen else set()
        taken = []
        for item in chosen:
            # Context tips a choice the task made; it never makes one (rule 6). The skill's
            # terms are looked up in the context's: a long one costs once (T334).
            gains = self._gains[item.position]
            extra = sorted(term for term in gains if term in context_terms)
            score = item.score + sum(_CONTEXT_WEIGHT * gains[term] for term in extra)
            matched = item.matched + tuple(f"context:{term}" for term in extra)
            name = self._names[item.position]
            evidence = _evidence(score, item.coverage, item.naming)
            taken.append((Match(name, 0, round(evidence, 4), matched), item, extra))
        taken.sort(key=lambda entry: (-entry[0].score, entry[0].name))
        out = [match for match, _, _ in taken]
        # Only the skills an operator is shown become ``Considered``.
        ordered = [
            self._considered(item, "evidence", extra) for _, item, extra in taken[:MAX_CONSIDERED]
        ]
        # The best of those under the floor, then the best of every rejected skill.
        for evidence, score, _, position, naming in heapq.nsmallest(MAX_CONSIDERED, under_floor):
            coverage = cover[position] / whole
            matched = self._matched(position, task_terms)
            item = _Scored(position, -score, coverage, naming, -evidence, matched)
            rejected.append((item, "under_floor"))
        shown = heapq.nsmallest(
            MAX_CONSIDERED,
            rejected,
            key=lambda pair: (-pair[0].evidence, -pair[0].score, names[pair[0].position]),
        )
        ordered += [self._considered(item, rule) for item, rule in shown]
        listed_under = min(len(under_floor), MAX_CONSIDERED)
        hidden = len(taken) - len(ordered) + len(rejected) - listed_under + len(under_floor)
        return out, ordered, under + hidden

    def _naming(self, task_terms: Iterable[str], scores: Mapping[int, float]) -> dict[int, float]:
        """For each skill scored, the IDF-weighted share of its name terms that the task
        holds (or none); a term reads its name postings or the skills scored, whichever
        is fewer, so a word the names of a whole catalog share does not walk it (T331)."""
        naming: dict[int, float] = {}
        shares_of = self._name_shares
        for term in task_terms:
            ids = self._named.get(term, ())
            named = scores if len(scores) < len(ids) else [i for i in ids if i in scores]
            for position in named:
                share = shares_of[position].get(term)
                if share is not None:
                    naming[position] = naming.get(position, 0.0) + share
        return naming

    def _matched(self, position: int, task_terms: Sequence[str]) -> tuple[str, ...]:
        gains = self._gains[position]
        return tuple(term for term in task_terms if term in gains)

    def _scores(self, task_terms: Sequence[str]) -> tuple[dict[int, float], dict[int, float]]:
        """The score of every skill that can reach ``THRESHOLD``, summed over the
        postings of the task's terms, the terms of highest gain first, and the IDF of
        the task's terms each holds (its coverage, before division). Once the terms
        left could not lift a skill not seen yet to the threshold, those terms only add
        to the skills already seen (looked up in whichever is smaller: those skills, or
        the term's postings), so a common word does not walk thousands of postings."""
        max_gain = self._max_gain
        order = sorted((term for term in task_terms if term in max_gain), key=max_gain.__getitem__)
        left = sum(max_gain[term] for term in order)
        scores: dict[int, float] = {}
        cover: dict[int, float] = {}
        get = scores.get
        covered = cover.get
        postings = self._postings
        all_gains = self._gains
        for term in reversed(order):  # the highest gain first
            ids, gains = postings[term]
            weight = self._idf[term]
            if left >= THRESHOLD - 1e-9:  # a rounding error never drops a skill
                for position, gain in zip(ids, gains, strict=True):
                    scores[position] = get(position, 0.0) + gain
                    cover[position] = covered(position, 0.0) + weight
            elif len(scores) < len(ids):
                for position in scores:  # the values change, never the keys
                    extra = all_gains[position].get(term)
                    if extra is not None:
                        scores[position] += extra
                        cover[position] += weight
            else:
                for position, gain in zip(ids, gains, strict=True):
                    if position in scores:
                        scores[position] += gain
                        cover[position] += weight
            left -= max_gain[term]
        return scores, cover

    def _considered(self, item: _Scored, rule: str, context: Sequence[str] = ()) -> Considered:
        gains = self._gains[item.position]
        weights = [(term, round(gains[term], 4)) for term in item.matched]
        weights += [
            (f"context:{term}", round(_CONTEXT_WEIGHT * gains[term], 4)) for term in context
        ]
        if len(weights) > MAX_TERMS:
            weights = sorted(weights, key=lambda pair: (-pair[1], pair[0]))[:MAX_TERMS]
        return Considered(
            self._names[item.position],
            "description",
            selected=rule == "evidence",
            rule=rule,
            score=round(item.score, 4),
            coverage=round(item.coverage, 4),
            evidence=round(item.evidence, 4),
            terms=tuple(weights),
            naming=round(item.naming, 4),
        )

    def _copies(self, item: _Scored, first: _Scored) -> bool:
        names = self._name_terms  # the same name terms and task terms matched (T335)
        return item.matched == first.matched and names[item.position] == names[first.position]

    def _enough(self, index: int, matched: Sequence[str], whole_of: Mapping[str, str]) -> bool:
        """One word of a description is not a match: a skill needs two of the task's
        words, or one of them in its name (rule 3). The parts of one camelCase word of
        the task are that one word ("PayPal" is not three words, T330)."""
        if not self._name_terms[index].isdisjoint(matched):
            return True
        return len({whole_of.get(term, term) for term in matched}) >= _MIN_TERMS
