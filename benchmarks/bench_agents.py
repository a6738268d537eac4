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

``--install`` measures ``agent install`` instead (``--agents`` composable agent folders,
100 by default, and ``--skills`` skills with tokens, 200 by default, for ``pi``), in
files written per second, each round into a new folder:

* ``install``: ``plan_install`` (compose every agent, check and substitute every skill)
  then ``install_plan`` (judge, stage, commit all or nothing, the manifest).
* ``install-write``: ``install_plan`` alone, the plan already built.
* ``copy``: the same bytes written with ``Path.write_bytes`` (folders made as needed):
  no checks, no staging, no manifest, nothing synced.
* ``copy-fsync``: the same, each file synced (``install`` syncs each file it stages and
  each folder once, so that a crash leaves the old file or the new one, never an empty
  one): the cost of durability alone.
"""

from __future__ import annotations

import argparse
import os
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


_TOKEN_MAP = {
    "version": 1,
    "harnesses": ["pi", "claude"],
    "tools": {
        "bash": {"pi": "bash", "claude": "Bash"},
        "view": {"pi": "read", "claude": "Read"},
        "task": {"pi": "task", "claude": "Task"},
        "wait": {"pi": "wait_for_agents", "claude": None},
    },
    "paths": {"plugin_root": {"pi": "~/.pi/agent/npm/node_modules/cortex", "claude": "x"}},
    "agents": {"prefix": {"pi": "cortex:", "claude": ""}},
}


def _install_sources(root: Path, agents: int, skills: int) -> tuple[Path, Path, Any]:
    import json

    rng = random.Random(11)
    agents_dir = root / "agents"
    for index in range(agents):
        folder = agents_dir / f"agent-{index}"
        (folder / "pi").mkdir(parents=True)
        body = "\n\n".join(
            f"{_sentence(rng, 12)} Use {{{{TOOL:view}}}} then {{{{TOOL:wait}}}}." for _ in range(20)
        )
        (folder / "agent.md").write_text(f"# agent {index}\n\n{body}\n{{{{SECTION:extra}}}}\n")
        (folder / "pi" / "extra.md").write_text("See {{PATH:skills/s/SKILL.md}}.\n")
        front = {
            "name": f"cortex:agent-{index}",
            "description": _sentence(rng, 10),
            "tools": ["{{TOOL:bash}}", "{{TOOL:view}}", "{{TOOL:task}}"],
        }
        (folder / "pi" / "frontmatter.json").write_text(json.dumps(front))
    skills_dir = root / "skills"
    for index in range(skills):
        folder = skills_dir / f"skill-{index}"
        (folder / "scripts").mkdir(parents=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: skill-{index}\ndescription: {_sentence(rng, 10)}\n---\n"
            + "\n".join(f"{_sentence(rng, 12)} Run {{{{TOOL:bash}}}}." for _ in range(20))
            + "\n"
        )
        (folder / "scripts" / "run.sh").write_text("#!/bin/sh\necho hello\n")
    tokens = skillguard.agents.parse_token_map(json.dumps(_TOKEN_MAP).encode())
    return agents_dir, skills_dir, tokens


def _bench_install(options: argparse.Namespace) -> int:
    agents_api = skillguard.agents
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        agents_dir, skills_dir, tokens = _install_sources(root, options.agents, options.skills)

        def plan() -> skillguard.agents.InstallPlan:
            return agents_api.plan_install(
                agents_dir, "pi", token_map=tokens, skills_dir=skills_dir
            )

        built = plan()
        assert built.ok, built.findings
        count = len(built.items)
        rounds = iter(range(10**9))

        def install() -> int:
            report = agents_api.install_plan(plan(), root / f"dest-{next(rounds)}")
            assert report.ok
            return count

        def install_write() -> int:
            report = agents_api.install_plan(built, root / f"dest-{next(rounds)}")
            assert report.ok
            return count

        def copy() -> int:
            dest = root / f"copy-{next(rounds)}"
            for item in built.items:
                target = dest / item.path
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(item.data)
            return count

        def copy_synced() -> int:
            dest = root / f"copy-{next(rounds)}"
            for item in built.items:
                target = dest / item.path
                target.parent.mkdir(parents=True, exist_ok=True)
                with target.open("wb") as file:
                    file.write(item.data)
                    file.flush()
                    os.fsync(file.fileno())
            return count

        contestants: dict[str, Callable[[], int]] = {
            "install": install,
            "install-write": install_write,
            "copy": copy,
            "copy-fsync": copy_synced,
        }
        best = dict.fromkeys(contestants, 0.0)
        for _ in range(options.rounds):
            for label, run in contestants.items():
                best[label] = max(best[label], _rate(run))
    print(
        f"agent install: {options.agents} agents + {options.skills} skills = {count} files, "
        f"best of {options.rounds} rounds"
    )
    for label, rate in best.items():
        print(f"  {label:<14} {rate:>10,.0f} files/s")
    print(f"  install / copy        {best['install'] / best['copy']:.2f}x")
    print(f"  install-write / copy  {best['install-write'] / best['copy']:.2f}x")
    print(f"  install-write / copy-fsync  {best['install-write'] / best['copy-fsync']:.2f}x")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--dir", type=Path, help="a folder of real agent files (*.md)")
    parser.add_argument("--install", action="store_true", help="measure agent install")
    parser.add_argument("--agents", type=int, default=100, help="--install: agent folders")
    parser.add_argument("--skills", type=int, default=200, help="--install: skills")
    options = parser.parse_args()
    if options.install:
        return _bench_install(options)
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
