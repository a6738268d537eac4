"""The body rule's byte pre-check (``document.may_hide``): it may only ever send a body
on to the full scan, never pass one that the scan would refuse (threat-model.md T41)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillguard import MalformedSkillError, parse_skill
from skillguard._core.text import SUSPECT_CHARS, SUSPECT_RANGES
from skillguard._skills.document import hidden_in_body, may_hide, read_document
from skillguard.agents import parse_agent

if TYPE_CHECKING:
    from skillguard import Profile

# Up to this many code points of four UTF-8 bytes stay within the pre-check's cap.
_PER_CALL = 256


def _non_suspect_code_points() -> list[int]:
    out = []
    for code in range(0x80, 0x110000):
        if 0xD800 <= code <= 0xDFFF or chr(code) in SUSPECT_CHARS:
            continue
        out.append(code)
    return out


def test_t41_every_suspect_character_makes_the_precheck_look_closer() -> None:
    for low, high in SUSPECT_RANGES:
        for code in range(low, high + 1):
            text = f"plain text {chr(code)} more text"
            assert may_hide(text.encode("utf-8")), hex(code)


def test_t41_no_other_character_does() -> None:
    # Every other non-ASCII code point, in batches: a pre-check that looked closer at
    # anything else would only cost time, but one that answered "no" for a suspect
    # character (above) would let it through.
    codes = _non_suspect_code_points()
    for start in range(0, len(codes), _PER_CALL):
        batch = "a".join(chr(code) for code in codes[start : start + _PER_CALL])
        assert not may_hide(batch.encode("utf-8")), hex(codes[start])


def test_an_ascii_source_needs_no_look() -> None:
    source = b"---\nname: a\n---\n# Body\n\ttabs and \x0b controls are not its concern\n"
    assert not may_hide(source)


def test_t41_a_source_with_many_non_ascii_bytes_is_always_scanned() -> None:
    # Over the cap the pre-check does not decide: the full scan reads the body.
    assert may_hide(("\u00e9" * 600).encode("utf-8"))


def test_t41_the_leading_bom_of_a_file_is_not_read_as_part_of_its_body() -> None:
    # decode_utf8 removes one leading BOM, so no body holds it: a file that starts with
    # one needs no closer look for it. A second one is in the text, and is looked at.
    source = b"\xef\xbb\xbf---\nname: a\n---\nbody\n"
    assert not may_hide(source)
    assert hidden_in_body("body\n", 4, source=source) is None
    assert may_hide(b"\xef\xbb\xbf---\nname: a\n---\nbo\xef\xbb\xbfdy\n")
    assert hidden_in_body("bo\ufeffdy\n", 4, source=b"\xef\xbb\xbfbo\xef\xbb\xbfdy\n") == (
        "forbidden_character",
        4,
        3,
        "the invisible or bidirectional character U+FEFF in the body",
    )


_ALPHABET = st.sampled_from(
    [
        "a",
        " ",
        "\n",
        "\u00e9",  # Latin
        "\u2014",  # em dash, beside the bidi controls in the same UTF-8 block
        "\u4e2d",  # CJK
        "\u05d0",  # Hebrew: lets bidi marks through
        "\u0915\u094d",  # Devanagari with a virama
        "\U0001f600",  # an emoji
        "\u200b",  # zero-width space (refused)
        "\u200d",  # ZWJ (context)
        "\u200e",  # LRM (context)
        "\u202e",  # RLO (refused)
        "\ufe0f",  # variation selector (context)
        "\U000e0041",  # tag character (refused)
        "\u00ad",  # soft hyphen (refused)
        "\x85",  # NEL: a line break to some readers
        "\x0b",
    ]
)


@given(st.lists(_ALPHABET, max_size=60).map("".join), st.booleans())
def test_t41_with_its_source_the_body_rule_answers_as_without(body: str, framed: bool) -> None:
    source = (f"---\nname: a\ndescription: d\n---\n{body}" if framed else body).encode("utf-8")
    assert hidden_in_body(body, 5, source=source) == hidden_in_body(body, 5)


# The pre-check reads the file's bytes, the scan the decoded body: every way the two
# can differ (a leading BOM, CRLF and lone CR, a suspect character in the frontmatter
# only, more non-ASCII bytes than the cap, bytes that are not UTF-8) is generated here.
_BODY_PIECES = st.sampled_from(
    [
        "a",
        " ",
        "\n",
        "\r\n",
        "\r",
        "\t",
        "# H\n",
        "\u00e9",
        "\u4e2d",
        "\u05d0",
        "\u0627",
        "\u0915\u094d\u200d",  # a ZWJ after a virama (allowed)
        "\U0001f600",
        "\U0001f3f4\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f",  # a flag
        "\u1820\u180b",  # Mongolian letter and free variation selector (allowed)
        "\u00a0",
        "\u3000",
        "\x1f",  # a control that is the renderers' concern, not the body rule's
    ]
)
_SUSPECT = st.sampled_from(
    [
        "\u200b",
        "\u200c",
        "\u200d",
        "\u200e",
        "\u061c",
        "\u202e",
        "\u2066",
        "\ufe0f",
        "\u00ad",
        "\u034f",
        "\u3164",
        "\u115f",
        "\u180e",
        "\ufeff",
        "\u2028",
        "\u2029",
        "\U000e0041",
        "\U000e0100",
        "\U0001d173",
        "\U00013430",
        "\x85",
        "\x0b",
        "\x0c",
        "\x1c",
        "\x1d",
        "\x1e",
        "\x00",  # refused by read_document, where it is in the body
    ]
)
# Suspect characters a frontmatter comment may hold (the frontmatter's own rules refuse
# the others): they make the pre-check look closer at a body that holds none.
_COMMENT_PIECES = st.sampled_from(["", "\u00e9", "\u200b", "\u202e", "\u200e", "\U000e0041"])
_WIDE = st.sampled_from(["\u00e9", "\u4e2d", "\U0001f600"])
_BAD_BYTES = st.sampled_from(
    [b"\xc3", b"\xc3A\xa9", b"\xed\xa0\x80", b"\xc0\x80", b"\xe0\x80\xaf", b"\xf4\x90\x80\x80"]
)


@st.composite
def _documents(draw: st.DrawFn) -> bytes:
    """The bytes of a document that is a valid SKILL.md and agent file but for its body
    (and, now and then, a byte that is not UTF-8)."""
    pieces = draw(st.lists(st.one_of(_BODY_PIECES, _BODY_PIECES, _BODY_PIECES, _SUSPECT)))
    if draw(st.booleans()):
        # Past the pre-check's cap (1024 bytes): the body goes to the scan.
        pieces.insert(draw(st.integers(0, len(pieces))), draw(_WIDE) * draw(st.integers(250, 1100)))
    newline = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    comment = draw(_COMMENT_PIECES)
    text = newline.join(["---", "name: a", "description: d", f"# {comment}", "---", ""])
    raw = (text + "".join(pieces)).encode("utf-8")
    if draw(st.booleans()):
        raw = b"\xef\xbb\xbf" + raw
    if draw(st.integers(0, 9)) == 0:
        at = draw(st.integers(0, len(raw)))
        raw = raw[:at] + draw(_BAD_BYTES) + raw[at:]
    return raw


@settings(max_examples=400, deadline=None)
@given(_documents())
def test_t41_the_precheck_on_the_file_bytes_answers_as_the_scan_of_the_body(
    raw: bytes,
) -> None:
    refused = _refused(raw)
    if refused is not None:
        # Refused before the body rule (bad UTF-8, NUL): the pre-check never ran.
        assert refused[0] in {"bad_encoding", "control_character"}
        return
    _, _, body, line = read_document(raw, None, "strict")
    assert "\x00" not in body  # the search of the bytes for NUL found every one
    assert hidden_in_body(body, line, source=raw) == hidden_in_body(body, line)


def _refused(raw: bytes) -> tuple[str, int | None, int | None] | None:
    """The code and place ``read_document`` refuses *raw* with, if it does."""
    try:
        read_document(raw, None, "strict")
    except MalformedSkillError as exc:
        return exc.code, exc.line, exc.column
    return None


def _expected(raw: bytes) -> tuple[str, int, int] | None:
    """What the body rule without the pre-check (the scan of every body) finds."""
    _, _, body, line = read_document(raw, None, "strict")
    found = hidden_in_body(body, line)
    return None if found is None else found[:3]


@settings(max_examples=300, deadline=None)
@given(_documents(), st.sampled_from(["strict", "compat"]))
def test_t115_skills_and_agent_files_keep_the_body_rule_of_the_full_scan(
    raw: bytes, profile: Profile
) -> None:
    refused = _refused(raw)
    if refused is not None:
        for parse in (parse_skill, parse_agent):
            with pytest.raises(MalformedSkillError) as error:
                parse(raw, profile=profile)
            assert (error.value.code, error.value.line, error.value.column) == refused
        return
    expected = _expected(raw)
    for parse in (parse_skill, parse_agent):
        if expected is not None and profile == "strict":
            with pytest.raises(MalformedSkillError) as error:
                parse(raw, profile=profile)
            assert (error.value.code, error.value.line, error.value.column) == expected
            continue
        warnings = parse(raw, profile=profile).warnings
        # Both name the place in the message (an agent file's warning only there).
        hidden = [w.message for w in warnings if w.code == "hidden_character"]
        assert len(hidden) == (expected is not None)
        if expected is not None:
            assert hidden[0].startswith(f"line {expected[1]}, column {expected[2]}: ")
