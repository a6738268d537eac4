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


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_import_goes_up_a_floor(module: str) -> None:
    upward = sorted(m for m in GRAPH[module] if floor(m) > floor(module))
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


def test_untrusted_reads_and_operator_writes_live_apart() -> None:
    # A reviewer audits every path by which hostile bytes enter without reading the
    # write path: the reading module never writes, the writing module never lists.
    read = ast.unparse(ast.parse((SRC / "_fs" / "containment.py").read_text()))
    write = ast.unparse(ast.parse((SRC / "_fs" / "write.py").read_text()))
    for call in ("os.replace", "os.rename", "O_APPEND", "O_CREAT", "os.write", "os.fsync"):
        assert call not in read, call
    for call in ("os.scandir", "openat2", "O_PATH"):
        assert call not in write, call
