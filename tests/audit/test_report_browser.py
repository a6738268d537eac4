"""The audit report opened in a real headless browser (Chromium).

Run with ``tox -e browser`` (or ``pytest -m browser``); the default test command leaves
these out to stay fast. Without a Chromium they skip, unless
``SKILLGUARD_REQUIRE_BROWSER`` is set (as ``tox -e browser`` does), where they fail: a
browser check that silently checked nothing would prove nothing. ``SKILLGUARD_CHROMIUM``
names the browser when it is not ``chromium`` on the path.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from typing import TYPE_CHECKING, Any

import pytest

from skillguard.audit import render_audit_report
from tests.audit_logs import HOSTILE, forged_lines, swarm_records

from .test_report import _AGENT_RECORDS, AGENT_FILE, Page

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.browser

KEY = b"browser key"
_PNG = b"\x89PNG\r\n\x1a\n"


def _chromium() -> str:
    named = os.environ.get("SKILLGUARD_CHROMIUM")
    found = named or next(
        (
            path
            for name in ("chromium", "chromium-browser", "google-chrome")
            if (path := shutil.which(name))
        ),
        None,
    )
    if found is None:
        if os.environ.get("SKILLGUARD_REQUIRE_BROWSER"):
            pytest.fail("no Chromium found, and SKILLGUARD_REQUIRE_BROWSER is set")
        pytest.skip("no Chromium found (apt-get install chromium)")
    return found


def browse(tmp_path: Path, page: str, *flags: str) -> tuple[str, str]:
    """The DOM Chromium built from *page* after its scripts ran, and its log."""
    html_file = tmp_path / "report.html"
    html_file.write_text(page, encoding="utf-8")
    done = subprocess.run(
        [
            _chromium(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            # A profile of its own: a second Chromium on a profile still in use hands its
            # work to the first and exits without doing it.
            f"--user-data-dir={tempfile.mkdtemp(dir=tmp_path)}",
            "--enable-logging=stderr",
            "--v=0",
            *flags,
            html_file.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout, done.stderr


def dom(tmp_path: Path, page: str, *flags: str) -> tuple[Page, str]:
    text, log = browse(tmp_path, page, "--dump-dom", *flags)
    assert text.lstrip().lower().startswith(("<!doctype html>", "<html")), log[-3000:]
    return Page(text), log


def _page(records: list[dict[str, object]], **options: Any) -> str:
    log_key = options.pop("log_key", None)
    lines = forged_lines(records, key=log_key)
    if options.pop("tamper", False):
        lines[4] = lines[4].replace(b"plain", b"PLAIN")
    return render_audit_report(lines, **options)[1]


def _filter_box(page: Page) -> dict[str, str | None]:
    boxes = [dict(attrs) for tag, attrs in page.tags if tag == "input"]
    assert len(boxes) == 1
    return boxes[0]


@pytest.mark.parametrize(
    ("options", "state", "words"),
    [
        ({}, "intact-unkeyed", "INTACT, but UNKEYED"),
        ({"log_key": KEY, "key": KEY}, "intact-keyed", "VERIFIED, keyed"),
        ({"log_key": KEY}, "needs-key", "the log is keyed and no key was given"),
        ({"log_key": KEY, "key": b"other"}, "wrong-key", "keyed with another key"),
        ({"tamper": True}, "tampered", "TAMPERED at line 5"),
    ],
)
def test_t98_the_banner_shows_the_state_in_a_browser(
    tmp_path: Path, options: dict[str, object], state: str, words: str
) -> None:
    page, _ = dom(tmp_path, _page(swarm_records(12), **options))
    assert page.state() == state
    assert words in page.all_text
    if state in {"needs-key", "wrong-key"}:
        assert "input" not in {tag for tag, _ in page.tags}  # no record, nothing to filter
    else:
        # The page's own script ran under its policy: it shows the filter box.
        assert "hidden" not in _filter_box(page)


def test_t95_a_hostile_log_runs_nothing_and_shows_its_text(tmp_path: Path) -> None:
    records = [record for payload in HOSTILE for record in swarm_records(6, text=payload)]
    page, log = dom(tmp_path, _page(records))
    titles = [text for text in page.text if text.startswith("skillguard audit report")]
    assert titles  # document.title was not rewritten
    assert [tag for tag, _ in page.tags].count("script") == 1
    assert "img" not in {tag for tag, _ in page.tags}
    assert not {name for _, attrs in page.tags for name, _ in attrs if name.startswith("on")}
    assert "hidden" not in _filter_box(page)  # scripts were on: an injected one would have run
    text = page.all_text
    assert '<script>document.title="pwned"</script> agent 0' in text
    assert '"><img src=x onerror="document.title=1"> agent 0' in text
    assert "[U+202E]evil[U+202C] [U+2066]isolate[U+2069] agent 0" in text
    assert "\u202e" not in text
    assert "Content Security Policy" not in log  # nothing even tried to load or run


def screenshot(tmp_path: Path, page: str, *flags: str) -> bytes:
    shot = tmp_path / "report.png"
    browse(
        tmp_path,
        page,
        f"--screenshot={shot}",
        "--window-size=1280,1600",
        "--hide-scrollbars",
        *flags,
    )
    data = shot.read_bytes()
    shot.unlink()
    assert data.startswith(_PNG)
    return data


def test_t96_the_page_reads_with_scripts_disabled(tmp_path: Path) -> None:
    """Headless Chromium needs scripts to dump a DOM or take a screenshot (and ignores
    --disable-javascript), so the page is opened without its one script element, which
    is what a browser with scripts disabled builds: the verdict and every table are
    there, and the filter box stays hidden."""
    page = _page(swarm_records(40), tamper=True)
    start, end = page.index("<script>"), page.index("</script>") + len("</script>")
    without_script = page[:start] + page[end:]
    shown, _ = dom(tmp_path, without_script)
    assert shown.state() == "tampered"
    assert "Denials in lines 1-4 (" in shown.all_text
    assert "Approvals (" in shown.all_text
    assert _filter_box(shown)["hidden"] is not None
    assert len(screenshot(tmp_path, without_script)) > 20_000


def test_the_page_renders_to_a_screenshot(tmp_path: Path) -> None:
    assert len(screenshot(tmp_path, _page(swarm_records(40)))) > 20_000


def test_the_new_tables_and_the_unverified_line_in_a_browser(tmp_path: Path) -> None:
    """Agent-file approvals, what each agent received, and a tampered log's sections
    titled as its verified part, with the bad line's claim escaped and marked."""
    payload = HOSTILE[0]
    lines = forged_lines([*_AGENT_RECORDS, {"event": "load_denied", "agent": payload}])
    lines[4] = (
        lines[4]
        .replace(b'"decision":"deny"', b'"decision":"allow"')
        .replace(b"load_denied", payload.encode().replace(b'"', b'\\"'))
    )
    page, log = dom(tmp_path, render_audit_report(lines)[1])
    assert page.state() == "tampered"
    text = page.all_text
    assert "Approvals (skills and agent files) in lines 1-4 (2)" in text
    assert "Received: what each agent was served in lines 1-4 (2)" in text
    assert "Denials in lines 1-4 (1)" in text
    assert AGENT_FILE in text
    assert "Line 5: NOT VERIFIED" in text
    assert payload in text  # shown as text: the script in it did not run
    titles = [t for t in page.text if t.startswith("skillguard audit report")]
    assert titles
    assert [tag for tag, _ in page.tags].count("script") == 1
    assert "Content Security Policy" not in log
