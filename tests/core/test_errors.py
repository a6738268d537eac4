"""The error tree: one root, split by who is at fault, with structured fields."""

from __future__ import annotations

import pytest

from skillguard import (
    MalformedSkillError,
    SkillContainmentError,
    SkillError,
    SkillInputError,
    SkillNotFoundError,
    SkillUsageError,
)
from skillguard._core.errors import safe_repr


@pytest.mark.parametrize(
    ("cls", "kind", "branch"),
    [
        (MalformedSkillError, "malformed", SkillInputError),
        (SkillContainmentError, "containment", SkillInputError),
        (SkillNotFoundError, "not_found", SkillInputError),
        (SkillUsageError, "usage", SkillError),
    ],
)
def test_tree_and_kinds(cls: type[SkillError], kind: str, branch: type[SkillError]) -> None:
    error = cls("some_code", "a reason", name="demo", agent="planner", line=3, key="k")
    assert isinstance(error, branch)
    assert isinstance(error, SkillError)
    assert error.kind == kind
    assert (error.code, error.reason, error.name, error.agent, error.line, error.key) == (
        "some_code",
        "a reason",
        "demo",
        "planner",
        3,
        "k",
    )
    assert str(error) == f"[{kind}/some_code] skill 'demo': line 3: a reason"
    assert error.as_dict() == {
        "kind": kind,
        "code": "some_code",
        "message": "a reason",
        "name": "demo",
        "agent": "planner",
        "line": 3,
        "key": "k",
    }


def test_usage_errors_are_not_input_errors() -> None:
    assert not issubclass(SkillUsageError, SkillInputError)


def test_optional_fields_are_left_out() -> None:
    error = MalformedSkillError("too_large", "too big")
    assert str(error) == "[malformed/too_large] too big"
    assert error.as_dict() == {"kind": "malformed", "code": "too_large", "message": "too big"}


def test_t13_names_in_messages_are_escaped() -> None:
    error = SkillContainmentError("bad_name", "refused", name="x\x1b[2J\u202e")
    assert "\x1b" not in str(error)
    assert "\u202e" not in str(error)


def test_safe_repr_escapes_and_bounds() -> None:
    assert safe_repr("plain") == "'plain'"
    assert safe_repr("a\nb\u202e") == "'a\\nb\\u202e'"
    long = safe_repr("x" * 100)
    assert long == "'" + "x" * 64 + "'..."
    assert safe_repr("y" * 10, limit=4) == "'yyyy'..."
