"""The body rule's byte pre-check (``document.may_hide``): it may only ever send a body
on to the full scan, never pass one that the scan would refuse (threat-model.md T41)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from skillguard._core.text import SUSPECT_CHARS, SUSPECT_RANGES
from skillguard._skills.document import hidden_in_body, may_hide

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


def test_t41_the_leading_bom_of_a_file_sends_it_to_the_scan() -> None:
    # decode_utf8 removes it from the text, but the pre-check reads the raw bytes:
    # it can only look closer than it needs to, never less.
    source = b"\xef\xbb\xbf---\nname: a\n---\nbody\n"
    assert may_hide(source)
    assert hidden_in_body("body\n", 4, source=source) is None


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
