"""T16: a folder swapped for a symlink between check and open never leaks a file.

One thread swaps ``root/d`` between a real folder and a symlink to a folder outside
the root, as fast as it can, at least 10,000 times. Another thread reads ``d/f``
through SafeRoot the whole time. A naive reader (resolve the path, check the prefix,
open it) runs alongside as the control: it must leak, or the race never happened.
No sleeping: the threads run flat out until the swapper is done.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from skillguard import SafeRoot, SkillError, openat2_available

SWAPS = 10_000
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


@pytest.mark.parametrize("resolver", RESOLVERS)
def test_t16_directory_swap_race_never_reads_outside(tmp_path: Path, resolver: str) -> None:
    root = tmp_path / "root"
    (root / "d").mkdir(parents=True)
    (root / "d" / "f").write_bytes(SAFE)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f").write_bytes(SECRET)
    (root / "link").symlink_to(outside, target_is_directory=True)

    done = threading.Event()
    swaps = 0

    def swap() -> None:
        nonlocal swaps
        try:
            for _ in range(SWAPS):
                os.rename(root / "d", root / "held")  # the real folder steps aside
                os.rename(root / "link", root / "d")  # the symlink takes its name
                os.rename(root / "d", root / "link")
                os.rename(root / "held", root / "d")
                swaps += 1
        finally:
            done.set()

    counts = {"safe": 0, "refused": 0, "secret": 0, "naive_secret": 0}

    def read() -> None:
        with SafeRoot(root, resolver=resolver) as safe_root:  # type: ignore[arg-type]
            while not done.is_set():
                try:
                    data = safe_root.read_file("d/f", cap=1024)
                except SkillError:
                    counts["refused"] += 1
                else:
                    counts["secret" if data == SECRET else "safe"] += 1
                if naive_read(root, "d/f") == SECRET:
                    counts["naive_secret"] += 1

    threads = [threading.Thread(target=swap), threading.Thread(target=read)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert swaps == SWAPS
    assert counts["secret"] == 0, counts
    # The race really ran: SafeRoot saw both states, and the naive reader leaked.
    assert counts["safe"] > 0, counts
    assert counts["refused"] > 0, counts
    assert counts["naive_secret"] > 0, counts
