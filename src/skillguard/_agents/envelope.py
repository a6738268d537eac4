"""The agent-context envelope (seed 000, phase 3) and the error envelope.

Rules (threat-model.md T71, T76):

* Success: ``status`` then the seed's keys in the seed's order, as one line of JSON,
  ASCII only (every non-ASCII character ``\\u``-escaped), no trailing newline.
  ``model`` is ``null`` when the file has none; ``tools`` is ``[]`` when it declares
  none.
* Every string that came from the file is passed through ``_text.reveal`` first: a
  character that hides or reorders text (accepted only under the ``compat`` profile)
  appears as ``[U+XXXX]``, never raw, so the orchestrator and the model read what a
  reviewer sees.
* Error: ``{"status":"error","code":CODE,"message":...}``. Every library error maps to
  exactly one of the seed's four codes (``agent_error_code``; the table is in README.md
  and a test keeps the two in sync). The message is the error's reason, which never
  quotes file content, and names untrusted values escaped (``safe_repr``).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Final

from skillguard._core.errors import MalformedSkillError, SkillError, SkillUsageError
from skillguard._core.text import reveal

if TYPE_CHECKING:
    from skillguard._agents.parse import AgentDefinition

__all__ = [
    "AGENT_FILE_UNREADABLE",
    "AGENT_NOT_FOUND",
    "AGENT_PARSE_FAILED",
    "MISSING_ARGUMENT",
    "agent_envelope",
    "agent_error_code",
    "dumps",
    "error_envelope",
]

AGENT_NOT_FOUND: Final = "AGENT_NOT_FOUND"
AGENT_FILE_UNREADABLE: Final = "AGENT_FILE_UNREADABLE"
AGENT_PARSE_FAILED: Final = "AGENT_PARSE_FAILED"
MISSING_ARGUMENT: Final = "MISSING_ARGUMENT"
# Malformed-file codes that are about reading the file (its size, its encoding), not
# about its Markdown or YAML: the seed files them under "cannot be read".
_UNREADABLE_MALFORMED: Final = frozenset({"too_large", "bad_encoding"})


def agent_error_code(error: SkillError) -> str:
    """The seed's error code for a library error (one code for each error). Raises
    ``SkillUsageError`` when *error* is not a ``SkillError``."""
    if not isinstance(error, SkillError):
        raise SkillUsageError("bad_argument", "error must be a skillguard.SkillError")
    if isinstance(error, SkillUsageError):
        return MISSING_ARGUMENT
    if error.code == "agent_not_found":
        return AGENT_NOT_FOUND
    if isinstance(error, MalformedSkillError) and error.code not in _UNREADABLE_MALFORMED:
        return AGENT_PARSE_FAILED
    return AGENT_FILE_UNREADABLE


def agent_envelope(definition: AgentDefinition, source_path: str) -> dict[str, object]:
    """The success envelope, keys in the seed's order."""
    return {
        "status": "ok",
        "agent_name": reveal(definition.name),
        "agent_description": reveal(definition.description),
        "model": None if definition.model is None else reveal(definition.model),
        "tools": [reveal(tool) for tool in definition.tools or ()],
        "persona": reveal(definition.persona),
        "core_knowledge": [reveal(line) for line in definition.core_knowledge],
        "rules": [reveal(rule) for rule in definition.rules],
        "full_body": reveal(definition.full_body),
        "source_path": source_path,
    }


def error_envelope(error: SkillError) -> dict[str, object]:
    """The error envelope of *error*."""
    if error.line is None:
        message = error.reason
    elif error.column is None:
        message = f"{error.reason} (line {error.line})"
    else:
        message = f"{error.reason} (line {error.line}, column {error.column})"
    return {"status": "error", "code": agent_error_code(error), "message": message}


def dumps(envelope: dict[str, object]) -> str:
    """One line of ASCII JSON, without a trailing newline."""
    return json.dumps(envelope, ensure_ascii=True, separators=(",", ":"))
