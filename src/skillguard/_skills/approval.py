"""Human approval of workspace skills, bound to the exact folder the human saw.

Rules (threat-model.md T26, T30-T34, T180-T182):

* An ``ApprovalRequest`` carries the snapshot's manifest (every file's path, size and
  sha256), the one ``digest`` over it that the approval binds, every entry that was not
  taken and why, the frontmatter fields that grant or steer anything, and a bounded
  preview of the description and body with hidden characters shown. What is served
  after approval is that snapshot (``_snapshot``), never a re-read.
* An ``Approver`` is any callable taking a request and returning a ``Decision``; an
  async one serves asyncio swarms. No answer, an exception, or anything but an approving
  ``Decision`` is a denial.
* ``deny_all`` is the default. ``ConsoleApprover`` asks on a TTY and refuses without
  one; it prints skillguard's own facts plainly and every piece of the skill's text
  inside a railed block, each line behind a gutter, so content cannot forge the prompt.
* ``TrustStore`` pins approvals in a versioned JSON file (the operator's own), written
  atomically under a lock: one pin per skill and source folder, for one manifest digest.
  An agent file from a workspace (``_agents._gate``) is asked for and pinned through the
  same request, keyed by its repository-relative path and its source marked ``agent:``
  (``pin_key``), so skill pins and agent pins never approve each other and an agent file
  is pinnable whatever its file name.
  A file with two pins for one key, a repeated JSON key, an unknown field or version, or
  anything else ambiguous is refused whole: it never approves anything.
* A write never makes a file the reader refuses: a pin that would take the store past
  its cap is refused (``trust_store_full``) and the store is left as it was (T180).
  Each write first removes the temporaries that writers killed mid-write left (T182).
* A human's ``scope="pin"`` approval whose pin cannot be written (a full disk, a full
  store) still approves the load it answered: the ``PinningApprover`` returns it marked
  (``pin_failure``) and the loader records the approval as given and the failed pin as
  ``pin_failed``; nothing is pinned, so the next load asks again (T181).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import inspect
import re
import time
import unicodedata
import uuid
from collections.abc import Awaitable, Callable, Generator, Iterator
from typing import TYPE_CHECKING, Any, Literal, TextIO, TypeAlias, TypeVar

import attrs

from skillguard._core.errors import SkillError, SkillUsageError, safe_repr
from skillguard._core.strict_json import StrictJSONError, loads_strict
from skillguard._core.text import reveal, terminal_line
from skillguard._fs.containment import operator_path, read_operator_bytes, split_name
from skillguard._fs.write import FileLock, sweep_temporaries, write_atomic
from skillguard._skills.names import is_valid_name

if TYPE_CHECKING:
    import os

    from skillguard._fs.containment import Skipped
    from skillguard._skills.snapshot import Snapshot

__all__ = [
    "AnyApprover",
    "ApprovalDeniedError",
    "ApprovalError",
    "ApprovalRequest",
    "ApprovalRequiredError",
    "Approver",
    "AsyncApprover",
    "ConsoleApprover",
    "Decision",
    "Pin",
    "PinningApprover",
    "TrustStore",
    "deny_all",
    "is_async_approver",
    "is_digest",
    "make_request",
    "pin_failure",
    "pin_key",
    "render_file",
    "render_request",
    "request_cost",
]

PREVIEW_CHARS = 2000
TRUST_STORE_VERSION = 2
# The most a trust store file may hold, read or written. A pin takes about 290 bytes
# and its skill name, folder and approver: some 10,000 pins with folders of 100
# characters, 1,800 with folders of 2,000.
_TRUST_STORE_MAX_BYTES = 4 * 1024 * 1024
_DIGEST_RE = re.compile(r"[0-9a-f]{64}")
_PIN_KEYS = frozenset({"skill", "source", "digest", "skill_sha256", "by", "when"})


def is_digest(value: object) -> bool:
    """Whether *value* is a sha256 digest as skillguard writes it (64 lowercase hex)."""
    return isinstance(value, str) and _DIGEST_RE.fullmatch(value) is not None


class ApprovalError(SkillError):
    """A workspace skill was not approved, so it was not loaded."""

    kind = "approval"


class ApprovalDeniedError(ApprovalError):
    """The approver said no, or gave no valid answer (fail-secure)."""


class ApprovalRequiredError(ApprovalError):
    """The skill needs an approval this call cannot ask for (use ``prepare``/``aload``)."""


@attrs.frozen
class ApprovalRequest:
    """What a human is asked to approve: one agent, one skill, one exact folder.

    ``digest`` is the manifest digest the approval binds (every file of the skill);
    ``sha256`` and ``size`` describe ``SKILL.md`` alone. ``folder`` is the skill
    folder's absolute path as text: with ``skill`` it keys a pin. ``files`` lists
    every file as ``(path, size, sha256)``; ``skipped`` every entry not taken, as
    ``(path, code, reason)`` (the first few; ``skipped_counts`` counts all of them by
    code); ``grants`` the frontmatter fields that grant or steer anything, as ``(field,
    value)``; ``full_text`` the whole ``SKILL.md`` (frontmatter and body) as the model
    could read it. Every string that came from the skill has its hidden characters
    shown as ``[U+XXXX]``.
    """

    request_id: str
    agent: str
    skill: str
    source: str
    path: str
    sha256: str
    size: int
    description: str
    preview: str
    time: str
    digest: str = ""
    folder: str = ""
    files: tuple[tuple[str, int, str], ...] = ()
    skipped: tuple[tuple[str, str, str], ...] = ()
    grants: tuple[tuple[str, str], ...] = ()
    total_size: int = 0
    skipped_counts: tuple[tuple[str, int], ...] = ()
    full_text: str = ""
    # The host's id of the tool call that asked (``prepare_call``), "" otherwise.
    execution_id: str = ""
    # ``"agent"`` for an agent file from a workspace (``_agents._gate``): ``skill`` is
    # then the agent file's name (shown, never a key), ``path`` its path relative to
    # the repository (or to the operator folder holding it) and ``folder`` its absolute
    # path, which together key a pin (``pin_key``); ``full_text`` its body, and
    # ``attachments`` each knowledge file it pulls in, as ``(path, text)``, shown whole
    # in railed blocks of their own: exactly the texts its ``knowledge`` serves, a file
    # of the agent itself included (T150).
    kind: Literal["skill", "agent"] = "skill"
    attachments: tuple[tuple[str, str], ...] = ()


AGENT_PIN_PREFIX = "agent:"


def pin_key(request: ApprovalRequest) -> tuple[str, str]:
    """The ``(skill, source)`` a pin of *request* is keyed by.

    A skill: its name and its folder's absolute path. An agent file: its path relative
    to the repository (``path``), and ``agent:`` before its absolute path; never a
    name derived from the file name, so a file whose name is no slug (``CSharpExpert
    .agent.md``) is pinnable too, and two files never share a key. A skill's source is
    an absolute path (it starts with ``/``), so a pin for a skill never approves an
    agent file, nor the reverse (threat-model.md T123, T160).
    """
    if request.kind == "agent":
        return request.path, AGENT_PIN_PREFIX + request.folder
    return request.skill, request.folder


_T = TypeVar("_T")


def _decision_field(instance: object, attribute: attrs.Attribute[_T], value: _T) -> None:
    # The same typed error as every other bad argument, not attrs' TypeError/ValueError;
    # the scope is compared only once it is known to be a str (a caller's __eq__ may raise).
    del instance
    expected = {"approved": bool, "by": str, "scope": str}[attribute.name]
    if not isinstance(value, expected) or (
        attribute.name == "scope" and value not in ("once", "pin")
    ):
        raise SkillUsageError("bad_argument", f"Decision.{attribute.name} is not valid")


@attrs.frozen
class Decision:
    """An approver's answer. ``scope="pin"`` asks a ``TrustStore`` to remember it.

    ``approved`` must be a real ``bool``: ``"no"`` or ``1`` is refused at construction
    (``SkillUsageError``) rather than read as a truthy approval; ``by`` is a str and
    ``scope`` is ``"once"`` or ``"pin"``.
    """

    approved: bool = attrs.field(validator=_decision_field)
    by: str = attrs.field(validator=_decision_field)
    scope: Literal["once", "pin"] = attrs.field(default="once", validator=_decision_field)


@attrs.frozen
class _Unpinned(Decision):
    """A human's ``scope="pin"`` approval whose pin could not be written: it approves
    the load it answered, and ``failure`` says why nothing was pinned."""

    failure: SkillError = attrs.field(kw_only=True, eq=False)


def pin_failure(decision: object) -> SkillError | None:
    """Why the pin a ``PinningApprover`` was asked to write for *decision* was not
    written, or ``None`` (pinned, or not asked to pin)."""
    return decision.failure if isinstance(decision, _Unpinned) else None


Approver: TypeAlias = Callable[[ApprovalRequest], Decision]
AsyncApprover: TypeAlias = Callable[[ApprovalRequest], Awaitable[Decision]]
# What a Loader takes: either of the above, or one that answers now or later
# (a ``TrustStore`` approver with an async fallback).
AnyApprover: TypeAlias = Callable[[ApprovalRequest], "Decision | Awaitable[Decision]"]


def _shown(text: str, limit: int) -> str:
    """Bounded, with every hidden or control character shown as ``[U+XXXX]``: what the
    human reads is what the model would read, with nothing hidden."""
    cut = len(text) > limit
    return reveal(text[:limit]) + ("\n[... preview cut ...]" if cut else "")


def _steering(snapshot: Snapshot) -> tuple[tuple[str, str], ...]:
    """The frontmatter fields that grant or steer anything, as the human must see them."""
    skill = snapshot.skill
    fields: list[tuple[str, str]] = []
    if skill.allowed_tools:
        fields.append(("allowed-tools", " ".join(skill.allowed_tools)))
    if skill.compatibility is not None:
        fields.append(("compatibility", skill.compatibility))
    for key, value in skill.metadata.items():
        fields.append((f"metadata.{key}", value if isinstance(value, str) else repr(value)))
    if skill.disable_model_invocation:
        fields.append(("disable-model-invocation", "true"))
    if not skill.user_invocable:
        fields.append(("user-invocable", "false"))
    for field, setting in (
        ("argument-hint", skill.argument_hint),
        ("model", skill.model),
        ("context", skill.context),
        ("agent", skill.agent),
    ):
        if setting is not None:
            fields.append((field, setting))
    fields.extend((f"steps[{step.index}]", step.text) for step in skill.steps)
    for field, setting in (("license", skill.license), ("version", skill.version)):
        if setting is not None:
            fields.append((field, setting))
    for key, value in skill.extra.items():
        fields.append((key, value if isinstance(value, str) else repr(value)))
    return tuple((reveal(key)[:128], _shown(text, 512)) for key, text in fields)


def make_request(
    agent: str, snapshot: Snapshot, source: str, path: str, *, execution_id: str = ""
) -> ApprovalRequest:
    """A request for *snapshot* (its manifest digest binds the approval)."""
    skill = snapshot.skill
    manifest = snapshot.manifest
    return ApprovalRequest(
        request_id=uuid.uuid4().hex,
        agent=agent,
        skill=skill.name,
        source=reveal(source),
        path=reveal(path),
        sha256=skill.sha256,
        size=skill.size,
        description=_shown(skill.description, 1024),
        preview=_shown(skill.body, PREVIEW_CHARS),
        time=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        digest=manifest.digest,
        folder=snapshot.folder,
        files=tuple((reveal(f.path), f.size, f.sha256) for f in manifest.files),
        skipped=tuple(_skipped(item) for item in manifest.skipped),
        grants=_steering(snapshot),
        total_size=manifest.total_bytes,
        skipped_counts=manifest.skipped_counts,
        full_text=reveal(snapshot.text),
        execution_id=execution_id,
    )


def request_cost(request: ApprovalRequest) -> int:
    """A close upper bound on the bytes a pending request keeps alive (its strings, at
    up to four bytes a character, and a fixed overhead per entry)."""
    texts = (request.description, request.preview, request.full_text)
    entries = (
        sum(len(path) + len(text) + 160 for path, text in request.attachments)
        + sum(len(path) + 160 for path, _, _ in request.files)
        + sum(len(path) + len(reason) + 160 for path, _, reason in request.skipped)
        + sum(len(field) + len(value) + 120 for field, value in request.grants)
    )
    return 4 * sum(len(text) for text in texts) + 4 * entries


def _skipped(item: Skipped) -> tuple[str, str, str]:
    return (reveal(item.path), item.code, reveal(item.reason))


def is_async_approver(approver: object) -> bool:
    """Whether *approver* is a coroutine function, or an instance whose ``__call__``
    is one: such an approver is awaited, never run in a thread."""
    return inspect.iscoroutinefunction(approver) or inspect.iscoroutinefunction(
        getattr(approver, "__call__", None)  # noqa: B004 - an instance's async __call__
    )


def deny_all(request: ApprovalRequest) -> Decision:
    """The default approver: no workspace skill is approved."""
    del request
    return Decision(approved=False, by="deny_all")


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


def _pin_field(instance: object, attribute: attrs.Attribute[str], value: object) -> None:
    del instance
    # terminal_line changes any control, hidden character or lone surrogate: a pin is
    # printed one per line, so none of them may hide in one.
    if not isinstance(value, str) or not value or terminal_line(value) != value:
        raise SkillUsageError(
            "bad_argument", f"Pin.{attribute.name} must be a non-empty str of visible text"
        )


def _pin_digest(instance: object, attribute: attrs.Attribute[str], value: object) -> None:
    del instance
    if not is_digest(value):
        raise SkillUsageError(
            "bad_digest", f"Pin.{attribute.name} must be a sha256 of 64 lowercase hex digits"
        )


def _pin_skill(instance: object, attribute: attrs.Attribute[str], value: object) -> None:
    del instance, attribute
    if not isinstance(value, str) or not value:
        raise SkillUsageError("bad_argument", "Pin.skill must be a skill name")


def _is_agent_pin_name(value: str) -> bool:
    """An agent pin's name: a plain relative path of visible text (``split_name``)."""
    try:
        split_name(value)
    except SkillError:
        return False
    return terminal_line(value) == value


