"""The operator's own files, read by the path the operator gave.

Rules (threat-model.md T51, T52, T61). These paths are configuration the operator names
(a policy, a registry, a key, an audit log handed to ``audit verify``), not workspace
content: they are resolved by the OS, and each file is opened once, ``O_NONBLOCK`` (a
FIFO cannot block the open), and read only if ``fstat`` of that descriptor shows a
regular file (``OSError`` ``EINVAL`` otherwise). Nothing here writes.

An audit log can be large and can be handed to ``audit verify`` by anyone: it is read
in chunks from one descriptor, a line at a time, never more than the size ``fstat``
gave (a ``/proc`` file says 0 and is read as empty), and a line over the caller's cap
ends the stream at once, so memory stays flat whatever the file holds. The audit log's
writer (``_fs.write.AppendFile``) reads its own descriptor the same way.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Generator

__all__ = [
    "read_operator_bytes",
    "read_trusted_bytes",
    "read_trusted_file",
    "same_file",
    "stream_lines",
]


_READ_CHUNK = 64 * 1024
_STREAM_CHUNK = 1 << 20


def read_trusted_file(path: str) -> str:
    """The text of an operator's file (undecodable bytes replaced, so never raises on them)."""
    return read_trusted_bytes(path).decode("utf-8", "replace")


def read_trusted_bytes(path: str) -> bytes:
    """The bytes of an operator's own file (a policy, a log): a regular file only."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", path)
        chunks = []
        while chunk := os.read(fd, _READ_CHUNK):
            chunks.append(chunk)
    finally:
        os.close(fd)
    return b"".join(chunks)


def read_operator_bytes(path: str, *, limit: int) -> bytes:
    """At most *limit* bytes of an operator's small regular file (a key): ``OSError``
    (``EFBIG``) when it holds more, ``EINVAL`` when it is not a regular file."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", path)
        chunks: list[bytes] = []
        size = 0
        while size <= limit and (chunk := os.read(fd, limit + 1 - size)):
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    if size > limit:
        raise OSError(errno.EFBIG, "file too large", path)
    return b"".join(chunks)


def same_file(first: str, second: str) -> bool:
    """Whether two operator paths name one file (symlinks followed, as an open would):
    ``False`` when either cannot be reached."""
    try:
        one, other = os.stat(first), os.stat(second)
    except (OSError, ValueError):
        return False
    return (one.st_dev, one.st_ino) == (other.st_dev, other.st_ino)


def stream_lines(path: str, *, max_line: int) -> Generator[bytes, None, None]:
    """The lines of an operator's regular file, split on ``\\n`` only, each with its
    ``\\n`` (the last may lack it).

    The file is opened once (``O_NONBLOCK``, so a FIFO cannot block the open) and must be
    a regular file on ``fstat`` (``OSError`` ``EINVAL`` otherwise); at most the size
    ``fstat`` gave is read. A line longer than *max_line* bytes is cut to
    ``max_line + 1`` bytes and ends the stream. Close the generator (``contextlib.closing``)
    to close the descriptor at once.
    """
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", path)
        yield from _split_lines(lambda size: os.read(fd, size), info.st_size, max_line)
    finally:
        os.close(fd)


def _split_lines(
    read: Callable[[int], bytes], remaining: int, max_line: int
) -> Generator[bytes, None, None]:
    """The lines of the next *remaining* bytes that *read* gives (``stream_lines``)."""
    pending = b""
    while remaining > 0 and (chunk := read(min(_STREAM_CHUNK, remaining))):
        remaining -= len(chunk)
        buffer = pending + chunk if pending else chunk
        start = 0
        while (end := buffer.find(b"\n", start)) != -1:
            if end - start > max_line:
                yield buffer[start : start + max_line + 1]
                return
            yield buffer[start : end + 1]
            start = end + 1
        pending = buffer[start:]
        if len(pending) > max_line:
            yield pending[: max_line + 1]
            return
    if pending:
        yield pending
