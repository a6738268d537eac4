"""The source distribution carries what its tests need.

A packager (a Linux distribution, conda-forge) builds from the sdist and runs its tests
there: ``conftest.py``, the strategies, the fixtures, the examples and fuzz corpora, and
the documents and CI files the tests keep in step with the code must all be in it
(``MANIFEST.in``). This test builds the sdist with the build backend itself (no network:
setuptools is installed with the ``test`` extra), checks its file list against the
files the tests read, and runs the tests that read the most of them from the unpacked
sdist, against the sdist's own source.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
from pathlib import Path

from tests.conftest import SDIST_SYMLINKS

ROOT = Path(__file__).resolve().parent.parent
# Folders whose every file the tests may read, and single files they read.
FOLDERS = (
    "tests",
    "examples",
    "fuzz",
    "benchmarks",
    "docs",
    ".ci",
    ".clusterfuzzlite",
    ".github",
)
FILES = (
    "README.md",
    "SECURITY.md",
    "threat-model.md",
    "LICENSE",
    "pyproject.toml",
    "tox.ini",
    "action.yml",
    "action-requirements.txt",
    ".pre-commit-hooks.yaml",
    "CHANGELOG.md",
    "mkdocs.yml",
)
# What a checkout holds that is no source: caches, coverage data, fuzzing leftovers.
_JUNK = ("__pycache__", ".hypothesis", ".pytest_cache", ".mypy_cache", ".ruff_cache")


def _junk(relative: Path) -> bool:
    name = relative.name
    return (
        any(part in _JUNK for part in relative.parts)
        or name.endswith((".pyc", ".pyo"))
        or name.startswith((".coverage", "crash-", "leak-", "timeout-"))
    )


def _build(out: Path) -> Path:
    code = "import sys, setuptools.build_meta as b; print(b.build_sdist(sys.argv[1]))"
    completed = subprocess.run(
        [sys.executable, "-c", code, str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    return out / completed.stdout.strip().splitlines()[-1]


def test_the_sdist_carries_what_its_tests_need(tmp_path: Path) -> None:
    sdist = _build(tmp_path / "dist")
    with tarfile.open(sdist) as archive:
        members = archive.getmembers()
        top = members[0].name.split("/")[0]
        names = {member.name.split("/", 1)[1] for member in members if "/" in member.name} - {""}
        assert all(member.isfile() or member.isdir() for member in members)
        # The "data" filter where this Python has it (3.10.12 and later): an archive
        # member cannot write outside the folder.
        if hasattr(tarfile, "data_filter"):
            archive.extractall(tmp_path / "unpacked", filter="data")
        else:  # pragma: no cover - older patch releases
            archive.extractall(tmp_path / "unpacked")  # noqa: S202
    wanted = set(FILES)
    for folder in FOLDERS:
        for path in (ROOT / folder).rglob("*"):
            relative = path.relative_to(ROOT)
            if path.is_file() and not _junk(relative):
                wanted.add(relative.as_posix())
    for path in (ROOT / "src" / "skillguard").rglob("*"):
        relative = path.relative_to(ROOT)
        if path.is_file() and not _junk(relative):
            wanted.add(relative.as_posix())
    assert wanted - names == set()
    # An sdist carries the file a symlink points at; tests/conftest.py puts each
    # symlink the tests need back, and knows every one of them.
    links = {
        path.relative_to(ROOT).as_posix(): os.readlink(path)
        for folder in FOLDERS
        for path in (ROOT / folder).rglob("*")
        if path.is_symlink()
    }
    assert links == SDIST_SYMLINKS
    for needed in ("tests/conftest.py", "tests/strategies.py", "examples/conftest.py"):
        assert needed in names
    assert [name for name in names if _junk(Path(name))] == []

    # The tests that read the documents, tox.ini, the fuzz build and the corpora, run
    # from the unpacked sdist against its own source.
    unpacked = tmp_path / "unpacked" / top
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--no-cov",
            "tests/test_docs.py",
            "tests/test_fuzz_build.py",
            "tests/test_examples.py",
        ],
        cwd=unpacked,
        env={**os.environ, "PYTHONPATH": str(unpacked / "src")},
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    assert " passed" in completed.stdout
    for name, target in SDIST_SYMLINKS.items():
        assert os.readlink(unpacked / name) == target
