"""The documents stay true: every error code raised in src/ is in the docs' error table,
every audit event and command option is documented, and the README opens with the
commands CI runs."""

from __future__ import annotations

import argparse
import ast
import re
from pathlib import Path
from typing import TYPE_CHECKING

from skillguard._cli.parser import build_parser

if TYPE_CHECKING:
    from collections.abc import Iterator

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src" / "skillguard"
DOCS = ROOT / "docs"
ERRORS_PAGE = DOCS / "reference" / "errors.md"
EVENTS_PAGE = DOCS / "reference" / "audit-events.md"


def _all_pages() -> str:
    """README.md and every page of the docs site, one after the other."""
    pages = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
    return "\n".join(page.read_text() for page in pages)


ERROR_CALLS = {
    "MalformedSkillError",
    "SkillContainmentError",
    "SkillNotFoundError",
    "SkillUsageError",
    "UnknownSkillError",
    "NotGrantedError",
    "ApprovalError",
    "ApprovalDeniedError",
    "ApprovalRequiredError",
    "PolicyError",
    "AuditError",
    "AgentNotFoundError",
    "_fail",
    "_refuse",
    "StrictJSONError",
    "error",
    "_os_failure",
}
WARNING_CALLS = {"SkillWarning", "warn"}


def _codes(calls: set[str]) -> set[str]:
    codes = set()
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            first = node.args[0]
            if name in calls:
                if isinstance(first, ast.Constant) and isinstance(first.value, str):
                    codes.add(first.value)
                elif isinstance(first, ast.IfExp):
                    codes |= {
                        n.value
                        for n in (first.body, first.orelse)
                        if isinstance(n, ast.Constant) and isinstance(n.value, str)
                    }
    return codes


def test_every_raised_error_code_is_documented() -> None:
    readme = ERRORS_PAGE.read_text()
    documented = set(re.findall(r"^\| \w+ \| `(\w+)` \|", readme, flags=re.MULTILINE))
    raised = _codes(ERROR_CALLS)
    assert raised - documented == set()
    assert documented - raised == set()


def test_every_warning_code_is_documented() -> None:
    readme = ERRORS_PAGE.read_text()
    line = next(line for line in readme.splitlines() if line.startswith("Warning codes:"))
    paragraph = readme[readme.index(line) :].split("\n\n")[0]
    documented = set(re.findall(r"`(\w+)`", paragraph))
    assert _codes(WARNING_CALLS) == documented


def test_readme_opens_with_the_two_commands() -> None:
    blocks = re.findall(r"```sh\n(.+?)\n```", (ROOT / "README.md").read_text(), flags=re.DOTALL)
    assert "skillguard validate examples/skills" in blocks[0]
    assert blocks[1].endswith('/bin/python" -m pytest')
    ci = (ROOT / ".ci" / "run").read_text()
    assert blocks[1] in ci


def test_ci_and_tox_test_every_declared_python() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text()
    declared = re.findall(r'"Programming Language :: Python :: (3\.\d+)"', pyproject)
    assert declared == ["3.10", "3.11", "3.12", "3.13"]
    assert f'requires-python = ">={declared[0]}"' in pyproject
    tox = (ROOT / "tox.ini").read_text()
    env_list = re.search(r"^env_list = (.+)$", tox, flags=re.MULTILINE)
    assert env_list is not None
    envs = [env.strip() for env in env_list.group(1).split(",")]
    assert [env for env in envs if env.startswith("py")] == [
        "py" + version.replace(".", "") for version in declared
    ]
    assert {"lint", "type", "fuzz"} <= set(envs)


def test_threat_ids_cited_by_tests_exist() -> None:
    model = (ROOT / "threat-model.md").read_text()
    defined = set(re.findall(r"^\*\*(T\d+)\.", model, flags=re.MULTILINE))
    cited = set()
    for path in (ROOT / "tests").glob("test_*.py"):
        cited |= {m.upper() for m in re.findall(r"def test_(t\d+)_", path.read_text())}
    assert cited
    assert cited - defined == set()


# The calls that name an audit event, and which positional argument is the name.
EVENT_CALLS = {"emit": 0, "_deny": 0, "_record": 0, "_outcome": 1}


def _emitted_events() -> set[str]:
    """Every audit event name the library can emit: a string literal given to an emit
    helper as the event, or assigned to a variable named ``event`` (``_deny`` turns a
    denial into ``containment_violation`` or ``malformed_skill`` that way)."""
    events = set()
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                func = node.func
                name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
                index = EVENT_CALLS.get(name) if isinstance(name, str) else None
                if index is not None and len(node.args) > index:
                    value = node.args[index]
                    if isinstance(value, ast.Constant) and isinstance(value.value, str):
                        events.add(value.value)
            elif (
                isinstance(node, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == "event" for t in node.targets)
                and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)
            ):
                events.add(node.value.value)
    return events


