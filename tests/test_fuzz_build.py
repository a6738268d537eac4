"""The fuzz build stays whole: fuzz/build.sh, .clusterfuzzlite/, the targets in fuzz/,
their corpora, dictionaries and libFuzzer options, and tox -e fuzz all name the same
targets the same way, and every target also runs as a Hypothesis test in this suite.

No Docker engine is needed: the files are read as text, the way the OSS-Fuzz builder
reads them (compile_python_fuzzer packages ``fuzz/<target>.py``; the runner picks up
``<target>_seed_corpus.zip``, ``<target>.dict`` and ``<target>.options`` next to it).
"""

from __future__ import annotations

import ast
import configparser
import re
import shlex
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from tests import test_fuzz_targets
from tests.agents import test_compose as test_agents_compose

ROOT = Path(__file__).resolve().parent.parent
FUZZ = ROOT / "fuzz"
CORPUS = FUZZ / "corpus"
TARGETS = sorted(path.stem for path in FUZZ.glob("*_fuzzer.py"))

# The Hypothesis test that runs each target's invariant on every suite run.
HYPOTHESIS_TESTS = {
    "parse_skill_fuzzer": [test_fuzz_targets.test_t14_parse_skill_fuzz_target],
    "check_skill_fuzzer": [test_fuzz_targets.test_t119_check_skill_fuzz_target],
    "differential_fuzzer": [
        test_fuzz_targets.test_differential_fuzz_target,
        test_fuzz_targets.test_t60_differential_fuzz_target_on_policies,
    ],
    "parse_agent_fuzzer": [test_fuzz_targets.test_t70_parse_agent_fuzz_target],
    "strict_json_fuzzer": [test_agents_compose.test_t100_strict_json_fuzz_target],
}

# What OSS-Fuzz's compile_python_fuzzer prepends to a target in a coverage build.
COVERAGE_STUB = """\
import atexit
import coverage
cov = coverage.coverage(data_file='.coverage', cover_pylib=True)
cov.start()
def exit_handler():
    cov.stop()
    cov.save()
atexit.register(exit_handler)
"""


def _built() -> dict[str, tuple[str, tuple[str, ...]]]:
    """fuzz/build.sh's table: target -> (dictionary, seed corpus folders)."""
    table: dict[str, tuple[str, tuple[str, ...]]] = {}
    for line in (FUZZ / "build.sh").read_text().splitlines():
        words = shlex.split(line, comments=True)
        if words[:1] == ["build"]:
            name, dictionary, *folders = words[1:]
            assert name not in table, f"{name} is built twice"
            table[name] = (dictionary, tuple(folders))
    return table


def _tox_runs() -> dict[str, list[str]]:
    """The arguments tox -e fuzz passes to each target."""
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(ROOT / "tox.ini")
    runs: dict[str, list[str]] = {}
    for line in parser["testenv:fuzz"]["commands"].splitlines():
        words = shlex.split(line, comments=True)
        if words[:1] == ["python"]:
            runs[Path(words[1]).stem] = words[2:]
    return runs


def _options(name: str) -> dict[str, str]:
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_string((FUZZ / f"{name}.options").read_text())
    assert parser.sections() == ["libfuzzer"]
    return dict(parser["libfuzzer"])


# libFuzzer's dictionary format: an optional name=, then a quoted string whose only
# escapes are \\, \" and \xAB (ParseDictionaryFile refuses the whole file otherwise).
_DICT_ENTRY = re.compile(r'(?:[A-Za-z0-9_]+\s*=\s*)?"(?:[^"\\]|\\\\|\\"|\\x[0-9A-Fa-f]{2})*"')


def test_every_target_is_built_and_every_built_target_exists() -> None:
    assert len(TARGETS) >= 5
    assert sorted(_built()) == TARGETS


