"""What every fuzz target does inside its instrumentation hook: import every skillguard
module.

Only skillguard is instrumented, as it is imported: not the standard library, ruamel or
Hypothesis, so a target starts in seconds (``atheris.instrument_all()`` rewrote every
function loaded, and took minutes). skillguard imports its modules lazily, so every one
of them is imported inside the hook: a module first imported later would give libFuzzer
no coverage. A target loaded by the test suite (not as ``__main__``) instruments
nothing, and imports the same modules.
"""

import contextlib
import importlib
import pkgutil

# Modules the fuzz build cannot import or must not: skillguard.testing needs Hypothesis
# and skillguard.mcp the MCP SDK, which the fuzz build does not install (neither reads
# untrusted bytes of its own: both call the parsers the targets fuzz);
# skillguard.__main__ would run the command line.
LEFT_OUT = ("skillguard.testing", "skillguard.mcp", "skillguard.__main__")


def hook(main: bool) -> contextlib.AbstractContextManager[object]:
    """atheris's import hook for skillguard when the target runs as *main*, else none."""
    if not main:
        return contextlib.nullcontext()
    import atheris

    hooked: contextlib.AbstractContextManager[object] = atheris.instrument_imports(
        include=["skillguard"]
    )
    return hooked


def import_every_module() -> None:
    """Import every skillguard module but those ``LEFT_OUT`` (and their submodules).
    Called inside the hook: skillguard is first imported here or by the target's own
    imports above the call, never before the hook."""
    import skillguard

    # A package that cannot be imported (LEFT_OUT's) is not walked into: walk_packages
    # passes over its ImportError.
    for module in pkgutil.walk_packages(skillguard.__path__, "skillguard."):
        if not module.name.startswith(LEFT_OUT):
            importlib.import_module(module.name)
