"""After ``mkdocs build``: every public name has its entry in the built API reference.

Run by ``tox -e docs`` (and so by ``.ci/run``) once the site is built into ``site/``: a
name in the ``__all__`` of ``skillguard``, ``skillguard.agents``, ``skillguard.audit``,
``skillguard.mcp`` or ``skillguard.testing`` that the reference page does not carry (an
anchor ``id="<area>.<name>"``, as mkdocstrings writes one per documented object) fails
the build, naming it.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"

AREAS = (
    "skillguard",
    "skillguard.agents",
    "skillguard.audit",
    "skillguard.mcp",
    "skillguard.testing",
)


def public_names(area: str) -> list[str]:
    """The ``__all__`` of *area*, read from its source (no import: the docs build needs
    none of the optional extras, such as the MCP SDK)."""
    source = SRC.joinpath(*area.split("."), "__init__.py")
    for node in ast.parse(source.read_text(encoding="utf-8")).body:
        if (
            isinstance(node, (ast.Assign, ast.AnnAssign))
            and any(
                isinstance(target, ast.Name) and target.id == "__all__"
                for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
            )
            and node.value is not None
        ):
            names = ast.literal_eval(node.value)
            assert isinstance(names, list), area
            return [str(name) for name in names]
    raise SystemExit(f"docs: {source} has no __all__")


def missing_names(page: str) -> list[str]:
    """Every public name whose anchor *page* lacks, as ``area.name``."""
    return [
        f"{area}.{name}"
        for area in AREAS
        for name in public_names(area)
        if f'id="{area}.{name}"' not in page
    ]


def main(argv: list[str]) -> int:
    site = Path(argv[1]) if len(argv) > 1 else Path("site")
    page = (site / "reference" / "api" / "index.html").read_text(encoding="utf-8")
    missing = missing_names(page)
    for name in missing:
        sys.stderr.write(f"docs: {name} is public but not in the API reference\n")
    if not missing:
        sys.stdout.write(f"docs: every public name of {', '.join(AREAS)} is in the reference\n")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
