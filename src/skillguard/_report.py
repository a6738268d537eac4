"""The audit report: one self-contained HTML page of an audit log, for people to review.

Rules (threat-model.md T95-T99, T116):

* The log is hostile input. Every string that came from it reaches the page through
  ``_cell`` only: bounded (``MAX_CELL_CHARS``), every hidden character, control and bidi
  override shown as ``[U+XXXX]`` (``_text.terminal_line``), then HTML-escaped quotes
  included. Markup is written by this module alone, from constants and from numbers it
  counted itself; nothing from the log is ever placed in a tag name, an attribute name,
  an element count or a URL.
* The page loads nothing: no URL of any kind is written, and a Content-Security-Policy
  ``meta`` tag (``default-src 'none'``) allows exactly this module's one style sheet and
  one filter script, by hash. The page reads fully with scripts disabled: the script
  only shows a filter box that is otherwise hidden.
* Verification comes first and decides what is shown. Records are shown only up to the
  first bad line, since nothing after it is proven, and nothing after it is read (as
  ``audit verify`` reads nothing after it: a log that breaks early costs nothing to
  report on, T190). A torn tail (T191) is said as such, with what mends it. A keyed log
  checked without its key (or with another key) shows no record at all.
* Memory and page size are bounded whatever the log's size: the log is streamed once
  through the chain check; counts keep at most ``MAX_COUNTED_NAMES`` names per table
  (``_auditcount.TopCounts``: exact up to that many names, then each count a range
  that a flood of names cannot push a large count out of); each per-record table keeps
  the latest
  ``MAX_TABLE_ROWS`` rows and says how many earlier ones it left out; the timeline has
  at most ``MAX_LANES`` agent lanes of ``TIMELINE_BINS`` bins, whose width doubles as the
  log grows. Counts always cover every record the filters let through.
* What the page adds can never be mistaken for what the log says (T116): a timeline
  lane is keyed by what it gathers, an agent's name or a catch-all key no name can
  take, and an agent's label is always its name in quotes (numbered after the quote
  when two would read the same), while the catch-all lanes (no agent, the agents
  beyond the lane limit) come last, in italics, unquoted. The page's own rows of a
  count table are one cell across its foot, and the log's times in the page's
  sentences are set as code. No two values read the same: ``_cell`` also reveals a
  "[U+" the value spells itself and the blanks a page would not show (``_shown``).
"""

from __future__ import annotations

import base64
import hashlib
import html
import re
from collections import Counter, deque
from typing import TYPE_CHECKING, Final

import attrs

from ._audit import INTACT, NEEDS_KEY, TORN, WRONG_KEY, Verification, _checker, parse_since
from ._auditcount import MAX_COUNTED_NAMES, MAX_SHOWN_NAMES, TopCounts, rest_line, shown_table, span
from ._errors import SkillUsageError
from ._text import terminal_line

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

__all__ = [
    "MAX_CELL_CHARS",
    "MAX_COUNTED_NAMES",
    "MAX_LANES",
    "MAX_TABLE_ROWS",
    "TIMELINE_BINS",
    "render_audit_report",
]

# Each per-record table lists the latest rows only: a reviewer reads a few hundred rows,
# and 500 rows of 7 capped cells keep the page a few megabytes at worst.
MAX_TABLE_ROWS: Final = 500
# A value the Auditor writes is at most 259 characters; longer ones were forged.
MAX_CELL_CHARS: Final = 260
# Shown per count table, largest first; the rest are summed in one row.
_SHOWN_COUNTS = MAX_SHOWN_NAMES
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


def _table_of(record: Mapping[str, object]) -> tuple[str, ...]:
    """The tables a record is listed in (a shadowing refusal is a denial too)."""
    event = str(record.get("event", ""))
    tables: list[str] = []
    if record.get("decision") == "deny":
        tables.append("denials")
    if event in {"approval_granted", "approval_denied"}:
        tables.append("approvals")
    if event == "shadowing_refused":
        tables.append("shadowing")
    if "select" in event:
        tables.append("selections")
    return tuple(tables)


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
            name: _Rows() for name in ("denials", "approvals", "shadowing", "selections")
        }
        self.timeline = _Timeline()

    def add(self, line: int, record: Mapping[str, object]) -> None:
        agent = _name(record.get("agent"))
        time = str(record.get("time", ""))[: MAX_CELL_CHARS + 1]
        if self.agent is not None and record.get("agent") != self.agent:
            return
        if self.since is not None and time < self.since:
            return
        if self.until is not None and time >= self.until:
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
    for column in _APPROVAL_COLUMNS + _SHADOWING_COLUMNS + _SELECTION_COLUMNS:
        value = record.get(column)
        if value is not None and column not in kept:
            kept[column] = value if isinstance(value, int) else str(value)[: MAX_CELL_CHARS + 1]
    return kept


