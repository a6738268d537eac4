"""The slowest inputs we can craft within the default caps, and how long each takes.

Usage::

    python benchmarks/bench_hostile.py [--rounds R] [--top N] [--backend c|pure]

Every input is built to make one stage work as hard as the caps allow (256 KiB file,
32 KiB frontmatter, depth 8, 4,096 nodes, 8 KiB scalars): long lines, many ``\\n---x``
near-fences, a fence just past the cap, deep flow nesting, many keys, maximal scalars,
CR-only line ends, non-ASCII everywhere, tabs and escapes in quoted strings, blank
lines before a block scalar, and, for the policy file (1 MiB, 200,000 nodes), the
largest policies that fit. Each runs ``parse_skill`` (or ``AllowPolicy.from_yaml``)
R rounds, interleaved; the best round counts. The report lists the slowest first
with the outcome (accepted, or the refusal code). The goal is that no SKILL.md input
takes over 50 ms; policies are the operator's own file, read once, and are reported
apart.
"""

from __future__ import annotations

import argparse
import gc
import time
from typing import TYPE_CHECKING

from skillguard import Limits, MalformedSkillError, PolicyError
from skillguard._skills.parse import parse_skill_with
from skillguard._skills.policy import POLICY_LIMITS, parse_policy_with

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
    }


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--top", type=int, default=10)
    parser.add_argument("--backend", choices=["c", "pure"], default="c")
    args = parser.parse_args()

    runners: dict[str, tuple[Callable[[], str], int]] = {}
    for name, raw in skill_inputs().items():
        assert len(raw) <= FILE, name
        runners[name] = (_skill_runner(raw, args.backend), len(raw))
    policies = {
        name: (_policy_runner(raw, args.backend), len(raw)) for name, raw in policy_inputs().items()
    }
    runners.update(policies)

    best = dict.fromkeys(runners, float("inf"))
    outcome: dict[str, str] = {}
    gc.disable()  # a collection in one round would be charged to whichever input ran
    try:
        for _ in range(args.rounds):
            for name, (run, _size) in runners.items():
                start = time.perf_counter()
                outcome[name] = run()
                best[name] = min(best[name], time.perf_counter() - start)
            gc.collect()
    finally:
        gc.enable()

    print(f"{len(runners)} hostile inputs, {args.backend} backend, best of {args.rounds} rounds")
    for title, names in (
        ("SKILL.md (parse_skill)", [n for n in runners if n not in policies]),
        ("policy file (AllowPolicy.from_yaml)", list(policies)),
    ):
        ranked = sorted(names, key=best.__getitem__, reverse=True)
        print(f"\n{title}: slowest first")
        for name in ranked[: args.top]:
            size = runners[name][1]
            print(
                f"  {best[name] * 1000:8.2f} ms  {size / 1024:7.1f} KiB  {outcome[name]:<22} {name}"
            )
    slowest = max((n for n in runners if n not in policies), key=best.__getitem__)
    verdict = "within" if best[slowest] * 1000 <= GOAL_MS else "OVER"
    print(
        f"\nslowest SKILL.md input: {best[slowest] * 1000:.2f} ms ({slowest}), "
        f"{verdict} the {GOAL_MS:.0f} ms goal"
    )


if __name__ == "__main__":
    main()
