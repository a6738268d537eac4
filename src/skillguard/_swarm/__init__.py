"""The swarm facade: the ``Loader`` and the per-agent handle that make every decision.

* ``loader``: the ``Loader`` (configuration, sources, ``bind``);
* ``state``: ``SwarmState``, the loader's sources and shared state, which ``bind``
  passes down to each handle (``Binding``);
* ``pending``: approvals not decided yet (receipts, approver calls in flight, approver
  threads);
* ``handle``: ``AgentSkills``, an agent's bound view (tier 1, catalogs, the skill tool,
  the tool grant, agent files), with ``loading`` (prepare, approve, load; sync and
  async) and ``selection`` (select for a task) as the parts it inherits;
* ``served``: what a handle serves (``PreparedLoad``, ``LoadedSkill``, tool descriptors);
* ``errors``: ``UnknownSkillError``.

``loader`` imports ``handle``, which imports ``selection``, ``loading`` and ``state``:
none imports back.
"""

__all__: list[str] = []
