"""SafeRoot, on real files, links, FIFOs, sockets and devices, with both resolvers.

Every containment test runs twice: through openat2(2) and through the component
walk (the fallback where openat2 is missing or filtered). The categories follow Go's
``os.Root`` tests. Test names that start with ``test_tN_`` stop threat ``TN``.
"""

from __future__ import annotations

import errno
import gc
import os
import socket
import stat
import threading
from pathlib import Path

import pytest

from skillguard import (
    MalformedSkillError,
    SafeRoot,
    SkillContainmentError,
    SkillError,
    SkillUsageError,
    openat2_available,
)
from skillguard._fs.paths import split_name

RESOLVERS = [
    pytest.param("openat2", marks=pytest.mark.skipif(not openat2_available(), reason="no openat2")),
    "walk",
]
SECRET = b"-----BEGIN OPENSSH PRIVATE KEY----- not-a-real-key"
CAP = 1 << 20


@pytest.fixture(params=RESOLVERS)
def resolver(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """root/ with plain and nested files; outside/ with a secret next to it."""
    root = tmp_path / "root"
    (root / "d" / "e").mkdir(parents=True)
    (root / "a.txt").write_bytes(b"a")
    (root / "d" / "e" / "f.txt").write_bytes(b"f")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_bytes(SECRET)
    return root


def outcome(root: SafeRoot, relpath: str) -> bytes | str:
    try:
        return root.read_file(relpath, cap=CAP)
    except SkillError as exc:
        return f"{exc.kind}/{exc.code}"


def open_root(path: Path, resolver: str, **options: bool) -> SafeRoot:
    return SafeRoot(path, resolver=resolver, **options)  # type: ignore[arg-type]


# -- names ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("relpath", "code"),
    [
        ("/etc/passwd", "path_escape"),
        ("..", "path_escape"),
        ("../outside/secret", "path_escape"),
        ("d/../../outside/secret", "path_escape"),
        (".", "path_escape"),
        ("./a.txt", "path_escape"),
        ("d/./e/f.txt", "path_escape"),
        ("a.txt/", "bad_name"),
        ("d//e/f.txt", "bad_name"),
        ("d/e/", "bad_name"),
        ("a\x00b", "bad_name"),
        ("a\nb", "bad_name"),
        ("a\x1b[2J", "bad_name"),
        ("a\x85b", "bad_name"),
        ("d\\e", "bad_name"),
        ("x" * 256, "bad_name"),
        ("d/" * 2049, "bad_name"),
        ("bad\udcffname", "bad_name"),
    ],
)
def test_t19_names_are_refused_before_any_system_call(relpath: str, code: str) -> None:
    with pytest.raises(SkillContainmentError) as info:
        split_name(relpath)
    assert info.value.code == code


def test_t19_name_limits_at_n_and_n_plus_one() -> None:
    assert split_name("x" * 255) == ("x" * 255,)
    assert split_name("\u00e9" * 127) == ("\u00e9" * 127,)  # 254 bytes of UTF-8
    with pytest.raises(SkillContainmentError):
        split_name("\u00e9" * 128)  # 256 bytes
    assert len(split_name("/".join(["d"] * 2048))) == 2048  # 4,095 characters


def test_t19_bad_names_are_refused_by_every_method(tree: Path, resolver: str) -> None:
    with open_root(tree, resolver) as root:
        for call in (
            lambda: root.read_file("../outside/secret", cap=CAP),
            lambda: root.list_dir("..", max_entries=10),
            lambda: root.open_dir("/tmp"),
            lambda: root.has_entry("a.txt/"),
            lambda: root.link_target("d/e"),
        ):
            with pytest.raises(SkillContainmentError):
                call()


def test_a_path_that_is_not_a_str_is_a_usage_error(tree: Path) -> None:
    with SafeRoot(tree) as root, pytest.raises(SkillUsageError):
        root.read_file(b"a.txt", cap=CAP)  # type: ignore[arg-type]


# -- reading -------------------------------------------------------------------------


def test_plain_and_nested_reads(tree: Path, resolver: str) -> None:
    with open_root(tree, resolver) as root:
        assert root.read_file("a.txt", cap=CAP) == b"a"
        assert root.read_file("d/e/f.txt", cap=CAP) == b"f"
        assert outcome(root, "d/missing") == "not_found/missing"
        assert outcome(root, "nope/f.txt") == "not_found/missing"
        assert outcome(root, "a.txt/x") == "containment/not_a_directory"
        assert outcome(root, "d") == "containment/not_regular_file"
        assert outcome(root, "") == "containment/bad_name"


