"""Path strings, checked, split and shown, before and without any system call.

Two kinds of path reach skillguard (threat-model.md T13, T19, T40):

* A name beneath a root (``split_name``) is untrusted: a skill folder, a resource a
  model asked for, an entry a listing found. It is validated before any system call:
  relative, no empty component (so no trailing ``/`` and no ``//``), no ``.`` or ``..``,
  no NUL, no control characters, no backslash, no character that hides or reorders
  text, bounded length. Nothing is ever resolved by a path string again: ``SafeRoot``
  (``_fs.containment``) walks the components from a held descriptor.
* A path the operator gave (``operator_path``, ``split_operator_path``) is the
  operator's own configuration: it is resolved by the OS, and only checked to be a path
  at all.

``display_path`` and ``printed_path`` show a path of either kind as text that is always
valid Unicode. Nothing here opens, stats or lists a file.
"""

from __future__ import annotations

import os
import re

from skillguard._core.errors import SkillContainmentError, SkillUsageError, safe_repr
from skillguard._core.text import find_hidden

__all__ = [
    "display_path",
    "join_relative",
    "operator_path",
    "printed_path",
    "split_name",
    "split_operator_path",
]

_MAX_NAME_BYTES = 255  # NAME_MAX on Linux and the BSDs
_MAX_PATH_BYTES = 4095  # PATH_MAX, less the terminating NUL
_BAD_PATH_CHAR = re.compile("[\x00-\x1f\x7f-\x9f\\\\]")  # controls and backslash


def display_path(path: str) -> str:
    """A path as text that is always valid Unicode (undecodable bytes escaped)."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def printed_path(path: str) -> str:
    """``display_path`` that cannot be mistaken for another path: a backslash is
    doubled before undecodable bytes become ``\\xNN``, so a name holding the four
    characters ``\\xff`` and one holding the byte 0xff never print alike."""
    return os.fsencode(path).replace(b"\\", b"\\\\").decode("utf-8", "backslashreplace")


# -- names ---------------------------------------------------------------------------


def _bad_name(reason: str, name: str) -> SkillContainmentError:
    return SkillContainmentError("bad_name", f"{reason}: {safe_repr(name)}")


def split_name(relpath: str) -> tuple[str, ...]:
    """Validate an untrusted relative path and split it into components.

    ``""`` is the root itself. Raises ``SkillContainmentError`` (``path_escape`` for
    absolute paths and ``.``/``..`` components, ``hidden_character`` for a character
    that hides or reorders text, ``bad_name`` for the rest) before any
    system call is made, and ``SkillUsageError`` when *relpath* is not a ``str``.
    """
    if not isinstance(relpath, str):
        raise SkillUsageError("bad_argument", "a path must be a str")
    if not relpath:
        return ()
    if len(relpath) > _MAX_PATH_BYTES:  # a character is at least one byte
        raise _bad_name("the path is too long", relpath)
    if relpath.startswith("/"):
        raise SkillContainmentError("path_escape", f"absolute path {safe_repr(relpath)}")
    if "/" not in relpath and relpath not in (".", "..") and relpath.isascii():
        # One plain ASCII name, the usual case (a skill folder): two checks suffice.
        if _BAD_PATH_CHAR.search(relpath) is not None:
            raise _bad_name("a control character or backslash in the path", relpath)
        if len(relpath) > _MAX_NAME_BYTES:
            raise _bad_name("a path component is too long", relpath)
        return (relpath,)
    if _BAD_PATH_CHAR.search(relpath) is not None:
        raise _bad_name("a control character or backslash in the path", relpath)
    if not relpath.isascii():  # O(1); only then can a lone surrogate be present
        try:
            encoded = relpath.encode("utf-8")
        except UnicodeEncodeError:  # bytes that were never UTF-8
            raise _bad_name("a path component that is not UTF-8", relpath) from None
        if len(encoded) > _MAX_PATH_BYTES:  # both resolvers refuse it alike
            raise _bad_name("the path is too long", relpath)
        hidden = find_hidden(relpath)
        if hidden is not None:
            raise SkillContainmentError(
                "hidden_character",
                f"the invisible or bidirectional character U+{ord(hidden[1]):04X} "
                f"in the path {safe_repr(relpath)}",
            )
    parts = tuple(relpath.split("/"))
    for part in parts:
        if part in (".", ".."):
            raise SkillContainmentError(
                "path_escape", f"'.' or '..' in the path {safe_repr(relpath)}"
            )
        if not part:
            # Also refuses a trailing "/" and "//" (the shape of Go's CVE-2026-39822).
            raise _bad_name("an empty path component", relpath)
        # At most 4 bytes a character: only a long component can be over the limit.
        if len(part) > _MAX_NAME_BYTES // 4 and len(part.encode("utf-8")) > _MAX_NAME_BYTES:
            raise _bad_name("a path component is too long", relpath)
    return parts


def join_relative(base: str, name: str) -> str:
    """``base/name`` for relative ``/``-separated paths (``""`` is the root)."""
    if not base:
        return name
    return f"{base}/{name}" if name else base


# -- the operator's own paths --------------------------------------------------------


def operator_path(path: object, what: str) -> str:
    """A path the operator named (a ``str`` or a path-like object), as a ``str``.

    Raises ``SkillUsageError`` for anything else, an empty path, a NUL in it (which
    ``open`` would refuse with a ``ValueError``) or a character the file system cannot
    encode (a lone surrogate, which ``open`` would refuse with a ``UnicodeEncodeError``).
    """
    if isinstance(path, os.PathLike):
        # A caller's __fspath__ is foreign code: whatever it raises is a bad argument.
        try:
            path = os.fspath(path)
        except Exception as exc:
            raise SkillUsageError(
                "bad_argument", f"{what} could not be turned into a path"
            ) from exc
    if not isinstance(path, str):
        raise SkillUsageError("bad_argument", f"{what} must be a str or a path-like object")
    if not path or "\x00" in path:
        raise SkillUsageError("bad_argument", f"{what} must not be empty or hold a NUL")
    try:
        os.fsencode(path)
    except UnicodeEncodeError as exc:
        raise SkillUsageError("bad_argument", f"{what} holds a character no path can") from exc
    return path


def split_operator_path(path: str) -> tuple[str, str]:
    """(parent folder, final name) of a path the operator gave, made absolute."""
    parent, name = os.path.split(os.path.abspath(path))
    return parent, name
