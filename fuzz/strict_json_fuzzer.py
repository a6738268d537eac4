"""Fuzz target: the strict JSON reader and the two seed-001 documents it feeds.

Invariants (threat-model.md T100): ``loads_strict`` returns a value or raises
``StrictJSONError`` with one of its documented codes, for bytes and for text alike;
a document it accepts means the same to Python's ``json`` (no parser differential);
``parse_frontmatter`` and ``parse_token_map`` return a value or raise
``MalformedSkillError``. Any other exception, a hang or a crash is a bug. Each input is
fed whole and as truncations. Run with atheris::

    python fuzz/strict_json_fuzzer.py WORK_CORPUS fuzz/corpus/strict_json -max_len=4096

``check`` also runs in the normal test suite as a Hypothesis test
(tests/agents/test_compose.py).
"""

# No "from __future__" import here: the OSS-Fuzz coverage build prepends its own code to
# this file, and a future import must be the first statement of a module.
import json
import math
import sys

# fuzz/instrumented.py: only skillguard is instrumented, and every module of it is
# imported inside the hook (run as a script, this folder is on sys.path).
from instrumented import hook, import_every_module

with hook(__name__ == "__main__"):
    from skillguard import MalformedSkillError
    from skillguard._agents.compose_read import parse_frontmatter
    from skillguard._core.strict_json import StrictJSONError, loads_strict
    from skillguard.agents import parse_token_map

    import_every_module()

CODES = frozenset(
    {
        "too_large",
        "bad_encoding",
        "too_deep",
        "json_comment",
        "duplicate_key",
        "json_non_finite",
        "json_syntax",
    }
)


def _same(value: object, other: object) -> bool:
    # -0.0 == 0.0 and a float that overflows to inf are the only legal surprises.
    if isinstance(value, float) and isinstance(other, float):
        return value == other or (math.isinf(value) and math.isinf(other))
    return value == other


def _one(raw: bytes) -> None:
    for document in (raw, raw.decode("utf-8", "replace")):
        try:
            value = loads_strict(document, max_bytes=2048, max_depth=6)
        except StrictJSONError as exc:  # noqa: PERF203 - each form is checked on its own
            if exc.code not in CODES:
                raise AssertionError(f"unknown code {exc.code!r}") from exc
        else:
            if not _same(value, json.loads(document)):
                raise AssertionError("strict JSON and json.loads disagree")
    for parse in (parse_frontmatter, parse_token_map):
        try:
            parse(raw)
        except MalformedSkillError as exc:  # noqa: PERF203 - each parser is checked on its own
            if not exc.code or exc.kind != "malformed":
                raise AssertionError("malformed error without a code") from exc


def check(data: bytes) -> None:
    """The invariant, for one input and its truncations."""
    _one(data)
    for cut in (len(data) // 2, len(data) - 1):
        if 0 <= cut < len(data):
            _one(data[:cut])


def main() -> None:
    import atheris

    atheris.Setup(sys.argv, check)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
