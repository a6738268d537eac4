"""Ranking and abstention (``_skills.rank``): knowing when no skill fits, explaining why,
and a query whose cost does not grow with the catalog.

Test names that start with ``test_tN_`` stop threat ``TN`` of threat-model.md.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from hypothesis import given
from hypothesis import strategies as st

from skillguard import AllowPolicy, EmbeddedSkills, Loader, SelectionRegistry
from skillguard._skills.rank import EVIDENCE_FLOOR, MAX_CONSIDERED, MAX_TERMS, SelectionIndex
from tests.steps import python_steps

if TYPE_CHECKING:
    from pathlib import Path

CATALOG = [
    ("weather-forecast", "Get the weather forecast: temperature, rain and wind for any city."),
    ("pdf-forms", "Fill PDF forms and extract PDF form fields."),
    ("recipe-finder", "Find recipes by ingredient, cuisine and diet."),
    ("flight-search", "Search flights and compare airfares between airports."),
]


# A long task about something else that holds one word of a skill's name.
LONG_WEATHER_TASK = (
    "write an essay on how the weather shaped medieval European agriculture, "
    "harvest cycles, famine, monastic landholding and peasant uprisings"
)


def test_t260_a_short_task_a_skill_explains_selects_it() -> None:
    index = SelectionIndex(CATALOG)
    assert [match.name for match in index.rank("weather forecast for Paris")] == [
        "weather-forecast"
    ]


def test_t260_a_long_task_one_skill_word_does_not_explain_selects_nothing() -> None:
    index = SelectionIndex(CATALOG)
    # "weather" is in a name, and the old single-word rule took it; but the task is
    # about something else, and the skill explains a sliver of it.
    selected, considered, _ = index.consider(LONG_WEATHER_TASK)
    assert selected == []
    decided = {item.name: item for item in considered}
    assert decided["weather-forecast"].rule == "under_floor"
    assert decided["weather-forecast"].evidence < EVIDENCE_FLOOR
    # The same word in a short task is evidence enough: the floor scales with the task.
    assert index.rank("weather in Paris")[0].name == "weather-forecast"


def test_t260_two_weak_near_ties_are_ambiguous_and_select_nothing() -> None:
    index = SelectionIndex(
        [
            ("alpha-notes", "Keep notes about plants and gardens."),
            ("beta-notes", "Keep notes about plants and gardens."),
        ]
    )
    task = "plants gardens history economics trade empire"
    selected, considered, _ = index.consider(task)
    assert selected == []
    assert {item.rule for item in considered} == {"ambiguous"}
    # A clear tie on a task the skills explain whole is no ambiguity: both are taken.
    assert [m.name for m in index.rank("notes on plants")] == ["alpha-notes", "beta-notes"]


def test_t261_a_registry_keyword_selects_however_long_the_task() -> None:
    index = SelectionIndex(CATALOG, {"pdf-forms": ("pdf",)})
    task = "pdf " + " ".join(f"unrelated{n} word{n}" for n in range(200))
    selected, considered, _ = index.consider(task)
    assert [match.name for match in selected] == ["pdf-forms"]
    assert selected[0].tier == 1
    assert considered[0].rule == "keyword"
    assert considered[0].terms == (("pdf", 1.0),)


def test_context_never_passes_the_floor_for_the_task() -> None:
    index = SelectionIndex(CATALOG)
    task = "essay on weather in medieval agriculture harvest famine monastic peasants"
    assert index.rank(task, "weather forecast temperature rain wind city") == []


# -- explain ---------------------------------------------------------------------------


def _loader(
    tmp_path: Path, catalog: list[tuple[str, str]], registry: bytes | None = None
) -> Loader:
    for name, description in catalog:
        folder = tmp_path / "embedded" / name
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: {json.dumps(description)}\n---\nThe {name} steps.\n"
        )
    policy = AllowPolicy.from_mapping({"agents": {"a": {"skills": [name for name, _ in catalog]}}})
    return Loader(
        policy,
        embedded=EmbeddedSkills.from_directory(tmp_path / "embedded"),
        registry=SelectionRegistry.from_yaml(registry) if registry is not None else None,
    )


def test_explain_says_what_matched_and_which_rule_decided(tmp_path: Path) -> None:
    with _loader(tmp_path, CATALOG, b"skills:\n  flight-search: {keywords: [airfare]}\n") as loader:
        selection = loader.bind("a").select("fill the PDF form, then find an airfare")
    text = selection.explain()
    lines = text.splitlines()
    assert lines[0].startswith("flight-search: selected (keyword; via registry")
    assert "  airfare: 1.0" in lines
    pdf = next(line for line in lines if line.startswith("pdf-forms:"))
    assert pdf.startswith("pdf-forms: selected (evidence; via description")
    assert ", naming 1.0, evidence " in pdf  # the task names pdf-forms whole
    assert "naming" not in lines[0]  # a registry match has no naming
    assert any(line.startswith("  pdf: ") for line in lines)
    assert selection.names == ("flight-search", "pdf-forms")
    assert [item.name for item in selection.considered][:2] == ["flight-search", "pdf-forms"]


def test_explain_when_nothing_shares_a_term(tmp_path: Path) -> None:
    with _loader(tmp_path, CATALOG) as loader:
        selection = loader.bind("a").select("explain the color blue")
    assert selection.names == ()
    assert selection.explain() == "no skill shares a term with the task\n"


def test_t263_explain_is_bounded_and_escaped(tmp_path: Path) -> None:
    catalog = [
        (f"skill-{n}", "shared words " + " ".join(f"w{n}x{k}" for k in range(40)))
        for n in range(40)
    ]
    long_word = "a" * 200  # a term over the 64 characters shown
    catalog.append(
        ("wide-skill", f"shared words {long_word} " + " ".join(f"v{k}" for k in range(60)))
    )
    task = f"shared words {long_word} " + " ".join(f"v{k}" for k in range(60))
    with _loader(tmp_path, catalog) as loader:
        selection = loader.bind("a").select(task)
    assert len(selection.considered) <= MAX_CONSIDERED
    assert all(len(item.terms) <= MAX_TERMS for item in selection.considered)
    text = selection.explain()
    assert len(text.splitlines()) <= MAX_CONSIDERED * (1 + MAX_TERMS) + 1
    assert long_word not in text
    assert "a" * 64 + "..." in text
    assert all(char.isprintable() or char == "\n" for char in text)


def test_t263_explain_escapes_what_a_terminal_would_obey() -> None:
    from skillguard._skills.rank import Considered
    from skillguard._skills.select import Selection

    item = Considered(
        "x",
        "registry",
        selected=True,
        rule="keyword",
        score=1.0,
        coverage=1.0,
        evidence=1.0,
        terms=(("a\x1b[2Jb\u202e", 1.0),),
    )
    text = Selection("a", "0" * 64, (), (), "", considered=(item,)).explain()
    assert "\x1b" not in text
    assert "\u202e" not in text
    assert "[U+001B]" in text


# -- cost ------------------------------------------------------------------------------


def test_t262_a_query_costs_the_same_at_any_catalog_size(tmp_path: Path) -> None:
    """After the first query builds the index, a query's work depends on the task's
    postings and the few skills selected, not on the catalog: steps at 16 times the
    catalog stay within a small margin."""

    def steps(size: int) -> int:
        catalog = [("weather-forecast", CATALOG[0][1])] + [
            (f"filler-{n}", f"Unrelated filler number {n} about topic{n}.") for n in range(size)
        ]
        with _loader(tmp_path / str(size), catalog) as loader:
            handle = loader.bind("a")
            handle.select("weather forecast")  # builds the index, once
            count = python_steps(lambda: handle.select("weather forecast"))
            assert handle.select("weather forecast").names == ("weather-forecast",)
        return count

    small, large = steps(50), steps(800)
    assert large <= small * 1.1 + 50


def test_t262_the_index_build_is_linear_in_the_catalog() -> None:
    def steps(size: int) -> int:
        catalog = [(f"skill-{n}", f"Words about topic{n} and theme{n % 7}.") for n in range(size)]
        return python_steps(lambda: SelectionIndex(catalog))

    small, large = steps(100), steps(400)
    assert large <= small * 4.5


def test_t262_skipping_hopeless_skills_changes_no_score() -> None:
    """The query skips skills that the terms left cannot lift to the threshold; every
    skill that can reach it gets the same score as a walk over every posting."""
    import random

    from skillguard._skills.rank import THRESHOLD, terms

    rng = random.Random(262)  # noqa: S311 - a fixed, reproducible catalog
    vocabulary = [f"word{n}" for n in range(60)]
    catalog = [
        (f"skill-{n}", " ".join(rng.choice(vocabulary) for _ in range(rng.randint(3, 30))))
        for n in range(300)
    ]
    index = SelectionIndex(catalog)
    for _ in range(50):
        task_terms = sorted(set(terms(" ".join(rng.sample(vocabulary, rng.randint(1, 12))))))
        naive: dict[int, float] = {}
        for term in task_terms:
            for position, gain in zip(*index._postings.get(term, ([], [])), strict=True):
                naive[position] = naive.get(position, 0.0) + gain
        fast, _ = index._scores(task_terms)
        reaching = {key for key, value in naive.items() if value >= THRESHOLD}
        assert reaching <= set(fast)
        for key in reaching:
            assert abs(fast[key] - naive[key]) < 1e-9


def test_registry_keywords_in_the_context_tip_a_registry_match() -> None:
    index = SelectionIndex(CATALOG, {"pdf-forms": ("pdf", "form field")})
    selected, considered, _ = index.consider("merge the pdf", "the form field names")
    assert selected[0].matched == ("pdf", "context:form field")
    assert considered[0].terms == (("pdf", 1.0), ("context:form field", 0.45))
    # A keyword of the context alone selects nothing.
    assert index.rank("hello there", "pdf") == []


def test_explain_counts_the_skills_it_does_not_list() -> None:
    from skillguard._skills.select import Selection

    # "alpha" is in a name, so its postings are walked whole; the five skills that
    # hold it deep in a long description score under the threshold, and are counted.
    filler = " ".join(f"filler{k}" for k in range(40))
    index = SelectionIndex(
        [("alpha-tools", "Alpha."), *((f"extra-{n}", f"alpha {filler} n{n}") for n in range(5))]
    )
    selected, considered, unlisted = index.consider("alpha")
    assert [match.name for match in selected] == ["alpha-tools"]
    assert unlisted == 5
    text = Selection("a", "0" * 64, (), (), "", considered=considered, unlisted=unlisted)
    assert text.explain().splitlines()[-1] == (
        "5 more skills were scored for the task and not listed (under 3.0, or below the "
        "ones listed)"
    )


# -- what a term is, and what naming a skill adds -------------------------------------


def test_a_camel_case_word_gives_its_words() -> None:
    from skillguard._skills.rank import terms

    assert terms("PdfReader") == ["pdfreader", "pdf", "reader"]
    assert terms("HTTPServer logs") == ["httpserver", "log", "http", "server"]
    assert terms("parseConfig") == ["parseconfig", "pars", "config"]
    # snake_case and kebab-case were words already; a lower-case word gives itself.
    assert terms("pdf_reader pdf-reader pdfreader") == ["pdf", "reader"] * 2 + ["pdfreader"]


@given(st.text(max_size=60))
def test_camel_case_parts_only_add_terms(text: str) -> None:
    """The terms of the lowercased text come first, unchanged: a part never replaces
    or reorders a word (a lowercase-first tokenisation is kept for every script)."""
    from skillguard._skills.rank import terms

    lowered = terms(text.lower())
    assert terms(text)[: len(lowered)] == lowered


def test_a_camel_case_word_in_a_description_matches_its_words() -> None:
    index = SelectionIndex([*CATALOG, ("video-notes", "Summarises a VideoTranscript.")])
    assert [match.name for match in index.rank("summarise this video transcript")] == [
        "video-notes"
    ]
    # The joined word still matches itself.
    assert [match.name for match in index.rank("summarise the videotranscript")] == ["video-notes"]


def test_t260_a_task_of_words_no_skill_holds_selects_nothing() -> None:
    index = SelectionIndex(CATALOG)
    assert index.rank("zorblax quindle frampet") == []
    # Two words a skill's description holds, among eight the catalog has never seen:
    # the task is mostly unknown to every skill, so no skill explains it.
    made_up = "zorblax quindle frampet vostrik plimsy grondel taxwick burlop"
    selected, considered, _ = index.consider(f"rain temperature {made_up}")
    assert selected == []
    assert considered[0].name == "weather-forecast"
    assert considered[0].rule == "under_floor"
    # The same two words alone are the whole task, and select the skill.
    assert [match.name for match in index.rank("rain temperature")] == ["weather-forecast"]


def test_naming_a_skill_whole_is_the_strongest_description_evidence() -> None:
    from skillguard._skills.rank import GAMMA, NAME_BONUS

    index = SelectionIndex(CATALOG)
    errands = (
        "my landlord emailed about the deposit, the boiler repairs, the lease renewal, "
        "the parking permits, the pets clause, the bins, the garden and the window locks"
    )
    whole = index.consider(f"{errands}: the pdf form")
    half = index.consider(f"{errands}: the pdf")
    named = next(item for item in whole[1] if item.name == "pdf-forms")
    partly = next(item for item in half[1] if item.name == "pdf-forms")
    assert (named.naming, partly.naming) == (1.0, 0.5)
    for item in (named, partly):
        expected = item.score * item.coverage**GAMMA * (1 + NAME_BONUS * item.naming)
        assert abs(item.evidence - expected) <= expected / 200  # coverage is rounded
    assert [match.name for match in whole[0]] == ["pdf-forms"]
    assert partly.rule == "under_floor"
    assert half[0] == []
    # Only the name counts: the same words in a description are not naming.
    recipes = next(item for item in index.consider("cuisine and diet")[1])
    assert recipes.name == "recipe-finder"
    assert recipes.naming == 0.0


def test_t318_a_name_is_judged_on_the_task_and_cannot_carry_a_long_one() -> None:
    # A one-word name is named whole by any task holding the word, yet a long task
    # that word does not explain still selects nothing (the bonus is at most
    # 1 + NAME_BONUS times, and coverage still counts).
    catalog = [("weather", CATALOG[0][1]), *CATALOG[1:]]
    index = SelectionIndex(catalog)
    selected, considered, _ = index.consider(LONG_WEATHER_TASK)
    assert selected == []
    assert considered[0].name == "weather"
    assert considered[0].naming == 1.0
    assert considered[0].rule == "under_floor"
    # The context names nothing: the same name words in the context add no naming.
    _, considered, _ = index.consider("rain temperature wind", "weather forecast")
    assert [item.naming for item in considered if item.name == "weather"] == [0.0]


def test_naming_from_the_name_postings_is_the_share_of_each_scored_name() -> None:
    """Naming is read from per-term name postings, only for the skills the query
    scored; it equals the IDF-weighted share of each one's name terms in the task."""
    import random

    from skillguard._skills.rank import terms

    rng = random.Random(318)  # noqa: S311 - a fixed, reproducible catalog
    vocabulary = [f"word{n}" for n in range(40)]
    catalog = [
        (
            "-".join([*rng.sample(vocabulary, rng.randint(1, 3)), f"n{n}"]),
            " ".join(rng.choice(vocabulary) for _ in range(rng.randint(3, 30))),
        )
        for n in range(300)
    ]
    index = SelectionIndex(catalog)
    skipped = 0
    for _ in range(50):
        task = set(terms(" ".join(rng.sample(vocabulary, rng.randint(1, 12)))))
        scores, _ = index._scores(sorted(task))
        naming = index._naming(sorted(task), scores)
        assert set(naming) <= set(scores)
        for position in scores:
            held = index._name_terms[position]
            mass = sum(index._idf[term] for term in held)
            share = sum(index._idf[term] for term in held if term in task) / mass
            assert abs(naming.get(position, 0.0) - share) < 1e-9
        skipped += sum(
            1
            for position, held in enumerate(index._name_terms)
            if position not in scores and held & task
        )
    assert skipped  # some named skills could not reach the threshold and were skipped
