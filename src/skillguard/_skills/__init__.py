"""The skill line: from bytes to what an agent is served.

* ``parse``: ``SKILL.md`` bytes in, a frozen ``Skill`` or ``MalformedSkillError`` out;
* ``discover`` and ``embedded``: where skills come from (workspace roots, the host's own);
* ``snapshot``: a skill folder read once and bound by one digest;
* ``approval``: approval requests, decisions and approvers;
* ``console``: what a human at a terminal is shown and asked (``ConsoleApprover``);
* ``truststore``: pinned approvals (``TrustStore``, ``Pin``, ``PinningApprover``);
* ``policy``: the closed allow-set per agent;
* ``select``: choosing skills for a task (never a grant);
* ``render`` and ``tool``: the catalog, the activation text and the skill tool.
"""

__all__: list[str] = []
