"""Human approval of workspace skills, bound to the exact bytes the human saw.

Rules (threat-model.md T25-T26):

* An ``ApprovalRequest`` carries the sha256 and size of the snapshot read for it, and a
  bounded, escaped preview of its body. What is loaded after approval is that snapshot,
  never a re-read: a file changed in between never reaches the agent.
* An ``Approver`` is any callable taking a request and returning a ``Decision``; an
  async one serves asyncio swarms. No answer, an exception, or anything but an approving
  ``Decision`` is a denial.
* ``deny_all`` is the default. ``ConsoleApprover`` asks on a TTY and refuses without
  one. ``TrustStore`` pins approvals (skill, sha256, who, when) in a file written
  atomically under a lock: a pinned hash loads without asking, a changed hash asks
  again, and a pin is revoked in one call.
"""

from __future__ import annotations

import contextlib
import json
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from typing import TYPE_CHECKING, Literal, TextIO, TypeAlias

import attrs

from ._errors import SkillError, SkillUsageError, safe_repr
from ._fs import FileLock, read_trusted_file, write_atomic
from ._parse import FORBIDDEN_CHARS

if TYPE_CHECKING:
    from ._model import Skill

__all__ = [
    "ApprovalDeniedError",
    "ApprovalError",
    "ApprovalRequest",
    "ApprovalRequiredError",
    "Approver",
    "AsyncApprover",
    "ConsoleApprover",
    "Decision",
    "Pin",
    "TrustStore",
    "deny_all",
    "make_request",
]

PREVIEW_CHARS = 2000


class ApprovalError(SkillError):
    """A workspace skill was not approved, so it was not loaded."""

    kind = "approval"


class ApprovalDeniedError(ApprovalError):
    """The approver said no, or gave no valid answer (fail-secure)."""


class ApprovalRequiredError(ApprovalError):
    """The skill needs an approval this call cannot ask for (use ``prepare``/``aload``)."""


@attrs.frozen
class ApprovalRequest:
    """What a human is asked to approve: one agent, one skill, one exact snapshot."""

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


@attrs.frozen
class Decision:
    """An approver's answer. ``scope="pin"`` asks a ``TrustStore`` to remember it.

    ``approved`` must be a real ``bool``: ``"no"`` or ``1`` is refused at construction
    rather than read as a truthy approval.
    """

    approved: bool = attrs.field(validator=attrs.validators.instance_of(bool))
    by: str = attrs.field(validator=attrs.validators.instance_of(str))
    scope: Literal["once", "pin"] = attrs.field(
        default="once", validator=attrs.validators.in_(("once", "pin"))
    )


Approver: TypeAlias = Callable[[ApprovalRequest], Decision]
AsyncApprover: TypeAlias = Callable[[ApprovalRequest], Awaitable[Decision]]


def _escaped(text: str, limit: int) -> str:
    """Bounded, and with every control, bidi or invisible character shown as U+FFFD:
    what the human reads is what the model would read, with nothing hidden."""
    shown = text[:limit]
    cleaned = "".join(
        ch if ch in "\n\t" or (ch.isprintable() and ch not in FORBIDDEN_CHARS) else "\ufffd"
        for ch in shown
    )
    return cleaned + ("\n[... preview cut ...]" if len(text) > limit else "")


def make_request(agent: str, skill: Skill, source: str, path: str) -> ApprovalRequest:
    """A request for *skill* as parsed from the snapshot (its sha256 binds the approval)."""
    return ApprovalRequest(
        request_id=uuid.uuid4().hex,
        agent=agent,
        skill=skill.name,
        source=source,
        path=safe_repr(path, limit=256)[1:-1],
        sha256=skill.sha256,
        size=skill.size,
        description=_escaped(skill.description, 1024),
        preview=_escaped(skill.body, PREVIEW_CHARS),
        time=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    )


def deny_all(request: ApprovalRequest) -> Decision:
    """The default approver: no workspace skill is approved."""
    del request
    return Decision(approved=False, by="deny_all")


