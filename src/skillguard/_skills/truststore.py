"""Pinned approvals: the operator's trust store, and the approver that answers from it.

Rules (threat-model.md T123, T160, T180-T182):

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
import inspect
import re
import time
from typing import TYPE_CHECKING, Any

import attrs

from skillguard._core.errors import SkillError, SkillUsageError
from skillguard._core.strict_json import StrictJSONError, loads_strict
from skillguard._core.text import terminal_line
from skillguard._fs.operator import read_operator_bytes
from skillguard._fs.paths import operator_path, split_name
from skillguard._fs.write import FileLock, sweep_temporaries, write_atomic
from skillguard._skills.approval import (
    ApprovalError,
    ApprovalRequest,
    Decision,
    _NotADecision,
    deny_all,
    not_a_decision,
)
from skillguard._skills.names import is_valid_name

if TYPE_CHECKING:
    import os
    from collections.abc import Awaitable, Generator, Iterator

    from skillguard._skills.approval import Approver, AsyncApprover

__all__ = [
    "Pin",
    "PinningApprover",
    "TrustStore",
    "is_digest",
    "pin_decision",
    "pin_failure",
    "pin_key",
    "read_once",
]

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


@attrs.frozen
class _Unpinned(Decision):
    """A human's ``scope="pin"`` approval whose pin could not be written: it approves
    the load it answered, and ``failure`` says why nothing was pinned."""

    failure: SkillError = attrs.field(kw_only=True, eq=False)


def pin_failure(decision: object) -> SkillError | None:
    """Why the pin a ``PinningApprover`` was asked to write for *decision* was not
    written, or ``None`` (pinned, or not asked to pin)."""
    return decision.failure if isinstance(decision, _Unpinned) else None


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

    def pinned(self, request: ApprovalRequest) -> Decision | None:
        """The store's own answer for *request*: approved when it pins that exact
        snapshot, else ``None``. The fallback is never asked, so a caller that must not
        wait for a human (a synchronous ``select``, T200) asks this instead. Raises
        ``ApprovalError`` (``trust_store``) when the store cannot be read."""
        name, source = pin_key(request)
        if self.store.is_pinned(name, request.digest, source=source):
            return Decision(approved=True, by="trust-store")
        return None

    def __call__(self, request: ApprovalRequest) -> Decision | Awaitable[Decision]:
        pinned = self.pinned(request)
        if pinned is not None:
            return pinned
        answer = self.fallback(request)
        if inspect.isawaitable(answer):
            return _PendingDecision(self, request, answer)
        return self._finish(request, answer)

    def _finish(self, request: ApprovalRequest, decision: object) -> Decision:
        if not isinstance(decision, Decision):
            # Passed on as what it is, so that the load says what came back.
            return not_a_decision(decision, "no valid answer")
        return pin_decision(self.store, request, decision)


def read_once(answer: object) -> object:
    """An approver's *answer*; a ``Decision`` of a class of the host's own is rebuilt
    as a plain one, each field read once and checked again, so that properties that
    answer one check one thing and the next another cannot get past a check (T301).
    One whose fields are not valid is no decision (``not_a_decision``)."""
    if not isinstance(answer, Decision) or type(answer) in (Decision, _NotADecision, _Unpinned):
        return answer
    try:
        return Decision(
            approved=answer.approved,
            by=answer.by,
            scope=answer.scope,
            reason=answer.reason,
            digest=answer.digest,
        )
    except SkillUsageError:
        returned = terminal_line(type(answer).__name__)[:64]
        return _NotADecision(approved=False, by="no valid answer", returned=returned)


def pin_decision(store: TrustStore, request: ApprovalRequest, decision: Decision) -> Decision:
    """*decision*, once *store* pinned what it asks to pin: an approval with
    ``scope="pin"`` for *request*'s own digest is pinned; one whose pin could not be
    written is returned marked (``pin_failure``); any other is returned as it is."""
    if decision.digest is not None and decision.digest != request.digest:
        return decision  # an answer about another snapshot: never pinned (refused)
    if decision.approved and decision.scope == "pin":
        name, source = pin_key(request)
        try:
            store.pin(name, request.digest, decision.by, source=source, skill_sha256=request.sha256)
        except SkillError as exc:
            # The human approved: that answers this request. Only the pin failed
            # (a full disk, a full store, a name no pin can hold), and the loader
            # records it as such (pin_failed); the next request asks again.
            return _Unpinned(
                approved=True,
                by=decision.by,
                scope="pin",
                reason=decision.reason,
                digest=decision.digest,
                failure=exc,
            )
    return decision
