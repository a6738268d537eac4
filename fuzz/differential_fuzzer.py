"""Fuzz target: the C parser and the pure-Python parser give the same answer.

For any input, both YAML backends must return equal ``Skill`` values, or both must
refuse. (The refusal codes may differ: one parser can report a syntax error where
the other first meets a rule skillguard checks event by event.) Run with
atheris like parse_skill_fuzzer.py; ``check`` also runs under Hypothesis in the
normal test suite.
"""

from __future__ import annotations

import sys

from skillguard import MalformedSkillError, Skill
from skillguard._parse import parse_skill_with
from skillguard._yaml import has_c_parser


def _outcome(raw: bytes, backend: str, profile: str) -> Skill | str:
    try:
        return parse_skill_with(
            raw,
            expected_name=None,
            limits=None,
            profile=profile,  # type: ignore[arg-type]
            backend=backend,  # type: ignore[arg-type]
        )
    except MalformedSkillError as exc:
        return exc.code


def check(data: bytes) -> None:
    """Both backends accept with equal results, or both refuse."""
    if not has_c_parser():
        return
    for profile in ("strict", "compat"):
        c_result = _outcome(data, "c", profile)
        pure_result = _outcome(data, "pure", profile)
        accepted = isinstance(c_result, Skill) or isinstance(pure_result, Skill)
        if accepted and c_result != pure_result:
            raise AssertionError(f"backends disagree: c={c_result!r} pure={pure_result!r}")


def main() -> None:
    import atheris

    # skillguard is already imported above: instrument every loaded function so that
    # libFuzzer sees coverage of the parser (and of ruamel's pure parser).
    atheris.instrument_all()
    atheris.Setup(sys.argv, check)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
