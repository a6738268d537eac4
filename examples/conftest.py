"""pytest settings for the examples, which are a host's own tests, not skillguard's suite.

Run from a checkout of skillguard (``pytest examples/test_host_fuzz.py``, as the README
says), pytest reads the repository's ``pyproject.toml``, whose coverage floor (95% of
skillguard, branches included) is for the project's own suite: one example exercises a
fraction of skillguard and would fail on coverage alone after every test passed. When
every path pytest was given is in this folder, the floor is lifted; the coverage report
itself is left as configured. A run that also collects the project's suite keeps it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pytest

HERE = Path(__file__).resolve().parent


def pytest_configure(config: pytest.Config) -> None:
    coverage = config.pluginmanager.get_plugin("_cov")  # pytest-cov, when it is installed
    if coverage is None:
        return
    start = config.invocation_params.dir
    given = [(start / str(arg).split("::")[0]).resolve() for arg in config.args]
    if given and all(path == HERE or HERE in path.parents for path in given):
        coverage.options.cov_fail_under = None