def test_t12_read_cap_at_n_and_n_plus_one(tree: Path, resolver: str) -> None:
    (tree / "big").write_bytes(b"x" * 100)
    with open_root(tree, resolver) as root:
        assert root.read_file("big", cap=100) == b"x" * 100
        with pytest.raises(SkillContainmentError) as info:
            root.read_file("big", cap=99)
        assert info.value.code == "too_large"
        with pytest.raises(MalformedSkillError):
            root.read_file("big", cap=99, oversize=MalformedSkillError)


@pytest.mark.parametrize(
    ("make", "relpath"),
    [
        (lambda t: (t / "l1").symlink_to("l2") or (t / "l2").symlink_to("a.txt"), "l1"),
        (lambda t: (t / "up").symlink_to(".."), "up/outside/secret"),
        (lambda t: (t / "up").symlink_to("../outside"), "up/secret"),
        (lambda t: (t / "abs").symlink_to(t.parent / "outside" / "secret"), "abs"),
        (lambda t: (t / "dev").symlink_to("/dev/zero"), "dev"),
        (lambda t: (t / "dangling").symlink_to("nowhere"), "dangling"),
        (lambda t: (t / "loop").symlink_to("loop"), "loop"),
        (lambda t: (t / "loop").symlink_to("loop"), "loop/x"),
        (lambda t: (t / "d" / "e2").symlink_to(t / "d" / "e"), "d/e2/f.txt"),
        (lambda t: (t / "d" / "out").symlink_to(t.parent / "outside"), "d/out/secret"),
        (lambda t: (t / "self").symlink_to("."), "self/a.txt"),
    ],
    ids=[
        "chain",
        "link-to-dotdot",
        "link-to-dotdot-dir",
        "absolute-link",
        "dev-zero",
        "dangling",
        "loop",
        "through-loop",
        "intermediate-inside",
        "intermediate-outside",
        "link-to-dot",
    ],
)
def test_t10_every_symlink_is_refused(
    tree: Path, resolver: str, make: object, relpath: str
) -> None:
    make(tree)  # type: ignore[operator]
    with open_root(tree, resolver) as root:
        assert outcome(root, relpath) == "containment/symlink"


def test_t11_fifo_is_refused_without_blocking(tree: Path, resolver: str) -> None:
    os.mkfifo(tree / "fifo")
    os.mkfifo(tree / "d" / "fifo")
    results: list[bytes | str] = []

    def read_both() -> None:
        with open_root(tree, resolver) as root:
            results.extend([outcome(root, "fifo"), outcome(root, "d/fifo")])

    worker = threading.Thread(target=read_both, daemon=True)
    worker.start()
    worker.join(timeout=30)
    assert not worker.is_alive(), "reading a FIFO blocked"
    assert results == ["containment/not_regular_file"] * 2


def test_t11_socket_is_refused(tree: Path, resolver: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tree)  # AF_UNIX paths are short: bind relative to the root
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.bind("sock")
        with open_root(tree, resolver) as root:
            assert outcome(root, "sock") == "containment/not_regular_file"


def test_t11_device_node_is_refused(tree: Path, resolver: str) -> None:
    try:
        os.mknod(tree / "zero", stat.S_IFCHR | 0o600, os.makedev(1, 5))
    except PermissionError:
        pytest.skip("creating a device node needs privileges")
    with open_root(tree, resolver) as root:
        assert outcome(root, "zero") == "containment/not_regular_file"


def test_t17_hard_link_to_a_file_outside_is_refused(tree: Path, resolver: str) -> None:
    os.link(tree.parent / "outside" / "secret", tree / "alias")
    with open_root(tree, resolver) as root:
        assert outcome(root, "alias") == "containment/hardlink"
    with open_root(tree, resolver, allow_hardlinks=True) as root:
        assert root.read_file("alias", cap=CAP) == SECRET  # only by explicit option


