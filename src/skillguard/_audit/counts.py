"""Counts by name in bounded memory: the tables of an audit summary and report.

Rules (threat-model.md T190):

* A table keeps at most ``MAX_COUNTED_NAMES`` names, whatever the log holds: a log with
  a million distinct agent or skill names costs what one with a thousand does.
* While no more names than that have been seen, every count is exact, and so is the
  number of names: the table is a plain count.
* Past that, the table is the Space-Saving summary (Metwally, Agrawal and El Abbadi,
  2005): a new name takes the place of the name with the least count and starts from
  that count, which it keeps as its error. Every count is then a range, from the least
  a name can hold (its count less its error) to the most (its count), and any name that
  holds more than one record in ``MAX_COUNTED_NAMES`` of the table's is in the table,
  whenever it came. So a flood of distinct names, before or after the names that
  matter, cannot push them out of the table, as it could push out every name that came
  after the first thousand if the table kept the first names it saw. A name the table
  does not hold holds at most ``floor()`` records.
* ``records``, the number of records counted, is always exact.
* Two tables merge (the total of several logs) into one with the same bounds and the
  same guarantees: a name's range is the sum of its ranges, a name one table does not
  hold counting from 0 to that table's floor.
"""

from __future__ import annotations

import heapq
from typing import Any, Final

__all__ = ["MAX_COUNTED_NAMES", "MAX_SHOWN_NAMES", "TopCounts", "rest_line", "shown_table", "span"]

# Distinct names kept per table: a swarm has a few agents and at most hundreds of
# skills, so its tables stay exact; a forged log with a million names costs no more.
MAX_COUNTED_NAMES: Final = 1000
# Names listed per table of a summary, largest first (as the report shows them); the
# rest are summed on one line. Each table keeps ``MAX_COUNTED_NAMES`` to choose them.
MAX_SHOWN_NAMES: Final = 40


class TopCounts:
    """Counts by name, keeping at most *capacity* names (exact until more are seen)."""

    def __init__(self, capacity: int | None = None) -> None:
        self.capacity = MAX_COUNTED_NAMES if capacity is None else capacity
        self.records = 0
        # A name's count is the most it can hold; its error (absent when 0) how much of
        # that count may belong to names it replaced.
        self._counts: dict[str, int] = {}
        self._errors: dict[str, int] = {}
        # Built at the first replacement: (count when pushed, order, name), one entry
        # per name held; an entry whose count is stale is fixed when it reaches the top.
        self._heap: list[tuple[int, int, str]] | None = None
        self._order = 0
        self._floor = 0
        self._overflowed = False

    def __len__(self) -> int:
        """How many names the table holds (at most its capacity)."""
        return len(self._counts)

    @property
    def exact(self) -> bool:
        """Whether every count is exact: no name has been replaced or dropped."""
        return not self._overflowed

    @property
    def names(self) -> int | None:
        """How many distinct names were counted, when that is known (``exact``)."""
        return None if self._overflowed else len(self._counts)

    def floor(self) -> int:
        """The most records any name the table does not hold can have."""
        return self._floor

    def add(self, name: str) -> None:
        """Count one record of *name*."""
        self.records += 1
        counts = self._counts
        if name in counts:
            counts[name] += 1
        elif len(counts) < self.capacity:
            counts[name] = 1
        else:
            self._replace_least(name)

    def _replace_least(self, name: str) -> None:
        counts = self._counts
        heap = self._heap
        if heap is None:
            heap = self._heap = [(count, self._next(), held) for held, count in counts.items()]
            heapq.heapify(heap)
        # Every entry's count is at most its name's count, so once the top entry is
        # current it holds the least count of all.
        while True:
            least, order, held = heap[0]
            current = counts[held]
            if current == least:
                break
            heapq.heapreplace(heap, (current, order, held))
        heapq.heapreplace(heap, (least + 1, self._next(), name))
        del counts[held]
        self._errors.pop(held, None)
        counts[name] = least + 1
        self._errors[name] = least
        # The replaced name held at most *least*, and counts only grow.
        self._floor = least
        self._overflowed = True

    def _next(self) -> int:
        self._order += 1
        return self._order

    def top(self, count: int | None = None) -> list[tuple[str, int, int]]:
        """The *count* largest entries (all when ``None``), largest first, as ``(name,
        most, least)``; ties by name."""
        entries = sorted(self._counts.items(), key=lambda item: (-item[1], item[0]))
        if count is not None:
            entries = entries[:count]
        return [(name, most, most - self._errors.get(name, 0)) for name, most in entries]

    def merge(self, other: TopCounts) -> None:
        """Add *other*'s counts to this table's, keeping the capacity and the bounds."""
        ranges: dict[str, tuple[int, int]] = {}
        for name in self._counts.keys() | other._counts.keys():
            most = self._counts.get(name, self._floor) + other._counts.get(name, other._floor)
            least = self._least(name) + other._least(name)
            ranges[name] = (most, least)
        floor = self._floor + other._floor
        overflowed = self._overflowed or other._overflowed
        if len(ranges) > self.capacity:
            ordered = sorted(ranges.items(), key=lambda item: (-item[1][0], item[0]))
            floor = max(floor, ordered[self.capacity][1][0])
            ranges = dict(ordered[: self.capacity])
            overflowed = True
        self._counts = {name: most for name, (most, _) in ranges.items()}
        self._errors = {
            name: most - least for name, (most, least) in ranges.items() if most > least
        }
        self._heap = None
        self._floor = floor
        self._overflowed = overflowed
        self.records += other.records

    def _least(self, name: str) -> int:
        most = self._counts.get(name)
        return 0 if most is None else most - self._errors.get(name, 0)


# -- what a table shows (``audit summarize`` in text and JSON, ``audit report``) -------


def shown_table(
    counts: TopCounts, shown: int = MAX_SHOWN_NAMES
) -> tuple[dict[str, int], dict[str, Any]]:
    """The names a summary lists of one table (the *shown* largest, largest first, each
    with the most records it can hold), and what is known of the table:

    ``records`` (how many records named one: exact), ``names`` (how many distinct
    names: ``None`` once more than the table's capacity were seen), ``exact`` (every
    count exact), ``least`` (the least count of each listed name whose count is a
    range: approximate tables only), ``more_names`` (names not listed, ``None`` when
    not known) and ``more_records`` .. ``more_records_at_most`` (the records of the
    names not listed: one number when exact)."""
    top = counts.top(shown)
    facts: dict[str, Any] = {
        "records": counts.records,
        "names": counts.names,
        "exact": counts.exact,
        "least": {name: least for name, most, least in top if least < most},
        "more_names": None if counts.names is None else counts.names - len(top),
        "more_records": max(0, counts.records - sum(most for _, most, _ in top)),
        "more_records_at_most": counts.records - sum(least for _, _, least in top),
    }
    return {name: most for name, most, _ in top}, facts


def span(least: int, most: int) -> str:
    """A count as shown: one number when exact, else ``least to most``."""
    return str(most) if least == most else f"{least} to {most}"


def rest_line(facts: dict[str, Any], listed: int, capacity: int = MAX_COUNTED_NAMES) -> str | None:
    """What a table's *listed* names leave out, in words, or ``None`` (nothing)."""
    records = span(facts["more_records"], facts["more_records_at_most"])
    if facts["more_names"] is None:
        return f"and more than {capacity - listed} other names: {records} records"
    if facts["more_names"]:
        return f"and {facts['more_names']} other names: {records} records"
    return None
