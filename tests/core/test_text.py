"""The character rules: what is refused, what real scripts keep, and the escapers."""

from __future__ import annotations

import re
import unicodedata
from typing import TYPE_CHECKING

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillguard import parse_skill
from skillguard._core.text import (
    REFUSED_RANGES,
    SUSPECT_CHARS,
    SUSPECT_RANGES,
    find_hidden,
    reveal,
    terminal_line,
    terminal_safe,
)
from tests.steps import grows_linearly, python_steps

if TYPE_CHECKING:
    from collections.abc import Callable

# Real-looking text that uses a joiner, a mark or a selector where its script needs it.
REAL_TEXT = [
    pytest.param(
        "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645 \u0628\u0646\u0648\u06cc\u0633\u0645",
        id="persian-zwnj",
    ),
    pytest.param(
        "\u06a9\u062a\u0627\u0628\u200c\u0647\u0627 \u0631\u0627 \u0628\u062e\u0648\u0627\u0646",
        id="persian-plural-zwnj",
    ),
    pytest.param(
        "\u0915\u094d\u200c\u0937 \u0914\u0930 \u0915\u094d\u200d\u0937", id="devanagari-zwnj-zwj"
    ),
    pytest.param("\u0d28\u0d4d\u200d \u0d05\u0d24\u0d4d", id="malayalam-chillu-zwj"),
    pytest.param("aspire.dev\u200c\u0ca8\u0cbf\u0c82\u0ca6", id="kannada-suffix-after-latin"),
    pytest.param("Family: \U0001f468\u200d\U0001f469\u200d\U0001f467 done", id="emoji-family"),
    pytest.param("Pride \U0001f3f3\ufe0f\u200d\U0001f308 flag", id="emoji-rainbow-flag"),
    pytest.param("Coder \U0001f469\U0001f3fd\u200d\U0001f4bb here", id="emoji-skin-tone"),
    pytest.param("Heart \u2764\ufe0f\u200d\U0001f525 on fire", id="emoji-heart-on-fire"),
    pytest.param("Press #\ufe0f\u20e3 then 1\ufe0f\u20e3", id="keycaps"),
    pytest.param("Warning \u26a0\ufe0f and \u2764\ufe0e text style", id="presentation-selectors"),
    pytest.param(
        "Go \U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f!",
        id="scotland-flag",
    ),
    pytest.param("\u05e9\u05dc\u05d5\u05dd \u200fworld\u200f (v2)", id="hebrew-rlm"),
    pytest.param(
        "\u0645\u0631\u062d\u0628\u0627 \u200eAPI\u200e \u0627\u0644\u0622\u0646", id="arabic-lrm"
    ),
    pytest.param("\u0627\u0644\u0639\u062f\u062f \u061c-5", id="arabic-alm"),
    pytest.param("\u845b\ufe00 and \u8fbb\ufe01", id="cjk-variant"),
    pytest.param("\u1820\u180b\u1821", id="mongolian-fvs"),
    pytest.param("v2\u200c\u0645", id="zwnj-after-a-digit"),
    pytest.param("plain ASCII, tabs\tand\nnewlines", id="ascii"),
]


@pytest.mark.parametrize("text", REAL_TEXT)
def test_t43_real_scripts_keep_the_characters_they_need(text: str) -> None:
    assert find_hidden(text) is None
    assert reveal(text) is text
    assert terminal_safe(text) == text