def test_t18_another_file_system_is_refused(resolver: str) -> None:
    if os.stat("/").st_dev == os.stat("/proc").st_dev:
        pytest.skip("/proc is not a separate file system here")
    with open_root(Path("/"), resolver) as root:
        assert outcome(root, "proc/version") == "containment/cross_device"
        with pytest.raises(SkillContainmentError) as info:
            root.list_dir("proc", max_entries=10)
        assert info.value.code == "cross_device"
    with open_root(Path("/"), resolver, allow_cross_device=True) as root:
        assert root.read_file("proc/version", cap=CAP).startswith(b"Linux")


def test_the_root_path_itself_is_trusted_and_resolved(tmp_path: Path, resolver: str) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (real / "x").write_bytes(b"x")
    (tmp_path / "link").symlink_to(real, target_is_directory=True)
    with open_root(tmp_path / "link", resolver) as root:
        assert root.read_file("x", cap=CAP) == b"x"


@pytest.mark.parametrize(
    ("make", "code"),
    [
        (lambda _: None, "not_found/missing"),
        (lambda p: p.write_text("x"), "containment/not_a_directory"),
        (os.mkfifo, "containment/not_a_directory"),
    ],
)
def test_a_root_that_is_not_a_folder_is_refused(tmp_path: Path, make: object, code: str) -> None:
    path = tmp_path / "root"
    make(path)  # type: ignore[operator]
    with pytest.raises(SkillError) as info:
        SafeRoot(path)
    assert f"{info.value.kind}/{info.value.code}" == code


def test_bad_resolver_and_closed_root_are_usage_errors(tree: Path) -> None:
    with pytest.raises(SkillUsageError):
        SafeRoot(tree, resolver="magic")  # type: ignore[arg-type]
    root = SafeRoot(tree)
    root.close()
    root.close()  # closing twice is harmless
    with pytest.raises(SkillUsageError) as info:
        root.read_file("a.txt", cap=CAP)
    assert info.value.code == "closed"


def test_openat2_requested_where_missing_is_a_usage_error(tree: Path) -> None:
    if openat2_available():
        pytest.skip("openat2 is available here")
    with pytest.raises(SkillUsageError):
        SafeRoot(tree, resolver="openat2")


def test_a_folder_renamed_during_a_walk(tree: Path, resolver: str) -> None:
    # Like Go's os.Root: a held folder follows its descriptor; the outer root no
    # longer sees it under its old name, and nothing escapes by path.
    with open_root(tree, resolver) as root:
        held = root.open_dir("d")
        os.rename(tree / "d", tree.parent / "outside" / "moved")
        assert outcome(root, "d/e/f.txt") == "not_found/missing"
        with held:
            assert held.read_file("e/f.txt", cap=CAP) == b"f"
            assert outcome(held, "../secret") == "containment/path_escape"


def test_both_resolvers_give_the_same_answers(tree: Path) -> None:
    if not openat2_available():
        pytest.skip("needs openat2 to compare")
    os.link(tree / "a.txt", tree / "d" / "hard")
    (tree / "up").symlink_to("..")
    (tree / "d" / "ln").symlink_to("e")
    os.mkfifo(tree / "d" / "fifo")
    queries = [
        "a.txt", "d/e/f.txt", "d/hard", "up/outside/secret", "d/ln/f.txt", "d/fifo",
        "missing", "d/missing/x", "a.txt/x", "d", "d/e",
    ]  # fmt: skip
    with SafeRoot(tree, resolver="openat2") as fast, SafeRoot(tree, resolver="walk") as slow:
        assert [outcome(fast, q) for q in queries] == [outcome(slow, q) for q in queries]
        listings = [
            (root.list_dir("d", max_entries=100), root.list_dir("", max_entries=100))
            for root in (fast, slow)
        ]
        assert listings[0] == listings[1]


# -- listing -------------------------------------------------------------------------


def test_listing_takes_folders_and_files_and_gives_a_reason_for_the_rest(
    tree: Path, resolver: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tree / "link").symlink_to("a.txt")
    os.mkfifo(tree / "fifo")
    os.link(tree.parent / "outside" / "secret", tree / "hard")
    (tree / "bad\x1bname").write_text("x")
    monkeypatch.chdir(tree)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.bind("sock")
        with open_root(tree, resolver) as root:
            listing = root.list_dir("", max_entries=100)
    assert [(e.name, e.kind) for e in listing.entries] == [("a.txt", "file"), ("d", "dir")]
    assert listing.entries[0].size == 1
    assert [(s.path, s.code, s.entry) for s in listing.skipped] == [
        ("bad\x1bname", "bad_name", "file"),
        ("fifo", "special_file", "special"),
        ("hard", "hardlink", "file"),
        ("link", "symlink", "link"),
        ("sock", "special_file", "special"),
    ]


