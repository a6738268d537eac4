"""The character rules: which characters can hide or reorder text (threat-model.md T8).

This is the one place that decides it; the parser, the file-system listing, the
renderers and the command line all ask here. The rules follow Unicode's guidance on
spoofing in source code and identifiers (UTS #39 section 3, UTS #55 sections 2-4, UAX
#31 section 2.3): a default-ignorable character draws nothing, so a human reviewer
cannot see it while a model reads it. Each is either refused, or allowed only in the
place a real script needs it:

* Refused everywhere: bidi embeddings, overrides and isolates (they reorder what a
  reviewer sees, the "Trojan Source" attack), tag characters (they spell whole
  sentences no screen shows), the supplementary variation selectors (240 invisible
  values: a byte per character of hidden data), zero-width space, word joiner,
  invisible operators, the deprecated format characters, U+FEFF inside text, the
  Mongolian vowel separator, the combining grapheme joiner, the Hangul fillers, the
  Khmer inherent vowels (deprecated by Unicode), the shorthand and musical format
  controls, the interlinear annotation characters (they mark text to be hidden), the
  soft hyphen, the line and paragraph separators U+2028 and U+2029, and every
  unassigned default-ignorable code point (a later Unicode version may give it a
  meaning no reviewer sees).
* Allowed in context (UAX #31's joiner contexts, widened to what prose needs):
  ZWNJ and ZWJ between two letters, marks or digits of which at least one is not
  ASCII (Persian, Kurdish and the Indic scripts use them to choose letter forms);
  ZWJ after a virama (half forms and chillus, UAX #31 rule A2); ZWJ inside an emoji
  sequence; LRM, RLM and ALM on a line that holds right-to-left letters; a variation selector
  U+FE00-U+FE0F right after a non-ASCII character (emoji and text presentation, CJK
  and math variants), or U+FE0E/U+FE0F in a keycap (``#``, ``*``, a digit, then
  U+20E3); a Mongolian free variation selector after a Mongolian letter; the tag
  characters of the three subdivision flags Unicode recommends (England, Scotland,
  Wales); an Egyptian hieroglyph format control (U+13430-U+1343F: the joiners and
  segment marks that arrange signs into blocks) beside an Egyptian hieroglyph. Out of
  context each is refused: no run of them (at most two hieroglyph controls between two
  signs), and none in ASCII text, so they cannot carry a hidden message of their own.

The soft hyphen is refused rather than allowed: it is invisible except at a line
break, and allowing it between letters would give one hidden bit per letter gap of
plain ASCII prose, while inside a word it splits the word for a model's tokenizer (and
a keyword filter) without the reviewer seeing it. Real skills almost never need it
(one hyphenation hint in a translation among about 17,000 public SKILL.md files; see
benchmarks/README.md); ``compat`` accepts such a body and shows the character.

The line and paragraph separators are refused because they are a line break to some
readers and not to others: Python's ``str.splitlines`` and JavaScript's multiline
``^`` and ``$`` break the line there, CommonMark, Git and skillguard's own section
parser do not, so a
``## Rules`` heading after one is a heading to one harness and plain text to the
reviewer's tool. No public SKILL.md or agent file measured holds one (about 27,000
SKILL.md files and 586 agent files; see benchmarks/README.md). The Egyptian hieroglyph
format controls draw nothing outside hieroglyphic text (Unicode leaves them out of the
default-ignorable set only because a hieroglyph renderer shows them), so elsewhere
they are as invisible as a zero-width space.

Functions: ``find_hidden`` (the first refused character), ``reveal`` (every refused
character and control shown as ``[U+XXXX]``, for prompts) and ``terminal_safe`` /
``terminal_line`` (the same, plus what a terminal would act on). Each returns its
input unchanged, after one C-level check, when there is nothing to do.
"""

from __future__ import annotations

import re
import unicodedata
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = [
    "REFUSED_RANGES",
    "SUSPECT_CHARS",
    "SUSPECT_RANGES",
    "find_hidden",
    "reveal",
    "terminal_line",
    "terminal_safe",
]