# Each refused at the index given: out of its script's context, or never allowed.
OUT_OF_CONTEXT = [
    pytest.param("ig\u200cnore", 2, id="zwnj-between-ascii"),
    pytest.param("=\u200c\u0645", 1, id="zwnj-after-punctuation"),
    pytest.param("ig\u200dnore", 2, id="zwj-between-ascii"),
    pytest.param("\u0645\u06cc\u200c\u200c\u062e", 2, id="zwnj-run"),
    pytest.param("\u0645\u06cc\u200c", 2, id="zwnj-at-end"),
    pytest.param("a\u200d ", 1, id="zwj-after-latin-at-word-end"),
    pytest.param("\u200c\u0645", 0, id="zwnj-at-start"),
    pytest.param("\U0001f468\u200d\u200d\U0001f469", 1, id="zwj-run"),
    pytest.param("a\ufe0f\u200d\u2764", 1, id="selector-after-ascii"),
    pytest.param("\u2764\ufe0f\ufe01\ufe02", 2, id="selector-run"),
    pytest.param("#\ufe0f!", 1, id="keycap-without-keycap"),
    pytest.param("\ufe0f", 0, id="selector-alone"),
    pytest.param("\n\ufe0f", 1, id="selector-after-newline"),
    pytest.param("hello \u200fworld", 6, id="rlm-in-english"),
    pytest.param("\u0645\u0631\u062d\u0628\u0627\nhello \u200eworld", 12, id="lrm-rtl-elsewhere"),
    pytest.param("x\u061c", 1, id="alm-alone"),
    pytest.param("a\u180bb", 1, id="mongolian-selector-after-latin"),
    pytest.param("\U000e0041\U000e0042", 0, id="tags"),
    pytest.param("\U0001f3f4\U000e0078\U000e0078\U000e007f", 1, id="not-a-recommended-flag"),
    pytest.param("\U0001f3f4\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067", 1, id="no-cancel"),
    pytest.param("\u8fbb\U000e0100", 1, id="supplementary-selector"),
    pytest.param("\u0645\u034f\u200c\u0645", 1, id="cgj-beside-a-joiner"),
    pytest.param("\u3164\u200c\u0645", 0, id="hangul-filler-beside-a-joiner"),
]


@pytest.mark.parametrize(("text", "index"), OUT_OF_CONTEXT)
def test_t43_joiners_marks_and_selectors_out_of_context_are_refused(text: str, index: int) -> None:
    assert find_hidden(text) == (index, text[index])
    assert f"[U+{ord(text[index]):04X}]" in reveal(text)


REFUSED_EDGES = sorted({chr(code) for low, high in REFUSED_RANGES for code in (low, high)})


@pytest.mark.parametrize("char", REFUSED_EDGES)
@pytest.mark.parametrize(
    "context",
    ["safe{}text", "\u0645\u06cc{}\u062e", "\U0001f468{}\U0001f469", "\u05e9{}\u05dc"],
)
def test_t8_refused_characters_are_refused_in_every_context(char: str, context: str) -> None:
    text = context.format(char)
    found = find_hidden(text)
    assert found is not None
    assert found[1] == char


def test_t8_the_sets_agree() -> None:
    assert len(SUSPECT_CHARS) == sum(high - low + 1 for low, high in SUSPECT_RANGES)
    for low, high in REFUSED_RANGES:
        assert chr(low) in SUSPECT_CHARS
        assert chr(high) in SUSPECT_CHARS
    # Every default-ignorable character of the Basic Multilingual Plane that Python's
    # Unicode data marks as a format character (Cf) is looked at, except the visible
    # prepended concatenation marks and the Egyptian, Arabic and Syriac format marks.
    visible_cf = {0x0600, 0x0601, 0x0602, 0x0603, 0x0604, 0x0605, 0x06DD, 0x070F}
    visible_cf |= {0x0890, 0x0891, 0x08E2}
    for code in range(0x10000):
        if unicodedata.category(chr(code)) == "Cf" and code not in visible_cf:
            assert chr(code) in SUSPECT_CHARS, f"U+{code:04X}"


def test_t41_reveal_shows_refused_characters_and_controls() -> None:
    assert reveal("a\u202eb\x1b[2Jc\x7f\x85\x9b\U000e0041") == (
        "a[U+202E]b[U+001B][2Jc[U+007F][U+0085][U+009B][U+E0041]"
    )
    assert reveal("tab\tand\nnewline stay") == "tab\tand\nnewline stay"
    assert reveal("bell\x07") == "bell[U+0007]"
    # The characters a script needs stay as they are beside a revealed one.
    assert reveal("\u0645\u06cc\u200c\u062e\u200b") == "\u0645\u06cc\u200c\u062e[U+200B]"


