"""``validate`` output for CI: GitHub Actions workflow commands and SARIF 2.1.0.

Both renderers take the results ``_cli`` builds (one mapping per checked skill, each
error and warning with ``code``, ``message`` and, where known, ``file``, ``line`` and
``column``) and never see a file's content: only paths, codes and the parser's own
messages. Untrusted text (folder names, keys) reaches them already escaped for a
terminal line (``_text.terminal_line``); each format then escapes it by its own rules
(threat-model.md T91, T92):

- GitHub: ``%``, CR and LF in a message, and also ``:`` and ``,`` in a property
  (``file=``, ``title=``), are percent-encoded as the runner decodes them, so a hostile
  folder name can neither end a property early nor start a workflow command of its own
  (``::add-mask::``, ``::stop-commands::``) on a new line.
- SARIF: a JSON document (``json.dumps``, ASCII only); file paths become relative URI
  references, percent-encoded, so that a name holding ``#``, ``?`` or ``%`` stays one
  path.
"""

from __future__ import annotations

import json
import urllib.parse
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

__all__ = ["README_ERRORS", "RULE_TEXT", "github_commands", "github_escape", "sarif_document"]

README_ERRORS: Final = "https://github.com/skillguard/skillguard#errors"
SARIF_SCHEMA: Final = "https://json.schemastore.org/sarif-2.1.0.json"

# The short description of each code ``validate`` can report, as in README.md's error
# table (a test keeps the two in step). A code missing here is still a rule, described
# by its code alone: a result is never dropped for want of a description.
RULE_TEXT: Final[dict[str, str]] = {
    "too_large": "the file is over max_skill_bytes",
    "bad_encoding": "not valid UTF-8",
    "control_character": "a control character in the frontmatter, or NUL in the body",
    "no_opening_fence": "line 1 is not ---",
    "no_closing_fence": "no later --- line",
    "frontmatter_too_large": "the frontmatter is over max_frontmatter_bytes",
    "yaml_syntax": "the frontmatter is not valid YAML",
    "yaml_anchor": "a YAML anchor",
    "yaml_alias": "a YAML alias",
    "yaml_tag": "an explicit YAML tag",
    "yaml_directive": "a YAML directive",
    "yaml_multiple_documents": "a second YAML document",
    "yaml_merge_key": "a YAML merge key (<<)",
    "yaml_complex_key": "a mapping key that is a list or mapping",
    "yaml_null_key": "an empty, unquoted mapping key",
    "yaml_ambiguous": "YAML that parsers read differently",
    "tab_character": "a tab outside a quoted string",
    "duplicate_key": "a key repeated in one mapping",
    "too_deep": "nesting deeper than the limit",
    "too_many_nodes": "more YAML nodes than max_nodes",
    "scalar_too_long": "a key or value over max_scalar_bytes",
    "not_a_mapping": "the frontmatter is empty, a list or a string",
    "missing_field": "name or description is missing",
    "wrong_type": "a field has the wrong type",
    "empty_field": "a field, a tool or a step is blank",
    "malformed_tools": "the parentheses of allowed-tools do not balance",
    "field_too_long": "description or compatibility is over its length",
    "forbidden_character": "a character that hides or reorders text",
    "invalid_name": "name is not a valid identifier",
    "name_mismatch": "name differs from the folder name",
    "symlink": "a symlink where a file or folder was expected",
    "not_regular_file": "a FIFO, socket, device or directory where a file was expected",
    "not_a_directory": "a path component is not a directory",
    "hardlink": "a file with more than one link",
    "cross_device": "a file or folder on another file system",
    "path_escape": "an absolute path, or . or .. in a path",
    "bad_name": "a file or folder name that cannot be shown or used safely",
    "hidden_character": "a name or body holding a character that hides or reorders text",
    "missing": "nothing is there",
    "unreadable": "it is there but cannot be read",
    "no_skill": "no folder under the path holds a SKILL.md",
    "wrong_case_skill_file": "a case variant of SKILL.md, such as skill.md",
    "nested_skill": "a SKILL.md below a skill folder, not checked as a skill",
    "unknown_field": "a frontmatter field the Agent Skills rules do not define",
    "metadata_not_string": "a metadata value that is not a string",
    "too_many_entries": "a folder with more entries than the limit",
    "bug": "an internal error in skillguard: please report it",
}