# Inclusive ranges of code points refused wherever they appear, with one exception: the
# tag characters inside the three recommended subdivision flags.
REFUSED_RANGES: Final = (
    (0x00AD, 0x00AD),  # soft hyphen (see the module docstring)
    (0x034F, 0x034F),  # combining grapheme joiner: invisible, changes no prose
    (0x115F, 0x1160),  # Hangul choseong and jungseong fillers: blank "letters"
    (0x17B4, 0x17B5),  # Khmer inherent vowels: deprecated, invisible
    (0x180E, 0x180E),  # Mongolian vowel separator: no longer a space, invisible
    (0x200B, 0x200B),  # zero-width space
    (0x202A, 0x202E),  # bidi embeddings and overrides
    (0x2060, 0x2064),  # word joiner, invisible operators
    (0x2028, 0x2029),  # line and paragraph separators (see the module docstring)
    (0x2065, 0x2065),  # unassigned default-ignorable
    (0x2066, 0x2069),  # bidi isolates
    (0x206A, 0x206F),  # deprecated invisible format characters
    (0x3164, 0x3164),  # Hangul filler: a blank "letter"
    (0xFEFF, 0xFEFF),  # zero-width no-break space (a BOM inside the text)
    (0xFFA0, 0xFFA0),  # halfwidth Hangul filler
    (0xFFF0, 0xFFF8),  # unassigned default-ignorable
    (0xFFF9, 0xFFFB),  # interlinear annotation: marks text for a renderer to hide
    (0x1BCA0, 0x1BCA3),  # shorthand format controls: invisible outside Duployan
    (0x1D173, 0x1D17A),  # musical symbol format controls: invisible
    (0xE0000, 0xE007F),  # tag characters ("ASCII smuggling"), but see the flags
    (0xE0080, 0xE00FF),  # unassigned default-ignorable
    (0xE0100, 0xE01EF),  # variation selectors supplement (data smuggling)
    (0xE01F0, 0xE0FFF),  # unassigned default-ignorable
)
# Refused unless their context allows them (see _allowed_in_context).
_CONTEXT_RANGES: Final = (
    (0x061C, 0x061C),  # Arabic letter mark
    (0x180B, 0x180D),  # Mongolian free variation selectors 1-3
    (0x180F, 0x180F),  # Mongolian free variation selector 4
    (0x200C, 0x200D),  # ZWNJ, ZWJ
    (0x200E, 0x200F),  # LRM, RLM
    (0xFE00, 0xFE0F),  # variation selectors
    (0x13430, 0x1343F),  # Egyptian hieroglyph format controls
)
# Every character find_hidden looks at: refused unless its context allows it. Other
# modules that need one conservative set (for example to blank a preview) use this.
SUSPECT_RANGES: Final = tuple(sorted(REFUSED_RANGES + _CONTEXT_RANGES))
SUSPECT_CHARS: Final = frozenset(
    chr(c) for low, high in SUSPECT_RANGES for c in range(low, high + 1)
)


def _char_class(ranges: tuple[tuple[int, int], ...]) -> str:
    return "".join(f"{chr(low)}-{chr(high)}" for low, high in ranges)


# C0 and C1 controls other than tab and newline, and DEL: a terminal acts on them and
# a prompt shows nothing for them.
_CONTROLS: Final = "\x00-\x08\x0b-\x1f\x7f-\x9f"
# For a terminal, also lone surrogates (undecodable file names).
_TERMINAL_EXTRA: Final = "\ud800-\udfff"
_BMP_RANGES: Final = tuple(r for r in SUSPECT_RANGES if r[1] <= 0xFFFF)
_ASTRAL_RANGES: Final = tuple(r for r in SUSPECT_RANGES if r[0] > 0xFFFF)