def test_reveal_returns_the_same_object_when_there_is_nothing_to_do() -> None:
    plain = "A plain body.\n\n- with a list\n"
    assert reveal(plain) is plain
    persian = "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"
    assert reveal(persian) is persian


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("\x1b[31mred", "[U+001B][31mred"),
        ("one-byte CSI \x9b2J", "one-byte CSI [U+009B]2J"),
        ("next line\x85", "next line[U+0085]"),
        ("delete\x7f", "delete[U+007F]"),
        ("line\u2028separator", "line[U+2028]separator"),
        ("lone \udcff surrogate", "lone [U+DCFF] surrogate"),
        ("\u202egpj.exe", "[U+202E]gpj.exe"),
        ("keeps\ttab\nand newline", "keeps\ttab\nand newline"),
        ("caf\u00e9 \u2764\ufe0f", "caf\u00e9 \u2764\ufe0f"),
    ],
)
def test_t42_terminal_safe_escapes_what_a_terminal_acts_on(text: str, shown: str) -> None:
    assert terminal_safe(text) == shown


def test_t13_terminal_line_keeps_a_name_on_its_line() -> None:
    assert terminal_line("a\nb\tc\x1b") == "a[U+000A]b[U+0009]c[U+001B]"
    assert terminal_line("plain") == "plain"


_ANY_TEXT = st.text(
    st.one_of(
        st.characters(codec="utf-8"),
        st.sampled_from([*sorted(SUSPECT_CHARS)[:64], "\u200c", "\u200d", "\ufe0f", "\u200f"]),
        st.sampled_from(["\u0645", "\u06cc", "\U0001f468", "#", "\u20e3", "\x9b", "\n"]),
    ),
    max_size=40,
)


@given(_ANY_TEXT)
def test_t41_revealed_text_hides_nothing(text: str) -> None:
    shown = reveal(text)
    assert find_hidden(shown) is None
    assert reveal(shown) == shown
    safe = terminal_safe(text)
    assert find_hidden(safe) is None
    assert all(ch in "\t\n" or not (ch < " " or "\x7f" <= ch <= "\x9f") for ch in safe)


@pytest.mark.parametrize("at", [0, 1, 255, 256, 257, 511, 512, 1000])
@pytest.mark.parametrize("hidden", ["\u202e", "\U000e0041", "\u200b"])
def test_t41_a_hidden_character_is_found_anywhere_in_a_long_text(at: int, hidden: str) -> None:
    # Long text is scanned in stretches; mostly-ASCII text with one non-ASCII letter
    # elsewhere, and the hidden character on either side of a stretch boundary.
    text = "a" * at + hidden + "b" * 600 + "\u00e9"
    assert find_hidden(text) == (at, hidden)
    assert reveal(text) == "a" * at + f"[U+{ord(hidden):04X}]" + "b" * 600 + "\u00e9"
    assert terminal_safe(text) == reveal(text)


def test_t42_controls_in_an_ascii_stretch_of_a_non_ascii_text_are_escaped() -> None:
    text = "\u00e9" + "a" * 600 + "\x1b[2J" + "\x9b"
    assert reveal(text) == "\u00e9" + "a" * 600 + "[U+001B][2J[U+009B]"
    assert terminal_safe(text) == reveal(text)


@pytest.mark.parametrize("char", ["\ufe00", "\u3164", "\u034f", "\U000e0100", "\u17b4"])
def test_t42_refused_characters_that_count_as_printable_are_escaped(char: str) -> None:
    assert char.isprintable()
    shown = f"[U+{ord(char):04X}]"
    assert terminal_safe(char) == terminal_line(char) == reveal(char) == shown


# -- line separators and hieroglyph format controls (T115) ---------------------------

HIEROGLYPH_A = "\U00013000"
HIEROGLYPH_B = "\U00013001"
VERTICAL_JOINER = "\U00013430"
BEGIN_SEGMENT = "\U00013437"