def github_escape(text: str, *, property_value: bool = False) -> str:
    """*text* escaped as GitHub's runner decodes a workflow command's message, or with
    *property_value*, one of its properties."""
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if property_value:
        text = text.replace(":", "%3A").replace(",", "%2C")
    return text


def _annotation(level: str, item: dict[str, Any], fallback_file: str) -> str:
    properties = [f"file={github_escape(item.get('file') or fallback_file, property_value=True)}"]
    if item.get("line") is not None:
        properties.append(f"line={int(item['line'])}")
    if item.get("column") is not None:
        properties.append(f"col={int(item['column'])}")
    title = github_escape(f"skillguard {item['code']}", property_value=True)
    properties.append(f"title={title}")
    return f"::{level} {','.join(properties)}::{github_escape(item['message'])}"


def github_commands(
    results: Iterable[dict[str, Any]], skipped: Iterable[dict[str, Any]]
) -> Iterator[str]:
    """One workflow command per error (``::error``), warning and skipped entry
    (``::warning``), without a line end."""
    for result in results:
        for error in result["errors"]:
            yield _annotation("error", error, result["path"])
        for warning in result["warnings"]:
            yield _annotation("warning", warning, result["path"])
    for entry in skipped:
        level = "error" if entry.get("fails") else "warning"
        yield _annotation(level, {**entry, "file": entry["path"]}, entry["path"])


def _uri(path: str) -> str:
    # A relative URI reference: every character outside the unreserved set and '/' is
    # percent-encoded (UTF-8), so '#', '?', '%', spaces and backslashes stay in the path.
    return urllib.parse.quote(path.lstrip("/") if path.startswith("/") else path, safe="/")


def _location(item: dict[str, Any], fallback_file: str) -> dict[str, Any]:
    path = item.get("file") or fallback_file
    physical: dict[str, Any] = {"artifactLocation": {"uri": _uri(path)}}
    if path.startswith("/"):
        physical["artifactLocation"]["uriBaseId"] = "ROOT"
    if item.get("line") is not None:
        region: dict[str, int] = {"startLine": int(item["line"])}
        if item.get("column") is not None:
            region["startColumn"] = int(item["column"])
        physical["region"] = region
    return {"physicalLocation": physical}


def sarif_document(
    results: Iterable[dict[str, Any]], skipped: Iterable[dict[str, Any]], *, version: str
) -> dict[str, Any]:
    """The SARIF 2.1.0 log of one ``validate`` run: one rule per code, one result per
    error, warning and skipped entry, each with its physical location."""
    findings: list[tuple[str, dict[str, Any], str]] = []
    for result in results:
        findings.extend(("error", error, result["path"]) for error in result["errors"])
        findings.extend(("warning", warning, result["path"]) for warning in result["warnings"])
    for entry in skipped:
        level = "error" if entry.get("fails") else "warning"
        findings.append((level, {**entry, "file": entry["path"]}, entry["path"]))
    codes = sorted({item["code"] for _, item, _ in findings})
    index = {code: position for position, code in enumerate(codes)}
    rules = [
        {
            "id": code,
            "name": "".join(part.capitalize() for part in code.split("_")),
            "shortDescription": {"text": RULE_TEXT.get(code, code)},
            "helpUri": README_ERRORS,
            "help": {"text": f"See the error table in skillguard's README: {README_ERRORS}"},
        }
        for code in codes
    ]
    sarif_results = [
        {
            "ruleId": item["code"],
            "ruleIndex": index[item["code"]],
            "level": level,
            "message": {"text": item["message"]},
            "locations": [_location(item, fallback)],
        }
        for level, item, fallback in findings
    ]
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "skillguard",
                "version": version,
                "informationUri": "https://github.com/skillguard/skillguard",
                "rules": rules,
            }
        },
        "results": sarif_results,
        "columnKind": "unicodeCodePoints",
    }
    if any((item.get("file") or fallback).startswith("/") for _, item, fallback in findings):
        run["originalUriBaseIds"] = {"ROOT": {"uri": "file:///"}}
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}


def sarif_text(
    results: Iterable[dict[str, Any]], skipped: Iterable[dict[str, Any]], *, version: str
) -> str:
    """``sarif_document`` as ASCII JSON text."""
    return json.dumps(
        sarif_document(results, skipped, version=version), indent=2, ensure_ascii=True
    )
