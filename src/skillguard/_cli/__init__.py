"""The command line: ``skillguard`` and its output formats.

* ``main``: the entry point: dispatch, exit statuses, a broken pipe, no traceback;
* ``parser``: the argument parser of every command (and their help texts);
* ``validate``, ``scan`` and ``ci``: ``validate`` and its formats (text, JSON, GitHub,
  SARIF); ``discover``: ``discover``;
* ``commands``: the swarm commands (``catalog``, ``load``, ``select``, ``trust``, ``audit``);
* ``skillref``: ``read-properties`` and ``to-prompt``;
* ``agent_context`` and ``agent_compose``: ``skillguard agent ...``.

The top of the import graph: nothing in the library imports it. A command's module is
imported only when that command runs, so ``--version`` and ``--help`` import none.
"""

__all__: list[str] = []
