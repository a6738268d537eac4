"""Counting work, never time: how the suite checks that a parser's cost grows linearly.

Two counters (threat-model.md T140-T144):

* ``python_steps(run)``: the lines of skillguard's own code that *run* executes, counted
  through ``sys.settrace`` (a loop that rescans a line per character shows up as lines
  run per character).
* ``RegexSteps``: a backtracking matcher for the subset of ``re`` syntax skillguard uses,
  built from ``re``'s own parse of a pattern, that counts its steps: one per element
  tried at a position, one per character a repeat takes. It makes the choices ``re``
  makes (greedy and lazy repeats, alternatives in order, lookarounds, backreferences),
  so a pattern that backtracks over a run shows the same growth here that it costs in
  C; its answers are checked against ``re``'s own on every call.

``grows_linearly(cost, size)`` compares the cost at four times *size* with the cost at
*size*: at most about four times for a linear cost, sixteen for a quadratic one.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

try:  # Python 3.11 and later
    from re import _constants as sre_constants  # type: ignore[attr-defined]
    from re import _parser as sre_parse  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - Python 3.10
    import sre_constants
    import sre_parse

if TYPE_CHECKING:
    from collections.abc import Callable

import skillguard

__all__ = [
    "Meter",
    "RegexSteps",
    "grows_linearly",
    "meter_module",
    "python_steps",
    "sre_constants",
    "sre_parse",
]

_PACKAGE = str(Path(skillguard.__file__).resolve().parent)
_C = sre_constants


def python_steps(run: Callable[[], object]) -> int:
    """How many lines of skillguard's code *run* executes (any exception it raises is
    the caller's to expect)."""
    count = 0

    def local(_frame: Any, event: str, _arg: object) -> Any:
        nonlocal count
        if event == "line":
            count += 1
        return local

    def tracer(frame: Any, event: str, _arg: object) -> Any:
        if event == "call" and frame.f_code.co_filename.startswith(_PACKAGE):
            return local
        return None

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        run()
    except Exception:  # noqa: BLE001, S110 - the cost is what is measured here
        pass
    finally:
        sys.settrace(previous)
    return count


def grows_linearly(cost: Callable[[int], int], size: int, *, slack: float = 1.1) -> bool:
    """Whether *cost* at four times *size* is at most about four times its cost at
    *size* (*slack* for the rounding of sizes). A fixed part only lowers the ratio; a
    quadratic part makes it sixteen. *size* must be past any bound the work has (a
    repeat of at most 62 characters grows up to 62, then stays)."""
    return cost(4 * size) <= 4 * slack * max(cost(size), 1)


_CATEGORIES: dict[Any, Callable[[str], bool]] = {
    _C.CATEGORY_DIGIT: str.isdecimal,
    _C.CATEGORY_NOT_DIGIT: lambda ch: not ch.isdecimal(),
    _C.CATEGORY_SPACE: str.isspace,
    _C.CATEGORY_NOT_SPACE: lambda ch: not ch.isspace(),
    _C.CATEGORY_WORD: lambda ch: ch.isalnum() or ch == "_",
    _C.CATEGORY_NOT_WORD: lambda ch: not (ch.isalnum() or ch == "_"),
}


