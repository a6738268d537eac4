"""Bounded counts by name (``_auditcount.TopCounts``), the tables of a summary and report.

Test names that start with ``test_tN_`` stop threat ``TN`` of threat-model.md.
"""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from skillguard._audit.counts import MAX_COUNTED_NAMES, TopCounts


def counted(names: list[str], capacity: int | None = None) -> TopCounts:
    table = TopCounts(capacity)
    for name in names:
        table.add(name)
    return table


def check_bounds(table: TopCounts, truth: Counter[str]) -> None:
    """What a table claims holds for the true counts: each kept name's range holds its
    count, a name not kept holds at most the floor, the records are exact."""
    kept = {name: (most, least) for name, most, least in table.top()}
    assert len(kept) <= table.capacity
    assert table.records == sum(truth.values())
    for name, true in truth.items():
        if name in kept:
            most, least = kept[name]
            assert least <= true <= most, (name, least, true, most)
        else:
            assert true <= table.floor(), (name, true, table.floor())
    if table.exact:
        assert {name: most for name, (most, _) in kept.items()} == dict(truth)
        assert table.names == len(truth)
    else:
        assert table.names is None


def test_t190_a_table_is_exact_while_it_holds_every_name() -> None:
    names = [f"skill-{n % 700}" for n in range(5000)]
    table = counted(names)
    assert table.exact
    assert table.names == 700
    assert table.floor() == 0
    assert table.top(2) == [("skill-0", 8, 8), ("skill-1", 8, 8)]
    check_bounds(table, Counter(names))


def test_t190_a_table_keeps_a_bounded_number_of_names_whatever_it_counts() -> None:
    # 50,000 distinct names: the table holds its capacity, and the count of records
    # stays exact.
    names = [f"skill-{n}" for n in range(50_000)]
    table = counted(names)
    assert len(table) == MAX_COUNTED_NAMES
    assert not table.exact
    assert table.names is None
    assert table.records == 50_000
    check_bounds(table, Counter(names))


def test_t190_a_flood_of_names_cannot_push_out_a_name_that_matters() -> None:
    # Keeping the first names seen would lose "exfiltrate" behind a flood that came
    # first, and count it with the rest; a flood after it would leave it alone.
    # Space-Saving keeps every name holding more than records / capacity: here 5,100
    # records over 100 places, and "exfiltrate" holds 100 of them.
    flood = [f"decoy-{n}" for n in range(5000)]
    for names in (
        flood + ["exfiltrate"] * 100,  # the flood first
        ["exfiltrate"] * 100 + flood,  # the flood after
        flood[:2500] + ["exfiltrate"] * 100 + flood[2500:],
    ):
        table = counted(names, capacity=100)
        (name, most, least), *_ = table.top(1)
        assert name == "exfiltrate"
        assert least <= 100 <= most
        check_bounds(table, Counter(names))


def test_t190_the_cost_of_a_name_does_not_grow_with_the_table() -> None:
    # Each replacement fixes at most the heap entries whose counts went stale since
    # they were pushed: the heap never holds more entries than the table holds names.
    table = TopCounts(10)
    for n in range(10_000):
        table.add(f"n{n % 37}")
        assert table._heap is None or len(table._heap) == len(table) <= 10


def test_t190_merged_tables_keep_their_bounds() -> None:
    first = [f"a-{n % 150}" for n in range(3000)] + ["shared"] * 400
    second = [f"b-{n}" for n in range(2000)] + ["shared"] * 300
    total = counted(first, capacity=100)
    total.merge(counted(second, capacity=100))
    assert len(total) <= 100
    assert total.top(1)[0][0] == "shared"
    check_bounds(total, Counter(first + second))


def test_t190_exact_tables_merge_exactly() -> None:
    first, second = ["a", "b", "a"], ["b", "c"]
    total = counted(first)
    total.merge(counted(second))
    assert total.exact
    assert total.top() == [("a", 2, 2), ("b", 2, 2), ("c", 1, 1)]
    assert total.names == 3


def test_t190_merging_past_the_capacity_makes_a_table_approximate() -> None:
    total = counted(["a"] * 5 + ["b"] * 3, capacity=2)
    total.merge(counted(["c"], capacity=2))
    assert not total.exact
    assert total.top() == [("a", 5, 5), ("b", 3, 3)]
    assert total.floor() == 1
    check_bounds(total, Counter({"a": 5, "b": 3, "c": 1}))


_NAMES = st.lists(st.sampled_from([f"n{i}" for i in range(30)]), max_size=300)


@settings(max_examples=200, deadline=None)
@given(names=_NAMES, capacity=st.integers(min_value=1, max_value=12))
def test_t190_every_count_shown_holds_the_truth(names: list[str], capacity: int) -> None:
    table = counted(names, capacity)
    check_bounds(table, Counter(names))
    # One stream: every record is in exactly one count.
    assert sum(most for _, most, _ in table.top()) == len(names)


@settings(max_examples=200, deadline=None)
@given(
    parts=st.lists(_NAMES, min_size=1, max_size=5),
    capacity=st.integers(min_value=1, max_value=12),
)
def test_t190_every_merged_count_shown_holds_the_truth(
    parts: list[list[str]], capacity: int
) -> None:
    total = TopCounts(capacity)
    for part in parts:
        total.merge(counted(part, capacity))
    check_bounds(total, Counter(name for part in parts for name in part))
