"""Every regular expression skillguard holds costs work in proportion to its input
(threat-model.md T140-T144).

Each pattern, at the top of a module or built by the character rules, is run by a
step-counting model of ``re``'s backtracking matcher (``tests/steps.py``, whose answers
are checked against ``re``'s on every call) on texts made of the characters the pattern
names: a run of one of them, a repeated piece, between a prefix and a suffix. The
count for four times the text must be at most about four times the count, for
``finditer`` (every search from every position) and for ``fullmatch``. A pattern that
reads a run again from each of its characters, or that lets two quantifiers share a
run, fails here.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import re
import sys
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import skillguard
from skillguard import parse_skill
from skillguard._cli.ci import log_safe
from skillguard._core import text as _text
from skillguard._core.strict_json import loads_strict
from skillguard._core.text import find_hidden, reveal, terminal_line
from skillguard._core.tool_rules import split_tools
from skillguard.agents import parse_agent, parse_token_map
from tests.steps import (
    Meter,
    RegexSteps,
    grows_linearly,
    meter_module,
    python_steps,
    sre_constants,
    sre_parse,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

_GENERIC = [" ", "\t", "\n", "a", "Z", "1", "#", "`", "~", "-", "{", "}", "[", ":", "\u00e9"]


def _module_patterns() -> Iterator[tuple[str, re.Pattern[str]]]:
    for info in pkgutil.walk_packages(skillguard.__path__, "skillguard."):
        if info.name == "skillguard.__main__":  # runs the command line when imported
            continue
        module = importlib.import_module(info.name)
        for name, value in sorted(vars(module).items()):
            if isinstance(value, re.Pattern) and isinstance(value.pattern, str):
                yield f"{info.name}.{name}", value


def _all_patterns() -> dict[str, re.Pattern[str]]:
    patterns = dict(_module_patterns())
    # Built on first use by the character rules, for text within and beyond the BMP.
    for holder in ("_SUSPECT", "_REVEAL", "_TERMINAL"):
        scan = getattr(_text, holder)
        patterns[f"skillguard._core.text.{holder}.bmp"] = scan.bmp
        patterns[f"skillguard._core.text.{holder}.any"] = scan.any
        for astral in (False, True):
            for marks in (False, True):
                key = f"skillguard._core.text.{holder}.candidate(astral={astral}, marks={marks})"
                patterns[key] = scan.candidate(astral=astral, marks=marks)
    for astral in (False, True):
        key = f"skillguard._core.text._mark_without_rtl(astral={astral})"
        patterns[key] = _text._mark_without_rtl(astral=astral)
    # The one pattern written inline (name_problem's, for a name already refused).
    patterns["skillguard._skills.names.name_problem"] = re.compile(r"[a-z0-9-]+")
    return patterns


PATTERNS = _all_patterns()


def _alphabet(pattern: re.Pattern[str]) -> list[str]:
    """The characters *pattern* names: its literals, the ends of its ranges (a few of
    each class), a member of each category, and a few every text has."""
    found: set[str] = set(_GENERIC)

    def walk(items: Any) -> None:
        for op, av in items:
            if op is sre_constants.LITERAL or op is sre_constants.NOT_LITERAL:
                found.add(chr(av))
            elif op is sre_constants.IN:
                for kind, value in av[:6]:
                    if kind is sre_constants.LITERAL:
                        found.add(chr(value))
                    elif kind is sre_constants.RANGE:
                        found.update((chr(value[0]), chr(value[1])))
            elif op is sre_constants.BRANCH:
                for branch in av[1]:
                    walk(branch.data)
            elif op is sre_constants.SUBPATTERN:
                walk(av[3].data)
            elif op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT):
                walk(av[2].data)
            elif op in (sre_constants.ASSERT, sre_constants.ASSERT_NOT):
                walk(av[1].data)

    walk(sre_parse.parse(pattern.pattern, pattern.flags).data)
    return sorted(found)


def _bound(pattern: re.Pattern[str]) -> int:
    """The largest finite count of a repeat in *pattern* ({0,62}: 62): below it, a
    repeat's work is still growing, so sizes are taken above it."""
    largest = 0

    def walk(items: Any) -> None:
        nonlocal largest
        for op, av in items:
            if op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT):
                if av[1] != sre_constants.MAXREPEAT:
                    largest = max(largest, av[1])
                walk(av[2].data)
            elif op is sre_constants.BRANCH:
                for branch in av[1]:
                    walk(branch.data)
            elif op is sre_constants.SUBPATTERN:
                walk(av[3].data)
            elif op in (sre_constants.ASSERT, sre_constants.ASSERT_NOT):
                walk(av[1].data)

    walk(sre_parse.parse(pattern.pattern, pattern.flags).data)
    return largest


def _large(name: str) -> bool:
    # The character rules' candidate patterns hold classes of hundreds of ranges,
    # which the model reads one by one: they are run on shorter texts.
    return ".candidate(" in name or "_mark_without_rtl" in name


def test_every_module_pattern_is_audited() -> None:
    # A new pattern anywhere in the package is in PATTERNS, so it is audited here.
    assert len(PATTERNS) > 40
    assert "skillguard._agents.parse._BLOCK_RE" in PATTERNS
    assert "skillguard._agents.compose_tokens.SECTION_RE" in PATTERNS
    assert "skillguard._audit.report_html._ODD_BLANKS" in PATTERNS


