"""The parsing core never touches the file system (the sans-IO rule)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src" / "skillguard"
CORE = ["_errors.py", "_limits.py", "_model.py", "_parse.py", "_yaml.py"]
BANNED_MODULES = {"os", "io", "pathlib", "shutil", "socket", "subprocess", "tempfile", "glob"}
BANNED_CALLS = {"open", "exec", "eval", "compile", "__import__"}


def _violations(source: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.split(".")[0] in BANNED_MODULES]
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.module.split(".")[0] in BANNED_MODULES:
                found.append(node.module)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in BANNED_CALLS
        ):
            found.append(f"{node.func.id}()")
    return found


@pytest.mark.parametrize("module", CORE)
def test_core_module_has_no_file_system_access(module: str) -> None:
    assert _violations((SRC / module).read_text()) == []


def test_the_check_can_fail() -> None:
    assert _violations("import os\nfrom pathlib import Path\nopen('x')\n") == [
        "os",
        "pathlib",
        "open()",
    ]


def test_only_the_edge_module_imports_os_for_io() -> None:
    users = sorted(p.name for p in SRC.glob("_*.py") if "import os" in p.read_text())
    assert users == ["_cli.py", "_fs.py"]
    # The command line uses os only to silence stdout after a broken pipe.
    tree = ast.parse((SRC / "_cli.py").read_text())
    used = {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "os"
    }
    assert used == {"open", "devnull", "O_WRONLY", "dup2", "close"}
