"""``agent install``/``uninstall`` against a hostile manifest and a failed stage (T310-T312)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

from skillguard._agents.install import MANIFEST_FILE, install_plan, parse_manifest, uninstall
from skillguard._agents.install_plan import plan_install
from skillguard._cli.main import main
from skillguard.agents import parse_token_map

if TYPE_CHECKING:
    import pytest

UPSTREAM = Path(__file__).resolve().parents[1] / "fixtures" / "agent-cortex"
TOKENS = parse_token_map((UPSTREAM / "token-map.json").read_bytes())


def forged_manifest(dest: Path, **fields: object) -> None:
    document: dict[str, object] = {
        "format": "skillguard-install-1",
        "harness": "claude",
        "source_digest": "",
        "token_map_digest": "",
        "files": [],
        "folders": [],
    }
    document.update(fields)
    (dest / MANIFEST_FILE).write_text(json.dumps(document))


def test_t310_a_stage_that_fails_leaves_no_folder_behind(tmp_path: Path) -> None:
    skills = tmp_path / "skills" / "demo"
    skills.mkdir(parents=True)
    (skills / "SKILL.md").write_text("---\nname: demo\ndescription: A demo.\n---\nHi\n")
    # A name the folder holds, whose temporary beside it is longer than a name can be:
    # staging it fails after SKILL.md's folders were made.
    (skills / ("r" * 240)).write_bytes(b"data\n")
    (tmp_path / "agents").mkdir()
    plan = plan_install(tmp_path / "agents", "pi", token_map=TOKENS, skills_dir=tmp_path / "skills")
    assert plan.ok
    dest = tmp_path / "dest"
    dest.mkdir()
    report = install_plan(plan, dest)
    assert not report.ok
    assert report.written == ()
    assert os.listdir(dest) == []


def test_t311_a_forged_manifest_harness_cannot_drive_the_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "a.md").write_text("x")
    forged_manifest(
        dest,
        harness="\x1b]0;owned\x07\x1b[2J",
        files=[{"path": "a.md", "sha256": hashlib.sha256(b"x").hexdigest(), "kind": "agent"}],
    )
    code = main(["agent", "uninstall", "--dest", str(dest)])
    out, _ = capsys.readouterr()
    assert "\x1b" not in out
    assert "\x07" not in out
    assert code == 1
    assert (dest / "a.md").read_text() == "x"


def test_t312_a_forged_manifest_cannot_remove_the_users_empty_folder(tmp_path: Path) -> None:
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "mine").mkdir()
    (dest / "a.md").write_text("x")
    forged_manifest(
        dest,
        files=[{"path": "a.md", "sha256": hashlib.sha256(b"x").hexdigest(), "kind": "agent"}],
        folders=["mine"],
    )
    report = uninstall(dest)
    assert not report.ok
    assert [f.code for f in report.findings] == ["manifest_invalid"]
    assert sorted(os.listdir(dest)) == [MANIFEST_FILE, "a.md", "mine"]


class _Counted(str):
    """A path that counts how often it is compared."""

    __slots__ = ()
    compared = 0

    def __eq__(self, other: object) -> bool:
        _Counted.compared += 1
        return str.__eq__(self, other)

    __hash__ = str.__hash__


def test_t315_a_large_manifest_is_looked_up_in_linear_steps() -> None:
    count = 2000
    document = {
        "format": "skillguard-install-1",
        "harness": "claude",
        "source_digest": "",
        "token_map_digest": "",
        "files": [{"path": f"a{i}.md", "sha256": "0" * 64, "kind": "agent"} for i in range(count)],
    }
    manifest = parse_manifest(json.dumps(document).encode())
    _Counted.compared = 0
    found = [manifest.get(_Counted(f"a{i}.md")) for i in range(count)]
    assert all(entry is not None for entry in found)
    assert _Counted.compared <= 2 * count
