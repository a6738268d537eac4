"""The MCP server: one agent's skills as MCP tools, every refusal a tool result.

Rules (threat-model.md T240-T246):

1. One server serves one agent: the ``AgentSkills`` handle it was built with, exactly
   its allow-set. Every call goes through the handle's own gates (authorization, the
   approved snapshot, the audit log); the server decides nothing itself.
2. Tools: ``skill`` (``tool_info()``: arguments ``{"name"}``, read as strictly as
   ``invoke`` reads them; the result is the activation text), ``skill_resource``
   (``{"name", "path"}``: one file of a skill this server served, from the snapshot it
   served, through ``LoadedSkill.read_resource``) and ``select_skills`` (``{"task"}``:
   ``aselect``'s names and text). The ``skill`` tool's description is the agent's
   catalog, escaped as ``tool_info`` escapes it, built afresh for every ``tools/list``.
3. Every refusal is a tool result with ``isError`` true and one line: the typed error's
   kind, code and escaped reason. An unknown tool or a bad argument is refused the same
   way; an unexpected exception is ``internal internal_error`` (and a bug); nothing a
   client sends ends the server.
4. With ``approve="elicit"``, a call runs with its client as the ``elicit`` approver's
   asker when the client declared form elicitation; otherwise nobody is asked and a
   workspace skill is served only if pinned.
5. When what the agent may see changes (an approval or a pin shows a workspace skill's
   description), the server sends ``notifications/tools/list_changed``.
6. Every audit record a call causes carries ``via="mcp"`` and the client's own name
   (``_audit.origin``).
"""

from __future__ import annotations

import hashlib
import json
import threading
from typing import TYPE_CHECKING, Any, Literal

import mcp_types as types
from mcp.server.lowlevel.server import NotificationOptions, Server

from skillguard._audit.origin import origin
from skillguard._core.errors import MalformedSkillError, SkillError, SkillUsageError, safe_repr
from skillguard._core.version import __version__
from skillguard._skills.approval import deny_all
from skillguard._skills.tool import TOOL_NAME
from skillguard._skills.truststore import PinningApprover
from skillguard._swarm.handle import AgentSkills
from skillguard.mcp._elicit import Asker, asking, client_label, elicit

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext
    from mcp.server.models import InitializationOptions

    from skillguard._swarm.served import LoadedSkill

__all__ = ["build_server", "serve_stdio"]

RESOURCE_TOOL = "skill_resource"
SELECT_TOOL = "select_skills"
# A resource path and a task are short texts: 4 KiB and 16 KiB are far above any real
# one, and refuse a runaway argument before it reaches anything.
_MAX_PATH_CHARS = 4096
_MAX_TASK_CHARS = 16384
_READ_ONLY = types.ToolAnnotations(read_only_hint=True, open_world_hint=False)


def _error_line(error: SkillError) -> str:
    return f"{error.kind} {error.code} {safe_repr(error.reason, limit=300)[1:-1]}"


def _refusal(line: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=line)], is_error=True)


def _text(text: str, structured: dict[str, Any] | None = None) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], structured_content=structured
    )


def _arguments(raw: object, keys: frozenset[str]) -> dict[str, str]:
    """A tool's arguments: an object of exactly *keys*, each a string."""
    if not isinstance(raw, dict) or set(raw) != keys:
        wanted = ", ".join(f'"{key}"' for key in sorted(keys))
        raise MalformedSkillError(
            "bad_arguments", f"the arguments must be an object holding exactly {wanted}"
        )
    if not all(isinstance(value, str) for value in raw.values()):
        raise MalformedSkillError("bad_arguments", "every argument must be a string")
    return dict(raw)


def _execution_id(request_id: object) -> str | None:
    text = f"mcp:{request_id}"
    safe = all(c.isascii() and (c.isalnum() or c in "._:-") for c in text)
    return text if isinstance(request_id, (int, str)) and len(text) <= 128 and safe else None


class _SkillServer(Server[Any]):
    """The low-level server, announcing ``tools.listChanged`` by default (rule 5)."""

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        return super().create_initialization_options(
            notification_options or NotificationOptions(tools_changed=True),
            experimental_capabilities,
            extensions,
        )


