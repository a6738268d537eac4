"""What a human at a terminal is shown and asked: an approval request, and a file.

Rules (threat-model.md T32, T124, T132, T150): ``render_request`` prints skillguard's
own facts plainly and every piece of the skill's (or agent file's) text inside a railed
block, each line behind a gutter, every line at most 76 columns, so content cannot
forge a fact line or the prompt. ``ConsoleApprover`` asks on a TTY and refuses without
one.
"""

from __future__ import annotations

import hashlib
import unicodedata
from typing import TYPE_CHECKING, TextIO

from skillguard._core.errors import safe_repr
from skillguard._core.text import reveal, terminal_line
from skillguard._fs.terminal import discard_typeahead
from skillguard._skills.approval import Decision

if TYPE_CHECKING:
    from skillguard._skills.approval import ApprovalRequest

__all__ = ["ConsoleApprover", "render_file", "render_request"]


_RAIL = "  +------ text written by the skill's author: read it, do not obey it ------"
_RAIL_END = "  +------ end of the skill's text ------"
_AGENT_RAIL = "  +------ text from the agent file's author: read it, do not obey it ------"
_AGENT_RAIL_END = "  +------ end of the agent file's text ------"
_GUTTER = "  | "
_MORE = "      ... "  # the continuation of a wrapped fact line
_WIDTH = 76  # columns of every line printed; a terminal of 80 never wraps one
_FILES_SHOWN = 40


def _columns(char: str) -> int:
    """Columns a character may take, rounded up: wide, full-width and ambiguous
    characters count two, so a line is never wider than counted."""
    return 2 if unicodedata.east_asian_width(char) in ("W", "F", "A") else 1


def _wrap(first: str, text: str, more: str) -> list[str]:
    """*first* + *text* cut into lines of at most ``_WIDTH`` columns, each piece after
    the first behind *more*: the terminal never wraps a line itself, so no piece of
    untrusted text ever starts at column 0."""
    lines: list[str] = []
    current, used = first, len(first)
    for char in text:
        width = _columns(char)
        if used + width > _WIDTH:
            lines.append(current)
            current, used = more, len(more)
        current += char
        used += width
    lines.append(current)
    return lines


def _railed(label: str, text: str) -> list[str]:
    lines = _wrap(_GUTTER, f"[{label}]", _GUTTER)
    for line in text.split("\n"):
        lines.extend(_wrap(_GUTTER, terminal_line(line), _GUTTER))
    return lines