@pytest.mark.parametrize("char", ["\u2028", "\u2029"])
@pytest.mark.parametrize(
    "context", ["## Persona{}## Rules", "\u05e9{}\u05dc", "\u0645{}\u062e", "{}"]
)
def test_t115_line_and_paragraph_separators_are_refused_everywhere(char: str, context: str) -> None:
    text = context.format(char)
    assert find_hidden(text) == (text.index(char), char)
    assert reveal(text) == text.replace(char, f"[U+{ord(char):04X}]")


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(f"{HIEROGLYPH_A}{VERTICAL_JOINER}{HIEROGLYPH_B}", id="joined"),
        pytest.param(f"{HIEROGLYPH_A}{VERTICAL_JOINER}{BEGIN_SEGMENT}{HIEROGLYPH_B}", id="pair"),
        pytest.param(f"{BEGIN_SEGMENT}{HIEROGLYPH_A}", id="before-a-sign"),
        pytest.param(f"{HIEROGLYPH_A}\U0001343f", id="after-a-sign"),
        pytest.param(f"\U00013460{VERTICAL_JOINER}\U00013461", id="extended-a"),
    ],
)
def test_t115_hieroglyph_format_controls_stay_in_hieroglyphic_text(text: str) -> None:
    assert find_hidden(text) is None
    assert reveal(text) is text


@pytest.mark.parametrize(
    ("text", "index"),
    [
        pytest.param(f"ignore{VERTICAL_JOINER}rules", 6, id="between-ascii"),
        pytest.param(f"{VERTICAL_JOINER}", 0, id="alone"),
        pytest.param(f"\u05e9{VERTICAL_JOINER}\u05dc", 1, id="between-hebrew-letters"),
        pytest.param(
            f"{HIEROGLYPH_A}{VERTICAL_JOINER}{VERTICAL_JOINER}{VERTICAL_JOINER}{HIEROGLYPH_B}",
            2,
            id="run-of-three",
        ),
        pytest.param(f"{HIEROGLYPH_A} \U00013438", 2, id="after-a-space"),
    ],
)
def test_t115_hieroglyph_format_controls_are_refused_elsewhere(text: str, index: int) -> None:
    assert find_hidden(text) == (index, text[index])
    assert f"[U+{ord(text[index]):04X}]" in reveal(text)


def test_t115_every_format_character_of_every_plane_is_looked_at() -> None:
    # The astral planes too: every format character (Cf) that Python's Unicode data
    # knows is looked at, except the visible prepended concatenation marks (Arabic,
    # Syriac, Kaithi) and the Arabic format marks.
    visible_cf = {0x0600, 0x0601, 0x0602, 0x0603, 0x0604, 0x0605, 0x06DD, 0x070F}
    visible_cf |= {0x0890, 0x0891, 0x08E2, 0x110BD, 0x110CD}
    for code in range(0x110000):
        if unicodedata.category(chr(code)) == "Cf" and code not in visible_cf:
            assert chr(code) in SUSPECT_CHARS, f"U+{code:04X}"
    assert {"\u2028", "\u2029"} <= SUSPECT_CHARS
    assert terminal_line("a\u2028b\u2029c") == "a[U+2028]b[U+2029]c"


# -- one pass, whatever the text (T141) ----------------------------------------------

LRM, RLM, ALEF, HEBREW = "\u200e", "\u200f", "\u0627", "\u05d0"

# Each shape grows with n; the first is the issue's: one line of marks that a single
# right-to-left letter at its end allows, which cost a rescan of the line per mark.
T141_SHAPES: dict[str, Callable[[int], str]] = {
    "marks-then-a-letter": lambda n: LRM * n + HEBREW,
    "marks-between-latin": lambda n: ("x" + RLM) * n + HEBREW,
    "marks-on-many-lines": lambda n: (HEBREW + "xxxx" + LRM + "\n") * n,
    "refused-marks": lambda n: ("x" + LRM) * n,
    "joiners": lambda n: (ALEF + "\u200c") * n + ALEF,
    "emoji-sequences": lambda n: ("\U0001f468\u200d") * n + "\U0001f469",
    "selectors": lambda n: ("\u2764\ufe0f") * n,
    "flags": lambda n: "\U0001f3f4\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f" * n,
}


