"""Placeholder character rules; replaced by the full rules module."""

from __future__ import annotations

from ._parse import FORBIDDEN_CHARS

__all__ = ["find_hidden", "reveal", "terminal_safe"]


def find_hidden(text: str) -> tuple[int, str] | None:
    for index, char in enumerate(text):
        if char in FORBIDDEN_CHARS:
            return index, char
    return None


def reveal(text: str) -> str:
    return "".join(
        f"[U+{ord(c):04X}]"
        if c in FORBIDDEN_CHARS or (not c.isprintable() and c not in "\n\t")
        else c
        for c in text
    )


def terminal_safe(text: str) -> str:
    return reveal(text)
