"""``skillguard trust show --agent`` and ``trust add --agent``: an agent file approved
by the operator, with no terminal and no prompt.

Rules (threat-model.md T160, T161): the same flow as a workspace skill's. ``trust show
--agent NAME|PATH --repo DIR`` prints what an approval covers, read by the gate's own
reading (``_review``): every file with its size and sha256, the digest, every
frontmatter value and every text whole (with ``--full``, each file's own text too, read
back and checked against the digest). ``trust add --agent ... --digest D`` pins that
snapshot only if its digest is still D, under the key ``agent context`` looks up
(``pin_key``: the file's repository path and ``agent:`` + its absolute path); a digest
that no longer matches pins nothing. The resolution options are ``agent context``'s,
and they must be the same ones for the pin to be the file ``agent context`` serves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skillguard._agents.gate import Gate
from skillguard._agents.place import check_trust_store
from skillguard._agents.review import review
from skillguard._audit.log import Auditor
from skillguard._cli.agent_context import RESOLUTION_OPTIONS, add_resolution_options, resolution
from skillguard._core.errors import SkillUsageError
from skillguard._core.limits import DEFAULT_LIMITS
from skillguard._core.text import terminal_line
from skillguard._skills.approval import deny_all
from skillguard._skills.console import render_file, render_request
from skillguard._skills.truststore import TrustStore, pin_key

if TYPE_CHECKING:
    import argparse
    from typing import TextIO

__all__ = ["add_agent_trust_options", "run_agent_trust"]

_EXIT_OK = 0
_EXIT_FAILED = 1


def add_agent_trust_options(parser: argparse.ArgumentParser) -> None:
    """The options of ``trust show`` and ``trust add`` that name an agent file: agent
    context's own resolution options (``add_resolution_options``)."""
    parser.add_argument(
        "--agent",
        metavar="NAME|PATH",
        help="an agent file instead of a skill: its name, or its path in --repo",
    )
    add_resolution_options(parser, lead="with --agent: ")


def _digest(args: argparse.Namespace) -> str:
    """DIGEST, given as the second name or as ``--digest`` (exactly once)."""
    given: list[str] = [value for value in (args.digest, args.digest_option) if value]
    if len(given) != 1:
        raise SkillUsageError("bad_argument", "trust add needs DIGEST once (or --digest)")
    return given[0]


def run_agent_trust(args: argparse.Namespace, out: TextIO, err: TextIO) -> int | None:
    """``trust show`` or ``trust add`` for an agent file when ``--agent`` was given;
    ``None`` for a skill (whose options are checked here, and whose DIGEST is set)."""
    if args.agent is not None and (args.name is not None or args.project is not None):
        # Checked first: "trust add --agent X DIGEST" puts DIGEST in NAME's place.
        raise SkillUsageError(
            "bad_argument",
            "--agent names an agent file in --repo: no skill NAME (a DIGEST goes in "
            "--digest), no --project",
        )
    if args.action == "add":
        args.digest = _digest(args)
    if args.agent is None:
        # Options that only an agent file takes: given without --agent, a mistake.
        extra = [flag for dest, flag in RESOLUTION_OPTIONS if getattr(args, dest) is not None]
        if extra:
            raise SkillUsageError("bad_argument", f"{', '.join(extra)}: only with --agent")
        if args.name is None:
            raise SkillUsageError("bad_argument", f"trust {args.action} needs NAME or --agent")
        return None
    # Read as agent context reads it, so that both find and snapshot the same file.
    where = resolution(args)
    gate = Gate("(operator)", deny_all, Auditor(None), DEFAULT_LIMITS, where.profile)
    found = review(
        gate,
        where.repo,
        args.agent,
        team=where.team,
        harnesses=where.harnesses,
        operator_agents=where.operator_agents,
        read_back=args.action == "show" and args.full,
    )
    file = terminal_line(found.file)
    request = found.request
    if request is None:
        if args.action == "show":
            out.write(f"{file}: the operator's own, served by agent context with no approval\n")
            return _EXIT_OK
        err.write(f"skillguard: {file} is the operator's own: nothing to pin\n")
        return _EXIT_FAILED
    if args.action == "show":
        out.writelines(render_file(path, data, agent=True) for path, data in found.files)
        out.write(render_request(request))
        return _EXIT_OK
    if request.digest != args.digest:
        err.write(
            f"skillguard: {file} is not the reviewed content: its digest is now "
            f"{request.digest}; nothing was pinned\n"
        )
        return _EXIT_FAILED
    check_trust_store(where.repo, args.trust_store)
    name, source = pin_key(request)
    TrustStore(args.trust_store).pin(
        name, request.digest, args.by, source=source, skill_sha256=request.sha256
    )
    out.write(f"pinned {terminal_line(name)} {request.digest}\n")
    return _EXIT_OK
