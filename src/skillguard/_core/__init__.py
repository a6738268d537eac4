"""The core floor: values and rules every other floor shares, with no I/O.

* ``errors``: the one error tree (``SkillError`` and its branches) and their codes;
* ``limits``: the frozen ``Limits`` and their defaults;
* ``model``: frozen values that cross the boundary (``Skill``, ``FrozenMap``, ...);
* ``text``: the character rules (what hides or reorders text) and escaping;
* ``strict_json`` and ``strict_yaml``: the one strict entry point for each format, and
  ``yaml_errors``: a YAML parser's problem in words an author can act on;
* ``tool_rules``: how ``allowed-tools`` is split and when one rule covers another;
* ``version``: the package version.

Nothing here imports from another floor.
"""

__all__: list[str] = []