@pytest.mark.parametrize("shape", T141_SHAPES)
@pytest.mark.parametrize("scan", [find_hidden, reveal, terminal_safe])
def test_t141_the_character_rules_read_a_text_once(
    shape: str, scan: Callable[[str], object]
) -> None:
    make = T141_SHAPES[shape]
    scan(make(1))  # the character classes are worked out once, on first use
    assert grows_linearly(lambda n: python_steps(lambda: scan(make(n))), 200)


@pytest.mark.parametrize(
    "document",
    [
        # A description of marks and one letter; three metadata values of them.
        lambda n: f"name: a\ndescription: {LRM * n}{HEBREW}\n",
        lambda n: (
            "name: a\ndescription: d\nmetadata:\n"
            + "".join(f"  k{i}: {LRM * n}{HEBREW}\n" for i in range(3))
        ),
    ],
    ids=["description", "metadata"],
)
def test_t141_fields_of_marks_cost_linear_work(document: Callable[[int], str]) -> None:
    def cost(n: int) -> int:
        raw = f"---\n{document(n)}---\n{LRM * n}{HEBREW}\n".encode()
        return python_steps(lambda: parse_skill(raw))

    assert grows_linearly(cost, 200)


def _reference_allowed(text: str, index: int) -> bool:
    """The context rules of the module docstring, written the obvious way: each
    character decided on its own, its line read again for each bidi mark."""
    ch = text[index]
    before = text[index - 1] if index else ""
    after = text[index + 1] if index + 1 < len(text) else ""

    def word(c: str) -> bool:
        return bool(c) and c not in SUSPECT_CHARS and unicodedata.category(c)[0] in "LMN"

    def emoji(c: str) -> bool:
        return bool(c) and not c.isascii() and unicodedata.category(c) == "So"

    if ch in "\u200c\u200d":
        if word(before) and word(after) and not (before.isascii() and after.isascii()):
            return True
        if ch == "\u200d" and before and unicodedata.combining(before) == 9:
            return True
        if ch == "\u200c" or not emoji(after):
            return False
        if before == "\ufe0f":
            return _reference_allowed(text, index - 1)
        return 0x1F3FB <= ord(before or "\0") <= 0x1F3FF or emoji(before)
    if ch in "\u200e\u200f\u061c":
        line = text[text.rfind("\n", 0, index) + 1 :].split("\n", 1)[0]
        return any(
            unicodedata.bidirectional(c) in ("R", "AL") and c not in "\u200e\u200f\u061c"
            for c in line
        )
    code = ord(ch)
    if 0xFE00 <= code <= 0xFE0F:
        if not before or before in SUSPECT_CHARS or unicodedata.category(before)[0] in "CZ":
            return False
        if not before.isascii():
            return True
        return ch in "\ufe0e\ufe0f" and before in "#*0123456789" and after == "\u20e3"
    if 0x180B <= code <= 0x180F:
        return bool(before) and 0x1820 <= ord(before) <= 0x18AA
    if 0x13430 <= code <= 0x1343F:

        def sign(c: str) -> bool:
            return bool(c) and (0x13000 <= ord(c) < 0x13430 or 0x13440 <= ord(c) <= 0x143FF)

        return sign(before) or sign(after)
    if 0xE0000 <= code <= 0xE007F:
        flags = [
            "\U0001f3f4" + "".join(chr(0xE0000 + ord(c)) for c in name) + "\U000e007f"
            for name in ("gbeng", "gbsct", "gbwls")
        ]
        return any(
            text.startswith(flag, index - offset) for flag in flags for offset in range(1, 7)
            if index - offset >= 0
        )  # fmt: skip
    return False


