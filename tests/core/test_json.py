"""The strict JSON entry point: caps first, no duplicate keys, no NaN, no recursion.

Test names that start with ``test_tN_`` stop threat ``TN`` of threat-model.md.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skillguard._core.strict_json import StrictJSONError, loads_strict

BAD = {
    "duplicate key": b'{"a": 1, "a": 2}',
    "nested duplicate key": b'{"a": {"b": 1, "b": 1}}',
    "NaN": b"[NaN]",
    "Infinity": b"[Infinity]",
    "-Infinity": b"[-Infinity]",
    "not UTF-8": b'["\xff"]',
    "not JSON": b"{'a': 1}",
    "trailing data": b"{} {}",
    "too deep": b"[" * 9 + b"]" * 9,
    "deep bomb": b"[" * 200_000,
}


@pytest.mark.parametrize("raw", BAD.values(), ids=BAD.keys())
def test_t31_ambiguous_or_hostile_json_is_refused(raw: bytes) -> None:
    with pytest.raises(StrictJSONError):
        loads_strict(raw, max_bytes=1 << 20, max_depth=8)
    if raw.isascii():  # the same document given as text
        with pytest.raises(StrictJSONError):
            loads_strict(raw.decode("ascii"), max_bytes=1 << 20, max_depth=8)


def test_the_caps_are_inclusive() -> None:
    document = b'{"a": [1]}'
    assert loads_strict(document, max_bytes=len(document), max_depth=2) == {"a": [1]}
    with pytest.raises(StrictJSONError):
        loads_strict(document, max_bytes=len(document) - 1, max_depth=2)
    with pytest.raises(StrictJSONError):
        loads_strict(document, max_bytes=len(document), max_depth=1)
    text = '"\u00e9\u00e9"'  # 4 characters, 6 bytes
    assert loads_strict(text, max_bytes=6, max_depth=1) == "\u00e9\u00e9"
    with pytest.raises(StrictJSONError):
        loads_strict(text, max_bytes=5, max_depth=1)


def test_brackets_and_escaped_quotes_inside_strings_do_not_count_as_nesting() -> None:
    document = json.dumps({"a": '[[[[{{{{\\"[[[['})
    assert loads_strict(document, max_bytes=1 << 10, max_depth=1) == {"a": '[[[[{{{{\\"[[[['}


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=20,
)


@given(JSON)
def test_what_json_writes_strict_json_reads_back(value: object) -> None:
    raw = json.dumps(value).encode()
    assert loads_strict(raw, max_bytes=1 << 20, max_depth=64) == value
