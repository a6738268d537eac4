"""Every ```python example of README.md and of the docs (docs/**/*.md) runs, as written.

The examples are extracted from README.md and the docs pages, never copied, so a changed
example is the example tested. They are fragments: they lean on names a reader already
has (a policy, an approver, a tool call from a model SDK) and on files (a skill folder, a
policy file).
The prelude below gives each such name a real object, and builds a world of real files
beneath ``tmp_path``, which is the working folder while an example runs. Each example:

* runs in a fresh copy of the prelude's names (every test builds its own world), with
  top-level ``await`` allowed;
* has each ``name=...`` placeholder (a literal Ellipsis given as a keyword argument)
  replaced by the prelude's object of that name;
* has every function it defines named ``test_*`` called afterwards (a Hypothesis test
  with a few examples).

An example that uses a name nobody supplies fails, and names it, so a new example cannot
go untested by accident. So does ``skillguard.<area>`` without an import of that area:
a fresh interpreter refuses it, whatever this test process happens to have imported.

The README's transcripts of cheap commands (``$ skillguard ...`` on the bundled
examples, nothing asked on a terminal) run too: their output must read as the README
shows it (a ``...`` line stands for any lines), with the exit status the README gives.
"""

from __future__ import annotations

import ast
import asyncio
import builtins
import contextlib
import inspect
import linecache
import os
import re
import secrets
import shlex
import shutil
import threading
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING, cast

import attrs
import pytest
from hypothesis import settings

import skillguard
import skillguard.audit

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
# README.md, then every page of the docs site: where the examples are.
PAGES = [README, *sorted((ROOT / "docs").rglob("*.md"))]
EXAMPLES = ROOT / "examples"


# -- the README's fenced blocks ------------------------------------------------------


@attrs.frozen
class Block:
    """One fenced block of README.md or a docs page: its language, the line of its first
    line of text, its text, and the page (a path from the repository's root)."""

    language: str
    line: int
    text: str
    page: str = "README.md"

    @property
    def title(self) -> str:
        """The example's name in test ids: its first line that is not an import."""
        for line in self.text.splitlines():
            if line.strip() and not line.startswith(("import ", "from ", "#")):
                return line.strip()[:72]
        return f"{self.page}:{self.line}"


def fenced_blocks(text: str, page: str = "README.md") -> list[Block]:
    blocks: list[Block] = []
    language: str | None = None
    start = 0
    body: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if language is None:
            if line.startswith("```"):
                language, start, body = line[3:].strip(), number + 1, []
        elif line == "```":
            blocks.append(Block(language, start, "".join(f"{part}\n" for part in body), page))
            language = None
        else:
            body.append(line)
    assert language is None, f"{page} ends inside a fenced block"
    return blocks


BLOCKS = [
    block
    for page in PAGES
    for block in fenced_blocks(page.read_text(encoding="utf-8"), str(page.relative_to(ROOT)))
]
PYTHON_BLOCKS = [block for block in BLOCKS if block.language == "python"]


def readme_yaml(first_line: str) -> str:
    """The docs' one ```yaml block that starts with *first_line*."""
    found = [b.text for b in BLOCKS if b.language == "yaml" and b.text.startswith(first_line)]
    assert len(found) == 1, f"the docs have {len(found)} yaml blocks starting {first_line!r}"
    return found[0]


# -- what an example leans on --------------------------------------------------------


class _Placeholders(ast.NodeTransformer):
    """``embedded=...`` becomes ``embedded=embedded``: the reader's object of that name."""

    def visit_keyword(self, node: ast.keyword) -> ast.keyword:
        self.generic_visit(node)
        value = node.value
        if node.arg is not None and isinstance(value, ast.Constant) and value.value is ...:
            node.value = ast.copy_location(ast.Name(id=node.arg, ctx=ast.Load()), value)
        return node