class _Patterns:
    """One pattern for text without characters beyond U+FFFF, one for any text.

    Each range in a character class costs ``re`` a comparison per character scanned,
    and the BMP characters compile into one table lookup: most text (CJK, Cyrillic,
    typographic quotes) never holds an astral character, and is scanned about three
    times faster by the first pattern.
    """

    __slots__ = ("any", "bmp", "non_ascii")

    def __init__(self, extra: str) -> None:
        # Only a pattern with no ASCII character in it may skip ASCII stretches.
        self.non_ascii = not extra
        self.bmp = re.compile(f"[{extra}{_char_class(_BMP_RANGES)}]")
        self.any = re.compile(f"[{extra}{_char_class(_BMP_RANGES + _ASTRAL_RANGES)}]")

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        """Every match in *text*, in order."""
        if not self.non_ascii:
            yield from self._pattern(text).finditer(text)
            return
        # Real bodies are mostly ASCII with a few non-ASCII characters: a stretch that
        # is all ASCII (CPython knows it as the slice is built) cannot match and is not
        # scanned, and each other stretch gets the cheapest pattern that fits it.
        for start in range(0, len(text), _CHUNK):
            end = start + _CHUNK
            chunk = text[start:end]
            if not chunk.isascii():
                yield from self._pattern(chunk).finditer(text, start, end)

    def _pattern(self, text: str) -> re.Pattern[str]:
        # UTF-16 has two units for every astral character, and encoding a text that
        # has none is a plain copy: a C-speed test of whether the cheap pattern suffices.
        astral = len(text.encode("utf-16-le", "surrogatepass")) != 2 * len(text)
        return self.any if astral else self.bmp


_CHUNK: Final = 256  # measured on real skills: 128-512 scan fastest
_SUSPECT: Final = _Patterns("")
_REVEAL: Final = _Patterns(_CONTROLS)
_TERMINAL: Final = _Patterns(_CONTROLS + _TERMINAL_EXTRA)
_ASCII_CONTROL_RE: Final = re.compile(f"[{_CONTROLS}]")

_ZWNJ: Final = "\u200c"
_ZWJ: Final = "\u200d"
_BIDI_MARKS: Final = frozenset("\u200e\u200f\u061c")
_KEYCAP: Final = "\u20e3"
_VIRAMA: Final = 9  # the canonical combining class of the Indic viramas
_KEYCAP_BASES: Final = frozenset("#*0123456789")
_SKIN_TONES: Final = frozenset(chr(c) for c in range(0x1F3FB, 0x1F400))
_TAG_FLAGS: Final = tuple(
    "\U0001f3f4" + "".join(chr(0xE0000 + ord(c)) for c in code) + "\U000e007f"
    for code in ("gbeng", "gbsct", "gbwls")
)


def _is_word_char(ch: str) -> bool:
    """A visible letter, mark or digit: what a joiner may stand between."""
    # Some refused characters are letters or marks themselves (the Hangul fillers, the
    # combining grapheme joiner): a joiner next to one is not in a script's context.
    return ch not in SUSPECT_CHARS and unicodedata.category(ch)[0] in "LMN"


def _joins_a_script(before: str, after: str) -> bool:
    """Whether a ZWNJ or ZWJ between *before* and *after* is where a script needs it:
    both are letters, marks or digits, and at least one is not ASCII (translated text
    writes ``aspire.dev\u200c<Kannada suffix>``; between two ASCII letters a joiner
    changes nothing a reader sees, so it could only carry hidden data)."""
    return (
        bool(before)
        and bool(after)
        and not (before.isascii() and after.isascii())
        and _is_word_char(before)
        and _is_word_char(after)
    )


def _is_emoji_part(ch: str) -> bool:
    # Extended_Pictographic is not in unicodedata; a non-ASCII symbol (So) is a close
    # superset for what a ZWJ joins, and it is visible either way.
    return not ch.isascii() and unicodedata.category(ch) == "So"


def _is_hieroglyph(ch: str) -> bool:
    """A character of the Egyptian Hieroglyphs blocks (signs, their modifiers and
    Extended-A) other than a format control: what a format control joins or groups."""
    return bool(ch) and (0x13000 <= ord(ch) < 0x13430 or 0x13440 <= ord(ch) <= 0x143FF)


def _line_has_rtl(text: str, index: int) -> bool:
    start = text.rfind("\n", 0, index) + 1
    end = text.find("\n", index)
    line = text[start:] if end < 0 else text[start:end]
    # RLM and ALM are of class R and AL themselves: only letters count.
    return any(
        unicodedata.bidirectional(ch) in ("R", "AL") and ch not in _BIDI_MARKS for ch in line
    )


