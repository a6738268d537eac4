"""The parsing core never touches the file system (the sans-IO rule)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src" / "skillguard"
# Every module of the core floor, and the parsers and pure rules above it.
CORE = [
    *sorted(p.relative_to(SRC).as_posix() for p in (SRC / "_core").glob("*.py")),
    "_skills/document.py",
    "_skills/fields.py",
    "_skills/names.py",
    "_skills/parse.py",
    "_agents/compose_emit.py",
    "_agents/compose_tokens.py",
    "_agents/parse.py",
    "_agents/envelope.py",
    "_agents/grant.py",
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


# What a module outside ``_fs`` may take from ``os``: path strings and the environment,
# nothing that opens, stats or lists a file.
PATH_STRINGS = {
    "PathLike",
    "environ",
    "environ.get",
    "fsencode",
    "fspath",
    "path",
    "path.abspath",
    "path.basename",
    "path.expanduser",
    "path.isabs",
    "path.join",
    "path.normpath",
    "path.split",
    "pathsep",
    "sep",
}
# The few that touch the file system outside ``_fs``, each for a stated reason.
OS_EXCEPTIONS = {
    # CI output makes paths relative to the checkout from strings alone; only the
    # checkout itself ($GITHUB_WORKSPACE, the operator's setting) is resolved.
    "_cli/ci.py": {"getcwd", "path.realpath"},
    # Overlapping PATHs are told apart by resolving each operator PATH (or a file PATH's
    # folder) once; nothing below a PATH is resolved (threat-model.md T270).
    "_cli/scan.py": {"path.realpath"},
    # The command line uses os only to silence stdout after a broken pipe or a failed
    # write, and to name the failure.
    "_cli/main.py": {"open", "devnull", "O_WRONLY", "dup2", "close", "strerror"},
    # A new audit log's log_created record names the process that created it.
    "_audit/log.py": {"getpid"},
    # Where an operator path lies (trusted arguments: the operator's agent folders and
    # trust store), judged step by step against the repository's place in the mount
    # table, from the working folder for a relative path.
    "_agents/place.py": {"getcwd", "path.lexists", "path.realpath"},
    # The gate skips an operator agent folder that does not exist (the operator's own
    # path, looked at before SafeRoot opens it).
    "_agents/operator.py": {"path.lexists"},
    # agent install looks for agents-native beside AGENTS_DIR (the operator's own path;
    # whatever is there, a symlink too, is then opened by SafeRoot and refused).
    "_cli/agent_install.py": {"path.dirname", "path.lexists"},
    # skillguard.testing writes the caller's own scratch trees (hostile on purpose).
    "testing/_workspaces.py": {
        "O_CLOEXEC",
        "O_CREAT",
        "O_EXCL",
        "O_NOFOLLOW",
        "O_WRONLY",
        "close",
        "ftruncate",
        "link",
        "lstat",
        "mkdir",
        "mkfifo",
        "open",
        "symlink",
        "write",
    },
}


# The modules of the file-system edge that open files (``_fs/__init__.py``); the rest of
# ``_fs`` (path strings, error mapping) is held to the same rule as every other module.
FILE_SYSTEM_EDGE = {
    "_fs/containment.py",
    "_fs/install.py",
    "_fs/operator.py",
    "_fs/terminal.py",
    "_fs/walk.py",
    "_fs/write.py",
}


def test_only_saferoot_touches_the_file_system() -> None:
    for path in sorted(SRC.rglob("*.py")):
        module = path.relative_to(SRC).as_posix()
        if module in FILE_SYSTEM_EDGE or not _imports_os_at_run_time(path.read_text()):
            continue
        extra = _os_attributes(module) - PATH_STRINGS - OS_EXCEPTIONS.get(module, set())
        assert extra == set(), (module, extra)


def test_the_file_system_check_can_fail() -> None:
    assert all((SRC / module).is_file() for module in FILE_SYSTEM_EDGE)
    assert "_fs/paths.py" not in FILE_SYSTEM_EDGE
    assert _imports_os_at_run_time((SRC / "_fs" / "paths.py").read_text())
    assert "stat" not in PATH_STRINGS
    assert all("scandir" not in allowed for allowed in OS_EXCEPTIONS.values())
