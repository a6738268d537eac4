"""What a YAML parser's problem means, in words an author can act on.

The parser's own text can quote the input (an unknown escape, a character that starts
no token), so it is never shown: :func:`syntax_error` matches it against a table of
known problems and turns it into a ``MalformedSkillError`` with plain words, a line
and a column (threat-model.md T119).
"""

from __future__ import annotations

from typing import Final

from skillguard._core.errors import MalformedSkillError

__all__ = ["syntax_error"]

# What a YAML parser's problem means, in words an author can act on. The parser's own
# text can quote the input (an unknown escape, a character that starts no token), so it
# is never shown: it is only matched here, on prefixes of the problem (and, where a
# prefix alone is ambiguous, of its context) for each backend, and a problem not in this
# table is named by its class alone. The first match wins, so the tab's entry comes
# before the reserved characters' that shares its prefix on the pure backend.
_QUOTE_VALUE: Final = (
    "a ': ' inside an unquoted value reads as a second key; quote the whole value "
    '(for example description: "Use when: ...")'
)
_NEVER_CLOSED: Final = "a quoted string is never closed; end it with the quote it started with"
_BAD_ESCAPE: Final = (
    "a backslash in a double-quoted string starts an unknown escape; write it as "
    "'\\\\' or use single quotes"
)
_TAB: Final = "a tab is allowed only inside a quoted string; indent with spaces"
_RESERVED: Final = (
    "a value starts with a character YAML reserves (such as @, ` or %); quote the value"
)
_FLOW_OPEN: Final = "a '[' or '{' is never closed; quote the value if the bracket is text"
_NO_VALUE: Final = (
    "a '[' or '{' is never closed, or a ',' is followed by no value; quote the value if "
    "the bracket is text"
)
_NOT_A_PAIR: Final = "this line is not a 'key: value' pair at the indentation of the lines above it"
_CONTINUATION: Final = (
    "this line is neither a 'key: value' pair nor indented under one; indent the next "
    "lines of a long value, or quote the whole value"
)
_DASH: Final = (
    "a '- ' right after 'key: ' starts a list, which begins on the next line; quote the "
    "value if the dash is text"
)
_BLOCK_HEADER: Final = (
    "only '-', '+' or an indentation digit may follow '|' or '>' on its line; start "
    "the text on the next line, indented"
)
# (problem prefix, context prefix or None, words, whether the context mark, where the
# construct began, is the better place to point at than the problem mark).
_SYNTAX_HINTS: Final[tuple[tuple[str, str | None, str, bool], ...]] = (
    ("mapping values are not allowed", None, _QUOTE_VALUE, False),
    ("found unexpected end of stream", None, _NEVER_CLOSED, False),
    ("found unknown escape character", None, _BAD_ESCAPE, False),
    ("did not find expected hexdecimal number", None, _BAD_ESCAPE, False),
    ("expected escape sequence of", None, _BAD_ESCAPE, False),
    ("found a tab character", None, _TAB, False),
    ("found character '\\t'", None, _TAB, False),
    ("found character", None, _RESERVED, False),
    ("did not find expected ','", None, _FLOW_OPEN, False),
    ("expected ','", None, _FLOW_OPEN, False),
    ("did not find expected node content", "while parsing a flow", _NO_VALUE, False),
    ("expected the node content", "while parsing a flow", _NO_VALUE, False),
    ("did not find expected key", None, _NOT_A_PAIR, False),
    ("expected <block end>", None, _NOT_A_PAIR, False),
    ("could not find expected ':'", "while scanning a simple key", _CONTINUATION, True),
    ("block sequence entries are not allowed", None, _DASH, False),
    ("sequence entries are not allowed", None, _DASH, False),
    (
        "did not find expected comment or line break",
        "while scanning a block scalar",
        _BLOCK_HEADER,
        False,
    ),
    (
        "expected chomping or indentation indicators",
        "while scanning a block scalar",
        _BLOCK_HEADER,
        False,
    ),
)


def syntax_error(exc: BaseException, first_line: int, what: str) -> MalformedSkillError:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None)
    context = getattr(exc, "context", None)
    hint = None
    if isinstance(problem, str):
        for prefix, context_prefix, words, at_context in _SYNTAX_HINTS:
            if not problem.startswith(prefix):
                continue
            if context_prefix is not None and not (
                isinstance(context, str) and context.startswith(context_prefix)
            ):
                continue
            hint = words
            if at_context and getattr(exc, "context_mark", None) is not None:
                mark = exc.context_mark  # type: ignore[attr-defined]
            break
    line = getattr(mark, "line", None)
    column = getattr(mark, "column", None)
    reason = (
        f"{what} is not valid YAML ({type(exc).__name__})"
        if hint is None
        else f"{what} is not valid YAML: {hint}"
    )
    return MalformedSkillError(
        "yaml_syntax",
        reason,
        line=line + first_line if isinstance(line, int) else None,
        column=column + 1 if isinstance(line, int) and isinstance(column, int) else None,
    )
