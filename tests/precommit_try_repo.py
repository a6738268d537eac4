"""Run skillguard's pre-commit hook with ``pre-commit try-repo`` on a temporary repository.

``tox -e precommit`` runs this script: it proves that the hook in
``.pre-commit-hooks.yaml`` installs, passes a repository of valid skills, fails one
where a symlink was dropped into a skill's ``scripts/`` folder, and stays quiet when
only files outside any skill change; then that a ``.pre-commit-config.yaml`` pinning
the hook to a commit SHA, as the README tells users to until a release is tagged,
installs and runs it. Exit status 0 when all of these hold.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

GOOD = "---\nname: demo\ndescription: A valid skill.\n---\nBody.\n"
HOOK = "skillguard-validate"


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)  # noqa: S607


def _try_repo(hook_repo: Path, repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(hook_repo), HOOK, *args],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
    )


def _run_pinned(hook_repo: Path, repo: Path) -> subprocess.CompletedProcess[str]:
    """The README's configuration, with the hook's repository at its current commit."""
    sha = subprocess.run(
        ["git", "rev-parse", "HEAD"],  # noqa: S607
        cwd=hook_repo,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    (repo / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {hook_repo}\n    rev: {sha}\n    hooks:\n      - id: {HOOK}\n"
    )
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", HOOK, "--all-files"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
    )


def main(hook_repo: Path) -> int:
    with tempfile.TemporaryDirectory() as scratch:
        repo = Path(scratch) / "repo"
        skill = repo / "skills" / "demo"
        (skill / "scripts").mkdir(parents=True)
        (skill / "SKILL.md").write_text(GOOD)
        (skill / "scripts" / "run.sh").write_text("echo hi\n")
        (repo / "README.md").write_text("a repository with one skill\n")
        _git(repo, "init", "-q")
        _git(repo, "add", ".")
        _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "skills")
        checks: list[tuple[str, bool]] = []

        valid = _try_repo(hook_repo, repo, "--all-files")
        checks.append(("a valid skill passes", valid.returncode == 0))

        os.symlink("/etc/passwd", skill / "scripts" / "planted")
        _git(repo, "add", "skills/demo/scripts/planted")
        planted = _try_repo(hook_repo, repo)
        checks.append(("a planted symlink fails the hook", planted.returncode != 0))
        checks.append(("the failure names the link", "symlink" in planted.stdout))

        _git(repo, "rm", "-q", "--cached", "skills/demo/scripts/planted")
        (skill / "scripts" / "planted").unlink()
        (repo / "README.md").write_text("only the readme changed\n")
        _git(repo, "add", "README.md")
        unrelated = _try_repo(hook_repo, repo)
        checks.append(
            (
                "a change outside skills skips the hook",
                unrelated.returncode == 0 and "no files to check" in unrelated.stdout,
            )
        )
        pinned = _run_pinned(hook_repo, repo)
        checks.append(("the hook pinned to a commit SHA runs", pinned.returncode == 0))
    for what, held in checks:
        print(f"{'ok    ' if held else 'FAILED'} {what}")
    if not all(held for _, held in checks):
        print(valid.stdout, planted.stdout, unrelated.stdout, pinned.stdout, sep="\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]).resolve()))
