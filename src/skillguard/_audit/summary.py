"""Summaries: of a log's records in bounded memory, and of one tool call.

Rules (threat-model.md T50, T55, T190):

* A log is summarized only as far as its chain verifies (``summarize_log`` checks and
  counts in one pass); ``summarize_records`` counts records already checked.
* A summary's tables are bounded (``_audit.counts.TopCounts``, T190): exact up to
  ``MAX_COUNTED_NAMES`` names each, approximate with stated bounds past that; the
  number of records is always exact. It lists the latest ``MAX_LISTED_DENIALS``
  denials, and keeps no string longer than the writer could have written.
* ``--since`` and ``--until`` take ISO 8601 times read by one pattern, so that a time
  means the same on every Python skillguard supports (``parse_since``).
* ``audit_summary`` says a model's tool call in one escaped line; it never raises.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import deque
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from skillguard._audit.counts import TopCounts, shown_table
from skillguard._audit.record import (
    _MAX_ARGS_DEPTH,
    _MAX_FIELD_CHARS,
    MAX_RECORD_BYTES,
    _clean,
    _load_json,
    time_key,
)
from skillguard._audit.verify import _checker
from skillguard._core.errors import SkillUsageError

if TYPE_CHECKING:
    from collections.abc import Iterable

    from skillguard._audit.verify import Verification

__all__ = [
    "MAX_LISTED_DENIALS",
    "audit_summary",
    "parse_since",
    "summarize_log",
    "summarize_records",
]


# A summary lists the latest denials only, so that its memory does not grow with the log;
# the count of all of them is always given.
MAX_LISTED_DENIALS: Final = 1000
# What a summary keeps of a name, and of each field of a listed denial: the writer
# bounds every value to 259 characters, so only a forged value is ever cut.
_MAX_KEPT_CHARS = _MAX_FIELD_CHARS + 3


# -- summarizing ----------------------------------------------------------------------


# The ISO 8601 times ``--since`` and ``--until`` take, read by this pattern rather than
# ``datetime.fromisoformat``, whose grammar changed in Python 3.11 (3.10 refuses a
# fraction of other than 3 or 6 digits, ``Z`` and ``+0100``): a time means the same on
# every Python skillguard supports. A date, then optionally ``T`` (or a space) and
# ``HH[:MM[:SS[.fraction]]]``, then optionally ``Z`` or an offset ``+HH[:MM]``.
# ASCII digits only ([0-9], not \d, which matches every script's digits).
_ISO_TIME = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})"
    r"(?:[T ]([0-9]{2})(?::([0-9]{2})(?::([0-9]{2})(?:[.,]([0-9]+))?)?)?"
    r"(?:([Zz])|([+-])([0-9]{2})(?::?([0-9]{2}))?)?)?"
)


def _read_iso_time(text: str) -> dt.datetime:
    """*text* as an aware UTC time, rounded up to the next whole second. Raises
    ``ValueError`` (not this grammar, or a field out of range) or ``OverflowError``."""
    found = _ISO_TIME.fullmatch(text)
    if found is None:
        raise ValueError(text)
    year, month, day, hour, minute, second, fraction, _, sign, off_h, off_m = found.groups()
    zone = dt.timezone.utc
    if sign is not None:
        if int(off_h) > 23 or int(off_m or 0) > 59:
            raise ValueError(text)
        offset = dt.timedelta(hours=int(off_h), minutes=int(off_m or 0))
        zone = dt.timezone(-offset if sign == "-" else offset)
    moment = dt.datetime(
        int(year),
        int(month),
        int(day),
        int(hour or 0),
        int(minute or 0),
        int(second or 0),
        tzinfo=zone,
    ).astimezone(dt.timezone.utc)
    if fraction is not None:
        # Records have milliseconds: a finer fraction rounds up to the next one.
        millis, rest = int(fraction[:3].ljust(3, "0")), fraction[3:].strip("0")
        moment += dt.timedelta(milliseconds=millis + (1 if rest else 0))
    return moment


def parse_since(since: object) -> str:
    """*since* (ISO 8601: a date, or a date and time, with ``Z``, an offset or neither;
    naive is UTC) in the records' own form, ``YYYY-MM-DDTHH:MM:SS.mmmZ``, a fraction of a
    millisecond rounded up. Raises ``SkillUsageError`` otherwise. Compare it with a
    record's ``time`` through ``time_key`` (a log written before milliseconds has whole
    seconds)."""
    if not isinstance(since, str):
        raise SkillUsageError("bad_argument", "since must be a str (an ISO 8601 time)")
    try:
        moment = _read_iso_time(since)
    except (ValueError, OverflowError):  # not ISO 8601, or beyond year 1 to 9999 in UTC
        raise SkillUsageError("bad_argument", "since is not an ISO 8601 time") from None
    # Not strftime: its %Y does not pad years before 1000 on every platform.
    return (
        f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}"
        f"T{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d}"
        f".{moment.microsecond // 1000:03d}Z"
    )


_TABLES = ("by_decision", "by_event", "by_agent", "by_skill")


def _kept(value: object) -> object:
    """A value as a summary keeps it: a string over the writer's own bound is cut, so
    that a forged log cannot make what is kept per name or per denial large."""
    if isinstance(value, str) and len(value) > _MAX_KEPT_CHARS:
        return value[:_MAX_KEPT_CHARS] + "..."
    return value


class _Summary:
    """Counts of the records that pass the filters, in memory that does not grow with
    the log (T190): four bounded tables, the latest denials, exact totals."""

    def __init__(self, agent: str | None, since: str | None) -> None:
        self.agent = agent
        self.since = since
        self.tables = {title: TopCounts() for title in _TABLES}
        self.denials: deque[dict[str, object]] = deque(maxlen=MAX_LISTED_DENIALS)
        self.denial_count = 0
        self.total = 0

    def add(self, record: Mapping[str, object]) -> None:
        if self.agent is not None and record.get("agent") != self.agent:
            return
        if self.since is not None and time_key(record.get("time", "")) < self.since:
            return
        self.total += 1
        tables = self.tables
        tables["by_event"].add(str(_kept(str(record.get("event")))))
        for field, title in (
            ("decision", "by_decision"),
            ("agent", "by_agent"),
            ("skill", "by_skill"),
        ):
            value = record.get(field)
            if value:
                tables[title].add(str(_kept(str(value))))
        if record.get("decision") == "deny":
            self.denial_count += 1
            self.denials.append(
                {
                    k: _kept(record.get(k))
                    for k in ("time", "agent", "skill", "event", "code", "reason")
                }
            )

    def merge(self, other: _Summary) -> None:
        """Add *other*'s counts (not its denials, which a set lists apart)."""
        self.total += other.total
        self.denial_count += other.denial_count
        for title, counts in self.tables.items():
            counts.merge(other.tables[title])

    def result(self) -> dict[str, Any]:
        document: dict[str, Any] = {"records": self.total, "tables": {}}
        for title, counts in self.tables.items():
            document[title], document["tables"][title] = shown_table(counts)
        document["denials"] = list(self.denials)
        document["denials_total"] = self.denial_count
        return document


