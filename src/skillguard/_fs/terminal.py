"""The human at the terminal: the process's controlling terminal, never stdin or stdout.

Rules (threat-model.md T162, T205). A question meant for the human at the terminal is asked
and answered on ``/dev/tty``, opened ``O_RDWR|O_NOCTTY``: a caller that pipes stdin or
stdout cannot answer it, and a process without a controlling terminal gets ``None``.
"""

from __future__ import annotations

import contextlib
import os
import termios
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import TextIO

__all__ = ["controlling_terminal", "discard_typeahead"]


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


def discard_typeahead(stream: object) -> None:
    """Discard what was typed on the terminal *stream* reads from and not read yet, so
    that the next line read was typed after the question it answers was shown: keys
    typed ahead (an answer to something else, input meant for another program on the
    terminal) answer nothing (T205). A stream that is no terminal is left alone."""
    fileno = getattr(stream, "fileno", None)
    try:
        descriptor = fileno() if callable(fileno) else None
        if isinstance(descriptor, int) and os.isatty(descriptor):
            termios.tcflush(descriptor, termios.TCIFLUSH)
    except (OSError, ValueError, termios.error):  # closed, or no descriptor (io.StringIO)
        return
