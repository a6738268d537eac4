"""skillguard: a fail-secure loader for Agent Skills and agent definition files.

Everything public is re-exported here; the modules behind it are private. See
README.md for the API, threat-model.md for what it defends against.
"""

from __future__ import annotations

from ._discover import (
    Discovery,
    Resource,
    Resources,
    RootPath,
    Shadowed,
    SkillMeta,
    SkillRoots,
    SkippedEntry,
    default_roots,
    discover,
)
from ._errors import (
    MalformedSkillError,
    SkillContainmentError,
    SkillError,
    SkillInputError,
    SkillNotFoundError,
    SkillUsageError,
)
from ._fs import Entry, Listing, SafeRoot, Skipped, openat2_available
from ._limits import Limits
from ._model import FrozenMap, Profile, Skill, SkillWarning, Step, YamlValue
from ._parse import is_valid_name, parse_skill

__version__ = "0.1.0"

__all__ = [
    "Discovery",
    "Entry",
    "FrozenMap",
    "Limits",
    "Listing",
    "MalformedSkillError",
    "Profile",
    "Resource",
    "Resources",
    "RootPath",
    "SafeRoot",
    "Shadowed",
    "Skill",
    "SkillContainmentError",
    "SkillError",
    "SkillInputError",
    "SkillMeta",
    "SkillNotFoundError",
    "SkillRoots",
    "SkillUsageError",
    "SkillWarning",
    "Skipped",
    "SkippedEntry",
    "Step",
    "YamlValue",
    "__version__",
    "default_roots",
    "discover",
    "is_valid_name",
    "openat2_available",
    "parse_skill",
]
