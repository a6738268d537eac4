"""``skillguard mcp`` on the wire: stdout carries protocol messages only, a client that
goes away mid-call ends the server cleanly, and without the extra the command says so."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from tests.mcp.test_server import options, setup  # noqa: F401 - the shared fixture

TIMEOUT = 90  # seconds for one message or exit, on a loaded 2-core machine


class Wire:
    """``skillguard mcp`` as a subprocess, spoken to one JSON-RPC line at a time."""

    def __init__(self, argv: list[str], env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "skillguard", "mcp", *argv],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "SKILLGUARD_USER_SKILLS": "", **(env or {})},
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(b"")

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def receive(self) -> dict[str, Any]:
        line = self.lines.get(timeout=TIMEOUT)
        assert line, "the server closed stdout"
        message = json.loads(line)  # every stdout line is one JSON-RPC message
        assert message["jsonrpc"] == "2.0"
        return dict(message)

    def until(self, key: str, value: object) -> dict[str, Any]:
        while True:
            message = self.receive()
            if message.get(key) == value:
                return message

    def hello(self, capabilities: dict[str, Any]) -> None:
        self.send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": capabilities,
                    "clientInfo": {"name": "wire\x1b[31m", "version": "1"},
                },
            }
        )
        assert "result" in self.until("id", 1)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def close(self) -> tuple[int, bytes]:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        code = self.proc.wait(timeout=TIMEOUT)
        self.reader.join(timeout=TIMEOUT)
        assert self.proc.stdout is not None
        assert self.proc.stderr is not None
        self.proc.stdout.close()
        with self.proc.stderr:
            return code, self.proc.stderr.read()


def test_stdout_carries_protocol_messages_only(setup: dict[str, Path]) -> None:  # noqa: F811
    wire = Wire(options(setup))
    wire.hello({})
    wire.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    assert len(wire.until("id", 2)["result"]["tools"]) == 3
    wire.send({"jsonrpc": "2.0", "id": 3, "method": "no/such_method"})
    assert "error" in wire.until("id", 3)
    wire.send(
        {
            "jsonrpc": "2.0",
            "id": 4,
            "method": "tools/call",
            "params": {"name": "skill", "arguments": []},
        }
    )
    assert "error" in wire.until("id", 4)  # arguments that are no object: a protocol error
    call = {"name": "skill", "arguments": {"name": "pdf-tools"}}
    wire.send({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": call})
    result = wire.until("id", 5)["result"]
    assert result.get("isError") is not True
    assert "Use PDFs." in result["content"][0]["text"]
    code, err = wire.close()
    assert (code, err) == (0, b"")
    granted = [json.loads(line) for line in setup["log"].read_text().splitlines()][-1]
    assert granted["event"] == "load_granted"
    assert granted["client"] == "wire\\x1b[31m"  # the client's own name, escaped


def test_t240_a_client_that_goes_away_mid_elicitation_ends_the_server(
    setup: dict[str, Path],  # noqa: F811
) -> None:
    wire = Wire(options(setup, "planner", "--approve", "elicit"))
    wire.hello({"elicitation": {}})
    call = {"name": "skill", "arguments": {"name": "notes"}}
    wire.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call})
    asked = wire.until("method", "elicitation/create")
    assert "notes" in asked["params"]["message"]
    code, err = wire.close()  # gone, without an answer
    assert (code, err) == (0, b"")
    events = [json.loads(line)["event"] for line in setup["log"].read_text().splitlines()]
    assert "load_granted" not in events
    assert events[-1] in ("approval_cancelled", "approval_denied")


def test_without_the_extra_the_command_names_it(
    setup: dict[str, Path],  # noqa: F811
    tmp_path: Path,
) -> None:
    shadow = tmp_path / "shadow" / "mcp"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'mcp'\", name='mcp')\n"
    )
    src = Path(__file__).resolve().parents[2] / "src"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(shadow.parent), str(src)])}
    done = subprocess.run(
        [sys.executable, "-m", "skillguard", "mcp", *options(setup)],
        capture_output=True,
        env=env,
        timeout=TIMEOUT,
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == b""
    assert done.stderr.decode().splitlines() == [
        "skillguard: 'skillguard mcp' needs the mcp extra: pip install 'skillguard[mcp]'"
    ]