def test_the_docs_list_every_audit_event_the_library_emits() -> None:
    table = EVENTS_PAGE.read_text()
    documented = set(re.findall(r"^\| `([a-z_]+)` \|", table, flags=re.MULTILINE))
    emitted = _emitted_events()
    assert "load_granted" in emitted  # the scan sees the call sites at all
    assert emitted - documented == set()
    assert documented - emitted == set()


def _commands(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every command of the CLI that takes options, as (its words, its parser)."""
    subcommands = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subcommands:
        yield path, parser
    for action in subcommands:
        for name, sub in action.choices.items():
            yield from _commands(sub, (*path, name))


def _synopses() -> dict[tuple[str, ...], set[str]]:
    """The options of each synopsis in the README or the docs: a line in a code block
    that starts with ``skillguard``, and the indented lines that continue it, keyed by
    command words."""
    readme = _all_pages()
    found: dict[tuple[str, ...], set[str]] = {}
    for block in re.findall(r"^```[a-z]*\n(.*?)^```", readme, flags=re.MULTILINE | re.DOTALL):
        for synopsis in re.findall(r"^skillguard .*(?:\n[ \t]+.*)*", block, flags=re.MULTILINE):
            words = []
            for word in synopsis.split()[1:]:
                if not re.fullmatch(r"[a-z][a-z-]*", word):
                    break
                words.append(word)
            found.setdefault(tuple(words), set()).update(re.findall(r"--[a-z][a-z-]*", synopsis))
    return found


def _options(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {
        option: action
        for action in parser._actions
        if not isinstance(action, argparse._HelpAction)
        for option in action.option_strings
        if option.startswith("--")
    }


def test_every_command_option_is_in_its_readme_synopsis_with_help_text() -> None:
    synopses = _synopses()
    for words, parser in _commands(build_parser()):
        if not words:
            continue  # the top level has --version only
        for action in parser._actions:
            if not isinstance(action, argparse._HelpAction):
                assert action.help, f"skillguard {' '.join(words)} {action.dest}: no help text"
        options = _options(parser)
        first = next((a for a in parser._actions if not a.option_strings), None)
        actions = tuple(first.choices or ()) if first is not None else ()
        if actions and (*words, actions[0]) in synopses:
            # One parser, several actions (``audit verify|summarize|report``): an option
            # whose help opens with "verify, report: " is for those actions only.
            for choice in actions:
                key = (*words, choice)
                wanted = set()
                for option, action in options.items():
                    scope = re.match(r"([a-z]+(?:, [a-z]+)*): ", action.help or "")
                    if scope is None or choice in scope.group(1).split(", "):
                        wanted.add(option)
                assert synopses[key] == wanted, f"skillguard {' '.join(words)} {choice}"
            continue
        assert words in synopses, f"skillguard {' '.join(words)} has no README synopsis"
        assert synopses[words] == set(options), words


def test_the_readme_error_table_is_the_code_table() -> None:
    # The table is written once, in skillguard._core.codes; the README shows it as is.
    # To update the README: print(skillguard._core.codes.markdown_table()).
    from skillguard._core.codes import markdown_table

    readme = ERRORS_PAGE.read_text()
    start = readme.index("| kind | code | meaning |")
    end = readme.index("\n\n", start) + 1
    assert readme[start:end] == markdown_table()


def test_the_readme_changed_codes_are_no_longer_raised() -> None:
    from skillguard._core.codes import ERROR_CODES

    readme = ERRORS_PAGE.read_text()
    start = readme.index("\nChanged codes")
    changes = readme[start : readme.index("\n\n", readme.index("\n- ", start))]
    named = set(re.findall(r"`(\w+)/(\w+)`", changes))
    table = {(row.kind, row.code) for row in ERROR_CODES}
    renamed = {
        ("unknown", "not_authorized"),
        ("unknown", "user_invocation_only"),
        ("unknown", "not_user_invocable"),
        ("not_found", "missing"),  # for a skill name: still a code, for a path
    }
    assert renamed <= named
    assert renamed - table == renamed - {("not_found", "missing")}
    codes = {row.code for row in ERROR_CODES}
    json_names = {"json_duplicate_key", "json_too_deep", "json_too_large", "json_bad_encoding"}
    json_names |= {"json_not_object", "schema_missing_field", "schema_wrong_type"}
    json_names |= {"schema_empty_field", "schema_unknown_field"}
    assert json_names <= set(re.findall(r"`(\w+)`", changes))
    assert json_names.isdisjoint(codes)
    # Every new name the list gives is a code of the table.
    assert {pair for pair in named if pair not in renamed} <= table


# -- the README and the docs site ------------------------------------------------------

_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _documents() -> list[Path]:
    """README.md, every page of the docs site, and the documents the site includes."""
    included = [ROOT / name for name in ("SECURITY.md", "threat-model.md", "CHANGELOG.md")]
    return [ROOT / "README.md", *sorted(DOCS.rglob("*.md")), *included]


def test_the_readme_fits_on_a_few_screens() -> None:
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= 250, f"README.md has {len(lines)} lines: move detail into docs/"


def test_every_relative_link_resolves_to_a_file_in_the_repository() -> None:
    broken = []
    checked = 0
    for document in _documents():
        for target in _LINK.findall(document.read_text()):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue  # a URL, or an anchor of the same page (mkdocs --strict checks those)
            path = (document.parent / target.split("#", 1)[0]).resolve()
            checked += 1
            if not path.is_file() or ROOT not in path.parents:
                broken.append(f"{document.relative_to(ROOT)}: {target}")
    assert checked > 20  # the pattern sees the links at all
    assert broken == []


def test_the_readme_and_docs_name_formats_by_their_public_names() -> None:
    for document in [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]:
        text = document.read_text()
        assert re.search(r"seed [0-9]", text, flags=re.IGNORECASE) is None, document
        assert "ARCHITECTURE" not in text, document


def test_every_docs_page_is_in_the_site_navigation() -> None:
    config = (ROOT / "mkdocs.yml").read_text()
    pages = {str(page.relative_to(DOCS)) for page in DOCS.rglob("*.md")}
    listed = set(re.findall(r"^\s+- (?:[^:\n]+: )?([\w/.-]+\.md)$", config, flags=re.MULTILINE))
    assert pages == listed


def test_the_docs_include_the_security_documents_instead_of_copying_them() -> None:
    for page, source in (
        ("explanation/threat-model.md", "threat-model.md"),
        ("explanation/security.md", "SECURITY.md"),
        ("explanation/benchmarks.md", "benchmarks/README.md"),
        ("changelog.md", "CHANGELOG.md"),
    ):
        assert (DOCS / page).read_text() == f'--8<-- "{source}"\n'
        assert (ROOT / source).is_file()


def test_tox_and_ci_build_the_docs_with_warnings_as_errors() -> None:
    tox = (ROOT / "tox.ini").read_text()
    section = tox.split("[testenv:docs]", 1)[1].split("\n[", 1)[0]
    assert "mkdocs build --strict" in section
    assert "tests/docs_reference_check.py" in section
    ci = (ROOT / ".ci" / "run").read_text()
    assert 'mkdocs" build --quiet --strict' in ci
    assert "tests/docs_reference_check.py" in ci
    # The docs extra is pinned, as the gate tools are.
    pyproject = (ROOT / "pyproject.toml").read_text()
    extra = pyproject.split("\ndocs = [", 1)[1].split("]", 1)[0]
    pins = re.findall(r'"([\w-]+)(==[\w.]+)?"', extra)
    assert pins
    assert all(version for _, version in pins), pins


def test_the_cli_reference_carries_every_commands_generated_help() -> None:
    # docs/hooks.py is the MkDocs hook that fills the marker when the site is built.
    import importlib.util

    spec = importlib.util.spec_from_file_location("docs_hooks", DOCS / "hooks.py")
    assert spec is not None
    assert spec.loader is not None
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    page = (DOCS / "reference" / "cli.md").read_text()
    assert hooks.MARKER in page
    built = hooks.on_page_markdown(page)
    assert hooks.MARKER not in built
    for words, _ in _commands(build_parser()):
        assert f"### `{' '.join(('skillguard', *words))}`\n" in built, words
    assert built.count("\nexample:\n  skillguard ") == len(hooks.commands(build_parser()))


def test_every_docs_page_has_one_title() -> None:
    for page in sorted(DOCS.rglob("*.md")):
        text = page.read_text()
        if text.startswith("--8<--"):
            continue  # an included document: its own title
        prose = re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL)
        titles = re.findall(r"^# .+$", prose, flags=re.MULTILINE)
        assert len(titles) == 1, (page, titles)