@pytest.mark.parametrize("name", TARGETS)
def test_each_built_target_ships_its_corpus_dictionary_and_options(name: str) -> None:
    dictionary, folders = _built()[name]
    assert folders, f"{name} has no seed corpus"
    for folder in folders:
        seeds = [path for path in (CORPUS / folder).iterdir() if path.is_file()]
        assert len(seeds) >= 4, f"{folder} is not a corpus"
    entries = [
        line.strip()
        for line in (FUZZ / dictionary).read_text().splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    assert len(entries) >= 10
    for entry in entries:
        assert _DICT_ENTRY.fullmatch(entry), f"{dictionary}: {entry!r} is not a dictionary entry"
    options = _options(name)
    assert int(options["max_len"]) > 0
    # Inputs reach -max_len at once instead of creeping up from the seeds.
    assert options["len_control"] == "0"


@pytest.mark.parametrize("name", TARGETS)
def test_tox_fuzz_runs_each_target_as_the_build_ships_it(name: str) -> None:
    dictionary, folders = _built()[name]
    arguments = _tox_runs()[name]
    positional = [word for word in arguments if not word.startswith("-")]
    assert positional[1:] == [f"fuzz/corpus/{folder}" for folder in folders]
    flags = dict(word[1:].split("=", 1) for word in arguments if word.startswith("-"))
    assert flags["dict"] == f"fuzz/{dictionary}"
    options = _options(name)
    assert flags["max_len"] == options["max_len"]
    assert flags["len_control"] == options["len_control"]
    assert flags["runs"].startswith("{env:FUZZ_RUNS:")


def test_tox_runs_no_target_the_build_does_not_know() -> None:
    assert sorted(_tox_runs()) == TARGETS


def test_clusterfuzzlite_builds_through_fuzz_build_sh() -> None:
    config = ROOT / ".clusterfuzzlite"
    assert (config / "project.yaml").read_text().splitlines()[-1] == "language: python"
    dockerfile = (config / "Dockerfile").read_text()
    assert "FROM gcr.io/oss-fuzz-base/base-builder-python" in dockerfile
    assert "COPY . $SRC/skillguard" in dockerfile
    assert "COPY .clusterfuzzlite/build.sh $SRC/" in dockerfile
    assert 'exec "$SRC/skillguard/fuzz/build.sh"' in (config / "build.sh").read_text()
    build = (FUZZ / "build.sh").read_text()
    assert 'cd "$SRC/skillguard"' in build
    assert 'compile_python_fuzzer "fuzz/$name.py"' in build
    # Zipped folder by folder: both corpora hold a seed named "deep".
    assert {"deep"} <= {p.name for p in (CORPUS / "parse_skill").iterdir()} & {
        p.name for p in (CORPUS / "policy").iterdir()
    }
    assert 'zip -q -r "$OUT/${name}_seed_corpus.zip" "$@"' in build


@pytest.mark.parametrize("name", TARGETS)
def test_each_target_survives_the_coverage_build(name: str) -> None:
    # A coverage build prepends COVERAGE_STUB, so a "from __future__" import (which
    # must come first) would make PyInstaller fail on a SyntaxError.
    source = (FUZZ / f"{name}.py").read_text()
    compile(COVERAGE_STUB + source, f"{name}.py", "exec")
    tree = ast.parse(source)
    defined = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    assert {"check", "main"} <= defined
    assert 'if __name__ == "__main__":' in source


@pytest.mark.parametrize("name", TARGETS)
def test_each_target_instruments_skillguard_only(name: str) -> None:
    # instrument_all() rewrote every function loaded (the standard library, ruamel,
    # Hypothesis) and a target took minutes to start; only skillguard is instrumented
    # now, as it is imported, every module of it inside the hook.
    source = (FUZZ / f"{name}.py").read_text()
    assert "instrument_all" not in source.replace("atheris.instrument_all() rewrote", "")
    tree = ast.parse(source)
    [hook] = [node for node in tree.body if isinstance(node, ast.With)]
    inside = [
        node.module if isinstance(node, ast.ImportFrom) else node.names[0].name
        for node in hook.body
        if isinstance(node, ast.Import | ast.ImportFrom)
    ]
    assert inside
    assert all(module is not None and module.split(".")[0] == "skillguard" for module in inside)
    before = tree.body[: tree.body.index(hook)]
    imported_before = {
        alias.name.split(".")[0]
        for node in before
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    assert "skillguard" not in imported_before
    assert 'with hook(__name__ == "__main__"):' in source
    calls = [
        node.value.func.id
        for node in hook.body
        if isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Call)
        and isinstance(node.value.func, ast.Name)
    ]
    assert calls == ["import_every_module"]
    # The shared hook: atheris instruments skillguard alone, and the module that walks
    # skillguard imports it only when called, inside the hook.
    shared = (FUZZ / "instrumented.py").read_text()
    assert 'atheris.instrument_imports(\n        include=["skillguard"]\n    )' in shared
    assert "pkgutil.walk_packages(skillguard.__path__" in shared
    top = ast.parse(shared).body
    assert not {
        alias.name.split(".")[0]
        for node in top
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    } & {"skillguard", "atheris"}
    # PyInstaller bundles the modules the hook imports by name.
    assert 'compile_python_fuzzer "fuzz/$name.py" --collect-submodules=skillguard' in (
        (FUZZ / "build.sh").read_text()
    )


def test_the_fuzz_smoke_run_is_the_fuzz_run_made_short_and_ci_runs_it() -> None:
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(ROOT / "tox.ini")
    smoke = parser["testenv:fuzz-smoke"]
    assert smoke["commands"].strip() == "{[testenv:fuzz]commands}"
    assert smoke["commands_pre"].strip() == "{[testenv:fuzz]commands_pre}"
    runs = re.fullmatch(r"FUZZ_RUNS = \{env:FUZZ_RUNS:([0-9]+)\}", smoke["set_env"].strip())
    assert runs is not None
    assert 1000 <= int(runs.group(1)) <= 10000
    ci = (ROOT / ".ci" / "run").read_text()
    assert '"$venv/bin/tox" -e fuzz-smoke' in ci
    assert "--only-binary :all: 'atheris>=2.3'" in ci


def test_a_future_import_breaks_the_coverage_build() -> None:
    with pytest.raises(SyntaxError):
        compile(COVERAGE_STUB + "from __future__ import annotations\n", "t.py", "exec")


@pytest.mark.parametrize("name", TARGETS)
def test_each_target_also_runs_as_a_hypothesis_test(name: str) -> None:
    tests = HYPOTHESIS_TESTS[name]
    target = str(FUZZ / f"{name}.py")
    for test in tests:
        assert getattr(test, "is_hypothesis_test", False), f"{test.__name__} is not @given"
        inner = test.hypothesis.inner_test  # type: ignore[attr-defined]
        modules = [
            value
            for value in inner.__globals__.values()
            if getattr(value, "__file__", None) == target
        ]
        assert modules, f"{test.__name__} does not load {name}.py"
        assert {"check", "check_policy"} & set(inner.__code__.co_names)


def test_clusterfuzzlite_builds_and_runs_every_target_on_a_pull_request() -> None:
    workflow = YAML(typ="safe", pure=True).load(
        (ROOT / ".github" / "workflows" / "cflite_pr.yml").read_text()
    )
    [job] = workflow["jobs"].values()
    build, run = job["steps"]
    for step in (build, run):
        commit = step["uses"].rpartition("@")[2]
        assert re.fullmatch(r"[0-9a-f]{40}", commit), step["uses"]
        assert step["with"]["language"] == "python"
    assert build["uses"].startswith("google/clusterfuzzlite/actions/build_fuzzers@")
    assert run["uses"].startswith("google/clusterfuzzlite/actions/run_fuzzers@")
    # No target is left out for being untouched by the change.
    assert build["with"]["keep-unaffected-fuzz-targets"] is True
    assert int(run["with"]["fuzz-seconds"]) >= 60 * len(TARGETS)