class ConsoleApprover:
    """Asks on a terminal; refuses when there is no terminal to ask on."""

    def __init__(self, stdin: TextIO, stdout: TextIO, *, who: str = "console") -> None:
        self.stdin = stdin
        self.stdout = stdout
        self.who = who

    def __call__(self, request: ApprovalRequest) -> Decision:
        if not (self.stdin.isatty() and self.stdout.isatty()):
            return Decision(approved=False, by=f"{self.who} (no terminal)")
        self.stdout.write(
            f"Agent {request.agent} asks for workspace skill {request.skill}\n"
            f"  from {request.source}:{request.path}\n"
            f"  sha256 {request.sha256} ({request.size} bytes)\n"
            f"  {request.description}\n"
            f"--- preview ---\n{request.preview}\n--- end ---\n"
            "Approve once [y], pin this exact content [p], or deny [N]? "
        )
        self.stdout.flush()
        answer = self.stdin.readline().strip().lower()
        if answer in ("y", "yes"):
            return Decision(approved=True, by=self.who)
        if answer in ("p", "pin"):
            return Decision(approved=True, by=self.who, scope="pin")
        return Decision(approved=False, by=self.who)


@attrs.frozen
class Pin:
    """One pinned approval: this skill, with exactly these bytes, approved by whom, when."""

    skill: str = attrs.field(validator=attrs.validators.instance_of(str))
    sha256: str = attrs.field(validator=attrs.validators.instance_of(str))
    by: str = attrs.field(validator=attrs.validators.instance_of(str))
    when: str = attrs.field(validator=attrs.validators.instance_of(str))


class TrustStore:
    """Pinned approvals in a JSON file (the operator's own), written atomically."""

    def __init__(self, path: str) -> None:
        if not isinstance(path, str):
            raise SkillUsageError("bad_argument", "the trust store path must be a str")
        self.path = path
        self._lock = FileLock(path)

    def _load(self) -> dict[str, Pin]:
        try:
            raw = read_trusted_file(self.path)
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise ApprovalError("trust_store", "the trust store cannot be read") from exc
        try:
            data = json.loads(raw) if raw.strip() else {"pins": []}
            pins = {entry["skill"]: Pin(**entry) for entry in data["pins"]}
        except (ValueError, KeyError, TypeError, RecursionError) as exc:
            raise ApprovalError("trust_store", "the trust store is not valid") from exc
        return pins

    def _save(self, pins: dict[str, Pin]) -> None:
        document = {"pins": [attrs.asdict(pin) for pin in sorted(pins.values(), key=str)]}
        write_atomic(self.path, json.dumps(document, indent=2, sort_keys=True).encode() + b"\n")

    def pins(self) -> tuple[Pin, ...]:
        with self._guard():
            return tuple(sorted(self._load().values(), key=lambda pin: pin.skill))

    def is_pinned(self, skill: str, sha256: str) -> bool:
        with self._guard():
            pin = self._load().get(skill)
        return pin is not None and pin.sha256 == sha256

    def pin(self, skill: str, sha256: str, by: str) -> Pin:
        if not all(isinstance(value, str) for value in (skill, sha256, by)):
            raise SkillUsageError("bad_argument", "skill, sha256 and by must be str")
        entry = Pin(skill, sha256, by, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
        with self._guard():
            pins = self._load()
            pins[skill] = entry
            self._save(pins)
        return entry

    def revoke(self, skill: str) -> bool:
        with self._guard():
            pins = self._load()
            removed = pins.pop(skill, None) is not None
            if removed:
                self._save(pins)
        return removed

    @contextlib.contextmanager
    def _guard(self) -> Iterator[None]:
        """The file lock, with every OS error (no folder, no permission) typed."""
        try:
            with self._lock:
                yield
        except OSError as exc:
            raise ApprovalError("trust_store", "the trust store cannot be read or written") from exc

    def approver(self, fallback: Approver = deny_all) -> Approver:
        """Approve pinned hashes without asking; ask *fallback* otherwise, pinning a
        ``scope="pin"`` answer."""

        def approve(request: ApprovalRequest) -> Decision:
            if self.is_pinned(request.skill, request.sha256):
                return Decision(approved=True, by="trust-store")
            decision = fallback(request)
            if decision.approved and decision.scope == "pin":
                self.pin(request.skill, request.sha256, decision.by)
            return decision

        return approve
