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

Each reads its text once (threat-model.md T141): a regular expression passes over the
characters in the contexts it can check itself (a joiner between two letters, a
selector after an emoji, a flag's tags), and Python decides the rest from at most six
characters either side, remembering each window's answer; for a bidi mark, one search
finds the next line that holds a mark and no right-to-left letter, and the scan passes
over every mark before it in C.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import TYPE_CHECKING, Final, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

__all__ = [
    "REFUSED_RANGES",
    "SUSPECT_CHARS",
    "SUSPECT_RANGES",
    "SUSPECT_RE",
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
# Refused unless their context allows them (see _Context.allows).
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


def _char_class(ranges: Iterable[tuple[int, int]]) -> str:
    return "".join(f"{chr(low)}-{chr(high)}" for low, high in ranges)


# C0 and C1 controls other than tab and newline, and DEL: a terminal acts on them and
# a prompt shows nothing for them.
_CONTROLS: Final = "\x00-\x08\x0b-\x1f\x7f-\x9f"
# For a terminal, also lone surrogates (undecodable file names).
_TERMINAL_EXTRA: Final = "\ud800-\udfff"
_BMP_RANGES: Final = tuple(r for r in SUSPECT_RANGES if r[1] <= 0xFFFF)
_ASTRAL_RANGES: Final = tuple(r for r in SUSPECT_RANGES if r[0] > 0xFFFF)


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
_FLAG_LENGTH: Final = 7  # the black flag, five tags and the cancel tag
# The farthest any context rule but the bidi marks' reads from the character.
_WINDOW: Final = _FLAG_LENGTH - 1
# How many windows one pass remembers: enough for any repeated pattern, and a bound
# on the memory a text of all-different windows can make it take.
_KNOWN_MAX: Final = 1024


# Where the characters that the C-speed checks below name are looked for. Every
# character of bidi class R or AL is in _RTL_BLOCKS (a test checks every code point);
# the others hold the symbols, marks and viramas of real text that joiners and
# selectors stand beside (one outside them is decided in Python instead).
_RTL_BLOCKS: Final = (
    (0x0590, 0x08FF),
    (0xFB1D, 0xFDFF),
    (0xFE70, 0xFEFE),
    (0x10800, 0x10FFF),
    (0x1E800, 0x1EFFF),
)
_SYMBOL_BLOCKS: Final = ((0x00A0, 0x00FF), (0x2000, 0x2BFF), (0x3000, 0x33FF), (0x1F000, 0x1FAFF))
_MARK_BLOCKS: Final = ((0x0300, 0x036F), (0x0483, 0x0DFF), (0x1000, 0x109F), (0x1780, 0x17FF))


class _Classes(NamedTuple):
    """Sets of characters worked out from this Python's Unicode data on first use,
    each as the body of a character class."""

    rtl: str  # right-to-left letters (bidi class R or AL, the marks aside)
    rtl_astral: str  # those beyond the BMP (none without *astral*)
    emoji: str  # non-ASCII symbols (So): what a ZWJ joins in an emoji sequence
    visible: str  # non-ASCII, neither suspect, nor a control or a space (C*, Z*)
    marks: str  # combining marks (M*) that are not suspect
    viramas: str  # the characters of canonical combining class 9
    suspect_words: str  # suspect characters that re's \w takes for letters


@functools.cache
def _classes(*, astral: bool) -> _Classes:
    """The classes for text of the BMP only, or (*astral*) for any text: a class with
    an astral character is a list of ranges to ``re``, compared one by one, and the
    BMP ones cost fewer look-ups to work out (about 7,000: a few milliseconds, once
    per process)."""
    sets: dict[str, list[tuple[int, int]]] = {field: [] for field in _Classes._fields}

    def add(field: str, code: int) -> None:
        ranges = sets[field]
        if ranges and ranges[-1][1] == code - 1:
            ranges[-1] = (ranges[-1][0], code)
        else:
            ranges.append((code, code))

    def codes(blocks: tuple[tuple[int, int], ...]) -> Iterator[int]:
        for low, high in blocks:
            yield from range(low, min(high, 0x10FFFF if astral else 0xFFFF) + 1)

    for code in codes(_RTL_BLOCKS):
        if unicodedata.bidirectional(chr(code)) in ("R", "AL") and chr(code) not in _BIDI_MARKS:
            add("rtl", code)
            if code > 0xFFFF:
                add("rtl_astral", code)
    for code in codes(_SYMBOL_BLOCKS):
        category = unicodedata.category(chr(code))
        if category[0] not in "CZ" and chr(code) not in SUSPECT_CHARS:
            add("visible", code)
            if category == "So":
                add("emoji", code)
    for code in codes(_MARK_BLOCKS):
        if unicodedata.category(chr(code))[0] == "M" and chr(code) not in SUSPECT_CHARS:
            add("marks", code)
        if unicodedata.combining(chr(code)) == _VIRAMA:
            add("viramas", code)
    for code in codes(SUSPECT_RANGES):
        # re's \w is str.isalnum() and "_": only the Hangul fillers, so far.
        if chr(code).isalnum():
            add("suspect_words", code)
    return _Classes(**{field: _char_class(ranges) for field, ranges in sets.items()})


@functools.cache
def _mark_without_rtl(*, astral: bool) -> re.Pattern[str]:
    """The start of a line that holds a bidi mark and no right-to-left letter: where
    a mark is refused. Searched in C from a line start; each line's letters are looked
    for once. The letters beyond the BMP (a class of a range per block, slower) only
    for a text that holds an astral character."""
    marks = "".join(sorted(_BIDI_MARKS))
    beyond = _classes(astral=True).rtl_astral if astral else ""
    return re.compile(
        f"^(?=[^\n]*[{marks}])(?![^\n]*[{_classes(astral=False).rtl}])"
        + (f"(?![^\n]*[{beyond}])" if beyond else ""),
        re.MULTILINE,
    )


def _settled_in_c(*, astral: bool) -> str:
    """The contexts in which ``re`` alone can tell that a suspect character is
    allowed, as lookarounds read right after it. Each is a case of a rule of
    ``_Context.allows`` (never wider), so that rule need not be asked; every other
    suspect character is left to it. The rules are grouped by the character they are
    about, which one cheap test picks."""
    classes = _classes(astral=astral)
    # [^\W_] is a letter or digit (categories L and N; a test checks every code
    # point): with the marks, a word character of _is_word_char when not suspect.
    unless = f"(?<![{classes.suspect_words}])" if classes.suspect_words else ""
    word = f"(?:[^\\W_]{unless}|[{classes.marks}])"
    # A visible non-ASCII character: what a variation selector may follow.
    visible = f"(?:(?=[^\x00-\x7f]){word}|[{classes.visible}])"
    emoji = classes.emoji
    groups = {
        _ZWNJ + _ZWJ: [
            # Between two word characters, one of them not ASCII.
            f"(?<={word}.)(?={word})(?:(?<=[^\x00-\x7f].)|(?=[^\x00-\x7f]))",
            # A ZWJ after a virama, or in an emoji sequence.
            f"(?<=[{classes.viramas}]{_ZWJ})",
            (
                f"(?<={_ZWJ})(?=[{emoji}])(?:(?<=[{emoji}\U0001f3fb-\U0001f3ff].)"
                f"|(?<={visible}\ufe0f.))"
            ),
        ],
        # A variation selector after a visible non-ASCII character, or in a keycap.
        "\ufe00-\ufe0f": [f"(?<={visible}.)", "(?<=[#*0-9][\ufe0e\ufe0f])(?=\u20e3)"],
        # A Mongolian free variation selector after a Mongolian letter.
        "\u180b-\u180d\u180f": ["(?<=[\u1820-\u18aa].)"],
    }
    if astral:
        # A hieroglyph format control beside a hieroglyph.
        signs = "\U00013000-\U0001342f\U00013440-\U000143ff"
        groups["\U00013430-\U0001343f"] = [f"(?<=[{signs}].)", f"(?=[{signs}])"]
        # Each tag character of a recommended flag, at each place in it.
        groups["\U000e0000-\U000e007f"] = [
            f"(?<={flag[: place + 1]})(?={flag[place + 1 :]})"
            for flag in _TAG_FLAGS
            for place in range(1, _FLAG_LENGTH)
        ]
    return "|".join(f"(?<=[{chars}])(?:{'|'.join(rules)})" for chars, rules in groups.items())


class _Patterns:
    """The patterns a scan uses: one set for text without characters beyond U+FFFF,
    one for any text.

    Each range in a character class costs ``re`` a comparison per character scanned,
    and the BMP characters compile into one table lookup: most text (CJK, Cyrillic,
    typographic quotes) never holds an astral character, and is scanned about three
    times faster by the first set. A stretch is searched with the plain class first
    (the fastest, and the only one most text needs); from its first suspect character
    on, with the candidate pattern, which passes over the joiners, selectors and marks
    in the contexts ``re`` can check. A text dense with them costs a C loop, not a
    Python call each (threat-model.md T141); those patterns are built on first use.
    """

    __slots__ = ("any", "bmp", "built", "extra", "non_ascii")

    def __init__(self, extra: str) -> None:
        # Only a pattern with no ASCII character in it may skip ASCII stretches.
        self.non_ascii = not extra
        self.extra = extra
        # The candidate patterns, with and without the bidi marks, per astral.
        self.built: dict[bool, tuple[re.Pattern[str], re.Pattern[str]]] = {}
        self.bmp = re.compile(f"[{extra}{_char_class(_BMP_RANGES)}]")
        self.any = re.compile(f"[{extra}{_char_class(_BMP_RANGES + _ASTRAL_RANGES)}]")

    def candidate(self, *, astral: bool, marks: bool) -> re.Pattern[str]:
        """The suspect characters (bidi marks only with *marks*) that ``re`` cannot
        find allowed; built on first use."""
        built = self.built.get(astral)
        if built is None:
            ranges = _BMP_RANGES + _ASTRAL_RANGES if astral else _BMP_RANGES
            settled = _settled_in_c(astral=astral)
            built = self.built[astral] = (
                re.compile(f"[{self.extra}{_char_class(ranges)}](?!{settled})"),
                re.compile(
                    f"[{self.extra}{_char_class(_without(ranges, _BIDI_MARKS))}](?!{settled})"
                ),
            )
        return built[0] if marks else built[1]

    def finditer(self, text: str, context: _Context) -> Iterator[re.Match[str]]:
        """Every suspect character of *text* that *context* must decide, in order:
        those ``re`` finds allowed are passed over, and so are the bidi marks before
        ``context.marks_until``."""
        length = len(text)
        # Real bodies are mostly ASCII with a few non-ASCII characters: a stretch that
        # is all ASCII (CPython knows it as the slice is built) cannot match and is not
        # scanned, and each other stretch gets the cheapest patterns that fit it.
        step = _CHUNK if self.non_ascii else max(length, 1)
        for start in range(0, length, step):
            end = start + step  # the last stretch may end past the text: re stops there
            chunk = text[start:end]
            if self.non_ascii and chunk.isascii():
                continue
            # UTF-16 has two units for every astral character, and encoding a text that
            # has none is a plain copy: a C-speed test of whether the cheap class suffices.
            astral = len(chunk.encode("utf-16-le", "surrogatepass")) != 2 * len(chunk)
            first = (self.any if astral else self.bmp).search(text, start, end)
            if first is None:
                continue
            position = first.start()
            while position < end:
                if position < context.marks_until:
                    # Every mark here is allowed: the others, in C.
                    stop = min(end, context.marks_until)
                    yield from self.candidate(astral=astral, marks=False).finditer(
                        text, position, stop
                    )
                    position = stop
                    continue
                for found in self.candidate(astral=astral, marks=True).finditer(
                    text, position, end
                ):
                    yield found
                    if context.marks_until > found.end():
                        # A mark allowed the marks up to there: pass over them in C.
                        position = found.end()
                        break
                else:
                    position = end


def _without(
    ranges: tuple[tuple[int, int], ...], chars: frozenset[str]
) -> tuple[tuple[int, int], ...]:
    """*ranges* with every code point of *chars* taken out."""
    out: list[tuple[int, int]] = []
    for first, high in ranges:
        low = first
        for cut in sorted(ord(ch) for ch in chars if low <= ord(ch) <= high):
            if low < cut:
                out.append((low, cut - 1))
            low = cut + 1
        if low <= high:
            out.append((low, high))
    return tuple(out)


_CHUNK: Final = 256  # measured on real skills: 128-512 scan fastest
_SUSPECT: Final = _Patterns("")
# Any character find_hidden looks at, for a caller that only asks whether there is one.
SUSPECT_RE: Final = _SUSPECT.any
_REVEAL: Final = _Patterns(_CONTROLS)
_TERMINAL: Final = _Patterns(_CONTROLS + _TERMINAL_EXTRA)
_ASCII_CONTROL_RE: Final = re.compile(f"[{_CONTROLS}]")


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


def _flag_around(text: str, index: int) -> bool:
    """Whether the tag character at *index* is inside one of the recommended
    subdivision flags: a black flag at most six characters before it, then the tags
    of England, Scotland or Wales and the cancel tag."""
    # Every character of a flag after its first is a tag character, so the flag can
    # only start at the last black flag before *index*.
    start = text.rfind(_TAG_FLAGS[0][0], max(0, index - _FLAG_LENGTH + 1), index)
    return start >= 0 and any(text.startswith(flag, start) for flag in _TAG_FLAGS)


def _allowed_locally(text: str, index: int) -> bool:
    """Whether the suspect character at *index*, other than a bidi mark, is one a real
    script needs there. Only characters within six of *index* are read."""
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
            return _allowed_locally(text, index - 1)
        return before in _SKIN_TONES or _is_emoji_part(before)
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
        return _flag_around(text, index)
    return False


class _Context:
    """The context rules over one text, read in one pass (threat-model.md T141).

    A bidi mark is allowed on a line that holds a right-to-left letter. On a mark, the
    text is searched from the mark's line for the first line that holds a mark and no
    such letter (``_mark_without_rtl``): every mark before it is allowed, and the scan
    passes over them in C (``marks_until``); the marks of that line are refused. So a
    line of 80,000 marks, or 20,000 short lines of a letter and a mark, cost one
    search, not a rescan of the line per mark. Every other rule reads at most six
    characters either side; its answer for one window is kept, so that a run of the
    same joiner between the same letters is decided once. Suspect characters must be
    asked about in order (what ``_Patterns.finditer`` yields).
    """

    __slots__ = ("astral", "known", "marks_until", "refused_from", "refused_to", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.marks_until = self.refused_from = self.refused_to = -1
        self.astral: bool | None = None  # whether the text holds an astral character
        self.known: dict[str, bool] = {}

    def allows(self, index: int) -> bool:
        """Whether the suspect character at *index* is one a real script needs there."""
        text = self.text
        if text[index] in _BIDI_MARKS:
            # Never before marks_until: the scan passes over those marks.
            if self.refused_from <= index < self.refused_to:
                return False
            if self.astral is None:
                self.astral = len(text.encode("utf-16-le", "surrogatepass")) != 2 * len(text)
            line = text.rfind("\n", 0, index) + 1
            refused = _mark_without_rtl(astral=self.astral).search(text, line)
            if refused is None:
                self.marks_until = len(text)
                return True
            self.marks_until = self.refused_from = refused.start()
            end = text.find("\n", self.refused_from)
            self.refused_to = len(text) if end < 0 else end
            return index < self.marks_until
        if index < _WINDOW or index + _WINDOW >= len(text):
            return _allowed_locally(text, index)
        # The window every local rule reads: the answer is the same wherever it recurs.
        window = text[index - _WINDOW : index + _WINDOW + 1]
        known = self.known.get(window)
        if known is None:
            known = _allowed_locally(text, index)
            if len(self.known) < _KNOWN_MAX:
                self.known[window] = known
        return known


def find_hidden(text: str) -> tuple[int, str] | None:
    """The index and character of the first refused character in *text*, or ``None``.

    A refused character is one that can hide or reorder text (see the module
    docstring); a joiner or mark in a place a real script needs it is not refused.
    Controls are not this function's concern (the parser refuses them separately).
    """
    if text.isascii():  # O(1) in CPython, and every suspect character is non-ASCII
        return None
    context = _Context(text)
    for found in _SUSPECT.finditer(text, context):
        index = found.start()
        if not context.allows(index):
            return index, found.group()
    return None


def _shown(ch: str) -> str:
    return f"[U+{ord(ch):04X}]"


def _escape(text: str, patterns: _Patterns) -> str:
    pieces: list[str] = []
    done = 0
    context = _Context(text)
    for found in patterns.finditer(text, context):
        index = found.start()
        ch = found.group()
        if ch in SUSPECT_CHARS and context.allows(index):
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