class RegexSteps:
    """A step-counting backtracking matcher for one compiled pattern (no flags but
    DOTALL and MULTILINE, which skillguard's patterns are the only ones to use)."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        assert not pattern.flags & ~(re.UNICODE | re.DOTALL | re.MULTILINE), pattern
        self.pattern = pattern
        self.tree = sre_parse.parse(pattern.pattern, pattern.flags)
        self.dotall = bool(pattern.flags & re.DOTALL)
        self.multiline = bool(pattern.flags & re.MULTILINE)
        self.steps = 0
        self.text = ""
        self.end = 0
        self.groups: dict[int, tuple[int, int]] = {}

    # -- the public calls, each checked against re --------------------------------
    # As in re, the text ends at *endpos* (a lookahead sees no further), while a
    # lookbehind sees before *pos*.

    def search(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> tuple[int, int] | None:
        self._start(text, endpos)
        found = self._search(pos)
        real = self.pattern.search(text, pos, endpos)
        assert found == (None if real is None else real.span()), (self.pattern, text)
        return found

    def match(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> bool:
        self._start(text, endpos)
        found = self._match(pos, lambda _at: True)
        assert found == (self.pattern.match(text, pos, endpos) is not None), self.pattern
        return found

    def fullmatch(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> bool:
        self._start(text, endpos)
        found = self._match(pos, lambda at: at == self.end)
        real = self.pattern.fullmatch(text, pos, endpos)
        assert found == (real is not None), (self.pattern, text)
        return found

    def finditer(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> list[tuple[int, int]]:
        self._start(text, endpos)
        spans: list[tuple[int, int]] = []
        at = pos
        while at <= self.end:
            found = self._search(at, not_empty_at=spans[-1][1] if spans else None)
            if found is None:
                break
            spans.append(found)
            at = found[1]
        assert spans == [m.span() for m in self.pattern.finditer(text, pos, endpos)], self.pattern
        return spans

    def _start(self, text: str, endpos: int) -> None:
        self.text = text[:endpos]
        self.end = len(self.text)

    # -- matching ------------------------------------------------------------------

    def _search(self, pos: int, not_empty_at: int | None = None) -> tuple[int, int] | None:
        for start in range(pos, self.end + 1):
            ends: list[int] = []

            def accept(at: int, start: int = start, ends: list[int] = ends) -> bool:
                if at == start and start == not_empty_at:
                    return False  # re never yields an empty match where one ended
                ends.append(at)
                return True

            self.groups = {}
            if self._match(start, accept):
                return start, ends[0]
        return None

    def _match(self, pos: int, then: Callable[[int], bool]) -> bool:
        return self._seq(self.tree.data, 0, pos, then)

    def _seq(self, items: list[Any], index: int, pos: int, then: Callable[[int], bool]) -> bool:
        self.steps += 1
        if index == len(items):
            return then(pos)
        op, av = items[index]

        def rest(at: int) -> bool:
            return self._seq(items, index + 1, at, then)

        if op in (_C.MAX_REPEAT, _C.MIN_REPEAT):
            return self._repeat(op is _C.MAX_REPEAT, av, pos, rest)
        if op is _C.SUBPATTERN:
            group, _add, _del, sub = av
            return self._group(group, sub, pos, rest)
        if op is _C.BRANCH:
            return any(self._seq(branch.data, 0, pos, rest) for branch in av[1])
        if op in (_C.ASSERT, _C.ASSERT_NOT):
            return self._assert(op is _C.ASSERT, av, pos) and rest(pos)
        if op is _C.AT:
            return self._at(av, pos) and rest(pos)
        if op is _C.GROUPREF:
            start, end = self.groups.get(av, (-1, -1))
            if start < 0:
                return False
            size = end - start
            self.steps += size
            return self.text.startswith(self.text[start:end], pos) and rest(pos + size)
        return pos < self.end and self._one(op, av, self.text[pos]) and rest(pos + 1)

    def _group(self, group: int | None, sub: Any, pos: int, rest: Callable[[int], bool]) -> bool:
        if group is None:
            return self._seq(sub.data, 0, pos, rest)
        saved = self.groups.get(group)

        def close(at: int) -> bool:
            before = self.groups.get(group)
            self.groups[group] = (pos, at)
            if rest(at):
                return True
            if before is None:
                self.groups.pop(group, None)
            else:
                self.groups[group] = before
            return False

        if self._seq(sub.data, 0, pos, close):
            return True
        if saved is not None:
            self.groups[group] = saved
        return False

    def _repeat(self, greedy: bool, av: Any, pos: int, rest: Callable[[int], bool]) -> bool:
        low, high, sub = av
        items = sub.data
        if len(items) == 1 and items[0][0] not in _COMPOUND:
            # One character at a time, as re's REPEAT_ONE: take the run, then give back.
            op, one = items[0]
            limit = self.end if high == _C.MAXREPEAT else min(self.end, pos + high)
            run = pos
            while run < limit and self._one(op, one, self.text[run]):
                run += 1
                self.steps += 1
            if run - pos < low:
                return False
            counts = range(run, pos + low - 1, -1) if greedy else range(pos + low, run + 1)
            for at in counts:
                self.steps += 1
                if rest(at):
                    return True
            return False

        def again(count: int, at: int) -> bool:
            self.steps += 1
            more = high == _C.MAXREPEAT or count < high

            def step(after: int) -> bool:
                # An empty iteration ends the repeat (re does the same).
                return after != at and again(count + 1, after)

            if count < low:
                return self._seq(items, 0, at, step)
            if greedy:
                return (more and self._seq(items, 0, at, step)) or rest(at)
            return rest(at) or (more and self._seq(items, 0, at, step))

        return again(0, pos)

    def _assert(self, positive: bool, av: Any, pos: int) -> bool:
        direction, sub = av
        saved = dict(self.groups)
        if direction == 1:
            found = self._seq(sub.data, 0, pos, lambda _at: True)
        else:
            width, _ = sub.getwidth()
            start = pos - width
            found = start >= 0 and self._seq(sub.data, 0, start, lambda at: at == pos)
        if not positive or not found:
            self.groups = saved
        return found == positive

    def _at(self, where: Any, pos: int) -> bool:
        text = self.text
        if where is _C.AT_BEGINNING_STRING:
            return pos == 0
        if where is _C.AT_END_STRING:
            return pos == self.end
        if where is _C.AT_BEGINNING:
            return pos == 0 or (self.multiline and text[pos - 1] == "\n")
        if where is _C.AT_END:
            if self.multiline:
                return pos == self.end or text[pos] == "\n"
            return pos == self.end or (pos == self.end - 1 and text[pos] == "\n")
        raise AssertionError(f"no model for {where}")

    def _one(self, op: Any, av: Any, ch: str) -> bool:
        if op is _C.LITERAL:
            return bool(ord(ch) == av)
        if op is _C.NOT_LITERAL:
            return bool(ord(ch) != av)
        if op is _C.ANY:
            return self.dotall or ch != "\n"
        if op is _C.IN:
            negate = False
            hit = False
            for kind, value in av:
                if kind is _C.NEGATE:
                    negate = True
                elif kind is _C.LITERAL:
                    hit = hit or ord(ch) == value
                elif kind is _C.RANGE:
                    hit = hit or value[0] <= ord(ch) <= value[1]
                elif kind is _C.CATEGORY:
                    hit = hit or _CATEGORIES[value](ch)
                else:
                    raise AssertionError(f"no model for {kind} in a class")
            return hit != negate
        raise AssertionError(f"no model for {op}")


_COMPOUND = frozenset(
    {
        _C.SUBPATTERN,
        _C.BRANCH,
        _C.MAX_REPEAT,
        _C.MIN_REPEAT,
        _C.ASSERT,
        _C.ASSERT_NOT,
        _C.AT,
        _C.GROUPREF,
    }
)


class Meter:
    """Counts the steps of every call made to the patterns it wraps (see
    ``meter_module``); each call is also made to the real pattern, whose answer is
    returned."""

    def __init__(self) -> None:
        self.steps = 0
        self._models: dict[re.Pattern[str], RegexSteps] = {}

    def count(self, pattern: re.Pattern[str], method: str, *args: Any) -> None:
        model = self._models.get(pattern)
        if model is None:
            model = self._models[pattern] = RegexSteps(pattern)
        model.steps = 0
        getattr(model, method)(*args)
        self.steps += model.steps


class _Metered:
    """A compiled pattern whose calls a ``Meter`` counts."""

    def __init__(self, pattern: re.Pattern[str], meter: Meter) -> None:
        self._pattern = pattern
        self._meter = meter

    def __getattr__(self, name: str) -> Any:
        return getattr(self._pattern, name)

    def search(self, text: str, *args: int) -> re.Match[str] | None:
        self._meter.count(self._pattern, "search", text, *args)
        return self._pattern.search(text, *args)

    def match(self, text: str, *args: int) -> re.Match[str] | None:
        self._meter.count(self._pattern, "match", text, *args)
        return self._pattern.match(text, *args)

    def fullmatch(self, text: str, *args: int) -> re.Match[str] | None:
        self._meter.count(self._pattern, "fullmatch", text, *args)
        return self._pattern.fullmatch(text, *args)

    def finditer(self, text: str, *args: int) -> Any:
        self._meter.count(self._pattern, "finditer", text, *args)
        return self._pattern.finditer(text, *args)

    def findall(self, text: str, *args: int) -> list[Any]:
        self._meter.count(self._pattern, "finditer", text, *args)
        return self._pattern.findall(text, *args)

    def sub(self, repl: Any, text: str, count: int = 0) -> str:
        self._meter.count(self._pattern, "finditer", text)
        return self._pattern.sub(repl, text, count)


def meter_module(monkeypatch: Any, module: Any, meter: Meter) -> None:
    """Make *meter* count every call to a pattern that *module* holds at its top."""
    for name, value in vars(module).items():
        if isinstance(value, re.Pattern):
            monkeypatch.setattr(module, name, _Metered(value, meter))
