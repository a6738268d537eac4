"""skillguard: a fail-secure loader for Agent Skills and agent definition files.

The public API, by area (each name has one home; the modules behind them are private):

* ``skillguard``: the skill loader. Parsing (``parse_skill``), discovery, the policy, the
  approval gate and trust store, the swarm facade (``Loader``, ``AgentSkills``), what it
  serves (catalog, activation text, the skill tool, selection) and the error tree;
* ``skillguard.agents``: agent definition files (parse, resolve, compose, the gate);
* ``skillguard.audit``: the audit log, its verification, summaries and HTML report;
* ``skillguard.testing``: Hypothesis strategies for hosts that fuzz their integration.

``import skillguard`` imports the skill loader only: the agent-file line, the audit
report and the command line are imported when a host uses them, and so is the swarm
facade (``Loader``, ``AgentSkills`` and what they serve), the first time a host names it,
since it brings the audit log and structlog. The docs (docs/, and README.md for a first
look) describe the API; threat-model.md says what it defends against.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skillguard._core.errors import (
    MalformedSkillError,
    SkillContainmentError,
    SkillError,
    SkillInputError,
    SkillNotFoundError,
    SkillUsageError,
)
from skillguard._core.limits import Limits
from skillguard._core.model import FrozenMap, Profile, Skill, SkillWarning, Step, YamlValue
from skillguard._core.version import __version__
from skillguard._fs.containment import Entry, Listing, SafeRoot, Skipped
from skillguard._fs.walk import openat2_available
from skillguard._skills.approval import (
    ApprovalDeniedError,
    ApprovalError,
    ApprovalRequest,
    ApprovalRequiredError,
    Decision,
    deny_all,
)
from skillguard._skills.console import ConsoleApprover
from skillguard._skills.discover import (
    Discovery,
    RootPath,
    Shadowed,
    SkillMeta,
    SkillRoots,
    SkippedEntry,
    discover,
)
from skillguard._skills.embedded import EmbeddedSkills
from skillguard._skills.names import is_valid_name
from skillguard._skills.parse import parse_skill
from skillguard._skills.policy import AgentGrant, AllowPolicy, PolicyError
from skillguard._skills.render import activation_text, catalog_json, catalog_xml
from skillguard._skills.roots import aide_roots, default_roots
from skillguard._skills.select import SelectedSkill, Selection, SelectionRegistry, SkippedSkill
from skillguard._skills.tool import ToolInfo
from skillguard._skills.truststore import Pin, TrustStore
from skillguard._skills.walk import Resource, Resources

if TYPE_CHECKING:
    from skillguard._swarm.errors import NotGrantedError, UnknownSkillError
    from skillguard._swarm.handle import AgentSkills
    from skillguard._swarm.loader import Loader
    from skillguard._swarm.served import LoadedSkill, PreparedLoad, ResourceSlot, ToolDescriptor

__all__ = [
    "AgentGrant",
    "AgentSkills",
    "AllowPolicy",
    "ApprovalDeniedError",
    "ApprovalError",
    "ApprovalRequest",
    "ApprovalRequiredError",
    "ConsoleApprover",
    "Decision",
    "Discovery",
    "EmbeddedSkills",
    "Entry",
    "FrozenMap",
    "Limits",
    "Listing",
    "LoadedSkill",
    "Loader",
    "MalformedSkillError",
    "NotGrantedError",
    "Pin",
    "PolicyError",
    "PreparedLoad",
    "Profile",
    "Resource",
    "ResourceSlot",
    "Resources",
    "RootPath",
    "SafeRoot",
    "SelectedSkill",
    "Selection",
    "SelectionRegistry",
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
    "SkippedSkill",
    "Step",
    "ToolDescriptor",
    "ToolInfo",
    "TrustStore",
    "UnknownSkillError",
    "YamlValue",
    "__version__",
    "activation_text",
    "aide_roots",
    "catalog_json",
    "catalog_xml",
    "default_roots",
    "deny_all",
    "discover",
    "is_valid_name",
    "openat2_available",
    "parse_skill",
]

# Names that lived here before the API was split by area: a clear pointer to their home
# instead of a bare AttributeError. They are not aliases (a name has one home).
_MOVED = {
    **dict.fromkeys(
        [
            "HARNESS_PRESETS",
            "AgentContext",
            "AgentDefinition",
            "AgentFinding",
            "AgentNotFoundError",
            "AgentTools",
            "AgentValidation",
            "ComposedAgent",
            "ComposeLimits",
            "KnowledgeFile",
            "ServedAgentContext",
            "TokenMap",
            "agent_error_code",
            "agent_tools",
            "compose",
            "load_agent_context",
            "parse_agent",
            "parse_token_map",
            "read_core_knowledge",
            "validate_agent_directory",
        ],
        "skillguard.agents",
    ),
    **dict.fromkeys(
        [
            "AuditError",
            "AuditLog",
            "Auditor",
            "Verification",
            "audit_summary",
            "verify_records",
            "LogCheck",
            "LogSetFinding",
            "LogSetVerification",
            "verify_logs",
            "render_audit_report",
        ],
        "skillguard.audit",
    ),
}


# The swarm facade, imported the first time one of its names is used (PEP 562): it brings
# the audit log and structlog, which a host or a command that only parses, discovers and
# validates skills (``skillguard validate``, ``skillguard --version``) does not need.
_SWARM = frozenset(
    {
        "AgentSkills",
        "LoadedSkill",
        "Loader",
        "NotGrantedError",
        "PreparedLoad",
        "ResourceSlot",
        "ToolDescriptor",
        "UnknownSkillError",
    }
)


def _import_swarm() -> None:
    from skillguard._swarm import errors, handle, loader, served  # noqa: PLC0415 - see _SWARM

    globals().update(
        AgentSkills=handle.AgentSkills,
        Loader=loader.Loader,
        UnknownSkillError=errors.UnknownSkillError,
        NotGrantedError=errors.NotGrantedError,
        LoadedSkill=served.LoadedSkill,
        PreparedLoad=served.PreparedLoad,
        ResourceSlot=served.ResourceSlot,
        ToolDescriptor=served.ToolDescriptor,
    )


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


# Outside TYPE_CHECKING: a type checker and an IDE see only the real names.
if not TYPE_CHECKING:

    def __getattr__(name: str) -> object:
        if name in _SWARM:
            _import_swarm()
            return globals()[name]
        home = _MOVED.get(name)
        if home is not None:
            msg = f"skillguard.{name} lives in {home}: from {home} import {name}"
            raise AttributeError(msg, name=name, obj=None)
        msg = f"module 'skillguard' has no attribute {name!r}"
        raise AttributeError(msg, name=name, obj=None)
