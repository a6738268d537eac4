"""``skillguard discover``: the skills of ordered roots, the shadowed ones, the skipped.

Everything printed that came from disk goes through ``_text.terminal_line`` first
(threat-model.md T13, T42); JSON is ASCII.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import attrs

from skillguard._core.text import terminal_line
from skillguard._fs.paths import display_path
from skillguard._skills.discover import discover
from skillguard._skills.roots import default_roots

if TYPE_CHECKING:
    import argparse
    from typing import TextIO

__all__ = ["run_discover"]

EXIT_OK = 0


def run_discover(args: argparse.Namespace, out: TextIO) -> int:
    roots = args.roots or default_roots(args.project)
    found = discover(
        roots,
        profile=args.profile,
        trusted_link_targets=tuple(args.trust_link_target),
        namespaces=args.namespaces,
    )
    summary = {
        "skills": len(found.skills),
        "shadowed": len(found.shadowed),
        "skipped": len(found.skipped),
    }
    if args.format == "json":
        document = {
            "roots": [display_path(str(root)) for root in roots],
            "skills": [
                {
                    "name": meta.name,
                    "description": meta.description,
                    "root": meta.root,
                    "location": display_path(meta.location),
                    "sha256": meta.sha256,
                    "size": meta.size,
                    "warnings": [w.as_dict() for w in meta.warnings],
                }
                for meta in found.skills
            ],
            "shadowed": [attrs.asdict(item) for item in found.shadowed],
            "skipped": [attrs.asdict(item) for item in found.skipped],
            "summary": summary,
        }
        out.write(json.dumps(document, indent=2, ensure_ascii=True) + "\n")
        return EXIT_OK
    for meta in found.skills:
        place = terminal_line(f"{meta.root}/{meta.location}".rstrip("/"))
        out.write(f"skill    {terminal_line(meta.name)}  {place}\n")
        out.writelines(f"    warning {w.code}: {terminal_line(w.message)}\n" for w in meta.warnings)
    for item in found.shadowed:
        place = terminal_line(f"{item.root}/{item.location}".rstrip("/"))
        winner = terminal_line(f"{item.by_root}/{item.by_location}".rstrip("/"))
        out.write(f"shadowed {terminal_line(item.name)}  {place}  (by {winner})\n")
    for entry in found.skipped:
        place = terminal_line(f"{entry.root}/{entry.path}".rstrip("/"))
        out.write(f"skipped  {place}: {entry.kind}/{entry.code}: {terminal_line(entry.reason)}\n")
    out.write(
        f"{summary['skills']} skills, {summary['shadowed']} shadowed, "
        f"{summary['skipped']} skipped\n"
    )
    return EXIT_OK
