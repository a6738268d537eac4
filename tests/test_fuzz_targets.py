"""The fuzz targets' invariants, run as Hypothesis tests so CI always exercises them."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from skillguard import MalformedSkillError
from tests.strategies import (
    hostile_skill_files,
    mutated_documents,
    mutated_policies,
    near_yaml,
    policy_documents,
    render,
    skill_documents,
)

if TYPE_CHECKING:
    from types import ModuleType

FUZZ = Path(__file__).resolve().parent.parent / "fuzz"
CORPUS = sorted((FUZZ / "corpus" / "parse_skill").iterdir())
POLICY_CORPUS = sorted((FUZZ / "corpus" / "policy").iterdir())
AGENT_CORPUS = sorted((FUZZ / "corpus" / "parse_agent").iterdir())


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, FUZZ / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


parse_target = _load("parse_skill_fuzzer")
differential_target = _load("differential_fuzzer")
agent_target = _load("parse_agent_fuzzer")
check_target = _load("check_skill_fuzzer")

inputs = st.one_of(
    st.binary(max_size=1024),
    near_yaml,
    mutated_documents(),
    skill_documents().map(lambda d: render(d["fields"], d["body"])),
    hostile_skill_files(),
)


@settings(max_examples=300)
@given(inputs)
def test_t14_parse_skill_fuzz_target(data: bytes) -> None:
    parse_target.check(data)


@settings(max_examples=500)
@given(inputs)
@example(b"---\nname: demo\ndescription: '\xc2\x85'\n---\n")
@example(b'---\nname: demo\ndescription: "\\/"\n---\n')
@example(b"---\nname: demo\ndescription: x\n\xef\xbb\xbfkey: v\n---\n")
@example(b'---\nname: demo\ndescription: "a\\\n  b"\n---\n')
@example(b'---\nname: demo\ndescription: x\nk: "\\U0001F600"\n---\n')
@example(b"---\nname: demo\ndescription: x\n:\n---\n")
@example(b"---\nname: demo\ndescription: x\nk: a\tb\n---\n")
def test_differential_fuzz_target(data: bytes) -> None:
    # The C and pure-Python parsers give equal skills or both refuse (T6).
    differential_target.check(data)


@settings(max_examples=500)
@given(st.one_of(policy_documents(), mutated_policies(), near_yaml.map(lambda d: d[4:-5])))
@example(
    "agents:\n  clerk:\n    skills: [notes]   # read-only\u2028    workspace: approve\n".encode()
)
@example(b"agents:\n  clerk:\n    skills: [notes]  #\xc2\x85    workspace: approve\n")
@example(b"agents:\n  p: {tools: [Bash(git:*)]}\n")
@example(b"agents:\n  p:\n    workspace: >\n      approve\n")
def test_t60_differential_fuzz_target_on_policies(data: bytes) -> None:
    # The C and pure-Python parsers read every policy as the same grants, or both refuse.
    differential_target.check_policy(data)


@pytest.mark.parametrize("seed", CORPUS + POLICY_CORPUS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_seed_corpus_replays_cleanly(seed: Path) -> None:
    data = seed.read_bytes()
    parse_target.check(data)
    differential_target.check(data)


def test_the_differential_check_can_fail(monkeypatch: pytest.MonkeyPatch) -> None:
    # A check that cannot fail proves nothing: make the C side refuse what pure accepts.
    original = differential_target._outcome
    monkeypatch.setattr(
        differential_target,
        "_outcome",
        lambda raw, backend, profile: (
            "yaml_syntax" if backend == "c" else original(raw, backend, profile)
        ),
    )
    with pytest.raises(AssertionError):
        differential_target.check((FUZZ / "corpus" / "parse_skill" / "steps").read_bytes())


def test_t60_the_policy_differential_check_can_fail(monkeypatch: pytest.MonkeyPatch) -> None:
    # libyaml's reading of the hidden grant, as it was before the character rules.
    raw = (FUZZ / "corpus" / "policy" / "hidden-grant-u2028").read_bytes()
    monkeypatch.setattr(
        differential_target,
        "_policy_outcome",
        lambda _data, backend: {"clerk": backend} if backend == "c" else "refused",
    )
    with pytest.raises(AssertionError):
        differential_target.check_policy(raw)
    monkeypatch.setattr(
        differential_target,
        "_document_outcome",
        lambda _data, backend: {"agents": backend},
    )
    with pytest.raises(AssertionError):
        differential_target.check_policy(raw)


def test_corpus_holds_valid_and_invalid_seeds() -> None:
    assert len(CORPUS) >= 10
    assert len(POLICY_CORPUS) >= 10
    accepted = [seed.name for seed in POLICY_CORPUS if seed.name.startswith("valid-")]
    assert len(accepted) >= 3


@settings(max_examples=300)
@given(inputs)
def test_t70_parse_agent_fuzz_target(data: bytes) -> None:
    agent_target.check(data)


@pytest.mark.parametrize("seed", AGENT_CORPUS + CORPUS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_t70_agent_seed_corpus_replays_cleanly(seed: Path) -> None:
    agent_target.check(seed.read_bytes())


@settings(max_examples=300)
@given(inputs)
@example(b"---\n---\n\x00")
@example(b'---\n"": ""\n---')
@example(b"---\nname: demo\ndescription: x\n---\na\rb\xef\xb8\x8f\n")
@example(b"---\rname: x\xff\n---\n")
def test_t119_check_skill_fuzz_target(data: bytes) -> None:
    # check_skill (validate's collector) answers with placed, typed errors only.
    check_target.check(data)


@pytest.mark.parametrize("seed", CORPUS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_t119_check_skill_seed_corpus_replays_cleanly(seed: Path) -> None:
    check_target.check(seed.read_bytes())


@pytest.mark.parametrize(
    ("error", "lines"),
    [
        (MalformedSkillError("yaml_syntax", "x", line=3), ["---", "---"]),
        (MalformedSkillError("yaml_syntax", "x", line=0), ["---", "---"]),
        (MalformedSkillError("yaml_syntax", "x", line=1, column=5), ["---", "---"]),
        (MalformedSkillError("yaml_syntax", "x"), ["---", "---"]),
        (MalformedSkillError("too_large", "x", column=1), ["---", "---"]),
        (MalformedSkillError("", "x", line=1), ["---", "---"]),
    ],
)
def test_t119_the_check_skill_target_can_fail(error: MalformedSkillError, lines: list[str]) -> None:
    with pytest.raises(AssertionError):
        check_target._placed(error, lines)
