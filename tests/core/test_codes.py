"""One table of error codes (``skillguard._core.codes``), and the code held to it.

The source is walked with ``ast``: every place an error is built with a code, and every
audit record given a ``code``, must use a code of the table (under the kind of the class
built, where the class is known), and every code of the table must be built somewhere.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path
from typing import TYPE_CHECKING

import skillguard
from skillguard._core.codes import ERROR_CODES, KINDS, RECORD_CODES, markdown_table
from skillguard._core.errors import SkillError

if TYPE_CHECKING:
    from collections.abc import Iterator

SRC = Path(skillguard.__file__).resolve().parent

# Helpers that build an error from a code given as their first argument, and the kind
# of what they build. ``error`` is the method of the two field checkers (a skill's and
# an agent file's frontmatter); elsewhere ``error(message)`` is argparse's, no code.
HELPERS = {"_fail": "malformed", "_refuse": "malformed", "_os_failure": "audit"}
ERROR_METHOD_MODULES = {"_skills/fields.py", "_agents/parse.py"}
# ``StrictJSONError`` is a ValueError of the sans-IO JSON reader; its one caller turns
# it into a ``MalformedSkillError`` with the same code.
FOREIGN_CLASSES = {"StrictJSONError": "malformed"}
# Codes a function returns for its caller to build the error with: the function, its
# module and kind, and the callers' variable that holds the code it returned.
CODE_SOURCES = {"hidden_in_body": ("_skills/document.py", "malformed", "code")}
CODE_SOURCE_CALLERS = {"_skills/fields.py", "_agents/parse.py"}
# Calls that give an audit record a code at this position (``code=`` is seen anywhere).
RECORD_CODE_POSITIONS = {"_outcome": 2}
# Calls with a ``code=`` that is neither an error's nor an audit record's.
OTHER_CODES = {
    "LogSetFinding": "a finding of verify_logs (same_log_id), README's audit section",
    "InstallFinding": "a finding of agent install (README's agent install section)",
}
# Every function with a parameter named ``code`` is one of the above, or does not build
# an error (what it is for, to keep the walk honest when a helper is added).
NOT_ERROR_BUILDERS = {
    "_valid_fields": "checks an error's fields",
    "__init__": "SkillError's and StrictJSONError's own",
    "input_error": "checked as a call: its kind is its first argument",
    "add": "_core/text.py: a tool rule's problem list",
    "skip": "_skills/discover.py: a skipped entry (skip codes)",
    "warn": "a warning (README's warning codes, tests/test_docs.py)",
    "_outcome": "an audit record's code (RECORD_CODE_POSITIONS)",
    "_rule": "_cli/ci.py: a SARIF rule for a code",
    "_failed": "_cli/agent_compose.py: a JSON result for an error already built",
    "drift": "_agents/install.py: an InstallFinding of --check (OTHER_CODES)",
    "note": "_agents/install_plan.py: an InstallFinding note (OTHER_CODES)",
    "_conflict": "_agents/install.py: an InstallFinding conflict (OTHER_CODES)",
    "_set_document": "_cli/audit.py: a JSON document of an exit status already decided",
    "fingerprint": "_cli/ci.py: a SARIF result's fingerprint over a code already reported",
}


def _error_kinds() -> dict[str, str]:
    """Every error class of skillguard by name, with its kind (all modules imported)."""
    for module in pkgutil.walk_packages([str(SRC)], prefix="skillguard."):
        if module.name != "skillguard.__main__":  # runs the command line
            importlib.import_module(module.name)
    kinds: dict[str, str] = {}
    todo: list[type[SkillError]] = [SkillError]
    while todo:
        cls = todo.pop()
        kinds[cls.__name__] = cls.kind
        todo.extend(cls.__subclasses__())
    return {**kinds, **FOREIGN_CLASSES}


def _calls() -> Iterator[tuple[str, ast.Call, ast.AST | None]]:
    """Every call in src/, with its module and the function that holds it."""
    for path in sorted(SRC.rglob("*.py")):
        module = path.relative_to(SRC).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        parents: dict[ast.AST, ast.AST] = {}
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                parents[child] = node
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                holder: ast.AST | None = parents.get(node)
                while holder is not None and not isinstance(
                    holder, (ast.FunctionDef, ast.AsyncFunctionDef)
                ):
                    holder = parents.get(holder)
                yield module, node, holder


def _name(call: ast.Call) -> str | None:
    func = call.func
    return func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)


def _argument(call: ast.Call, position: int) -> ast.expr | None:
    if len(call.args) > position:
        return call.args[position]
    return next((k.value for k in call.keywords if k.arg == "code"), None)


def _literals(node: ast.expr) -> list[str] | None:
    """The codes a literal argument spells (both branches of ``a if c else b``), or
    ``None`` when it is not a literal."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.IfExp):
        branches = [_literals(node.body), _literals(node.orelse)]
        if all(branch is not None for branch in branches):
            return [code for branch in branches if branch for code in branch]
    return None


def _passed_through(node: ast.expr, holder: ast.AST | None) -> bool:
    """An existing error's code (``exc.code``: checked where that error was built), or
    a parameter of the enclosing helper (its callers are checked)."""
    if isinstance(node, ast.Attribute) and node.attr in ("code", "kind"):
        return True
    if isinstance(node, ast.Name) and isinstance(holder, (ast.FunctionDef, ast.AsyncFunctionDef)):
        arguments = holder.args
        names = {a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)}
        return node.id in names
    return False


