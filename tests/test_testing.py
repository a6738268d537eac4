"""skillguard.testing: the public strategies generate, and skillguard survives them (T93)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import tempfile
import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import strategies as st

import skillguard
from skillguard import testing
from skillguard.testing import Workspace, WorkspaceEntry, write_workspace

ROOT = Path(__file__).resolve().parent.parent


def _approve(request: skillguard.ApprovalRequest) -> skillguard.Decision:
    del request
    return skillguard.Decision(approved=True, by="test")


def _tree_listing(folder: Path) -> set[str]:
    """Every entry beneath *folder*, by lstat, never following a link."""
    found = set()
    for here, dirs, files in os.walk(folder):
        for name in dirs + files:
            found.add(os.path.relpath(os.path.join(here, name), folder))
    return found


# -- every strategy generates ---------------------------------------------------------


@pytest.mark.parametrize(
    "strategy",
    [
        testing.skill_documents(),
        testing.valid_skill_files(),
        testing.mutated_documents(),
        testing.near_yaml,
        testing.hostile_skill_files(),
        testing.hostile_fragments,
        testing.hostile_values,
        testing.hostile_workspaces(),
        testing.entry_names,
        testing.names,
        testing.non_blank_text,
        testing.tool_names,
        testing.tool_rules,
        testing.meta_keys,
    ],
)
def test_every_strategy_generates(strategy: st.SearchStrategy[object]) -> None:
    seen: list[object] = []

    @settings(max_examples=10, database=None, suppress_health_check=list(HealthCheck))
    @given(strategy)
    def draw(value: object) -> None:
        seen.append(value)

    draw()
    assert seen


@pytest.mark.parametrize("kind", ["file", "sparse", "fifo", "symlink", "hardlink"])
def test_hostile_workspaces_draw_every_kind_of_skill_file(kind: str) -> None:
    # Searched for rather than counted in a fixed number of draws: Hypothesis seeds its
    # draws with constants from the modules loaded so far, so which 120 workspaces a
    # derandomized run draws depends on the Python version and on the tests run before.
    def has_kind(tree: Workspace) -> bool:
        return any(e.kind == kind and e.path[-1] == "SKILL.md" for e in tree.entries)

    found = find(
        testing.hostile_workspaces(),
        has_kind,
        settings=settings(
            max_examples=2000, derandomize=True, database=None, phases=[Phase.generate]
        ),
    )
    assert has_kind(found)


def test_booby_raises_from_every_dunder_a_library_may_call() -> None:
    booby = testing.Booby()
    for call in (
        lambda: booby == 1,
        lambda: hash(booby),
        lambda: os.fspath(booby),
        lambda: str(booby),
    ):
        with pytest.raises(RuntimeError):
            call()
    assert repr(booby) == "Booby()"
    assert os.fspath(testing.BytesPath()) == b"/tmp/skillguard-bytes-path"
    assert repr(testing.BytesPath()) == "BytesPath()"


def test_importing_skillguard_does_not_need_hypothesis() -> None:
    code = "import sys, skillguard; sys.exit('hypothesis' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


def test_testing_is_not_reexported() -> None:
    assert "testing" not in skillguard.__all__


@settings(max_examples=100)
@given(testing.valid_skill_files())
def test_valid_skill_files_parse(raw: bytes) -> None:
    assert skillguard.parse_skill(raw).name


# -- T93: hostile input only ever gives a result or a SkillError ------------------------


@settings(max_examples=300)
@given(testing.hostile_skill_files())
def test_t93_hostile_documents_give_skill_or_malformed(raw: bytes) -> None:
    try:
        skill = skillguard.parse_skill(raw)
    except skillguard.MalformedSkillError:
        return
    assert isinstance(skill, skillguard.Skill)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(testing.hostile_workspaces())
def test_t93_hostile_workspaces_give_results_or_skill_error(tree: Workspace) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        workspace = Path(scratch) / "ws"
        workspace.mkdir()
        write_workspace(tree, workspace)
        assert _tree_listing(Path(scratch)) >= {"ws"}
        found = skillguard.discover([workspace])
        assert isinstance(found, skillguard.Discovery)
        policy = skillguard.AllowPolicy.from_mapping(
            {"agents": {"a": {"skills": list(found.names()), "workspace": "approve"}}}
        )
        with skillguard.Loader(policy, workspace=[workspace], approver=_approve) as loader:
            agent = loader.bind("a")
            assert isinstance(agent.catalog_xml(), str)
            for name in (*found.names(), *tree.skill_names):
                try:
                    agent.load(name).activation()
                except skillguard.SkillError:
                    continue


@settings(max_examples=200, deadline=None)
@given(testing.hostile_workspaces())
def test_hostile_workspaces_can_be_written_on_a_case_insensitive_file_system(
    tree: Workspace,
) -> None:
    # macOS and Windows take "skill.md" and "SKILL.md" (and the NFC and NFD spellings of
    # "cafe\u0301") for one name: no two entries of a tree, nor a folder and an entry
    # beneath it, may meet there, or write_workspace refuses the tree on a host's Mac.
    def key(path: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(unicodedata.normalize("NFD", part).casefold() for part in path)

    files = [key(entry.path) for entry in tree.entries]
    assert len(set(files)) == len(files)
    folders = {path[:end] for path in files for end in range(1, len(path))}
    assert not folders & set(files)


# -- write_workspace writes only beneath its folder ------------------------------------


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(testing.hostile_workspaces())
def test_t93_write_workspace_writes_only_beneath_its_folder(tree: Workspace) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        outside = Path(scratch)
        (outside / "ws").mkdir()
        (outside / "sentinel").write_bytes(b"untouched")
        write_workspace(tree, outside / "ws")
        assert sorted(os.listdir(outside)) == ["sentinel", "ws"]
        assert (outside / "sentinel").read_bytes() == b"untouched"
        written = _tree_listing(outside / "ws")
        for entry in tree.entries:
            assert os.path.join(*entry.path) in written


def test_t93_write_workspace_makes_every_kind(tmp_path: Path) -> None:
    tree = Workspace(
        (
            WorkspaceEntry("dir", ("empty",)),
            WorkspaceEntry("file", ("a", "SKILL.md"), content=b"x"),
            WorkspaceEntry("sparse", ("big",), content=b"head", size=2**33),
            WorkspaceEntry("fifo", ("pipe",)),
            WorkspaceEntry("hardlink", ("b", "SKILL.md"), target="a/SKILL.md"),
            WorkspaceEntry("symlink", ("out",), target="/etc"),
            WorkspaceEntry("symlink", ("loop",), target="loop"),
        )
    )
    write_workspace(tree, tmp_path)
    assert tree.skill_names == ("a", "b")
    assert stat.S_ISDIR(os.lstat(tmp_path / "empty").st_mode)
    big = os.lstat(tmp_path / "big")
    assert big.st_size == 2**33
    assert big.st_blocks * 512 < 2**20  # sparse: the size is not on disk
    assert stat.S_ISFIFO(os.lstat(tmp_path / "pipe").st_mode)
    assert os.lstat(tmp_path / "b" / "SKILL.md").st_nlink == 2
    assert os.readlink(tmp_path / "out") == "/etc"
    assert os.readlink(tmp_path / "loop") == "loop"


@pytest.mark.parametrize(
    "entry",
    [
        WorkspaceEntry("file", ("..", "escape")),
        WorkspaceEntry("file", ("a/b",)),
        WorkspaceEntry("file", ("",)),
        WorkspaceEntry("file", (".",)),
        WorkspaceEntry("file", ("nul\x00",)),
        WorkspaceEntry("hardlink", ("h",), target="../outside"),
    ],
)
def test_t93_write_workspace_refuses_a_name_that_leaves_the_folder(
    tmp_path: Path, entry: WorkspaceEntry
) -> None:
    (tmp_path / "ws").mkdir()
    with pytest.raises(skillguard.SkillUsageError):
        write_workspace(Workspace((entry,)), tmp_path / "ws")
    assert sorted(os.listdir(tmp_path)) == ["ws"]


def test_t93_write_workspace_never_writes_through_a_link(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "ws" / "link").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(skillguard.SkillUsageError):
        write_workspace(Workspace((WorkspaceEntry("file", ("link", "x")),)), tmp_path / "ws")
    with pytest.raises(skillguard.SkillUsageError):
        write_workspace(Workspace((WorkspaceEntry("file", ("link",)),)), tmp_path / "ws")
    assert os.listdir(tmp_path / "elsewhere") == []


@pytest.mark.parametrize(
    "entries",
    [
        (WorkspaceEntry("file", ("a",)), WorkspaceEntry("fifo", ("a",))),
        (WorkspaceEntry("file", ("a", "b")), WorkspaceEntry("file", ("a",))),
        (WorkspaceEntry("hardlink", ("h",), target="nowhere"),),
        (WorkspaceEntry("file", ("f",)), WorkspaceEntry("hardlink", ("h",), target="f/x")),
    ],
)
def test_write_workspace_reports_a_tree_it_cannot_write_as_a_usage_error(
    tmp_path: Path, entries: tuple[WorkspaceEntry, ...]
) -> None:
    # What its docstring promises: a typed error, never a bare OSError in a host's test.
    with pytest.raises(skillguard.SkillUsageError):
        write_workspace(Workspace(entries), tmp_path)


def test_write_workspace_refuses_bad_arguments(tmp_path: Path) -> None:
    with pytest.raises(skillguard.SkillUsageError):
        write_workspace([], tmp_path)  # type: ignore[arg-type]
    (tmp_path / "link").symlink_to(tmp_path)
    with pytest.raises(skillguard.SkillUsageError):
        write_workspace(Workspace(()), tmp_path / "link")
    with pytest.raises(skillguard.SkillUsageError):
        write_workspace(Workspace(()), tmp_path / "missing")
    (tmp_path / "file").write_text("")
    with pytest.raises(skillguard.SkillUsageError):
        write_workspace(Workspace(()), tmp_path / "file" / "below")


# -- the host example ------------------------------------------------------------------


def test_t93_the_host_example_runs_as_the_readme_says(tmp_path: Path) -> None:
    # "pytest examples/test_host_fuzz.py" from the checkout: the repository's own
    # configuration applies (warnings are errors, coverage is measured), but its
    # coverage floor is the project suite's, not an example's (examples/conftest.py).
    # The coverage data goes to tmp_path, away from this suite's own.
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "--hypothesis-seed=0",
            "examples/test_host_fuzz.py",
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
        env={**os.environ, "COVERAGE_FILE": str(tmp_path / ".coverage")},
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert "2 passed" in result.stdout
    assert "Required test coverage" not in result.stdout
    assert "TOTAL" in result.stdout  # coverage was measured, and reported
