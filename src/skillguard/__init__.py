"""skillguard: a fail-secure loader for Agent Skills and agent definition files.

Everything public is re-exported here; the modules behind it are private. See
README.md for the API, threat-model.md for what it defends against.
"""

from __future__ import annotations

from skillguard._agents import (
    HARNESS_PRESETS,
    AgentContext,
    AgentDefinition,
    AgentFinding,
    AgentNotFoundError,
    AgentTools,
    AgentValidation,
    ComposedAgent,
    ComposeLimits,
    KnowledgeFile,
    ServedAgentContext,
    TokenMap,
    agent_error_code,
    agent_tools,
    compose,
    load_agent_context,
    parse_agent,
    parse_token_map,
    read_core_knowledge,
    validate_agent_directory,
)
from skillguard._audit.log import (
    AuditError,
    AuditLog,
    Auditor,
    Verification,
    audit_summary,
    verify_records,
)
from skillguard._audit.logset import LogCheck, LogSetFinding, LogSetVerification, verify_logs
from skillguard._audit.report import render_audit_report
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
from skillguard._fs.containment import Entry, Listing, SafeRoot, Skipped, openat2_available
from skillguard._skills.approval import (
    ApprovalDeniedError,
    ApprovalError,
    ApprovalRequest,
    ApprovalRequiredError,
    ConsoleApprover,
    Decision,
    Pin,
    TrustStore,
    deny_all,
)
from skillguard._skills.discover import (
    Discovery,
    Resource,
    Resources,
    RootPath,
    Shadowed,
    SkillMeta,
    SkillRoots,
    SkippedEntry,
    aide_roots,
    default_roots,
    discover,
)
from skillguard._skills.embedded import EmbeddedSkills
from skillguard._skills.parse import is_valid_name, parse_skill
from skillguard._skills.policy import AgentGrant, AllowPolicy, PolicyError
from skillguard._skills.render import activation_text, catalog_json, catalog_xml
from skillguard._skills.select import SelectedSkill, Selection, SelectionRegistry, SkippedSkill
from skillguard._skills.tool import ToolInfo
from skillguard._swarm.handle import AgentSkills
from skillguard._swarm.loader import Loader, UnknownSkillError
from skillguard._swarm.served import LoadedSkill, PreparedLoad, ResourceSlot, ToolDescriptor

__all__ = [
    "HARNESS_PRESETS",
    "AgentContext",
    "AgentDefinition",
    "AgentFinding",
    "AgentGrant",
    "AgentNotFoundError",
    "AgentSkills",
    "AgentTools",
    "AgentValidation",
    "AllowPolicy",
    "ApprovalDeniedError",
    "ApprovalError",
    "ApprovalRequest",
    "ApprovalRequiredError",
    "AuditError",
    "AuditLog",
    "Auditor",
    "ComposeLimits",
    "ComposedAgent",
    "ConsoleApprover",
    "Decision",
    "Discovery",
    "EmbeddedSkills",
    "Entry",
    "FrozenMap",
    "KnowledgeFile",
    "Limits",
    "Listing",
    "LoadedSkill",
    "Loader",
    "LogCheck",
    "LogSetFinding",
    "LogSetVerification",
    "MalformedSkillError",
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
    "ServedAgentContext",
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
    "TokenMap",
    "ToolDescriptor",
    "ToolInfo",
    "TrustStore",
    "UnknownSkillError",
    "Verification",
    "YamlValue",
    "__version__",
    "activation_text",
    "agent_error_code",
    "agent_tools",
    "aide_roots",
    "audit_summary",
    "catalog_json",
    "catalog_xml",
    "compose",
    "default_roots",
    "deny_all",
    "discover",
    "is_valid_name",
    "load_agent_context",
    "openat2_available",
    "parse_agent",
    "parse_skill",
    "parse_token_map",
    "read_core_knowledge",
    "render_audit_report",
    "validate_agent_directory",
    "verify_logs",
    "verify_records",
]