@pytest.mark.parametrize("name", sorted(PATTERNS))
def test_t140_every_pattern_is_linear_on_runs_of_its_characters(name: str) -> None:
    pattern = PATTERNS[name]
    size = max(8 if _large(name) else 32, 2 * _bound(pattern))
    for ch in _alphabet(pattern):
        for method in ("finditer", "fullmatch"):

            def cost(n: int, ch: str = ch, method: str = method) -> int:
                model = RegexSteps(pattern)
                getattr(model, method)(ch * n)
                return model.steps

            # A pattern of fixed length leaves a tail that depends on the size: slack.
            assert grows_linearly(cost, size, slack=1.5), (name, ch, method)


@pytest.mark.parametrize("name", sorted(PATTERNS))
@settings(max_examples=12)
@given(data=st.data())
def test_t140_every_pattern_is_linear_on_repeated_pieces(name: str, data: st.DataObject) -> None:
    pattern = PATTERNS[name]
    letters = st.sampled_from(_alphabet(pattern))
    prefix = data.draw(st.lists(letters, max_size=4).map("".join), label="prefix")
    unit = data.draw(st.lists(letters, min_size=1, max_size=3).map("".join), label="unit")
    suffix = data.draw(st.lists(letters, max_size=2).map("".join), label="suffix")
    method = data.draw(st.sampled_from(["finditer", "fullmatch"]), label="method")

    def cost(n: int) -> int:
        model = RegexSteps(pattern)
        getattr(model, method)(prefix + unit * n + suffix)
        return model.steps

    pieces = max(4, _bound(pattern)) if _large(name) else max(12, 2 * _bound(pattern))
    assert grows_linearly(cost, pieces, slack=1.5)


def test_the_step_model_sees_the_shapes_that_backtrack() -> None:
    # The shapes of the issue, as they were written: the model counts them quadratic.
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 5000))
    for source, method, make in [
        (r" {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*", "fullmatch", "## x{}y"),
        (r"[ \t]*(?:[-*+]|\d{1,9}[.)])?(Read[ \t]+\S.*?)[ \t]*", "fullmatch", "Read x{}y"),
        (r"\{\{[^\n]*?\}\}", "finditer", "{{{}"),
        (r"\A +| +\Z", "finditer", "a{}b"),
        (r"#{2,}(?=\[)", "finditer", "{}x"),
    ]:
        run = {"## x{}y": " ", "Read x{}y": " ", "{{{}": "{{", "a{}b": " ", "{}x": "#"}[make]

        def cost(
            n: int, source: str = source, method: str = method, make: str = make, run: str = run
        ) -> int:
            model = RegexSteps(re.compile(source))
            getattr(model, method)(make.format(run * n))
            return model.steps

        assert not grows_linearly(cost, 40), source


# -- every parser, end to end ------------------------------------------------------------


def _skill(body: str) -> Any:
    return parse_skill(f"---\nname: a\ndescription: d\n---\n{body}".encode(), profile="compat")


def _described(text: str) -> Any:
    # A block scalar holds any line; the description is capped at 1,024 characters.
    value = text[:1000].replace("\n", "\n  ")
    return parse_skill(f"---\nname: a\ndescription: |\n  {value}x\n---\n".encode())


def _agent(body: str) -> Any:
    return parse_agent(f"---\nname: a\ndescription: d\n---\n{body}".encode(), profile="compat")


def _token_map(text: str) -> Any:
    return parse_token_map(
        json.dumps({"version": 1, "harnesses": ["pi"], "tools": {"t": {"pi": text}}}).encode()
    )


PARSERS: dict[str, Callable[[str], object]] = {
    "parse_skill": _skill,
    "parse_skill-description": _described,
    "parse_agent": _agent,
    "parse_token_map": _token_map,
    "find_hidden": find_hidden,
    "reveal": reveal,
    "terminal_line": terminal_line,
    "split_tools": split_tools,
    "log_safe": lambda text: log_safe(terminal_line(text)),
    "loads_strict": lambda text: loads_strict(
        json.dumps([text, {"k": [text]}]), max_bytes=1 << 20, max_depth=8
    ),
}
_METERED = (
    "skillguard._core.strict_yaml",
    "skillguard._skills.document",
    "skillguard._skills.fields",
    "skillguard._skills.names",
    "skillguard._skills.parse",
    "skillguard._core.text",
    "skillguard._core.tool_rules",
    "skillguard._core.strict_json",
    "skillguard._cli.ci",
    "skillguard._agents.parse",
    "skillguard._agents.tokenmap",
)
_FRAGMENTS = st.sampled_from(
    [" ", "\t", "\n", "#", "##", "`", "```", "~~~", "- ", "1. ", "Read ", "{{", "}}", "a",
     "(", ")", ",", "[", "\\", '"', "---", "\u200e", "\u200f", "\u05d0", "\u0627", "\u200c",
     "\u200d", "\ufe0f", "\u2764", "\U0001f468", "\U000e0067", "\U0001f3f4", "\u00e9"]
)  # fmt: skip


@pytest.mark.parametrize("parser", sorted(PARSERS))
@settings(max_examples=10)
@given(
    prefix=st.lists(_FRAGMENTS, max_size=3).map("".join),
    unit=st.lists(_FRAGMENTS, min_size=1, max_size=3).map("".join),
)
def test_t140_every_parser_does_work_in_proportion_to_its_input(
    parser: str, prefix: str, unit: str
) -> None:
    # Lines of skillguard's code run, and the steps of every module-level pattern it
    # calls: for a piece repeated four times as often, about four times the work.
    run = PARSERS[parser]
    meter = Meter()
    with pytest.MonkeyPatch.context() as patch:
        for name in _METERED:
            meter_module(patch, sys.modules[name], meter)

        def cost(n: int) -> int:
            meter.steps = 0
            text = prefix + unit * n + "a"
            return python_steps(lambda: run(text)) + meter.steps

        assert grows_linearly(cost, 32, slack=1.5)
