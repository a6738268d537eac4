"""The command line: ``skillguard`` and its output formats.

* ``main``: the argument parser and dispatch;
* ``commands``: the swarm commands (``catalog``, ``load``, ``select``, ``trust``, ``audit``);
* ``scan``, ``skillref`` and ``ci``: ``validate`` and its formats (text, JSON, GitHub,
  SARIF), ``read-properties`` and ``to-prompt``;
* ``agent_context`` and ``agent_compose``: ``skillguard agent ...``.

The top of the import graph: nothing in the library imports it.
"""

__all__: list[str] = []