def _builds() -> tuple[set[tuple[str, str]], list[str]]:
    """The (kind, code) pairs built with literal codes, and every site that breaks the
    rules (a code outside the table, or one that is neither a literal nor passed on)."""
    kinds = _error_kinds()
    table = {(row.kind, row.code) for row in ERROR_CODES}
    built: set[tuple[str, str]] = set()
    problems: list[str] = []
    for module, call, holder in _calls():
        name = _name(call)
        where = f"{module}:{call.lineno} {name}"
        if name == "input_error":
            kind_node, code_node = call.args[0], call.args[1]
            kind_codes, codes = _literals(kind_node), _literals(code_node)
            if kind_codes is None or codes is None:
                if not (_passed_through(kind_node, holder) and _passed_through(code_node, holder)):
                    problems.append(f"{where}: kind and code neither literal nor passed on")
                continue
            pairs = [(kind, code) for kind in kind_codes for code in codes]
        else:
            if name in kinds and name[0].isupper():
                kind = kinds[name]
            elif name in HELPERS:
                kind = HELPERS[name]
            elif name == "error" and module in ERROR_METHOD_MODULES:
                kind = "malformed"
            else:
                continue
            node = _argument(call, 0)
            if node is None:
                problems.append(f"{where}: no code")
                continue
            codes = _literals(node)
            if codes is None:
                returned = (
                    module in CODE_SOURCE_CALLERS
                    and isinstance(node, ast.Name)
                    and node.id == "code"
                )
                if not (_passed_through(node, holder) or returned):
                    problems.append(f"{where}: a code neither literal nor passed on")
                continue
            pairs = [(kind, code) for code in codes]
        for pair in pairs:
            built.add(pair)
            if pair not in table:
                problems.append(f"{where}: {pair[0]}/{pair[1]} is not in the table")
    return built, problems


def test_every_error_is_built_with_a_code_of_its_kind_from_the_table() -> None:
    built, problems = _builds()
    assert len(built) > 100  # the walk sees the raise sites at all
    assert problems == []


def test_the_codes_a_function_returns_are_in_the_table() -> None:
    table = {(row.kind, row.code) for row in ERROR_CODES}
    for function, (module, kind, variable) in CODE_SOURCES.items():
        tree = ast.parse((SRC / module).read_text(encoding="utf-8"))
        definition = next(
            node
            for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef) and node.name == function
        )
        assigned = [
            node.value.value
            for node in ast.walk(definition)
            if isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == variable for t in node.targets)
            and isinstance(node.value, ast.Constant)
        ]
        assert assigned
        assert {(kind, code) for code in assigned} <= table


def test_every_code_of_the_table_is_built_somewhere() -> None:
    built, _ = _builds()
    assert {(row.kind, row.code) for row in ERROR_CODES} - built == set()


def test_every_record_code_is_in_the_tables_and_every_record_only_code_is_used() -> None:
    known = {row.code for row in ERROR_CODES} | {row.code for row in RECORD_CODES}
    used: set[str] = set()
    problems = []
    for module, call, holder in _calls():
        name = _name(call)
        if name in OTHER_CODES:
            continue
        node = next((k.value for k in call.keywords if k.arg == "code"), None)
        position = RECORD_CODE_POSITIONS.get(name or "")
        if node is None and position is not None and len(call.args) > position:
            node = call.args[position]
        if node is None:
            continue
        codes = _literals(node)
        if codes is None:
            if not _passed_through(node, holder) and not isinstance(node, ast.Subscript):
                problems.append(
                    f"{module}:{call.lineno}: a record code neither literal nor passed on"
                )
            continue
        used.update(codes)
        problems += [f"{module}:{call.lineno}: {code}" for code in codes if code not in known]
    assert problems == []
    assert {row.code for row in RECORD_CODES} - used == set()
    assert not {row.code for row in RECORD_CODES} & {row.code for row in ERROR_CODES}


def test_every_function_taking_a_code_is_classified() -> None:
    # A new helper that builds errors from a ``code`` parameter must join HELPERS (so
    # its callers are checked) or say here why it builds none.
    taking = set()
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                arguments = node.args
                if any(a.arg == "code" for a in (*arguments.args, *arguments.kwonlyargs)):
                    taking.add(node.name)
    assert taking - {*HELPERS, "error", *NOT_ERROR_BUILDERS} == set()


def test_the_table_is_well_formed() -> None:
    pairs = [(row.kind, row.code) for row in ERROR_CODES]
    assert len(pairs) == len(set(pairs))
    assert {row.kind for row in ERROR_CODES} == set(KINDS)
    # Rows are grouped by kind, in the order of KINDS (as the README shows them).
    order = [KINDS.index(row.kind) for row in ERROR_CODES]
    assert order == sorted(order)
    for row in (*ERROR_CODES, *RECORD_CODES):
        assert row.code.isidentifier()
        assert row.code == row.code.lower()
        assert row.meaning
        assert row.meaning == row.meaning.strip()
        assert "\n" not in row.meaning
        assert "|" not in row.meaning  # one Markdown table cell
    # Every error class's kind is a kind of the table (the root's "error" aside).
    assert set(_error_kinds().values()) - {"error"} <= set(KINDS)


def test_the_markdown_table_has_one_row_per_code() -> None:
    lines = markdown_table().splitlines()
    assert lines[:2] == ["| kind | code | meaning |", "|---|---|---|"]
    assert len(lines) == 2 + len(ERROR_CODES)
    assert (
        lines[2]
        == f"| {ERROR_CODES[0].kind} | `{ERROR_CODES[0].code}` | {ERROR_CODES[0].meaning} |"
    )
