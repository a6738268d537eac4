"""``InstallFolder.commit`` undone halfway leaves no backup behind (T314)."""

from __future__ import annotations

import hashlib
import os
from typing import TYPE_CHECKING

import pytest

from skillguard import SkillContainmentError, SkillError
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


@pytest.mark.parametrize("replace", [True, False])
@pytest.mark.parametrize("change", ["edit", "symlink"])
def test_t317_a_file_edited_after_it_was_judged_is_kept(
    tmp_path: Path, replace: bool, change: str
) -> None:
    (tmp_path / "keep.md").write_text("kept")
    (tmp_path / "a.md").write_text("installed")
    judged = hashlib.sha256(b"installed").hexdigest()
    with InstallFolder(str(tmp_path), create=False) as folder:
        staged = [folder.stage("new.md", b"new", replace=False)]
        if replace:
            staged.append(folder.stage("a.md", b"next", replace=True, expected=judged, cap=1024))
        else:
            removal = folder.removal("a.md", expected=judged, cap=1024)
            assert removal is not None
            staged.append(removal)
        # The file is edited (or swapped for a link) between the check and the commit.
        if change == "edit":
            (tmp_path / "a.md").write_text("edited by hand")
        else:
            (tmp_path / "a.md").unlink()
            (tmp_path / "a.md").symlink_to("keep.md")
        with pytest.raises(SkillContainmentError) as caught:
            folder.commit(staged)
    assert caught.value.code == "edited_since_install"
    assert sorted(os.listdir(tmp_path)) == ["a.md", "keep.md"]
    assert (tmp_path / "a.md").is_symlink() == (change == "symlink")
    assert (tmp_path / "a.md").read_text() == ("edited by hand" if change == "edit" else "kept")
