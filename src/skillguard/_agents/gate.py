"""The approval gate for agent files: what reaches a prompt was approved, or is the operator's.

Rules (threat-model.md T121-T126, T150; ARCHITECTURE.md rules 4 and 5):

* Where a file is decides its trust. A file beneath one of the folders the host names
  as the operator's own (``operator_agents``: ``~/.claude/agents`` and the like) is
  trusted, like an embedded skill. Every file beneath the repository is the
  workspace's, whichever folder it is in (``src/agents``, ``.claude/agents``, a team
  folder): untrusted. An operator folder inside the repository, or the repository
  itself, is refused (``bad_argument``): it would make the workspace's files the
  operator's. It is judged on real paths and through the mount table (a bind mount
  of the repository or of one of its folders is still the repository), and a folder
  starting with ``~`` is refused rather than read from the working directory.
* An operator folder is searched first, for ``<name>.md``, and wins: a workspace file
  of the same name is never served instead. The first operator folder holding the name
  is the answer, even when that file cannot be read (fail-secure, like resolution).
* ``core_knowledge`` paths are always read beneath the repository (seed 000). An
  envelope is served without approval only when every byte it serves is the
  operator's: an operator agent file that pulls in a knowledge file from the workspace
  needs an approval like a workspace agent file.
* An approval binds a snapshot: the agent file (for one composed from a folder, every
  file the composition read) and every knowledge file, read once
  beneath one held descriptor, each as (path, size, sha256) in a ``Manifest`` whose
  digest the request carries. A knowledge entry that cannot be read is listed as not
  taken, with its reason, and is served as that error. The human is shown the whole
  text: the frontmatter values, the body, and every knowledge file, with hidden
  characters shown (``render_request``).
* ``knowledge`` serves exactly the attachments the human was shown (T150). Each file a
  knowledge entry names is one ``_Attachment``, shown whole in the request and served
  as that same string: an entry holds its attachment or its error, so no entry can
  serve text the request did not show. This holds for a file that is already in the
  snapshot too (the agent file itself; a composed agent's token map, ``agent.md``,
  ``frontmatter.json`` or a section): its YAML comments, its free-form ``contract``,
  its tokens before substitution are text no field shows, so it is attached whole,
  from the bytes the agent was built from, under the same caps and character rules
  as any knowledge file.
* What is served after approval is the snapshot: the parsed agent file as read for the
  request (never read again), and each knowledge file's attachment, once the file,
  read again through the same descriptor, is still byte for byte the approved one
  (the agent will follow its ``Read`` directive itself); anything else refuses the
  whole envelope (``changed_after_approval``).
* Deny by default. No approver, an approver that says no, fails or answers anything
  but an approving ``Decision`` is ``ApprovalDeniedError`` (``not_approved``). A pin
  is keyed by the agent file's repository-relative path and ``agent:`` + its absolute
  path (``pin_key``), never by a name made from the file name: every file the resolver
  reaches can be approved and pinned, and a skill's pin never approves an agent file.
* The operator's flow (``trust show --agent``, ``trust add --agent``) reads through
  this module's ``_Call`` and ``_request`` (``_review``): the digest reviewed and the
  key pinned are the ones a gated call looks up.
* Under ``aagent_context`` a sync approver is asked in the loader's own approver
  threads (``Loader._ask_alone``): capped, abandoned when the call stops waiting, its
  late answer audited (T112, T131).
* Every outcome is audited before the caller sees it: ``agent_approval_requested``,
  then ``agent_context_served`` or ``agent_context_denied``. If the record cannot be
  written, nothing is served (``AuditError``).
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import os
import posixpath
import re
import time
import uuid
from collections import Counter
from typing import TYPE_CHECKING, Literal

import attrs

from skillguard._agents.envelope import agent_envelope
from skillguard._agents.parse import parse_agent
from skillguard._agents.resolve import (
    AgentContext,
    KnowledgeFile,
    check_arguments,
    knowledge_path,
    resolve_in,
)
from skillguard._core.errors import (
    MalformedSkillError,
    SkillContainmentError,
    SkillError,
    SkillInputError,
    SkillNotFoundError,
    SkillUsageError,
    safe_repr,
)
from skillguard._core.strict_yaml import decode_utf8
from skillguard._core.text import reveal
from skillguard._fs.containment import SafeRoot, Skipped, display_path, operator_path, split_name
from skillguard._skills.approval import (
    ApprovalDeniedError,
    ApprovalRequest,
    ApprovalRequiredError,
    Decision,
    is_async_approver,
    pin_failure,
)
from skillguard._skills.names import is_valid_name
from skillguard._skills.snapshot import SKIPPED_KEPT, Manifest, ManifestFile

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from skillguard._audit.log import Auditor
    from skillguard._core.limits import Limits
    from skillguard._core.model import Profile
    from skillguard._fs.containment import Resolver

__all__ = ["Gate", "ServedAgentContext", "aagent_context", "agent_context"]

Source = Literal["operator", "workspace"]


@attrs.frozen(kw_only=True)
class ServedAgentContext:
    """An agent file and its knowledge files as the gate served them.

    ``source`` is ``"operator"`` (every byte from the operator's own folders, served
    without approval) or ``"workspace"`` (approved, or pinned). ``digest`` is the
    manifest digest of everything served; ``approver`` who approved it (``"operator"``
    for an operator's file). ``knowledge`` holds one entry per ``core_knowledge``
    directive: the approved text, or the typed error the approver was shown.
    """

    context: AgentContext
    knowledge: tuple[KnowledgeFile, ...]
    source: Source
    digest: str
    approver: str

    def envelope(self) -> dict[str, object]:
        """The seed's success envelope (``AgentContext.envelope``) of the served file."""
        return agent_envelope(self.context.definition, self.context.source_path)


@attrs.frozen
class Gate:
    """What the gate decides with: the host's approver, auditor, limits and profile,
    and the name of the agent that asks (the bound agent of a handle, or ``cli``)."""

    requester: str
    approver: Callable[[ApprovalRequest], object]
    auditor: Auditor
    limits: Limits
    profile: Profile
    timeout: float | None = None
    # How ``aagent_context`` asks a sync approver: the loader's own approver threads
    # (``Loader._ask_alone``), under its cap on abandoned ones (T112, T131).
    ask_alone: Callable[[ApprovalRequest, Callable[[], object]], Awaitable[object]] | None = None


@attrs.frozen
class _Attachment:
    """One file a ``core_knowledge`` directive names, as the approver is shown it whole:
    ``text`` is the one string both shown (``ApprovalRequest.attachments``) and served
    (``KnowledgeFile.text``)."""

    path: str  # the manifest path
    shown_path: str
    text: str
    size: int
    sha256: str


@attrs.frozen
class _Entry:
    """One ``core_knowledge`` directive as snapshotted: the attachment it serves, or
    its error."""

    directive: str
    path: str
    attachment: _Attachment | None
    error: SkillError | None


@attrs.frozen
class _Snapshot:
    context: AgentContext
    source: Source
    file: str  # the agent file's absolute path, as text (what a pin is keyed by)
    display: str  # the folder it was found in, for the audit record
    entries: tuple[_Entry, ...]
    manifest: Manifest
    attachments: tuple[_Attachment, ...]  # every file an entry serves, each once
    workspace_bytes: bool


_MOUNTINFO = "/proc/self/mountinfo"
_OCTAL = re.compile(rb"\\([0-7]{3})")


def _unescape(field: bytes) -> bytes:
    return _OCTAL.sub(lambda match: bytes([int(match.group(1), 8) & 0xFF]), field)


def _mounts() -> list[tuple[bytes, bytes, bytes]]:
    """(mount point, device, root within the device) of every mount this process sees,
    in mount order; empty where the system does not say (not Linux)."""
    try:
        with open(_MOUNTINFO, "rb") as file:
            lines = file.read().splitlines()
    except OSError:  # pragma: no cover - a system without a mount table (not Linux)
        return []
    # id, parent, major:minor, root, mount point, ... (proc(5)); a line the kernel
    # did not write in that shape tells nothing.
    fields = [line.split(b" ") for line in lines]
    return [
        (_unescape(field[4]), field[2], _unescape(field[3])) for field in fields if len(field) > 4
    ]


def _beneath(path: bytes, top: bytes) -> bool:
    return path == top or path.startswith(top.rstrip(b"/") + b"/")


def _on_device(real: str, mounts: list[tuple[bytes, bytes, bytes]]) -> tuple[bytes, bytes] | None:
    """Where the real path *real* is on its device: the device and the path from the
    device's root. A bind mount shows a folder at a second path; this is the same for
    both paths. The last mount on the longest mount point holding *real* is the one
    seen there (a later mount hides an earlier one)."""
    path = os.fsencode(real)
    holding = [(len(mount[0]), order, mount) for order, mount in enumerate(mounts)]
    holding = [item for item in holding if _beneath(path, item[2][0])]
    if not holding:  # pragma: no cover - a system without a mount table (not Linux)
        return None
    point, device, root = max(holding)[2]
    rest = path[len(point.rstrip(b"/")) :]
    return device, posixpath.normpath(root.rstrip(b"/") + rest) if rest else root


def _check_dirs(repo: str, dirs: object) -> tuple[str, ...]:
    if isinstance(dirs, (str, bytes)) or not isinstance(dirs, (list, tuple)):
        raise SkillUsageError("bad_argument", "operator_agents must be a list of folders")
    folders = tuple(operator_path(folder, "an operator agent folder") for folder in dirs)
    for folder in folders:
        # Never expanded here (that is the shell's job): taken literally, "~/agents"
        # names a folder of the working directory, which holds nothing, and the
        # operator's own agent would silently give way to the repository's.
        if folder.startswith("~"):
            raise SkillUsageError(
                "bad_argument",
                f"operator agent folder {safe_repr(display_path(folder))} starts with '~', "
                "which is not expanded: pass the folder's own path",
            )
    # Judged on real paths, and on where they are on their devices (the mount table):
    # an operator folder that is the repository or lies inside it, through a link or
    # a bind mount, would turn files the workspace wrote into the operator's.
    real_repo = os.path.realpath(repo)
    mounts = _mounts() if folders else []
    repo_place = _on_device(real_repo, mounts)
    for folder in folders:
        real = os.path.realpath(folder)
        place = _on_device(real, mounts)
        if (
            real == real_repo
            or real.startswith(real_repo.rstrip("/") + "/")
            or (
                place is not None
                and repo_place is not None
                and place[0] == repo_place[0]
                and _beneath(place[1], repo_place[1])
            )
        ):
            raise SkillUsageError(
                "bad_argument",
                f"operator agent folder {safe_repr(display_path(folder))} is inside the "
                "repository: its files are the workspace's",
            )
    return folders


def _operator_agent(
    folders: tuple[str, ...], name: str, limits: Limits, profile: Profile, resolver: Resolver
) -> tuple[AgentContext, str, str] | None:
    """The operator's own agent file named *name*, its absolute path and its folder."""
    if not is_valid_name(name):
        return None  # a path names a file of the repository
    file = f"{name}.md"
    for folder in folders:
        # The operator's own path, so looking before opening races with no attacker:
        # a folder that does not exist holds nothing, and anything else is opened.
        if not os.path.lexists(folder):
            continue
        with SafeRoot(folder, resolver=resolver) as root:
            if not root.has_entry(file):
                continue
            try:
                raw = root.read_file(file, cap=limits.max_skill_bytes, oversize=MalformedSkillError)
                definition = parse_agent(raw, limits=limits, profile=profile)
            except SkillInputError as exc:
                raise type(exc)(
                    exc.code,
                    f"operator agent file {safe_repr(file)}: {exc.reason}",
                    line=exc.line,
                    column=exc.column,
                    key=exc.key,
                ) from exc
            shown = display_path(os.path.abspath(folder))
            context = AgentContext(definition=definition, source_path=file, identity=name)
            return context, f"{shown}/{file}", shown
    return None


def _snapshot(
    root: SafeRoot,
    context: AgentContext,
    source: Source,
    file: str,
    display: str,
    limits: Limits,
    read: dict[str, bytes],
) -> _Snapshot:
    """Read every knowledge file once beneath *root* and build the manifest. *read*
    holds the bytes of every file the agent was built from (its manifest entries)."""
    definition = context.definition
    # The agent file is listed too, even the operator's (by its absolute path, which no
    # knowledge path can be): the digest covers every file whose text is served.
    listed = context.source_path if source == "workspace" else file
    files = {listed: ManifestFile(listed, definition.size, definition.sha256)}
    if context.sources:
        # A composed agent (T138): its text is in no one file, so the digest covers
        # every file the composition read instead (agent.md, frontmatter.json, each
        # section, the token map).
        files = {path: ManifestFile(path, size, sha) for path, size, sha in context.sources}
    entries: list[_Entry] = []
    skipped: list[Skipped] = []
    attached: dict[str, _Attachment] = {}
    budget = limits.max_snapshot_bytes
    for number, directive in enumerate(definition.core_knowledge):
        raw_path = knowledge_path(directive)
        shown = reveal(directive)
        try:
            if number >= limits.max_resource_files:
                raise SkillContainmentError(  # noqa: TRY301 - one place records the refusal
                    "too_many_entries",
                    f"more than {limits.max_resource_files} core_knowledge entries",
                )
            path = "/".join(split_name(raw_path))
            attachment = attached.get(path)
            if attachment is None:
                attachment = _attach(root, path, read, min(limits.max_skill_bytes, budget))
                budget -= attachment.size
                files.setdefault(path, ManifestFile(path, attachment.size, attachment.sha256))
                attached[path] = attachment
        except (SkillContainmentError, SkillNotFoundError, MalformedSkillError) as exc:
            skipped.append(Skipped(reveal(raw_path), exc.code, exc.reason, exc.kind, entry="file"))
            entries.append(_Entry(shown, reveal(raw_path), None, exc))
            continue
        entries.append(_Entry(shown, reveal(raw_path), attachment, None))
    counts = Counter(item.code for item in skipped)
    manifest = Manifest(
        tuple(sorted(files.values(), key=lambda entry: entry.path)),
        tuple(skipped[:SKIPPED_KEPT]),
        tuple(sorted(counts.items())),
    )
    # Every knowledge file is the repository's, so one attachment makes the envelope
    # the workspace's even for the operator's own agent file.
    workspace_bytes = source == "workspace" or bool(attached)
    attachments = tuple(attached.values())
    return _Snapshot(
        context, source, file, display, tuple(entries), manifest, attachments, workspace_bytes
    )


def _attach(root: SafeRoot, path: str, read: dict[str, bytes], cap: int) -> _Attachment:
    """The file *path* as the approver is shown it, whole: read now beneath *root*, or,
    for a file the agent was built from (the agent file itself, its token map, a
    composed agent's ``agent.md``, ``frontmatter.json`` or a section), the very bytes
    it was built from, never read a second time. Either way the text goes through the
    same decoding and the same character rules (``reveal``)."""
    data = read.get(path)
    if data is None:
        data = root.read_file(path, cap=cap)
    elif len(data) > cap:
        raise SkillContainmentError(
            "too_large", "the file is larger than the knowledge files' byte budget"
        )
    decode_utf8(data, what="the knowledge file")
    return _Attachment(
        path,
        reveal(path),
        reveal(data.decode("utf-8")),
        len(data),
        hashlib.sha256(data).hexdigest(),
    )


def _fields(context: AgentContext) -> tuple[tuple[str, str], ...]:
    """Every frontmatter value of the agent file, as the approver must see it."""
    definition = context.definition
    fields = [("name", definition.name)]
    if definition.tools is not None:
        fields.append(("tools", ", ".join(definition.tools) or "(none)"))
    if definition.models:
        fields.append(("model", ", ".join(definition.models)))
    for key, value in definition.extra.items():
        fields.append((key, value if isinstance(value, str) else repr(value)))
    # Whole, never cut: the envelope serves every tool and the model whole, and the
    # file's cap (``max_skill_bytes``) already bounds what the human is asked to read.
    return tuple((reveal(key), reveal(text)) for key, text in fields)


def _request(gate: Gate, snap: _Snapshot) -> ApprovalRequest:
    definition = snap.context.definition
    manifest = snap.manifest
    return ApprovalRequest(
        request_id=uuid.uuid4().hex,
        agent=gate.requester,
        skill=snap.context.identity,
        source=snap.display,
        path=reveal(snap.context.source_path),
        sha256=definition.sha256,
        size=definition.size,
        description=reveal(definition.description),
        preview=reveal(definition.full_body),
        time=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        digest=manifest.digest,
        folder=snap.file,
        files=tuple((reveal(f.path), f.size, f.sha256) for f in manifest.files),
        skipped=tuple((item.path, item.code, reveal(item.reason)) for item in manifest.skipped),
        grants=_fields(snap.context),
        total_size=manifest.total_bytes,
        skipped_counts=manifest.skipped_counts,
        full_text=reveal(definition.full_body),
        kind="agent",
        # Exactly what ``knowledge`` serves: the same strings (``_serve``).
        attachments=tuple((item.shown_path, item.text) for item in snap.attachments),
    )


def _changed(why: str) -> SkillContainmentError:
    return SkillContainmentError(
        "changed_after_approval", f"a knowledge file changed after approval ({why})"
    )


def _serve(root: SafeRoot, snap: _Snapshot, approver: str) -> ServedAgentContext:
    """The approved snapshot. Each knowledge entry serves its attachment, the very text
    the approver was shown whole, and nothing else: no entry can serve text the request
    did not show. The file is read again, and the envelope refused unless it is still
    byte for byte the approved one: the agent will follow its ``Read`` directive on its
    own, and must find there what the human approved."""
    served: list[KnowledgeFile] = []
    for entry in snap.entries:
        attachment = entry.attachment
        if attachment is None:
            served.append(
                KnowledgeFile(directive=entry.directive, path=entry.path, error=entry.error)
            )
            continue
        try:
            data = root.read_file(attachment.path, cap=attachment.size)
        except SkillError as exc:
            raise _changed(f"{exc.code}: {exc.reason}") from exc
        if len(data) != attachment.size or hashlib.sha256(data).hexdigest() != attachment.sha256:
            raise _changed("its bytes differ from the approved ones")
        served.append(
            KnowledgeFile(
                directive=entry.directive,
                path=entry.path,
                text=attachment.text,
                sha256=attachment.sha256,
            )
        )
    return ServedAgentContext(
        context=snap.context,
        knowledge=tuple(served),
        source="workspace" if snap.workspace_bytes else "operator",
        digest=snap.manifest.digest,
        approver=approver,
    )


def _denied(gate: Gate, agent: object, error: SkillError, **fields: object) -> None:
    gate.auditor.emit(
        "agent_context_denied",
        agent=gate.requester,
        skill=agent if isinstance(agent, str) else None,
        decision="deny",
        code=error.code,
        reason=error.reason,
        **fields,
    )


def _granted(gate: Gate, snap: _Snapshot, served: ServedAgentContext, **fields: object) -> None:
    gate.auditor.emit(
        "agent_context_served",
        agent=gate.requester,
        skill=snap.context.identity,
        source=served.source,
        decision="allow",
        path=snap.file,
        size=snap.manifest.total_bytes,
        sha256=snap.context.definition.sha256,
        digest=served.digest,
        approver=served.approver,
        **fields,
    )


class _Call:
    """One gated call: resolve, snapshot, then either serve at once or ask."""

    def __init__(
        self,
        gate: Gate,
        repo: object,
        agent: object,
        *,
        team: object,
        harnesses: object,
        operator_agents: object,
        resolver: Resolver,
    ) -> None:
        self.gate = gate
        self.agent = agent
        self.team = team
        self.harnesses = harnesses
        self.operator_agents = operator_agents
        self.resolver = resolver
        self.repo = operator_path(repo, "the repository")
        self.root: SafeRoot | None = None

    def open(self) -> _Snapshot:
        gate = self.gate
        agent, team, harnesses, limits = check_arguments(
            self.agent, self.team, self.harnesses, gate.limits
        )
        folders = _check_dirs(self.repo, self.operator_agents)
        operator = _operator_agent(folders, agent, limits, gate.profile, self.resolver)
        self.root = SafeRoot(self.repo, resolver=self.resolver)
        if operator is not None:
            context, file, display = operator
            # Listed by its absolute path, which no knowledge path (beneath the
            # repository) can name: nothing of it is read as a knowledge file.
            return _snapshot(self.root, context, "operator", file, display, limits, {})
        read: dict[str, bytes] = {}
        context = resolve_in(
            self.root, agent, team, harnesses, limits, gate.profile, read.__setitem__
        )
        file = display_path(os.path.abspath(os.path.join(self.repo, context.source_path)))
        shown = display_path(self.repo)
        return _snapshot(self.root, context, "workspace", file, shown, limits, read)

    def close(self) -> None:
        if self.root is not None:
            self.root.close()


def _check_gate(gate: object) -> Gate:
    if not isinstance(gate, Gate):  # pragma: no cover - built by skillguard only
        raise SkillUsageError("bad_argument", "gate must be a Gate")
    return gate


def _decide(
    gate: Gate, call: _Call, snap: _Snapshot, request: ApprovalRequest, answer: object
) -> ServedAgentContext:
    decision = answer if isinstance(answer, Decision) else None
    if decision is None or decision.approved is not True:
        by = decision.by if decision is not None else "no valid answer"
        error = ApprovalDeniedError(
            "not_approved",
            f"the workspace agent file was not approved (approver: {safe_repr(by)}): pin it "
            "in a trust store or approve it",
        )
        _denied(
            gate,
            snap.context.identity,
            error,
            approver=by,
            request_id=request.request_id,
            digest=request.digest,
        )
        raise error
    assert call.root is not None
    try:
        served = _serve(call.root, snap, decision.by)
    except SkillError as exc:
        _denied(
            gate,
            snap.context.identity,
            exc,
            approver=decision.by,
            request_id=request.request_id,
            digest=request.digest,
        )
        raise
    failure = pin_failure(decision)
    if failure is not None:  # approved, but the pin asked for was not written (T181)
        gate.auditor.emit(
            "pin_failed",
            agent=gate.requester,
            skill=snap.context.identity,
            source="workspace",
            decision="none",
            code=failure.code,
            reason=f"not pinned, served this once: {failure.reason}",
            approver=decision.by,
            scope="pin",
            request_id=request.request_id,
            digest=request.digest,
        )
    _granted(gate, snap, served, scope=decision.scope, request_id=request.request_id)
    return served


def _begin(gate: Gate, call: _Call) -> _Snapshot | ServedAgentContext:
    """Resolve and snapshot; an envelope of the operator's own bytes is served here."""
    try:
        snap = call.open()
        if not snap.workspace_bytes:
            assert call.root is not None
            served = _serve(call.root, snap, "operator")
            _granted(gate, snap, served)
            return served
    except SkillError as exc:
        if exc.kind != "audit":
            _denied(gate, call.agent, exc)
        raise
    return snap


def _asked(gate: Gate, snap: _Snapshot) -> ApprovalRequest:
    request = _request(gate, snap)
    gate.auditor.emit(
        "agent_approval_requested",
        agent=gate.requester,
        skill=snap.context.identity,
        source="workspace",
        path=snap.file,
        size=snap.manifest.total_bytes,
        sha256=snap.context.definition.sha256,
        digest=snap.manifest.digest,
        request_id=request.request_id,
    )
    return request


def agent_context(
    gate: Gate,
    repo: object,
    agent: object,
    *,
    team: object = None,
    harnesses: object = (),
    operator_agents: object = (),
    resolver: Resolver = "auto",
) -> ServedAgentContext:
    """Resolve *agent* and serve it through the gate (the module docstring's rules).

    Raises ``ApprovalDeniedError`` (``not_approved``), ``ApprovalRequiredError``
    (``async_approver``: use ``aagent_context``), ``SkillContainmentError``
    (``changed_after_approval`` and the read refusals), the errors of
    ``load_agent_context``, ``AuditError`` and ``SkillUsageError``.
    """
    gate = _check_gate(gate)
    call = _Call(
        gate,
        repo,
        agent,
        team=team,
        harnesses=harnesses,
        operator_agents=operator_agents,
        resolver=resolver,
    )
    try:
        begun = _begin(gate, call)
        if isinstance(begun, ServedAgentContext):
            return begun
        request = _asked(gate, begun)
        answer = _ask(gate, request)
        if inspect.isawaitable(answer):
            close = getattr(answer, "close", None)
            if close is not None:
                close()
            error = ApprovalRequiredError(
                "async_approver", "the approver is async: use aagent_context()"
            )
            _denied(gate, begun.context.identity, error, request_id=request.request_id)
            raise error
        return _decide(gate, call, begun, request, answer)
    finally:
        call.close()


def _ask(gate: Gate, request: ApprovalRequest) -> object:
    try:
        return gate.approver(request)
    except Exception:  # noqa: BLE001 - an approver that fails has not approved
        return None


async def _aask(gate: Gate, request: ApprovalRequest) -> object:
    if is_async_approver(gate.approver):
        answer = _ask(gate, request)
    else:
        # A human at a console must not block the event loop, nor hold a worker of the
        # loop's executor forever: the loader's approver threads are capped (T131).
        assert gate.ask_alone is not None  # checked by aagent_context
        answer = await gate.ask_alone(request, lambda: _ask(gate, request))
    if inspect.isawaitable(answer):
        try:
            answer = await answer
        except Exception:  # noqa: BLE001 - an approver that fails has not approved
            return None
    return answer


async def aagent_context(
    gate: Gate,
    repo: object,
    agent: object,
    *,
    team: object = None,
    harnesses: object = (),
    operator_agents: object = (),
    resolver: Resolver = "auto",
    timeout: float | None = None,
) -> ServedAgentContext:
    """``agent_context`` for asyncio hosts: awaits an async approver, at most *timeout*
    seconds (default: the gate's; ``ApprovalDeniedError``, ``timed_out``). A cancelled
    call is audited and re-raises ``CancelledError``."""
    gate = _check_gate(gate)
    if gate.ask_alone is None:  # pragma: no cover - built by skillguard only
        raise SkillUsageError("bad_argument", "an async gate needs the loader's approver threads")
    limit = gate.timeout if timeout is None else timeout
    call = _Call(
        gate,
        repo,
        agent,
        team=team,
        harnesses=harnesses,
        operator_agents=operator_agents,
        resolver=resolver,
    )
    try:
        begun = _begin(gate, call)
        if isinstance(begun, ServedAgentContext):
            return begun
        request = _asked(gate, begun)
        try:
            answer = await asyncio.wait_for(_aask(gate, request), limit)
        except asyncio.TimeoutError:
            error = ApprovalDeniedError(
                "timed_out", f"the approver did not answer within {limit} seconds"
            )
            _denied(gate, begun.context.identity, error, request_id=request.request_id)
            raise error from None
        except ApprovalDeniedError as exc:  # too_many_abandoned: the human was not asked
            _denied(gate, begun.context.identity, exc, request_id=request.request_id)
            raise
        except asyncio.CancelledError:
            gate.auditor.emit(
                "agent_context_denied",
                agent=gate.requester,
                skill=begun.context.identity,
                decision="deny",
                code="cancelled",
                reason="the call was cancelled",
                request_id=request.request_id,
            )
            raise
        return _decide(gate, call, begun, request, answer)
    finally:
        call.close()
