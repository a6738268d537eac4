"""Hostile arguments for the public API (T14): wrong types and booby-trapped objects."""

from __future__ import annotations

from hypothesis import strategies as st

__all__ = ["Booby", "BytesPath", "hostile_values"]


class Booby:
    """An object whose comparison, hash, path and string forms all raise."""

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("__eq__")

    def __hash__(self) -> int:
        raise RuntimeError("__hash__")

    def __fspath__(self) -> str:
        raise RuntimeError("__fspath__")

    def __str__(self) -> str:
        raise RuntimeError("__str__")

    def __repr__(self) -> str:
        return "Booby()"


class BytesPath:
    """A path-like object that returns bytes, which ``os.fspath`` passes through."""

    def __fspath__(self) -> bytes:
        return b"/tmp/skillguard-bytes-path"

    def __repr__(self) -> str:
        return "BytesPath()"


def _nested(depth: int) -> list[object]:
    value: list[object] = []
    for _ in range(depth):
        value = [value]
    return value


# Values a confused or hostile caller may pass anywhere: wrong types, wrong values,
# and objects that raise from the dunder methods a library is tempted to call. A value
# may become a path that skillguard creates, so the drawn text never starts with "/"
# nor climbs more than one folder: a test that uses these runs from a scratch folder.
hostile_values: st.SearchStrategy[object] = st.one_of(
    st.sampled_from(
        [
            None,
            True,
            False,
            0,
            -1,
            10**100,
            -(10**100),
            float("nan"),
            float("inf"),
            -0.5,
            b"",
            b"hello",
            "",
            "\x00",
            "hel\x00lo",
            "\ud800",
            "../x",
            # Absolute paths that can be neither created nor written: the callers
            # that create files (audit logs, trust stores) are called with these.
            "/",
            "/nonexistent-skillguard/passwd",
            ".",
            "x" * 100_000,
            [],
            ["hello"],
            {},
            {"name": "hello"},
            {"name": "x", 1: 2},
            (),
            frozenset({"hello"}),
            object(),
            BytesPath(),
            _nested(200),
            print,
        ]
    ),
    # Built fresh per example: Hypothesis hashes sampled values, and these refuse.
    st.builds(Booby),
    st.builds(lambda: [Booby()]),
    st.builds(lambda: {"name": Booby()}),
    st.integers(),
    st.floats(),
    st.binary(max_size=20),
    st.text(max_size=20).filter(lambda text: not text.startswith("/") and "../.." not in text),
    st.lists(st.text(max_size=5), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
)
