"""Test configuration shared by every module."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import structlog
from hypothesis import HealthCheck, settings

if TYPE_CHECKING:
    from collections.abc import Iterator

# The fuzz targets, loaded by path in tests, import fuzz/instrumented.py from beside them,
# as when libFuzzer runs them as scripts (their folder is then on sys.path).
_FUZZ = str(Path(__file__).resolve().parent.parent / "fuzz")
if _FUZZ not in sys.path:
    sys.path.append(_FUZZ)

# No deadlines: a timing is never a test result here (benchmarks measure speed), and a
# loaded CI machine must not turn a slow example into a failure.
settings.register_profile("default", deadline=None)
settings.register_profile(
    "ci",
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("ci" if os.environ.get("CI") else "default")


@pytest.fixture(autouse=True)
def _structlog_defaults() -> Iterator[None]:
    # The command line configures structlog as a host application does; tests that
    # run it in-process must not leave that configuration to the next test.
    yield
    structlog.reset_defaults()


# The symlinks of the source tree that tests and README transcripts check (a symlinked
# SKILL.md must be refused). An sdist cannot carry a symlink: setuptools writes the file
# it points at. Run from an unpacked sdist (a PKG-INFO at the top), each is put back
# before the first test; tests/test_sdist.py keeps this table and the tree in step.
SDIST_SYMLINKS = {"examples/skills/broken-symlink/SKILL.md": "../pdf-tools/SKILL.md"}
_TOP = Path(__file__).resolve().parent.parent


def pytest_sessionstart(session: pytest.Session) -> None:
    del session
    if not (_TOP / "PKG-INFO").is_file():
        return
    for name, target in SDIST_SYMLINKS.items():
        path = _TOP / name
        if not path.is_symlink():
            path.unlink(missing_ok=True)
            path.symlink_to(target)
