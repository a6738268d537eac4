"""``validate`` output for CI: GitHub Actions workflow commands and SARIF 2.1.0.

Both are written as the run goes, one checked skill at a time, so that memory does not
grow with the number of skills. Both renderers take the results ``_cli`` builds (one
mapping per checked skill, each error and warning with ``code``, ``message`` and, where
known, ``file``, ``line`` and ``column``) and never see a file's content: only paths,
codes and the parser's own messages. Paths arrive as found, not escaped, so that each
format can name the real file; each format escapes by its own rules (threat-model.md
T91, T92):

- GitHub: messages are escaped for a terminal line (``_text.terminal_line``), then
  ``%``, CR and LF in a message, and also ``:`` and ``,`` in a property (``file=``,
  ``title=``), are percent-encoded as the runner decodes them, so a hostile folder name
  can neither end a property early nor start a workflow command of its own
  (``::add-mask::``, ``::stop-commands::``) on a new line. A path a terminal would
  escape is never put in ``file=``: the annotation names the nearest folder above it
  that can be named, and the message gives the whole path, escaped.
- SARIF: a JSON document (``json.dumps``, ASCII only); file paths become relative URI
  references of their own bytes, percent-encoded, so that a name holding ``#``, ``?``,
  ``%``, a backslash or an undecodable byte stays the one path it names. Each rule is
  ranked for code scanning (``RULE_RANK``: ``security-severity``, ``security`` and CWE
  tags, T273) and each result has a fingerprint that leaves line numbers out (T274).

Below ``$GITHUB_WORKSPACE`` (a GitHub Actions checkout), paths are given relative to it.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import urllib.parse
from typing import TYPE_CHECKING, Any, Final

from skillguard._core.text import terminal_line
from skillguard._fs.paths import printed_path

if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import TextIO

__all__ = [
    "FINGERPRINT_KEY",
    "README_ERRORS",
    "RULE_RANK",
    "RULE_TEXT",
    "SarifWriter",
    "fingerprint",
    "github_escape",
    "github_result",
    "github_skipped",
    "json_log_safe",
    "log_safe",
]

# The error table of the docs (docs/reference/errors.md), as GitHub shows it.
README_ERRORS: Final = (
    "https://github.com/skillguard/skillguard/blob/main/docs/reference/errors.md#errors"
)
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
    "argument_hint_list": "an argument-hint written as a YAML list, read as joined text",
    "too_many_entries": "a folder with more entries than the limit",
    "bug": "an internal error in skillguard: please report it",
}


# How code scanning ranks each rule: ``properties.security-severity`` (CVSS-like, 0.1 to
# 10: 7.0 and up is "high", 4.0 to 6.9 "medium", below 4.0 "low") and the CWE the rule
# guards against, where one fits. Every rule is tagged ``security``, so code scanning lists
# its results as security alerts. A code missing here is ranked "medium" with no CWE
# (a test keeps this table and RULE_TEXT in step).
_LINK = (7.5, "CWE-59")  # link following: a loader reading outside the skill
_SIZE = (5.3, "CWE-400")  # uncontrolled resource consumption
_HIDDEN = (7.0, "CWE-116")  # text a reviewer does not see but a model reads
_DIFFERENTIAL = (6.1, "CWE-436")  # interpretation conflict: parsers read it differently
_FORMAT = (3.1, None)  # not a skill a loader can serve: fails closed, nothing unsafe loads
RULE_RANK: Final[dict[str, tuple[float, str | None]]] = {
    "too_large": _SIZE,
    "bad_encoding": (5.3, "CWE-838"),
    "control_character": _HIDDEN,
    "no_opening_fence": _FORMAT,
    "no_closing_fence": _FORMAT,
    "frontmatter_too_large": _SIZE,
    "yaml_syntax": _FORMAT,
    "yaml_anchor": (6.5, "CWE-776"),
    "yaml_alias": (6.5, "CWE-776"),
    "yaml_tag": (7.5, "CWE-502"),
    "yaml_directive": _DIFFERENTIAL,
    "yaml_multiple_documents": _DIFFERENTIAL,
    "yaml_merge_key": (6.5, "CWE-776"),
    "yaml_complex_key": _DIFFERENTIAL,
    "yaml_null_key": _DIFFERENTIAL,
    "yaml_ambiguous": _DIFFERENTIAL,
    "tab_character": _DIFFERENTIAL,
    "duplicate_key": _DIFFERENTIAL,
    "too_deep": _SIZE,
    "too_many_nodes": _SIZE,
    "scalar_too_long": _SIZE,
    "not_a_mapping": _FORMAT,
    "missing_field": _FORMAT,
    "wrong_type": _FORMAT,
    "empty_field": _FORMAT,
    "malformed_tools": _FORMAT,
    "field_too_long": _SIZE,
    "forbidden_character": _HIDDEN,
    "invalid_name": (4.3, "CWE-20"),
    "name_mismatch": (4.3, "CWE-20"),
    "symlink": _LINK,
    "not_regular_file": (7.5, "CWE-73"),
    "not_a_directory": (5.3, "CWE-73"),
    "hardlink": _LINK,
    "cross_device": _LINK,
    "path_escape": (8.1, "CWE-22"),
    "bad_name": _HIDDEN,
    "hidden_character": _HIDDEN,
    "missing": _FORMAT,
    "unreadable": (4.3, None),
    "no_skill": _FORMAT,
    "wrong_case_skill_file": _FORMAT,
    "nested_skill": _FORMAT,
    "unknown_field": (2.0, None),
    "metadata_not_string": (2.0, None),
    "argument_hint_list": (2.0, None),
    "too_many_entries": _SIZE,
    "bug": (5.0, None),
}
_UNRANKED: Final = (5.0, None)


def github_escape(text: str, *, property_value: bool = False) -> str:
    """*text* escaped as GitHub's runner decodes a workflow command's message, or with
    *property_value*, one of its properties."""
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if property_value:
        text = text.replace(":", "%3A").replace(",", "%2C")
    return text


# GitHub's runner still reads the legacy command form ``##[name]data`` anywhere in a
# line that is not a ``::`` command, in whatever a step prints, on stdout or stderr: a
# folder named ``##[stop-commands]x`` in a text, JSON or SARIF log would turn off every
# later annotation of the job, and ``##[error]`` would forge one.
# Only from the first "#" of a run: tried from each "#" of a long run, the run would be
# read again from each (threat-model.md T144).
_LEGACY_COMMAND: Final = re.compile(r"(?<!#)#{2,}(?=\[)")


def log_safe(line: str) -> str:
    """*line* (already one terminal line) with every ``#`` of a ``##[`` shown as
    ``[U+0023]``, so that no CI runner reads it as a legacy workflow command."""
    if "##[" not in line:
        return line
    return _LEGACY_COMMAND.sub(lambda found: "[U+0023]" * len(found.group()), line)


def json_log_safe(text: str) -> str:
    """JSON *text* with each ``[`` after ``##`` written ``\\u005b``: the same document,
    which no CI runner reads as a legacy workflow command (``##[`` can only occur in a
    JSON string, where the escape is valid)."""
    return text.replace("##[", "##\\u005b")


@functools.lru_cache(maxsize=4)
def _checkout(workspace: str) -> tuple[str, ...]:
    # Path strings only: nothing in the scanned tree is opened, listed or resolved. The
    # working folder is always its real path, so the checkout is compared both as named
    # and as resolved (the operator's own setting may name it through a link, as macOS's
    # /tmp does); resolved once per run, not once per finding.
    named, resolved = os.path.normpath(workspace), os.path.realpath(workspace)
    return tuple(dict.fromkeys((named.rstrip("/"), resolved.rstrip("/"))))


def ci_path(path: str) -> str:
    """*path* as a CI service names a file: relative to ``$GITHUB_WORKSPACE`` (the
    checkout) when it lies below it, since GitHub places an annotation on a pull
    request's diff only for a path named from the repository's top; else unchanged."""
    workspace = os.environ.get("GITHUB_WORKSPACE", "")
    if not workspace or not os.path.isabs(workspace):
        return path
    if os.path.isabs(path):
        full = os.path.normpath(path)
    else:
        try:
            full = os.path.normpath(os.path.join(os.getcwd(), path))
        except OSError:  # the working folder was removed: the path stays as given
            return path
    for top in _checkout(workspace):
        if full == top:
            return "."
        if full.startswith(top + "/"):
            return full[len(top) + 1 :]
    return path


def _plain(path: str) -> bool:
    # A path a terminal shows as it is (UTF-8, no control, hidden or line-breaking
    # character): it names its file exactly in a log line.
    return terminal_line(path) == path and path.isprintable()


def _folder_above(path: str) -> str:
    return path.rpartition("/")[0] or ("/" if path.startswith("/") else ".")


def _where(item: dict[str, Any], fallback_file: str) -> tuple[str, str]:
    """The path an error or warning is placed on, and the path it is about. A name that
    hides text (``hidden_character`` with no line) reaches the results only as shown
    (``[U+202E]``), which may be another entry's real name: the finding is then placed
    on the folder that holds it, never on that other entry."""
    path = item.get("file") or fallback_file
    if item["code"] == "hidden_character" and item.get("line") is None:
        return _folder_above(path), path
    return path, path


def _github_file(placed: str, about: str) -> tuple[str, str | None]:
    """The ``file=`` of an annotation, and the whole path when that is not it.

    A name that a terminal would escape cannot be named exactly in a workflow command's
    log line, and its escaped form could read like another file's name; the annotation
    then points at the nearest folder above it that can be named, and the message
    starts with the whole path, escaped. So does a finding placed on a folder above
    what it is about (``_where``).
    """
    placed, about = ci_path(placed), ci_path(about)
    while not _plain(placed):
        placed = _folder_above(placed)
    return placed, None if placed == about else about


def _findings(result: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any], str]]:
    """Each error and warning of one checked skill: level, item, the skill's path."""
    for error in result["errors"]:
        yield "error", error, result["path"]
    for warning in result["warnings"]:
        yield "warning", warning, result["path"]


def _skipped_finding(entry: dict[str, Any]) -> tuple[str, dict[str, Any], str]:
    """One skipped entry as a finding: an error when skips fail the run."""
    level = "error" if entry.get("fails") else "warning"
    return level, {**entry, "file": entry["path"]}, entry["path"]


def _annotation(level: str, item: dict[str, Any], fallback_file: str) -> str:
    file, whole = _github_file(*_where(item, fallback_file))
    properties = [f"file={github_escape(file, property_value=True)}"]
    if whole is None and item.get("line") is not None:
        properties.append(f"line={int(item['line'])}")
        if item.get("column") is not None:
            properties.append(f"col={int(item['column'])}")
    title = github_escape(terminal_line(f"skillguard {item['code']}"), property_value=True)
    properties.append(f"title={title}")
    message = item["message"] if whole is None else f"{printed_path(whole)}: {item['message']}"
    return f"::{level} {','.join(properties)}::{github_escape(terminal_line(message))}"


def github_result(result: dict[str, Any]) -> Iterator[str]:
    """One workflow command per error (``::error``) and warning (``::warning``) of one
    checked skill, without a line end."""
    for finding in _findings(result):
        yield _annotation(*finding)


def github_skipped(entry: dict[str, Any]) -> str:
    """The workflow command of one skipped entry: ``::error`` when skips fail the run."""
    return _annotation(*_skipped_finding(entry))


def _uri(path: str) -> str:
    # A relative URI reference of the path's own bytes: every byte outside the
    # unreserved set and '/' is percent-encoded, so '#', '?', '%', spaces, backslashes,
    # control characters and undecodable bytes stay in the one path they name.
    return urllib.parse.quote(os.fsencode(path.lstrip("/")), safe="/")


def _location(item: dict[str, Any], fallback_file: str) -> dict[str, Any]:
    path = ci_path(_where(item, fallback_file)[0])
    physical: dict[str, Any] = {"artifactLocation": {"uri": _uri(path)}}
    if path.startswith("/"):
        physical["artifactLocation"]["uriBaseId"] = "ROOT"
    if item.get("line") is not None:
        region: dict[str, int] = {"startLine": int(item["line"])}
        if item.get("column") is not None:
            region["startColumn"] = int(item["column"])
        physical["region"] = region
    return {"physicalLocation": physical}


def _rule(code: str) -> dict[str, Any]:
    severity, cwe = RULE_RANK.get(code, _UNRANKED)
    tags = ["security"] if cwe is None else ["security", f"external/cwe/{cwe.lower()}", cwe]
    return {
        "id": code,
        "name": "".join(part.capitalize() for part in code.split("_")),
        "shortDescription": {"text": RULE_TEXT.get(code, code)},
        "helpUri": README_ERRORS,
        "help": {"text": f"See the error table of skillguard's docs: {README_ERRORS}"},
        "properties": {"security-severity": f"{severity:.1f}", "tags": tags},
    }


# A line or column number inside a message ("line 5, column 1: ...") moves when a line is
# added above it; the fingerprint leaves it out. (No word boundary: "outline 5" read as
# "outline N" changes no fingerprint's stability, and the pattern stays linear, T140.)
_POSITION: Final = re.compile(r"(line|column) [0-9]+")
FINGERPRINT_KEY: Final = "skillguardFinding/v1"


def fingerprint(uri: str, code: str, message: str, repeat: int) -> str:
    """The ``partialFingerprints`` value of one result: a SHA-256 of where it is (the
    artifact's URI, never the line), its rule, its message with every line and column
    number left out, and how many identical results came before it in the same skill.
    The same finding keeps it across runs, when lines are added above it."""
    text = _POSITION.sub(r"\1 N", message)
    digest = hashlib.sha256("\0".join((uri, code, text, str(repeat))).encode("utf-8"))
    return digest.hexdigest()


# Every rule skillguard has, in a fixed order, so that the driver (and each result's
# ruleIndex) is known before the first result is written.
_RULES: Final = tuple(sorted(RULE_TEXT))
_RULE_INDEX: Final = {code: position for position, code in enumerate(_RULES)}


class SarifWriter:
    """Writes the SARIF 2.1.0 log of one ``validate`` run as the run goes.

    The driver lists every rule skillguard has (one per code of README.md's error table),
    so results can be written one at a time and memory does not grow with the number of
    skills. A code missing from the table is still reported, as a result that names its
    rule by id alone (SARIF makes ``ruleIndex`` optional): nothing is dropped.
    """

    def __init__(self, out: TextIO, *, version: str) -> None:
        self._out = out
        self._written = 0
        self._seen: dict[tuple[str, str, str], int] = {}
        driver = {
            "name": "skillguard",
            "version": version,
            "informationUri": "https://github.com/skillguard/skillguard",
            "rules": [_rule(code) for code in _RULES],
        }
        # Absolute paths are written relative to ROOT (file:///), so every artifact
        # location is a relative URI reference that a hostile name cannot redirect.
        head = {
            "$schema": SARIF_SCHEMA,
            "version": "2.1.0",
            "runs": [
                {
                    "tool": {"driver": driver},
                    "originalUriBaseIds": {"ROOT": {"uri": "file:///"}},
                    "columnKind": "unicodeCodePoints",
                    "results": [],
                }
            ],
        }
        text = json.dumps(head, indent=2, ensure_ascii=True)
        # The document up to the results array, left open: '[]' is its last bracket pair.
        cut = text.rindex("[]")
        self._tail = text[cut + 2 :]
        out.write(text[: cut + 1])

    def _write(self, level: str, item: dict[str, Any], fallback_file: str) -> None:
        sarif_result: dict[str, Any] = {"ruleId": item["code"]}
        if item["code"] in _RULE_INDEX:
            sarif_result["ruleIndex"] = _RULE_INDEX[item["code"]]
        sarif_result["level"] = level
        sarif_result["message"] = {"text": terminal_line(item["message"])}
        location = _location(item, fallback_file)
        sarif_result["locations"] = [location]
        uri = location["physicalLocation"]["artifactLocation"]["uri"]
        same = (uri, item["code"], _POSITION.sub(r"\1 N", item["message"]))
        repeat = self._seen.get(same, 0)
        self._seen[same] = repeat + 1
        sarif_result["partialFingerprints"] = {
            FINGERPRINT_KEY: fingerprint(uri, item["code"], item["message"], repeat)
        }
        text = json.dumps(sarif_result, indent=2, ensure_ascii=True).replace("\n", "\n        ")
        text = json_log_safe(text)
        self._out.write(f"{',' if self._written else ''}\n        {text}")
        self._written += 1

    def result(self, result: dict[str, Any]) -> None:
        """Write each error and warning of one checked skill."""
        # Identical findings are told apart by their order within one skill, so the
        # list of what was seen is kept per skill, not per run.
        self._seen.clear()
        for finding in _findings(result):
            self._write(*finding)

    def skipped(self, entry: dict[str, Any]) -> None:
        """Write one skipped entry: an error when skips fail the run, else a warning."""
        self._seen.clear()
        self._write(*_skipped_finding(entry))

    def close(self) -> None:
        """End the results array and the document."""
        self._out.write(("\n      ]" if self._written else "]") + self._tail + "\n")
