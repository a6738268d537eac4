"""Fuzz target: ``parse_skill`` returns a ``Skill`` or raises ``MalformedSkillError``.

Any other exception, a hang or a crash is a bug. Each input is fed whole and as
truncations (a hostile file is often a valid one cut short). Run with atheris::

    python fuzz/parse_skill_fuzzer.py WORK_CORPUS fuzz/corpus/parse_skill \
        -dict=fuzz/parse_skill_fuzzer.dict -max_len=8192 -runs=100000

``check`` is also run by the normal test suite as a Hypothesis test
(tests/test_fuzz_targets.py), so CI exercises this invariant on every run.
"""

# No "from __future__" import here: the OSS-Fuzz coverage build prepends its own code to
# this file, and a future import must be the first statement of a module.
import sys

# fuzz/instrumented.py: only skillguard is instrumented, and every module of it is
# imported inside the hook (run as a script, this folder is on sys.path).
from instrumented import hook, import_every_module

with hook(__name__ == "__main__"):
    import skillguard
    from skillguard import Limits, MalformedSkillError

    import_every_module()

# Small limits so that the fuzzer reaches every "over the limit" path quickly.
SMALL = Limits(
    max_skill_bytes=4096,
    max_frontmatter_bytes=2048,
    max_depth=4,
    max_nodes=64,
    max_scalar_bytes=256,
)


def _one(raw: bytes) -> None:
    for limits in (None, SMALL):
        for profile in ("strict", "compat"):
            for expected in (None, "demo"):
                try:
                    skill = skillguard.parse_skill(
                        raw, expected_name=expected, limits=limits, profile=profile
                    )
                except MalformedSkillError as exc:
                    if not exc.code or exc.kind != "malformed":
                        raise AssertionError("malformed error without a code") from exc
                    continue
                if not isinstance(skill, skillguard.Skill):
                    raise AssertionError("parse_skill returned something else than a Skill")
                if skill.size != len(raw):
                    raise AssertionError("Skill.size differs from the input length")


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
