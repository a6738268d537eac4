"""The slowest inputs we can craft within the default caps, and how long each takes.

Usage::

    python benchmarks/bench_hostile.py [--rounds R] [--top N] [--backend c|pure]

Every input is built to make one stage work as hard as the caps allow (256 KiB file,
32 KiB frontmatter, depth 8, 4,096 nodes, 8 KiB scalars): long lines, many ``\\n---x``
near-fences, a fence just past the cap, deep flow nesting, many keys, maximal scalars,
CR-only line ends, non-ASCII everywhere, tabs and escapes in quoted strings, blank
lines before a block scalar, and, for the policy file (1 MiB, 200,000 nodes), the
largest policies that fit.

Each parser gets the shapes that once cost time out of proportion to the input
(threat-model.md T140-T144), and the densest input of every kind of line it reads:
``parse_skill`` (a body, a description and metadata values of bidi marks that one
right-to-left letter allows; runs of joiners, selectors, emoji and flag tags),
``parse_agent`` (a heading or a ``Read`` line of blanks, fenced Rules and Core
Knowledge sections, and nothing but headings, items, continued items or directives),
``compose`` (an ``agent.md`` of ``{{``, of unclosed tokens, of includes; the composed
file is read back by ``parse_agent``) and ``AllowPolicy.from_yaml``.

Each input runs R rounds, interleaved; the best round counts, in CPU time of this
process (``time.process_time``), so that other work on a shared machine is not
charged to it. The report lists each parser's inputs slowest first, with the outcome
(accepted, or the refusal code), the time of a plain read of the same bytes from a
file, and the ratio to ``parse_skill`` of a benign SKILL.md of the same size (prose,
headings and lists). The goal: no SKILL.md, agent or composed input over 50 ms.
Policies are the operator's own file, read once, and are reported apart.
"""

from __future__ import annotations

import argparse
import gc
import json
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from skillguard import Limits, MalformedSkillError, PolicyError, SkillError, parse_skill
from skillguard._skills.parse import parse_skill_with
from skillguard._skills.policy import POLICY_LIMITS, parse_policy_with
from skillguard.agents import compose, parse_agent, parse_token_map

if TYPE_CHECKING:
    from collections.abc import Callable

LIMITS = Limits()
FILE = LIMITS.max_skill_bytes
FRONT = LIMITS.max_frontmatter_bytes
HEAD = "name: demo\ndescription: Does a thing.\n"
GOAL_MS = 50.0


def _skill(frontmatter: str, body: str = "") -> bytes:
    return f"---\n{frontmatter}---\n{body}".encode()


