"""Token substitution for composable agent directories (seed 001).

Rules (threat-model.md T100-T103). Tokens are substituted in a fixed order, each in one
pass over the text, so that a replacement is never scanned by the pass that made it:

1. ``{{SECTION:name}}``: ``name`` must be a slug (checked before any file is named,
   so ``{{SECTION:../x}}`` never reaches the file system), and the file must be in
   the harness folder. A section's own ``{{SECTION:}}`` is not expanded again: it is
   left over, and refused in step 4, so an include can never recurse.
2. ``{{TOOL:name}}``: through the token map for this harness. An unknown tool is an
   error; a ``null`` tool is an error unless the caller asked to drop such tokens
   (then a ``dropped_null_tool`` warning). In ``tools``, an entry that is exactly a
   TOOL token is resolved the same way, and a ``null`` one is omitted.
3. ``{{PATH:name}}``: through the token map; a name that is not in the map is a
   path, which must be relative (no ``..``, not absolute), joined onto the map's
   ``plugin_root`` for the harness when it has one (the map's contract), else kept.
   Steps 2 and 3 run in the order of the map's ``contract.substitution_order``.
4. Any ``{{`` left over, in the body or in a frontmatter value, is an error: a
   token split across lines, or never closed, is refused like an unknown one.

The composed text is counted while it grows, so ten thousand includes of one large
section are refused before they are built. Sans-IO: reading a section is the caller's
``replace`` callback.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

from skillguard._agents.tokenmap import BasePath, check_relative
from skillguard._core.errors import MalformedSkillError, safe_repr
from skillguard._core.model import SkillWarning

if TYPE_CHECKING:
    from collections.abc import Callable

    from skillguard._agents.tokenmap import TokenMap

__all__ = ["PATH_RE", "SECTION_RE", "TOOL_RE", "Resolver", "refuse_leftover", "substitute"]

SECTION_RE: Final = re.compile(r"\{\{SECTION:([^{}\n]*)\}\}")
TOOL_RE: Final = re.compile(r"\{\{TOOL:([^{}\n]*)\}\}")
PATH_RE: Final = re.compile(r"\{\{PATH:([^{}\n]*)\}\}")
# The path a relative {{PATH:}} is joined onto (the upstream contract's "PATH relative").
PLUGIN_ROOT: Final = "plugin_root"
# How much of a leftover token a refusal shows (safe_repr cuts it shorter).
_SHOWN_TOKEN: Final = 256


class _Builder:
    """Text built from pieces, refused as soon as it would pass the composed cap."""

    __slots__ = ("cap", "parts", "size")

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.parts: list[str] = []
        self.size = 0

    def add(self, piece: str) -> None:
        # A character is at most four bytes: only count exactly when it could matter.
        grown = self.size + (len(piece) if piece.isascii() else len(piece.encode("utf-8")))
        if grown > self.cap:
            raise MalformedSkillError(
                "composed_too_large", f"the composed text is larger than {self.cap} bytes"
            )
        self.parts.append(piece)
        self.size = grown

    def text(self) -> str:
        return "".join(self.parts)


def substitute(text: str, pattern: re.Pattern[str], replace: Callable[[str], str], cap: int) -> str:
    """One pass of *pattern* over *text*: replacements are never scanned again."""
    out = _Builder(cap)
    last = 0
    for match in pattern.finditer(text):
        out.add(text[last : match.start()])
        out.add(replace(match.group(1)))
        last = match.end()
    out.add(text[last:])
    return out.text()


class Resolver:
    """The token rules for one harness (see the module docstring)."""

    def __init__(self, token_map: TokenMap, harness: str, *, drop_null_tools: bool) -> None:
        self.map = token_map
        self.harness = harness
        self.drop_null_tools = drop_null_tools
        self.warnings: list[SkillWarning] = []

    def tool(self, name: str) -> str | None:
        entry = self.map.tools.get(name)
        if entry is None or self.harness not in entry:
            raise MalformedSkillError(
                "unknown_tool",
                f"{{{{TOOL:{safe_repr(name)[1:-1]}}}}}: the token map has no tool "
                f"{safe_repr(name)} for the harness {self.harness}",
            )
        return entry[self.harness]

    def prose_tool(self, name: str) -> str:
        resolved = self.tool(name)
        if resolved is not None:
            return resolved
        shown = safe_repr(name)
        if not self.drop_null_tools:
            raise MalformedSkillError(
                "null_tool",
                f"the tool {shown} does not exist for {self.harness} (null in the token "
                "map), and the body names it",
            )
        self.warnings.append(
            SkillWarning(
                "dropped_null_tool", f"the tool {shown} does not exist for {self.harness}: dropped"
            )
        )
        return ""

    def path(self, name: str) -> str:
        entry = self.map.paths.get(name)
        if entry is None:
            check_relative(name, "the unmapped path token")
            root = self.map.paths.get(PLUGIN_ROOT, {}).get(self.harness)
            if root is None:
                return name
            return f"{self._resolved(root).rstrip('/')}/{name}"
        target = entry.get(self.harness)
        if target is None:
            raise MalformedSkillError(
                "unknown_path",
                f"the token map has no path {safe_repr(name)} for the harness {self.harness}",
            )
        return self._resolved(target)

    def _resolved(self, target: str | BasePath) -> str:
        if isinstance(target, BasePath):
            # _tokenmap checked that the base is a plain path for this harness.
            return f"{str(self.map.paths[target.base][self.harness]).rstrip('/')}/{target.relative}"
        return target


def refuse_leftover(text: str, what: str) -> None:
    """Refuse any "{{" left after the substitutions: every well-formed token on one
    line was resolved or refused, so what is left is a typo, a section's own token, or
    a token split across lines (``{{TOOL:\ntask}}``), which no pass resolves and a
    harness might (T103, T143). One search, never a scan of the line from every "{{"
    (T142)."""
    start = text.find("{{")
    if start < 0:
        return
    # Name the token up to its "}}" or its line's end, as far as safe_repr shows.
    shown = text[start : start + _SHOWN_TOKEN]
    shown = shown.partition("\n")[0]
    close = shown.find("}}", 2)
    if close >= 0:
        shown = shown[: close + 2]
    raise MalformedSkillError(
        "leftover_token", f"{what}: the token {safe_repr(shown)} was not resolved"
    )
