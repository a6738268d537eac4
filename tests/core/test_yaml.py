"""Restricted YAML composition, and the C and pure parsers agreeing on every input."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from ruamel.yaml.scanner import ScannerError

from skillguard import FrozenMap, Limits, MalformedSkillError, Profile, SkillUsageError
from skillguard._core.limits import DEFAULT_LIMITS
from skillguard._core.strict_yaml import (
    Backend,
    KeyLines,
    default_backend,
    has_c_parser,
    load_document,
)
from skillguard._core.yaml_errors import syntax_error

if TYPE_CHECKING:
    from skillguard._core.model import YamlValue

needs_c = pytest.mark.skipif(not has_c_parser(), reason="ruamel.yaml.clib is not installed")
BACKENDS = ["c", "pure"] if has_c_parser() else ["pure"]
PROFILES: tuple[Profile, ...] = ("strict", "compat")


def compose(
    text: str, limits: Limits, *, first_line: int = 1, backend: Backend | None = None
) -> tuple[dict[str, YamlValue], KeyLines]:
    """A document already decoded, as the SKILL.md parser hands its frontmatter over."""
    return load_document(text, limits, what="the document", first_line=first_line, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_compose_builds_plain_immutable_data(backend: str) -> None:
    text = "a: b\nm: {k: v, n: [1, {x: y}]}\nl:\n  - p\n  - [q]\n"
    value, lines = compose(text, DEFAULT_LIMITS, first_line=2, backend=backend)  # type: ignore[arg-type]
    assert value == {
        "a": "b",
        "m": {"k": "v", "n": ("1", {"x": "y"})},
        "l": ("p", ("q",)),
    }
    assert isinstance(value["m"], FrozenMap)
    assert isinstance(value["l"], tuple)
    assert lines.as_dict() == {"a": 2, "m": 3, "l": 4}
    assert (lines.get("m"), lines.get("missing")) == (3, None)


@pytest.mark.parametrize("backend", BACKENDS)
def test_keys_compare_as_the_strings_they_denote(backend: str) -> None:
    for text in ("a: 1\n'a': 2\n", 'a: 1\n"a": 2\n', "? a\n: 1\na: 2\n", '"\\x61": 1\na: 2\n'):
        with pytest.raises(MalformedSkillError) as info:
            compose(text, DEFAULT_LIMITS, backend=backend)  # type: ignore[arg-type]
        assert info.value.code == "duplicate_key"


@pytest.mark.parametrize("backend", BACKENDS)
def test_yaml_1_10_directive_never_reaches_the_parser(backend: str) -> None:
    # ruamel's pure parser raises AssertionError on "%YAML 1.10". skillguard refuses
    # every directive line before either parser sees the text.
    with pytest.raises(MalformedSkillError) as info:
        compose("%YAML 1.10\n---\na: b\n", DEFAULT_LIMITS, backend=backend)  # type: ignore[arg-type]
    assert info.value.code == "yaml_directive"
    assert info.value.line == 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_t4_thirty_thousand_brackets_on_each_backend(backend: str) -> None:
    limits = Limits(max_frontmatter_bytes=100_000)
    with pytest.raises(MalformedSkillError) as info:
        compose("x: " + "[" * 30_000, limits, backend=backend)  # type: ignore[arg-type]
    assert info.value.code == "too_deep"


@pytest.mark.parametrize("backend", BACKENDS)
def test_syntax_error_messages_do_not_quote_the_input(backend: str) -> None:
    with pytest.raises(MalformedSkillError) as info:
        compose('a: "secret-token \\q"\n', DEFAULT_LIMITS, backend=backend)  # type: ignore[arg-type]
    assert "secret-token" not in str(info.value)
    assert info.value.line == 1


def test_default_backend_is_c_when_installed() -> None:
    assert default_backend() == ("c" if has_c_parser() else "pure")


def test_unknown_backend_is_not_accepted() -> None:
    with pytest.raises(SkillUsageError):
        compose("a: b\n", DEFAULT_LIMITS, backend="rust")  # type: ignore[arg-type]


def test_c_backend_requested_without_the_extension_is_a_usage_error() -> None:
    if has_c_parser():
        pytest.skip("the C extension is installed here")
    with pytest.raises(SkillUsageError):
        compose("a: b\n", DEFAULT_LIMITS, backend="c")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("k: 'a\tb'\n", {"k": "a\tb"}),
        ('k: "a\tb"\n', {"k": "a\tb"}),
        ('k: ["a\tb", "\t"]\n', {"k": ("a\tb", "\t")}),
        ('"": v\n', {"": "v"}),
    ],
)
def test_tabs_inside_quoted_scalars_are_accepted(backend: str, text: str, expected: object) -> None:
    value, _ = compose(text, DEFAULT_LIMITS, backend=backend)  # type: ignore[arg-type]
    assert value == expected


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "text",
    [
        "k:\tv\n",
        "k: a\tb\n",
        "k: v\t\n",
        "k: [a,\tb]\n",
        "k: {a:\tb}\n",
        "k: v\t# c\n",
        "k:\t'v'\n",
    ],
)
def test_tabs_outside_quoted_scalars_are_refused(backend: str, text: str) -> None:
    # The C and pure parsers disagree on tabs here; skillguard accepts neither form.
    with pytest.raises(MalformedSkillError) as info:
        compose(text, DEFAULT_LIMITS, first_line=5, backend=backend)  # type: ignore[arg-type]
    assert info.value.code in ("tab_character", "yaml_syntax")
    assert info.value.line == 5


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("text", [": v\n", "k: {: v}\n", ":\n"])
def test_empty_plain_keys_are_refused(backend: str, text: str) -> None:
    with pytest.raises(MalformedSkillError) as info:
        compose(text, DEFAULT_LIMITS, backend=backend)  # type: ignore[arg-type]
    assert info.value.code in ("yaml_null_key", "yaml_syntax")


def test_null_key_code_on_the_pure_parser() -> None:
    with pytest.raises(MalformedSkillError) as info:
        compose(": v\n", DEFAULT_LIMITS, backend="pure")
    assert info.value.code == "yaml_null_key"


@needs_c
def test_tab_code_on_the_c_parser() -> None:
    with pytest.raises(MalformedSkillError) as info:
        compose("a: 'x'\nk: a\tb\n", DEFAULT_LIMITS, first_line=2, backend="c")
    assert (info.value.code, info.value.line) == ("tab_character", 3)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "text",
    ["m: {a:b}\n", "m: [a:b]\n", "m: {k: PD:F}\n", "m: [http://x]\n", "m: [a?b]\n", "m: {k?r}\n"],
)
def test_colon_in_unquoted_flow_scalar_is_refused(backend: str, text: str) -> None:
    # Found by the differential fuzzer: YAML 1.2 reads "a:b" in a flow collection as
    # one scalar, libyaml (YAML 1.1) refuses it. skillguard refuses both readings.
    with pytest.raises(MalformedSkillError) as info:
        compose(text, DEFAULT_LIMITS, backend=backend)  # type: ignore[arg-type]
    assert info.value.code in ("yaml_ambiguous", "yaml_syntax")


def test_ambiguous_code_on_the_pure_parser() -> None:
    with pytest.raises(MalformedSkillError) as info:
        compose("m: {k: PD:F}\n", DEFAULT_LIMITS, backend="pure")
    assert info.value.code == "yaml_ambiguous"


@pytest.mark.parametrize("backend", BACKENDS)
def test_colons_stay_allowed_where_both_parsers_agree(backend: str) -> None:
    text = 'a: b:c\nm: {k: "PD:F"}\nl: [a: b]\nu: http://x\n'
    value, _ = compose(text, DEFAULT_LIMITS, backend=backend)  # type: ignore[arg-type]
    assert value == {"a": "b:c", "m": {"k": "PD:F"}, "l": ({"a": "b"},), "u": "http://x"}


# -- load_document: the one entry point (T60) ----------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_t60_load_document_decodes_bytes_like_a_skill(backend: Backend) -> None:
    for raw in (b"\xef\xbb\xbfa: b\r\nc: d\r\n", b"a: b\rc: d\r", b"a: b\nc: d\n"):
        value, lines = load_document(raw, DEFAULT_LIMITS, what="the registry", backend=backend)
        assert value == {"a": "b", "c": "d"}
        assert lines.as_dict() == {"a": 1, "c": 2}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("char", ["\u2028", "\u2029", "\x85", "\x0b", "\x1b", "\ufeff", "\x00"])
def test_t60_load_document_refuses_line_separators_and_controls(
    backend: Backend, char: str
) -> None:
    raw = f"a: b\nc: d # note{char}e: f\n"
    for given in (raw, raw.encode()):
        with pytest.raises(MalformedSkillError) as info:
            load_document(given, DEFAULT_LIMITS, what="the registry", first_line=4, backend=backend)
        assert (info.value.code, info.value.line) == ("control_character", 5)
        assert info.value.reason.endswith("in the registry")


def test_t60_a_lone_surrogate_in_text_is_refused() -> None:
    with pytest.raises(MalformedSkillError) as info:
        load_document("a: \ud800\n", DEFAULT_LIMITS, what="the registry")
    assert info.value.code == "control_character"


def test_load_document_size_cap_at_limit_and_over() -> None:
    limits = Limits(max_frontmatter_bytes=100)
    at_cap = "a: " + "\u20ac" * 32 + "\n"  # 3 + 96 + 1 bytes
    assert load_document(at_cap, limits, what="the registry")[0] == {"a": "\u20ac" * 32}
    assert load_document(at_cap.encode(), limits, what="the registry")[0] == {"a": "\u20ac" * 32}
    over = "a: " + "\u20ac" * 32 + "x\n"
    for given in (over, over.encode()):
        with pytest.raises(MalformedSkillError) as info:
            load_document(given, limits, what="the registry")
        assert info.value.code == "too_large"
        assert info.value.reason == "the registry is larger than 100 bytes"


def test_load_document_refuses_bad_utf8_with_its_line() -> None:
    with pytest.raises(MalformedSkillError) as info:
        load_document(b"a: b\nc: \xff\n", DEFAULT_LIMITS, what="the registry")
    assert (info.value.code, info.value.line) == ("bad_encoding", 2)
    assert info.value.reason == "the registry is not valid UTF-8"


@pytest.mark.parametrize(
    ("raw", "line"),
    [
        (b"a: b\rc: \xff\n", 2),
        (b"a: b\r\nc: d\r\re: \xff", 4),
        (b"\xef\xbb\xbfa: b\n\rc: \xff", 3),
        (b"\xff", 1),
    ],
)
def test_t119_bad_utf8_is_placed_on_the_line_every_other_error_counts(
    raw: bytes, line: int
) -> None:
    # A lone CR ends a line for the YAML reader and the body checks, so for this too.
    with pytest.raises(MalformedSkillError) as info:
        load_document(raw, DEFAULT_LIMITS, what="the registry")
    assert (info.value.code, info.value.line) == ("bad_encoding", line)


def test_load_document_empty_documents() -> None:
    for raw in (b"", b"\n \n", ""):
        assert load_document(raw, DEFAULT_LIMITS, what="x", allow_empty=True)[0] == {}
        with pytest.raises(MalformedSkillError) as info:
            load_document(raw, DEFAULT_LIMITS, what="the registry")
        assert info.value.reason == "the registry is empty"
    with pytest.raises(MalformedSkillError) as info:
        load_document(b"- a\n", DEFAULT_LIMITS, what="the registry", allow_empty=True)
    assert info.value.reason == "the registry must be a mapping"


def test_a_hint_whose_context_differs_is_not_given() -> None:
    # libyaml words a bad directive like a bad block scalar header; only the latter's
    # context gets the block scalar hint (directives are refused before parsing, so the
    # parser's own exception is built here).
    exc = ScannerError(
        context="while scanning a directive",
        problem="did not find expected comment or line break",
    )
    error = syntax_error(exc, 2, "the frontmatter")
    assert error.reason == "the frontmatter is not valid YAML (ScannerError)"
    assert (error.line, error.column) == (None, None)


def test_nested_key_lines_are_kept_only_when_asked() -> None:
    text = b"a:\n  b:\n    c: x\n  l:\n    - {d: y}\ne: z\n"
    _, plain = load_document(text, DEFAULT_LIMITS, what="the file")
    assert (plain.at(("a",)), plain.at(("a", "b", "c"))) == (1, None)
    _, lines = load_document(text, DEFAULT_LIMITS, what="the file", nested_keys=True)
    assert [lines.at(path) for path in (("a",), ("a", "b"), ("a", "b", "c"), ("e",))] == [
        1,
        2,
        3,
        6,
    ]
    # A key beneath a list has no path of keys: it is not recorded.
    assert lines.at(("a", "l", "d")) is None
    assert lines.at(("a", "missing")) is None
