"""Human approval of workspace skills, bound to the exact folder the human saw.

Rules (threat-model.md T26, T30-T34, T218-T221):

* An ``ApprovalRequest`` carries the snapshot's manifest (every file's path, size and
  sha256), the one ``digest`` over it that the approval binds, every entry that was not
  taken and why, the frontmatter fields that grant or steer anything, and a bounded
  preview of the description and body with hidden characters shown. What is served
  after approval is that snapshot (``_snapshot``), never a re-read.
* An ``Approver`` is any callable taking a request and returning a ``Decision``; an
  async one serves asyncio swarms. No answer, an exception, or anything but an approving
  ``Decision`` is a denial; an answer that is not a ``Decision`` at all (``True``,
  ``None``, a str) is refused as such (``not_a_decision``), since it is the host's
  bug, not a human's "no". A ``Decision`` may carry the human's ``reason`` (for the
  audit record) and the ``digest`` of the request answered (required out of band).
* ``deny_all`` is the default. A human is asked at a terminal by ``ConsoleApprover``
  (``console``); approvals are pinned in a ``TrustStore`` (``truststore``).
"""

from __future__ import annotations

import inspect
import re
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Final, Literal, TypeAlias, TypeVar

import attrs

from skillguard._core.errors import SkillError, SkillUsageError
from skillguard._core.text import find_hidden, reveal, terminal_line

if TYPE_CHECKING:
    from skillguard._fs.containment import Skipped
    from skillguard._skills.snapshot import Snapshot

__all__ = [
    "MAX_REASON_CHARS",
    "NO_ANSWER",
    "AnyApprover",
    "ApprovalDeniedError",
    "ApprovalError",
    "ApprovalRequest",
    "ApprovalRequiredError",
    "Approver",
    "AsyncApprover",
    "Decision",
    "deny_all",
    "is_async_approver",
    "make_request",
    "not_a_decision",
    "not_a_decision_error",
    "request_cost",
    "returned_type",
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


_T = TypeVar("_T")
# A human's reason travels into the audit log, whose fields hold 256 characters.
MAX_REASON_CHARS: Final = 256
_SHA256 = re.compile(r"[0-9a-f]{64}")


def _decision_field(instance: object, attribute: attrs.Attribute[_T], value: _T) -> None:
    # The same typed error as every other bad argument, not attrs' TypeError/ValueError;
    # the scope is compared only once it is known to be a str (a caller's __eq__ may raise).
    del instance
    expected = {"approved": bool, "by": str, "scope": str}[attribute.name]
    if not isinstance(value, expected) or (
        attribute.name == "scope" and value not in ("once", "pin")
    ):
        raise SkillUsageError("bad_argument", f"Decision.{attribute.name} is not valid")


def _decision_text(
    instance: object, attribute: attrs.Attribute[str | None], value: str | None
) -> None:
    # ``reason`` and ``digest`` are optional; a str subclass could answer len() or
    # comparisons as it likes, so only a real str is taken.
    del instance
    if value is None:
        return
    if not isinstance(value, str) or type(value) is not str:
        raise SkillUsageError("bad_argument", f"Decision.{attribute.name} must be a str or None")
    if attribute.name == "digest":
        if _SHA256.fullmatch(value) is None:
            raise SkillUsageError(
                "bad_argument", "Decision.digest must be a sha256 of 64 lowercase hex digits"
            )
        return
    if not value or len(value) > MAX_REASON_CHARS:
        raise SkillUsageError(
            "bad_argument", f"Decision.reason must be 1-{MAX_REASON_CHARS} characters"
        )
    # One line, nothing hidden: the reason is shown in the audit log and its reports,
    # where a control or bidi character could forge or hide what a reader sees.
    if terminal_line(value) != value or find_hidden(value) is not None:
        raise SkillUsageError(
            "bad_argument",
            "Decision.reason holds a control, line-break or hidden character",
        )


@attrs.frozen
class Decision:
    """An approver's answer. ``scope="pin"`` asks a ``TrustStore`` to remember it.

    ``approved`` must be a real ``bool``: ``"no"`` or ``1`` is refused at construction
    (``SkillUsageError``) rather than read as a truthy approval; ``by`` is a str and
    ``scope`` is ``"once"`` or ``"pin"``. ``reason`` (optional, at most 256 characters
    on one line, no control or hidden character) is written in the audit record of the
    decision. ``digest`` (optional) is the manifest digest of the request the human
    answered (``ApprovalRequest.digest``): a decision given out of band
    (``load(prepared, decision=...)``) must carry it, and any decision that carries one
    is refused for another snapshot (``stale_decision``).
    """

    approved: bool = attrs.field(validator=_decision_field)
    by: str = attrs.field(validator=_decision_field)
    scope: Literal["once", "pin"] = attrs.field(default="once", validator=_decision_field)
    reason: str | None = attrs.field(default=None, validator=_decision_text)
    digest: str | None = attrs.field(default=None, validator=_decision_text)


# An approver that raised, or whose call was cancelled by its own UI: no answer, a
# denial (``denied``), not an answer of the wrong type.
NO_ANSWER: Final = Decision(approved=False, by="no valid answer")


@attrs.frozen
class _NotADecision(Decision):
    """What a wrapping approver (a ``TrustStore``'s) passes on when the approver it
    wraps returned something other than a ``Decision``: a denial that remembers the
    type that came back, so that the load says so (``not_a_decision``)."""

    returned: str = attrs.field(kw_only=True)


def returned_type(answer: object) -> str | None:
    """The name of the type an approver returned instead of a ``Decision``, or ``None``
    when it returned one."""
    if isinstance(answer, _NotADecision):
        return answer.returned
    if isinstance(answer, Decision):
        return None
    # The host's own class, but its name is shown in a message and a record: escaped.
    return terminal_line(type(answer).__name__)[:64]


def not_a_decision(answer: object, by: str) -> Decision:
    """A denial by *by* for an *answer* that is not a ``Decision``."""
    returned = returned_type(answer)
    assert returned is not None
    return _NotADecision(approved=False, by=by, returned=returned)


def not_a_decision_error(
    returned: str, *, name: str | None = None, agent: str | None = None
) -> ApprovalDeniedError:
    """The refusal of an approver that returned *returned* (a type name) instead of a
    ``Decision``: a bug of the host's approver, not a human's "no"."""
    return ApprovalDeniedError(
        "not_a_decision",
        f"the approver returned {returned} instead of a Decision: return "
        "skillguard.Decision(approved=..., by=...)",
        name=name,
        agent=agent,
    )


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