class _Tools:
    """The tool handlers of one server (one agent, one handle)."""

    def __init__(self, handle: AgentSkills, approve: Literal["deny", "elicit"]) -> None:
        self.handle = handle
        self.approve = approve
        self.can_pin = isinstance(handle._loader.approver, PinningApprover)  # noqa: SLF001
        # The skills this server served, by name: ``skill_resource`` reads from the very
        # snapshot that was served, never from a new read (rule 2).
        self._served: dict[str, LoadedSkill] = {}
        self._lock = threading.Lock()
        self._listed = ""

    def _catalog_digest(self, description: str | None = None) -> str:
        """What ``tools/list`` shows of the catalog (the ``skill`` tool's description)."""
        if description is None:
            description = self.handle.tool_info().description
        return hashlib.sha256(description.encode("utf-8", "replace")).hexdigest()

    async def list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        del params
        with origin("mcp", _client_name(ctx)):
            info = self.handle.tool_info()
            with self._lock:
                self._listed = self._catalog_digest(info.description)
        string = {"type": "string"}
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name=info.name,
                    description=info.description,
                    input_schema=info.parameters,
                    annotations=_READ_ONLY,
                ),
                types.Tool(
                    name=RESOURCE_TOOL,
                    description=(
                        "Read one file of a skill loaded with the skill tool, by its path "
                        "inside the skill folder (as listed in the skill's resources)."
                    ),
                    input_schema={
                        "type": "object",
                        "properties": {
                            "name": {**string, "maxLength": 64},
                            "path": {**string, "maxLength": _MAX_PATH_CHARS},
                        },
                        "required": ["name", "path"],
                        "additionalProperties": False,
                    },
                    annotations=_READ_ONLY,
                ),
                types.Tool(
                    name=SELECT_TOOL,
                    description=(
                        "Choose the skills a task needs: their names and their instructions."
                    ),
                    input_schema={
                        "type": "object",
                        "properties": {"task": {**string, "maxLength": _MAX_TASK_CHARS}},
                        "required": ["task"],
                        "additionalProperties": False,
                    },
                    annotations=_READ_ONLY,
                ),
            ]
        )

    async def call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        name = _client_name(ctx)
        asker = None
        if self.approve == "elicit" and _can_elicit(ctx):
            asker = Asker(ctx.session, ctx.request_id, client_label(name), self.can_pin)
        try:
            with origin("mcp", name), asking(asker):
                result = await self._call(params.name, params.arguments, ctx.request_id)
                await self._notify_if_changed(ctx)
        except SkillError as exc:
            return _refusal(_error_line(exc))
        except Exception as exc:  # noqa: BLE001 - a bug is one refusal, never a dead server
            return _refusal(f"internal internal_error {type(exc).__name__}")
        return result

    async def _call(self, tool: str, raw: object, request_id: object) -> types.CallToolResult:
        handle = self.handle
        if tool == TOOL_NAME:
            try:
                args_json = json.dumps(raw, ensure_ascii=False)
            except (TypeError, ValueError, RecursionError) as exc:
                raise MalformedSkillError("bad_arguments", "the arguments are not JSON") from exc
            execution = _execution_id(request_id)
            if execution is not None:
                prepared = handle.prepare_call(execution, args_json)
                loaded = await handle.aload(prepared)
            else:
                loaded = await handle.aload(handle._tool_name(args_json))  # noqa: SLF001
            with self._lock:
                self._served[loaded.name] = loaded
            return _text(loaded.activation())
        if tool == RESOURCE_TOOL:
            args = _arguments(raw, frozenset({"name", "path"}))
            if len(args["path"]) > _MAX_PATH_CHARS:
                raise MalformedSkillError("bad_arguments", "the path is too long")
            name = handle._tool_name(json.dumps({"name": args["name"]}))  # noqa: SLF001
            with self._lock:
                kept = self._served.get(name)
            if kept is None:
                kept = await handle.aload(name)
                with self._lock:
                    self._served[name] = kept
            data = kept.read_resource(args["path"])
            try:
                return _text(data.decode("utf-8"))
            except UnicodeDecodeError as exc:
                raise MalformedSkillError(
                    "not_text", "the file is not UTF-8 text and is not served over MCP"
                ) from exc
        if tool == SELECT_TOOL:
            task = _arguments(raw, frozenset({"task"}))["task"]
            if len(task) > _MAX_TASK_CHARS:
                raise MalformedSkillError("bad_arguments", "the task is too long")
            selection = await handle.aselect(task)
            names = list(selection.names)
            return _text(selection.text, {"names": names, "text": selection.text})
        raise SkillUsageError("no_such_tool", f"no tool {safe_repr(tool, limit=64)}")

    async def _notify_if_changed(self, ctx: ServerRequestContext[Any]) -> None:
        digest = self._catalog_digest()
        with self._lock:
            changed = bool(self._listed) and digest != self._listed
            if changed:
                self._listed = digest
        if changed:
            try:
                await ctx.session.send_tool_list_changed()
            except Exception:  # noqa: BLE001 - a lost notice must not undo a served call
                # A connection that cannot carry it (the stateless era) lists afresh anyway.
                return


