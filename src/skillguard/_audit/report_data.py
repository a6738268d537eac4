"""What the audit report shows, gathered one verified record at a time.

Rules (threat-model.md T99, T116, T190):

* Memory is bounded whatever the log's size: the log is streamed once through the
  chain check, and each verified record is added here: counts keep at most
  ``MAX_COUNTED_NAMES`` names per table (``_audit.counts.TopCounts``: exact up to that
  many names, then each count a range that a flood of names cannot push a large count
  out of); each per-record table keeps the latest ``MAX_TABLE_ROWS`` rows and counts
  how many earlier ones it left out; the timeline has at most ``MAX_LANES`` agent lanes
  of ``TIMELINE_BINS`` bins, whose width doubles as the log grows. Counts always cover
  every record the filters let through. Every value kept is cut to ``MAX_CELL_CHARS``
  (one more, so that the page shows it as cut) before it is kept.
* A timeline lane is keyed by what it gathers (T116): an agent's name, or a catch-all
  key no name can take (the records naming no agent, the agents beyond the lane limit).

Nothing here writes markup: ``_audit.report_html`` does, from what is gathered here.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Final

import attrs

from skillguard._audit.counts import TopCounts
from skillguard._audit.record import time_key

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["MAX_CELL_CHARS", "MAX_LANES", "MAX_TABLE_ROWS", "TIMELINE_BINS"]

# Each per-record table lists the latest rows only: a reviewer reads a few hundred rows,
# and 500 rows of 7 capped cells keep the page a few megabytes at worst.
MAX_TABLE_ROWS: Final = 500
# A value the Auditor writes is at most 259 characters; longer ones were forged.
MAX_CELL_CHARS: Final = 260
# Agent lanes on the timeline; later agents share one lane.
MAX_LANES: Final = 24
TIMELINE_BINS: Final = 64

_GRANT = "grant"
_APPROVAL = "approval"
_DENIAL = "denial"
_CONTAINMENT = "containment"
# Top to bottom within a lane, with the words the legend and the tooltips use.
_KINDS = (
    (_GRANT, "grants"),
    (_APPROVAL, "approvals"),
    (_DENIAL, "denials"),
    (_CONTAINMENT, "containment refusals"),
)
# A lane is keyed by what it gathers, never by a name alone: an agent's lane by
# ("agent", its name), the two catch-all lanes by keys no agent name can take. Their
# labels differ by construction too: an agent's name is always shown in quotes, a
# catch-all's label never starts with one and is set in italics.
_AGENT_LANE = "agent"
_NO_AGENT_LANE = ("no-agent", "")
_OTHER_AGENTS_LANE = ("other-agents", "")
_CATCH_ALL_LABELS = {
    _NO_AGENT_LANE: "(records naming no agent)",
    _OTHER_AGENTS_LANE: "(every later agent)",
}

# The per-record tables: title, which records, and their columns.
_DENIAL_COLUMNS = ("line", "time", "agent", "skill", "event", "code", "reason")
_APPROVAL_COLUMNS = (
    "line",
    "time",
    "agent",
    "skill",
    "event",
    "approver",
    "scope",
    "source",
    "digest",
    "request_id",
    "reason",
)
_SHADOWING_COLUMNS = ("line", "time", "agent", "skill", "source", "path", "code", "reason")
_SELECTION_COLUMNS = ("line", "time", "agent", "skill", "event", "decision", "code", "reason")
# What each agent was served: a skill or an agent file, which bytes, from where.
_RECEIVED_COLUMNS = ("line", "time", "agent", "skill", "event", "source", "digest", "sha256")
_RECEIVED_EVENTS = frozenset({"load_granted", "agent_context_served", "skill_selected"})


def _table_of(record: Mapping[str, object]) -> tuple[str, ...]:
    """The tables a record is listed in (a shadowing refusal is a denial too)."""
    event = str(record.get("event", ""))
    tables: list[str] = []
    if record.get("decision") == "deny":
        tables.append("denials")
    if event in {"approval_granted", "approval_denied"} or _agent_file_approval(record):
        tables.append("approvals")
    if event in _RECEIVED_EVENTS:
        tables.append("received")
    if event == "shadowing_refused":
        tables.append("shadowing")
    if "select" in event:
        tables.append("selections")
    return tuple(tables)


def _agent_file_approval(record: Mapping[str, object]) -> bool:
    """A workspace agent file (a system prompt from a cloned repository) approved and
    served, or refused by its approver: the agent line's approvals."""
    event = record.get("event")
    if event == "agent_context_served":
        return record.get("source") == "workspace"
    return event == "agent_context_denied" and record.get("approver") is not None


def _kind(record: Mapping[str, object]) -> str | None:
    """The timeline mark of a record, or ``None`` for one that decides nothing."""
    if record.get("event") == "containment_violation":
        return _CONTAINMENT
    if record.get("event") == "approval_granted":
        return _APPROVAL
    if record.get("decision") == "deny":
        return _DENIAL
    if record.get("decision") == "allow":
        return _GRANT
    return None


