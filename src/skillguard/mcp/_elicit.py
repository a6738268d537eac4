"""Asking the human through the MCP client: the ``elicit`` approver.

Rules (threat-model.md T242-T244):

1. ``elicit`` is an async approver (``skillguard.Loader(approver=...)``). It asks only
   inside a ``tools/call`` that a server built with ``approve="elicit"`` is serving, to
   a client that declared the form ``elicitation`` capability on a connection that can
   carry a server request; anywhere else it answers "no" at once: nobody was asked.
2. The message is ``render_request``'s text: skillguard's own facts (agent, skill,
   folder, digest, every file, grants) plainly, the author's text inside rails, every
   hidden character shown as ``[U+XXXX]``, the whole of it in a Markdown code block whose
   fence is longer than any run of backticks in it (``literal_block``), so a client that
   renders Markdown shows the author's text as typed: no image fetched, no link, no
   heading that imitates the client's own UI (T305). The human picks ``once`` or, when the loader
   has a trust store, ``pin``; anything else, a decline, a cancel, an error or a reply
   that does not fit the schema is a denial.
3. The answer is a ``Decision`` like any approver's: the loader binds it to the
   request's snapshot digest, serves that snapshot, pins it (``scope="pin"``) and
   audits it. ``by`` is ``mcp:`` and the client's own name, escaped to ASCII and
   bounded: a label for the record, not an identity.
"""

from __future__ import annotations

import contextlib
import contextvars
import re
from typing import TYPE_CHECKING, Any, Final

import attrs

from skillguard._core.errors import safe_repr
from skillguard._skills.approval import Decision
from skillguard._skills.console import render_request

if TYPE_CHECKING:
    from collections.abc import Iterator

    from mcp.server.session import ServerSession

    from skillguard._skills.approval import ApprovalRequest

__all__ = ["Asker", "asking", "client_label", "elicit"]

_MAX_LABEL = 64

_BACKTICKS: Final = re.compile("`+")


def literal_block(text: str) -> str:
    """*text* as a Markdown code block that nothing in it can close: its fence is one
    backtick longer than the longest run of backticks in *text* (at least three)."""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    body = text.rstrip("\n")
    return f"{fence}\n{body}\n{fence}"


def client_label(name: object) -> str:
    """``mcp:`` and the client's own name for itself, escaped to ASCII and bounded."""
    if not isinstance(name, str) or not name:
        return "mcp:unnamed client"
    return "mcp:" + safe_repr(name, limit=_MAX_LABEL)[1:-1]


@attrs.frozen
class Asker:
    """The client of the ``tools/call`` being served, and what it may be asked."""

    session: ServerSession
    request_id: Any
    label: str
    can_pin: bool

    def schema(self) -> dict[str, Any]:
        choices = ["once", "pin"] if self.can_pin else ["once"]
        return {
            "type": "object",
            "properties": {
                "approval": {
                    "type": "string",
                    "title": "Approval",
                    "description": "Approve the snapshot shown once, or pin it",
                    "enum": choices,
                }
            },
            "required": ["approval"],
        }

    async def ask(self, request: ApprovalRequest) -> Decision:
        message = (
            "An agent asks for a skill from a workspace nobody approved yet. Accept to "
            "serve exactly this snapshot; decline to refuse it.\n\n"
            + literal_block(render_request(request))
        )
        try:
            result = await self.session.elicit_form(message, self.schema(), self.request_id)
        except Exception:  # noqa: BLE001 - an error, a timeout or a bad reply is no approval
            return Decision(approved=False, by=self.label)
        if result.action != "accept" or not isinstance(result.content, dict):
            return Decision(approved=False, by=self.label)
        scope = result.content.get("approval")
        if scope == "once":
            return Decision(approved=True, by=self.label, scope="once")
        if scope == "pin" and self.can_pin:
            return Decision(approved=True, by=self.label, scope="pin")
        return Decision(approved=False, by=self.label)


_ASKER: contextvars.ContextVar[Asker | None] = contextvars.ContextVar(
    "skillguard_mcp_asker", default=None
)


@contextlib.contextmanager
def asking(asker: Asker | None) -> Iterator[None]:
    """``elicit`` asks *asker* for the code run inside this block (and its tasks)."""
    token = _ASKER.set(asker)
    try:
        yield
    finally:
        _ASKER.reset(token)


async def elicit(request: ApprovalRequest) -> Decision:
    """The approver that asks the human through the MCP client being served (rule 1);
    ``Decision(approved=False)`` when there is no such client."""
    asker = _ASKER.get()
    if asker is None:
        return Decision(approved=False, by="mcp:nobody asked")
    return await asker.ask(request)
