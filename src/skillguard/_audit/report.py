"""The audit report: one self-contained HTML page of an audit log, for people to review.

Rules (threat-model.md T95-T99, T116):

* The log is hostile input: every string from it reaches the page through ``_cell``
  only, and markup is written from constants and counted numbers alone
  (``_audit.report_html``); what the page adds can never be mistaken for what the log
  says, and the log's times in the page's sentences are set as code (T116).
* The page loads nothing: no URL of any kind is written, and a Content-Security-Policy
  ``meta`` tag (``default-src 'none'``) allows exactly this module's one style sheet and
  one filter script, by hash. The page reads fully with scripts disabled: the script
  only shows a filter box that is otherwise hidden.
* Verification comes first and decides what is shown. Records are shown only up to the
  first bad line, since nothing after it is proven, and nothing after it is read (as
  ``audit verify`` reads nothing after it: a log that breaks early costs nothing to
  report on, T190). A torn tail (T191) is said as such, with what mends it. A keyed log
  checked without its key (or with another key) shows no record at all.
* Memory and page size are bounded whatever the log's size (``_audit.report_data``).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import html
from collections import deque
from typing import TYPE_CHECKING, Final

from skillguard._audit.record import _MAX_RECORD_DEPTH, MAX_RECORD_BYTES, _load_json
from skillguard._audit.report_data import (
    _APPROVAL_COLUMNS,
    _DENIAL_COLUMNS,
    _RECEIVED_COLUMNS,
    _SELECTION_COLUMNS,
    _SHADOWING_COLUMNS,
    MAX_LANES,
    _Collector,
)
from skillguard._audit.report_html import (
    _cell,
    _counts_table,
    _legend,
    _records_table,
    _timeline_svg,
)
from skillguard._audit.summary import parse_since
from skillguard._audit.verify import (
    INTACT,
    NEEDS_KEY,
    NOT_A_LOG,
    TAMPERED,
    TORN,
    WRONG_KEY,
    Verification,
    _checker,
)
from skillguard._core.errors import SkillUsageError

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

__all__ = ["render_audit_report"]

# The fields of the unverified bad line shown (a record has 20 at most).
_MAX_CLAIM_FIELDS: Final = 40


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
    if result.status == NOT_A_LOG:
        return (
            '<section class="banner tampered" id="verdict" data-state="not-a-log">'
            f'<p class="verdict">&#10006; NOT AN AUDIT LOG: {_cell(result.reason)}</p>'
            "<p>Its first line is no <code>log_created</code> record: a file that is not "
            f"a skillguard audit log, or one whose first line was replaced. {proven}</p>"
            f"{after}{facts}</section>"
        )
    return (
        '<section class="banner tampered" id="verdict" data-state="tampered">'
        f'<p class="verdict">&#10006; TAMPERED at line {line}: {_cell(result.reason)}</p>'
        f"<p>{proven}</p>{after}{facts}</section>"
    )


def _claim(line: int, raw: object) -> str:
    """What the first bad line says, escaped and marked as unverified: a reviewer sees
    what it claims (a flipped denial?) and that nothing vouches for it."""
    record: object = None
    text = raw.decode("ascii", "replace") if isinstance(raw, bytes) else str(raw)
    text = text.removesuffix("\n")
    with contextlib.suppress(ValueError):
        record = _load_json(text, max_chars=MAX_RECORD_BYTES, max_depth=_MAX_RECORD_DEPTH)
    if isinstance(record, dict) and record:
        rows = "".join(
            f"<tr><td>{_cell(name)}</td><td>{_cell(value)}</td></tr>"
            for name, value in list(record.items())[:_MAX_CLAIM_FIELDS]
        )
        shown = f'<table class="records unverified"><tbody>{rows}</tbody></table>'
    else:
        shown = f'<pre class="unverified">{_cell(text)}</pre>'
    return (
        f'<div id="unverified" data-line="{line}"><h2>Line {line}: NOT VERIFIED</h2>'
        '<p class="note">What the first bad line claims, as written and escaped. It did '
        "not verify: it may be an edit, a forgery or a record whose fields were changed "
        f"(a denial turned into a grant). Nothing in it is counted above or below.</p>"
        f"{shown}</div>"
    )


def _page(
    result: Verification,
    collected: _Collector,
    expected_log_id: str | None,
    bad_line: object = None,
) -> str:
    from skillguard._core.version import __version__  # noqa: PLC0415 - the package imports this module

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
    # A log that stopped verifying: every section covers lines 1-N only, and says so.
    verified = None if result.intact else max(0, (result.line or 1) - 1)
    scope = "" if verified is None else f" in lines 1-{verified}"
    if shown_body and bad_line is not None and result.line is not None:
        parts.append(_claim(result.line, bad_line))
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
        parts.append(f'<h2 id="timeline">Timeline of decisions per agent{scope}</h2>')
        parts.append(
            '<p class="note">Left to right in log order; each mark is one or more records '
            "(a larger mark, more of them). Hover a mark for its count and times. Each "
            "agent's lane is labelled with its name in quotes; the lanes in italics, last, "
            "gather the records that name no agent and the agents that came after the "
            f"first {MAX_LANES - 1} lanes were taken.</p>"
        )
        parts.append(_legend())
        parts.append(_timeline_svg(collected.timeline))
        parts.append(f'<h2 id="counts">Counts{scope}</h2><div class="counts">')
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
        shown_tables = [
            ("Denials", "denials", _DENIAL_COLUMNS),
            ("Approvals (skills and agent files)", "approvals", _APPROVAL_COLUMNS),
            ("Received: what each agent was served", "received", _RECEIVED_COLUMNS),
            ("Shadowing refusals", "shadowing", _SHADOWING_COLUMNS),
        ]
        if tables["selections"].total:
            shown_tables.append(("Selections", "selections", _SELECTION_COLUMNS))
        parts.extend(
            _records_table(title, anchor, tables[anchor], columns, verified)
            for title, anchor, columns in shown_tables
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
    # The last two lines pulled (one is read ahead): the first bad one is among them.
    pulled: deque[tuple[int, object]] = deque(maxlen=2)

    def remembered() -> Iterator[object]:
        for number, raw in enumerate(lines, start=1):
            pulled.append((number, raw))
            yield raw

    result = (
        checker.run(remembered(), lambda record: collected.add(checker.count, record))
        or checker.finish()
    )
    bad_line = None
    if result.status == TAMPERED:
        bad_line = next((raw for number, raw in pulled if number == result.line), None)
    return result, _page(result, collected, expected_log_id, bad_line)
