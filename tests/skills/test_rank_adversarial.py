"""Selection against a hostile skill author (``_skills.rank``): camelCase tasks and the
operator's keywords, names that repeat or share a word, and a ranking that is the same
in every process.

Test names that start with ``test_tN_`` stop threat ``TN`` of threat-model.md.
"""

from __future__ import annotations

import json
import subprocess
import sys

from skillguard._skills.rank import EVIDENCE_FLOOR, SelectionIndex, terms
from tests.steps import python_steps

CATALOG = [
    ("weather-forecast", "Get the weather forecast: temperature, rain and wind for any city."),
    ("pdf-forms", "Fill PDF forms and extract PDF form fields."),
    ("recipe-finder", "Find recipes by ingredient, cuisine and diet."),
]
# A workspace skill that wants the operator's pdf tasks.
HOSTILE_PDF = ("pdf-tools", "Work with pdf files: merge, split and read pdf files.")


def test_t330_a_camel_case_task_finds_the_operators_keyword_too() -> None:
    # The operator's table gives "pdf" to pdf-forms; a description word matches the
    # part "pdf" of "PdfReader", so the keyword must too, or a workspace description
    # takes a task the operator's table claims.
    index = SelectionIndex([*CATALOG, HOSTILE_PDF], {"pdf-forms": ("pdf", "form field")})
    for task in (
        "the PdfReader crashes when I open a file",
        "the PDFReader crashes when I open a file",
        "fix the pdfReader crash",
    ):
        selected = index.rank(task)
        assert selected[0].name == "pdf-forms", task
        assert selected[0].tier == 1
        assert selected[0].matched == ("pdf",)
    # A phrase matches the parts of one camelCase word, in order, as written apart.
    assert index.rank("a broken FormField")[0].matched == ("form field",)
    # The joined form still matches a keyword written joined, and the context tips.
    joined = SelectionIndex(CATALOG, {"pdf-forms": ("pdfreader",)})
    assert joined.rank("the PdfReader crashes")[0].name == "pdf-forms"
    tipped = index.rank("merge the pdf", "FormField names")
    assert tipped[0].matched == ("pdf", "context:form field")


def test_t331_a_name_word_many_skills_share_costs_no_more_at_any_catalog_size() -> None:
    """Naming is read only for the skills the query scored: a task word that the names
    of the whole catalog hold does not walk the catalog."""
    task = "weather forecast kit"
    # The shared name word must be a term of the task: a stop word ("tool", "plugin")
    # never reaches naming, and the test would hold without the defence.
    assert "kit" in terms(task)

    def steps(size: int) -> int:
        catalog = [CATALOG[0]] + [
            (f"kit-n{n}", f"Unrelated filler number {n} about topic{n}.") for n in range(size)
        ]
        index = SelectionIndex(catalog)
        assert [match.name for match in index.rank(task)] == ["weather-forecast"]
        return python_steps(lambda: index.consider(task))

    small, large = steps(50), steps(800)
    assert large <= small * 1.1 + 50


_SHARES = """
import json
from skillguard._skills.rank import EVIDENCE_FLOOR, SelectionIndex
catalog = json.loads({catalog!r})
index = SelectionIndex([tuple(pair) for pair in catalog])
task = "alpha bravo charlie delta echo foxtrot golf hotel"
task_terms = sorted(set(task.split()))
scores, _ = index._scores(task_terms)
print(json.dumps(sorted((p, repr(n)) for p, n in index._naming(task_terms, scores).items())))
"""


