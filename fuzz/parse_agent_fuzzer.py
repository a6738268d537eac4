"""Fuzz target: ``parse_agent`` returns an ``AgentDefinition`` or raises
``MalformedSkillError`` (threat-model.md T70).

Any other exception, a hang or a crash is a bug. Each input is fed whole and as
truncations. Run with atheris::

    python fuzz/parse_agent_fuzzer.py WORK_CORPUS fuzz/corpus/parse_agent \
        -dict=fuzz/parse_skill_fuzzer.dict -max_len=8192 -runs=100000

``check`` also runs in the normal test suite as a Hypothesis test
(tests/test_fuzz_targets.py).
"""

# No "from __future__" import here: the OSS-Fuzz coverage build prepends its own code to
# this file, and a future import must be the first statement of a module.
import sys

# fuzz/instrumented.py: only skillguard is instrumented, and every module of it is
# imported inside the hook (run as a script, this folder is on sys.path).
from instrumented import hook, import_every_module

with hook(__name__ == "__main__"):
    import skillguard
    import skillguard.agents
    from skillguard import Limits, MalformedSkillError

    import_every_module()

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
            try:
                agent = skillguard.agents.parse_agent(raw, limits=limits, profile=profile)
            except MalformedSkillError as exc:
                if not exc.code or exc.kind != "malformed":
                    raise AssertionError("malformed error without a code") from exc
                continue
            if not isinstance(agent, skillguard.agents.AgentDefinition):
                raise AssertionError("parse_agent returned something else")
            if agent.size != len(raw):
                raise AssertionError("AgentDefinition.size differs from the input length")
            if agent.persona != agent.description and agent.persona not in agent.full_body:
                raise AssertionError("the persona is neither the description nor body text")


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
