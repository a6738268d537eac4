"""The human at the terminal: the process's controlling terminal, never stdin or stdout.

Rules (threat-model.md T162). A question meant for the human at the terminal is asked
and answered on ``/dev/tty``, opened ``O_RDWR|O_NOCTTY``: a caller that pipes stdin or
stdout cannot answer it, and a process without a controlling terminal gets ``None``.
"""

from __future__ import annotations

import contextlib
import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import TextIO

__all__ = ["controlling_terminal"]


_TERMINAL = "/dev/tty"


@contextlib.contextmanager
def controlling_terminal() -> Iterator[tuple[TextIO, TextIO] | None]:
    """The process's controlling terminal (``/dev/tty``), as a text reader and a text
    writer of one descriptor, closed on exit; ``None`` when the process has none (a
    daemon, a new session, a CI runner). Never stdin or stdout: a caller that pipes
    them cannot answer a question meant for the human at the terminal (T162)."""
    try:
        fd = os.open(_TERMINAL, os.O_RDWR | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError:  # ENXIO: no controlling terminal; ENOENT: no /dev/tty at all
        yield None
        return
    try:
        # Two buffered streams over the one descriptor; each is closed without it.
        with (
            open(fd, encoding="utf-8", errors="replace", closefd=False) as reader,
            open(fd, "w", encoding="utf-8", errors="backslashreplace", closefd=False) as writer,
        ):
            yield reader, writer
    finally:
        os.close(fd)
