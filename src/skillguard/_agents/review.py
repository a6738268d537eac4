"""What approving an agent file covers, read for the operator, with nobody asked.

``skillguard trust show --agent`` and ``trust add --agent`` (``_trust_command``) run on
this. Rules (threat-model.md T160, T161):

* It is the gate's own reading (``gate._Call``, ``snapshot._request``): the same
  resolution (operator folders first, the seed's folders, the harness presets), the
  same snapshot of the agent file, the files of a composed folder and every knowledge
  file beneath one held descriptor, and the same request, so the digest the operator
  reviews and the key ``pin_key`` gives are exactly those a gated call looks up.
  Nobody is asked, nothing is served and nothing is audited: an approval exists only
  once the operator pins the digest they reviewed.
* An agent whose every byte is the operator's own needs no approval: ``request`` is
  ``None``.
* With ``read_back``, every file the digest covers is read again (the repository's
  beneath the same descriptor, the operator's own agent file beneath its folder) and
  returned only if it is byte for byte the listed one: what the operator reads is what
  the digest covers (``changed_after_approval`` otherwise).
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

import attrs

from skillguard._agents.gate import _Call
from skillguard._agents.snapshot import _request
from skillguard._core.errors import SkillContainmentError, SkillError, safe_repr
from skillguard._fs.containment import SafeRoot

if TYPE_CHECKING:
    from skillguard._agents.gate import Gate
    from skillguard._agents.snapshot import _Snapshot
    from skillguard._fs.walk import Resolver
    from skillguard._skills.approval import ApprovalRequest
    from skillguard._skills.snapshot import ManifestFile

__all__ = ["Review", "review"]


@attrs.frozen(kw_only=True)
class Review:
    """An agent file as an approval of it would cover it, read now.

    ``request`` is the request the gate would ask (its ``digest`` is what a pin binds),
    or ``None`` when every byte is the operator's own; ``file`` is the agent file's
    absolute path; ``files`` each file the digest covers as ``(path, bytes)``, read back
    and verified (only with ``read_back``).
    """

    request: ApprovalRequest | None
    file: str
    files: tuple[tuple[str, bytes], ...] = ()


def _changed(path: str, why: str) -> SkillContainmentError:
    return SkillContainmentError(
        "changed_after_approval", f"{safe_repr(path)} changed while it was read ({why})"
    )


def _read_back(root: SafeRoot, snap: _Snapshot, entry: ManifestFile, resolver: Resolver) -> bytes:
    try:
        if snap.source == "operator" and entry.path == snap.file:
            # The operator's own agent file, listed by its absolute path.
            with SafeRoot(snap.display, resolver=resolver) as folder:
                data = folder.read_file(snap.context.source_path, cap=entry.size)
        else:
            data = root.read_file(entry.path, cap=entry.size)
    except SkillError as exc:
        raise _changed(entry.path, f"{exc.code}: {exc.reason}") from exc
    if len(data) != entry.size or hashlib.sha256(data).hexdigest() != entry.sha256:
        raise _changed(entry.path, "its bytes differ from the ones listed")
    return data


def review(
    gate: Gate,
    repo: object,
    agent: object,
    *,
    team: object = None,
    harnesses: object = (),
    operator_agents: object = (),
    resolver: Resolver = "auto",
    read_back: bool = False,
) -> Review:
    """What approving *agent* would cover (the module docstring's rules).

    Raises the errors of ``agent_context`` before anyone is asked (``load_agent_context``'s,
    ``SkillContainmentError``, ``SkillUsageError``) and ``SkillContainmentError``
    (``changed_after_approval``) when a file changes while it is read back.
    """
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
        snap = call.open()
        if not snap.workspace_bytes:
            return Review(request=None, file=snap.file)
        files: tuple[tuple[str, bytes], ...] = ()
        if read_back:
            assert call.root is not None  # opened by call.open()
            root = call.root
            files = tuple(
                (entry.path, _read_back(root, snap, entry, resolver))
                for entry in snap.manifest.files
            )
        return Review(request=_request(gate, snap), file=snap.file, files=files)
    finally:
        call.close()