@attrs.frozen
class Pin:
    """One pinned approval: this skill, from this folder, with exactly this manifest
    digest (every file), approved by whom, when. ``skill_sha256`` is the ``SKILL.md``
    within it, so a catalog can tell that the description it shows was approved. An
    agent file's pin (``pin_key``) holds its relative path in ``skill`` and ``agent:``
    before its absolute path in ``source``; ``skill_sha256`` is the agent file's."""

    skill: str = attrs.field(validator=_pin_skill)
    source: str = attrs.field(validator=_pin_field)
    digest: str = attrs.field(validator=_pin_digest)
    skill_sha256: str = attrs.field(validator=_pin_digest)
    by: str = attrs.field(validator=_pin_field)
    when: str = attrs.field(validator=_pin_field)

    def __attrs_post_init__(self) -> None:
        # An agent pin (its source starts with "agent:") is named by the agent file's
        # relative path, which a pin of an earlier version (the file's slug) also is.
        if self.source.startswith(AGENT_PIN_PREFIX):
            if not _is_agent_pin_name(self.skill):
                raise SkillUsageError(
                    "bad_argument", "Pin.skill of an agent pin must be the file's relative path"
                )
        elif not is_valid_name(self.skill):
            raise SkillUsageError("bad_argument", "Pin.skill must be a skill name")


