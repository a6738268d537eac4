"""What reaches a prompt: every field revealed, then escaped for XML or JSON (T29, T41)."""

from __future__ import annotations

import json

from skillguard import activation_text, catalog_json, catalog_xml

HIDDEN = "Safe\u202eevil \U000e0041\U000e0042 \x1b[2J\x9b\x85\x7f"
SHOWN = "Safe[U+202E]evil [U+E0041][U+E0042] [U+001B][2J[U+009B][U+0085][U+007F]"


def test_t41_activation_text_reveals_the_body_and_every_other_field() -> None:
    text = activation_text(f"demo{HIDDEN}", f"Body: {HIDDEN}\n", [f"references/{HIDDEN}.md"])
    assert f'<skill_content name="demo{SHOWN}">' in text
    assert f"Body: {SHOWN}\n" in text
    assert f"<resource>references/{SHOWN}.md</resource>" in text
    assert "\u202e" not in text
    assert "\x9b" not in text


def test_t41_catalog_xml_reveals_every_field() -> None:
    xml = catalog_xml([(f"n{HIDDEN}", f"d{HIDDEN}", f"l{HIDDEN}", "workspace")])
    for field, tag in (("n", "name"), ("d", "description"), ("l", "location")):
        assert f"<{tag}>{field}{SHOWN}</{tag}>" in xml


def test_t41_catalog_json_reveals_every_field() -> None:
    [entry] = json.loads(catalog_json([(HIDDEN, HIDDEN, HIDDEN, HIDDEN)]))
    assert entry == {"name": SHOWN, "description": SHOWN, "location": SHOWN, "source": SHOWN}


def test_t43_real_scripts_reach_the_prompt_unchanged() -> None:
    persian = "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645 \U0001f468\u200d\U0001f469"
    text = activation_text("demo", persian + "\n", [])
    assert persian in text