# -- the page -------------------------------------------------------------------------


# Blanks a reader cannot count: spaces at either end of a value (HTML and SVG drop or
# hide them) and every blank but the ASCII space (no-break, em, ideographic, ...).
# The trailing run is tried only from its first space, so that no run is read again
# from each of its spaces (threat-model.md T144).
_ODD_BLANKS: Final = re.compile(r"\A +|(?<! ) +\Z|[\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]")


def _shown(text: str) -> str:
    """*text* as a reviewer must read it: hidden characters and controls revealed
    (``_text.terminal_line``), a "[U+" the value spells itself revealed, and the blanks
    a page would not show revealed too, so that two values never read the same (T116).
    The page keeps runs of inner spaces (``white-space: pre-wrap`` / ``pre``)."""
    if "[U+" in text:
        # A log value that spells a revealed character itself ("a[U+202E]b") must not
        # read like one that holds it: its own "[" is revealed, so that every "[U+"
        # on the page is the page's.
        text = text.replace("[U+", "[U+005B]U+")
    text = terminal_line(text)
    if " " not in text and text.isascii():
        return text
    return _ODD_BLANKS.sub(lambda found: "".join(f"[U+{ord(c):04X}]" for c in found.group()), text)


def _cell(value: object) -> str:
    """The one way a value from the log reaches the page: bounded, hidden characters
    and odd blanks revealed, then HTML-escaped (quotes too, so it is safe in an
    attribute as well)."""
    if value is None:
        return ""
    text = str(value)
    if len(text) > MAX_CELL_CHARS:
        text = text[:MAX_CELL_CHARS] + "..."
    return html.escape(_shown(text), quote=True)


def _label(lane: tuple[str, str], width: int | None = None) -> tuple[str, str]:
    """A lane's label and its full title, escaped: an agent's name in quotes (shortened
    in the middle after hidden characters are revealed, so that it fits *width* and
    keeps both ends, the quotes included), a catch-all lane's own words."""
    kind, name = lane
    if kind != _AGENT_LANE:
        words = _CATCH_ALL_LABELS[lane]
        return words, words
    width = _LABEL_CHARS if width is None else width
    text = _shown(name[: MAX_CELL_CHARS + 1])
    if len(text) > width - 2:
        half = (width - 5) // 2
        text = text[:half] + "..." + text[-half:]
    return html.escape(f'"{text}"', quote=True), f'agent "{_cell(name)}"'


