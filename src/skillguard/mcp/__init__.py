"""skillguard as an MCP server: gated skills for any MCP client (``skillguard[mcp]``).

``build_server(handle, approve="deny")`` returns an ``mcp`` low-level ``Server`` that
serves ONE agent's skills (its ``AgentSkills`` handle, exactly its allow-set) as three
tools: ``skill`` (the activation text), ``skill_resource`` (one file of a served skill)
and ``select_skills`` (the skills a task needs). ``serve_stdio`` runs it over stdin and
stdout, as ``skillguard mcp`` does. ``elicit`` is the approver that asks the human
through the client (``elicitation/create``): build the ``Loader`` with it (or with
``TrustStore(...).approver(elicit)``) and pass ``approve="elicit"``.

Importing this package needs the ``mcp`` SDK; ``import skillguard`` never imports it.
The rules are in ``_server`` and ``_elicit`` (threat-model.md T240-T246).
"""

from __future__ import annotations

from skillguard.mcp._elicit import elicit
from skillguard.mcp._server import build_server, serve_stdio

__all__ = ["build_server", "elicit", "serve_stdio"]
