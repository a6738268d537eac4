"""The audit report's markup, drawn from what ``_audit.report_data`` gathered.

Rules (threat-model.md T95, T97, T116):

* The log is hostile input. Every string that came from it reaches the page through
  ``_cell`` only: bounded (``MAX_CELL_CHARS``), every hidden character, control and bidi
  override shown as ``[U+XXXX]`` (``_core.text.terminal_line``), then HTML-escaped,
  quotes included. Markup is written from constants and from numbers the report counted
  itself; nothing from the log is ever placed in a tag name, an attribute name, an
  element count or a URL.
* What the page adds can never be mistaken for what the log says (T116): an agent's
  lane label is always its name in quotes (numbered after the quote when two would read
  the same), while the catch-all lanes come last, in italics, unquoted. The page's own
  rows of a count table are one cell across its foot. No two values read the same:
  ``_cell`` also reveals a "[U+" the value spells itself and the blanks a page would not
  show (``_shown``).
* Kinds of decision differ by shape as well as colour on the timeline.
"""

from __future__ import annotations

import html
import re
from collections import Counter
from typing import TYPE_CHECKING, Final

from skillguard._audit.counts import MAX_SHOWN_NAMES, rest_line, shown_table, span
from skillguard._audit.report_data import (
    _AGENT_LANE,
    _APPROVAL,
    _CATCH_ALL_LABELS,
    _DENIAL,
    _GRANT,
    _KINDS,
    MAX_CELL_CHARS,
)
from skillguard._core.text import terminal_line

if TYPE_CHECKING:
    from skillguard._audit.report_data import _Counts, _Rows, _Timeline

__all__: list[str] = []


# Shown per count table, largest first; the rest are summed in one row.
_SHOWN_COUNTS = MAX_SHOWN_NAMES


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


def _records_table(
    title: str, anchor: str, rows: _Rows, columns: tuple[str, ...], verified: int | None = None
) -> str:
    """One per-record table; *verified*: the log stopped verifying after that many
    lines, and the table covers them only (its title says so, and so does "none")."""
    scope = "" if verified is None else f" in lines 1-{verified}"
    head = f'<h2 id="{anchor}">{title}{scope} ({rows.total})</h2>'
    if not rows.total:
        if verified is not None:
            return head + (
                f'<p class="note">None in lines 1-{verified}, the part of the log that '
                "verified. Nothing after it is verified.</p>"
            )
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
