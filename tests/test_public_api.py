"""The public namespace is exactly what is documented; everything else is private."""

from __future__ import annotations

import importlib
import pkgutil

import skillguard

PUBLIC = {
    "HARNESS_PRESETS",
    "AgentContext",
    "AgentDefinition",
    "AgentNotFoundError",
    "AgentTools",
    "KnowledgeFile",
    "agent_error_code",
    "agent_tools",
    "load_agent_context",
    "parse_agent",
    "read_core_knowledge",
    "ComposeLimits",
    "ComposedAgent",
    "TokenMap",
    "compose",
    "parse_token_map",
    "AgentFinding",
    "AgentValidation",
    "validate_agent_directory",
    "AgentGrant",
    "AgentSkills",
    "AllowPolicy",
    "ApprovalDeniedError",
    "ApprovalError",
    "ApprovalRequest",
    "ApprovalRequiredError",
    "AuditError",
    "AuditLog",
    "Auditor",
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
    "SkippedSkill",
    "Skipped",
    "SkippedEntry",
    "Step",
    "ToolDescriptor",
    "ToolInfo",
    "TrustStore",
    "UnknownSkillError",
    "Verification",
    "YamlValue",
    "__version__",
    "activation_text",
    "aide_roots",
    "audit_summary",
    "catalog_json",
    "catalog_xml",
    "default_roots",
    "deny_all",
    "discover",
    "is_valid_name",
    "openat2_available",
    "parse_skill",
    "render_audit_report",
    "verify_records",
    "LogCheck",
    "LogSetFinding",
    "LogSetVerification",
    "verify_logs",
}


def test_public_names_are_pinned() -> None:
    assert set(skillguard.__all__) == PUBLIC
    assert len(skillguard.__all__) == len(PUBLIC)
    for name in PUBLIC:
        assert hasattr(skillguard, name)


# The one public submodule: Hypothesis strategies for hosts, kept out of the namespace so
# that importing skillguard never needs Hypothesis.
PUBLIC_SUBMODULES = {"testing"}


def test_every_module_is_private_and_declares_all() -> None:
    for module in pkgutil.iter_modules(skillguard.__path__):
        assert module.name.startswith("_") or module.name in PUBLIC_SUBMODULES, module.name
        if module.name == "__main__":
            continue
        imported = importlib.import_module(f"skillguard.{module.name}")
        assert isinstance(imported.__all__, list), module.name
        for name in imported.__all__:
            assert hasattr(imported, name), (module.name, name)


def test_version_matches_package_metadata() -> None:
    from importlib.metadata import version

    assert skillguard.__version__ == version("skillguard")


def test_is_valid_name() -> None:
    assert skillguard.is_valid_name("pdf-tools")
    assert skillguard.is_valid_name("a" * 64)
    assert not skillguard.is_valid_name("a" * 65)
    assert not skillguard.is_valid_name("Pdf")
    assert not skillguard.is_valid_name("")
