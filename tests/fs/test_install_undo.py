"""``InstallFolder.commit`` undone halfway leaves no backup behind (T314)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

from skillguard import SkillError
from skillguard._fs.install import InstallFolder

if TYPE_CHECKING:
    from pathlib import Path


def test_t314_a_replace_that_fails_after_its_backup_leaves_no_backup(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("mine")
    with InstallFolder(str(tmp_path), create=False) as folder:
        staged = folder.stage("a.md", b"new", replace=True)
        # Whoever can write the folder removes the temporary before it is put in place:
        # the backup link is made, then the rename fails.
        os.unlink(staged.temporary, dir_fd=staged.dir_fd)
        with pytest.raises(SkillError):
            folder.commit([staged])
    assert os.listdir(tmp_path) == ["a.md"]
    assert (tmp_path / "a.md").read_text() == "mine"
