"""The skill line: from bytes to what an agent is served.

* ``parse``: ``SKILL.md`` bytes in, a frozen ``Skill`` or ``MalformedSkillError`` out
  (``parse_skill``), or every independent error at once (``check_skill``);
* ``document``: the front half every frontmatter document shares (size, encoding,
  fences, the one YAML entry point) and the body rule;
* ``fields``: the Agent Skills field rules (and Claude Code's fields) under a profile;
* ``names``: what a skill may be called (``is_valid_name``);
* ``discover`` and ``embedded``: where skills come from (workspace roots, the host's own);
* ``roots``: the conventional roots (``default_roots``, ``aide_roots``);
* ``walk``: the bounded walks of untrusted folders (skill folders in a root, the files
  of a skill folder);
* ``snapshot``: a skill folder read once and bound by one digest;
* ``approval``: approval requests, decisions and approvers;
* ``console``: what a human at a terminal is shown and asked (``ConsoleApprover``);
* ``truststore``: pinned approvals (``TrustStore``, ``Pin``, ``PinningApprover``);
* ``policy``: the closed allow-set per agent;
* ``select``: choosing skills for a task (never a grant);
* ``render`` and ``tool``: the catalog, the activation text and the skill tool.
"""

__all__: list[str] = []
