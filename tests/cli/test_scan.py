"""The file-system edge, on real files, symlinks, FIFOs, sockets and devices.

Test names that start with ``test_tN_`` stop the threat ``TN`` of threat-model.md.
"""

from __future__ import annotations

import contextlib
import errno
import gc
import os
import socket
import stat
import threading
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from skillguard import Limits, MalformedSkillError, SkillContainmentError, SkillNotFoundError
from skillguard._cli.scan import Found, scan_for_skills
from skillguard._fs.containment import SafeRoot
from skillguard._fs.errors import _os_error
from skillguard._fs.paths import display_path, printed_path

if TYPE_CHECKING:
    from collections.abc import Iterator

CAP = 256 * 1024
SECRET = b"-----BEGIN OPENSSH PRIVATE KEY----- not-a-real-key"


def skill_text(name: str) -> str:
    return f"---\nname: {name}\ndescription: The {name} skill.\n---\nBody of {name}.\n"


def make_skill(root: Path, name: str, *, parents: tuple[str, ...] = ()) -> Path:
    folder = root.joinpath(*parents, name)
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(skill_text(name))
    return folder


def scan(path: Path, max_depth: int = 8) -> tuple[list[Found], list[tuple[str, str]]]:
    result = scan_for_skills(str(path), max_depth=max_depth, limits=Limits())
    return list(result.found), [(s.path, s.code) for s in result.skipped]


def only_error(found: list[Found]) -> Exception:
    assert len(found) == 1
    assert found[0].raw is None
    assert found[0].error is not None
    return found[0].error