def free_names(tree: ast.Module) -> set[str]:
    """The names *tree* reads and never binds, builtins aside: what a reader supplies."""
    loaded: set[str] = set()
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (loaded if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound |= {alias.asname or alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return loaded - bound - set(dir(builtins))


def unimported_areas(tree: ast.Module) -> set[str]:
    """Each ``skillguard.X`` that *tree* reads where ``X`` is not a name of the top
    level and no import of ``skillguard.X`` in *tree* makes it one.

    The prelude's ``skillguard`` stands for ``import skillguard``, which imports the
    skill loader only: in a fresh interpreter ``skillguard.audit`` is an
    ``AttributeError`` until something imports ``skillguard.audit``.
    """
    imported: set[str] = set()
    for node in ast.walk(tree):
        modules = []
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            modules = [node.module]
        imported |= {m.split(".")[1] for m in modules if m.startswith("skillguard.")}
    used = {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "skillguard"
    }
    return used - set(skillguard.__all__) - imported


# The prelude's policy: the agents the examples bind (``planner`` for the loader,
# selection and the skill tool, ``orchestrator`` for an agent file behind the gate) and
# the one whose grant narrows an agent file's tools (``devops``).
PRELUDE_POLICY = b"""\
agents:
  planner:
    skills: [pdf-tools, code-review, release-notes, aide-arch-protocols]
    tools: [Read, Grep, "Bash(git diff:*)"]
    workspace: approve
  orchestrator:
    skills: [code-review]
    tools: [Read, Grep]
    workspace: approve
  devops:
    skills: [code-review]
    tools: [Read, Grep, "Bash(git diff:*)"]
"""

# A skill the selection example's registry names ("keywords: [debug, ...]").
AIDE_ARCH_PROTOCOLS = """\
---
name: aide-arch-protocols
description: How debuggers and editors talk to language tools (DAP, LSP, debugpy), and
  how to attach one to a running program.
---
# Debugging protocols

Start the program under debugpy, then attach the editor's DAP client to its port.
"""

# A Claude Code subagent that the agent gate example serves.
CODE_REVIEWER = """\
---
name: code-reviewer
description: Reviews a change for correctness, security and style. Use after a change.
tools: Read, Grep, Glob
model: sonnet
---

## Persona

You are a careful reviewer. You read the whole diff before you comment.

## Core Knowledge

- Read docs/review-checklist.md

## Rules

- Name the line, the problem and the fix.
- Approve nothing you did not run.
"""


def build_world(world: Path) -> None:
    """The files the examples name, beneath *world* (the working folder)."""
    skills = EXAMPLES / "skills"
    # parse_skill and SafeRoot read skills/pdf-tools; default_roots(".") finds the
    # workspace's .agents/skills; SkillRoots is given project/.agents/skills.
    for target in ("skills", ".agents/skills", "project/.agents/skills"):
        shutil.copytree(skills / "pdf-tools", world / target / "pdf-tools")
    shutil.copytree(skills / "release-notes", world / ".agents/skills/release-notes")
    # The application's own skills (embedded, trusted).
    shutil.copytree(skills / "code-review", world / "app/skills/code-review")
    (world / "app/skills/aide-arch-protocols").mkdir()
    (world / "app/skills/aide-arch-protocols/SKILL.md").write_text(AIDE_ARCH_PROTOCOLS)
    # The user's own skills (one shadowed by the project's) and agents, in the home
    # folder of this test.
    shutil.copytree(skills / "release-notes", world / "home/.agents/skills/release-notes")
    (world / "home/.claude/agents").mkdir(parents=True)
    # A repository with two Claude Code agents and their knowledge files.
    agents = world / "repo/.claude/agents"
    agents.mkdir(parents=True)
    shutil.copy(EXAMPLES / "agents/src/agents/devops-engineer.md", agents)
    (agents / "code-reviewer.md").write_text(CODE_REVIEWER)
    shutil.copytree(EXAMPLES / "agents/src/knowledge", world / "repo/src/knowledge")
    (world / "repo/docs").mkdir()
    (world / "repo/docs/review-checklist.md").write_text("- Does every change have a test?\n")
    # The operator's files, as the README shows them.
    (world / "policy.yaml").write_text(readme_yaml("agents:"))
    (world / "registry.yaml").write_text(readme_yaml("skills:"))
    (world / "audit.key").write_bytes(secrets.token_bytes(32))


def my_ui_approver(request: skillguard.ApprovalRequest) -> skillguard.Decision:
    """The reader's approval UI, answered by its human: yes to a skill folder whose
    every entry was taken, no to one with anything left out."""
    return skillguard.Decision(approved=not request.skipped, by="alice@example.org")


@attrs.frozen
class ToolCall:
    """A model's call of the ``skill`` tool as an SDK hands it over: the call's id and
    its arguments, a JSON string as the model wrote it."""

    id: str
    arguments: str


class MyApp:
    """The reader's application: it uses parsed skills, and serves the skills of a
    folder to one agent; a refusal is an answer, never a crash."""

    def use(self, skill: skillguard.Skill) -> str:
        return skillguard.activation_text(skill.name, skill.body, [])

    def serve_skills_from(self, folder: Path) -> list[str]:
        found = skillguard.discover([folder])
        policy = skillguard.AllowPolicy.from_mapping(
            {"agents": {"host": {"skills": list(found.names()), "workspace": "approve"}}}
        )
        texts = []
        with skillguard.Loader(policy, workspace=[folder], approver=my_ui_approver) as loader:
            agent = loader.bind("host")
            for name in found.names():
                try:
                    texts.append(agent.load(name).activation())
                except skillguard.SkillError:
                    continue  # refused: the host moves on
        return texts


@contextlib.contextmanager
def console_on_a_terminal(answer: str) -> Iterator[skillguard.ConsoleApprover]:
    """A ``ConsoleApprover`` on a real pseudo-terminal, whose human types *answer* each
    time a question shows (keys typed ahead answer nothing, T205)."""
    leader, follower = os.openpty()
    question = b"or deny [N]? "

    def human() -> None:
        # The terminal's other end is read while the approver writes (a pty holds a few
        # KiB, and a request longer than that would block on a reader nobody runs), and
        # answered once the question is on the screen.
        seen = b""
        with contextlib.suppress(OSError):  # EIO: the approver's end is closed
            while chunk := os.read(leader, 65536):
                seen = seen[-len(question) :] + chunk
                if question in seen:
                    os.write(leader, f"{answer}\n".encode())
                    seen = b""

    reader = threading.Thread(target=human, daemon=True)
    reader.start()
    try:
        with (
            open(follower, encoding="utf-8") as tty_in,
            open(os.dup(follower), "w", encoding="utf-8") as tty_out,
        ):
            yield skillguard.ConsoleApprover(tty_in, tty_out)
    finally:
        reader.join(timeout=60)
        os.close(leader)


@contextlib.contextmanager
def prelude(world: Path) -> Iterator[dict[str, object]]:
    """The names a README example leans on, each a real object of the world."""
    hmac_key = (world / "audit.key").read_bytes()
    policy = skillguard.AllowPolicy.from_yaml(PRELUDE_POLICY)
    store = skillguard.TrustStore(world / "trust.json")
    log = skillguard.audit.AuditLog(world / "audit.jsonl", key=hmac_key)
    embedded = skillguard.EmbeddedSkills.from_directory(world / "app/skills")
    workspace = skillguard.default_roots(world)
    with (
        console_on_a_terminal("y") as console,
        skillguard.Loader(
            policy,
            embedded=embedded,
            workspace=workspace,
            approver=store.approver(my_ui_approver),
            audit=log,
        ) as loader,
    ):
        yield {
            # What the README's "import skillguard" and "from pathlib import Path" gave.
            "skillguard": skillguard,
            "Path": Path,
            "my_ui_approver": my_ui_approver,
            "hmac_key": hmac_key,
            "policy": policy,
            "store": store,
            "console": console,
            "log": log,
            "repo": world / "repo",
            "raw_bytes": (world / "repo/.claude/agents/devops-engineer.md").read_bytes(),
            "embedded": embedded,
            "workspace": workspace,
            "planner": loader.bind("planner"),
            "call": ToolCall(id="call_Yq3D0f8uG2xWc1hJ5nKp7RtZ", arguments='{"name": "pdf-tools"}'),
            "task": "debug this Python script",
            "my_app": MyApp(),
        }
        # What the examples decided is on record, and the record is whole.
        with (world / "audit.jsonl").open("rb") as lines:
            verdict = skillguard.audit.verify_records(lines, key=hmac_key)
        assert verdict.intact, verdict.reason


# An example's own Hypothesis tests run a few examples each: the point is that the
# example runs; the fuzzing is done by the suites that own the strategies.
settings.register_profile("readme-outer", settings.default)
settings.register_profile("readme-examples", max_examples=5, database=None)


@contextlib.contextmanager
def few_examples() -> Iterator[None]:
    settings.load_profile("readme-examples")
    try:
        yield
    finally:
        settings.load_profile("readme-outer")


def run_example(block: Block, names: dict[str, object]) -> dict[str, object]:
    """Run *block* with *names*; fail, naming what is missing, when they are not enough.
    Returns the namespace the example leaves."""
    where = f"{block.page}:{block.line}"
    tree = _Placeholders().visit(ast.parse(block.text, filename=block.page))
    missing = free_names(tree) - names.keys()
    if missing:
        pytest.fail(
            f"{where}: the example uses {sorted(missing)}, which the prelude of "
            "tests/test_readme_examples.py does not supply: give each a real object there",
            pytrace=False,
        )
    areas = unimported_areas(tree)
    if areas:
        pytest.fail(
            f"{where}: the example reads {sorted(f'skillguard.{a}' for a in areas)}, which "
            "`import skillguard` does not give: import the area it lives in",
            pytrace=False,
        )
    ast.increment_lineno(tree, block.line - 1)  # tracebacks name the README's lines
    filename = str(ROOT / block.page)
    # The source of the example's functions, for tracebacks and for Hypothesis (which
    # reads a test's source for its database key): the block at its own lines and
    # nothing else of the page, whose Markdown the tokenizer cannot read past.
    lines = ["\n"] * (block.line - 1) + block.text.splitlines(keepends=True) + ["\n"]
    linecache.cache[filename] = (len("".join(lines)), None, lines, filename)
    code = compile(
        tree,
        filename,
        "exec",
        flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT,
        dont_inherit=True,
    )
    namespace = dict(names)
    tests = [
        node.name
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.name.startswith("test_")
    ]
    with few_examples():
        result = eval(code, namespace)  # noqa: S307 - the README's own example
        if inspect.iscoroutine(result):  # it awaits at the top level
            asyncio.run(result)
        for name in tests:
            test = namespace[name]
            assert callable(test)
            outcome = test()
            if inspect.iscoroutine(outcome):
                asyncio.run(outcome)
    return namespace


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    # The examples' relative paths, "~" and default_roots(".") all land in the world.
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("SKILLGUARD_USER_SKILLS", raising=False)
    monkeypatch.delenv("AIDE_SKILLS_ROOT", raising=False)
    build_world(tmp_path)
    return tmp_path


@pytest.mark.parametrize("block", PYTHON_BLOCKS, ids=[b.title for b in PYTHON_BLOCKS])
def test_readme_example_runs(block: Block, world: Path) -> None:
    with prelude(world) as names:
        run_example(block, names)


def test_the_readme_has_python_examples() -> None:
    # A change to the fence syntax must not leave this test with nothing to run.
    assert len(PYTHON_BLOCKS) >= 9
    assert len({b.title for b in PYTHON_BLOCKS}) == len(PYTHON_BLOCKS)
    # README.md's and the docs pages' alike: moving an example into docs/ keeps it tested.
    pages = {b.page for b in PYTHON_BLOCKS}
    assert "README.md" in pages
    assert len({page for page in pages if page.startswith("docs/")}) >= 5


# -- the test's own guards -----------------------------------------------------------


def test_an_example_leaning_on_an_unknown_name_fails_naming_it(world: Path) -> None:
    example = Block("python", 7, "loader = skillguard.Loader(policy, embedded=...)\nrun(task)\n")
    with prelude(world) as names:
        del names["embedded"]
        with pytest.raises(pytest.fail.Exception, match=r"README.md:7: .*\['embedded', 'run'\]"):
            run_example(example, names)


def test_an_area_read_without_its_import_fails(world: Path) -> None:
    example = Block("python", 3, "log = skillguard.audit.AuditLog('x.jsonl')\n")
    with (
        prelude(world) as names,
        pytest.raises(pytest.fail.Exception, match=r"\[.skillguard\.audit.\]"),
    ):
        run_example(example, names)
    imported = Block("python", 3, "import skillguard.audit\n" + example.text)
    with prelude(world) as names:
        assert isinstance(run_example(imported, names)["log"], skillguard.audit.AuditLog)


def test_top_level_await_placeholders_and_test_functions_run(world: Path) -> None:
    example = Block(
        "python",
        1,
        "import asyncio\n"
        "loader = skillguard.Loader(policy, embedded=...)\n"
        "await asyncio.sleep(0)\n"
        "calls = []\n"
        "def test_one() -> None:\n"
        "    calls.append(loader.bind('planner').agent)\n",
    )
    with prelude(world) as names:
        namespace = run_example(example, names)
    assert namespace["calls"] == ["planner"]


# -- transcripts of commands ---------------------------------------------------------


@attrs.frozen
class Transcript:
    where: str
    argv: tuple[str, ...]
    output: tuple[str, ...]


def transcripts() -> list[Transcript]:
    """Every ``$ skillguard ...`` command shown with its output, in plain and console
    blocks."""
    found: list[Transcript] = []
    for block in BLOCKS:
        if block.language not in ("", "console"):
            continue
        lines = block.text.splitlines()
        index = 0
        while index < len(lines):
            if not lines[index].startswith("$ "):
                index += 1
                continue
            where = f"{block.page}:{block.line + index}"
            command = lines[index][2:]
            while command.endswith("\\"):
                index += 1
                command = command[:-1] + lines[index]
            index += 1
            output = []
            while index < len(lines) and not lines[index].startswith("$ "):
                output.append(lines[index])
                index += 1
            found.append(Transcript(where, tuple(shlex.split(command)), tuple(output)))
    return found


def is_cheap(transcript: Transcript) -> bool:
    """Runs on the bundled examples as they are, and asks nobody anything."""
    return "--approve" not in transcript.argv and any(
        arg.startswith("examples/") for arg in transcript.argv
    )


# The exit status the README gives for each cheap command.
EXIT_STATUS = {
    # "1 when any failed": the broken examples fail.
    "skillguard validate examples/skills": 1,
    # "Exit status 0 (what was skipped is a result, not a failure)".
    "skillguard discover examples/skills": 0,
    # "1 for the others (AGENT_NOT_FOUND, ...)".
    "skillguard agent context --agent nobody --repo examples/agents": 1,
}
CHEAP = [t for t in transcripts() if is_cheap(t)]


def reads_as_shown(shown: Sequence[str], text: str) -> bool:
    """Whether *text* is what *shown* shows, a line ``...`` standing for any lines."""
    pattern = "".join(
        r"(?:[^\n]*\n)*?" if line == "..." else re.escape(line) + r"\n" for line in shown
    )
    return re.fullmatch(pattern, text if text.endswith("\n") else text + "\n") is not None


def console_script() -> Callable[[list[str]], int]:
    """The function behind the ``skillguard`` command (the README's
    ``.venv/bin/skillguard``), as the installed package declares it."""
    (script,) = entry_points(group="console_scripts", name="skillguard")
    main = script.load()
    assert callable(main)
    return cast("Callable[[list[str]], int]", main)


@pytest.mark.parametrize("transcript", CHEAP, ids=[shlex.join(t.argv) for t in CHEAP])
def test_readme_command_prints_what_it_shows(
    transcript: Transcript, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    command = shlex.join(transcript.argv)
    assert command in EXIT_STATUS, f"{transcript.where}: add {command!r}'s status"
    monkeypatch.chdir(ROOT)
    status = console_script()(list(transcript.argv[1:]))
    printed = capsys.readouterr()
    assert status == EXIT_STATUS[command], printed.err
    assert reads_as_shown(transcript.output, printed.out), (
        f"{transcript.where}: {command} printed\n{printed.out}"
    )


def test_the_readme_opens_with_a_command_it_shows_the_output_of() -> None:
    first = next(block for block in BLOCKS if block.language == "sh")
    command = first.text.strip().split(" && ")[-1]
    assert command == ".venv/bin/skillguard validate examples/skills"
    assert command.removeprefix(".venv/bin/") in {shlex.join(t.argv) for t in CHEAP}


def test_reads_as_shown_matches_lines_and_runs() -> None:
    assert reads_as_shown(["a", "...", "d"], "a\nb\nc\nd\n")
    assert reads_as_shown(["a", "...", "d"], "a\nd")
    assert not reads_as_shown(["a", "...", "d"], "a\nb\nc\n")
    assert not reads_as_shown(["a", "d"], "a\nb\nd\n")


def test_every_prelude_name_is_one_an_example_uses(world: Path) -> None:
    # A name the README no longer uses is dropped from the prelude, so that the prelude
    # stays the list of what the README's examples lean on.
    used: set[str] = set()
    for block in PYTHON_BLOCKS:
        used |= free_names(_Placeholders().visit(ast.parse(block.text)))
    with prelude(world) as names:
        assert set(names) == used


def test_every_policy_the_docs_show_is_a_valid_policy() -> None:
    # The README's short policy and the tutorial's full one (the prelude's policy.yaml).
    policies = [
        b
        for b in BLOCKS
        if b.language == "yaml" and b.text.startswith(("agents:", "# policy.yaml"))
    ]
    assert {b.page for b in policies} >= {"README.md", "docs/tutorials/swarm.md"}
    for block in policies:
        policy = skillguard.AllowPolicy.from_yaml(block.text.encode())
        assert "planner" in policy.agents, f"{block.page}:{block.line}"