def _allowed_in_context(text: str, index: int) -> bool:
    """Whether the suspect character at *index* is one a real script needs there."""
    ch = text[index]
    before = text[index - 1] if index else ""
    after = text[index + 1] if index + 1 < len(text) else ""
    if ch in (_ZWNJ, _ZWJ):
        if _joins_a_script(before, after):
            return True
        # UAX #31 rule A2: a ZWJ right after a virama asks for a half or chillu form,
        # also at the end of a word (older Malayalam text spells chillus this way).
        if ch == _ZWJ and before and unicodedata.combining(before) == _VIRAMA:
            return True
        if ch != _ZWJ or not after or not _is_emoji_part(after):
            return False
        if before == "\ufe0f":  # allowed only if that selector is itself in context
            return _allowed_in_context(text, index - 1)
        return before in _SKIN_TONES or _is_emoji_part(before)
    if ch in _BIDI_MARKS:
        return _line_has_rtl(text, index)
    code = ord(ch)
    if 0xFE00 <= code <= 0xFE0F:
        if not before or before in SUSPECT_CHARS or unicodedata.category(before)[0] in "CZ":
            return False
        if not before.isascii():
            return True
        return ch in "\ufe0e\ufe0f" and before in _KEYCAP_BASES and after == _KEYCAP
    if 0x180B <= code <= 0x180F:
        return bool(before) and 0x1820 <= ord(before) <= 0x18AA
    if 0x13430 <= code <= 0x1343F:
        return _is_hieroglyph(before) or _is_hieroglyph(after)
    if 0xE0000 <= code <= 0xE007F:
        return any(
            text.startswith(flag, index - offset)
            for flag in _TAG_FLAGS
            for offset in range(1, min(len(flag), index + 1))
        )
    return False


def find_hidden(text: str) -> tuple[int, str] | None:
    """The index and character of the first refused character in *text*, or ``None``.

    A refused character is one that can hide or reorder text (see the module
    docstring); a joiner or mark in a place a real script needs it is not refused.
    Controls are not this function's concern (the parser refuses them separately).
    """
    if text.isascii():  # O(1) in CPython, and every suspect character is non-ASCII
        return None
    for found in _SUSPECT.finditer(text):
        index = found.start()
        if not _allowed_in_context(text, index):
            return index, found.group()
    return None


def _shown(ch: str) -> str:
    return f"[U+{ord(ch):04X}]"


def _escape(text: str, patterns: _Patterns) -> str:
    pieces: list[str] = []
    done = 0
    for found in patterns.finditer(text):
        index = found.start()
        ch = found.group()
        if ch in SUSPECT_CHARS and _allowed_in_context(text, index):
            continue
        pieces.append(text[done:index])
        pieces.append(_shown(ch))
        done = index + 1
    if not pieces:
        return text
    pieces.append(text[done:])
    return "".join(pieces)


def reveal(text: str) -> str:
    """*text* with every refused character, every C0/C1 control but tab and newline,
    and DEL shown visibly as ``[U+XXXX]``, so that a model reads what a human sees.

    A text with none of them is returned unchanged (the same object).
    """
    if text.isascii():
        # The usual case: only ASCII controls can need escaping, found in one C loop.
        return text if _ASCII_CONTROL_RE.search(text) is None else _escape(text, _REVEAL)
    return _escape(text, _REVEAL)


def terminal_safe(text: str) -> str:
    """*text* safe to write to a terminal: ``reveal`` plus ESC, every other C0 and C1
    control (the one-byte CSI U+009B and NEL U+0085 too), DEL, the line and paragraph
    separators and lone surrogates escaped as ``[U+XXXX]``. Tab and newline stay."""
    if text.isascii():
        # The usual case: only ASCII controls can need escaping, found in one C loop.
        return text if _ASCII_CONTROL_RE.search(text) is None else _escape(text, _TERMINAL)
    # Not isprintable(): some refused characters (variation selectors, Hangul fillers)
    # count as printable.
    return _escape(text, _TERMINAL)


def terminal_line(text: str) -> str:
    """``terminal_safe`` for one line of output: tab and newline escaped too, so an
    untrusted name cannot start a forged line of its own."""
    if text.isascii() and text.isprintable():  # O(1), then one C loop
        return text
    return terminal_safe(text).replace("\t", "[U+0009]").replace("\n", "[U+000A]")