def _summary(agent: object, since: object) -> _Summary:
    if agent is not None and not isinstance(agent, str):
        raise SkillUsageError("bad_argument", "agent must be a str")
    return _Summary(agent, None if since is None else parse_since(since))


def summarize_records(
    records: Iterable[object], *, agent: str | None = None, since: str | None = None
) -> dict[str, Any]:
    """Counts by decision, event, agent and skill, and the latest ``MAX_LISTED_DENIALS``
    denials with their reasons (``denials_total`` counts them all).

    Each table lists its ``MAX_SHOWN_NAMES`` largest names and says what it left out
    under ``tables`` (``shown_table``); memory stays bounded whatever the records hold
    (T190). ``records`` and ``denials_total`` are exact; so is every count while a
    table has seen at most ``MAX_COUNTED_NAMES`` names, and past that each listed
    count is the most that name can hold, ``tables[...]["least"]`` the least.

    *since* is an ISO 8601 time (``SkillUsageError`` otherwise). What is not a mapping
    is skipped: check the chain first (``summarize_log`` does both).
    """
    summary = _summary(agent, since)
    for record in records:
        if isinstance(record, Mapping):
            summary.add(record)
    return summary.result()


def summarize_log(
    lines: Iterable[str | bytes],
    *,
    key: bytes | None = None,
    agent: str | None = None,
    since: str | None = None,
    expected_log_id: str | None = None,
) -> tuple[Verification, dict[str, Any]]:
    """Check the chain and summarize it in one pass: the ``Verification`` and the
    summary of the records before the first bad one (all of them when intact)."""
    summary = _summary(agent, since)
    checker = _checker(lines, key, None, expected_log_id)
    result = checker.run(lines, summary.add) or checker.finish()
    return result, summary.result()


def audit_summary(args: object) -> str:
    """A one-line, escaped summary of a skill tool call, for tool-call UIs.

    Total: *args* (a model's tool-call arguments, untrusted) is a JSON ``str`` or a
    mapping; anything else, or JSON over 64 KiB or nested deeper than 32, gives a fixed
    text. Keys that are not ``str`` are shown by their ``str()``. Never raises.
    """
    data: object = args
    if isinstance(args, str):
        try:
            data = _load_json(args, max_chars=MAX_RECORD_BYTES, max_depth=_MAX_ARGS_DEPTH)
        except ValueError:
            return "skill call with unreadable arguments"
    if not isinstance(data, Mapping) or not isinstance(data.get("name"), str):
        return "skill call without a skill name"
    name = _clean(data["name"])
    extra = sorted(str(_clean(key)) for key in data if key != "name")
    tail = f" (+{', '.join(extra[:5])})" if extra else ""
    return f"load skill {name}{tail}"
