"""The events path (libyaml's C event stream) against the reference reading (ruamel's
pure-Python parser) on real skills and on generated frontmatter of the common shapes:
the same files accepted with equal results, the others refused with the same code
(threat-model.md T6, T60). The real skills are a sample kept as fixtures
(``tests/fixtures/corpus_sample/README.md`` names their source and licence)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from skillguard import MalformedSkillError, Skill
from skillguard._core.strict_yaml import has_c_parser
from skillguard._skills.parse import parse_skill_with

pytestmark = pytest.mark.skipif(not has_c_parser(), reason="needs ruamel's C parser")

SAMPLE = Path(__file__).parent.parent / "fixtures" / "corpus_sample"
REAL = sorted(SAMPLE.glob("*/*/SKILL.md"))


def _outcome(raw: bytes, backend: str, profile: str, expected: str | None) -> Skill | str:
    try:
        return parse_skill_with(
            raw,
            expected_name=expected,
            limits=None,
            profile=profile,  # type: ignore[arg-type]
            backend=backend,  # type: ignore[arg-type]
        )
    except MalformedSkillError as exc:
        return exc.code


def _disagreements(raw: bytes, expected: str | None, *, syntax_first: bool = False) -> list[str]:
    """Where the backends differ. With *syntax_first*, two refusals may differ when one
    of them is ``yaml_syntax``: one grammar refuses the text before the other parser
    reaches the rule skillguard checks event by event (both refuse all the same)."""
    found = []
    for profile in ("strict", "compat"):
        c = _outcome(raw, "c", profile, expected)
        pure = _outcome(raw, "pure", profile, expected)
        if c == pure:
            continue
        refusals = isinstance(c, str) and isinstance(pure, str)
        if syntax_first and refusals and "yaml_syntax" in (c, pure):
            continue
        found.append(f"{profile}: c={c!r} pure={pure!r}")
    return found


_WORDS = ("deploy", "review", "pdf", "tables", "merge", "logs", "cache", "query", "notes")
_VALUES = (
    "plain words here",
    '"double quoted: with a colon"',
    "'single quoted # not a comment'",
    '"an escape \\u00e9 and a tab\\t"',
    "café, naïve, 東京",
    "value # with a comment",
    "1.0",
    "on",
    "",
    "[a, b, c]",
    "{k: v}",
    "|\n  literal line one\n  literal line two",
    ">-\n  folded line one\n  folded line two",
    "a: b",
    "&anchor value",
    "*alias",
    "!!str tagged",
    '"\tquoted tab"',
    "\ttab before",
    "[a:b]",
    "<<: merge",
)


def _generated(count: int, seed: int = 25) -> list[bytes]:
    """Frontmatter of the shapes real skills use (flat plain scalars, short lists, a
    nested metadata mapping), with each rule's breakers mixed in at random."""
    rng = random.Random(seed)  # noqa: S311 - a fixed test set, not a secret
    documents = []
    for index in range(count):
        lines = ["---", f"name: skill-{index}", f"description: {rng.choice(_VALUES[:6])}"]
        for _ in range(rng.randint(0, 4)):
            key = rng.choice((*_WORDS, "license", "allowed-tools", "metadata", "version"))
            shape = rng.random()
            if shape < 0.5:
                lines.append(f"{key}: {rng.choice(_VALUES)}")
            elif shape < 0.75:
                lines.append(f"{key}:")
                lines.extend(f"  - {rng.choice(_VALUES[:7])}" for _ in range(rng.randint(1, 3)))
            else:
                lines.append(f"{key}:")
                lines.extend(
                    f"  {rng.choice(_WORDS)}: {rng.choice(_VALUES[:7])}"
                    for _ in range(rng.randint(1, 3))
                )
        lines += ["---", "# Body", "", "Some text."]
        documents.append(("\n".join(lines) + "\n").encode())
    return documents


def test_real_sample_is_there() -> None:
    # The fixtures this module reads: a missing folder must fail, not pass empty.
    assert len(REAL) >= 30


@pytest.mark.parametrize("path", REAL, ids=lambda path: path.parent.name[:40])
def test_t6_backends_agree_on_real_skills(path: Path) -> None:
    raw = path.read_bytes()
    assert _disagreements(raw, path.parent.name) == []
    assert _disagreements(raw, None) == []


def test_t6_backends_agree_on_generated_frontmatter() -> None:
    documents = _generated(400)
    outcomes = {type(_outcome(raw, "c", "strict", None)).__name__ for raw in documents}
    # The set holds accepted skills and refusals both, or it compares nothing.
    assert outcomes == {"Skill", "str"}
    found = [(raw, d) for raw in documents if (d := _disagreements(raw, None, syntax_first=True))]
    assert found == []