def _client_name(ctx: ServerRequestContext[Any]) -> str:
    params = ctx.session.client_params
    name = params.client_info.name if params is not None else None
    return name if isinstance(name, str) and name else "unnamed client"


def _can_elicit(ctx: ServerRequestContext[Any]) -> bool:
    """Whether the client declared form elicitation (``{}`` means form) and this
    connection can carry a server request."""
    capabilities = ctx.session.client_capabilities
    declared = capabilities.elicitation if capabilities is not None else None
    if declared is None or not ctx.session.can_send_request:
        return False
    return declared.form is not None or declared.url is None


def _fallback(handle: AgentSkills) -> object:
    """Who answers for the handle's loader when no pin does."""
    approver = handle._loader.approver  # noqa: SLF001
    if isinstance(approver, PinningApprover):
        approver = approver.fallback
    return approver


def build_server(handle: AgentSkills, *, approve: str = "deny") -> Server[Any]:
    """An MCP server for the one agent of *handle* (the module's rules).

    *approve* is ``"deny"`` (nobody is asked; a workspace skill is served only when
    pinned) or ``"elicit"`` (the human is asked through a client that declared
    elicitation: the handle's loader must have been built with ``elicit`` as its
    approver, or with ``TrustStore(...).approver(elicit)``). Run it with the
    ``mcp`` SDK's transports (``server.run(read, write,
    server.create_initialization_options())``) or with ``serve_stdio``.

    Raises ``SkillUsageError`` for a handle that is not an ``AgentSkills``, an
    unknown *approve*, ``"elicit"`` with a loader that cannot elicit, or ``"deny"``
    with a loader whose approver (behind its trust store's) is not ``deny_all`` or
    ``elicit``: another would be asked, or say yes, where ``"deny"`` serves only pins.
    """
    if not isinstance(handle, AgentSkills):
        raise SkillUsageError("bad_argument", "build_server takes an AgentSkills handle")
    if approve not in ("deny", "elicit"):
        raise SkillUsageError("bad_argument", "approve must be 'deny' or 'elicit'")
    fallback = _fallback(handle)
    if approve == "elicit" and fallback is not elicit:
        raise SkillUsageError(
            "bad_argument",
            "approve='elicit' needs a Loader built with approver=skillguard.mcp.elicit "
            "(or TrustStore(...).approver(elicit))",
        )
    if approve == "deny" and fallback is not deny_all and fallback is not elicit:
        # Another approver would be asked, or say yes, where "deny" promises a pin (T304).
        raise SkillUsageError(
            "bad_argument",
            "approve='deny' serves a workspace skill only when pinned: it needs a Loader "
            "built with approver=skillguard.deny_all (or TrustStore(...).approver(deny_all))",
        )
    tools = _Tools(handle, "elicit" if approve == "elicit" else "deny")
    return _SkillServer(
        "skillguard",
        version=__version__,
        on_list_tools=tools.list_tools,
        on_call_tool=tools.call_tool,
    )


def serve_stdio(server: Server[Any]) -> None:
    """Serve *server* over this process's stdin and stdout until the client closes
    them. While it runs, stdout carries protocol messages only (the ``mcp`` SDK points
    file descriptor 1 at stderr for everything else)."""
    import anyio  # noqa: PLC0415 - the mcp extra's own dependency, needed only here
    from mcp.server.stdio import stdio_server  # noqa: PLC0415 - needed only here

    async def run() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(run)
