"""What reaches a prompt: the skill catalog and the activation text, escaped.

Rules (threat-model.md T13, T29): every field is escaped for the format it is
rendered into. XML text gets ``&``, ``<``, ``>`` and quotes escaped, and characters
XML 1.0 cannot hold (C0 controls other than tab and newline, lone surrogates, U+FFFE,
U+FFFF) replaced by U+FFFD, so a description or body can never close the element it
sits in or open one of its own. Before that, every field is passed through
``_text.reveal`` (threat-model.md T8, T41): a character that hides or reorders text,
and any control other than tab and newline, reaches the model as ``[U+XXXX]``, the
same thing a human reviewer sees. The catalog is omitted entirely when empty.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

from skillguard._core.errors import SkillUsageError
from skillguard._core.text import reveal

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["CatalogEntry", "activation_text", "catalog_json", "catalog_xml", "xml_text"]

_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_XML_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;"})


def xml_text(value: str) -> str:
    """*value* safe as XML 1.0 text or attribute content, hidden characters revealed."""
    return _NOT_XML.sub("\ufffd", reveal(value)).translate(_XML_ESCAPES)


# (name, description, location, source) for each skill an agent may load.
CatalogEntry = tuple[str, str, str, str]


def _check_entries(entries: object) -> None:
    if not isinstance(entries, (list, tuple)) or not all(
        isinstance(entry, tuple) and len(entry) == 4 and all(isinstance(s, str) for s in entry)
        for entry in entries
    ):
        raise SkillUsageError(
            "bad_argument", "entries must be (name, description, location, source) str tuples"
        )


def catalog_xml(entries: Sequence[CatalogEntry]) -> str:
    """``<available_skills>`` per the Agent Skills client guide; ``""`` when empty.
    Raises ``SkillUsageError`` for entries that are not tuples of four str."""
    _check_entries(entries)
    if not entries:
        return ""
    lines = ["<available_skills>"]
    for name, description, location, _ in entries:
        lines.extend(
            [
                "  <skill>",
                f"    <name>{xml_text(name)}</name>",
                f"    <description>{xml_text(description)}</description>",
                f"    <location>{xml_text(location)}</location>",
                "  </skill>",
            ]
        )
    lines.append("</available_skills>")
    return "\n".join(lines) + "\n"


def catalog_json(entries: Sequence[CatalogEntry]) -> str:
    """The same catalog as a JSON list (ASCII only). Raises ``SkillUsageError`` for
    entries that are not tuples of four str."""
    _check_entries(entries)
    return json.dumps(
        [
            {
                "name": reveal(name),
                "description": reveal(description),
                "location": reveal(location),
                "source": reveal(source),
            }
            for name, description, location, source in entries
        ],
        indent=2,
        ensure_ascii=True,
    )


def activation_text(name: str, body: str, resources: Sequence[str]) -> str:
    """The activation wrapper: ``<skill_content name="...">`` with the body and a
    ``<skill_resources>`` list, every part escaped. Raises ``SkillUsageError`` when
    *name* or *body* is not a str or *resources* is not a list or tuple of str."""
    if not isinstance(name, str) or not isinstance(body, str):
        raise SkillUsageError("bad_argument", "name and body must be str")
    if not isinstance(resources, (list, tuple)) or not all(
        isinstance(path, str) for path in resources
    ):
        raise SkillUsageError("bad_argument", "resources must be a list of str paths")
    lines = [f'<skill_content name="{xml_text(name)}">', xml_text(body).rstrip("\n")]
    if resources:
        lines.append("<skill_resources>")
        lines.extend(f"  <resource>{xml_text(path)}</resource>" for path in resources)
        lines.append("</skill_resources>")
    lines.append("</skill_content>")
    return "\n".join(lines) + "\n"
