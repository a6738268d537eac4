"""What approving an agent file binds: its snapshot, and the request that shows it whole.

Rules (threat-model.md T124, T132, T133, T138, T150; ARCHITECTURE.md rules 4 and 5):

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

The gate (``gate``) takes the snapshot (``_snapshot``), asks with its request
(``_request``) and serves it (``_serve``); the operator's review (``review``) reads
through the same two.
"""

from __future__ import annotations

import hashlib
import time
import uuid
from collections import Counter
from typing import TYPE_CHECKING, Literal

import attrs

from skillguard._agents.resolve import knowledge_path
from skillguard._core.errors import (
    MalformedSkillError,
    SkillContainmentError,
    SkillError,
    SkillNotFoundError,
)
from skillguard._core.strict_yaml import decode_utf8
from skillguard._core.text import reveal
from skillguard._fs.containment import Skipped
from skillguard._fs.paths import split_name
from skillguard._skills.approval import ApprovalRequest
from skillguard._skills.snapshot import SKIPPED_KEPT, Manifest, ManifestFile

if TYPE_CHECKING:
    from skillguard._agents.gate import Gate
    from skillguard._agents.resolve import AgentContext
    from skillguard._core.limits import Limits
    from skillguard._fs.containment import SafeRoot

__all__: list[str] = []

Source = Literal["operator", "workspace"]


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
