"""``skillguard mcp``: serve one agent's skills to an MCP client over stdio.

A thin layer over ``skillguard.mcp.build_server`` (the server's rules are there): this
module builds the ``Loader`` from the options, binds the agent and serves. The ``mcp``
SDK is the optional extra ``skillguard[mcp]``: without it the command says, in one line
on stderr, which extra to install, and exits 2. While serving, stdout carries protocol
messages only; the SDK's own log records are dropped unless the host configures
logging, so stderr stays quiet too.

The command line is a floor below the public packages: this is the one module that
imports one of them (``skillguard.mcp``), at run time only, because the command is the
server's front (``tests/test_layout.py`` names this one edge).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from skillguard._audit.log import AuditLog, Auditor
from skillguard._skills.approval import deny_all
from skillguard._skills.embedded import EmbeddedSkills
from skillguard._skills.roots import PROJECT_ROOTS, USER_ROOTS_ENV, default_roots
from skillguard._skills.select import SelectionRegistry
from skillguard._skills.truststore import TrustStore
from skillguard._swarm.loader import Loader

if TYPE_CHECKING:
    import argparse
    from typing import TextIO

    from mcp.server.lowlevel.server import Server

    from skillguard._skills.approval import Approver, AsyncApprover
    from skillguard._skills.discover import RootPath
    from skillguard._skills.truststore import PinningApprover

__all__ = ["run_mcp"]

EXIT_OK = 0
EXIT_USAGE = 2
# The mcp extra's modules: an ImportError naming one of them is the extra missing.
_EXTRA_MODULES = frozenset({"mcp", "mcp_types", "anyio", "pydantic", "pydantic_core"})
MISSING_EXTRA = "skillguard: 'skillguard mcp' needs the mcp extra: pip install 'skillguard[mcp]'\n"


def _roots(args: argparse.Namespace) -> list[RootPath]:
    """The project roots of each ``--project``, in order, then the user's own roots
    with ``--user-roots``; nothing else (a server reads no folder it was not named)."""
    roots: list[RootPath] = []
    for project in args.project:
        roots.extend(default_roots(project, environ={USER_ROOTS_ENV: ""}))
    if args.user_roots:
        roots.extend(default_roots(".")[len(PROJECT_ROOTS) :])
    return roots


def run_mcp(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    del out  # the protocol owns stdout
    try:
        from skillguard import mcp  # noqa: PLC0415 - the optional extra, when this command runs
    except ImportError as exc:
        if (exc.name or "").split(".")[0] not in _EXTRA_MODULES:
            raise  # not a missing extra: a bug, reported as one
        err.write(MISSING_EXTRA)
        return EXIT_USAGE
    logging.getLogger("mcp").addHandler(logging.NullHandler())
    loader, server = open_server(args)
    with loader:
        mcp.serve_stdio(server)
    return EXIT_OK


def open_server(args: argparse.Namespace) -> tuple[Loader, Server[Any]]:
    """The loader the options describe and the MCP server for its one agent. Raises
    what ``Loader``, ``bind`` and ``build_server`` raise."""
    from skillguard import mcp  # noqa: PLC0415 - the optional extra, when this command runs
    from skillguard._cli.commands import _key, _policy  # noqa: PLC0415 - the shared readers

    fallback: Approver | AsyncApprover = mcp.elicit if args.approve == "elicit" else deny_all
    approver: Approver | AsyncApprover | PinningApprover = fallback
    if args.trust_store:
        store = TrustStore(args.trust_store)
        store.pins()  # a store the operator named and cannot be read is an error now
        approver = store.approver(fallback)
    audit = None
    if args.audit_log:
        audit = AuditLog(
            args.audit_log, key=_key(args.audit_key_file) if args.audit_key_file else None
        )
    registry = SelectionRegistry.from_file(args.registry) if args.registry else None
    embedded = (
        EmbeddedSkills.from_directory(args.embedded, profile=args.profile)
        if args.embedded
        else None
    )
    loader = Loader(
        _policy(args.policy),
        embedded=embedded,
        workspace=_roots(args),
        approver=approver,
        audit=Auditor(audit),
        registry=registry,
        profile=args.profile,
    )
    try:
        return loader, mcp.build_server(loader.bind(args.agent), approve=args.approve)
    except BaseException:
        loader.close()
        raise
