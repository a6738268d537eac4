"""What a term is, for ranking skills (seed 003; ``_skills.rank``). Sans-IO.

A word is a run of letters and digits; it is lowercased and lightly stemmed (``stem``).
A term is a word that is not a stop word. A camelCase or PascalCase word also gives its
parts as terms (``terms``), after the terms of the lowercased text; a registry keyword
is looked for in the words of the text and in the same words with those cut into their
parts (``keyword_texts``, T330); and the parts of one word count as that one word where
the number of words matters (``word_of``, the one-word rule of T80 and T330).
"""

from __future__ import annotations

import functools
import re
from typing import Final

__all__ = ["STOP_WORDS", "keyword_texts", "stem", "terms", "word_of", "words"]

_WORD = re.compile(r"[^\W_]+")
# Where a camelCase or PascalCase word breaks: "pdfReader", "PDFReader", "v2Api".
_CASE_BREAK = re.compile(r"(?<=[^\W_])(?=[A-Z][a-z])|(?<=[a-z0-9])(?=[A-Z])")

# Function words, and the verbs and nouns nearly every request to an agent holds; none
# of them says which skill a task needs. The names of what an agent is given to choose
# from (skill, tool, plugin, agent) are among them: "is there a tool that ..." asks for
# one without saying which, and would otherwise go to the skills named "*-tool".
_STOP_TEXT = """
    a about above after again all also am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for
    from further had has have having he her here hers him his how i if in into is it its
    itself just me more most my no nor not now of off on once only or other our ours out
    over own same she should so some such than that the their them then there these they
    this those through to too under until up very was we were what when where which while
    who whom why will with would you your yours
    please want need needs like let lets get gets make makes made use uses using used
    help helps explain explains write writes create creates show tell give do done thing
    things something anything way ways new one two can't cannot i'm it's
    skill skills task tasks user users agent agents when whenever
    tool tools plugin plugins
"""
STOP_WORDS: Final = frozenset(_STOP_TEXT.split())


@functools.lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """A light, deterministic suffix stripper for English: plurals, -ing, -ed, -ly and
    a final -e, so that "debugging", "debugged" and "debug" meet, and "release",
    "releases" and "releasing" do. Short words are left alone."""
    if not word.isascii() or len(word) < 3:
        return word
    if len(word) == 3:
        # "PRs", "CIs": a plural of a short initialism; "bus" and "gas" keep theirs.
        return word[:-1] if word[-1] == "s" and word[-2] not in "aeiousy" else word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith(("sses", "xes", "ches", "shes", "zes")):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "lsz":
                word = word[:-1]
            break
    if word.endswith("ly") and len(word) > 5:
        word = word[:-2]
    if word.endswith("e") and len(word) > 4:
        word = word[:-1]
    return word


def words(text: str) -> list[str]:
    """The lowercased words of *text*, stemmed, stop words kept (phrases need them)."""
    return [stem(word) for word in _WORD.findall(text.lower())]


def terms(text: str) -> list[str]:
    """The terms of *text* that carry meaning: words, stemmed, without stop words.

    A word written in camelCase or PascalCase also gives its parts, stemmed the same
    way, after the terms of the lowercased text ("PdfReader": ``pdfreader``, ``pdf``,
    ``reader``; "HTTPServer": ``httpserver``, ``http``, ``server``), so the joined form
    still matches itself and each part matches the same word written alone.
    ``snake_case`` and ``kebab-case`` are cut into words already."""
    out = [
        stem(word)
        for word in _WORD.findall(text.lower())
        if word not in STOP_WORDS and len(word) > 1
    ]
    if text.islower():  # no upper-case letter: no camelCase word
        return out
    for token in _WORD.findall(text):
        if token[1:] != token[1:].lower():  # an upper-case letter after the first
            whole = token.lower()
            out += [
                stem(part)
                for part in _CASE_BREAK.sub(" ", token).lower().split()
                if part != whole and part not in STOP_WORDS and len(part) > 1
            ]
    return out


def word_of(text: str) -> dict[str, str]:
    """For each part term of a camelCase or PascalCase word of *text*, the term of the
    whole word ("PayPal": ``pay`` and ``pal`` are parts of ``paypal``): three terms
    from one word of the task are one word to the one-word rule (T330)."""
    out: dict[str, str] = {}
    if text.islower():
        return out
    for token in _WORD.findall(text):
        if token[1:] != token[1:].lower():
            whole = token.lower()
            for part in _CASE_BREAK.sub(" ", token).lower().split():
                if part != whole:
                    out.setdefault(stem(part), stem(whole))
    return out


def keyword_texts(text: str) -> list[list[str]]:
    """The word sequences a registry keyword is looked for in: those of *text*, and the
    same with each camelCase word cut into its parts in place ("PdfReader crash":
    ``pdf reader crash``), as a description term is (T330)."""
    plain = words(text)
    out = [plain]
    if not text.islower():
        parts = words(_CASE_BREAK.sub(" ", text))
        if parts != plain:
            out.append(parts)
    return out
