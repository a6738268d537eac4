"""Frozen values: FrozenMap, Step, SkillWarning and Skill."""

from __future__ import annotations

import runpy

import pytest

from skillguard import FrozenMap, SkillWarning, parse_skill


def test_frozen_map_behaves_as_a_read_only_mapping() -> None:
    inner = FrozenMap({"x": ("1", "2")})
    frozen = FrozenMap({"a": "b", "n": inner})
    assert len(frozen) == 2
    assert list(frozen) == ["a", "n"]
    assert list(frozen.keys()) == ["a", "n"]
    assert list(frozen.values()) == ["b", inner]
    assert dict(frozen.items()) == {"a": "b", "n": inner}
    assert frozen.get("a") == "b"
    assert frozen.get("missing") is None
    assert "a" in frozen
    assert "z" not in frozen
    assert frozen["n"] == {"x": ("1", "2")}
    assert frozen.to_dict() == {"a": "b", "n": {"x": ["1", "2"]}}
    assert repr(inner) == "FrozenMap({'x': ('1', '2')})"
    with pytest.raises(TypeError):
        frozen["a"] = "c"  # type: ignore[index]


def test_frozen_map_equality_and_hash() -> None:
    one = FrozenMap({"a": "b"})
    assert one == FrozenMap({"a": "b"})
    assert one == {"a": "b"}
    assert one != {"a": "c"}
    assert one != "a"
    assert hash(one) == hash(FrozenMap({"a": "b"}))
    assert hash(one) == hash(one)  # cached


def test_warning_as_dict() -> None:
    assert SkillWarning("c", "m").as_dict() == {"code": "c", "message": "m"}
    assert SkillWarning("c", "m", "k").as_dict() == {"code": "c", "message": "m", "key": "k"}


def test_skill_equality_covers_every_field() -> None:
    raw = b"---\nname: demo\ndescription: d\n---\nbody\n"
    assert parse_skill(raw) == parse_skill(raw)
    assert parse_skill(raw) != parse_skill(raw + b"more")


def test_python_dash_m_runs_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    import sys

    argv = sys.argv
    sys.argv = ["skillguard", "--version"]
    try:
        with pytest.raises(SystemExit) as info:
            runpy.run_module("skillguard", run_name="__main__")
    finally:
        sys.argv = argv
    assert info.value.code == 0
    assert capsys.readouterr().out.startswith("skillguard ")
