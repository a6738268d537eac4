"""skillguard: a fail-secure loader for Agent Skills and agent definition files.

Everything public is re-exported here; the modules behind it are private. See
README.md for the API, threat-model.md for what it defends against.
"""

from __future__ import annotations

from ._errors import (
    MalformedSkillError,
    SkillContainmentError,
    SkillError,
    SkillInputError,
    SkillNotFoundError,
    SkillUsageError,
)
from ._limits import Limits
from ._model import FrozenMap, Profile, Skill, SkillWarning, Step, YamlValue
from ._parse import is_valid_name, parse_skill

__version__ = "0.1.0"

__all__ = [
    "FrozenMap",
    "Limits",
    "MalformedSkillError",
    "Profile",
    "Skill",
    "SkillContainmentError",
    "SkillError",
    "SkillInputError",
    "SkillNotFoundError",
    "SkillUsageError",
    "SkillWarning",
    "Step",
    "YamlValue",
    "__version__",
    "is_valid_name",
    "parse_skill",
]