def render_request(request: ApprovalRequest, *, full: bool = False) -> str:
    """The request as a terminal shows it: skillguard's facts first, plainly; then every
    piece of the skill's own text in a railed block, each line behind a gutter. Every
    line is at most 76 columns (a longer one is cut, its pieces indented), so no content
    can print a line that looks like one of the facts or the prompt. *full* shows the
    whole ``SKILL.md`` instead of the preview."""

    def fact(value: str) -> str:
        return safe_repr(terminal_line(value), limit=300)

    lines: list[str] = []

    def add(first: str, text: str = "") -> None:
        lines.extend(_wrap(first, text, _MORE))

    agent_file = request.kind == "agent"
    what = "agent file" if agent_file else "skill"
    add(
        "skillguard: agent ",
        f"{fact(request.agent)} asks for workspace {what} {fact(request.skill)}",
    )
    add(
        "  file      " if agent_file else "  folder    ",
        fact(request.folder or request.source + "/" + request.path),
    )
    add(f"  digest    {request.digest}")
    covered = f"all {len(request.files)} files, {request.total_size} bytes"
    add(f"            (what you approve: {covered})")
    add(f"  {'agent' if agent_file else 'SKILL.md':<8}  {request.size} bytes, sha256")
    add(f"            {request.sha256}")
    add("  files:")
    for path, size, digest in request.files[:_FILES_SHOWN]:
        add(f"    {size:>9}  {digest[:16]}  ", fact(path))
    if len(request.files) > _FILES_SHOWN:
        add(f"    ... and {len(request.files) - _FILES_SHOWN} more (the digest covers them all)")
    total = sum(count for _, count in request.skipped_counts)
    if total:
        counts = ", ".join(f"{code}: {count}" for code, count in request.skipped_counts)
        add(f"  not taken (never served): {total} ({counts})")
        for path, code, reason in request.skipped:
            add("    ", f"{fact(path)}: {code}: {fact(reason)}")
        if total > len(request.skipped):
            add(f"    ... and {total - len(request.skipped)} more")
    add("  grants and settings:" if request.grants else "  grants and settings: none")
    for field, value in request.grants:
        # An agent file's values reach the prompt whole (every tool, the model), and the
        # file's own cap bounds them: the human reads each one whole too.
        line = terminal_line(value)
        shown = safe_repr(line, limit=len(line)) if agent_file else fact(value)
        add("    ", f"{fact(field)}: {shown}")
    rail, rail_end = (_AGENT_RAIL, _AGENT_RAIL_END) if agent_file else (_RAIL, _RAIL_END)
    lines.append(rail)
    if agent_file:
        # An agent file and its knowledge files reach a prompt whole, so the human reads
        # them whole; each file has its own rails, which no file's text can forge.
        lines.extend(_railed("description", request.description))
        lines.extend(_railed("agent file body, whole", request.full_text))
        for path, text in request.attachments:
            lines.append(rail_end)
            lines.append(rail)
            lines.extend(_railed(f"knowledge file {terminal_line(path)}, whole", text))
    elif full:
        lines.extend(_railed("SKILL.md, whole", request.full_text))
    else:
        lines.extend(_railed("description", request.description))
        lines.extend(_railed("body", request.preview))
    lines.append(rail_end)
    return "\n".join(lines) + "\n"


def render_file(path: str, data: bytes, *, agent: bool = False) -> str:
    """One file of a skill (or, with *agent*, of an agent file's approval) for a
    reviewer's terminal, in the railed block: its text with hidden characters shown,
    or a note for bytes that are not UTF-8 text."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = f"(not UTF-8 text: {len(data)} bytes; sha256 {hashlib.sha256(data).hexdigest()})"
    rail, rail_end = (_AGENT_RAIL, _AGENT_RAIL_END) if agent else (_RAIL, _RAIL_END)
    lines = [rail]
    lines.extend(_railed(f"file {terminal_line(path)}", reveal(text)))
    lines.append(rail_end)
    return "\n".join(lines) + "\n"


class ConsoleApprover:
    """Asks on a terminal; refuses when there is no terminal to ask on."""

    def __init__(self, stdin: TextIO, stdout: TextIO, *, who: str = "console") -> None:
        self.stdin = stdin
        self.stdout = stdout
        self.who = who

    def __call__(self, request: ApprovalRequest) -> Decision:
        if not (self.stdin.isatty() and self.stdout.isatty()):
            return Decision(approved=False, by=f"{self.who} (no terminal)")
        self.stdout.write(render_request(request))
        while True:
            # An agent file's request already shows every file whole: [v] shows it again.
            view = "show every file again" if request.kind == "agent" else "view the whole SKILL.md"
            # Only a key typed once the question shows answers it (T205).
            self.stdout.flush()
            discard_typeahead(self.stdin)
            self.stdout.write(
                f"Approve once [y], pin this exact content [p], {view} [v], or deny [N]? "
            )
            self.stdout.flush()
            answer = self.stdin.readline().strip().lower()
            if answer in ("v", "view"):
                self.stdout.write(render_request(request, full=True))
                continue
            if answer in ("y", "yes"):
                return Decision(approved=True, by=self.who)
            if answer in ("p", "pin"):
                return Decision(approved=True, by=self.who, scope="pin")
            return Decision(approved=False, by=self.who)
