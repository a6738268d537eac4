"""Placeholder tool rules; replaced by the full rules module."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

__all__ = ["narrow"]


def narrow(granted: Iterable[str], allowed: Sequence[str]) -> frozenset[str]:
    grant = frozenset(granted)
    return grant if not allowed else grant & frozenset(allowed)
