"""The audit report page (``_report.py``), read back with the standard library's HTML
parser: what a browser would build from it, without a browser (those are in
``test_report_browser.py``)."""

from __future__ import annotations

import base64
import hashlib
import os
import re
import stat
from html import unescape
from html.parser import HTMLParser
from typing import TYPE_CHECKING

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillguard import SkillUsageError
from skillguard._audit.record import canonical
from skillguard._audit.report_data import _CATCH_ALL_LABELS, _KINDS
from skillguard._audit.report_html import _LABEL_CHARS, _label
from skillguard._cli.main import main
from skillguard._core.text import find_hidden
from skillguard.audit import AuditLog, Auditor, render_audit_report
from tests.audit_logs import HOSTILE, LOG_ID, forged_lines, swarm_records
from tests.steps import Meter, grows_linearly, meter_module, python_steps

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from skillguard.audit import Verification

KEY = b"report key"
_REFUSED_IN_TEXT = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b\u202a-\u202e\u2066-\u2069]")


class Page(HTMLParser):
    """Every start tag with its attributes, the text, and the contents of each
    ``script`` and ``style`` element."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, tuple[tuple[str, str | None], ...]]] = []
        self.text: list[str] = []
        self.scripts: list[str] = []
        self.styles: list[str] = []
        self._inside: str | None = None
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, tuple(attrs)))
        if tag in {"script", "style"}:
            self._inside = tag

    def handle_endtag(self, tag: str) -> None:
        if tag == self._inside:
            self._inside = None

    def handle_data(self, data: str) -> None:
        if self._inside == "script":
            self.scripts.append(data)
        elif self._inside == "style":
            self.styles.append(data)
        else:
            self.text.append(data)

    def attr(self, tag: str, name: str) -> list[str | None]:
        return [dict(attrs).get(name) for t, attrs in self.tags if t == tag]

    @property
    def all_text(self) -> str:
        return "".join(self.text)

    def state(self) -> str | None:
        states = [dict(attrs).get("data-state") for tag, attrs in self.tags if tag == "section"]
        assert len(states) == 1
        return states[0]


def report(
    records: list[dict[str, object]], *, log_key: bytes | None = None, **options: object
) -> tuple[Verification, Page, str]:
    result, page = render_audit_report(
        forged_lines(records, key=log_key),
        **options,  # type: ignore[arg-type]
    )
    return result, Page(page), page


# -- T95: no markup, no script, from the log ------------------------------------------


@pytest.mark.parametrize("payload", HOSTILE)
def test_t95_log_content_creates_no_element(payload: str) -> None:
    """The page of a hostile log has exactly the elements and attributes of the page of
    a plain log of the same shape: nothing in it came from the log's values."""
    _, hostile, _ = report(swarm_records(30, text=payload))
    _, plain, _ = report(swarm_records(30, text="plain"))
    assert hostile.tags == plain.tags
    assert hostile.scripts == plain.scripts
    assert hostile.styles == plain.styles


def test_t95_hostile_text_is_shown_as_text() -> None:
    _, page, raw = report(swarm_records(12, text=HOSTILE[0]))
    assert '<script>document.title="pwned"</script> agent 0' in page.all_text
    assert "&lt;script&gt;document.title=&quot;pwned&quot;&lt;/script&gt;" in raw
    assert raw.count("<script>") == 1  # this module's own filter script
    assert [tag for tag, _ in page.tags].count("script") == 1


def test_t95_no_event_handler_or_link_attribute_exists() -> None:
    for payload in HOSTILE:
        _, page, _ = report(swarm_records(12, text=payload))
        names = {name for _, attrs in page.tags for name, _ in attrs}
        assert not {name for name in names if name.startswith("on")}
        assert not names & {"href", "src", "srcset", "action", "formaction", "xlink:href", "style"}


def test_t95_the_one_script_and_style_are_this_modules_own() -> None:
    _, page, _ = report(swarm_records(6, text=HOSTILE[5]))
    assert len(page.scripts) == 1
    assert "innerHTML" not in page.scripts[0]
    assert "textContent" in page.scripts[0]


# -- T96: the page loads nothing ------------------------------------------------------


