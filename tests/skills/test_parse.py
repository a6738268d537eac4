"""The SKILL.md parser: every rule, every error code, every limit at N and N+1.

Test names that start with ``test_tN_`` stop the threat ``TN`` of threat-model.md.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import skillguard
import skillguard._skills.fields
import skillguard._skills.parse
from skillguard import Limits, MalformedSkillError, SkillUsageError, parse_skill
from skillguard._core.strict_yaml import has_c_parser
from skillguard._core.text import REFUSED_RANGES
from skillguard._core.tool_rules import split_tools
from skillguard._skills.document import FORBIDDEN_CHARS, FORBIDDEN_RANGES, frontmatter_fields
from skillguard._skills.names import name_problem
from skillguard._skills.parse import check_skill, parse_skill_with
from tests.strategies import hostile_skill_files, mutated_documents, render, skill_documents


def doc(frontmatter: str, body: str = "Body.\n") -> bytes:
    return f"---\n{frontmatter}---\n{body}".encode()


MINIMAL = "name: demo\ndescription: Does a thing.\n"


def code_of(raw: bytes, **kwargs: object) -> str:
    with pytest.raises(MalformedSkillError) as info:
        parse_skill(raw, **kwargs)  # type: ignore[arg-type]
    return info.value.code


# -- the happy path ------------------------------------------------------------------


def test_minimal_skill_fields_and_hash() -> None:
    raw = doc(MINIMAL, "# Title\n\nText.\n")
    skill = parse_skill(raw, expected_name="demo")
    assert skill.name == "demo"
    assert skill.description == "Does a thing."
    assert skill.body == "# Title\n\nText.\n"
    assert skill.sha256 == hashlib.sha256(raw).hexdigest()
    assert skill.size == len(raw)
    assert (skill.license, skill.compatibility, skill.version) == (None, None, None)
    assert skill.metadata == {}
    assert skill.allowed_tools == ()
    assert skill.steps == ()
    assert skill.extra == {}
    assert skill.warnings == ()


def test_all_spec_fields() -> None:
    raw = doc(
        "name: pdf\n"
        "description: Work with PDFs.\n"
        "license: Apache-2.0\n"
        "compatibility: Needs poppler\n"
        "metadata:\n  author: me\n  'version': '1.2'\n"
        'allowed-tools: "Read  Bash(git:*)\tWrite"\n'
        "steps:\n  - first\n  - second\n"
        "version: 1.0\n"
    )
    skill = parse_skill(raw)
    assert skill.license == "Apache-2.0"
    assert skill.compatibility == "Needs poppler"
    assert dict(skill.metadata) == {"author": "me", "version": "1.2"}
    assert skill.allowed_tools == ("Read", "Bash(git:*)", "Write")
    assert [(s.index, s.text) for s in skill.steps] == [(1, "first"), (2, "second")]
    assert skill.version == "1.0"


def test_allowed_tools_as_list_is_normalised_to_a_tuple() -> None:
    skill = parse_skill(doc(MINIMAL + "allowed-tools:\n  - Read\n  - ' Bash(git diff:*) '\n"))
    assert skill.allowed_tools == ("Read", "Bash(git diff:*)")


def test_empty_allowed_tools_string_is_no_tools() -> None:
    assert parse_skill(doc(MINIMAL + "allowed-tools: ''\n")).allowed_tools == ()


# -- tool rules and Claude Code's fields ---------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ('"Read Grep Bash(git diff:*)"', ("Read", "Grep", "Bash(git diff:*)")),
        (
            "Read, Grep, Bash(git add, git commit:*)",
            ("Read", "Grep", "Bash(git add, git commit:*)"),
        ),
        ("'Bash(python -c \"print(1)\")'", ('Bash(python -c "print(1)")',)),
    ],
)
def test_t45_allowed_tools_string_splits_outside_parentheses(
    value: str, expected: tuple[str, ...]
) -> None:
    assert parse_skill(doc(MINIMAL + f"allowed-tools: {value}\n")).allowed_tools == expected


@pytest.mark.parametrize(
    "frontmatter",
    [
        "allowed-tools: Bash(git diff:*\n",
        "allowed-tools: Read) Bash\n",
        "allowed-tools: 'Bash(git:*)) Read'\n",
        "allowed-tools:\n  - Read\n  - Bash(git diff:*\n",
        "allowed-tools:\n  - Bash(git))\n",
    ],
)
@pytest.mark.parametrize("profile", ["strict", "compat"])
def test_t45_unbalanced_tool_rules_are_refused(frontmatter: str, profile: str) -> None:
    with pytest.raises(MalformedSkillError) as info:
        parse_skill(doc(MINIMAL + frontmatter), profile=profile)  # type: ignore[arg-type]
    assert (info.value.code, info.value.key) == ("malformed_tools", "allowed-tools")
    assert info.value.line == 4
    assert "'" in info.value.reason


def test_claude_code_fields_are_typed_not_unknown() -> None:
    skill = parse_skill(
        doc(
            MINIMAL
            + "disable-model-invocation: true\n"
            + "user-invocable: false\n"
            + "argument-hint: '[issue-number]'\n"
            + "model: claude-sonnet-4\n"
            + "context: fork\n"
            + "agent: Explore\n"
            + "license: MIT\n"
        )
    )
    assert skill.disable_model_invocation is True
    assert skill.user_invocable is False
    assert skill.argument_hint == "[issue-number]"
    assert (skill.model, skill.context, skill.agent) == ("claude-sonnet-4", "fork", "Explore")
    assert skill.extra == {}
    assert skill.warnings == ()


def test_claude_code_fields_default_when_absent() -> None:
    skill = parse_skill(doc(MINIMAL))
    assert skill.disable_model_invocation is False
    assert skill.user_invocable is True
    assert (skill.argument_hint, skill.model, skill.context, skill.agent) == (None,) * 4


@pytest.mark.parametrize(
    ("spelling", "expected"),
    [
        ("true", True),
        ("True", True),
        ("TRUE", True),
        ("false", False),
        ("False", False),
        ("FALSE", False),
        ("'true'", True),
        ('"false"', False),
    ],
)
def test_t48_flags_read_the_spellings_every_yaml_parser_agrees_on(
    spelling: str, expected: bool
) -> None:
    raw = doc(MINIMAL + f"disable-model-invocation: {spelling}\nuser-invocable: {spelling}\n")
    skill = parse_skill(raw)
    assert skill.disable_model_invocation is expected
    assert skill.user_invocable is expected


@pytest.mark.parametrize(
    "spelling",
    [
        "yes",
        "no",
        "on",
        "off",
        "y",
        "n",
        "1",
        "0",
        "tRue",
        "'true '",
        "''",
        "[true]",
        "{a: b}",
        "~",
        "null",
        "enabled",
    ],
)
@pytest.mark.parametrize("key", ["disable-model-invocation", "user-invocable"])
@pytest.mark.parametrize("profile", ["strict", "compat"])
def test_t48_flags_refuse_every_other_spelling(spelling: str, key: str, profile: str) -> None:
    with pytest.raises(MalformedSkillError) as info:
        parse_skill(doc(MINIMAL + f"{key}: {spelling!s}\n"), profile=profile)  # type: ignore[arg-type]
    assert (info.value.code, info.value.key, info.value.line) == ("wrong_type", key, 4)


@pytest.mark.parametrize("key", ["argument-hint", "model", "context", "agent"])
def test_t8_claude_code_string_fields_refuse_hidden_characters(key: str) -> None:
    with pytest.raises(MalformedSkillError) as info:
        parse_skill(doc(MINIMAL + f"{key}: 'fork\u202e'\n"))
    assert (info.value.code, info.value.key) == ("forbidden_character", key)
    with pytest.raises(MalformedSkillError) as info:
        parse_skill(doc(MINIMAL + f"{key}: {{a: b}}\n"))
    assert (info.value.code, info.value.key) == ("wrong_type", key)


@pytest.mark.parametrize("profile", ["strict", "compat"])
@pytest.mark.parametrize(
    ("yaml_value", "hint"),
    [
        ("[query]", "query"),  # the unquoted hint most skills write: a YAML flow list
        ("[pull-request-number]", "pull-request-number"),
        ("[file, format]", "file,format"),
        ("['<a>', '--dry-run']", "<a>,--dry-run"),
        ("\n  - file\n  - format", "file,format"),
        ("[]", ""),
    ],
)
def test_an_argument_hint_written_as_a_list_is_read_as_claude_code_shows_it(
    yaml_value: str, hint: str, profile: str
) -> None:
    # Claude Code shows such a list as its text, the items joined by "," (brackets gone):
    # under both profiles the skill loads with that text and one warning, never refused.
    skill = parse_skill(doc(MINIMAL + f"argument-hint: {yaml_value}\n"), profile=profile)  # type: ignore[arg-type]
    assert skill.argument_hint == hint
    assert [(w.code, w.key) for w in skill.warnings] == [("argument_hint_list", "argument-hint")]
    assert repr(hint) in skill.warnings[0].message


@pytest.mark.parametrize("profile", ["strict", "compat"])
def test_a_quoted_argument_hint_keeps_its_brackets_and_warns_of_nothing(profile: str) -> None:
    skill = parse_skill(doc(MINIMAL + "argument-hint: '[query]'\n"), profile=profile)  # type: ignore[arg-type]
    assert (skill.argument_hint, skill.warnings) == ("[query]", ())


@pytest.mark.parametrize("profile", ["strict", "compat"])
@pytest.mark.parametrize(
    ("yaml_value", "code"),
    [
        ("[[query]]", "wrong_type"),
        ("[a, {b: c}]", "wrong_type"),
        ("['fork\u202e']", "forbidden_character"),
        ("[ok, 'x\u2066']", "forbidden_character"),
    ],
)
def test_t8_an_argument_hint_list_holds_plain_visible_strings_only(
    yaml_value: str, code: str, profile: str
) -> None:
    raw = doc(MINIMAL + f"argument-hint: {yaml_value}\n")
    assert code_of(raw, profile=profile) == code


@pytest.mark.parametrize(
    ("yaml_value", "expected"),
    [
        ("1.0", "1.0"),
        ("on", "on"),
        ("yes", "yes"),
        ("~", "~"),
        ("null", "null"),
        ("2020-01-01", "2020-01-01"),
        ("0x10", "0x10"),
        ("1e3", "1e3"),
        ("010", "010"),
        (".inf", ".inf"),
    ],
)
def test_t5_scalars_stay_strings_without_implicit_typing(yaml_value: str, expected: str) -> None:
    skill = parse_skill(doc(MINIMAL + f"version: {yaml_value}\nflag: {yaml_value}\n"))
    assert skill.version == expected
    assert skill.extra["flag"] == expected


def test_unknown_fields_are_kept_inert_with_a_warning() -> None:
    skill = parse_skill(doc(MINIMAL + "author: someone\nhomepage: x.org\nrisk: [a, b]\n"))
    assert dict(skill.extra) == {"author": "someone", "homepage": "x.org", "risk": ("a", "b")}
    assert [(w.code, w.key) for w in skill.warnings] == [
        ("unknown_field", "author"),
        ("unknown_field", "homepage"),
        ("unknown_field", "risk"),
    ]


def test_skill_is_frozen_and_hashable() -> None:
    skill = parse_skill(doc(MINIMAL + "metadata: {a: b}\nx: {y: [z]}\n"))
    with pytest.raises(AttributeError):
        skill.name = "other"  # type: ignore[misc]
    assert hash(skill) == hash(parse_skill(doc(MINIMAL + "metadata: {a: b}\nx: {y: [z]}\n")))
    with pytest.raises(TypeError):
        skill.metadata["a"] = "c"  # type: ignore[index]


# -- T7: encoding --------------------------------------------------------------------


def test_t7_one_leading_bom_is_removed() -> None:
    raw = b"\xef\xbb\xbf" + doc(MINIMAL)
    skill = parse_skill(raw)
    assert skill.name == "demo"
    assert skill.sha256 == hashlib.sha256(raw).hexdigest()  # of the bytes as read


def test_t7_a_second_bom_is_not_removed() -> None:
    assert code_of(b"\xef\xbb\xbf\xef\xbb\xbf" + doc(MINIMAL)) == "no_opening_fence"


@pytest.mark.parametrize("newline", ["\r\n", "\r"])
def test_t7_crlf_and_lone_cr_become_lf(newline: str) -> None:
    text = f"---\n{MINIMAL}---\nline one\nline two\n".replace("\n", newline)
    skill = parse_skill(text.encode())
    assert skill.description == "Does a thing."
    assert skill.body == "line one\nline two\n"


def test_t7_invalid_utf8_is_refused_with_its_line() -> None:
    with pytest.raises(MalformedSkillError) as info:
        parse_skill(doc(MINIMAL, "ok\n\xff\n").replace(b"\xc3\xbf", b"\xff"))
    assert info.value.code == "bad_encoding"
    assert info.value.line == 6  # fence, name, description, fence, "ok", then the bad byte


@pytest.mark.parametrize(
    "char",
    ["\x00", "\x01", "\x08", "\x0b", "\x0c", "\x1b", "\x7f", "\x85", "\x9f", "\u2028", "\u2029"],
)
def test_t7_control_characters_in_frontmatter_are_refused(char: str) -> None:
    with pytest.raises(MalformedSkillError) as info:
        parse_skill(doc(f"name: demo\ndescription: a{char}b\n"))
    assert info.value.code == "control_character"
    assert info.value.line == 3


@pytest.mark.parametrize("escape", ["\\0", "\\x1b", "\\e", "\\u0085", "\\N", "\\L", "\\P", "\\x7f"])
def test_t7_control_characters_spelled_as_escapes_are_refused(escape: str) -> None:
    assert code_of(doc(f'name: demo\ndescription: "a{escape}b"\n')) == "control_character"


def test_t7_tab_is_allowed_in_frontmatter_and_controls_in_body() -> None:
    skill = parse_skill(doc('name: demo\ndescription: "a\tb"\n', "esc \x1b[0m ok\n"))
    assert skill.description == "a\tb"
    assert "\x1b" in skill.body


def test_t7_nul_in_body_is_refused() -> None:
    assert code_of(doc(MINIMAL, "text\x00more\n")) == "control_character"


@pytest.mark.parametrize(
    ("raw", "line", "column"),
    [
        (b"---\n---\n\x00", 3, 1),
        (doc(MINIMAL, "text\x00more\n"), 5, 5),
        (doc(MINIMAL, "one\r\ntwo \u00e9\x00\n"), 6, 6),
    ],
)
def test_t119_nul_in_body_is_placed_at_its_line_and_column(
    raw: bytes, line: int, column: int
) -> None:
    # validate annotates the character itself, as it does every frontmatter error.
    with pytest.raises(MalformedSkillError) as caught:
        parse_skill(raw)
    assert (caught.value.code, caught.value.line, caught.value.column) == (
        "control_character",
        line,
        column,
    )


# -- T2: fences ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        (b"", "no_opening_fence"),
        (b"name: demo\n", "no_opening_fence"),
        (b"\n---\nname: demo\n---\n", "no_opening_fence"),
        (b"----\nname: demo\n---\n", "no_opening_fence"),
        (b"--- x\nname: demo\n---\n", "no_opening_fence"),
        (b" ---\nname: demo\n---\n", "no_opening_fence"),
        (b"---", "no_closing_fence"),
        (b"---\n", "no_closing_fence"),
        (b"---\nname: demo\ndescription: x\n", "no_closing_fence"),
        (b"---\nname: demo\n----x\n", "no_closing_fence"),
        (b"---\nname: demo\n ---\n", "no_closing_fence"),
        (b"---\nname: demo\n--- x\n", "no_closing_fence"),
    ],
)
def test_t2_fence_errors(raw: bytes, code: str) -> None:
    assert code_of(raw) == code


def test_t2_fences_allow_trailing_blanks() -> None:
    skill = parse_skill(b"--- \t\n" + MINIMAL.encode() + b"---\t \nBody")
    assert skill.body == "Body"


def test_t2_closing_fence_at_end_of_file_gives_empty_body() -> None:
    assert parse_skill(b"---\n" + MINIMAL.encode() + b"---").body == ""


def test_t2_dashes_inside_a_value_do_not_end_the_frontmatter() -> None:
    skill = parse_skill(doc("name: demo\ndescription: 'a --- b'\nnote: |\n  x\n  ----\n"))
    assert skill.description == "a --- b"
    assert skill.extra["note"] == "x\n----\n"


def test_t2_body_is_everything_after_the_first_closing_fence() -> None:
    skill = parse_skill(doc(MINIMAL, "---\nname: evil\n---\nmore\n"))
    assert skill.name == "demo"
    assert skill.body == "---\nname: evil\n---\nmore\n"


# -- T3-T6: YAML as data -------------------------------------------------------------


@pytest.mark.parametrize(
    ("frontmatter", "code"),
    [
        ("name: &a demo\ndescription: x\n", "yaml_anchor"),
        ("name: demo\ndescription: &a [x]\n", "yaml_anchor"),
        ("name: demo\ndescription: x\nm: &a {k: v}\n", "yaml_anchor"),
        ("name: demo\ndescription: x\na: *b\n", "yaml_alias"),  # undefined, still refused
        ("name: demo\ndescription: x\nother: [*x]\n", "yaml_alias"),
        ("name: demo\ndescription: x\n*x : y\n", "yaml_alias"),
        ("name: !!str demo\ndescription: x\n", "yaml_tag"),
        ("name: demo\ndescription: !!binary aGVsbG8=\n", "yaml_tag"),
        ("name: demo\ndescription: x\nx: !!python/object:os.system {}\n", "yaml_tag"),
        ("name: demo\ndescription: x\nx: !foo bar\n", "yaml_tag"),
        ("name: demo\ndescription: x\nx: ! bar\n", "yaml_tag"),
        ("name: demo\ndescription: x\nx: !<tag:yaml.org,2002:str> bar\n", "yaml_tag"),
        ("!!map\nname: demo\ndescription: x\n", "yaml_tag"),
        ("name: demo\ndescription: x\nx: !!seq [a]\n", "yaml_tag"),
        ("name: demo\ndescription: x\n...\n%YAML 1.1\n", "yaml_multiple_documents"),
        ("name: demo\ndescription: x\n%YAML 1.1\n", "yaml_directive"),
        ("name: demo\ndescription: x\n...\n--- x\n", "yaml_multiple_documents"),
        ("name: demo\ndescription: x\n--- x\n", "yaml_multiple_documents"),
        ("name: demo\ndescription: x\n<<: {a: b}\n", "yaml_merge_key"),
        ("name: demo\ndescription: x\nm:\n  <<: {a: b}\n", "yaml_merge_key"),
        ("name: demo\ndescription: x\n'<<': y\n", "yaml_merge_key"),
        ("name: demo\ndescription: x\n? [a, b]\n: c\n", "yaml_complex_key"),
        ("name: demo\ndescription: x\n? {a: b}\n: c\n", "yaml_complex_key"),
        ("name: demo\ndescription: x\nm: {[a]: b}\n", "yaml_complex_key"),
        ("name: demo\nname: other\ndescription: x\n", "duplicate_key"),
        ("name: demo\n'name': demo\ndescription: x\n", "duplicate_key"),
        ('name: demo\n"name": demo\ndescription: x\n', "duplicate_key"),
        ('name: demo\n"n\\x61me": demo\ndescription: x\n', "duplicate_key"),
        ("name: demo\ndescription: x\nm: {a: 1, a: 2}\n", "duplicate_key"),
        ("name: demo\ndescription: x\nm:\n  - {k: 1}\n  - {k: 1, k: 2}\n", "duplicate_key"),
        ("name: demo\ndescription: x\nm: {a: {b: 1, 'b': 2}}\n", "duplicate_key"),
        ("- name\n- demo\n", "not_a_mapping"),
        ("just a string\n", "not_a_mapping"),
        ("", "not_a_mapping"),
        ("# only a comment\n", "not_a_mapping"),
        ("name: demo\ndescription: [unclosed\n", "yaml_syntax"),
        ("name: demo\n  description: bad indent\n", "yaml_syntax"),
        ("name: 'unterminated\n", "yaml_syntax"),
        ('name: "bad \\q escape"\n', "yaml_syntax"),
        ("name: demo\ndescription: x\n\tkey: tab-indented\n", "yaml_syntax"),
    ],
)
def test_yaml_rules(frontmatter: str, code: str) -> None:
    assert code_of(doc(frontmatter)) == code


def test_t6_duplicate_key_error_names_key_and_line() -> None:
    with pytest.raises(MalformedSkillError) as info:
        parse_skill(doc("name: demo\ndescription: x\nallowed-tools: Read\n'allowed-tools': Bash\n"))
    assert info.value.key == "allowed-tools"
    assert info.value.line == 5
    assert "Bash" not in str(info.value)


def test_t3_billion_laughs_is_refused_at_the_first_anchor() -> None:
    levels = ["a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for i in range(1, 10):
        prev = chr(ord("a") + i - 1)
        cur = chr(ord("a") + i)
        levels.append(f"{cur}: &{cur} [" + ",".join([f"*{prev}"] * 9) + "]")
    with pytest.raises(MalformedSkillError) as info:
        parse_skill(doc(MINIMAL + "\n".join(levels) + "\n"))
    assert info.value.code == "yaml_anchor"
    assert info.value.line == 4


@pytest.mark.parametrize("opener", ["[", "{", "- "])
def test_t4_deep_nesting_does_not_crash_the_interpreter(opener: str) -> None:
    # About 30,000 nested "[" kill ruamel's C loader with SIGSEGV; reaching this
    # assertion at all is the test.
    raw = doc(MINIMAL + "x:\n  " + opener * 30_000 + "\n")
    limits = Limits(max_frontmatter_bytes=200_000, max_skill_bytes=300_000)
    # "{{" is refused one event earlier: a mapping cannot be a key.
    assert code_of(raw, limits=limits) in ("too_deep", "yaml_complex_key")


def test_t4_deep_nesting_is_refused_as_too_deep_before_the_rest_is_parsed() -> None:
    raw = doc(MINIMAL + "x: " + "[" * 1000 + "]" * 1000 + "\n")
    assert code_of(raw) == "too_deep"


def test_a_bare_directive_as_frontmatter_is_refused() -> None:
    # "%YAML 1.1" then "---" closes the frontmatter: the YAML is a directive alone.
    assert code_of(b"---\n%YAML 1.1\n---\nname: x\n") == "yaml_directive"


@pytest.mark.parametrize("version", ["1.1", "1.2", "1.10", "2.0"])
def test_t5_yaml_version_directive_is_refused_on_both_backends(version: str) -> None:
    text = f"%YAML {version}\n--- {{name: demo, description: x}}\n"
    for backend in ("c", "pure"):
        with pytest.raises(MalformedSkillError) as info:
            skillguard._skills.parse.parse_skill_with(
                doc(text), expected_name=None, limits=None, profile="strict", backend=backend
            )
        assert info.value.code in ("yaml_directive", "yaml_syntax")


def test_t5_tag_directive_is_refused() -> None:
    text = "%TAG !e! tag:example.com,2000:\n--- {name: demo, description: x}\n"
    assert code_of(doc(text)) == "yaml_directive"


# -- limits at N and N+1 -------------------------------------------------------------


def padded(size: int) -> bytes:
    """A valid document of exactly *size* bytes (body padded)."""
    base = doc(MINIMAL, "")
    assert size >= len(base)
    return base + b"x" * (size - len(base))


def test_t1_max_skill_bytes_at_limit_and_over() -> None:
    limits = Limits(max_skill_bytes=1000)
    assert parse_skill(padded(1000), limits=limits).size == 1000
    with pytest.raises(MalformedSkillError) as info:
        parse_skill(padded(1001), limits=limits)
    assert info.value.code == "too_large"


def test_t1_oversize_input_is_refused_before_decoding() -> None:
    # Invalid UTF-8 that is also too large reports the size: nothing was decoded.
    assert code_of(b"\xff" * 2000, limits=Limits(max_skill_bytes=1999)) == "too_large"


def test_t1_default_max_skill_bytes_is_256_kib() -> None:
    assert Limits().max_skill_bytes == 256 * 1024
    assert parse_skill(padded(256 * 1024)).size == 256 * 1024
    assert code_of(padded(256 * 1024 + 1)) == "too_large"


def frontmatter_of(size: int) -> bytes:
    """A document whose frontmatter (between the fences) is exactly *size* bytes."""
    head = MINIMAL + "pad: "
    fill = size - len(head) - 1
    return doc(head + "y" * fill + "\n")


def test_t1_max_frontmatter_bytes_at_limit_and_over() -> None:
    limits = Limits(max_frontmatter_bytes=500)
    parse_skill(frontmatter_of(500), limits=limits)
    assert code_of(frontmatter_of(501), limits=limits) == "frontmatter_too_large"


def test_t1_frontmatter_limit_counts_bytes_not_characters() -> None:
    limits = Limits(max_frontmatter_bytes=100)
    # 40 three-byte characters: 40 code points, but 120 bytes.
    raw = doc("name: demo\ndescription: " + "\u20ac" * 40 + "\n")
    assert code_of(raw, limits=limits) == "frontmatter_too_large"


def test_t1_the_closing_fence_is_searched_for_only_within_the_cap() -> None:
    # A file with no fence within max_frontmatter_bytes is refused as too large without
    # scanning the rest of it: whatever follows cannot make a valid frontmatter.
    limits = Limits(max_frontmatter_bytes=500)
    unclosed = b"---\n" + MINIMAL.encode() + b"pad: |\n" + b"  line\n" * 2000
    assert code_of(unclosed, limits=limits) == "frontmatter_too_large"
    assert code_of(unclosed[:400], limits=limits) == "no_closing_fence"
    late_fence = unclosed + b"---\nBody.\n"
    assert code_of(late_fence, limits=limits) == "frontmatter_too_large"


def test_t1_a_fence_line_right_at_the_cap_is_found() -> None:
    limits = Limits(max_frontmatter_bytes=500)
    # The frontmatter is exactly the cap; the fence line after it has trailing blanks.
    raw = frontmatter_of(500).replace(b"\n---\n", b"\n---  \t\n")
    assert parse_skill(raw, limits=limits).body == "Body.\n"
    # The file may end right after the closing "---", exactly where the search stops.
    assert parse_skill(frontmatter_of(500)[: -len(b"\nBody.\n")], limits=limits).body == ""
    # 200 three-byte characters fit the search window but not the byte cap.
    assert code_of(doc("x: " + "\u20ac" * 200 + "\n"), limits=limits) == "frontmatter_too_large"


def test_t4_max_depth_at_limit_and_over() -> None:
    limits = Limits(max_depth=4)
    # The top mapping is depth 1; "m: {a: {b: [x]}}" reaches depth 4.
    parse_skill(doc(MINIMAL + "m: {a: {b: [x]}}\n"), limits=limits)
    assert code_of(doc(MINIMAL + "m: {a: {b: [[x]]}}\n"), limits=limits) == "too_deep"


def test_t4_max_nodes_at_limit_and_over() -> None:
    limits = Limits(max_nodes=10)
    # top map (1) + 2 keys + 2 values (5) + key "l" (6) + list (7) + 3 items = 10
    parse_skill(doc(MINIMAL + "l: [a, b, c]\n"), limits=limits)
    assert code_of(doc(MINIMAL + "l: [a, b, c, d]\n"), limits=limits) == "too_many_nodes"


def test_t4_max_scalar_bytes_at_limit_and_over() -> None:
    limits = Limits(max_scalar_bytes=64)
    parse_skill(doc(MINIMAL + "x: " + "z" * 64 + "\n"), limits=limits)
    assert code_of(doc(MINIMAL + "x: " + "z" * 65 + "\n"), limits=limits) == "scalar_too_long"


def test_t4_scalar_limit_counts_utf8_bytes() -> None:
    limits = Limits(max_scalar_bytes=64)
    parse_skill(doc(MINIMAL + "x: " + "\u20ac" * 21 + "\n"), limits=limits)  # 63 bytes
    assert code_of(doc(MINIMAL + "x: " + "\u20ac" * 22 + "\n"), limits=limits) == (
        "scalar_too_long"
    )


def test_t4_scalar_limit_applies_to_keys() -> None:
    limits = Limits(max_scalar_bytes=8)
    assert code_of(doc("name: demo\ndescription: x\n" + "k" * 9 + ": v\n"), limits=limits) == (
        "scalar_too_long"
    )


@pytest.mark.parametrize(
    "field",
    ["max_skill_bytes", "max_frontmatter_bytes", "max_depth", "max_nodes", "max_scalar_bytes"],
)
@pytest.mark.parametrize("bad", [0, -1, 1.5, "10", True])
def test_limits_refuse_non_positive_or_non_int(field: str, bad: object) -> None:
    with pytest.raises(SkillUsageError) as info:
        Limits(**{field: bad})  # type: ignore[arg-type]
    assert info.value.code == "bad_limit"
    assert info.value.key == field


# -- T8, T9: fields ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("frontmatter", "code", "key"),
    [
        ("description: x\n", "missing_field", "name"),
        ("name: demo\n", "missing_field", "description"),
        ("name: [demo]\ndescription: x\n", "wrong_type", "name"),
        ("name: demo\ndescription: {a: b}\n", "wrong_type", "description"),
        ("name: demo\ndescription: ''\n", "empty_field", "description"),
        ("name: demo\ndescription: '   '\n", "empty_field", "description"),
        ("name: demo\ndescription:\n", "empty_field", "description"),
        ("name: demo\ndescription: x\ncompatibility: ''\n", "empty_field", "compatibility"),
        ("name: demo\ndescription: x\ncompatibility: [a]\n", "wrong_type", "compatibility"),
        ("name: demo\ndescription: x\nlicense: [MIT]\n", "wrong_type", "license"),
        ("name: demo\ndescription: x\nversion: {major: 1}\n", "wrong_type", "version"),
        ("name: demo\ndescription: x\nmetadata: a\n", "wrong_type", "metadata"),
        ("name: demo\ndescription: x\nmetadata: [a]\n", "wrong_type", "metadata"),
        ("name: demo\ndescription: x\nmetadata: {a: [b]}\n", "wrong_type", "metadata"),
        ("name: demo\ndescription: x\nmetadata: {a: {b: c}}\n", "wrong_type", "metadata"),
        ("name: demo\ndescription: x\nallowed-tools: {a: b}\n", "wrong_type", "allowed-tools"),
        ("name: demo\ndescription: x\nallowed-tools: [a, [b]]\n", "wrong_type", "allowed-tools"),
        ("name: demo\ndescription: x\nallowed-tools: [a, '']\n", "empty_field", "allowed-tools"),
        (
            "name: demo\ndescription: x\nallowed-tools: Bash(git\n",
            "malformed_tools",
            "allowed-tools",
        ),
        (
            "name: demo\ndescription: x\nallowed-tools: [Bash(git]\n",
            "malformed_tools",
            "allowed-tools",
        ),
        ("name: demo\ndescription: x\nmodel: [a]\n", "wrong_type", "model"),
        ("name: demo\ndescription: x\nuser-invocable: yes\n", "wrong_type", "user-invocable"),
        ("name: demo\ndescription: x\nsteps: one\n", "wrong_type", "steps"),
        ("name: demo\ndescription: x\nsteps: [one, [two]]\n", "wrong_type", "steps"),
        ("name: demo\ndescription: x\nsteps: [one, ' ']\n", "empty_field", "steps"),
        ("name: ''\ndescription: x\n", "invalid_name", "name"),
        ("name: Demo\ndescription: x\n", "invalid_name", "name"),
        ("name: -demo\ndescription: x\n", "invalid_name", "name"),
        ("name: demo-\ndescription: x\n", "invalid_name", "name"),
        ("name: de--mo\ndescription: x\n", "invalid_name", "name"),
        ("name: de_mo\ndescription: x\n", "invalid_name", "name"),
        ("name: de mo\ndescription: x\n", "invalid_name", "name"),
        ("name: ../etc\ndescription: x\n", "invalid_name", "name"),
        ("name: local/demo\ndescription: x\n", "invalid_name", "name"),
        ("name: d\u0435mo\ndescription: x\n", "invalid_name", "name"),  # Cyrillic e
        ("name: \uff44emo\ndescription: x\n", "invalid_name", "name"),  # full-width d
        ("name: demo\u200b\ndescription: x\n", "forbidden_character", "name"),
    ],
)
def test_field_rules(frontmatter: str, code: str, key: str) -> None:
    with pytest.raises(MalformedSkillError) as info:
        parse_skill(doc(frontmatter))
    assert (info.value.code, info.value.key) == (code, key)


def test_field_errors_carry_the_line_of_their_key() -> None:
    with pytest.raises(MalformedSkillError) as info:
        parse_skill(doc("name: demo\n\n\ndescription: x\nsteps: 3\n"))
    assert info.value.line == 6


def test_t9_name_length_at_limit_and_over() -> None:
    parse_skill(doc(f"name: {'a' * 64}\ndescription: x\n"))
    assert code_of(doc(f"name: {'a' * 65}\ndescription: x\n")) == "invalid_name"


def test_description_length_at_limit_and_over() -> None:
    parse_skill(doc(f"name: demo\ndescription: {'d' * 1024}\n"))
    assert code_of(doc(f"name: demo\ndescription: {'d' * 1025}\n")) == "field_too_long"


def test_compatibility_length_at_limit_and_over() -> None:
    parse_skill(doc(MINIMAL + f"compatibility: {'c' * 500}\n"))
    assert code_of(doc(MINIMAL + f"compatibility: {'c' * 501}\n")) == "field_too_long"


# Every character the rules look at is refused between ASCII letters: the ones a script
# needs (joiners, marks, variation selectors) are allowed only beside that script.
EDGES = sorted({chr(code) for low, high in FORBIDDEN_RANGES for code in (low, high)})
assert {chr(low) for low, _ in REFUSED_RANGES} <= set(EDGES)


@pytest.mark.parametrize("char", EDGES)
@pytest.mark.parametrize("field", ["description", "compatibility", "license", "version"])
def test_t8_invisible_and_bidi_characters_are_refused(char: str, field: str) -> None:
    text = f"name: demo\ndescription: ok\n{field}: safe{char}text\n".replace(
        "description: ok\ndescription", "description"
    )
    with pytest.raises(MalformedSkillError) as info:
        parse_skill(doc(text))
    if char in "\ufeff\u2028\u2029":
        # A raw BOM or line separator anywhere in the frontmatter is refused before YAML
        # parsing (T7).
        assert info.value.code == "control_character"
    else:
        assert (info.value.code, info.value.key) == ("forbidden_character", field)
    assert f"U+{ord(char):04X}" in info.value.reason


@pytest.mark.parametrize("char", ["\u202e", "\u200b", "\u2062", "\U000e0041", "\ufeff"])
def test_t8_forbidden_characters_spelled_as_escapes_are_refused(char: str) -> None:
    raw = doc(f'name: demo\ndescription: "safe\\U{ord(char):08x}text"\n')
    # A BOM is refused anywhere in the frontmatter, raw or escaped, before field checks.
    assert code_of(raw) == ("control_character" if char == "\ufeff" else "forbidden_character")


@pytest.mark.parametrize(
    ("frontmatter", "key"),
    [
        ("steps: ['a\u202eb']\n", "steps"),
        ("allowed-tools: 'Read\u200bBash'\n", "allowed-tools"),
        ("allowed-tools: ['Read', 'Ba\u2066sh']\n", "allowed-tools"),
    ],
)
def test_t8_lists_that_reach_the_model_refuse_hidden_characters(frontmatter: str, key: str) -> None:
    with pytest.raises(MalformedSkillError) as info:
        parse_skill(doc(MINIMAL + frontmatter))
    assert (info.value.code, info.value.key) == ("forbidden_character", key)


@pytest.mark.parametrize("profile", ["strict", "compat"])
@pytest.mark.parametrize(
    "frontmatter",
    [
        "metadata:\n  author: 'Eve\u202egnirts'\n",
        "metadata:\n  'auth\u200bor': Eve\n",
        'metadata:\n  note: "tag\\U000E0041"\n',
    ],
)
def test_t8_metadata_refuses_hidden_characters(frontmatter: str, profile: str) -> None:
    # metadata is the spec's map of strings: a host that shows its author or version to
    # a reviewer must not show reordered or invisible text.
    with pytest.raises(MalformedSkillError) as info:
        parse_skill(doc(MINIMAL + frontmatter), profile=profile)  # type: ignore[arg-type]
    assert (info.value.code, info.value.key) == ("forbidden_character", "metadata")
    parse_skill(doc(MINIMAL + "metadata:\n  author: 'Zo\u00eb \u2764\ufe0f'\n"))


def test_forbidden_chars_match_their_ranges() -> None:
    assert len(FORBIDDEN_CHARS) == sum(high - low + 1 for low, high in FORBIDDEN_RANGES)
    assert "\u00ad" in FORBIDDEN_CHARS
    # Emoji presentation is looked at (a run of selectors smuggles data), and allowed
    # after an emoji.
    assert "\ufe0f" in FORBIDDEN_CHARS
    parse_skill(doc("name: demo\ndescription: \u2764\ufe0f\n"))


@pytest.mark.parametrize("profile", ["strict", "compat"])
def test_t8_forbidden_characters_are_refused_in_compat_too(profile: str) -> None:
    assert code_of(doc("name: demo\ndescription: a\u202eb\n"), profile=profile) == (
        "forbidden_character"
    )


def test_t9_name_must_equal_the_folder_name() -> None:
    assert parse_skill(doc(MINIMAL), expected_name="demo").name == "demo"
    with pytest.raises(MalformedSkillError) as info:
        parse_skill(doc(MINIMAL), expected_name="pdf-tools")
    assert (info.value.code, info.value.key) == ("name_mismatch", "name")


# -- profiles ------------------------------------------------------------------------


def test_compat_identifies_a_mismatched_skill_by_its_folder() -> None:
    skill = parse_skill(doc(MINIMAL), expected_name="folder-name", profile="compat")
    assert skill.name == "folder-name"
    assert [w.code for w in skill.warnings] == ["name_mismatch"]


def test_compat_accepts_a_non_slug_name_with_a_valid_folder() -> None:
    skill = parse_skill(
        doc("name: My Skill\ndescription: x\n"), expected_name="my-skill", profile="compat"
    )
    assert skill.name == "my-skill"
    assert [w.code for w in skill.warnings] == ["invalid_name"]


@pytest.mark.parametrize("folder", [None, "Bad Folder", "x" * 65, "caf\u00e9"])
def test_compat_refuses_a_bad_name_without_a_valid_folder(folder: str | None) -> None:
    raw = doc("name: My Skill\ndescription: x\n")
    assert code_of(raw, expected_name=folder, profile="compat") == "invalid_name"


@pytest.mark.parametrize(
    ("frontmatter", "code"),
    [("name: My Skill\ndescription: x\n", "invalid_name"), (MINIMAL, "name_mismatch")],
)
def test_strict_names_the_compat_profile_when_compat_would_accept(
    frontmatter: str, code: str
) -> None:
    raw = doc(frontmatter)
    with pytest.raises(MalformedSkillError) as info:
        parse_skill(raw, expected_name="my-skill")
    assert info.value.code == code
    assert info.value.reason.endswith(
        "; the compat profile (--profile compat, profile='compat') would identify the "
        "skill by its folder name 'my-skill'"
    )
    # Computed, not guessed: compat does take it, under that name.
    assert parse_skill(raw, expected_name="my-skill", profile="compat").name == "my-skill"


@pytest.mark.parametrize("folder", [None, "Bad Folder", "x" * 65, "caf\u00e9"])
def test_strict_does_not_name_compat_when_compat_would_refuse_too(folder: str | None) -> None:
    raw = doc("name: My Skill\ndescription: x\n")
    with pytest.raises(MalformedSkillError) as info:
        parse_skill(raw, expected_name=folder)
    assert "compat" not in info.value.reason
    assert code_of(raw, expected_name=folder, profile="compat") == "invalid_name"


def test_t226_the_compat_hint_never_echoes_the_invalid_name() -> None:
    # T13: an invalid name is never shown; the hint names only the folder, a valid slug.
    raw = doc('name: "EVIL ../../etc <b>"\ndescription: x\n')
    with pytest.raises(MalformedSkillError) as info:
        parse_skill(raw, expected_name="fine-name")
    assert info.value.code == "invalid_name"
    assert "EVIL" not in info.value.reason
    assert "'fine-name'" in info.value.reason
    assert str(info.value).isascii()


def test_compat_keeps_non_string_metadata_as_inert_data() -> None:
    skill = parse_skill(doc(MINIMAL + "metadata: {tags: [a, b], n: {m: o}}\n"), profile="compat")
    assert skill.metadata["tags"] == ("a", "b")
    assert skill.metadata["n"] == {"m": "o"}
    assert [w.code for w in skill.warnings] == ["metadata_not_string"] * 2


def test_compat_accepts_a_long_description_with_a_warning() -> None:
    skill = parse_skill(doc(f"name: demo\ndescription: {'d' * 1500}\n"), profile="compat")
    assert len(skill.description) == 1500
    assert [w.code for w in skill.warnings] == ["field_too_long"]


@pytest.mark.parametrize(
    "frontmatter",
    [
        "name: demo\nname: demo\ndescription: x\n",
        "name: demo\ndescription: x\na: &x y\n",
        "name: demo\ndescription: x\na: !!str y\n",
        "name: demo\ndescription: x\n<<: {a: b}\n",
        f"name: demo\ndescription: x\ncompatibility: {'c' * 501}\n",
        "name: demo\ndescription: x\x01\n",
    ],
)
def test_compat_relaxes_nothing_security_relevant(frontmatter: str) -> None:
    strict = code_of(doc(frontmatter), profile="strict")
    assert code_of(doc(frontmatter), profile="compat") == strict


# -- caller misuse -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "kwargs", "code"),
    [
        (("text",), {}, "bad_argument"),
        ((bytearray(b"---\n"),), {}, "bad_argument"),
        ((b"",), {"expected_name": 3}, "bad_argument"),
        ((b"",), {"limits": {"max_depth": 3}}, "bad_argument"),
        ((b"",), {"profile": "lenient"}, "bad_profile"),
    ],
)
def test_caller_misuse_is_a_usage_error(
    args: tuple[object, ...], kwargs: dict[str, object], code: str
) -> None:
    with pytest.raises(SkillUsageError) as info:
        parse_skill(*args, **kwargs)  # type: ignore[arg-type]
    assert info.value.code == code
    assert not isinstance(info.value, skillguard.SkillInputError)


# -- properties ----------------------------------------------------------------------


@settings(max_examples=300)
@given(skill_documents())
def test_round_trip_generated_skill(document: dict[str, object]) -> None:
    fields = document["fields"]
    body = document["body"]
    assert isinstance(fields, dict)
    assert isinstance(body, str)
    raw = render(fields, body)
    skill = parse_skill(raw, expected_name=fields["name"])
    assert skill.name == fields["name"]
    assert skill.description == fields["description"]
    assert skill.license == fields.get("license")
    assert skill.compatibility == fields.get("compatibility")
    assert skill.version == fields.get("version")
    assert skill.metadata == fields.get("metadata", {})
    tools = fields.get("allowed-tools", [])
    assert skill.allowed_tools == tuple(split_tools(tools) if isinstance(tools, str) else tools)
    assert skill.disable_model_invocation == (
        fields.get("disable-model-invocation", "false").lower() == "true"
    )
    assert skill.user_invocable == (fields.get("user-invocable", "true").lower() == "true")
    assert skill.argument_hint == fields.get("argument-hint")
    assert skill.model == fields.get("model")
    assert skill.context == fields.get("context")
    assert skill.agent == fields.get("agent")
    assert [(s.index, s.text) for s in skill.steps] == list(
        enumerate(fields.get("steps", []), start=1)
    )
    assert skill.body == body
    assert skill.extra == {}
    assert skill.warnings == ()
    assert skill.sha256 == hashlib.sha256(raw).hexdigest()


@settings(max_examples=500)
@given(st.one_of(st.binary(max_size=2000), mutated_documents()))
@example(b"---\n" + b"[" * 40_000 + b"\n---\n")
@example(b"---\n%YAML 1.10\n---\n")
@example(b"---\nname: demo\ndescription: x\n--- x\n---\n")
def test_t14_parse_skill_returns_a_skill_or_raises_malformed(raw: bytes) -> None:
    profiles: tuple[skillguard.Profile, ...] = ("strict", "compat")
    for profile in profiles:
        result: skillguard.Skill | MalformedSkillError
        try:
            result = parse_skill(raw, profile=profile)
        except MalformedSkillError as exc:
            result = exc
        assert isinstance(result, (skillguard.Skill, MalformedSkillError))
        if isinstance(result, MalformedSkillError):
            assert result.code
            assert result.kind == "malformed"


def test_t4_max_nodes_counts_collections_too() -> None:
    limits = Limits(max_nodes=7)
    # top map (1) + 4 scalars (5) + key "l" (6) + list (7): the list itself is the 7th.
    parse_skill(doc(MINIMAL + "l: []\n"), limits=limits)
    assert code_of(doc(MINIMAL + "l: [[]]\n"), limits=limits) == "too_many_nodes"


@pytest.mark.parametrize(
    ("frontmatter", "code"),
    [
        # Found in review: the C and pure parsers disagreed on each of these.
        ('description: "\\ud800"\nname: demo\n', "control_character"),
        ('name: demo\ndescription: "\\ud83d\\ude00"\n', "control_character"),
        ('name: demo\ndescription: "\\ud800' + "x" * 3000 + '"\n', "control_character"),
        ("%FOO\n--- #\nname: demo\ndescription: b\n", "yaml_directive"),
        ("%YAMLX 1.1\n--- #\nname: demo\ndescription: b\n", "yaml_directive"),
        ("name: demo\ndescription: |#c\n  x\n", "yaml_ambiguous"),
        ("name: demo\ndescription: >\n \n  x\n", "yaml_ambiguous"),
        ("name: demo\ndescription: |-\n \n  x\n", "yaml_ambiguous"),
        ("name: demo\ndescription: >2-#c\n   x\n", "yaml_ambiguous"),
        ("name: demo\ndescription: b\n...\n...\n", "yaml_multiple_documents"),
        ("name: demo\ndescription: b\n...\n# c\n...\n", "yaml_multiple_documents"),
        ('name: demo\ndescription: b\nlicense: "\\uFEFF"\n', "control_character"),
        ('name: demo\ndescription: b\n"\\uFEFF": v\n', "control_character"),
    ],
)
def test_parser_differentials_found_in_review_are_refused_on_both_backends(
    frontmatter: str, code: str
) -> None:
    codes = set()
    for backend in ("c", "pure"):
        with pytest.raises(MalformedSkillError) as info:
            skillguard._skills.parse.parse_skill_with(
                doc(frontmatter), expected_name=None, limits=None, profile="strict", backend=backend
            )
        codes.add(info.value.code)
    # Both refuse; at least one reaches skillguard's own rule (the other parser may
    # call the same text a syntax error first).
    assert code in codes
    assert codes <= {code, "yaml_syntax"}


def test_blank_lines_in_block_scalars_that_both_parsers_read_alike_stay_valid() -> None:
    skill = parse_skill(doc("name: demo\ndescription: >\n  a\n \n  b\nx: >2\n \n  c\n"))
    assert skill.description == "a\nb\n"
    assert skill.extra["x"] == "\nc\n"


def test_block_scalars_and_dots_that_both_parsers_read_alike_stay_valid() -> None:
    skill = parse_skill(doc("name: demo\ndescription: |2-\n   x #not a comment\nnote: |\n  ...\n"))
    assert skill.description == " x #not a comment"
    assert skill.extra["note"] == "...\n"


# -- the body (T41) ------------------------------------------------------------------

HIDDEN_BODIES = [
    pytest.param(
        "Run it.\nThen \U000e0049\U000e0067\U000e006e\U000e006f\U000e0072\U000e0065.\n",
        2,
        6,
        id="tag-characters",
    ),
    pytest.param("Rename to cat\u202egpj.exe\n", 1, 14, id="right-to-left-override"),
    pytest.param("ok\n\nrm -rf\u2066 /\u2069\n", 3, 7, id="isolate"),
    pytest.param("zero\u200bwidth\n", 1, 5, id="zero-width-space"),
    pytest.param("ig\u200cnore the rules\n", 1, 3, id="zwnj-between-ascii"),
    pytest.param("Done.\u2028## Secret\n", 1, 6, id="line-separator"),
    pytest.param("ok\nsend\U00013430it\n", 2, 5, id="hieroglyph-joiner"),
]


@pytest.mark.parametrize(("body", "line", "column"), HIDDEN_BODIES)
def test_t41_strict_refuses_a_body_that_hides_text(body: str, line: int, column: int) -> None:
    # MINIMAL is two lines: the body starts on file line 5.
    with pytest.raises(MalformedSkillError) as info:
        parse_skill(doc(MINIMAL, body))
    error = info.value
    assert (error.code, error.line, error.column) == ("forbidden_character", 4 + line, column)
    assert error.as_dict()["column"] == column
    assert f"line {4 + line}, column {column}:" in str(error)
    # Split on newlines only: splitlines() would also split at U+2028 (T115).
    hidden = body.split("\n")[line - 1][column - 1]
    assert f"U+{ord(hidden):04X}" in error.reason


@pytest.mark.parametrize(("body", "line", "column"), HIDDEN_BODIES)
def test_t41_compat_accepts_it_with_a_warning(body: str, line: int, column: int) -> None:
    skill = parse_skill(doc(MINIMAL, body), profile="compat")
    assert skill.body == body  # the hash and the body are the bytes; rendering reveals
    [warning] = skill.warnings
    assert warning.code == "hidden_character"
    assert f"line {4 + line}, column {column}:" in warning.message


def test_t41_body_line_counts_a_longer_frontmatter() -> None:
    raw = doc(MINIMAL + "license: MIT\nmetadata:\n  a: b\n", "\n\nx\u202e\n")
    with pytest.raises(MalformedSkillError) as info:
        parse_skill(raw)
    # Lines: fence, 5 frontmatter lines, fence, two blank lines, then the character.
    assert (info.value.line, info.value.column) == (10, 2)


def test_t41_controls_in_the_body_are_not_refused_but_revealed_later() -> None:
    # C1 controls in the body are the renderers' concern (T42): they are shown escaped.
    assert parse_skill(doc(MINIMAL, "a\x9bb\x7f\n")).body == "a\x9bb\x7f\n"


REAL_BODIES = [
    pytest.param(
        "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645 \u0628\u0646\u0648\u06cc\u0633\u0645.\n",
        id="persian",
    ),
    pytest.param("\U0001f468\u200d\U0001f469\u200d\U0001f467 \u2764\ufe0f\n", id="emoji"),
    pytest.param("\u05e9\u05dc\u05d5\u05dd \u200fAPI\u200f.\n", id="hebrew-rlm"),
    pytest.param("\u0915\u094d\u200d\u0937\n", id="devanagari"),
]


@pytest.mark.parametrize("profile", ["strict", "compat"])
@pytest.mark.parametrize("text", REAL_BODIES)
def test_t43_real_scripts_pass_in_every_field_and_profile(text: str, profile: str) -> None:
    line = text.strip()
    frontmatter = (
        f"name: demo\ndescription: {line}\ncompatibility: {line}\nlicense: {line}\n"
        f"version: {line}\nallowed-tools: [Read, '{line}']\nsteps: ['{line}']\n"
    )
    skill = parse_skill(doc(frontmatter, text), profile=profile)  # type: ignore[arg-type]
    assert skill.warnings == ()
    assert (skill.description, skill.body, skill.steps[0].text) == (line, text, line)


REAL_SKILLS = Path(__file__).resolve().parents[1] / "fixtures" / "real_skills"


@pytest.mark.parametrize("language", ["fa", "kn"])
@pytest.mark.parametrize("profile", ["strict", "compat"])
def test_t43_published_translations_with_zwnj_are_valid(language: str, profile: str) -> None:
    raw = (REAL_SKILLS / language / "jupyter-notebook" / "SKILL.md").read_bytes()
    skill = parse_skill(raw, expected_name="jupyter-notebook", profile=profile)  # type: ignore[arg-type]
    assert skill.warnings == ()
    assert "\u200c" in skill.description
    assert "\u200c" in skill.body


SEED_002_COMPATIBILITY = b"""---
name: deploy-to-staging
description: Deploy the current branch to the staging environment.
compatibility:
  min_agent_version: "3.0.0"