def _fill(unit: str, budget: int) -> str:
    """As many copies of *unit* as fit in *budget* bytes of UTF-8."""
    return unit * (budget // len(unit.encode()))


def _keys(count: int, value: str) -> str:
    return "".join(f"k{index}: {value}\n" for index in range(count))


def skill_inputs() -> dict[str, bytes]:
    body_room = FILE - FRONT - 16
    nested = "[" * 7 + "a" + "]" * 7  # depth 8 with the top mapping
    flow_keys = FRONT // (len(nested) + 10)
    return {
        # Fences and the body.
        "near-fences, no closing fence (256 KiB)": b"---\n" + b"\n---x" * ((FILE - 4) // 5),
        "near-fences then a fence past the cap": (
            b"---\n" + b"\n---x" * (FRONT // 5 + 10) + b"\n---\n"
        ),
        "fence lines of trailing blanks": b"---\n" + b"\n---" + b" " * (FILE - 10) + b"x",
        "no newline at all (256 KiB)": b"---" + b" " * (FILE - 4),
        "one 224 KiB body line": _skill(HEAD, "x" * body_room),
        "body of 224 KiB of newlines": _skill(HEAD, "\n" * body_room),
        "CR-only line ends everywhere": _skill(HEAD, _fill("line\r", body_room)).replace(
            b"\n", b"\r"
        ),
        "CRLF everywhere": _skill(HEAD, _fill("line\n", body_room * 5 // 6)).replace(
            b"\n", b"\r\n"
        ),
        "non-ASCII body (224 KiB of \u20ac)": _skill(HEAD, _fill("\u20ac", body_room)),
        "frontmatter one byte over the cap, then the fence": _skill(
            HEAD + "pad: " + "y" * (FRONT - len(HEAD) - 5) + "\n"
        ),
        # YAML at the caps.
        "4,096 nodes of one-key mappings": _skill(HEAD + _keys(2040, "v")),
        "4,097 nodes (refused at the last)": _skill(HEAD + _keys(2047, "v")),
        "depth 8 flow lists, repeated to the size cap": _skill(
            HEAD + _keys(min(flow_keys, 4096 // 9 - 1), nested)
        ),
        "deep flow nesting over the depth cap": _skill(HEAD + "x: " + "[" * (FRONT - 60) + "\n"),
        "one 8 KiB plain scalar per key, to the size cap": _skill(
            HEAD + _keys(3, "y" * (8 * 1024 - 16))
        ),
        "8 KiB double-quoted scalars of escapes": _skill(
            HEAD + _keys(3, '"' + "\\u00e9" * (8 * 1024 // 6 - 2) + '"')
        ),
        "8 KiB non-ASCII scalars (description)": _skill(
            "name: demo\ndescription: " + "\u00e9" * 1000 + "\n" + _keys(3, "\u00e9" * 2700)
        ),
        "tabs inside quoted strings, to the size cap": _skill(
            HEAD + _keys(FRONT // 60, "'" + "\t" * 40 + "'")
        ),
        "blank lines before block scalars, to the size cap": _skill(
            HEAD + _keys(3, "|\n" + "\n" * (8 * 1024 - 16) + "  x")
        ),
        "folded scalar of 8 KiB short lines": _skill(
            HEAD + "k: >\n" + _fill("  ab\n", 8 * 1024 - 8) + _keys(3, "|\n" + "  c\n" * 1500)
        ),
        "32 KiB of comment lines": _skill(HEAD + _fill("#\n", FRONT - 60)),
        "lines that nearly start a directive or end marker": _skill(
            HEAD + _keys(3, "|\n" + _fill("  ...x\n  %x\n", 8 * 1024 - 16))
        ),
        "flow mapping of 1,300 quoted keys": _skill(
            HEAD + "m: {" + ", ".join(f"'k{index}': v" for index in range(1300)) + "}\n"
        ),
        "metadata of 2,000 keys": _skill(
            HEAD + "metadata:\n" + _keys(2000, "v").replace("k", "  k")
        ),
        "syntax error at the end of 32 KiB": _skill(HEAD + _keys(1800, "v") + "x: [\n"),
        # The character rules (T141): bidi marks that one right-to-left letter allows.
        "body: one line of LRM marks, a Hebrew letter at its end": _skill(
            HEAD, _fill(LRM, body_room - 2) + HEBREW
        ),
        "body: 1 KiB lines of LRM marks, each ending in a letter": _skill(
            HEAD, _fill(LRM * 340 + HEBREW + "\n", body_room)
        ),
        "body: LRM between Latin letters, a Hebrew letter at the end": _skill(
            HEAD, _fill("x" + LRM, body_room - 2) + HEBREW
        ),
        "body: short lines of a Hebrew letter, a gap and a mark": _skill(
            HEAD, _fill(HEBREW + "xxxxxx" + LRM + "\n", body_room)
        ),
        "description of 1,023 LRM marks and a letter": _skill(
            f"name: demo\ndescription: {LRM * 1023}{HEBREW}\n"
        ),
        "three 8 KiB metadata values of LRM marks and a letter": _skill(
            HEAD + "metadata:\n" + _keys(3, LRM * 2700 + HEBREW).replace("k", "  k")
        ),
        "body: ZWNJ between Arabic letters": _skill(HEAD, _fill(ALEF + ZWNJ, body_room) + ALEF),
        "body: ZWNJ after viramas": _skill(HEAD, _fill("\u0915\u094d" + ZWNJ, body_room)),
        "body: emoji ZWJ sequences": _skill(HEAD, _fill("\U0001f468\u200d", body_room) + "x"),
        "body: variation selectors after symbols": _skill(HEAD, _fill("\u2764\ufe0f", body_room)),
        "body: subdivision flags": _skill(HEAD, _fill(FLAG, body_room)),
    }


# The characters of the character-rule inputs.
LRM = "\u200e"
HEBREW = "\u05d0"
ALEF = "\u0627"
ZWNJ = "\u200c"
FLAG = "\U0001f3f4\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f"
AGENT_HEAD = "name: demo\ndescription: Does a thing.\n"


def agent_inputs() -> dict[str, bytes]:
    room = FILE - 64

    def agent(body: str) -> bytes:
        return _skill(AGENT_HEAD, body)

    return {
        # The shapes that cost time out of proportion (T140).
        "heading line of 256 KiB of blanks": agent("## x" + " " * (room - 8) + "y\n"),
        "heading of blanks before a closing run": agent("## x" + " \t" * (room // 2 - 8) + "#y\n"),
        "Read line of 256 KiB of blanks": agent(
            "## Core Knowledge\nRead x" + " " * (room - 32) + "y\n"
        ),
        "fenced Rules section (256 KiB)": agent("## Rules\n" + _fill("```\n```\n", room)),
        "fenced Rules section with items": agent("## Rules\n" + _fill("```\n- a\n```\n", room)),
        "fenced Core Knowledge section": agent(
            "## Core Knowledge\n" + _fill("~~~\nRead a\n~~~\n", room)
        ),
        "fence of 128 KiB of backticks, lines of one fewer": agent(
            "## Rules\n" + "`" * (room // 2) + "\n" + "`" * (room // 2 - 16) + "x\n"
        ),
        # The densest lines of every kind.
        "nothing but H2 headings": agent(_fill("##\n", room)),
        "nothing but H1 headings": agent(_fill("#\n", room)),
        "H1 and H2 headings in turn": agent(_fill("#\n##\n", room)),
        "H2 headings titled Rules": agent(_fill("## Rules\n", room)),
        "nothing but H3 headings": agent(_fill("###\n", room)),
        "Rules of one-word items": agent("## Rules\n" + _fill("- a\n", room)),
        "Rules of items each continued": agent("## Rules\n" + _fill("- a\nb\n", room)),
        "Core Knowledge of Read directives": agent("## Core Knowledge\n" + _fill("Read a\n", room)),
        "Rules of items and fenced blocks in turn": agent(
            "## Rules\n" + _fill("- a\n```\n```\n", room)
        ),
        "H2 headings and fenced blocks in turn": agent(_fill("##\n```\n```\n", room)),
        "unclosed fence of near-closing lines": agent("## Rules\n```\n" + _fill("```x\n", room)),
        "body of newlines": agent("\n" * room),
        "body: one line of LRM marks, a Hebrew letter at its end": agent(
            _fill(LRM, room - 2) + HEBREW
        ),
        "description of 1,023 LRM marks and a letter": _skill(
            f"name: demo\ndescription: {LRM * 1023}{HEBREW}\n"
        ),
    }


def compose_inputs(root: Path) -> dict[str, Path]:
    """Agent folders for pi, each with the token map's one tool, written under *root*."""
    # The composed file (the frontmatter, then the body) is capped at 256 KiB too.
    room = FILE - 1024
    sections = {"s": "x\n"}
    bodies = {
        "agent.md of 256 KiB of {{": "{{" * (room // 2),
        "agent.md of unclosed tokens": _fill("{{TOOL:t", room),
        "agent.md of tokens split across lines": _fill("{{TOOL:\nt}}", room),
        "agent.md of lines of blanks after {{": _fill("{{" + " " * 1000 + "\n", room),
        "agent.md of 128 KiB of includes": _fill("{{SECTION:s}}", room // 2),
        "agent.md of tool tokens": _fill("{{TOOL:t}}", room // 2),
        "agent.md: a heading line of blanks": "## x" + " " * (room - 8) + "y\n",
        "agent.md: fenced Rules section": "## Rules\n" + _fill("```\n```\n", room),
        "agent.md: one line of LRM marks and a letter": _fill(LRM, room - 2) + HEBREW,
    }
    folders: dict[str, Path] = {}
    for index, (name, body) in enumerate(bodies.items()):
        folder = root / f"agent{index}"
        (folder / "pi").mkdir(parents=True)
        (folder / "agent.md").write_text(body, encoding="utf-8")
        front = {"name": "demo", "description": "Does a thing.", "tools": ["{{TOOL:t}}"]}
        (folder / "pi" / "frontmatter.json").write_text(json.dumps(front))
        for section, text in sections.items():
            (folder / "pi" / f"{section}.md").write_text(text)
        folders[name] = folder
    return folders


def policy_inputs() -> dict[str, bytes]:
    cap = POLICY_LIMITS.max_frontmatter_bytes
    agent = "  a{0}: {{skills: [s], tools: [Read], workspace: approve}}\n"
    agents = "agents:\n" + "".join(agent.format(i) for i in range(cap // (len(agent) + 4)))
    listed = "agents:\n  a:\n    skills:\n" + _fill("      - s\n", cap - 40)
    return {
        "policy: 1 MiB of agents": agents.encode(),
        "policy: one agent with 1 MiB of skills": listed.encode(),
        "policy: 1 MiB of comments": ("agents: {}\n" + _fill("#\n", cap - 20)).encode(),
    }


def _skill_runner(raw: bytes, backend: str) -> Callable[[], str]:
    def run() -> str:
        try:
            parse_skill_with(
                raw,
                expected_name=None,
                limits=None,
                profile="strict",
                backend=backend,  # type: ignore[arg-type]
            )
        except MalformedSkillError as exc:
            return exc.code
        return "accepted"

    return run


def _policy_runner(raw: bytes, backend: str) -> Callable[[], str]:
    def run() -> str:
        try:
            parse_policy_with(raw, backend=backend)  # type: ignore[arg-type]
        except PolicyError as exc:
            return exc.reason.rsplit("(", 1)[-1].rstrip(")")
        return "accepted"

    return run


def _agent_runner(raw: bytes) -> Callable[[], str]:
    def run() -> str:
        try:
            parse_agent(raw)
        except MalformedSkillError as exc:
            return exc.code
        return "accepted"

    return run


TOKEN_MAP = parse_token_map(
    json.dumps({"version": 1, "harnesses": ["pi"], "tools": {"t": {"pi": "task"}}}).encode()
)


def _compose_runner(folder: Path) -> Callable[[], str]:
    def run() -> str:
        try:
            compose(folder, "pi", token_map=TOKEN_MAP)
        except SkillError as exc:
            return exc.code
        return "accepted"

    return run


def benign_skill(size: int) -> bytes:
    """A SKILL.md of *size* bytes of ordinary prose, headings and lists."""
    block = (
        "## Usage\n\nRun the tool on each file of the project, then read its report. "
        "It lists what changed and why, one line per change.\n\n"
        "- Check the inputs first.\n- Keep the output small.\n\n"
    )
    head = f"---\n{HEAD}---\n"
    return (head + _fill(block, size - len(head))).encode()


def _best(run: Callable[[], object], rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.process_time()
        run()
        best = min(best, time.process_time() - start)
    return best


class Group:
    """One parser's inputs: a runner, the bytes read, and where they are on disk."""

    def __init__(self, title: str, *, goal: bool) -> None:
        self.title = title
        self.goal = goal
        self.runners: dict[str, tuple[Callable[[], str], bytes]] = {}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--top", type=int, default=10)
    parser.add_argument("--backend", choices=["c", "pure"], default="c")
    args = parser.parse_args()

    scratch = Path(tempfile.mkdtemp(prefix="bench-hostile-"))
    groups = [
        Group("SKILL.md (parse_skill)", goal=True),
        Group("agent file (parse_agent)", goal=True),
        Group("composed agent for pi (compose, then parse_agent)", goal=True),
        Group("policy file (AllowPolicy.from_yaml)", goal=False),
    ]
    for name, raw in skill_inputs().items():
        assert len(raw) <= FILE, name
        groups[0].runners[name] = (_skill_runner(raw, args.backend), raw)
    for name, raw in agent_inputs().items():
        assert len(raw) <= FILE, name
        groups[1].runners[name] = (_agent_runner(raw), raw)
    for name, folder in compose_inputs(scratch / "agents").items():
        raw = (folder / "agent.md").read_bytes()
        assert len(raw) <= FILE, name
        groups[2].runners[name] = (_compose_runner(folder), raw)
    for name, raw in policy_inputs().items():
        groups[3].runners[name] = (_policy_runner(raw, args.backend), raw)

    # The same bytes read from a file (the floor of anything that reads them), and
    # parse_skill of a benign SKILL.md of the same size.
    files: dict[str, Path] = {}
    for group_index, group in enumerate(groups):
        for index, (name, (_run, raw)) in enumerate(group.runners.items()):
            files[name] = scratch / f"input-{group_index}-{index}"
            files[name].write_bytes(raw)
    benign = {
        size: benign_skill(size)
        for size in {len(raw) for g in groups[:3] for _, raw in g.runners.values()}
    }

    best: dict[str, float] = {}
    outcome: dict[str, str] = {}
    gc.disable()  # a collection in one round would be charged to whichever input ran
    try:
        for _ in range(args.rounds):
            for group in groups:
                for name, (run, _raw) in group.runners.items():
                    start = time.process_time()
                    outcome[name] = run()
                    spent = time.process_time() - start
                    best[name] = min(best.get(name, float("inf")), spent)
            gc.collect()
        read = {name: _best(path.read_bytes, args.rounds) for name, path in files.items()}
        benign_time = {
            size: _best(lambda raw=raw: parse_skill(raw), args.rounds)  # type: ignore[misc]
            for size, raw in benign.items()
        }
    finally:
        gc.enable()

    total = sum(len(group.runners) for group in groups)
    print(f"{total} hostile inputs, {args.backend} backend, best of {args.rounds} rounds, CPU time")
    print("columns: time, size, outcome, plain read, x benign parse_skill of that size, input")
    worst: list[tuple[str, str, float, float]] = []
    for group in groups:
        ranked = sorted(group.runners, key=best.__getitem__, reverse=True)
        print(f"\n{group.title}: slowest first")
        for name in ranked[: args.top]:
            size = len(group.runners[name][1])
            ratio = (
                f"{best[name] / max(benign_time[size], 1e-9):7.0f}x"
                if size in benign_time
                else "      -"
            )
            print(
                f"  {best[name] * 1000:8.2f} ms  {size / 1024:7.1f} KiB  {outcome[name]:<22} "
                f"{read[name] * 1000:6.3f} ms  {ratio}  {name}"
            )
        if group.goal:
            slowest = ranked[0]
            size = len(group.runners[slowest][1])
            worst.append((group.title, slowest, best[slowest], benign_time.get(size, 0.0)))
    print()
    for title, name, spent, benign_spent in worst:
        verdict = "within" if spent * 1000 <= GOAL_MS else "OVER"
        print(
            f"slowest {title}: {spent * 1000:.2f} ms ({name}), {verdict} the {GOAL_MS:.0f} ms "
            f"goal; {spent / max(benign_spent, 1e-9):.0f}x parse_skill of a benign file of its size"
        )


if __name__ == "__main__":
    main()
