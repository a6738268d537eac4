"""Agent file throughput: skillguard's hardened pipeline against PyYAML, side by side.

Usage::

    python benchmarks/bench_agents.py [--count N] [--rounds R] [--dir AGENTS_ROOT]

Every contestant reads and parses the same agent files (generated with a fixed seed in
the shape of Claude Code subagents, or every ``*.md`` under ``--dir`` that all
contestants accept), several rounds each, interleaved; the best round counts:

* ``skillguard``: ``SafeRoot.read_file`` from a held root, then ``parse_agent`` with
  every check on (fences, the restricted YAML composer, character rules, sections).
* ``skillguard-parse``: ``parse_agent`` alone, on bytes already in memory.
* ``pyyaml``: ``Path.read_bytes``, a split on ``---`` and ``yaml.load`` with the
  libyaml ``CSafeLoader``: no containment, no caps, no checks, no sections (the
  ``bench`` extra installs PyYAML; skipped with a note when it is missing).
* ``pyyaml-parse``: the same on bytes already in memory.

Prints agent files/s for each and the ratios.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import skillguard
import skillguard.agents

if TYPE_CHECKING:
    from collections.abc import Callable

_WORDS = [
    "deploy",
    "review",
    "container",
    "pipeline",
    "image",
    "scan",
    "secret",
    "test",
    "build",
    "release",
    "root",
    "user",
]
_TOOLS = ["Read", "Write", "Edit", "Bash", "Glob", "Grep", "WebFetch", "Bash(git diff:*)"]


def _sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(words)).capitalize() + "."


def _agent(rng: random.Random, index: int) -> str:
    tools = ", ".join(rng.sample(_TOOLS, rng.randint(2, 6)))
    knowledge = "\n".join(f"- Read src/knowledge/k{rng.randint(0, 99)}.md" for _ in range(3))
    rules = "\n".join(f"{n}. {_sentence(rng, 8)}" for n in range(1, rng.randint(3, 9)))
    paragraphs = "\n\n".join(_sentence(rng, rng.randint(10, 40)) for _ in range(rng.randint(5, 30)))
    return (
        f"---\nname: agent-{index}\ndescription: {_sentence(rng, 20)}\ntools: {tools}\n"
        f"model: sonnet\ncolor: blue\n---\n\n## Persona\n\n{_sentence(rng, 30)}\n\n"
        f"## Core Knowledge\n\n{knowledge}\n\n## Workflow\n\n{paragraphs}\n\n"
        f"```yaml\n## not a heading\n```\n\n## Rules\n\n{rules}\n"
    )


def _pyyaml_loader() -> Callable[[bytes], Any] | None:
    try:
        import yaml
    except ImportError:
        return None
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    def parse(raw: bytes) -> Any:  # noqa: ANN401 - whatever PyYAML builds
        _, frontmatter, body = raw.decode("utf-8").split("---", 2)
        fields = yaml.load(frontmatter, Loader=loader)  # noqa: S506 - a SafeLoader
        return fields["name"], fields["description"], fields.get("tools"), body

    return parse


def _rate(run: Callable[[], int]) -> float:
    start = time.perf_counter()
    done = run()
    return done / (time.perf_counter() - start)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--dir", type=Path, help="a folder of real agent files (*.md)")
    options = parser.parse_args()
    pyyaml = _pyyaml_loader()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(options.dir) if options.dir else Path(tmp)
        if options.dir is None:
            rng = random.Random(9)
            for index in range(options.count):
                (root / f"agent-{index}.md").write_text(_agent(rng, index))
        names = sorted(str(p.relative_to(root)) for p in root.rglob("*.md") if p.is_file())
        blobs: dict[str, bytes] = {}
        for name in names:
            raw = (root / name).read_bytes()
            try:
                skillguard.agents.parse_agent(raw)
                if pyyaml is not None:
                    pyyaml(raw)
            except Exception:  # noqa: S112 - only files every contestant accepts count
                continue
            blobs[name] = raw
        names = sorted(blobs)
        safe_root = skillguard.SafeRoot(root)
        cap = skillguard.Limits().max_skill_bytes

        def guarded() -> int:
            for name in names:
                skillguard.agents.parse_agent(safe_root.read_file(name, cap=cap))
            return len(names)

        def guarded_parse() -> int:
            for raw in blobs.values():
                skillguard.agents.parse_agent(raw)
            return len(blobs)

        contestants: dict[str, Callable[[], int]] = {
            "skillguard": guarded,
            "skillguard-parse": guarded_parse,
        }
        if pyyaml is not None:
            parse = pyyaml

            def plain() -> int:
                for name in names:
                    parse((root / name).read_bytes())
                return len(names)

            def plain_parse() -> int:
                for raw in blobs.values():
                    parse(raw)
                return len(blobs)

            contestants["pyyaml"] = plain
            contestants["pyyaml-parse"] = plain_parse
        best = dict.fromkeys(contestants, 0.0)
        for _ in range(options.rounds):
            for label, run in contestants.items():
                best[label] = max(best[label], _rate(run))
        safe_root.close()
    print(f"{len(names)} agent files, best of {options.rounds} rounds")
    for label, rate in best.items():
        print(f"  {label:<17} {rate:>10,.0f} files/s")
    if pyyaml is None:
        print("  pyyaml            skipped: install the bench extra (PyYAML)")
        return 0
    print(f"  skillguard / pyyaml             {best['skillguard'] / best['pyyaml']:.2f}x")
    ratio = best["skillguard-parse"] / best["pyyaml-parse"]
    print(f"  skillguard-parse / pyyaml-parse {ratio:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