---
Body.
"""


def test_a_compatibility_mapping_is_refused_strict_and_inert_under_compat() -> None:
    with pytest.raises(MalformedSkillError) as caught:
        parse_skill(SEED_002_COMPATIBILITY)
    assert caught.value.code == "wrong_type"
    skill = parse_skill(SEED_002_COMPATIBILITY, profile="compat")
    assert skill.compatibility is None
    assert skill.extra["compatibility"] == {"min_agent_version": "3.0.0"}
    assert [warning.code for warning in skill.warnings] == ["compatibility_mapping"]
    text = parse_skill(
        SEED_002_COMPATIBILITY.replace(
            b'compatibility:\n  min_agent_version: "3.0.0"', b"compatibility: agent 3.0 or later"
        ),
        profile="compat",
    )
    assert text.compatibility == "agent 3.0 or later"
    assert text.extra == {}


# -- namespaced names (seed 002, opt-in) -----------------------------------------------


def named(name: str) -> bytes:
    return doc(f"name: '{name}'\ndescription: Deploys.\n")


@pytest.mark.parametrize("profile", ["strict", "compat"])
@pytest.mark.parametrize(
    ("declared", "namespace"),
    [
        ("local/deploy", "local"),
        ("Team_2/deploy", "Team_2"),
        ("9/deploy", "9"),
        ("a-" + "b" * 62 + "/deploy", "a-" + "b" * 62),
    ],
)
def test_namespaced_name_splits_into_namespace_and_short_name(
    declared: str, namespace: str, profile: str
) -> None:
    skill = parse_skill(
        named(declared),
        expected_name="deploy",
        namespaces=True,
        profile=profile,  # type: ignore[arg-type]
    )
    assert (skill.namespace, skill.name, skill.warnings) == (namespace, "deploy", ())


def test_a_plain_name_has_no_namespace_with_the_opt_in() -> None:
    skill = parse_skill(named("deploy"), expected_name="deploy", namespaces=True)
    assert (skill.namespace, skill.name) == (None, "deploy")


@pytest.mark.parametrize(
    "declared",
    [
        "../x/deploy",  # a path with a parent step
        "a/b/deploy",  # more than one separator
        "a/b/c",
        "/deploy",  # an empty namespace
        "//deploy",
        "./deploy",
        "../deploy",
        ".hidden/deploy",
        "-x/deploy",  # must start with a letter or digit
        "_x/deploy",
        "lo cal/deploy",
        "a\\b/deploy",  # a Windows separator
        "a.b/deploy",
        "caf\u00e9/deploy",  # ASCII only
        "a" * 65 + "/deploy",  # over-long
    ],
)
@pytest.mark.parametrize("profile", ["strict", "compat"])
def test_t87_a_namespace_cannot_smuggle_a_path(declared: str, profile: str) -> None:
    assert (
        code_of(named(declared), expected_name="deploy", namespaces=True, profile=profile)
        == "invalid_namespace"
    )


@pytest.mark.parametrize(
    "declared", ["local/", "local/Deploy", "local/deploy_it", "local/..", "local/-deploy"]
)
def test_t87_the_short_name_of_a_namespaced_name_is_a_slug(declared: str) -> None:
    assert code_of(named(declared), namespaces=True) == "invalid_name"


def test_t87_the_short_name_must_equal_the_folder_name() -> None:
    assert code_of(named("local/other"), expected_name="deploy", namespaces=True) == (
        "name_mismatch"
    )
    # Under compat the folder name identifies the skill, as for any name; the
    # namespace, valid, is kept.
    skill = parse_skill(
        named("local/other"), expected_name="deploy", namespaces=True, profile="compat"
    )
    assert (skill.namespace, skill.name) == ("local", "deploy")
    assert [w.code for w in skill.warnings] == ["name_mismatch"]


def test_t87_without_the_opt_in_a_namespaced_name_is_invalid() -> None:
    assert code_of(named("local/deploy"), expected_name="deploy") == "invalid_name"
    skill = parse_skill(named("local/deploy"), expected_name="deploy", profile="compat")
    assert (skill.namespace, skill.name) == (None, "deploy")
    assert [w.code for w in skill.warnings] == ["invalid_name"]


def test_namespaces_must_be_a_bool() -> None:
    with pytest.raises(SkillUsageError):
        parse_skill(named("deploy"), namespaces="yes")  # type: ignore[arg-type]


@settings(max_examples=300)
@given(
    st.text(alphabet=st.sampled_from("aZ9-_./\\ \u00e9\u0430\uff41"), min_size=1, max_size=12).map(
        lambda prefix: prefix + "/deploy"
    )
)
def test_t87_every_accepted_namespace_is_a_bounded_ascii_word(declared: str) -> None:
    raw = doc(f"name: {json_quote(declared)}\ndescription: Deploys.\n")
    namespace = declared.removesuffix("/deploy")
    # An oracle written from seed 002's rule, independently of the parser's expression
    # (the length bound has its own test: these namespaces are short).
    good = namespace[0] in "aZ9" and set(namespace) <= set("aZ9-_")
    for profile in ("strict", "compat"):
        if not good:
            assert (
                code_of(raw, expected_name="deploy", namespaces=True, profile=profile)
                == "invalid_namespace"
            )
            continue
        skill = parse_skill(raw, expected_name="deploy", namespaces=True, profile=profile)
        assert (skill.namespace, skill.name) == (namespace, "deploy")


def json_quote(text: str) -> str:
    # A YAML double-quoted scalar is a superset of a JSON string.
    return json.dumps(text)


# -- check_skill: every independent error at once ---------------------------------------


def test_check_skill_reports_every_independent_field_error() -> None:
    raw = (
        "---\nname: Bad_Name\ndescription: ' '\ncompatibility: " + "c" * 501 + "\n"
        "allowed-tools: Bash(git\nsteps: one\n---\n"
    ).encode()
    checked = check_skill(raw, expected_name="bad-name")
    assert checked.skill is None
    assert [(e.code, e.line, e.column) for e in checked.errors] == [
        ("invalid_name", 2, 1),
        ("empty_field", 3, 1),
        ("field_too_long", 4, 1),
        ("malformed_tools", 5, 1),
        ("wrong_type", 6, 1),
    ]
    assert checked.errors[2].reason == "'compatibility' is 501 characters; the limit is 500"
    # parse_skill stops at the first of them.
    with pytest.raises(MalformedSkillError) as info:
        parse_skill(raw, expected_name="bad-name")
    assert info.value.code == "invalid_name"


def test_check_skill_reports_both_missing_fields() -> None:
    checked = check_skill(b"---\nlicense: MIT\n---\n")
    assert [(e.code, e.key) for e in checked.errors] == [
        ("missing_field", "name"),
        ("missing_field", "description"),
    ]


def test_check_skill_stops_at_a_yaml_error() -> None:
    checked = check_skill(b"---\nname: Bad_Name\ndescription: Use when: always\n---\n")
    [error] = checked.errors
    assert (error.code, error.line, error.column) == ("yaml_syntax", 3, 22)
    assert "quote the whole value" in error.reason


def test_check_skill_returns_the_skill_and_its_key_lines() -> None:
    checked = check_skill(b"---\nname: x\ndescription: d\nauthor: me\n---\n")
    assert checked.errors == ()
    assert checked.skill is not None
    assert checked.skill.name == "x"
    assert checked.key_lines["author"] == 4


def test_the_length_message_names_the_length_and_the_limit() -> None:
    raw = f"---\nname: x\ndescription: {'d' * 1068}\n---\n".encode()
    with pytest.raises(MalformedSkillError) as info:
        parse_skill(raw)
    assert info.value.reason == "'description' is 1068 characters; the limit is 1024"


def test_a_name_mismatch_names_both_names() -> None:
    with pytest.raises(MalformedSkillError) as info:
        parse_skill(b"---\nname: pdf-tools\ndescription: d\n---\n", expected_name="other")
    assert info.value.reason.startswith("'name' is 'pdf-tools' but the folder is 'other'; ")


@pytest.mark.parametrize(
    ("candidate", "why"),
    [
        ("", "it is empty"),
        ("a" * 65, "it is 65 characters; the limit is 64"),
        ("Pdf", "uppercase"),
        ("caf\u00e9", "non-ASCII"),
        ("a_b", "other than a-z"),
        ("-a", "starts or ends"),
        ("a--b", "two hyphens"),
    ],
)
def test_name_problem_says_why(candidate: str, why: str) -> None:
    problem = name_problem(candidate)
    assert problem is not None
    assert why in problem
    assert name_problem("pdf-tools") is None


def test_compat_says_why_the_folder_name_cannot_replace_the_name() -> None:
    with pytest.raises(MalformedSkillError) as info:
        parse_skill(
            b"---\nname: Bad\ndescription: d\n---\n", expected_name="My_Folder", profile="compat"
        )
    assert info.value.code == "invalid_name"
    assert "'My_Folder' cannot be a skill name: it holds an uppercase letter" in info.value.reason
    with pytest.raises(MalformedSkillError) as info:
        parse_skill(b"---\nname: Bad\ndescription: d\n---\n", profile="compat")
    assert "no folder name can replace it" in info.value.reason


@pytest.mark.parametrize("backend", ["c", "pure"])
@pytest.mark.parametrize(
    ("frontmatter", "hint", "line", "column"),
    [
        ("name: x\ndescription: Use when: always\n", "quote the whole value", 3, 22),
        ('name: x\ndescription: "open\n', "never closed", 4, 1),
        ("name: x\ndescription: @x\n", "reserves", 3, 14),
        ("name: x\ndescription: [a\n", "'[' or '{' is never closed", 4, 1),
        ("name: x\n- a\n", "not a 'key: value' pair", 3, 1),
        ('name: x\ndescription: "\\q"\n', "unknown escape", 3, None),
        ('name: x\ndescription: "\\x"\n', "unknown escape", 3, None),
        # A tab that indents a key: each backend words it its own way.
        ("name: x\n\tdescription: y\n", "indent with spaces", 3, 1),
        ("name: x\nlicense: [\n", "followed by no value", 4, 1),
        ("name: x\ndescription: |x\n  a\n", "may follow '|' or '>'", 3, 15),
        # The line that is neither a pair nor indented, not the line after it.
        ("name: x\ndescription: a long\nvalue here\nlicense: y\n", "indent the next", 4, 1),
        ("name: x\ndescription: - a list\n", "starts a list", 3, 14),
    ],
)
def test_yaml_syntax_errors_say_what_is_wrong(
    backend: str, frontmatter: str, hint: str, line: int, column: int | None
) -> None:
    if backend == "c" and not has_c_parser():
        pytest.skip("ruamel.yaml.clib is not installed")
    raw = f"---\n{frontmatter}---\n".encode()
    with pytest.raises(MalformedSkillError) as info:
        parse_skill_with(
            raw,
            expected_name=None,
            limits=None,
            profile="strict",
            backend=backend,  # type: ignore[arg-type]
        )
    assert info.value.code == "yaml_syntax"
    assert hint in info.value.reason
    assert info.value.line == line
    if column is not None:
        assert info.value.column == column


_PROFILES: tuple[skillguard.Profile, ...] = ("strict", "compat")
_SMALL = Limits(
    max_skill_bytes=4096,
    max_frontmatter_bytes=2048,
    max_depth=4,
    max_nodes=64,
    max_scalar_bytes=256,
)


def _outcome(
    raw: bytes, expected: str | None, limits: Limits | None, profile: skillguard.Profile
) -> skillguard.Skill | tuple[str, int | None, int | None]:
    """What a loader gets from parse_skill: the skill, or the refusal and its place."""
    try:
        return parse_skill(raw, expected_name=expected, limits=limits, profile=profile)
    except MalformedSkillError as exc:
        return (exc.code, exc.line, exc.column)


@settings(max_examples=300, deadline=None)
@given(hostile_skill_files())
def test_check_skill_agrees_with_parse_skill_on_hostile_documents(raw: bytes) -> None:
    # validate prints check_skill's errors and a loader raises parse_skill's: the two must
    # never disagree on whether a document is a skill, and the error a loader raises
    # (with its place) is the first one validate prints. read-properties then reads the
    # fields of every accepted document without an error.
    for limits in (None, _SMALL):
        for profile in _PROFILES:
            for expected in (None, "demo", "Bad_Folder"):
                loaded = _outcome(raw, expected, limits, profile)
                checked = check_skill(raw, expected_name=expected, limits=limits, profile=profile)
                if isinstance(loaded, skillguard.Skill):
                    assert checked.errors == ()
                    assert checked.skill == loaded
                    assert isinstance(frontmatter_fields(raw, limits=limits), dict)
                else:
                    assert checked.skill is None
                    first = checked.errors[0]
                    assert (first.code, first.line, first.column) == loaded


# Keys that differ only in ways a shared warning could blur: case, Unicode
# normalization, a trailing space, one character past the sharing cap.
_LOOKALIKE_KEYS = (
    "author",
    "Author",
    "author ",
    "caf\u00e9",
    "cafe\u0301",
    "x" * 64,
    "x" * 65,
    "\U0001f600" * 64,
    "\U0001f600" * 65,
)


@pytest.mark.parametrize("profile", ["strict", "compat"])
def test_t13_a_shared_unknown_field_warning_names_each_skills_own_key(
    profile: skillguard.Profile,
) -> None:
    # The unknown-field warnings of short keys are shared between skills: each skill's
    # warning must still be the one built for its own key, whoever parsed it first.
    for first, second in itertools.permutations(_LOOKALIKE_KEYS, 2):
        for key in (first, second):
            # Shown escaped, and cut at 64 characters (T13).
            shown = ascii(key[:64]) + ("..." if len(key) > 64 else "")
            checked = check_skill(doc(MINIMAL + f'"{key}": v\n'), profile=profile)
            assert checked.skill is not None
            warnings = checked.skill.warnings
            assert [(w.code, w.key, w.message, w.line) for w in warnings] == [
                ("unknown_field", key, f"unknown field {shown} kept as inert data", None)
            ], (first, second)
            assert type(warnings[0].key) is str
            assert checked.key_lines[key] == 4  # after the fence, name and description


def test_t1_many_distinct_unknown_fields_do_not_grow_the_shared_warnings() -> None:
    # A catalog of skills that each carry new keys (hostile, or generated) keeps at most
    # the cache's size of shared warnings; a key over the sharing cap is never kept.
    shared = skillguard._skills.fields._shared_unknown_field
    for batch in range(40):
        keys = "".join(f"k{batch}-{index}: v\n" for index in range(50))
        parse_skill(doc(MINIMAL + keys), profile="compat")
    assert shared.cache_info().currsize == shared.cache_info().maxsize == 256
    shared.cache_clear()
    parse_skill(doc(MINIMAL + "y" * 65 + ": v\n" + "z" * 1000 + ": v\n"))
    assert shared.cache_info().currsize == 0
