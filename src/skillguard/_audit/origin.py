"""Where the decisions being recorded were asked from: a front end that serves skills to
someone else (the MCP server) names itself and its peer in every record it causes.

``origin(via, client)`` sets both for the code that runs inside it, in this task and in
the tasks it starts (a ``contextvars`` value, so concurrent calls of one process keep
their own); ``Auditor.emit`` adds them to each record as ``via`` and ``client``. The
peer's name is whatever the peer said it is: it is escaped and bounded like every other
field (``record._clean``), and it is a label, never an identity.
"""

from __future__ import annotations

import contextlib
import contextvars
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["current_origin", "origin"]

_ORIGIN: contextvars.ContextVar[tuple[str, str | None] | None] = contextvars.ContextVar(
    "skillguard_audit_origin", default=None
)


@contextlib.contextmanager
def origin(via: str, client: str | None) -> Iterator[None]:
    """Record *via* and *client* in every audit record emitted inside this block."""
    token = _ORIGIN.set((via, client))
    try:
        yield
    finally:
        _ORIGIN.reset(token)


def current_origin() -> tuple[str, str | None] | None:
    """The ``(via, client)`` of the running code, or ``None`` outside ``origin``."""
    return _ORIGIN.get()
