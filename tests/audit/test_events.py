"""Audit events where operators look: levels, flat fields, and the README's recipes
(T253). The recipes configure global logging, so each runs in a fresh process."""

from __future__ import annotations

import importlib.util
import json
import logging
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from skillguard.audit import Auditor

ROOT = Path(__file__).resolve().parent.parent.parent
# What each recipe is run with: one grant, one denial, one refusal.
_DRIVER = """
from skillguard.audit import Auditor

auditor = Auditor()
auditor.emit("load_granted", agent="planner", skill="notes", decision="allow")
auditor.emit("load_denied", agent="intern", skill="deploy", decision="deny", code="x")
auditor.emit("shadowing_refused", agent="intern", skill="notes", code="shadowed")
"""


def _recipes() -> list[str]:
    """The ```py blocks of the docs' "Audit events in your logs" section."""
    readme = (ROOT / "docs" / "how-to" / "audit-review.md").read_text()
    section = readme.split("\n## Audit events in your logs", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^```py\n(.*?)^```", section, flags=re.MULTILINE | re.DOTALL)


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code + _DRIVER],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )


def test_the_readme_has_three_recipes() -> None:
    assert len(_recipes()) == 3


def test_t253_the_stdlib_recipe_prints_denials_and_refusals() -> None:
    completed = _run(_recipes()[0])
    assert completed.stdout == ""
    assert completed.stderr.splitlines() == [
        (
            "WARNING skillguard.audit load_denied agent=intern skill=deploy decision=deny"
            " code=x version=0.1.0"
        ),
        (
            "WARNING skillguard.audit shadowing_refused agent=intern skill=notes"
            " code=shadowed version=0.1.0"
        ),
    ]


def test_t253_the_structlog_recipe_is_silenced_through_the_stdlib_level() -> None:
    completed = _run(_recipes()[1])
    events = [json.loads(line) for line in completed.stdout.splitlines()]
    assert [(e["event"], e["level"]) for e in events] == [
        ("load_denied", "warning"),
        ("shadowing_refused", "warning"),
    ]
    assert events[0]["agent"] == "intern"
    # Without the stdlib level, every event reaches structlog.
    recipe = _recipes()[1].replace('logging.getLogger("skillguard").setLevel', "print")
    events = [json.loads(line) for line in _run(recipe).stdout.splitlines()[1:]]
    assert [e["level"] for e in events] == ["info", "warning", "warning"]


@pytest.mark.skipif(
    importlib.util.find_spec("opentelemetry.sdk") is None, reason="opentelemetry-sdk"
)
def test_t253_the_opentelemetry_recipe_gives_flat_attributes() -> None:
    completed = _run(_recipes()[2])
    assert '"skillguard.decision": "deny"' in completed.stdout
    assert '"skillguard.agent": "intern"' in completed.stdout


@pytest.mark.skipif(
    importlib.util.find_spec("opentelemetry.sdk") is None, reason="opentelemetry-sdk"
)
def test_t253_opentelemetry_logs_carry_each_field_as_an_attribute() -> None:
    code = """
import logging
from opentelemetry.sdk._logs import LoggerProvider, LoggingHandler
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
try:
    from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter as Exporter
except ImportError:
    from opentelemetry.sdk._logs.export import InMemoryLogExporter as Exporter
exporter = Exporter()
provider = LoggerProvider()
provider.add_log_record_processor(SimpleLogRecordProcessor(exporter))
logging.getLogger("skillguard").addHandler(LoggingHandler(logger_provider=provider))
logging.getLogger("skillguard").setLevel(logging.INFO)
import atexit, json
def show():
    for data in exporter.get_finished_logs():
        record = data.log_record
        attributes = {k: v for k, v in record.attributes.items() if k.startswith("skillguard.")}
        print(json.dumps([record.severity_text, attributes]))
atexit.register(show)
"""
    rows = [json.loads(line) for line in _run(code).stdout.splitlines()]
    assert [severity for severity, _ in rows] == ["INFO", "WARN", "WARN"]
    granted, denied = rows[0][1], rows[1][1]
    assert (granted["skillguard.agent"], granted["skillguard.decision"]) == ("planner", "allow")
    assert (denied["skillguard.skill"], denied["skillguard.code"]) == ("deploy", "x")


def test_t253_a_stdlib_record_has_flat_fields_beside_audit(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.INFO, logger="skillguard.audit"):
        Auditor().emit("load_denied", agent="a", skill="s", decision="deny", reason="r")
    (record,) = caplog.records
    assert record.levelno == logging.WARNING
    assert getattr(record, "skillguard.agent") == "a"
    assert getattr(record, "skillguard.decision") == "deny"
    assert getattr(record, "skillguard.reason") == "r"
    assert record.audit["skill"] == "s"  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("fields", "level"),
    [
        ({"decision": "allow"}, "info"),
        ({"decision": "none"}, "info"),
        ({"decision": "deny"}, "warning"),
    ],
)
def test_t253_structlog_gets_denials_at_warning(fields: dict[str, str], level: str) -> None:
    with capture_logs() as logs:
        Auditor().emit("load_granted", **fields)
    assert logs[0]["log_level"] == level


def test_t253_a_level_on_the_skillguard_logger_silences_structlog_too() -> None:
    logger = logging.getLogger("skillguard")
    try:
        logger.setLevel(logging.WARNING)
        with capture_logs() as logs:
            Auditor().emit("load_granted", decision="allow")
            Auditor().emit("load_denied", decision="deny")
        assert [e["event"] for e in logs] == ["load_denied"]
        logger.setLevel(logging.CRITICAL)
        with capture_logs() as logs:
            Auditor().emit("load_denied", decision="deny")
        assert logs == []
    finally:
        logger.setLevel(logging.NOTSET)
    with capture_logs() as logs:
        Auditor().emit("load_granted", decision="allow")
    assert len(logs) == 1


