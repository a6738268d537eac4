"""Fuzz target: the C parser and the pure-Python parser give the same answer.

For any input, both YAML backends must return equal ``Skill`` values, or both must
refuse. (The refusal codes may differ: one parser can report a syntax error where
the other first meets a rule skillguard checks event by event.) The same input is
also read as a policy file (threat-model.md T60): both backends must compose the same
data and grant the same agents the same skills, tools and workspace mode, or both
must refuse. Run with atheris like parse_skill_fuzzer.py, with both seed corpora::

    python fuzz/differential_fuzzer.py WORK_CORPUS fuzz/corpus/parse_skill \\
        fuzz/corpus/policy -dict=fuzz/parse_skill_fuzzer.dict -max_len=8192

``check`` also runs under Hypothesis in the normal test suite.
"""

# No "from __future__" import here: the OSS-Fuzz coverage build prepends its own code to
# this file, and a future import must be the first statement of a module.
import sys
from collections.abc import Mapping

# fuzz/instrumented.py: only skillguard is instrumented, and every module of it is
# imported inside the hook (run as a script, this folder is on sys.path).
from instrumented import hook, import_every_module

with hook(__name__ == "__main__"):
    from skillguard import MalformedSkillError, Skill
    from skillguard._core.strict_yaml import has_c_parser, load_document
    from skillguard._skills.parse import parse_skill_with
    from skillguard._skills.policy import POLICY_LIMITS, AgentGrant, PolicyError, parse_policy_with

    import_every_module()


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


def _document_outcome(raw: bytes, backend: str) -> object:
    """The data a policy document composes to, or the refusal code."""
    try:
        return load_document(
            raw,
            POLICY_LIMITS,
            what="the policy file",
            backend=backend,  # type: ignore[arg-type]
            allow_empty=True,
        )[0]
    except MalformedSkillError as exc:
        return exc.code


def _policy_outcome(raw: bytes, backend: str) -> dict[str, AgentGrant] | str:
    """The grants a policy file gives, or the refusal reason."""
    try:
        return dict(parse_policy_with(raw, backend=backend).agents)  # type: ignore[arg-type]
    except PolicyError as exc:
        return exc.reason


def _agree(c_result: object, pure_result: object, accepted: type) -> None:
    if (isinstance(c_result, accepted) or isinstance(pure_result, accepted)) and (
        c_result != pure_result
    ):
        raise AssertionError(f"backends disagree: c={c_result!r} pure={pure_result!r}")


def check_policy(data: bytes) -> None:
    """Both backends read *data* as the same policy (and the same data), or both refuse."""
    if not has_c_parser():
        return
    _agree(_document_outcome(data, "c"), _document_outcome(data, "pure"), Mapping)
    _agree(_policy_outcome(data, "c"), _policy_outcome(data, "pure"), dict)


def check(data: bytes) -> None:
    """Both backends accept with equal results, or both refuse: as a skill, as a policy."""
    if not has_c_parser():
        return
    for profile in ("strict", "compat"):
        _agree(_outcome(data, "c", profile), _outcome(data, "pure", profile), Skill)
    check_policy(data)


def main() -> None:
    import atheris

    atheris.Setup(sys.argv, check)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