def test_t333_naming_is_the_same_number_in_every_process() -> None:
    """The share of a name a task holds is summed in a fixed order: a set's order
    changes with the process's hash seed, and a last-bit difference would break a tie
    by that seed instead of by name."""
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]
    # Names of three and four words, each word held by a different number of
    # descriptions (so each has its own IDF, and the order of a sum shows).
    catalog = [
        ("-".join(words[start : start + size]), " ".join(words[: n % 8 + 1]) + f" number{n}")
        for n, (start, size) in enumerate((s, k) for s in range(5) for k in (3, 4))
    ]
    script = _SHARES.format(catalog=json.dumps(catalog))
    seen = {
        subprocess.run(
            [sys.executable, "-c", script],
            env={"PYTHONHASHSEED": str(seed), "PATH": ""},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in range(8)
    }
    assert len(seen) == 1


def test_t332_a_name_word_counts_once_however_often_the_name_repeats_it() -> None:
    # "find-find-find-find" is the name "find" stuffed: it must rank as "find" does.
    task = "find me the weather forecast for Paris tomorrow"
    ranks = {}
    for name in ("find", "find-find-find-find"):
        index = SelectionIndex([*CATALOG, (name, "Find things: anything, anywhere.")])
        ranks[name] = next(item for item in index.consider(task)[1] if item.name == name)
    once, stuffed = ranks["find"], ranks["find-find-find-find"]
    assert (stuffed.score, stuffed.evidence, stuffed.naming) == (
        once.score,
        once.evidence,
        once.naming,
    )


def test_t334_a_long_context_costs_the_same_however_many_skills_it_tips() -> None:
    """The context's terms are looked up in each chosen skill's own terms, never the
    other way round: a context of thousands of words (file names a workspace controls)
    costs once, not once per skill the task chose."""
    description = "Get the weather forecast: temperature, rain and wind for any city."
    task = "weather forecast rain temperature"
    context = " ".join(f"file{k}" for k in range(4000)) + " wind city"

    def extra(size: int) -> int:
        catalog = [("weather-forecast", description)] + [
            (f"weather-report-{k}", description) for k in range(size - 1)
        ]
        index = SelectionIndex(catalog)
        selected = index.rank(task, context)
        assert len(selected) == size
        assert all(match.matched[-2:] == ("context:city", "context:wind") for match in selected)
        return python_steps(lambda: index.consider(task, context)) - python_steps(
            lambda: index.consider(task)
        )

    few, many = extra(2), extra(32)
    assert many <= few * 1.1 + 30 * 50


def test_t335_a_copy_of_a_skill_cannot_veto_it_by_the_margin_rule() -> None:
    # A workspace author copies the operator's skill under a name of the same words
    # ("pdf-form" beside "pdf-forms"): on a weak match the two tie exactly, and rule 5
    # (two weak near ties select nothing) made the copy a veto on the operator's skill.
    task = "the pdf: landlord deposit"
    alone = SelectionIndex(CATALOG).consider(task)
    assert [match.name for match in alone[0]] == ["pdf-forms"]
    assert alone[1][0].evidence < 2 * EVIDENCE_FLOOR  # a weak match: rule 5 applies
    for copy in ("pdf-form", "the-pdf-forms", "forms-pdf"):
        index = SelectionIndex([*CATALOG, (copy, CATALOG[1][1])])
        selected, considered, _ = index.consider(task)
        assert "pdf-forms" in [match.name for match in selected], copy
        assert {item.rule for item in considered[:2]} == {"evidence"}
    # Two skills of other names that a task naming neither cannot tell apart are still
    # a near tie, and select nothing (rule 5 is unchanged for them).
    other = SelectionIndex([*CATALOG, ("zeta-notes", CATALOG[1][1])])
    considered = other.consider("extract fields: landlord deposit boiler")[1]
    assert [(item.name, item.rule) for item in considered[:2]] == [
        ("pdf-forms", "ambiguous"),
        ("zeta-notes", "ambiguous"),
    ]


def test_t330_the_parts_of_one_camel_case_word_are_one_word_to_the_one_word_rule() -> None:
    # "PayPal" gives three terms (paypal, pay, pal); a description that holds the one
    # word matched all three, and passed the rule that one word of a description is a
    # coincidence, not a match (T80).
    index = SelectionIndex([*CATALOG, ("brand-notes", "Notes on PayPal, Stripe and Square.")])
    selected, considered, _ = index.consider("what is PayPal")
    assert selected == []
    assert [(item.name, item.rule) for item in considered] == [("brand-notes", "one_word")]
    # Two words of the task are two, however they are written.
    assert [match.name for match in index.rank("PayPal and Stripe")] == ["brand-notes"]