# -- OpenTelemetry spans (optional) -------------------------------------------------------

_SWARM = """
import pathlib, sys, tempfile
import skillguard

folder = pathlib.Path(tempfile.mkdtemp())
(folder / "notes").mkdir()
text = "---\\nname: notes\\ndescription: Notes.\\n---\\nBody.\\n"
(folder / "notes" / "SKILL.md").write_text(text)
policy = skillguard.AllowPolicy.from_mapping({"agents": {"a": {"skills": ["notes"]}}})
handle = skillguard.Loader(
    policy, embedded=skillguard.EmbeddedSkills.from_directory(folder)
).bind("a")
handle.load("notes")
try:
    handle.load("other")
except skillguard.SkillError:
    pass
"""


def test_t253_no_tracer_provider_no_opentelemetry() -> None:
    """A host that never imported OpenTelemetry: skillguard imports none of it."""
    completed = _run(
        _SWARM + "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))\n"
    )
    assert completed.stdout.splitlines()[0] == "[]"


@pytest.mark.skipif(
    importlib.util.find_spec("opentelemetry.sdk") is None, reason="opentelemetry-sdk"
)
def test_t253_spans_carry_the_audit_attributes() -> None:
    setup = """
import json
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
trace.set_tracer_provider(provider)
"""
    show = """
for span in exporter.get_finished_spans():
    print(json.dumps([span.name, dict(span.attributes), [e.name for e in span.events],
                      span.status.status_code.name]))
"""
    completed = _run(setup + _SWARM + show)
    spans = [json.loads(line) for line in completed.stdout.splitlines()]
    assert [name for name, *_ in spans] == ["skillguard.load", "skillguard.load"]
    _check_load_spans(spans)
    # A selection is a span of its own; the loads it makes are its children.
    selected = [
        json.loads(line)
        for line in _run(
            setup + _SWARM + "exporter.clear()\nhandle.select('notes')\n" + show
        ).stdout.splitlines()
    ]
    assert [name for name, *_ in selected] == ["skillguard.load", "skillguard.select"]
    attributes, events = selected[1][1], selected[1][2]
    assert (attributes["skillguard.agent"], attributes["skillguard.skill"]) == ("a", "notes")
    assert events == ["skill_selected", "skills_selected"]


def _check_load_spans(spans: list[list[Any]]) -> None:
    (_, granted, events, status), (_, denied, denied_events, denied_status) = spans
    assert (granted["skillguard.agent"], granted["skillguard.skill"]) == ("a", "notes")
    assert granted["skillguard.decision"] == "allow"
    assert events == ["load_granted"]
    assert status == "UNSET"
    assert (denied["skillguard.skill"], denied["skillguard.decision"]) == ("other", "deny")
    assert denied_events[0] == "load_denied"
    assert denied_status == "ERROR"  # the SkillError passed through, recorded


_WORKSPACE = """
import pathlib, sys, tempfile
import skillguard

root = pathlib.Path(tempfile.mkdtemp())
(root / "ws" / "notes").mkdir(parents=True)
text = "---\\nname: notes\\ndescription: Notes.\\n---\\nBody.\\n"
(root / "ws" / "notes" / "SKILL.md").write_text(text)
policy = skillguard.AllowPolicy.from_mapping(
    {"agents": {"a": {"skills": ["notes"], "workspace": "approve"}}}
)
answers = iter([True, False])

def approver(request):
    return skillguard.Decision(approved=next(answers), by="alice", reason="read it")

handle = skillguard.Loader(policy, workspace=[root / "ws"], approver=approver).bind("a")
handle.load("notes")
(root / "ws" / "notes" / "SKILL.md").write_text(text + "More.\\n")  # a new snapshot
try:
    handle.load("notes")
except skillguard.SkillError:
    pass
"""


@pytest.mark.skipif(
    importlib.util.find_spec("opentelemetry.sdk") is None, reason="opentelemetry-sdk"
)
def test_t253_an_approval_is_a_span_inside_its_load() -> None:
    completed = _run(
        """
import json
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
trace.set_tracer_provider(provider)
"""
        + _WORKSPACE
        + """
for span in exporter.get_finished_spans():
    parent = span.parent.span_id if span.parent is not None else None
    print(json.dumps([span.name, dict(span.attributes), span.context.span_id, parent,
                      span.status.status_code.name]))
"""
    )
    spans = [json.loads(line) for line in completed.stdout.splitlines()]
    # Each load holds its approval: the approve span ends first, as the load's child.
    assert [name for name, *_ in spans] == [
        "skillguard.approve",
        "skillguard.load",
        "skillguard.approve",
        "skillguard.load",
    ]
    (_, yes, _, yes_parent, _), (_, _, load_id, _, _) = spans[0], spans[1]
    (_, no, _, no_parent, no_status), (_, _, second_id, _, _) = spans[2], spans[3]
    assert (yes_parent, no_parent) == (load_id, second_id)
    assert (yes["skillguard.agent"], yes["skillguard.skill"]) == ("a", "notes")
    assert (yes["skillguard.decision"], yes["skillguard.approver"]) == ("allow", "alice")
    assert yes["skillguard.reason"] == "read it"
    assert no["skillguard.decision"] == "deny"
    assert no_status == "ERROR"
