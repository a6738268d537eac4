"""T16: a folder swapped for a symlink between check and open never leaks a file.

One thread swaps a folder of the root between a real folder and a symlink to a folder
outside the root, as fast as it can, at least 10,000 times (at most 100,000). Another thread reads a
file below it through SafeRoot the whole time. A naive reader (resolve the path,
check the prefix, open it) runs alongside as the control: it must leak, or the race
never happened. No sleeping: the threads run flat out until the swapper is done.

Two shapes: ``d/f`` (one folder level, which SafeRoot opens with ``openat`` under
both resolvers) and ``a/b/c/f`` with the middle folder ``a/b`` swapped (several
levels, which the openat2 resolver opens in one ``RESOLVE_BENEATH`` call and the walk
one ``O_NOFOLLOW`` component at a time): each resolver is raced on each shape.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from skillguard import SafeRoot, SkillError, openat2_available

SWAPS = 10_000
# A loaded machine can give the naive reader few chances to leak in SWAPS swaps: the
# swapper then keeps going, up to this many, until every state has been seen.
MAX_SWAPS = 100_000
SAFE = b"inside"
SECRET = b"SECRET-outside"
RESOLVERS = [
    pytest.param("openat2", marks=pytest.mark.skipif(not openat2_available(), reason="no openat2")),
    "walk",
]


def naive_read(root: Path, relpath: str) -> bytes | None:
    """The pattern this threat is about: realpath, prefix check, then open by path."""
    try:
        path = os.path.realpath(root / relpath)  # can itself fail mid-race
        if not path.startswith(str(root) + os.sep):
            return None
        return Path(os.path.join(root, relpath)).read_bytes()
    except OSError:
        return None


def race(root: Path, swapped: Path, link: Path, relpath: str, resolver: str) -> dict[str, int]:
    """Swap *swapped* with the symlink *link* at least SWAPS times while both readers
    read, and on until SafeRoot saw both states and the naive reader leaked (at most
    MAX_SWAPS times)."""
    held = swapped.with_name("held")
    done = threading.Event()
    swaps = 0
    counts = {"safe": 0, "refused": 0, "secret": 0, "naive_secret": 0}

    def swap() -> None:
        nonlocal swaps
        try:
            while swaps < MAX_SWAPS and (
                swaps < SWAPS or min(counts["safe"], counts["refused"], counts["naive_secret"]) == 0
            ):
                os.rename(swapped, held)  # the real folder steps aside
                os.rename(link, swapped)  # the symlink takes its name
                os.rename(swapped, link)
                os.rename(held, swapped)
                swaps += 1
        finally:
            done.set()

    def read() -> None:
        with SafeRoot(root, resolver=resolver) as safe_root:  # type: ignore[arg-type]
            while not done.is_set():
                try:
                    data = safe_root.read_file(relpath, cap=1024)
                except SkillError:
                    counts["refused"] += 1
                else:
                    counts["secret" if data == SECRET else "safe"] += 1
                if naive_read(root, relpath) == SECRET:
                    counts["naive_secret"] += 1

    threads = [threading.Thread(target=swap), threading.Thread(target=read)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert SWAPS <= swaps <= MAX_SWAPS
    return counts


@pytest.mark.parametrize("resolver", RESOLVERS)
def test_t16_directory_swap_race_never_reads_outside(tmp_path: Path, resolver: str) -> None:
    root = tmp_path / "root"
    (root / "d").mkdir(parents=True)
    (root / "d" / "f").write_bytes(SAFE)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f").write_bytes(SECRET)
    (root / "link").symlink_to(outside, target_is_directory=True)

    counts = race(root, root / "d", root / "link", "d/f", resolver)

    assert counts["secret"] == 0, counts
    # The race really ran: SafeRoot saw both states, and the naive reader leaked.
    assert counts["safe"] > 0, counts
    assert counts["refused"] > 0, counts
    assert counts["naive_secret"] > 0, counts


@pytest.mark.parametrize("resolver", RESOLVERS)
def test_t16_a_middle_folder_swapped_in_a_deep_path_never_reads_outside(
    tmp_path: Path, resolver: str
) -> None:
    root = tmp_path / "root"
    (root / "a" / "b" / "c").mkdir(parents=True)
    (root / "a" / "b" / "c" / "f").write_bytes(SAFE)
    outside = tmp_path / "outside"
    (outside / "c").mkdir(parents=True)
    (outside / "c" / "f").write_bytes(SECRET)
    # The link is a sibling of the swapped folder, so every rename stays in "a". It is
    # relative ("../../outside"): an absolute one is also stopped by RESOLVE_NO_XDEV
    # (its jump to "/"), and the race must show that the resolver's own rules hold.
    (root / "a" / "link").symlink_to(os.path.relpath(outside, root / "a"), target_is_directory=True)

    counts = race(root, root / "a" / "b", root / "a" / "link", "a/b/c/f", resolver)

    assert counts["secret"] == 0, counts
    assert counts["safe"] > 0, counts
    assert counts["refused"] > 0, counts
    assert counts["naive_secret"] > 0, counts