def _hash_source(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def test_t96_the_page_loads_nothing_and_allows_only_its_own_code() -> None:
    _, page, raw = report(swarm_records(12, text="https://example.org/x.js"))
    first = page.tags[:4]
    assert [tag for tag, _ in first] == ["html", "head", "meta", "meta"]
    csp = dict(first[3][1])
    assert csp["http-equiv"] == "Content-Security-Policy"
    policy = str(csp["content"])
    assert policy.startswith("default-src 'none'; ")
    assert f"style-src {_hash_source(page.styles[0])};" in policy
    assert f"script-src {_hash_source(page.scripts[0])};" in policy
    assert "base-uri 'none'" in policy
    assert "form-action 'none'" in policy
    # The log's URL is text only; nothing in the markup, style or script names one.
    assert "https://example.org/x.js" in page.all_text
    assert not any(
        re.search(r"(?i)(https?:|//|url\(|@import|data:)", value or "")
        for _, attrs in page.tags
        for _, value in attrs
    )
    assert not re.search(r"(?i)(https?:|url\(|@import)", page.styles[0] + page.scripts[0])
    assert "xmlns" not in raw


# -- T97: nothing hidden or reordered -------------------------------------------------


@pytest.mark.parametrize("payload", HOSTILE[3:])
def test_t97_hidden_and_reordering_characters_are_shown(payload: str) -> None:
    _, page, raw = report(swarm_records(12, text=payload))
    assert find_hidden(raw) is None
    assert not _REFUSED_IN_TEXT.search(page.all_text.replace("\n", ""))
    if "\u202e" in payload:
        assert "[U+202E]evil[U+202C] [U+2066]isolate[U+2069] agent 0" in page.all_text
    if "\x1b" in payload:
        assert "[U+001B][31mred[U+0007]" in page.all_text


def test_t97_a_newline_in_a_value_cannot_start_a_row_of_its_own() -> None:
    _, page, _ = report(swarm_records(12, text="a\nb"))
    assert "a[U+000A]b agent 0" in page.all_text


# -- T98: the verdict comes first and decides what is shown ---------------------------


def test_t98_an_intact_keyed_log() -> None:
    result, page, _ = report(swarm_records(12), log_key=KEY, key=KEY)
    assert result.intact
    assert page.state() == "intact-keyed"
    assert "VERIFIED, keyed" in page.all_text
    assert LOG_ID in page.all_text
    assert "12 records shown" in page.all_text


def test_t98_an_intact_unkeyed_log_says_it_proves_less() -> None:
    result, page, _ = report(swarm_records(12))
    assert result.intact
    assert page.state() == "intact-unkeyed"
    assert "UNKEYED" in page.all_text
    assert "anyone who can write the file can rewrite the whole chain" in page.all_text


@pytest.mark.parametrize(("key", "state"), [(None, "needs-key"), (b"another key", "wrong-key")])
def test_t98_a_keyed_log_without_its_key_shows_no_record(key: bytes | None, state: str) -> None:
    _, page, _ = report(swarm_records(12, text="secret-ish"), log_key=KEY, key=key)
    assert page.state() == state
    assert "NOT VERIFIED" in page.all_text
    assert "secret-ish" not in page.all_text
    assert not page.attr("table", "class")
    assert not page.attr("svg", "role")


def test_t98_a_tampered_log_names_the_line_and_shows_only_what_came_before() -> None:
    lines = forged_lines(swarm_records(12, text="kept"))
    lines[5] = lines[5].replace(b"kept", b"KEPT")
    result, raw = render_audit_report(lines)
    page = Page(raw)
    assert (result.intact, result.line) == (False, 6)
    assert page.state() == "tampered"
    assert "TAMPERED at line 6: edited: its hash does not match" in page.all_text
    assert "Lines 1 to 5 form a consistent chain" in page.all_text
    offset = sum(len(line) for line in lines[:5])
    assert f"Nothing after line 6 (byte {offset}) was read" in page.all_text
    assert "4 records shown" in page.all_text
    # What the bad line claims is shown in its own block, marked unverified, and
    # nowhere else: no table or count holds it.
    claim = raw.split('<div id="unverified" data-line="6">', 1)[1].split("</div>", 1)[0]
    assert "Line 6: NOT VERIFIED" in claim
    assert "KEPT agent 1" in claim
    assert "KEPT" not in raw.replace(claim, "")
    row_lines = {int(cell) for cell in re.findall(r'<td class="n">(\d+)</td><td class="t">', raw)}
    assert row_lines
    assert max(row_lines) < 6


def test_t98_a_tampered_keyed_log_says_what_its_first_lines_prove() -> None:
    lines = forged_lines(swarm_records(6), key=KEY)
    del lines[3]
    result, raw = render_audit_report(lines, key=KEY)
    assert result.line == 4
    assert "Lines 1 to 3 verify with the key" in Page(raw).all_text


def test_t98_a_deleted_tail_is_reported_with_the_expected_count() -> None:
    result, page, _ = report(swarm_records(6), expected_records=9)
    assert result.line == 8
    assert page.state() == "tampered"
    assert "2 records missing at the end" in page.all_text
    assert "6 records shown" in page.all_text


def test_t98_another_log_is_refused_by_its_id() -> None:
    result, page, _ = report(swarm_records(3), expected_log_id="f" * 32)
    assert result.line == 1
    assert page.state() == "tampered"
    assert "Nothing is proven, and nothing is shown" in page.all_text
    assert not page.attr("table", "class")
    _, same, _ = report(swarm_records(3), expected_log_id=LOG_ID)
    assert "The log id is the one expected." in same.all_text


def test_t98_an_unkeyed_log_checked_with_a_key_shows_nothing() -> None:
    result, page, _ = report(swarm_records(6, text="unproven"), key=KEY)
    assert (result.line, result.reason) == (1, "written without a key (or rewritten without one)")
    assert page.state() == "tampered"
    assert "TAMPERED at line 1: written without a key" in page.all_text
    assert "unproven" not in page.all_text


@pytest.mark.parametrize("lines", [[], [b"not json\n"], [b"\n"]])
def test_t98_what_is_not_a_log_shows_nothing(lines: list[bytes]) -> None:
    result, raw = render_audit_report(lines)
    page = Page(raw)
    assert not result.intact
    assert page.state() == "not-a-log"
    assert "NOT AN AUDIT LOG" in page.all_text
    assert "Nothing is proven" in page.all_text


# -- T99: bounded whatever the log ----------------------------------------------------


def test_t99_tables_keep_the_latest_rows_and_say_how_many_they_left_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("skillguard._audit.report_data.MAX_TABLE_ROWS", 5)
    records: list[dict[str, object]] = [
        {"time": "2026-01-01T00:00:00Z", "event": "load_denied", "decision": "deny", "agent": "a"}
        for _ in range(6)
    ]
    _, page, raw = report(records[:5])
    assert "left out" not in raw
    assert "Denials (5)" in page.all_text
    _, page, raw = report(records)
    assert "The 1 earlier rows are left out of this table" in page.all_text
    assert re.findall(r'<td class="n">(\d+)</td><td class="t">', raw) == [
        "3",
        "4",
        "5",
        "6",
        "7",
    ]
    assert '<td class="n">6</td>' in raw  # the counts cover every record


def test_t99_count_tables_keep_a_bounded_number_of_names(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("skillguard._audit.counts.MAX_COUNTED_NAMES", 50)
    records: list[dict[str, object]] = [
        {"time": "2026-01-01T00:00:00Z", "event": "load_granted", "skill": f"s{i}"}
        for i in range(52)
    ]
    _, page, raw = report(records)
    # 50 names kept, 40 shown: more than 10 others, whose records are known to a range.
    assert "and more than 10 other names: 10 to 12 records" in page.all_text
    assert "over 50 names: a count shown as a range is the least and the most" in raw
    # The two names that came last took the places of the two first, whose one record
    # each they may hold: each holds 1 to 2.
    assert '<td>s50</td><td class="n">1 to 2</td>' in raw
    assert '<td>s51</td><td class="n">1 to 2</td>' in raw
    assert "52 records shown" in page.all_text


def test_t99_the_timeline_has_bounded_lanes_and_bins() -> None:
    records: list[dict[str, object]] = [
        {
            "time": f"2026-01-01T00:{i // 60 % 60:02d}:{i % 60:02d}Z",
            "event": "load_denied",
            "decision": "deny",
            "agent": f"agent-{i}",
        }
        for i in range(300)
    ]
    _, page, raw = report(records)
    svg = raw[raw.index('<svg role="img"') : raw.index("</svg>", raw.index('<svg role="img"'))]
    labels = re.findall(r"<text x=\"6\"[^>]*><title>([^<]*)</title>", svg)
    assert len(labels) == 24
    assert labels[-1] == "(every later agent)"
    marks = re.findall(r"<g><title>[^:]*: denials (\d+),", svg)
    assert sum(int(count) for count in marks) == 300  # merged, never lost
    assert len(set(re.findall(r'cx="|M(\d+\.\d),', svg))) <= 64
    assert "300 records shown" in page.all_text


def _lanes(raw: str) -> list[tuple[bool, str, str, list[str]]]:
    """Each timeline lane: whether its label is in italics, the label as shown, its
    title, and the titles of its marks."""
    svg = raw[raw.index('<svg role="img"') : raw.index("</svg>", raw.index('<svg role="img"'))]
    lanes = []
    for part in svg.split('<rect x="0" ')[1:]:
        label = re.search(r'<text x="6"([^>]*)><title>([^<]*)</title>([^<]*)</text>', part)
        assert label is not None
        marks = re.findall(r"<g><title>([^<]*)</title>", part)
        italic = 'font-style="italic"' in label.group(1)
        lanes.append((italic, unescape(label.group(3)), unescape(label.group(2)), marks))
    return lanes


@pytest.mark.parametrize(
    "forged", ["(records naming no agent)", "(no agent)", "(every later agent)", '"', ""]
)
def test_t116_an_agent_named_like_a_catch_all_lane_gets_a_lane_of_its_own(forged: str) -> None:
    records: list[dict[str, object]] = [
        {"time": "t1", "event": "load_denied", "decision": "deny", "skill": "s"},
        {"time": "t2", "event": "load_granted", "decision": "allow", "agent": forged},
        {"time": "t3", "event": "load_granted", "decision": "allow", "agent": "clerk"},
    ]
    _, _, raw = report(records)
    lanes = _lanes(raw)
    if forged == "":
        # An empty agent names no agent: its record joins the unattributed lane.
        assert [lane[:2] for lane in lanes] == [
            (False, '"clerk"'),
            (True, "(records naming no agent)"),
        ]
        return
    assert [lane[:3] for lane in lanes] == [
        (False, f'"{forged}"', f'agent "{forged}"'),
        (False, '"clerk"', 'agent "clerk"'),
        (True, "(records naming no agent)", "(records naming no agent)"),
    ]
    # Each lane holds its own marks: the forged agent's grant is not the unattributed
    # denial, and the reverse.
    assert [len(lane[3]) for lane in lanes] == [1, 1, 1]
    assert unescape(lanes[0][3][0]).startswith(f'agent "{forged}": grants 1,')
    assert lanes[2][3][0].startswith("(records naming no agent): denials 1,")


def test_t116_an_agent_named_like_the_overflow_lane_is_not_in_it() -> None:
    records: list[dict[str, object]] = [
        {"time": "t", "event": "load_denied", "decision": "deny", "agent": f"agent-{i}"}
        for i in range(22)
    ]
    records.append({"time": "t", "event": "load_denied", "decision": "deny"})
    records.append(
        {"time": "t", "event": "load_granted", "decision": "allow", "agent": "(every later agent)"}
    )
    records.append({"time": "t", "event": "load_denied", "decision": "deny", "agent": "late"})
    lanes = _lanes(report(records)[2])
    assert len(lanes) == 24
    assert lanes[21][:2] == (False, '"agent-21"')
    assert lanes[22][:2] == (True, "(records naming no agent)")
    assert lanes[23][:2] == (True, "(every later agent)")
    # The agent named like the overflow lane came after the 23 lanes: it is in the
    # overflow lane, counted with "late", and never shown as a lane of its own.
    assert lanes[23][3] == [
        "(every later agent): grants 1, t to t",
        "(every later agent): denials 1, t to t",
    ]


def test_t116_agents_whose_labels_read_the_same_are_numbered() -> None:
    long_a = "orchestrator-" + "x" * 40 + "-a-" + "y" * 20 + "-primary"
    long_b = "orchestrator-" + "x" * 40 + "-b-" + "y" * 20 + "-primary"
    spelled, raw_char = "a[U+202E]b", "a\u202eb"
    records: list[dict[str, object]] = [
        {"time": "t", "event": "load_granted", "decision": "allow", "agent": name}
        for name in [long_a, "clerk", long_b, spelled, raw_char]
    ]
    lanes = _lanes(report(records)[2])
    labels = [label for _, label, _, _ in lanes]
    titles = [title for _, _, title, _ in lanes]
    assert labels[1] == '"clerk"'
    assert labels[0].endswith('" #1')
    assert labels[2].endswith('" #2')
    assert labels[0][:-3] == labels[2][:-3]  # the same shortened name, told apart
    # A name that spells a revealed character does not read like one that holds it.
    assert (labels[3], labels[4]) == ('"a[U+005B]U+202E]b"', '"a[U+202E]b"')
    assert (titles[3], titles[4]) == ('agent "a[U+005B]U+202E]b"', 'agent "a[U+202E]b"')
    assert len(set(labels)) == len(set(titles)) == 5
    assert all(len(label) <= _LABEL_CHARS for label in labels)


def test_t116_names_that_differ_only_in_blanks_never_read_the_same() -> None:
    names = ["clerk", "clerk ", " clerk", "clerk\u00a0", "cl  erk", "cl erk", "cl\u3000erk"]
    records: list[dict[str, object]] = [
        {"time": "t", "event": "load_granted", "decision": "allow", "agent": name} for name in names
    ]
    _, page, raw = report(records)
    labels = [label for _, label, _, _ in _lanes(raw)]
    assert labels == [
        '"clerk"',
        '"clerk[U+0020]"',
        '"[U+0020]clerk"',
        '"clerk[U+00A0]"',
        '"cl  erk"',
        '"cl erk"',
        '"cl[U+3000]erk"',
    ]
    counted = re.findall(r'<tr><td>([^<]*)</td><td class="n">1</td></tr>', raw)
    assert sorted(unescape(cell) for cell in counted[-7:]) == sorted(
        label.strip('"') for label in labels
    )
    # Runs of inner spaces are kept by the page (tables and the timeline's labels).
    [style] = page.styles
    assert "td{overflow-wrap:break-word;max-width:420px;white-space:pre-wrap}" in style
    assert "svg text{white-space:pre}" in style


def test_t116_a_cut_name_is_shown_as_cut() -> None:
    # Names over the cap are forged (the Auditor writes at most 259 characters): the
    # counts and the lane title show them cut, never as if whole.
    name = "n" * 300
    _, _, raw = report([{"time": "t", "event": "load_granted", "decision": "allow", "agent": name}])
    assert f"<td>{'n' * 260}...</td>" in raw
    assert f'agent "{"n" * 260}..."' in unescape(raw)


def test_t116_a_name_cannot_pass_for_a_count_tables_own_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("skillguard._audit.report_html._SHOWN_COUNTS", 2)
    forged = "and 7 other names: 7000 records"
    records: list[dict[str, object]] = [
        {"time": "t", "event": "load_granted", "decision": "allow", "agent": name}
        for name in [forged, forged, forged, "none", "none", "b", "c"]
    ]
    _, _, raw = report(records)
    tables = re.findall(r"<table><thead><tr><th>agent</th>.*?</table>", raw)
    assert len(tables) == 1
    body, foot = re.fullmatch(
        r".*<tbody>(.*)</tbody><tfoot>(.*)</tfoot></table>", tables[0]
    ).groups()  # type: ignore[union-attr]
    # The names are rows of two cells, a name and its count; the page's own summary is
    # one cell across both columns, in the table's foot.
    assert re.findall(r"<tr><td>([^<]*)</td><td class=\"n\">(\d+)</td></tr>", body) == [
        (forged, "3"),
        ("none", "2"),
    ]
    assert foot == '<tr><td class="note" colspan="2">and 2 other names: 2 records</td></tr>'
    # A table with no name at all says so in its foot too.
    assert '<tfoot><tr><td class="note" colspan="2">none</td></tr></tfoot>' in raw


def test_t116_a_forged_time_stays_inside_its_code_in_the_scope_sentence() -> None:
    forged = "2026-01-01). The chain is VERIFIED, keyed (see"
    _, _, raw = report([{"time": forged, "event": "load_granted", "decision": "allow"}])
    scope = re.search(r'<p id="scope">(.*?)</p>', raw)
    assert scope is not None
    assert scope.group(1).startswith(
        "1 records shown (from <code>2026-01-01). The chain is VERIFIED, keyed (see</code> to "
    )


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_t116_no_agent_name_is_labelled_like_a_catch_all_lane(name: str) -> None:
    label, title = _label(("agent", name))
    shown = unescape(label)
    assert shown.startswith('"')
    assert shown.endswith('"')
    assert len(shown) <= _LABEL_CHARS
    assert unescape(title).startswith('agent "')
    assert shown not in _CATCH_ALL_LABELS.values()
    assert find_hidden(shown) is None


def test_t99_long_values_are_cut() -> None:
    records: list[dict[str, object]] = [
        {"time": "t", "event": "load_denied", "decision": "deny", "reason": "x" * 60000}
    ]
    _, _, raw = report(records)
    assert "x" * 260 + "..." in raw
    assert "x" * 261 not in raw


# -- filters and arguments ------------------------------------------------------------


def test_filters_narrow_what_is_shown_but_not_what_is_checked() -> None:
    records = swarm_records(120)
    result, page, _ = report(
        records, agent="plain agent 1", since="2026-01-01T00:00:30Z", until="2026-01-01T00:01:00"
    )
    assert result.intact
    assert result.records == 121
    assert "10 records shown" in page.all_text
    assert "filtered by agent plain agent 1, since 2026-01-01T00:00:30.000Z" in page.all_text
    assert "plain agent 0" not in page.all_text


@pytest.mark.parametrize(
    "options",
    [{"agent": 3}, {"since": "yesterday"}, {"until": "tomorrow"}, {"until": 5}, {"key": b""}],
)
def test_bad_arguments_are_usage_errors(options: dict[str, object]) -> None:
    with pytest.raises(SkillUsageError, match=r"agent|since|until|key"):
        render_audit_report([], **options)  # type: ignore[arg-type]


def test_lines_must_be_an_iterable_of_lines() -> None:
    with pytest.raises(SkillUsageError):
        render_audit_report("a log")


def test_an_empty_timeline_says_so() -> None:
    _, page, _ = report([{"time": "t", "event": "approval_requested"}])
    assert "No grant, approval, denial or refusal to draw." in page.all_text
    assert "Denials (0)" in page.all_text


def test_the_legend_names_every_kind() -> None:
    _, page, _ = report(swarm_records(6))
    for _, words in _KINDS:
        assert words in page.all_text
    assert "Selections" not in page.all_text


def test_selections_have_their_table_once_logged() -> None:
    _, page, _ = report(
        [{"time": "t", "event": "skill_selected", "agent": "a", "skill": "s", "reason": "r"}]
    )
    assert "Selections (1)" in page.all_text


def test_a_log_written_by_skillguard_reports_scope_and_approver(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    auditor = Auditor(AuditLog(path, key=KEY))
    auditor.emit(
        "approval_granted",
        agent="lead",
        skill="notes",
        decision="allow",
        approver="alice",
        scope="pin",
        digest="d" * 64,
    )
    auditor.emit("load_denied", agent="lead", skill="x", decision="deny", code="c", reason="r")
    result, raw = render_audit_report(path.read_bytes().splitlines(keepends=True), key=KEY)
    assert result.intact
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", raw[raw.index('id="approvals"') :])
    assert cells[cells.index("approval_granted") + 1 :][:2] == ["alice", "pin"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.binary(max_size=200), max_size=8))
def test_any_lines_give_a_page_and_never_raise(lines: list[bytes]) -> None:
    result, raw = render_audit_report([*forged_lines(swarm_records(3))[:2], *lines])
    assert Page(raw).state() is not None
    assert result.records >= 1


# -- the command line -----------------------------------------------------------------


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def write(path: Path, lines: list[bytes]) -> str:
    path.write_bytes(b"".join(lines))
    return str(path)


@pytest.mark.parametrize(
    ("log_key", "key", "code", "line", "state"),
    [
        (None, None, 0, "intact: 7 records", "intact-unkeyed"),
        (KEY, KEY, 0, "intact: 7 records", "intact-keyed"),
        (KEY, None, 3, "keyed: needs its key (--key-file)", "needs-key"),
        (KEY, b"other", 4, "wrong key: the log was keyed with another key", "wrong-key"),
    ],
)
def test_audit_report_writes_the_page_and_exits_as_verify_does(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    log_key: bytes | None,
    key: bytes | None,
    code: int,
    line: str,
    state: str,
) -> None:
    log = write(tmp_path / "audit.jsonl", forged_lines(swarm_records(6), key=log_key))
    extra: list[str] = []
    if key is not None:
        (tmp_path / "key").write_bytes(key + b"\n")
        extra = ["--key-file", str(tmp_path / "key")]
    output = tmp_path / "report.html"
    result = run(capsys, "audit", "report", log, "--output", str(output), *extra)
    assert result == (code, f"{line}; report written to {output}\n", "")
    assert Page(output.read_text()).state() == state
    assert output.stat().st_mode & 0o777 == 0o600  # the log's content, for its owner
    assert run(capsys, "audit", "verify", log, *extra)[0] == code


def test_audit_report_of_a_tampered_log(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    lines = forged_lines(swarm_records(6))
    log = write(tmp_path / "audit.jsonl", lines[:3] + lines[4:])
    output = tmp_path / "report.html"
    code, out, _ = run(
        capsys, "audit", "report", log, "--output", str(output), "--agent", "plain agent 0"
    )
    assert code == 1
    assert out.startswith("tampered: line 4: inserted, reordered or a record before it deleted;")
    assert Page(output.read_text()).state() == "tampered"


def test_audit_report_options(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    log = write(tmp_path / "audit.jsonl", forged_lines(swarm_records(6)))
    output = tmp_path / "report.html"
    code, _, _ = run(
        capsys,
        "audit",
        "report",
        log,
        "--output",
        str(output),
        "--since",
        "2026-01-01T00:00:02Z",
        "--until",
        "2026-01-01T00:00:04Z",
        "--expect-records",
        "7",
        "--expect-log-id",
        LOG_ID,
    )
    assert code == 0
    assert "2 records shown" in Page(output.read_text()).all_text


def test_t98_audit_report_never_writes_over_the_log(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    log = write(tmp_path / "audit.jsonl", forged_lines(swarm_records(2)))
    before = (tmp_path / "audit.jsonl").read_bytes()
    assert run(capsys, "audit", "report", log) == (
        2,
        "",
        "skillguard: audit report needs --output FILE\n",
    )
    (tmp_path / "link").symlink_to("audit.jsonl")
    for same in (log, str(tmp_path / "link")):
        assert run(capsys, "audit", "report", log, "--output", same) == (
            2,
            "",
            "skillguard: --output must not be the audit log itself\n",
        )
    assert (tmp_path / "audit.jsonl").read_bytes() == before


def test_audit_report_read_and_write_failures(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    log = write(tmp_path / "audit.jsonl", forged_lines(swarm_records(2)))
    output = str(tmp_path / "report.html")
    assert run(capsys, "audit", "report", str(tmp_path), "--output", output) == (
        1,
        "",
        "skillguard: the audit log cannot be read (a regular file is needed)\n",
    )
    missing = str(tmp_path / "no" / "report.html")
    assert run(capsys, "audit", "report", log, "--output", missing) == (
        1,
        "",
        "skillguard: the report cannot be written to --output\n",
    )
    code, _, err = run(capsys, "audit", "report", log, "--output", output, "--until", "later")
    assert (code, err) == (2, "skillguard: [usage/bad_argument] until is not an ISO 8601 time\n")


@settings(max_examples=80, deadline=None)
@given(st.text(alphabet=st.characters(exclude_categories=()), max_size=40))
def test_t95_any_text_in_any_field_creates_no_element(text: str) -> None:
    """Whatever a forged log holds (lone surrogates, controls, markup, bidi), its page
    has the elements and attributes of a plain log's page, and encodes as UTF-8."""
    result, raw = render_audit_report(forged_lines(swarm_records(12, text=text)))
    assert result.intact
    raw.encode("utf-8")  # what the command line writes
    assert find_hidden(raw) is None
    assert Page(raw).tags == report(swarm_records(12, text="plain"))[1].tags


# -- findings of the security review (each fails until its defect is fixed) ------------


def test_t98_a_non_finite_number_is_tampering_not_a_crash() -> None:
    """``1e999`` parses to ``inf``, which the canonical encoder then refuses with a
    ``ValueError``: a forger must get "tampered at line N", never an untyped exception
    in place of the page."""
    lines = [*forged_lines(swarm_records(2)), b'{"event":"x","n":1e999}\n']
    result, page = render_audit_report(lines)
    assert (result.status, result.line) == ("tampered", 4)
    assert Page(page).state() == "tampered"


def test_t98_audit_report_of_a_non_finite_number_writes_the_page(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    lines = [*forged_lines(swarm_records(2)), b'{"event":"x","n":-1e999}\n']
    log = write(tmp_path / "audit.jsonl", lines)
    output = tmp_path / "report.html"
    code, out, err = run(capsys, "audit", "report", log, "--output", str(output))
    assert (code, err) == (1, "")
    assert out.startswith("tampered: line 4")
    assert Page(output.read_text()).state() == "tampered"


def test_t98_audit_report_never_replaces_a_special_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """``--output /dev/null`` (run as root) replaced the device node with a regular file:
    ``write_atomic`` renames over whatever the path names. A FIFO stands in for the
    device here."""
    log = write(tmp_path / "audit.jsonl", forged_lines(swarm_records(2)))
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    code, out, _ = run(capsys, "audit", "report", log, "--output", str(fifo))
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert code != 0
    assert "report written" not in out


def test_audit_report_leaves_no_copy_of_the_log_behind_when_it_cannot_write(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """When the final rename fails (the output is a folder) the temporary file, which
    holds the whole report, stays beside it."""
    log = write(tmp_path / "audit.jsonl", forged_lines(swarm_records(2)))
    (tmp_path / "folder").mkdir()
    code, _, err = run(capsys, "audit", "report", log, "--output", str(tmp_path / "folder"))
    assert (code, err) == (1, "skillguard: the report cannot be written to --output\n")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["audit.jsonl", "folder"]


def test_t190_nothing_after_the_first_bad_line_is_read() -> None:
    # Counting the lines after it, a line at a time, made 100 MiB of newlines take
    # minutes; verify reads nothing after the first bad line, and neither does report.
    pulled = 0

    def newlines() -> Iterator[bytes]:
        nonlocal pulled
        for _ in range(100_000):
            pulled += 1
            yield b"\n"

    result, raw = render_audit_report(newlines())
    assert (result.line, result.reason) == (1, "an empty line")
    assert pulled == 2  # the bad line, and the one read ahead (is it the last?)
    assert "Nothing after line 1 (byte 0) was read" in Page(raw).all_text


# -- a run of spaces (T144) -------------------------------------------------------------


def test_t144_a_run_of_inner_spaces_costs_linear_work(monkeypatch: pytest.MonkeyPatch) -> None:
    import skillguard._audit.report_html as report

    meter = Meter()
    meter_module(monkeypatch, report, meter)

    def cost(n: int) -> int:
        meter.steps = 0
        return python_steps(lambda: report._shown("a" + " " * n + "b")) + meter.steps

    assert grows_linearly(cost, 200)
    assert report._shown("  a  b  ") == "[U+0020][U+0020]a  b[U+0020][U+0020]"


# -- the tables a reviewer needs: agent-file approvals, what was received (issue 21) ----

AGENT_FILE = ".github/agents/reviewer.md"
_AGENT_RECORDS: list[dict[str, object]] = [
    {
        "time": "2026-01-01T00:00:01.000Z",
        "event": "agent_context_served",
        "agent": "planner",
        "skill": AGENT_FILE,
        "source": "workspace",
        "decision": "allow",
        "approver": "alice",
        "scope": "once",
        "digest": "d" * 64,
        "sha256": "e" * 64,
    },
    {
        "time": "2026-01-01T00:00:02.000Z",
        "event": "load_granted",
        "agent": "coder",
        "skill": "pdf-tools",
        "source": "embedded",
        "decision": "allow",
        "sha256": "f" * 64,
    },
    {
        "time": "2026-01-01T00:00:03.000Z",
        "event": "agent_context_denied",
        "agent": "coder",
        "skill": AGENT_FILE,
        "decision": "deny",
        "code": "denied",
        "approver": "bob",
    },
]


def _section(raw: str, anchor: str) -> str:
    """The HTML of one per-record table, from its heading to the next heading."""
    return raw.split(f'<h2 id="{anchor}">', 1)[1].split("<h2", 1)[0]


def test_approvals_list_workspace_agent_files_too() -> None:
    result, raw = render_audit_report(forged_lines(_AGENT_RECORDS))
    assert result.intact
    approvals = _section(raw, "approvals")
    assert approvals.startswith("Approvals (skills and agent files) (2)</h2>")
    assert approvals.count(AGENT_FILE) == 2
    assert "alice" in approvals
    assert "bob" in approvals


def test_received_lists_what_each_agent_was_served() -> None:
    _, raw = render_audit_report(forged_lines(_AGENT_RECORDS))
    received = _section(raw, "received")
    assert received.startswith("Received: what each agent was served (2)</h2>")
    rows = Page(received).tags
    assert [tag for tag, _ in rows].count("tr") == 3  # the header and two rows
    assert "agent_context_served" in received
    assert "load_granted" in received
    assert "d" * 64 in received  # the approved snapshot's digest
    assert "f" * 64 in received  # the embedded skill's sha256
    assert "agent_context_denied" not in received


def test_a_tampered_log_titles_every_section_as_its_verified_part() -> None:
    """A page never says "Denials (0) None" of a log whose bad line may be a flipped
    denial: each section says it covers lines 1-N, and the bad line is shown apart."""
    lines = forged_lines(_AGENT_RECORDS)
    lines[3] = lines[3].replace(b'"decision":"deny"', b'"decision":"allow"')
    result, raw = render_audit_report(lines)
    assert (result.status, result.line) == ("tampered", 4)
    page = Page(raw)
    for heading in (
        "Timeline of decisions per agent in lines 1-3",
        "Counts in lines 1-3",
        "Denials in lines 1-3 (0)",
        "Approvals (skills and agent files) in lines 1-3 (1)",
        "Received: what each agent was served in lines 1-3 (2)",
        "Shadowing refusals in lines 1-3 (0)",
    ):
        assert heading in page.text, heading
    assert "None in lines 1-3, the part of the log that verified." in page.all_text
    assert "None." not in page.all_text
    claim = raw.split('<div id="unverified" data-line="4">', 1)[1].split("</div>", 1)[0]
    assert "Line 4: NOT VERIFIED" in claim
    assert "<td>decision</td><td>allow</td>" in claim


@pytest.mark.parametrize("payload", HOSTILE)
def test_t95_the_unverified_line_is_escaped(payload: str) -> None:
    lines = forged_lines(swarm_records(4))
    lines[3] = canonical({"event": payload, "agent": payload, "seq": 4}) + b"\n"
    result, raw = render_audit_report(lines)
    assert result.line == 4
    claim = raw.split('<div id="unverified" data-line="4">', 1)[1].split("</div>", 1)[0]
    assert "<script" not in claim
    assert "<img" not in claim
    assert "<svg" not in claim
    assert "\u202e" not in claim
    assert "\x1b" not in claim
    garbage = forged_lines(swarm_records(4))
    garbage[3] = payload.encode("utf-8", "backslashreplace") + b"\n"
    _, raw = render_audit_report(garbage)
    claim = raw.split('<div id="unverified" data-line="4">', 1)[1].split("</div>", 1)[0]
    assert "<script" not in claim
    assert "<img" not in claim
