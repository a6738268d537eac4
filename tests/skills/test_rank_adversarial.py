"""Selection against a hostile skill author (``_skills.rank``): camelCase tasks and the
operator's keywords, names that repeat or share a word, and a ranking that is the same
in every process.

Test names that start with ``test_tN_`` stop threat ``TN`` of threat-model.md.
"""

from __future__ import annotations

import json
import subprocess
import sys

from skillguard._skills.rank import SelectionIndex
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
