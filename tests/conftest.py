"""Test configuration shared by every module."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest
import structlog
from hypothesis import HealthCheck, settings

if TYPE_CHECKING:
    from collections.abc import Iterator

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