def _invalid(reason: str) -> ApprovalError:
    return ApprovalError("trust_store", f"the trust store is not valid: {reason}")


class TrustStore:
    """Pinned approvals in a versioned JSON file (the operator's own), written atomically.

    Format: ``{"version": 2, "pins": [{"skill", "source", "digest", "skill_sha256",
    "by", "when"}, ...]}``, one pin per (skill, source). Reading refuses the whole file
    (``ApprovalError``, code ``trust_store``) on anything ambiguous, and on a file over
    its cap (4 MiB); a write that would make it larger is refused
    (``trust_store_full``), so the store never grows into one its reader refuses.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = operator_path(path, "the trust store path")
        self._lock = FileLock(self.path)

    def _load(self) -> dict[tuple[str, str], Pin]:
        try:
            raw = read_operator_bytes(self.path, limit=_TRUST_STORE_MAX_BYTES)
        except FileNotFoundError:
            return {}
        except OSError as exc:
            if exc.errno == errno.EFBIG:
                raise ApprovalError(
                    "trust_store",
                    f"the trust store is larger than its cap of {_TRUST_STORE_MAX_BYTES} "
                    "bytes: it is not read (remove pins from it by hand)",
                ) from exc
            raise ApprovalError("trust_store", "the trust store cannot be read") from exc
        if not raw.strip():
            return {}
        try:
            data = loads_strict(raw, max_bytes=_TRUST_STORE_MAX_BYTES, max_depth=3)
        except StrictJSONError as exc:
            raise _invalid(str(exc)) from exc
        if not isinstance(data, dict) or set(data) != {"version", "pins"}:
            raise _invalid('the top level must be {"version": 2, "pins": [...]}')
        version = data["version"]
        if type(version) is not int or version != TRUST_STORE_VERSION:
            raise _invalid(f"version must be {TRUST_STORE_VERSION} (re-pin older approvals)")
        entries = data["pins"]
        if not isinstance(entries, list):
            raise _invalid("'pins' must be a list")
        pins: dict[tuple[str, str], Pin] = {}
        for number, entry in enumerate(entries, start=1):
            if not isinstance(entry, dict) or set(entry) != _PIN_KEYS:
                raise _invalid(f"pin {number} must have exactly the fields {sorted(_PIN_KEYS)}")
            try:
                pin = Pin(**entry)
            except SkillUsageError as exc:
                raise _invalid(f"pin {number}: {exc.reason}") from exc
            key = (pin.skill, pin.source)
            if key in pins:
                raise _invalid(f"pin {number} repeats the skill and source of another pin")
            pins[key] = pin
        return pins

    def _save(self, pins: dict[tuple[str, str], Pin]) -> None:
        """Replace the store with *pins*, under the lock. A document over the reader's
        cap is refused before anything is written (T180); the temporaries of writers
        killed mid-write go first (T182)."""
        ordered = sorted(pins.values(), key=lambda pin: (pin.skill, pin.source))
        document = {"version": TRUST_STORE_VERSION, "pins": [attrs.asdict(p) for p in ordered]}
        import json  # noqa: PLC0415 - only writing needs the encoder

        data = json.dumps(document, indent=2, sort_keys=True).encode() + b"\n"
        if len(data) > _TRUST_STORE_MAX_BYTES:
            raise ApprovalError(
                "trust_store_full",
                f"the trust store would grow to {len(data)} bytes, past its cap of "
                f"{_TRUST_STORE_MAX_BYTES}: nothing was written (revoke pins to make room)",
            )
        try:
            sweep_temporaries(self.path)
            write_atomic(self.path, data)
        except OSError as exc:
            code = errno.errorcode.get(exc.errno or 0, "EIO")
            raise ApprovalError(
                "trust_store", f"the trust store cannot be written ({code})"
            ) from exc

    # Reads take no lock: every write replaces the file by an atomic rename, so a reader
    # sees one whole version, and a store on a read-only folder stays readable.

    def pins(self) -> tuple[Pin, ...]:
        """Every pin, by skill and source. Raises ``ApprovalError`` (``trust_store``)."""
        return tuple(sorted(self._load().values(), key=lambda pin: (pin.skill, pin.source)))

    def pinned(self, skill: str, source: str) -> Pin | None:
        """The pin for *skill* from *source*, if any."""
        _strings(skill=skill, source=source)
        return self._load().get((skill, source))

    def is_pinned(self, skill: str, digest: str, *, source: str) -> bool:
        """Whether *skill* from *source* is pinned with exactly this manifest *digest*."""
        _strings(skill=skill, digest=digest, source=source)
        pin = self.pinned(skill, source)
        return pin is not None and pin.digest == digest

    def pin(self, skill: str, digest: str, by: str, *, source: str, skill_sha256: str) -> Pin:
        """Pin *digest* for *skill* from *source* (replacing that key's earlier pin).

        Raises ``SkillUsageError`` (``bad_argument``, ``bad_digest``) for bad values,
        ``ApprovalError`` (``trust_store``) when the file cannot be read or written, and
        ``ApprovalError`` (``trust_store_full``) when the pin would take the file past
        its cap (the store is left as it was).
        """
        _strings(skill=skill, digest=digest, by=by, source=source, skill_sha256=skill_sha256)
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        entry = Pin(skill, source, digest, skill_sha256, by, now)
        with self._guard():
            pins = self._load()
            pins[(skill, source)] = entry
            self._save(pins)
        return entry

    def revoke(self, skill: str, *, source: str | None = None) -> int:
        """Remove the pins of *skill* (from *source* only, when given); how many went."""
        _strings(skill=skill)
        if source is not None:
            _strings(source=source)
        with self._guard():
            pins = self._load()
            gone = [key for key in pins if key[0] == skill and source in (None, key[1])]
            for key in gone:
                del pins[key]
            if gone:
                self._save(pins)
        return len(gone)

    @contextlib.contextmanager
    def _guard(self) -> Iterator[None]:
        """The file lock, with every OS error (no folder, no permission) typed."""
        try:
            with self._lock:
                yield
        except OSError as exc:
            raise ApprovalError("trust_store", "the trust store cannot be read or written") from exc

    def approver(self, fallback: Approver | AsyncApprover = deny_all) -> PinningApprover:
        """Approve pinned digests without asking; ask *fallback* (sync or async)
        otherwise, pinning a ``scope="pin"`` answer."""
        if not callable(fallback):
            raise SkillUsageError("bad_argument", "the fallback approver must be callable")
        return PinningApprover(self, fallback)


class _PendingDecision:
    """An async fallback's answer, pinned when it arrives. Closing it closes the
    fallback's own coroutine too, so a caller that cannot await it (a sync ``load``)
    leaves nothing un-awaited behind."""

    def __init__(
        self, approver: PinningApprover, request: ApprovalRequest, answer: Awaitable[Decision]
    ) -> None:
        self._approver = approver
        self._request = request
        self._answer = answer

    def __await__(self) -> Generator[Any, None, Decision]:
        return self._run().__await__()

    async def _run(self) -> Decision:
        return self._approver._finish(self._request, await self._answer)  # noqa: SLF001

    def close(self) -> None:
        close = getattr(self._answer, "close", None)
        if close is not None:
            close()


def _strings(**values: object) -> None:
    for name, value in values.items():
        if not isinstance(value, str):
            raise SkillUsageError("bad_argument", f"{name} must be a str")


class PinningApprover:
    """A ``TrustStore``'s approver. Called with a request, it answers at once for a
    pinned digest; otherwise it returns the fallback's answer, or, for an async
    fallback, an awaitable of it (``Loader.aload`` awaits it; the pin is written when
    the answer arrives)."""

    def __init__(self, store: TrustStore, fallback: Approver | AsyncApprover) -> None:
        self.store = store
        self.fallback = fallback

    def __call__(self, request: ApprovalRequest) -> Decision | Awaitable[Decision]:
        name, source = pin_key(request)
        if self.store.is_pinned(name, request.digest, source=source):
            return Decision(approved=True, by="trust-store")
        answer = self.fallback(request)
        if inspect.isawaitable(answer):
            return _PendingDecision(self, request, answer)
        return self._finish(request, answer)

    def _finish(self, request: ApprovalRequest, decision: object) -> Decision:
        if not isinstance(decision, Decision):
            return Decision(approved=False, by="no valid answer")
        if decision.approved and decision.scope == "pin":
            name, source = pin_key(request)
            try:
                self.store.pin(
                    name, request.digest, decision.by, source=source, skill_sha256=request.sha256
                )
            except SkillError as exc:
                # The human approved: that answers this request. Only the pin failed
                # (a full disk, a full store, a name no pin can hold), and the loader
                # records it as such (pin_failed); the next request asks again.
                return _Unpinned(approved=True, by=decision.by, scope="pin", failure=exc)
        return decision