def _reference_find_hidden(text: str) -> tuple[int, str] | None:
    for index, ch in enumerate(text):
        if ch in SUSPECT_CHARS and not _reference_allowed(text, index):
            return index, ch
    return None


_CONTEXT_TEXT = st.lists(
    st.sampled_from(
        ["\u200c", "\u200d", LRM, RLM, "\u061c", "\ufe0e", "\ufe0f", "\ufe00", "\u180b",
         "\U00013430", "\U000e0067", "\U000e0062", "\U000e0065", "\U000e006e", "\U000e007f",
         "\U000e0041", "\U0001f3f4", HEBREW, ALEF, "\u064b", "a", "1", "#", "\u20e3",
         "\u094d", "\u0915", "\U0001f468", "\u2764", "\U0001f3fb", "\u1820", "\U00013000",
         "\u0301", "\u3164", "\n", " ", "\u00e9", "\u200b", "\U00010800", "\U0001f308"]
    ),
    max_size=24,
).map("".join)  # fmt: skip


@settings(max_examples=600)
@given(
    text=_CONTEXT_TEXT,
    pad=st.sampled_from([0, 1, 250, 253, 255, 256]),
    repeat=st.sampled_from([1, 2, 30]),
)
def test_t141_the_one_pass_scan_decides_as_the_rules_say(text: str, pad: int, repeat: int) -> None:
    # Long texts are scanned in stretches of 256: the padding puts the characters on
    # either side of a stretch's edge, and the repeat makes runs of every context.
    whole = "p" * pad + text * repeat + "\u00e9"
    assert find_hidden(whole) == _reference_find_hidden(whole)
    shown = "".join(
        f"[U+{ord(ch):04X}]" if ch in SUSPECT_CHARS and not _reference_allowed(whole, i) else ch
        for i, ch in enumerate(whole)
    )
    assert reveal(whole) == shown


def test_t141_every_right_to_left_letter_is_in_the_blocks_searched() -> None:
    from skillguard._core.text import _RTL_BLOCKS

    rtl = [
        code
        for code in range(0x110000)
        if unicodedata.bidirectional(chr(code)) in ("R", "AL")
        and chr(code) not in "\u200e\u200f\u061c"
    ]
    assert all(any(low <= code <= high for low, high in _RTL_BLOCKS) for code in rtl)


def test_t141_re_letters_and_digits_are_letters_and_digits() -> None:
    # The C-speed checks take [^\W_] for a letter or digit (categories L and N).
    word = re.compile(r"[^\W_]")
    assert all(
        unicodedata.category(chr(code))[0] in "LN"
        for code in range(0x110000)
        if not 0xD800 <= code <= 0xDFFF and word.match(chr(code))
    )


@pytest.mark.parametrize(
    "text",
    [
        # Decided in Python, not by the C-speed checks: a joiner at the end of a scanned
        # stretch (its lookahead cannot see past it), a selector after a symbol outside
        # the blocks those checks name, a ZWJ after a virama of a script beyond them.
        pytest.param("x" * 254 + "\u0645\u200c\u0645", id="joiner-at-a-stretch-end"),
        pytest.param("\u2e80\ufe0f", id="selector-after-a-cjk-radical"),
        pytest.param("\U00011046\u200d", id="zwj-after-a-brahmi-virama"),
    ],
)
def test_t141_contexts_left_to_python_are_decided_as_the_rules_say(text: str) -> None:
    assert find_hidden(text) is None
    assert reveal(text) is text


def test_t141_the_answers_kept_are_bounded() -> None:
    # 1,100 windows, each different: the first 1,024 answers are kept, every one right.
    text = "".join(f"{chr(0x4E00 + i)}\u200b" for i in range(1100))
    assert reveal(text) == text.replace("\u200b", "[U+200B]")


def test_without_takes_code_points_out_of_ranges() -> None:
    from skillguard._core.text import _without

    cut = frozenset(map(chr, (1, 5, 10, 20)))
    assert _without(((1, 10), (12, 14), (20, 20)), cut) == ((2, 4), (6, 9), (12, 14))