@contextlib.contextmanager
def held_dir(path: str | Path) -> Iterator[int]:
    """A directory descriptor, as the loader holds one, closed afterwards."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)  # noqa: TID251 - test setup
    try:
        yield fd
    finally:
        os.close(fd)


def run_with_watchdog(target_path: Path) -> list[Found]:
    """Scan in a worker thread: a scan that blocks (on a FIFO, say) fails the test."""
    out: list[list[Found]] = []
    worker = threading.Thread(target=lambda: out.append(scan(target_path)[0]), daemon=True)
    worker.start()
    worker.join(timeout=30)
    assert not worker.is_alive(), "the scan blocked"
    return out[0]


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    key = outside / "id_rsa"
    key.write_bytes(SECRET)
    return key


# -- reading one file ----------------------------------------------------------------


def test_reads_a_skill_file_given_directly(tmp_path: Path) -> None:
    folder = make_skill(tmp_path, "demo")
    found, skipped = scan(folder / "SKILL.md")
    assert [(f.folder, f.raw) for f in found] == [("demo", skill_text("demo").encode())]
    assert skipped == []


def test_reads_a_skill_folder_given_directly(tmp_path: Path) -> None:
    folder = make_skill(tmp_path, "demo")
    found, _ = scan(folder)
    assert [(f.path, f.folder, f.raw) for f in found] == [
        (str(folder), "demo", skill_text("demo").encode())
    ]


def test_t10_symlinked_skill_file_is_refused_and_never_read(tmp_path: Path, secret: Path) -> None:
    folder = tmp_path / "skills" / "demo"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").symlink_to(secret)
    for target in (folder, folder / "SKILL.md", tmp_path / "skills"):
        found, _ = scan(target)
        error = only_error(found)
        assert isinstance(error, SkillContainmentError)
        assert error.code == "symlink"
        assert SECRET.decode() not in repr(found)


def test_t10_symlink_inside_the_root_is_refused_too(tmp_path: Path) -> None:
    real = make_skill(tmp_path, "real")
    other = tmp_path / "alias"
    other.mkdir()
    (other / "SKILL.md").symlink_to(real / "SKILL.md")
    error = only_error(scan(other)[0])
    assert isinstance(error, SkillContainmentError)
    assert error.code == "symlink"


def test_t10_dangling_symlink_given_as_path_is_reported_as_symlink(tmp_path: Path) -> None:
    link = tmp_path / "SKILL.md"
    link.symlink_to(tmp_path / "nowhere")
    error = only_error(scan(link)[0])
    assert isinstance(error, SkillContainmentError)
    assert error.code == "symlink"


def test_t11_fifo_skill_file_is_refused_without_blocking(tmp_path: Path) -> None:
    folder = tmp_path / "demo"
    folder.mkdir()
    os.mkfifo(folder / "SKILL.md")
    for target in (folder, folder / "SKILL.md", tmp_path):
        error = only_error(run_with_watchdog(target))
        assert isinstance(error, SkillContainmentError)
        assert error.code == "not_regular_file"


def test_t11_socket_skill_file_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "demo"
    folder.mkdir()
    monkeypatch.chdir(folder)  # AF_UNIX paths are short: bind relative to the folder
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.bind("SKILL.md")
        error = only_error(run_with_watchdog(folder))
    assert isinstance(error, SkillContainmentError)
    assert error.code == "not_regular_file"


def test_t11_device_skill_file_is_refused_without_being_opened(tmp_path: Path) -> None:
    folder = tmp_path / "demo"
    folder.mkdir()
    try:
        os.mknod(folder / "SKILL.md", stat.S_IFCHR | 0o600, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("creating a device node needs privileges")
    error = only_error(run_with_watchdog(folder))
    assert isinstance(error, SkillContainmentError)
    assert error.code == "not_regular_file"


def test_t11_directory_named_skill_md_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "demo"
    (folder / "SKILL.md").mkdir(parents=True)
    error = only_error(scan(folder)[0])
    assert isinstance(error, SkillContainmentError)
    assert error.code == "not_regular_file"


def test_t12_oversize_file_is_refused_from_fstat(tmp_path: Path) -> None:
    folder = tmp_path / "demo"
    folder.mkdir()
    (folder / "SKILL.md").write_bytes(b"x" * 1001)
    with SafeRoot(folder) as root:
        assert root.read_skill_file(cap=1001) == b"x" * 1001
        with pytest.raises(MalformedSkillError) as info:
            root.read_skill_file(cap=1000)
    assert info.value.code == "too_large"


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc")
def test_t12_a_file_larger_than_its_reported_size_is_read_to_cap_plus_one() -> None:
    # /proc files report st_size 0 but hold text: a real file whose size lies, like
    # one that grows between fstat and read. The reader stops one byte past the cap.
    with SafeRoot("/proc/self") as root:
        raw = root.read_file("status", cap=100)
    assert len(raw) == 101


def test_missing_path_is_not_found(tmp_path: Path) -> None:
    error = only_error(scan(tmp_path / "nope")[0])
    assert isinstance(error, SkillNotFoundError)
    assert error.code == "missing"
    assert isinstance(error.__cause__, FileNotFoundError)  # the OS error is kept


def test_folder_without_skill_is_not_found(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "README.md").write_text("no skill here")
    error = only_error(scan(tmp_path)[0])
    assert isinstance(error, SkillNotFoundError)
    assert error.code == "no_skill"


def test_read_reports_a_missing_file(tmp_path: Path) -> None:
    with SafeRoot(tmp_path) as root, pytest.raises(SkillNotFoundError) as info:
        root.read_skill_file(cap=CAP)
    assert info.value.code == "missing"


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_skill_file_is_not_found_with_a_reason(tmp_path: Path) -> None:
    folder = make_skill(tmp_path, "demo")
    (folder / "SKILL.md").chmod(0)
    try:
        error = only_error(scan(folder)[0])
    finally:
        (folder / "SKILL.md").chmod(0o644)
    assert isinstance(error, SkillNotFoundError)
    assert error.code == "unreadable"


@pytest.mark.skipif(os.geteuid() == 0, reason="root searches folders whatever their mode")
def test_an_unreadable_plain_folder_is_reported_as_the_folder(tmp_path: Path) -> None:
    make_skill(tmp_path, "demo")
    plain = tmp_path / "plain"
    plain.mkdir()
    plain.chmod(0)
    try:
        found, _ = scan(tmp_path)
    finally:
        plain.chmod(0o755)
    errors = {f.folder: f.error for f in found if f.error is not None}
    assert list(errors) == ["plain"]
    assert isinstance(errors["plain"], SkillNotFoundError)
    assert errors["plain"].code == "unreadable"
    assert errors["plain"].reason.startswith("the folder holding SKILL.md cannot be read")


# -- searching a root ----------------------------------------------------------------


def test_finds_every_skill_in_sorted_order_and_skips_tooling_folders(tmp_path: Path) -> None:
    make_skill(tmp_path, "zeta")
    make_skill(tmp_path, "alpha", parents=("group",))
    make_skill(tmp_path, "hidden", parents=(".git",))
    make_skill(tmp_path, "dep", parents=("node_modules",))
    found, skipped = scan(tmp_path)
    assert [f.folder for f in found] == ["alpha", "zeta"]
    assert all(f.error is None for f in found)
    assert skipped == []


def test_a_skill_folder_is_not_searched_for_nested_skills(tmp_path: Path) -> None:
    outer = make_skill(tmp_path, "outer")
    make_skill(outer, "inner", parents=("references",))
    assert [f.folder for f in scan(tmp_path)[0]] == ["outer"]


def test_max_depth_at_limit_and_over_is_reported(tmp_path: Path) -> None:
    make_skill(tmp_path, "deep", parents=("a", "b"))  # tmp/a/b/deep is depth 3
    found, skipped = scan(tmp_path, max_depth=3)
    assert [f.folder for f in found] == ["deep"]
    found, skipped = scan(tmp_path, max_depth=2)
    assert isinstance(only_error(found), SkillNotFoundError)
    assert skipped == [(str(tmp_path / "a" / "b" / "deep"), "too_deep")]


def test_t10_symlinked_skill_folder_is_reported_not_followed(tmp_path: Path, secret: Path) -> None:
    root = tmp_path / "skills"
    root.mkdir()
    make_skill(root, "good")
    evil = secret.parent / "evil"
    evil.mkdir()
    (evil / "SKILL.md").write_bytes(SECRET)
    (root / "linked").symlink_to(evil, target_is_directory=True)
    (root / "notes.md").symlink_to(secret)  # a link to a file fails too (T90)
    found, _ = scan(root)
    assert [(f.folder, f.error.code if f.error else None) for f in found] == [
        ("good", None),
        ("linked", "symlink"),
        ("notes.md", "symlink"),
    ]
    assert SECRET.decode() not in repr(found)


def test_t10_symlinked_intermediate_folder_is_not_followed(tmp_path: Path, secret: Path) -> None:
    root = tmp_path / "skills"
    root.mkdir()
    make_skill(secret.parent, "stolen", parents=("tree",))
    (root / "group").symlink_to(secret.parent / "tree", target_is_directory=True)
    found, _ = scan(root)
    error = only_error(found)
    assert isinstance(error, SkillContainmentError)
    assert found[0].path == str(root / "group")


def test_operator_given_symlinked_root_is_followed(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    make_skill(real, "demo")
    (tmp_path / "link").symlink_to(real, target_is_directory=True)
    found, _ = scan(tmp_path / "link")
    assert [(f.folder, f.error) for f in found] == [("demo", None)]


def test_non_utf8_folder_names_are_escaped_for_display(tmp_path: Path) -> None:
    name = os.fsdecode(b"bad\xffname")
    (tmp_path / name).mkdir()
    (tmp_path / name / "SKILL.md").write_text(skill_text("demo"))
    found, _ = scan(tmp_path)
    assert found[0].folder == name
    assert display_path(name) == "bad\\xffname"


def test_printed_paths_escape_backslashes_so_no_two_names_print_alike() -> None:
    undecodable = os.fsdecode(b"a\xff")
    assert printed_path("a\\xff") == "a\\\\xff"
    assert printed_path(undecodable) == "a\\xff"
    assert printed_path("new\\nline") != printed_path("new\nline")
    assert printed_path("plain/name") == display_path("plain/name")


def test_scanning_leaves_no_descriptor_open(tmp_path: Path) -> None:
    for index in range(5):
        make_skill(tmp_path, f"s{index}", parents=("a", "b"))
    (tmp_path / "a" / "link").symlink_to(tmp_path, target_is_directory=True)
    os.mkfifo(tmp_path / "a" / "fifo")
    gc.collect()  # descriptors of earlier tests' objects close now, not mid-count
    before = len(os.listdir("/proc/self/fd")) if Path("/proc/self/fd").exists() else None
    scan(tmp_path)
    scan(tmp_path, max_depth=1)
    if before is None:
        pytest.skip("needs /proc to count descriptors")
    assert len(os.listdir("/proc/self/fd")) == before


def test_path_under_a_missing_folder_is_not_found(tmp_path: Path) -> None:
    found, _ = scan(tmp_path / "no" / "such" / "SKILL.md")
    error = only_error(found)
    assert isinstance(error, SkillNotFoundError)
    assert error.code == "missing"


def test_path_through_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    error = only_error(scan(tmp_path / "file" / "SKILL.md")[0])
    assert isinstance(error, SkillContainmentError)
    assert error.code == "not_a_directory"


def test_symlink_loop_given_as_path_is_a_symlink(tmp_path: Path) -> None:
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    error = only_error(scan(tmp_path / "loop")[0])
    assert isinstance(error, SkillContainmentError)
    assert error.code == "symlink"


def test_t90_dangling_looping_and_file_symlinks_in_a_root_are_failures(tmp_path: Path) -> None:
    make_skill(tmp_path, "demo")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    (tmp_path / "file-link").symlink_to(tmp_path / "demo" / "SKILL.md")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    found, skipped = scan(tmp_path)
    reasons = {f.folder: (f.error.code, f.error.reason) for f in found if f.error is not None}
    assert reasons == {
        "dangling": (
            "symlink",
            "a symlink that resolves to nothing (or to itself, a loop) is not followed",
        ),
        "file-link": ("symlink", "a symlink to a file is not followed"),
        "loop": (
            "symlink",
            "a symlink that resolves to nothing (or to itself, a loop) is not followed",
        ),
    }
    assert skipped == []


def test_t11_fifo_read_directly_is_refused_by_fstat(tmp_path: Path) -> None:
    # The fstat check is the authoritative one: even a descriptor that was opened
    # (here, a FIFO opened without blocking) is refused if it is not a regular file.
    os.mkfifo(tmp_path / "fifo")
    fd = os.open(tmp_path / "fifo", os.O_RDONLY | os.O_NONBLOCK)  # noqa: TID251 - test setup
    try:
        with pytest.raises(SkillContainmentError) as info:
            SafeRoot(tmp_path)._read_fd(fd, CAP, MalformedSkillError, "SKILL.md")
    finally:
        os.close(fd)
    assert info.value.code == "not_regular_file"


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc")
def test_t12_a_file_whose_size_lies_is_read_to_its_end_under_the_cap() -> None:
    with SafeRoot("/proc/self") as root:
        raw = root.read_file("status", cap=CAP)
    assert raw.startswith(b"Name:")
    assert len(raw) < CAP


@pytest.mark.skipif(not Path("/proc/self/mem").exists(), reason="needs /proc")
def test_a_read_error_is_reported_as_unreadable() -> None:
    # /proc/self/mem is a regular file whose read at offset 0 fails with EIO.
    with SafeRoot("/proc/self") as root, pytest.raises(SkillNotFoundError) as info:
        root.read_file("mem", cap=CAP)
    assert info.value.code == "unreadable"
    assert isinstance(info.value.__cause__, OSError)


@pytest.mark.parametrize(
    ("err", "cls", "code"),
    [
        (errno.ELOOP, SkillContainmentError, "symlink"),
        (errno.ENXIO, SkillContainmentError, "not_regular_file"),
        (errno.ENODEV, SkillContainmentError, "not_regular_file"),
        (errno.ENOTDIR, SkillContainmentError, "not_a_directory"),
        (errno.ENOENT, SkillNotFoundError, "missing"),
        (errno.ENAMETOOLONG, SkillContainmentError, "bad_name"),
        (errno.EACCES, SkillNotFoundError, "unreadable"),
        (errno.EIO, SkillNotFoundError, "unreadable"),
    ],
)
def test_every_os_error_maps_to_a_typed_error(err: int, cls: type, code: str) -> None:
    original = OSError(err, os.strerror(err))
    mapped = _os_error(original, "SKILL.md")
    assert type(mapped) is cls
    assert mapped.code == code
    assert mapped.__cause__ is original


def test_t90_a_symlink_to_a_file_in_a_searched_folder_fails(tmp_path: Path) -> None:
    make_skill(tmp_path, "demo")
    (tmp_path / "notes.md").symlink_to(tmp_path / "demo" / "SKILL.md")
    found, skipped = scan(tmp_path)
    assert [(f.folder, f.error.code if f.error else None) for f in found] == [
        ("demo", None),
        ("notes.md", "symlink"),
    ]
    assert skipped == []
