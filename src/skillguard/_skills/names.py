"""Skill identifiers: what a skill may be called.

Rule 1 of the architecture: no path is built from an unvalidated name, and a skill
identifier is a bounded ASCII slug (1-64 characters: ``a-z``, ``0-9``, single hyphens
inside). Every module that takes a skill name from a caller, a policy, a registry or a
folder checks it here before using it. Sans-IO.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["NAME_MAX", "is_valid_name", "name_problem"]

NAME_MAX: Final = 64

_NAME_RE: Final = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


def is_valid_name(candidate: object) -> bool:
    """Whether *candidate* is a skill identifier: a 1-64 character ASCII slug."""
    if not isinstance(candidate, str):
        return False
    return len(candidate) <= NAME_MAX and _NAME_RE.fullmatch(candidate) is not None


def name_problem(candidate: str) -> str | None:
    """Why *candidate* is not a skill identifier, in words; ``None`` when it is one.

    The first rule broken is named, in the order an author fixes them; the message
    never echoes the candidate itself (callers show it through ``safe_repr``).
    """
    if is_valid_name(candidate):
        return None
    if not candidate:
        return "it is empty"
    if len(candidate) > NAME_MAX:
        return f"it is {len(candidate)} characters; the limit is {NAME_MAX}"
    if any(char.isupper() for char in candidate):
        return "it holds an uppercase letter (only a-z, 0-9 and '-' are allowed)"
    if not candidate.isascii():
        return "it holds a non-ASCII character (only a-z, 0-9 and '-' are allowed)"
    if re.fullmatch(r"[a-z0-9-]+", candidate) is None:
        return "it holds a character other than a-z, 0-9 and '-'"
    if candidate.startswith("-") or candidate.endswith("-"):
        return "it starts or ends with '-'"
    return "it holds two hyphens in a row"
