"""The swarm facade: the ``Loader`` and the per-agent handle that make every decision.

* ``loader``: the ``Loader`` (configuration, sources, shared approval state);
* ``handle``: ``AgentSkills``, an agent's bound view (catalog, select, prepare, load);
* ``served``: what a handle serves (``PreparedLoad``, ``LoadedSkill``, tool descriptors).
"""

__all__: list[str] = []
