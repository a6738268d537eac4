"""Test configuration shared by every module."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

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
