"""Hypothesis strategies for fuzzing a host application that embeds skillguard.

Install the extra (``pip install 'skillguard[testing]'``, which brings Hypothesis), then
draw from these strategies in your own tests. skillguard's own test suite and fuzz
harnesses use exactly these generators, so what you fuzz with is what we fuzz with.

Documents (``bytes`` or data to render):

- ``skill_documents()``: a valid skill as ``{"fields": ..., "body": ...}``;
  ``render(fields, body)`` turns it into ``SKILL.md`` bytes that ``parse_skill`` accepts.
- ``valid_skill_files()``: the same, already rendered.
- ``mutated_documents()``: a valid document with hostile fragments spliced in (anchors,
  aliases, tags, merge keys, directives, deep flow nesting, duplicate keys, hidden and
  control characters, stray fences).
- ``near_yaml``: frontmatter built from the characters that make YAML's grammar work.
- ``hostile_skill_files()``: any of the above, plus raw bytes, broken encodings, missing
  or doubled fences and documents at and over the size cap.

Workspaces (a tree description, then written):

- ``hostile_workspaces()`` draws a ``Workspace``: skill folders with valid or hostile
  ``SKILL.md`` files, symlinks (to outside the tree, to their own folder, to nothing, to a
  sibling), FIFOs, hard links, deep trees, huge sparse files and names with spaces,
  Unicode, hidden characters and control characters.
- ``write_workspace(tree, folder)`` writes one beneath *folder*. It creates entries only
  beneath *folder*: it never follows a symlink while writing (links are made last and
  never written through), refuses a name that could leave the folder, and refuses an
  existing entry rather than overwrite it. A link may *point* outside the folder, which is
  the point: a loader must not follow it.

Misuse: ``hostile_values`` are wrong-typed and booby-trapped arguments for any public
function (objects whose ``__eq__``, ``__hash__``, ``__fspath__`` and ``__str__`` raise).
Some are relative paths that a function under test may create, so run such a test from a
scratch folder (``monkeypatch.chdir(tmp_path)``).

This module is not imported by ``import skillguard``; only importing it needs Hypothesis.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import unicodedata
from pathlib import Path
from typing import Any, Literal

import attrs

try:
    from hypothesis import strategies as st
except ImportError as error:  # pragma: no cover - the test environment has Hypothesis
    raise ImportError(
        "skillguard.testing needs Hypothesis: pip install 'skillguard[testing]'"
    ) from error

from skillguard._core.errors import SkillUsageError
from skillguard._core.limits import Limits
from skillguard._skills.parse import FORBIDDEN_CHARS, LINE_BREAK_CONTROLS

__all__ = [
    "YAML_ALPHABET",
    "Booby",
    "BytesPath",
    "Workspace",
    "WorkspaceEntry",
    "entry_names",
    "hostile_fragments",
    "hostile_skill_files",
    "hostile_values",
    "hostile_workspaces",
    "meta_keys",
    "mutated_documents",
    "names",
    "near_yaml",
    "non_blank_text",
    "quote",
    "render",
    "skill_documents",
    "tool_names",
    "tool_rules",
    "valid_skill_files",
    "write_workspace",
]

# Characters a valid field may hold: any Unicode letter, number, punctuation, symbol
# or plain space, minus the invisible and bidirectional ones the parser refuses.
_SAFE_TEXT_CHARS = st.characters(
    categories=("L", "N", "P", "S", "Zs"),
    exclude_characters="".join(FORBIDDEN_CHARS) + "\u2028\u2029\x85\xa0",
)

names = st.from_regex(r"[a-z0-9]{1,8}(-[a-z0-9]{1,8}){0,5}", fullmatch=True).filter(
    lambda n: len(n) <= 64
)
non_blank_text = st.text(_SAFE_TEXT_CHARS, min_size=1, max_size=80).filter(str.strip)
tool_names = st.from_regex(
    r"[A-Za-z][A-Za-z0-9_.-]{0,12}(\([A-Za-z0-9 _,:*.-]{0,12}\))?", fullmatch=True
)

# Tool rules over a small alphabet, so that rules often share a tool and a prefix and
# the covering relation is exercised rather than always false.
_rule_words = st.sampled_from(["git", "gitk", "diff", "ls", "lsof", "npm", "run", "a", "-v"])
_bash_commands = st.lists(_rule_words, min_size=1, max_size=3).map(" ".join)
_bash_specifiers = st.one_of(
    _bash_commands,
    _bash_commands.map(lambda c: c + ":*"),
    _bash_commands.map(lambda c: c + " *"),
    _bash_commands.map(lambda c: c + "*"),
    st.sampled_from(["*", "git * main", "* --version", "git && rm", "a; b", " git:*", ":*"]),
)
tool_rules = st.one_of(
    st.sampled_from(["Bash", "Read", "Grep", "bash", "mcp__gh", "mcp__gh__*", "mcp__gh__pr"]),
    _bash_specifiers.map(lambda s: f"Bash({s})"),
    st.sampled_from(["Read(./src/**)", "Read(*)", "WebFetch(domain:example.com)", "Read()"]),
    st.text(st.sampled_from("Bash(git:*) ,"), max_size=12),
)
meta_keys = st.from_regex(r"[a-z][a-z0-9_-]{0,15}", fullmatch=True).filter(
    lambda k: k not in ("name", "<<")
)


@st.composite
def skill_documents(draw: st.DrawFn) -> dict[str, Any]:
    """A valid skill as data: the fields and body to render, and the folder name."""
    fields: dict[str, Any] = {
        "name": draw(names),
        "description": draw(non_blank_text),
    }
    if draw(st.booleans()):
        fields["license"] = draw(non_blank_text)
    if draw(st.booleans()):
        fields["compatibility"] = draw(non_blank_text)
    if draw(st.booleans()):
        fields["version"] = draw(st.sampled_from(["1.0", "2.1.3", "0.0.1-beta", "on", "010"]))
    if draw(st.booleans()):
        fields["metadata"] = draw(st.dictionaries(meta_keys, non_blank_text, max_size=4))
    if draw(st.booleans()):
        tools = draw(st.lists(tool_names, max_size=5))
        fields["allowed-tools"] = tools if draw(st.booleans()) else " ".join(tools)
    if draw(st.booleans()):
        fields["steps"] = draw(st.lists(non_blank_text, max_size=5))
    for flag in ("disable-model-invocation", "user-invocable"):
        if draw(st.booleans()):
            fields[flag] = draw(st.sampled_from(["true", "false", "True", "FALSE"]))
    for key in ("argument-hint", "model", "context", "agent"):
        if draw(st.booleans()):
            fields[key] = draw(non_blank_text)
    # Any text but NUL, CR and the characters the strict body check looks at.
    body_chars = st.characters(
        codec="utf-8",
        exclude_characters="\x00\r" + "".join(FORBIDDEN_CHARS) + LINE_BREAK_CONTROLS,
    )
    body = draw(st.text(body_chars, max_size=200))
    return {"fields": fields, "body": body}


def quote(value: str) -> str:
    """A YAML double-quoted scalar (JSON strings are valid YAML double-quoted scalars)."""
    return json.dumps(value, ensure_ascii=False)


def render(fields: dict[str, Any], body: str) -> bytes:
    """Render fields as block-style YAML frontmatter with every scalar double-quoted."""
    lines = ["---"]
    for key, value in fields.items():
        if isinstance(value, dict):
            lines.append(f"{quote(key)}:" + ("" if value else " {}"))
            lines.extend(f"  {quote(k)}: {quote(v)}" for k, v in value.items())
        elif isinstance(value, list):
            lines.append(f"{quote(key)}:" + ("" if value else " []"))
            lines.extend(f"  - {quote(item)}" for item in value)
        else:
            lines.append(f"{quote(key)}: {quote(value)}")
    lines.append("---")
    return ("\n".join(lines) + "\n" + body).encode("utf-8")


# Fragments that exercise the parser's edges when spliced into otherwise valid input.
hostile_fragments = st.sampled_from(
    [
        "&a x",
        "*a",
        "!!python/object:os.system",
        "!foo",
        "<<: {a: b}",
        "? [a]\n: b",
        "%YAML 1.1\n---",
        "%TAG ! tag:x,2000:\n---",
        "...\n---\nb: c",
        "[" * 50,
        "{" * 50,
        "- - - - - - - - - - -",
        '"\\x00"',
        '"\\u202e"',
        "\x00",
        "\x1b[2J",
        "\u2028",
        "\x85",
        "\ufeff",
        "\t",
        "---",
        "----x",
        "'a'",
        '"a"',
        "a",
        "a: 1\na: 2",
        "|\n  block",
        ">-\n  folded",
        "k: >\n \n  leading spaces",
        "k: |#glued",
        "m: [a?b, c:d]",
        "m: {k?r: v}",
    ]
)


@st.composite
def mutated_documents(draw: st.DrawFn) -> bytes:
    """A valid document with hostile fragments spliced in at random lines."""
    doc = draw(skill_documents())
    text = render(doc["fields"], doc["body"]).decode("utf-8")
    lines = text.split("\n")
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(lines)))
        lines.insert(at, draw(hostile_fragments))
    return "\n".join(lines).encode("utf-8")


# Characters that make YAML's grammar work hard, for generated near-YAML text.
YAML_ALPHABET = " \n\t-:?[]{},#&*!|>'\"%@`\\abnxuLP01.~\u00e9\u20ac"

near_yaml = st.text(YAML_ALPHABET, max_size=120).map(
    lambda t: ("---\nname: demo\ndescription: x\n" + t + "\n---\n").encode()
)


# -- hostile arguments for the public API (T14) ----------------------------------------


class Booby:
    """An object whose comparison, hash, path and string forms all raise."""

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("__eq__")

    def __hash__(self) -> int:
        raise RuntimeError("__hash__")

    def __fspath__(self) -> str:
        raise RuntimeError("__fspath__")

    def __str__(self) -> str:
        raise RuntimeError("__str__")

    def __repr__(self) -> str:
        return "Booby()"


class BytesPath:
    """A path-like object that returns bytes, which ``os.fspath`` passes through."""

    def __fspath__(self) -> bytes:
        return b"/tmp/skillguard-bytes-path"

    def __repr__(self) -> str:
        return "BytesPath()"


def _nested(depth: int) -> list[object]:
    value: list[object] = []
    for _ in range(depth):
        value = [value]
    return value


# Values a confused or hostile caller may pass anywhere: wrong types, wrong values,
# and objects that raise from the dunder methods a library is tempted to call. A value
# may become a path that skillguard creates, so the drawn text never starts with "/"
# nor climbs more than one folder: a test that uses these runs from a scratch folder.
hostile_values: st.SearchStrategy[object] = st.one_of(
    st.sampled_from(
        [
            None,
            True,
            False,
            0,
            -1,
            10**100,
            -(10**100),
            float("nan"),
            float("inf"),
            -0.5,
            b"",
            b"hello",
            "",
            "\x00",
            "hel\x00lo",
            "\ud800",
            "../x",
            # Absolute paths that can be neither created nor written: the callers
            # that create files (audit logs, trust stores) are called with these.
            "/",
            "/nonexistent-skillguard/passwd",
            ".",
            "x" * 100_000,
            [],
            ["hello"],
            {},
            {"name": "hello"},
            {"name": "x", 1: 2},
            (),
            frozenset({"hello"}),
            object(),
            BytesPath(),
            _nested(200),
            print,
        ]
    ),
    # Built fresh per example: Hypothesis hashes sampled values, and these refuse.
    st.builds(Booby),
    st.builds(lambda: [Booby()]),
    st.builds(lambda: {"name": Booby()}),
    st.integers(),
    st.floats(),
    st.binary(max_size=20),
    st.text(max_size=20).filter(lambda text: not text.startswith("/") and "../.." not in text),
    st.lists(st.text(max_size=5), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
)


@st.composite
def valid_skill_files(draw: st.DrawFn) -> bytes:
    """A rendered ``SKILL.md`` that ``parse_skill`` accepts (its folder must be its name)."""
    doc = draw(skill_documents())
    return render(doc["fields"], doc["body"])


_CAP = Limits().max_skill_bytes
_HEAD = b"---\nname: demo\ndescription: x\n---\n"

# Whole-document tricks that no splice produces: encodings, fences and sizes.
_document_tricks = st.sampled_from(
    [
        b"",
        b"---",
        b"---\n",
        b"---\n---\n",
        b"name: demo\ndescription: x\n",
        b"---\nname: demo\ndescription: x\n",
        b"\xef\xbb\xbf" + _HEAD,
        b"\xef\xbb\xbf\xef\xbb\xbf" + _HEAD,
        _HEAD.replace(b"\n", b"\r\n"),
        _HEAD.replace(b"\n", b"\r"),
        b"---\nname: d\xe9mo\ndescription: x\n---\n",
        b"---\nname: demo\ndescription: \xed\xa0\x80\n---\n",
        b"\xff\xfe-\x00-\x00-\x00",
        b"---\nname: demo\ndescription: x\n---\n---\nname: other\n---\n",
        b"--- \nname: demo\ndescription: x\n--- \n",
        b"---\nname: demo\ndescription: x\n...\n",
        b"---\nname: demo\ndescription: x\n---\nbody\x00",
        b"---\nname: demo\ndescription: a: b\n---\n",
    ]
)

# Documents at the size caps: the whole file at its cap and one byte over, and a scalar
# and a frontmatter just over theirs.
_sized_documents = st.sampled_from(
    [
        _HEAD + b"x" * (_CAP - len(_HEAD)),
        _HEAD + b"x" * (_CAP - len(_HEAD) + 1),
        b"---\nname: demo\ndescription: " + b"d" * (Limits().max_scalar_bytes + 1) + b"\n---\n",
        b"---\nname: demo\ndescription: x\n"
        + b"# c\n" * (Limits().max_frontmatter_bytes // 4 + 1)
        + b"---\n",
    ]
)


def hostile_skill_files() -> st.SearchStrategy[bytes]:
    """Any ``SKILL.md`` bytes: valid, spliced, near-YAML, raw, broken or oversized.

    ``parse_skill`` must return a ``Skill`` or raise ``MalformedSkillError`` for each.
    """
    return st.one_of(
        valid_skill_files(),
        mutated_documents(),
        near_yaml,
        _document_tricks,
        _sized_documents,
        st.binary(max_size=512),
    )


# -- hostile workspaces ------------------------------------------------------------------

EntryKind = Literal["dir", "file", "sparse", "fifo", "symlink", "hardlink"]


@attrs.frozen
class WorkspaceEntry:
    """One entry of a ``Workspace``: *path* is its components beneath the folder.

    *kind* ``"file"`` holds *content*; ``"sparse"`` holds *content* and then is extended
    to *size* bytes without writing them; ``"symlink"`` points at *target* (any text: it
    may name a place outside the folder, itself, or nothing); ``"hardlink"`` is a second
    name of the file at *target* (components joined by ``/``, inside the tree).
    """

    kind: EntryKind
    path: tuple[str, ...]
    content: bytes = b""
    target: str = ""
    size: int = 0


@attrs.frozen
class Workspace:
    """A tree to write with ``write_workspace``, and the skill names it may hold."""

    entries: tuple[WorkspaceEntry, ...]

    @property
    def skill_names(self) -> tuple[str, ...]:
        """The folder names that hold a ``SKILL.md`` entry of any kind."""
        return tuple(
            sorted(
                {e.path[-2] for e in self.entries if len(e.path) >= 2 and e.path[-1] == "SKILL.md"}
            )
        )


# Names a file system accepts but a careless loader, log or terminal does not expect.
_odd_names = st.sampled_from(
    [
        "with space",
        " leading-space",
        "trailing-space ",
        "-dash-first",
        ".hidden",
        "...",
        "new\nline",
        "back\\slash",
        "tab\there",
        "esc\x1b[2Jape",
        "r\u202eevil",
        "zero\u200bwidth",
        "tag\U000e0041",
        "caf\u00e9",
        "\u0441yrillic",
        "NUL-free-but-\x7f",
        "skill.md",
        "SKILL.MD",
        "node_modules",
        ".git",
        "x" * 255,
        "\u00e9" * 127,
    ]
)

# Any single path component: not empty, no "/" or NUL, not "." or "..", at most 255
# bytes in UTF-8 (the usual NAME_MAX).
entry_names: st.SearchStrategy[str] = st.one_of(
    names,
    _odd_names,
    st.text(
        st.characters(codec="utf-8", exclude_characters="/\x00"), min_size=1, max_size=12
    ).filter(lambda n: n not in (".", "..")),
).filter(lambda n: len(n.encode("utf-8")) <= 255)


def _name_key(name: str) -> str:
    """The name as a case-insensitive file system that normalizes Unicode (macOS's
    APFS, Windows' NTFS) compares it: two names with one key are one entry there."""
    return unicodedata.normalize("NFD", name).casefold()


_link_targets = st.one_of(
    st.sampled_from(["/", "/etc", "/etc/passwd", "..", "../..", "../../..", "nowhere", "."]),
    names,
)


@st.composite
def _skill_folder(draw: st.DrawFn, name: str, others: list[str]) -> list[WorkspaceEntry]:
    """A folder *name* whose SKILL.md is a file, a link, a FIFO or huge, with extras."""
    base = (name,)
    md = (*base, "SKILL.md")
    how = draw(st.sampled_from(["file", "file", "file", "symlink", "fifo", "sparse", "hardlink"]))
    entries: list[WorkspaceEntry] = []
    if how == "file" or (how == "hardlink" and not others):
        doc = draw(skill_documents())
        # Mostly the folder's own name and a valid document, so that the loader's later
        # stages (approval, snapshot, activation) see many skills, not only refusals.
        if draw(st.integers(0, 3)):
            doc["fields"]["name"] = name
        valid = render(doc["fields"], doc["body"])
        content = valid if draw(st.integers(0, 2)) else draw(hostile_skill_files())
        entries.append(WorkspaceEntry("file", md, content=content))
    elif how == "symlink":
        target = draw(st.one_of(_link_targets, st.just("SKILL.md"), st.just("/etc/passwd")))
        entries.append(WorkspaceEntry("symlink", md, target=target))
    elif how == "fifo":
        entries.append(WorkspaceEntry("fifo", md))
    elif how == "sparse":
        size = draw(st.sampled_from([_CAP + 1, 64 * 2**20, 2**33]))
        entries.append(WorkspaceEntry("sparse", md, content=_HEAD, size=size))
    else:
        # A second name for a file that exists elsewhere in the tree.
        other = draw(st.sampled_from(others))
        entries.append(WorkspaceEntry("hardlink", md, target=f"{other}/SKILL.md"))
    # Names unique as a case-insensitive file system sees them, so that a tree written
    # on macOS holds every entry that was drawn: skill.md beside SKILL.md is one file
    # there, so no case variant of SKILL.md is drawn beside it.
    extras = draw(
        st.lists(
            entry_names.filter(lambda n: _name_key(n) != _name_key("SKILL.md")),
            max_size=3,
            unique_by=_name_key,
        )
    )
    for extra in extras:
        kind = draw(st.sampled_from(["file", "dir", "symlink", "fifo"]))
        path = (*base, extra)
        if kind == "file":
            entries.append(WorkspaceEntry("file", path, content=draw(st.binary(max_size=64))))
        elif kind == "dir":
            entries.append(WorkspaceEntry("file", (*path, "run.sh"), content=b"#!/bin/sh\n"))
        elif kind == "symlink":
            entries.append(WorkspaceEntry("symlink", path, target=draw(_link_targets)))
        else:
            entries.append(WorkspaceEntry("fifo", path))
    return entries


@st.composite
def hostile_workspaces(draw: st.DrawFn, max_entries: int = 6) -> Workspace:
    """A workspace tree of up to *max_entries* top-level entries, to ``write_workspace``.

    Each top-level entry is a skill folder (its ``SKILL.md`` a valid or hostile file, a
    symlink, a FIFO, a hard link or a huge sparse file, next to odd extras), a symlink
    (outside, to itself, dangling or to a sibling), a FIFO, a stray file, or a deep chain
    of folders with a skill at the bottom.
    """
    # Half the names are valid skill names, so that many skills parse and get served.
    tops = draw(
        st.lists(
            st.one_of(names, entry_names), min_size=1, max_size=max_entries, unique_by=_name_key
        )
    )
    entries: list[WorkspaceEntry] = []
    skills: list[str] = []
    for top in tops:
        kind = draw(st.sampled_from(["skill", "skill", "symlink", "fifo", "file", "deep"]))
        if kind == "skill":
            # Hard links point at skills written before this one, so they always resolve.
            hardlinkable = [s for s in skills if s != top]
            folder = draw(_skill_folder(top, hardlinkable))
            entries.extend(folder)
            if folder[0].kind == "file":
                skills.append(top)
        elif kind == "symlink":
            target = draw(st.one_of(_link_targets, st.just(top), st.sampled_from(tops)))
            entries.append(WorkspaceEntry("symlink", (top,), target=target))
        elif kind == "fifo":
            entries.append(WorkspaceEntry("fifo", (top,)))
        elif kind == "file":
            entries.append(WorkspaceEntry("file", (top,), content=draw(st.binary(max_size=64))))
        else:
            depth = draw(st.integers(2, 12))
            chain = (top, *(f"d{i}" for i in range(depth)))
            leaf = draw(names)
            doc = draw(skill_documents())
            doc["fields"]["name"] = leaf
            body = render(doc["fields"], doc["body"])
            entries.append(WorkspaceEntry("file", (*chain, leaf, "SKILL.md"), content=body))
    return Workspace(tuple(entries))


def _check_component(name: str) -> None:
    if (
        not isinstance(name, str)
        or not name
        or name in (".", "..")
        or "/" in name
        or "\x00" in name
    ):
        raise SkillUsageError("bad_argument", "a workspace entry name must be one path component")


def _make_parents(folder: Path, parts: tuple[str, ...]) -> Path:
    """Create the folders of *parts* beneath *folder*, refusing anything but a real folder."""
    here = folder
    for part in parts:
        here /= part
        with contextlib.suppress(FileExistsError):
            os.mkdir(here)
        # lstat, not stat: a symlink standing where a folder should be is never entered.
        if not stat.S_ISDIR(os.lstat(here).st_mode):
            raise SkillUsageError("bad_argument", "a workspace entry is beneath a non-folder")
    return here


def _create(path: Path) -> int:
    # O_EXCL with O_NOFOLLOW: never write through a link nor over an existing entry.
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    return os.open(path, flags, 0o644)


def write_workspace(tree: Workspace, folder: Path) -> None:
    """Write *tree* beneath *folder* (which must be an existing, real folder).

    Folders and files come first, then hard links, then symlinks, so nothing is ever
    written through a link. Every entry is created only beneath *folder*; a missing
    *folder*, an entry that already exists (two entries of the tree whose names a
    case-insensitive file system takes for one, too), a hard link to no file of the
    tree, or a name that is not one path component, is ``SkillUsageError``.
    """
    if not isinstance(tree, Workspace):
        raise SkillUsageError("bad_argument", "tree must be a Workspace")
    root = Path(folder)
    try:
        is_folder = stat.S_ISDIR(os.lstat(root).st_mode)
    except (FileNotFoundError, NotADirectoryError):
        is_folder = False
    if not is_folder:
        raise SkillUsageError("bad_argument", "folder must be an existing folder, not a link")
    for entry in tree.entries:
        for part in entry.path:
            _check_component(part)
    order = {"dir": 0, "file": 0, "sparse": 0, "fifo": 0, "hardlink": 1, "symlink": 2}
    try:
        for entry in sorted(tree.entries, key=lambda e: order[e.kind]):
            _write_entry(root, entry)
    except FileExistsError:
        # Two entries of one tree, or an entry and what the folder already held (on a
        # case-insensitive file system, skill.md and SKILL.md are one name).
        raise SkillUsageError(
            "bad_argument", "a workspace entry already exists; nothing is overwritten"
        ) from None
    except (FileNotFoundError, NotADirectoryError):
        raise SkillUsageError(
            "bad_argument",
            "a hard link's target is not a file of the tree, or the "
            "folder was removed while the tree was written",
        ) from None


def _write_entry(root: Path, entry: WorkspaceEntry) -> None:
    parent = _make_parents(root, entry.path[:-1])
    path = parent / entry.path[-1]
    if entry.kind == "dir":
        _make_parents(parent, entry.path[-1:])
    elif entry.kind in ("file", "sparse"):
        fd = _create(path)
        try:
            os.write(fd, entry.content)
            if entry.kind == "sparse":
                # Extend without writing: the file reports its size and uses no disk.
                os.ftruncate(fd, entry.size)
        finally:
            os.close(fd)
    elif entry.kind == "fifo":
        os.mkfifo(path, 0o644)
    elif entry.kind == "hardlink":
        source = entry.target.split("/")
        for part in source:
            _check_component(part)
        os.link(root.joinpath(*source), path, follow_symlinks=False)
    else:
        os.symlink(entry.target, path)
