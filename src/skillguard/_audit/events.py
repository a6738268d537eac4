"""Audit events on the ``skillguard.audit`` logger, quiet unless the host asks.

Rules (threat-model.md T27, T56). Every decision is an event on the ``skillguard.audit``
logger, and skillguard is quiet by default. skillguard never configures logging: when
the host configured structlog (``structlog.is_configured()`` at emit time) the event
goes through structlog; otherwise it goes to the stdlib
``logging.getLogger("skillguard.audit")`` at INFO, which holds a ``NullHandler``, so a
process that configured nothing prints nothing (structlog's unconfigured default would
print every event to stdout and corrupt any stdio protocol spoken there).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import structlog

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["log_event"]

_STDLIB_LOGGER = logging.getLogger("skillguard.audit")
# The library convention: without this, a host that configured no logging would get
# WARNING and above printed on stderr by Python's last-resort handler.
_STDLIB_LOGGER.addHandler(logging.NullHandler())


def _render(record: Mapping[str, object]) -> str:
    """``event name=value ...`` for a plain log line; the stdlib record has its own time,
    and carries every field (time included) as its ``audit`` attribute."""
    return " ".join(
        [str(record["event"])]
        + [f"{name}={value}" for name, value in record.items() if name not in {"event", "time"}]
    )


def log_event(record: Mapping[str, object]) -> None:
    """Emit *record* on the ``skillguard.audit`` logger: through structlog when the host
    configured it, else the stdlib logger (quiet unless the host asked for INFO)."""
    # Decided per event: a host may configure structlog after building its Loader.
    if structlog.is_configured():
        rest = {k: v for k, v in record.items() if k != "event"}
        structlog.get_logger("skillguard.audit").info(str(record["event"]), **rest)
    elif _STDLIB_LOGGER.isEnabledFor(logging.INFO):
        _STDLIB_LOGGER.info("%s", _render(record), extra={"audit": record})
