"""Audit events on the ``skillguard.audit`` logger, quiet unless the host asks.

Rules (threat-model.md T27, T56, T253). Every decision is an event on the
``skillguard.audit`` logger, and skillguard is quiet by default. skillguard never
configures logging: when the host configured structlog (``structlog.is_configured()``
at emit time) the event goes through structlog; otherwise it goes to the stdlib
``logging.getLogger("skillguard.audit")``, which holds a ``NullHandler``, so a process
that configured nothing prints nothing (structlog's unconfigured default would print
every event to stdout and corrupt any stdio protocol spoken there).

* A denial or a refusal (``decision`` ``deny``, or an event named ``*_denied``,
  ``*_refused``, ``*_failed``) is a WARNING, everything else INFO: a host that logs at
  WARNING sees every denial, and no grant.
* A stdlib record carries every field twice: nested, as its ``audit`` attribute, and
  flat, as ``skillguard.<field>`` attributes (``skillguard.agent``, ...), which
  OpenTelemetry's logging handler turns into attributes a query can use.
* A level set on ``logging.getLogger("skillguard")`` (or ``"skillguard.audit"``) holds
  for structlog too: an event below it is not emitted, whichever route it would take.
  A host that set no such level gets every event through structlog, whatever the level
  of its root logger.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import structlog

from skillguard._audit.spans import annotate

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["event_level", "flat_fields", "log_event"]

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


_WARNING_SUFFIXES = ("_denied", "_refused", "_failed")


def event_level(record: Mapping[str, object]) -> int:
    """WARNING for a denial or a refusal, INFO for everything else."""
    event = str(record.get("event", ""))
    if record.get("decision") == "deny" or event.endswith(_WARNING_SUFFIXES):
        return logging.WARNING
    return logging.INFO


def _silenced(level: int) -> bool:
    """Whether the host set a level on ``skillguard.audit`` or ``skillguard`` (the
    nearest one set decides) that is above *level*, or disabled logging up to it."""
    if logging.root.manager.disable >= level:
        return True
    logger: logging.Logger | None = _STDLIB_LOGGER
    while logger is not None and logger.name.startswith("skillguard"):
        if logger.level != logging.NOTSET:
            return level < logger.level
        parent = logger.parent
        logger = parent if isinstance(parent, logging.Logger) else None
    return False


def flat_fields(record: Mapping[str, object]) -> dict[str, object]:
    """Every field of *record* as ``skillguard.<field>``: flat attributes for a stdlib
    record (and OpenTelemetry's handler), beside the nested ``audit``."""
    return {f"skillguard.{name}": value for name, value in record.items()}


def log_event(record: Mapping[str, object]) -> None:
    """Emit *record* on the ``skillguard.audit`` logger: through structlog when the host
    configured it, else the stdlib logger (quiet unless the host asked for its level),
    at WARNING for a denial and INFO otherwise."""
    annotate(record)  # the skillguard span it belongs to, if the host traces
    level = event_level(record)
    # Decided per event: a host may configure structlog after building its Loader.
    if structlog.is_configured():
        if _silenced(level):
            return
        rest = {k: v for k, v in record.items() if k != "event"}
        logger = structlog.get_logger("skillguard.audit")
        emit = logger.warning if level == logging.WARNING else logger.info
        emit(str(record["event"]), **rest)
    elif _STDLIB_LOGGER.isEnabledFor(level):
        extra = {"audit": record, **flat_fields(record)}
        _STDLIB_LOGGER.log(level, "%s", _render(record), extra=extra)