def _name(value: object) -> str | None:
    """A value as a bounded name to count, ``None`` when absent or empty. One character
    over the cap is kept, so that ``_cell`` shows the name as cut ("...")."""
    if value is None or value == "":
        return None
    return str(value)[: MAX_CELL_CHARS + 1]


class _Counts(TopCounts):
    """Counts by name (``TopCounts``), a missing or empty name not counted."""

    def count(self, name: str | None) -> None:
        if name is not None:
            self.add(name)


@attrs.define
class _Rows:
    """The latest rows of one table, and how many there were."""

    rows: deque[tuple[int, Mapping[str, object]]] = attrs.field(
        factory=lambda: deque(maxlen=MAX_TABLE_ROWS)
    )
    total: int = 0


class _Timeline:
    """Marks per agent lane and bin, over the order of records in the log.

    The x axis is the position of a record among those shown, not its claimed time: the
    chain proves the order, while a time is whatever the writer's clock said. Bins start
    one record wide and double (merging neighbours) whenever the log outgrows them.
    """

    def __init__(self) -> None:
        self.width = 1
        self.count = 0
        self.lanes: dict[tuple[str, str], list[dict[str, int]]] = {}
        self.first_times: list[str | None] = [None] * TIMELINE_BINS
        self.last_times: list[str | None] = [None] * TIMELINE_BINS

    def add(self, agent: str | None, kind: str | None, time: str) -> None:
        position = self.count
        self.count += 1
        if position // self.width >= TIMELINE_BINS:
            self._merge()
        slot = position // self.width
        if self.first_times[slot] is None:
            self.first_times[slot] = time
        self.last_times[slot] = time
        if kind is None:
            return
        lane = (_AGENT_LANE, agent) if agent is not None else _NO_AGENT_LANE
        if lane not in self.lanes:
            if len(self.lanes) >= MAX_LANES - 1:
                lane = _OTHER_AGENTS_LANE
            self.lanes.setdefault(lane, [{} for _ in range(TIMELINE_BINS)])
        marks = self.lanes[lane][slot]
        marks[kind] = marks.get(kind, 0) + 1

    def _merge(self) -> None:
        half = TIMELINE_BINS // 2
        for bins in self.lanes.values():
            for i in range(half):
                merged = dict(bins[2 * i])
                for kind, count in bins[2 * i + 1].items():
                    merged[kind] = merged.get(kind, 0) + count
                bins[i] = merged
            for i in range(half, TIMELINE_BINS):
                bins[i] = {}
        firsts, lasts = self.first_times, self.last_times
        self.first_times = [firsts[2 * i] for i in range(half)] + [None] * half
        self.last_times = [lasts[2 * i + 1] or lasts[2 * i] for i in range(half)] + [None] * half
        self.width *= 2


class _Collector:
    """Everything the page shows, gathered one verified record at a time."""

    def __init__(self, agent: str | None, since: str | None, until: str | None) -> None:
        self.agent = agent
        self.since = since
        self.until = until
        self.total = 0
        self.first_time: str | None = None
        self.last_time: str | None = None
        self.by_decision = _Counts()
        self.by_event = _Counts()
        self.by_agent = _Counts()
        self.by_skill = _Counts()
        self.tables = {
            name: _Rows()
            for name in ("denials", "approvals", "received", "shadowing", "selections")
        }
        self.timeline = _Timeline()

    def add(self, line: int, record: Mapping[str, object]) -> None:
        agent = _name(record.get("agent"))
        time = str(record.get("time", ""))[: MAX_CELL_CHARS + 1]
        if self.agent is not None and record.get("agent") != self.agent:
            return
        if self.since is not None and time_key(time) < self.since:
            return
        if self.until is not None and time_key(time) >= self.until:
            return
        self.total += 1
        if self.first_time is None:
            self.first_time = time
        self.last_time = time
        self.by_decision.count(_name(record.get("decision")))
        self.by_event.count(_name(record.get("event")))
        self.by_agent.count(agent)
        self.by_skill.count(_name(record.get("skill")))
        for table in _table_of(record):
            rows = self.tables[table]
            rows.total += 1
            rows.rows.append((line, _bounded(record)))
        self.timeline.add(agent, _kind(record), time)


def _bounded(record: Mapping[str, object]) -> dict[str, object]:
    """The fields a table may show, each cut to ``MAX_CELL_CHARS`` before it is kept."""
    kept: dict[str, object] = {}
    for column in _APPROVAL_COLUMNS + _SHADOWING_COLUMNS + _SELECTION_COLUMNS + _RECEIVED_COLUMNS:
        value = record.get(column)
        if value is not None and column not in kept:
            kept[column] = value if isinstance(value, int) else str(value)[: MAX_CELL_CHARS + 1]
    return kept