def test_t20_listing_is_bounded_at_n_and_n_plus_one(tree: Path, resolver: str) -> None:
    with open_root(tree, resolver) as root:
        full = root.list_dir("", max_entries=2)  # a.txt and d: exactly two entries
        assert [s.code for s in full.skipped] == []
        cut = root.list_dir("", max_entries=1)
        assert len(cut.entries) == 1
        assert [s.code for s in cut.skipped] == ["too_many_entries"]


def test_t94_a_cut_listing_takes_the_first_entries_by_name(tmp_path: Path, resolver: str) -> None:
    names = [f"n{(index * 13) % 64:02d}" for index in range(64)]
    for name in names:
        (tmp_path / name).mkdir()
    with open_root(tmp_path, resolver) as root:
        cut = root.list_dir("", max_entries=4)
    assert [entry.name for entry in cut.entries] == sorted(names)[:4]
    assert [(s.path, s.code) for s in cut.skipped] == [("", "too_many_entries")]
    assert cut.skipped[0].reason.startswith("64 entries")


def test_listing_a_nested_folder_names_paths_from_the_root(tree: Path, resolver: str) -> None:
    (tree / "d" / "ln").symlink_to("e")
    with open_root(tree, resolver) as root:
        listing = root.list_dir("d", max_entries=10)
    assert [e.name for e in listing.entries] == ["e"]
    assert [s.path for s in listing.skipped] == ["d/ln"]


def test_has_entry_and_link_helpers(tree: Path, resolver: str) -> None:
    (tree / "to-dir").symlink_to("d")
    (tree / "to-file").symlink_to("a.txt")
    (tree / "dangling").symlink_to("nowhere")
    with open_root(tree, resolver) as root:
        assert root.has_entry("") is True
        assert root.has_entry("a.txt") is True
        assert root.has_entry("dangling") is True  # present, whatever it points at
        assert root.has_entry("nope") is False
        assert root.has_entry("nope/deeper") is False
        assert [root.link_kind(n) for n in ("to-dir", "to-file", "dangling", "")] == [
            "dir",
            "other",
            "none",
            "none",
        ]
        assert root.link_kind("up/x") == "none"
        assert root.link_target("to-dir") == str(tree / "d")
        assert root.link_target("a.txt") is None


def test_folder_identity_recognises_the_same_folder(tree: Path, resolver: str) -> None:
    with open_root(tree, resolver) as root:
        info = os.stat(tree / "d")
        assert root.folder_identity("d") == (info.st_dev, info.st_ino)
        assert root.folder_identity("") == root.identity
        with root.open_dir("d") as child:
            assert child.identity == (info.st_dev, info.st_ino)
            assert child.device == root.device


def test_no_descriptor_is_left_open(tree: Path, resolver: str) -> None:
    if not Path("/proc/self/fd").exists():
        pytest.skip("needs /proc to count descriptors")
    (tree / "up").symlink_to("..")
    gc.collect()  # descriptors of earlier tests' objects close now, not mid-count
    before = len(os.listdir("/proc/self/fd"))
    with open_root(tree, resolver) as root:
        for relpath in ("a.txt", "d/e/f.txt", "up/outside/secret", "d/nope", "a.txt/x"):
            outcome(root, relpath)
        root.list_dir("d", max_entries=10)
        root.has_entry("d/e/f.txt")
        root.folder_identity("d/e")
        root.open_dir("d").close()
    assert len(os.listdir("/proc/self/fd")) == before


@pytest.mark.parametrize("path", [123, b"/tmp", None])
def test_a_root_that_is_not_a_path_is_a_usage_error(path: object) -> None:
    with pytest.raises(SkillUsageError) as info:
        SafeRoot(path)  # type: ignore[arg-type]
    assert info.value.code == "bad_argument"


