"""The parsing core never touches the file system (the sans-IO rule)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src" / "skillguard"
CORE = [
    "_errors.py",
    "_limits.py",
    "_model.py",
    "_parse.py",
    "_text.py",
    "_tools.py",
    "_yaml.py",
    "_agents/_parse.py",
    "_agents/_envelope.py",
    "_agents/_grant.py",
]
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


def _os_attributes(module: str) -> set[str]:
    tree = ast.parse((SRC / module).read_text())
    used = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if node.value.id == "os":
                used.add(node.attr)
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Attribute)
            and isinstance(node.value.value, ast.Name)
            and node.value.value.id == "os"
        ):
            used.add(f"{node.value.attr}.{node.attr}")
    return used


def _imports_os_at_run_time(source: str) -> bool:
    tree = ast.parse(source)
    typing_only = {
        id(node)
        for block in ast.walk(tree)
        if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test)
        for node in ast.walk(block)
    }
    return any(
        isinstance(node, ast.Import)
        and any(alias.name == "os" for alias in node.names)
        and id(node) not in typing_only
        for node in ast.walk(tree)
    )


def test_only_saferoot_touches_the_file_system() -> None:
    users = sorted(p.name for p in SRC.glob("_*.py") if _imports_os_at_run_time(p.read_text()))
    # _fs reads beneath held descriptors; _fs_write writes the operator's own files.
    assert users == ["_ci.py", "_cli.py", "_discover.py", "_fs.py", "_fs_write.py"]
    # CI output makes paths relative to the checkout from strings alone; only the
    # checkout itself ($GITHUB_WORKSPACE, the operator's setting) is resolved.
    assert _os_attributes("_ci.py") == {
        "environ",
        "environ.get",
        "getcwd",
        "path",
        "fsencode",
        "path.isabs",
        "path.join",
        "path.normpath",
        "path.realpath",
    }
    # The command line uses os only to silence stdout after a broken pipe or a failed
    # write, and to name the failure.
    assert _os_attributes("_cli.py") == {
        "open",
        "devnull",
        "O_WRONLY",
        "dup2",
        "close",
        "strerror",
    }
    # Discovery uses os for path strings and the environment, never to open or stat.
    assert _os_attributes("_discover.py") <= {
        "environ",
        "fspath",
        "PathLike",
        "pathsep",
        "path",
        "path.join",
        "path.expanduser",
        "path.basename",
        "path.normpath",
        "path.abspath",
    }
