"""The folder tree is the architecture: floors, one-way imports, no loops, small rooms.

Data flows one way, down the floors (``shared`` picture in the README's "Layout"):
``_core`` (values and rules) < ``_fs`` (the file-system edge) < ``_audit`` (the log) <
``_skills`` (the skill line) < ``_agents`` (the agent line, which reuses the skill line's
parser and approval) < ``_swarm`` (the facade) < ``_cli`` (the command line) < the public
packages. A module may import from its own floor or a lower one, never a higher one, and
the modules' run-time imports (those outside ``if TYPE_CHECKING:``, including imports
inside functions) form no loop.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src" / "skillguard"
FLOORS = ["_core", "_fs", "_audit", "_skills", "_agents", "_swarm", "_cli"]
PUBLIC_FLOOR = len(FLOORS)
MAX_LINES = 600


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


MODULES = {_module_name(p): p for p in sorted(SRC.rglob("*.py"))}


def floor(module: str) -> int:
    parts = module.split(".")
    if len(parts) > 1 and parts[1] in FLOORS:
        return FLOORS.index(parts[1])
    return PUBLIC_FLOOR


def _typing_only(tree: ast.Module) -> set[int]:
    return {
        id(node)
        for block in ast.walk(tree)
        if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test)
        for node in ast.walk(block)
    }


def _resolve(importer: str, node: ast.ImportFrom | ast.Import) -> set[str]:
    found: set[str] = set()
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name.split(".")[0] == "skillguard":
                found.add(alias.name)
        return found
    if node.level:
        package = (
            importer
            if importer in MODULES and MODULES[importer].name == "__init__.py"
            else importer.rsplit(".", 1)[0]
        )
        for _ in range(node.level - 1):
            package = package.rsplit(".", 1)[0]
        base = f"{package}.{node.module}" if node.module else package
    elif node.module and node.module.split(".")[0] == "skillguard":
        base = node.module
    else:
        return found
    for alias in node.names:
        candidate = f"{base}.{alias.name}"
        found.add(candidate if candidate in MODULES else base)
    return found


def imports(module: str) -> set[str]:
    """The skillguard modules ``module`` imports at run time."""
    tree = ast.parse(MODULES[module].read_text())
    skip = _typing_only(tree)
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in skip:
            found |= _resolve(module, node)
    # Importing a submodule runs its package's __init__ first: a parent is no edge.
    return {m for m in found if m in MODULES and not module.startswith(m + ".")} - {module}


GRAPH = {module: imports(module) for module in MODULES}


# The one edge up a floor: ``skillguard mcp`` is the front of the public MCP server, an
# optional extra imported only when that command runs.
UPWARD_ALLOWED = {("skillguard._cli.serve_mcp", "skillguard.mcp")}


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_import_goes_up_a_floor(module: str) -> None:
    upward = sorted(
        m for m in GRAPH[module] if floor(m) > floor(module) and (module, m) not in UPWARD_ALLOWED
    )
    assert upward == [], f"{module} imports {upward} from a higher floor"


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected component of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_loop() -> None:
    assert _cycles(GRAPH) == []


def test_the_loop_check_can_fail() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_the_floor_check_can_fail() -> None:
    assert floor("skillguard._core.errors") < floor("skillguard._swarm.loader")
    assert floor("skillguard.agents") == PUBLIC_FLOOR
    assert "skillguard._swarm.handle" in GRAPH["skillguard._swarm.loader"]


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_is_over_600_lines(module: str) -> None:
    lines = len(MODULES[module].read_text().splitlines())
    assert lines <= MAX_LINES, f"{module}: {lines} lines"


# -- the file-system edge, by trust direction -------------------------------------------
# A reviewer audits every path by which hostile bytes enter without reading the write
# path: the modules that read untrusted files never write, and the modules that write the
# operator's files never list or walk a tree. Every module of ``_fs`` is on one side.
FS = SRC / "_fs"
UNTRUSTED_READS = ("containment", "errors", "paths", "walk")
OPERATOR_READS = ("operator",)
OPERATOR_WRITES = ("install", "terminal", "write")
# All a module that never writes may take from ``os``: read-only open flags, and calls that
# open, read, stat or list; none creates, changes or removes anything. An allow-list, so
# that a new call is a decision.
READ_ONLY_OS = frozenset(
    {
        "DirEntry",
        "O_CLOEXEC",
        "O_DIRECTORY",
        "O_NOCTTY",
        "O_NOFOLLOW",
        "O_NONBLOCK",
        "O_PATH",
        "O_RDONLY",
        "PathLike",
        "close",
        "dup",
        "fsencode",
        "fspath",
        "fstat",
        "open",
        "path",
        "pread",
        "read",
        "readlink",
        "scandir",
        "sep",
        "stat",
        "stat_result",
        "strerror",
        "supports_dir_fd",
        "supports_fd",
        "supports_follow_symlinks",
    }
)
# Standard modules that write, or open files by other means than os.open.
NOT_FOR_READERS = frozenset({"fcntl", "io", "pathlib", "shutil", "subprocess", "tempfile"})
LISTING_CALLS = frozenset({"fwalk", "listdir", "scandir", "walk"})
# The operator's side lists one folder: the one a file is written in, for the temporaries
# dead writers left there (names of one pattern, nothing opened through them).
OPERATOR_LISTINGS = {"write": frozenset({"sweep_temporaries"})}


def _top_level_uses(tree: ast.Module) -> list[tuple[str, ast.AST]]:
    """Every node of *tree* with the name of the top-level definition it is in."""
    return [
        (top.name if isinstance(top, (ast.FunctionDef, ast.ClassDef)) else "<module>", node)
        for top in tree.body
        for node in ast.walk(top)
    ]


def _imported(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom) and node.module:
        return [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
    return []


def _read_side_problems(source: str) -> list[str]:
    """What in *source* could write: an ``os`` name off the allow-list, ``open()``, a
    module that writes, or an import of the operator's side."""
    problems = []
    for _, node in _top_level_uses(ast.parse(source)):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if node.value.id == "os" and node.attr not in READ_ONLY_OS:
                problems.append(f"os.{node.attr}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id == "open":
                problems.append("open()")
        elif isinstance(node, ast.Import) and any(a.asname for a in node.names):
            problems.append("import as")  # os under another name escapes the check
        elif isinstance(node, ast.ImportFrom) and node.module == "os":
            problems.append("from os import")
        for name in _imported(node):
            if name.split(".")[0] in NOT_FOR_READERS:
                problems.append(f"import {name}")
            parts = [*name.split("."), ""]
            if parts[:2] == ["skillguard", "_fs"] and parts[2] not in (
                "",
                *UNTRUSTED_READS,
                *OPERATOR_READS,
            ):
                problems.append(f"import {name}")
    return problems


def _write_side_problems(source: str, listings: frozenset[str] = frozenset()) -> list[str]:
    """What in *source* lists or walks a tree: openat2, ``O_PATH``, the untrusted side's
    walk or reads, or a listing outside the definitions in *listings*."""
    problems = []
    for where, node in _top_level_uses(ast.parse(source)):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if node.value.id == "os" and node.attr == "O_PATH":
                problems.append("os.O_PATH")
            if node.value.id == "os" and node.attr in LISTING_CALLS and where not in listings:
                problems.append(f"os.{node.attr} in {where}")
        named = (
            node.id
            if isinstance(node, ast.Name)
            else node.attr
            if isinstance(node, ast.Attribute)
            else node.name
            if isinstance(node, (ast.FunctionDef, ast.alias))
            else ""
        )
        if "openat2" in named.lower():
            problems.append(named)
        for name in _imported(node):
            parts = name.split(".")
            if parts[0] == "ctypes" or parts[:3] in (
                ["skillguard", "_fs", "walk"],
                ["skillguard", "_fs", "containment"],
            ):
                problems.append(f"import {name}")
    return problems


def test_every_file_system_module_is_on_one_side() -> None:
    modules = sorted(p.stem for p in FS.glob("*.py") if p.stem != "__init__")
    assert modules == sorted(UNTRUSTED_READS + OPERATOR_READS + OPERATOR_WRITES)


@pytest.mark.parametrize("module", UNTRUSTED_READS + OPERATOR_READS)
def test_the_reading_modules_never_write(module: str) -> None:
    assert _read_side_problems((FS / f"{module}.py").read_text()) == []


@pytest.mark.parametrize("module", OPERATOR_READS + OPERATOR_WRITES)
def test_the_operator_modules_never_list_or_walk(module: str) -> None:
    source = (FS / f"{module}.py").read_text()
    assert _write_side_problems(source, OPERATOR_LISTINGS.get(module, frozenset())) == []


def test_untrusted_reads_and_operator_writes_live_apart() -> None:
    # The two sides hold what they are named for: the checks above pass on something.
    read = _top_level_uses(ast.parse((FS / "containment.py").read_text()))
    write = _top_level_uses(ast.parse((FS / "write.py").read_text()))
    assert {"SafeRoot", "open_trusted_target"} <= {where for where, _ in read}
    assert {"AppendFile", "OutputFolder", "write_atomic", "write_new_file", "FileLock"} <= {
        where for where, _ in write
    }


def test_the_apart_checks_can_fail() -> None:
    assert _read_side_problems("import os\nos.rename('a', 'b')\n") == ["os.rename"]
    assert _read_side_problems("import os\nos.open('a', os.O_WRONLY)\n") == ["os.O_WRONLY"]
    assert _read_side_problems("f = open('a', 'w')\n") == ["open()"]
    assert _read_side_problems("from os import write\n") == ["from os import"]
    assert _read_side_problems("import shutil\n") == ["import shutil"]
    assert _read_side_problems("from skillguard._fs.write import AppendFile\n") == [
        "import skillguard._fs.write",
        "import skillguard._fs.write.AppendFile",
    ]
    listing = "import os\ndef f():\n    return os.scandir('.')\n"
    assert _write_side_problems(listing) == ["os.scandir in f"]
    assert _write_side_problems(listing, frozenset({"f"})) == []
    assert sorted(_write_side_problems("from skillguard._fs.walk import _openat2\n")) == [
        "_openat2",
        "import skillguard._fs.walk",
        "import skillguard._fs.walk._openat2",
    ]
    assert _write_side_problems("import os\nflags = os.O_PATH\n") == ["os.O_PATH"]