def test_threads_sharing_a_root_each_get_whole_listings(tree: Path, resolver: str) -> None:
    # Found in review: scandir() of the held descriptor shares its offset between
    # threads, and listings of the root came back short with no reason given.
    for index in range(300):
        (tree / f"f{index:03d}").mkdir()
    results: list[int] = []

    def list_many(root: SafeRoot) -> None:
        results.extend(len(root.list_dir("", max_entries=1000).entries) for _ in range(20))

    with open_root(tree, resolver) as root:
        threads = [threading.Thread(target=list_many, args=(root,)) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert results == [302] * 80  # 300 folders, a.txt and d, every time


def test_list_dir_and_read_refuse_bad_bounds(tree: Path) -> None:
    with SafeRoot(tree) as root:
        for call in (
            lambda: root.list_dir("", max_entries=0),
            lambda: root.list_dir("", max_entries=None),  # type: ignore[arg-type]
            lambda: root.read_file("a.txt", cap=-1),
            lambda: root.read_skill_file("", cap="1"),  # type: ignore[arg-type]
        ):
            with pytest.raises(SkillUsageError):
                call()


@pytest.mark.skipif(not openat2_available(), reason="no openat2")
def test_openat2_filtered_after_start_up_falls_back_to_the_walk(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A seccomp filter cannot be installed from a test without a helper process, so
    # the kernel's answer to a filtered call (EPERM) is played by a stand-in.
    from skillguard._fs import walk

    def filtered(*_: object) -> int:
        raise OSError(errno.EPERM, "filtered")

    monkeypatch.setattr(walk, "_openat2", filtered)
    with SafeRoot(tree, resolver="openat2") as root:
        assert root.read_file("d/e/f.txt", cap=CAP) == b"f"
        assert root.resolver == "walk"


# -- names that hide text (T40) ------------------------------------------------------

HIDDEN_NAMES = [
    pytest.param("docs\U000e0069\U000e0067\U000e006e", id="tag-characters"),
    pytest.param("cat\u202egpj.exe", id="right-to-left-override"),
    pytest.param("a\u200bb", id="zero-width-space"),
    pytest.param("ig\u200cnore", id="zwnj-between-ascii"),
]


@pytest.mark.parametrize("name", HIDDEN_NAMES)
def test_t40_a_name_that_hides_text_is_skipped_when_listed(
    tmp_path: Path, resolver: str, name: str
) -> None:
    (tmp_path / "refs").mkdir()
    (tmp_path / "refs" / name).mkdir()
    (tmp_path / "refs" / f"{name}.md").write_bytes(b"x")
    (tmp_path / "refs" / "plain.md").write_bytes(b"x")
    with open_root(tmp_path, resolver) as root:
        listing = root.list_dir("refs", max_entries=10)
    assert [entry.name for entry in listing.entries] == ["plain.md"]
    assert sorted((s.code, s.kind, s.entry) for s in listing.skipped) == [
        ("hidden_character", "containment", "dir"),
        ("hidden_character", "containment", "file"),
    ]
    for item in listing.skipped:
        # Reported, never passed raw: the path shows the character as [U+XXXX].
        assert item.path.startswith("refs/")
        assert "[U+" in item.path
        assert name not in item.path
        assert name not in item.reason


@pytest.mark.parametrize("name", HIDDEN_NAMES)
def test_t40_a_name_that_hides_text_cannot_be_read(
    tmp_path: Path, resolver: str, name: str
) -> None:
    (tmp_path / name).mkdir()
    (tmp_path / name / "f.md").write_bytes(b"x")
    (tmp_path / f"{name}.md").write_bytes(b"x")
    with open_root(tmp_path, resolver) as root:
        assert outcome(root, f"{name}/f.md") == "containment/hidden_character"
        assert outcome(root, f"{name}.md") == "containment/hidden_character"


def test_t43_names_in_real_scripts_are_listed(tmp_path: Path, resolver: str) -> None:
    names = sorted(
        [
            "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645.md",
            "\U0001f468\u200d\U0001f469.md",
            "\u05e9\u05dc\u05d5\u05dd \u200fv2.md",
        ]
    )
    for name in names:
        (tmp_path / name).write_bytes(b"x")
    with open_root(tmp_path, resolver) as root:
        listing = root.list_dir("", max_entries=10)
        assert [entry.name for entry in listing.entries] == names
        assert listing.skipped == ()
        assert root.read_file(names[0], cap=CAP) == b"x"
