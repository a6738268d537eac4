"""The public namespace is exactly what is documented; everything else is private."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

import skillguard
import skillguard.agents
import skillguard.audit

if TYPE_CHECKING:
    import types

# The skill loader: parsing, discovery, policy, approval, the swarm facade, errors.
PUBLIC = {
    "__version__",
    "activation_text",
    "AgentGrant",
    "AgentSkills",
    "aide_roots",
    "AllowPolicy",
    "ApprovalDeniedError",
    "ApprovalError",
    "ApprovalRequest",
    "ApprovalRequiredError",
    "catalog_json",
    "catalog_xml",
    "ConsoleApprover",
    "Decision",
    "default_roots",
    "deny_all",
    "discover",
    "Discovery",
    "EmbeddedSkills",
    "Entry",
    "FrozenMap",
    "is_valid_name",
    "Limits",
    "Listing",
    "LoadedSkill",
    "Loader",
    "MalformedSkillError",
    "openat2_available",
    "parse_skill",
    "Pin",
    "PolicyError",
    "PreparedLoad",
    "Profile",
    "Resource",
    "Resources",
    "ResourceSlot",
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
    "NotGrantedError",
    "YamlValue",
}

# Agent definition files.
PUBLIC_AGENTS = {
    "agent_error_code",
    "agent_tools",
    "AgentContext",
    "AgentDefinition",
    "AgentFinding",
    "AgentNotFoundError",
    "AgentTools",
    "AgentValidation",
    "compose",
    "ComposedAgent",
    "ComposeLimits",
    "HARNESS_PRESETS",
    "KnowledgeFile",
    "load_agent_context",
    "parse_agent",
    "parse_token_map",
    "read_core_knowledge",
    "ServedAgentContext",
    "TokenMap",
    "validate_agent_directory",
    # agent install (seed 001's delivery)
    "check_install",
    "install_plan",
    "InstallFinding",
    "InstallPlan",
    "InstallReport",
    "plan_install",
    "uninstall",
}

# The audit log, its verification and report.
PUBLIC_AUDIT = {
    "audit_summary",
    "AuditError",
    "AuditLog",
    "Auditor",
    "LogCheck",
    "LogSetFinding",
    "LogSetVerification",
    "render_audit_report",
    "Verification",
    "verify_logs",
    "verify_records",
}


# The MCP server (the optional extra skillguard[mcp]).
PUBLIC_MCP = {"build_server", "elicit", "serve_stdio"}


def test_the_mcp_names_are_pinned() -> None:
    mcp = importlib.import_module("skillguard.mcp")
    assert set(mcp.__all__) == PUBLIC_MCP
    assert len(mcp.__all__) == len(PUBLIC_MCP)
    assert not PUBLIC_MCP & (PUBLIC | PUBLIC_AGENTS | PUBLIC_AUDIT)
    assert "skillguard.mcp" not in _modules_after("import skillguard")
    assert "mcp" not in _modules_after("import skillguard")


@pytest.mark.parametrize(
    ("module", "names"),
    [
        (skillguard, PUBLIC),
        (skillguard.agents, PUBLIC_AGENTS),
        (skillguard.audit, PUBLIC_AUDIT),
    ],
    ids=["skillguard", "skillguard.agents", "skillguard.audit"],
)
def test_public_names_are_pinned(module: types.ModuleType, names: set[str]) -> None:
    assert set(module.__all__) == names
    assert len(module.__all__) == len(names)
    for name in names:
        assert hasattr(module, name)


def test_a_name_has_one_home() -> None:
    assert not PUBLIC & PUBLIC_AGENTS
    assert not PUBLIC & PUBLIC_AUDIT
    assert not PUBLIC_AGENTS & PUBLIC_AUDIT


def test_a_moved_name_says_where_it_lives() -> None:
    with pytest.raises(AttributeError, match=r"from skillguard\.agents import parse_agent"):
        skillguard.parse_agent  # type: ignore[attr-defined]  # noqa: B018
    with pytest.raises(AttributeError, match=r"from skillguard\.audit import AuditLog"):
        skillguard.AuditLog  # type: ignore[attr-defined]  # noqa: B018
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        skillguard.nothing  # type: ignore[attr-defined]  # noqa: B018


# The public submodules: the areas of the API, and Hypothesis strategies for hosts (kept
# out of the namespace so that importing skillguard never needs Hypothesis).
PUBLIC_SUBMODULES = {"agents", "audit", "mcp", "testing"}


def test_every_module_is_private_and_declares_all() -> None:
    for module in pkgutil.walk_packages(skillguard.__path__, "skillguard."):
        parts = module.name.split(".")[1:]
        assert parts[0].startswith("_") or parts[0] in PUBLIC_SUBMODULES, module.name
        if module.name == "skillguard.__main__":
            continue
        imported = importlib.import_module(module.name)
        assert isinstance(imported.__all__, list), module.name
        for name in imported.__all__:
            assert hasattr(imported, name), (module.name, name)


def _modules_after(statement: str) -> set[str]:
    code = f"import sys; {statement}; print(' '.join(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    return set(out.split())


def test_import_skillguard_loads_the_skill_line_only() -> None:
    loaded = _modules_after("import skillguard")
    assert not {m for m in loaded if m.startswith(("skillguard._agents", "skillguard.agents"))}
    assert not {m for m in loaded if m.startswith("skillguard._cli")}
    assert not {m for m in loaded if m.startswith("skillguard._audit.report")}
    assert "skillguard.audit" not in loaded
    assert "hypothesis" not in loaded
    # The swarm facade (and the audit log and structlog it brings) waits for its first use.
    assert not {m for m in loaded if m.startswith(("skillguard._swarm", "skillguard._audit"))}
    assert "structlog" not in loaded
    assert "skillguard._skills.parse" in loaded
    # The check can fail: the areas do load what they are for.
    assert "skillguard._agents.gate" in _modules_after("import skillguard.agents")
    assert "skillguard._audit.report" in _modules_after("import skillguard.audit")
    assert "skillguard._swarm.loader" in _modules_after("from skillguard import Loader")


def test_the_swarm_names_are_the_swarm_modules_own() -> None:
    from skillguard._swarm import errors, handle, loader, served

    assert skillguard.Loader is loader.Loader
    assert skillguard.UnknownSkillError is errors.UnknownSkillError
    assert skillguard.NotGrantedError is errors.NotGrantedError
    assert skillguard.AgentSkills is handle.AgentSkills
    assert skillguard.PreparedLoad is served.PreparedLoad
    assert set(skillguard.__all__) <= set(dir(skillguard))


def test_version_matches_package_metadata() -> None:
    from importlib.metadata import version

    assert skillguard.__version__ == version("skillguard")


def test_is_valid_name() -> None:
    assert skillguard.is_valid_name("pdf-tools")
    assert skillguard.is_valid_name("a" * 64)
    assert not skillguard.is_valid_name("a" * 65)
    assert not skillguard.is_valid_name("Pdf")
    assert not skillguard.is_valid_name("")
