"""skillguard: a fail-secure loader for Agent Skills and agent definition files.

Everything public is re-exported here; the modules behind it are private. See
README.md for the API, threat-model.md for what it defends against.
"""

from __future__ import annotations

from ._agents import (
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
from ._approval import (
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
from ._audit import AuditError, AuditLog, Auditor, Verification, audit_summary, verify_records
from ._auditset import LogCheck, LogSetFinding, LogSetVerification, verify_logs
from ._discover import (
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
from ._embedded import EmbeddedSkills
from ._errors import (
    MalformedSkillError,
    SkillContainmentError,
    SkillError,
    SkillInputError,
    SkillNotFoundError,
    SkillUsageError,
)
from ._fs import Entry, Listing, SafeRoot, Skipped, openat2_available
from ._handle import AgentSkills
from ._limits import Limits
from ._loader import Loader, UnknownSkillError
from ._model import FrozenMap, Profile, Skill, SkillWarning, Step, YamlValue
from ._parse import is_valid_name, parse_skill
from ._policy import AgentGrant, AllowPolicy, PolicyError
from ._render import activation_text, catalog_json, catalog_xml
from ._report import render_audit_report
from ._select import SelectedSkill, Selection, SelectionRegistry, SkippedSkill
from ._served import LoadedSkill, PreparedLoad, ResourceSlot, ToolDescriptor
from ._tool import ToolInfo

__version__ = "0.1.0"

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
