"""Fuzz target: ``check_skill``, the error collector behind ``skillguard validate``.

Invariants (threat-model.md T119): for any bytes, ``check_skill`` returns a
``SkillCheck`` holding either a skill or at least one error, never both; it agrees with
``parse_skill`` (the same skill, or ``parse_skill``'s error as its first error); every
error is a ``MalformedSkillError`` with a code; and every error points inside the
document: its line exists in the file and its column, where it has one, in that line.
Only an error about the whole document (too large, a frontmatter that never closes, a
required field missing) may have no line. Any other exception, a hang or a crash is a
bug. Each input is fed whole and as truncations. Run with atheris::

    python fuzz/check_skill_fuzzer.py WORK_CORPUS fuzz/corpus/parse_skill \
        -dict=fuzz/parse_skill_fuzzer.dict -max_len=8192 -len_control=0 -runs=100000

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
    from skillguard import Limits, MalformedSkillError
    from skillguard._skills.parse import check_skill

    import_every_module()

SMALL = Limits(
    max_skill_bytes=4096,
    max_frontmatter_bytes=2048,
    max_depth=4,
    max_nodes=64,
    max_scalar_bytes=256,
)

# Errors about the document as a whole, which no single place in it can be blamed for:
# its size, a frontmatter that never closes, a required field that is not there.
WHOLE_DOCUMENT = frozenset(
    {"too_large", "frontmatter_too_large", "no_closing_fence", "missing_field"}
)


def _lines(raw: bytes) -> list[str]:
    """The file's lines as skillguard numbers them: after a leading BOM, CRLF and a lone
    CR each end a line, like LF (``_yaml.decode_utf8``)."""
    text = raw.decode("utf-8", "replace").removeprefix("\ufeff")
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _first_bad_line(raw: bytes) -> int | None:
    """The line of the first byte that is not UTF-8, if there is one."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return len(_lines(raw[: exc.start]))
    return None


def _placed(error: MalformedSkillError, lines: list[str]) -> None:
    if not error.code or error.kind != "malformed":
        raise AssertionError("malformed error without a code")
    if error.line is None:
        if error.code not in WHOLE_DOCUMENT:
            raise AssertionError(f"{error.code} error without a line")
        if error.column is not None:
            raise AssertionError("a column without a line")
        return
    if not 1 <= error.line <= len(lines):
        raise AssertionError(f"{error.code} on line {error.line} of {len(lines)}")
    if error.column is not None and not 1 <= error.column <= len(lines[error.line - 1]) + 1:
        raise AssertionError(f"{error.code} at column {error.column} past its line's end")


def _one(raw: bytes) -> None:
    lines = _lines(raw)
    bad_line = _first_bad_line(raw)
    for limits in (None, SMALL):
        for profile in ("strict", "compat"):
            for expected in (None, "demo"):
                checked = check_skill(raw, expected_name=expected, limits=limits, profile=profile)
                if (checked.skill is None) == (not checked.errors):
                    raise AssertionError("check_skill returned both a skill and errors, or neither")
                for error in checked.errors:
                    _placed(error, lines)
                    if error.code == "bad_encoding" and error.line != bad_line:
                        raise AssertionError("bad_encoding is not on the first bad byte's line")
                try:
                    skill = skillguard.parse_skill(
                        raw, expected_name=expected, limits=limits, profile=profile
                    )
                except MalformedSkillError as exc:
                    if not checked.errors or checked.errors[0].code != exc.code:
                        raise AssertionError("parse_skill's error is not the first one") from exc
                else:
                    if skill != checked.skill:
                        raise AssertionError("check_skill and parse_skill disagree")


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
