"""The skill tool's shapes type-check against the model SDKs' own parameter types.

``sdk_shapes.py`` hands ``as_openai()``, ``as_openai(api="responses")``,
``as_anthropic()`` and ``as_mcp()`` to the SDKs' types with no cast; this runs
``mypy --strict`` over it where mypy and the SDKs are installed (the ``type`` extra),
and skips, saying which is missing, elsewhere. The ``type`` gate checks the same file.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

_HERE = Path(__file__).parent
_MISSING = [
    name
    for name in ("mypy", "openai", "anthropic", "mcp")
    if importlib.util.find_spec(name) is None
]


@pytest.mark.skipif(bool(_MISSING), reason=f"not installed: {', '.join(_MISSING)}")
def test_tool_shapes_type_check_against_the_sdks(tmp_path: Path) -> None:
    # A snippet that hands a shape to the wrong SDK type must fail: the check is real.
    wrong = tmp_path / "wrong.py"
    wrong.write_text(
        "from anthropic.types import ToolParam\n"
        "from skillguard import ToolInfo\n"
        "def f(info: ToolInfo) -> ToolParam:\n"
        '    return info.as_openai(api="responses")\n',
        encoding="utf-8",
    )
    command = [sys.executable, "-m", "mypy", "--strict", "--no-incremental"]
    command += ["--cache-dir", str(tmp_path / "cache"), "--python-version", "3.10"]
    done = subprocess.run(
        [*command, str(_HERE / "sdk_shapes.py"), str(wrong)],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    errors = [line for line in done.stdout.splitlines() if ": error:" in line]
    assert errors, done.stdout + done.stderr
    assert all(line.startswith(str(wrong)) for line in errors), done.stdout
    assert any("FunctionToolParam" in line for line in errors), done.stdout