def _lane_labels(lanes: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The label and title of each lane, told apart when they would read the same.

    Two names can when shortened in the middle. Such lanes are numbered after the
    closing quote (``#1``, ``#2``, in lane order), where no name can put anything (T116).
    """
    labels = [_label(lane) for lane in lanes]
    seen_labels = Counter(label for label, _ in labels)
    seen_titles = Counter(title for _, title in labels)
    numbered: list[tuple[str, str]] = []
    number = 0
    for lane, (label, title) in zip(lanes, labels, strict=True):
        if seen_labels[label] == 1 and seen_titles[title] == 1:
            numbered.append((label, title))
            continue
        # One count across every such lane: no two numbered labels can read the same,
        # and none can read like an unnumbered one, which ends with its quote.
        number += 1
        short, _ = _label(lane, _LABEL_CHARS - 4)
        numbered.append((f"{short} #{number}", f"{title} #{number}"))
    return numbered


_STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1200px;padding:0 16px 48px;
color:#1b1b1b;background:#fff}
h1{font-size:22px;margin:20px 0 8px}
h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ccc}
.banner{border:3px solid;border-radius:6px;padding:12px 16px;margin:12px 0}
.banner .verdict{font-size:20px;font-weight:700;margin:0 0 6px}
.banner p{margin:4px 0}
.intact{border-color:#1a7f37;background:#dafbe1}
.unkeyed{border-color:#9a6700;background:#fff8c5}
.tampered{border-color:#cf222e;background:#ffebe9}
.torn{border-color:#bc4c00;background:#fff1e5}
.needs-key,.wrong-key{border-color:#8250df;background:#fbefff}
table{border-collapse:collapse;margin:6px 0;font-size:13px}
th,td{border:1px solid #d0d7de;padding:3px 6px;text-align:left;vertical-align:top}
th{background:#f6f8fa}td{overflow-wrap:break-word;max-width:420px;white-space:pre-wrap}
td.n{text-align:right;font-variant-numeric:tabular-nums}
.counts{display:flex;flex-wrap:wrap;gap:24px;align-items:flex-start}
td.t{white-space:nowrap}
.note{color:#57606a}
code,.mono{font-family:ui-monospace,monospace;font-size:12px;white-space:pre-wrap}
svg text{white-space:pre}
td.mono{overflow-wrap:anywhere;min-width:15ch}
svg{max-width:100%;height:auto;border:1px solid #d0d7de}
.legend svg{border:0;vertical-align:middle}
.legend span{margin-right:18px}
#filter{margin:8px 0;padding:4px;width:320px}
"""

# Shows the filter box and filters the per-record tables on the text of each row.
# It reads textContent and sets hidden: it never writes markup.
_SCRIPT = """
"use strict";
(function () {
  var box = document.getElementById("filter");
  if (!box) { return; }
  box.hidden = false;
  box.addEventListener("input", function () {
    var wanted = box.value.toLowerCase();
    var rows = document.querySelectorAll("table.records tbody tr");
    for (var i = 0; i < rows.length; i++) {
      rows[i].hidden = wanted !== "" &&
        rows[i].textContent.toLowerCase().indexOf(wanted) === -1;
    }
  });
})();
"""


def _sha256_source(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


# Nothing may load, be framed in, submitted or navigated to; only this style sheet and
# this script run, by hash.
_CSP = (
    "default-src 'none'; "
    f"style-src {_sha256_source(_STYLE)}; "
    f"script-src {_sha256_source(_SCRIPT)}; "
    "img-src 'none'; base-uri 'none'; form-action 'none'"
)


def _marker(kind: str, x: float, y: float, size: float) -> str:
    """A shape per kind, so that kinds differ without colour: a dot, a diamond, a
    cross and a square."""
    if kind == _GRANT:
        return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{size:.1f}" fill="#1a7f37"/>'
    if kind == _APPROVAL:
        return (
            f'<polygon points="{x:.1f},{y - size - 1:.1f} {x + size + 1:.1f},{y:.1f} '
            f'{x:.1f},{y + size + 1:.1f} {x - size - 1:.1f},{y:.1f}" fill="#0969da"/>'
        )
    if kind == _DENIAL:
        return (
            f'<path d="M{x - size:.1f},{y - size:.1f}L{x + size:.1f},{y + size:.1f}'
            f'M{x - size:.1f},{y + size:.1f}L{x + size:.1f},{y - size:.1f}" '
            'stroke="#cf222e" stroke-width="2.5" fill="none"/>'
        )
    return (
        f'<rect x="{x - size:.1f}" y="{y - size:.1f}" width="{2 * size:.1f}" '
        f'height="{2 * size:.1f}" fill="#fff" stroke="#000" stroke-width="2"/>'
    )


def _legend() -> str:
    parts = []
    for kind, words in _KINDS:
        parts.append(
            f'<span><svg width="16" height="16" aria-hidden="true">{_marker(kind, 8, 8, 5)}'
            f"</svg> {words}</span>"
        )
    return f'<p class="legend">{"".join(parts)}</p>'


_LANE_ROW = 13
_LANE_HEIGHT = _LANE_ROW * len(_KINDS) + 10
_LABEL_WIDTH = 190
_LABEL_CHARS = 29  # what fits in the label column at 12 px
_PLOT_WIDTH = 760


def _timeline_svg(timeline: _Timeline) -> str:
    if not timeline.lanes:
        return '<p class="note">No grant, approval, denial or refusal to draw.</p>'
    used = -(-timeline.count // timeline.width)  # bins holding at least one record
    step = _PLOT_WIDTH / used
    height = _LANE_HEIGHT * len(timeline.lanes) + 34
    width = _LABEL_WIDTH + _PLOT_WIDTH + 10
    out = [
        (
            f'<svg role="img" aria-labelledby="timeline-title" width="{width}" '
            f'height="{height}" viewBox="0 0 {width} {height}">'
        ),
        '<title id="timeline-title">Decisions per agent, in log order</title>',
    ]
    # The agents' lanes first, in the order they appear; the catch-all lanes last.
    lanes = sorted(timeline.lanes.items(), key=lambda item: item[0][0] != _AGENT_LANE)
    labels = _lane_labels([lane for lane, _ in lanes])
    for row, ((lane, bins), (label, title)) in enumerate(zip(lanes, labels, strict=True)):
        top = row * _LANE_HEIGHT + 4
        shade = "#f6f8fa" if row % 2 == 0 else "#ffffff"
        out.append(
            f'<rect x="0" y="{top}" width="{width}" height="{_LANE_HEIGHT}" fill="{shade}"/>'
        )
        style = "" if lane[0] == _AGENT_LANE else ' font-style="italic"'
        out.append(
            f'<text x="6" y="{top + _LANE_HEIGHT / 2 + 4:.1f}" font-size="12" '
            f'font-family="sans-serif"{style}><title>{title}</title>{label}</text>'
        )
        for slot in range(used):
            marks = bins[slot]
            if not marks:
                continue
            x = _LABEL_WIDTH + (slot + 0.5) * step
            span = f"{_cell(timeline.first_times[slot])} to {_cell(timeline.last_times[slot])}"
            for index, (kind, words) in enumerate(_KINDS):
                count = marks.get(kind, 0)
                if not count:
                    continue
                y = top + 6 + index * _LANE_ROW + _LANE_ROW / 2
                size = 4.0 if count == 1 else 5.0 if count < 10 else 6.0
                out.append(
                    f"<g><title>{title}: {words} {count}, {span}</title>"
                    f"{_marker(kind, x, y, size)}</g>"
                )
    axis = _LANE_HEIGHT * len(timeline.lanes) + 20
    for slot in sorted({0, used // 2, used - 1}):
        x = _LABEL_WIDTH + (slot + 0.5) * step
        anchor = "start" if slot == 0 else "end" if slot == used - 1 and slot else "middle"
        out.append(
            f'<text x="{x:.1f}" y="{axis}" font-size="11" font-family="sans-serif" '
            f'text-anchor="{anchor}">{_cell(timeline.first_times[slot])}</text>'
        )
    out.append("</svg>")
    return "\n".join(out)


def _counts_table(title: str, counts: _Counts) -> str:
    listed, facts = shown_table(counts, _SHOWN_COUNTS)
    least = facts["least"]
    rows = [
        f'<tr><td>{_cell(name)}</td><td class="n">{span(least.get(name, most), most)}</td></tr>'
        for name, most in listed.items()
    ]
    # The page's own rows span both columns, in the table's foot: a name from the log
    # always has a cell of its own and a count beside it, so no name can pass for them
    # (T116).
    rest = rest_line(facts, len(listed), counts.capacity)
    notes = [rest] if rest else []
    if not facts["exact"]:
        notes.append(
            f"over {counts.capacity} names: a count shown as a range is the least and "
            "the most that name can hold"
        )
    elif not rows:
        notes.append("none")
    foot = "".join(f'<tr><td class="note" colspan="2">{note}</td></tr>' for note in notes)
    foot = f"<tfoot>{foot}</tfoot>" if foot else ""
    return (
        f"<table><thead><tr><th>{title}</th><th>records</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody>{foot}</table>"
    )


_COLUMN_CLASS = {
    "time": ' class="t"',
    "digest": ' class="mono"',
    "request_id": ' class="mono"',
}


def _records_table(title: str, anchor: str, rows: _Rows, columns: tuple[str, ...]) -> str:
    head = f'<h2 id="{anchor}">{title} ({rows.total})</h2>'
    if not rows.total:
        return head + '<p class="note">None.</p>'
    left_out = rows.total - len(rows.rows)
    note = (
        f'<p class="note">The {left_out} earlier rows are left out of this table; '
        "the counts above cover them. Narrow with --agent, --since or --until.</p>"
        if left_out
        else ""
    )
    body = []
    for line, record in rows.rows:
        cells = [f'<td class="n">{line}</td>']
        for column in columns[1:]:
            value = record.get(column)
            cells.append(f"<td{_COLUMN_CLASS.get(column, '')}>{_cell(value)}</td>")
        body.append(f"<tr>{''.join(cells)}</tr>")
    header = "".join(f"<th>{column}</th>" for column in columns)
    return (
        f'{head}{note}<table class="records"><thead><tr>{header}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table>"
    )


def _banner(result: Verification, expected_log_id: str | None) -> str:
    """What the chain check found, in words (the colour repeats it, never alone)."""
    log_id = f"<code>{_cell(result.log_id)}</code>" if result.log_id else "unknown"
    facts = f"<p>Log id {log_id}; {result.records} lines read.</p>"
    if expected_log_id is not None and result.status == INTACT:
        facts += "<p>The log id is the one expected.</p>"
    if result.intact and result.keyed:
        return (
            '<section class="banner intact" id="verdict" data-state="intact-keyed">'
            '<p class="verdict">&#10004; VERIFIED, keyed: the chain is intact</p>'
            f"<p>Every record verifies with the key given: each was written by a holder "
            f"of the key, in this order, none removed between the first and the last.</p>"
            f"{facts}</section>"
        )
    if result.intact:
        return (
            '<section class="banner unkeyed" id="verdict" data-state="intact-unkeyed">'
            '<p class="verdict">&#9888; INTACT, but UNKEYED: the chain is consistent</p>'
            "<p>No record was edited, inserted or removed without the hashes after it being "
            "recomputed too. A log without a key does not prove who wrote it: anyone who "
            "can write the file can rewrite the whole chain. Use a keyed log.</p>"
            f"{facts}</section>"
        )
    if result.status == NEEDS_KEY:
        return (
            '<section class="banner needs-key" id="verdict" data-state="needs-key">'
            '<p class="verdict">&#9888; NOT VERIFIED: the log is keyed and no key was '
            "given</p><p>Nothing is shown: give its key (--key-file) to check it.</p>"
            f"{facts}</section>"
        )
    if result.status == WRONG_KEY:
        return (
            '<section class="banner wrong-key" id="verdict" data-state="wrong-key">'
            '<p class="verdict">&#9888; NOT VERIFIED: the log was keyed with another '
            "key</p><p>Nothing is shown: the key given is not the one it was written "
            f"with.</p>{facts}</section>"
        )
    line = result.line if result.line is not None else result.records
    if line <= 1:
        proven = "Nothing is proven, and nothing is shown: the check stopped at the first line."
    elif result.keyed:
        proven = (
            f"Lines 1 to {line - 1} verify with the key: they were written by a holder of "
            "the key, in this order, and are shown below. Nothing after them is shown."
        )
    else:
        proven = (
            f"Lines 1 to {line - 1} form a consistent chain and are shown below; unkeyed, "
            "they prove only that no single record among them was edited alone. Nothing "
            "after them is shown."
        )
    if result.status == TORN:
        return (
            '<section class="banner torn" id="verdict" data-state="torn-tail">'
            f'<p class="verdict">&#9888; TORN TAIL at line {line} (byte {result.offset}): '
            "the last write was cut short</p>"
            f"<p>{proven}</p><p>The last line has no newline: {_cell(result.reason)}. It "
            "is not read and is no record. Writers refuse this log until "
            "<code>skillguard audit repair</code> moves those bytes to a file beside it "
            "and records that it did.</p>"
            f"{facts}</section>"
        )
    # Stopped at a line (not at the end, short of an expected count): nothing after it
    # was read.
    after = (
        f"<p>Nothing after line {line} (byte {result.offset}) was read: nothing after the "
        "first bad line is verified.</p>"
        if result.line == result.records and result.offset is not None
        else ""
    )
    return (
        '<section class="banner tampered" id="verdict" data-state="tampered">'
        f'<p class="verdict">&#10006; TAMPERED at line {line}: {_cell(result.reason)}</p>'
        f"<p>{proven}</p>{after}{facts}</section>"
    )


def _page(result: Verification, collected: _Collector, expected_log_id: str | None) -> str:
    from . import __version__  # noqa: PLC0415 - the package imports this module

    filters = [
        f"{name} {_cell(value)}"
        for name, value in (
            ("agent", collected.agent),
            ("since", collected.since),
            ("until (before)", collected.until),
        )
        if value is not None
    ]
    shown_body = result.intact or (
        result.status not in {NEEDS_KEY, WRONG_KEY} and result.records > 1
    )
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">',
        '<meta name="referrer" content="no-referrer">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>skillguard audit report</title>",
        f"<style>{_STYLE}</style></head><body>",
        "<h1>skillguard audit report</h1>",
        _banner(result, expected_log_id),
    ]
    if shown_body:
        # The times are the log's words inside the page's sentence: set apart as code,
        # so that a forged time cannot read as the page's own (T116).
        span = (
            f"from <code>{_cell(collected.first_time)}</code> to "
            f"<code>{_cell(collected.last_time)}</code>"
            if collected.total
            else "none"
        )
        parts.append(
            f'<p id="scope">{collected.total} records shown ({span})'
            f"{'; filtered by ' + ', '.join(filters) if filters else ''}. "
            "Times are those the writer's clock gave.</p>"
        )
        parts.append('<h2 id="timeline">Timeline of decisions per agent</h2>')
        parts.append(
            '<p class="note">Left to right in log order; each mark is one or more records '
            "(a larger mark, more of them). Hover a mark for its count and times. Each "
            "agent's lane is labelled with its name in quotes; the lanes in italics, last, "
            "gather the records that name no agent and the agents that came after the "
            f"first {MAX_LANES - 1} lanes were taken.</p>"
        )
        parts.append(_legend())
        parts.append(_timeline_svg(collected.timeline))
        parts.append('<h2 id="counts">Counts</h2><div class="counts">')
        parts.extend(
            _counts_table(title, counts)
            for title, counts in (
                ("decision", collected.by_decision),
                ("event", collected.by_event),
                ("agent", collected.by_agent),
                ("skill", collected.by_skill),
            )
        )
        parts.append("</div>")
        parts.append('<input id="filter" type="search" placeholder="Filter the rows" hidden>')
        tables = collected.tables
        parts.append(_records_table("Denials", "denials", tables["denials"], _DENIAL_COLUMNS))
        parts.append(
            _records_table("Approvals", "approvals", tables["approvals"], _APPROVAL_COLUMNS)
        )
        parts.append(
            _records_table(
                "Shadowing refusals", "shadowing", tables["shadowing"], _SHADOWING_COLUMNS
            )
        )
        if tables["selections"].total:
            parts.append(
                _records_table("Selections", "selections", tables["selections"], _SELECTION_COLUMNS)
            )
    parts.append(
        f'<p class="note">Written by skillguard {html.escape(__version__)}. Every value '
        "from the log is escaped; hidden characters are shown as [U+XXXX]. This page loads "
        "nothing from the network.</p>"
    )
    parts.append(f"<script>{_SCRIPT}</script></body></html>\n")
    return "\n".join(parts)


def _until(until: object) -> str | None:
    if until is None:
        return None
    try:
        return parse_since(until)
    except SkillUsageError:
        raise SkillUsageError("bad_argument", "until is not an ISO 8601 time") from None


def render_audit_report(
    lines: Iterable[str | bytes],
    *,
    key: bytes | None = None,
    expected_records: int | None = None,
    expected_log_id: str | None = None,
    agent: str | None = None,
    since: str | None = None,
    until: str | None = None,
) -> tuple[Verification, str]:
    """Check an audit log's chain and render it as one self-contained HTML page.

    *lines*, *key*, *expected_records* and *expected_log_id* are as for
    ``verify_records``; the returned ``Verification`` is the one it would give. The page
    says first whether the chain verified, then shows the records before the first bad
    line (none for a keyed log checked without its key or with another key): a timeline
    per agent, counts by decision, event, agent and skill, and the denials, approvals,
    shadowing refusals and selections. *agent*, *since* and *until* (ISO 8601; *until*
    excluded) narrow what is shown; the chain is always checked whole.

    Streams *lines* once; memory and page size are bounded whatever their number. Never
    raises on the content of *lines*; raises ``SkillUsageError`` for bad arguments.
    """
    checker = _checker(lines, key, expected_records, expected_log_id)
    if agent is not None and not isinstance(agent, str):
        raise SkillUsageError("bad_argument", "agent must be a str")
    collected = _Collector(agent, None if since is None else parse_since(since), _until(until))
    # Nothing after the first bad line is read, as ``audit verify`` reads nothing after
    # it: counting the rest a line at a time made a log of newlines cost seconds per
    # megabyte to report on (T190).
    result = (
        checker.run(lines, lambda record: collected.add(checker.count, record)) or checker.finish()
    )
    return result, _page(result, collected, expected_log_id)
