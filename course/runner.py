"""Running one chapter's graded tests in a fresh pytest process, and reading the results.

Each run is `pytest exercises/chNN` in its own process (a crash or a hang costs that run
only), with a per-test timeout from pytest-timeout, a JUnit XML file and the plugin's
JSON-lines log. The process is a new interpreter, or (`warm`) a fork of this one after
it has imported the package once, which saves the torch import in every run (and other
imports each run would repeat: pytest's plugins, what a first `torch.compile` loads).
The log says which tests were collected with which points before any ran, and how each one
ended, so a run that dies half-way still accounts for every test. The JUnit XML gives
each test's outcome and its failure text.
"""

from __future__ import annotations

import contextlib
import faulthandler
import functools
import importlib
import json
import os
import pickle
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import xml.etree.ElementTree as ElementTree
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from importlib import metadata
from importlib.util import find_spec
from pathlib import Path
from typing import NoReturn

from course.manifest import Chapter

OUTPUT_LIMIT = 4000   # characters of failure text kept per test
# Imported before forking when the package has imported the key: what every graded run
# would import otherwise on its first torch.compile (TorchDynamo, AOTAutograd's
# partitioner and, through it, networkx), a second or so of each run.
WARM_MODULES = {"torch": ("torch._dynamo", "functorch.compile")}
UNFINISHED = "did not run to the end (the run stopped)"


@dataclass(frozen=True)
class RunConfig:
    """How to run one chapter: whose code, with which limits."""

    chapter: Chapter
    impl: str = "student"
    stub_task: str | None = None
    all_tests: bool = False        # with stub_task: run every test, not only the task's
    impl_dir: Path | None = None
    cumulative: bool = False
    timeout: float = 30            # seconds per test
    chapter_timeout: float = 1800  # seconds for the whole run
    label: str = ""                # how reports name this run

    def arguments(self, junit: Path, log: Path) -> list[str]:
        args = [f"exercises/{self.chapter.name}", "-q", "-p", "no:cacheprovider",
                f"--junitxml={junit}", f"--course-log={log}", f"--impl={self.impl}",
                f"--course-root={self.chapter.root}", "-o", "junit_logging=system-out",
                "-o", "junit_log_passing_tests=false",
                "-o", f"junit_suite_name={self.chapter.name}"]
        if find_spec("pytest_timeout") is not None and self.timeout:
            args.append(f"--timeout={self.timeout:g}")
        if self.stub_task:
            args.append(f"--stub-task={self.stub_task}")
        if self.all_tests:
            args.append("--all-tests")
        if self.impl_dir is not None:
            args.append(f"--impl-dir={self.impl_dir}")
        if self.cumulative:
            args.append("--cumulative")
        return args


@dataclass
class TestResult:
    """How one graded test ended."""

    nodeid: str
    tasks: list[str]
    shares: dict[str, float]       # task -> the points this test carries for it
    outcome: str = "failed"        # passed, failed, error, skipped
    message: str = ""
    output: str = ""
    duration: float = 0.0

    __test__ = False

    @property
    def points(self) -> float:
        return sum(self.shares.values())

    @property
    def passed(self) -> bool:
        return self.outcome == "passed"


@dataclass
class ChapterRun:
    """One pytest process's results for a chapter."""

    config: RunConfig
    tests: list[TestResult] = field(default_factory=list)
    returncode: int | None = None
    problem: str = ""              # why the run did not finish normally, if it did not
    load_errors: dict[str, str] = field(default_factory=dict)   # task id -> message
    output_tail: str = ""
    seconds: float = 0.0

    def tasks_losing_points(self) -> set[str]:
        return {task for test in self.tests if not test.passed for task in test.tasks}


def run_chapter(config: RunConfig) -> ChapterRun:
    """Run a chapter's graded tests in a fresh process and collect what happened."""
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="course-run-") as scratch:
        returncode, timed_out = _run_pytest(config, *_paths(scratch))
        return _result(config, scratch, returncode, timed_out, time.perf_counter() - started)


def run_many(configs: list[RunConfig], jobs: int | None = None, *,
             warm: bool = False) -> list[ChapterRun]:
    """Run several configurations, `jobs` at a time, results in the given order.

    `warm`: import the package once here and fork each run from this process, instead
    of starting a new interpreter that imports it (torch) again; each run is still a
    process of its own. Configurations of several roots (a release and its copy with
    the solutions put back) are run root by root, each from a forked process that
    imports that root's package.
    """
    jobs = max(1, jobs or os.cpu_count() or 1)
    if warm and len({config.chapter.root for config in configs}) > 1 and hasattr(os, "fork"):
        return _run_root_by_root(configs, jobs)
    if warm and len(configs) > 1 and _preload(configs):
        return _run_forked(configs, jobs)
    if jobs == 1 or len(configs) <= 1:
        return [run_chapter(config) for config in configs]
    with ThreadPoolExecutor(max_workers=min(jobs, len(configs))) as pool:
        return list(pool.map(run_chapter, configs))


def _paths(scratch: str) -> tuple[Path, Path, Path]:
    """(junit.xml, the plugin's log, pytest's output) of one run."""
    return tuple(Path(scratch) / name for name in ("junit.xml", "log.jsonl", "out.txt"))


def _result(config: RunConfig, scratch: str, returncode: int, timed_out: bool,
            seconds: float) -> ChapterRun:
    junit, log, output = _paths(scratch)
    run = ChapterRun(config, returncode=returncode, seconds=seconds)
    text = output.read_text(encoding="utf-8", errors="replace") if output.is_file() else ""
    run.output_tail = text[-OUTPUT_LIMIT:]
    events = _read_log(log)
    _collect(run, events, junit)
    run.problem = _problem(run, events, timed_out, text)
    return run


def _run_pytest(config: RunConfig, junit: Path, log: Path, output: Path) -> tuple[int, bool]:
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTHONFAULTHANDLER="1")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(config.chapter.root),
                                                      env.get("PYTHONPATH")]))
    command = [sys.executable, "-m", "pytest", *config.arguments(junit, log)]
    with output.open("w", encoding="utf-8") as sink:
        process = subprocess.Popen(command, cwd=config.chapter.root, stdout=sink,
                                   stderr=subprocess.STDOUT, env=env, start_new_session=True)
        try:
            return process.wait(timeout=config.chapter_timeout), False
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            return process.wait(), True


# -- warm runs: import once, fork each run -------------------------------------------------

def _preload(configs: list[RunConfig]) -> bool:
    """Import the package modules the manifests name, from the runs' one root."""
    roots = {config.chapter.root for config in configs}
    if not hasattr(os, "fork") or len(roots) != 1:
        return False
    root = roots.pop()
    sys.path.insert(0, str(root))
    try:
        modules = [importlib.import_module(task.module)
                   for config in configs for task in config.chapter.tasks]
    except Exception:   # a broken package: let each run report it in its own process
        return False
    _warm_up()
    return all(Path(m.__file__).resolve().is_relative_to(root) for m in modules)


@functools.cache
def _warm_up() -> None:
    """Import once, here, what each run would import again: pytest's plugins and the
    `WARM_MODULES` of the libraries the package uses. Only time depends on it."""
    try:
        _load_pytest_plugins()
        for key, names in WARM_MODULES.items():
            if key in sys.modules:
                for name in names:
                    importlib.import_module(name)
    except Exception:   # noqa: BLE001 - each run imports what it needs itself anyway
        pass


def _run_root_by_root(configs: list[RunConfig], jobs: int) -> list[ChapterRun]:
    """Each root's runs forked from a child that imports that root's package (cold runs
    if that child fails), one root after the other; results in the given order."""
    results: list[ChapterRun | None] = [None] * len(configs)
    for root in dict.fromkeys(config.chapter.root for config in configs):
        indexes = [i for i, config in enumerate(configs) if config.chapter.root == root]
        group = [configs[i] for i in indexes]
        runs = _in_child(lambda: run_many(group, jobs, warm=True)) or run_many(group, jobs)
        for index, run in zip(indexes, runs):
            results[index] = run
    return results


def _in_child(function: Callable[[], object]) -> object | None:
    """`function()` computed in a forked child and pickled back; None if the child failed
    (then nothing it did is kept: the caller does it again here)."""
    with tempfile.TemporaryDirectory(prefix="course-fork-") as scratch:
        answer = Path(scratch) / "answer.pickle"
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            def answer_it() -> int:
                answer.write_bytes(pickle.dumps(function()))
                return 0
            _leave_child(answer_it, failed=1)
        _, status = os.waitpid(pid, 0)
        if os.waitstatus_to_exitcode(status) != 0 or not answer.is_file():
            return None
        return pickle.loads(answer.read_bytes())


def _load_pytest_plugins() -> None:
    """Run pytest once on an empty directory, quietly: its plugins (hypothesis,
    pytest-timeout, ...) are then imported, their asserts rewritten as pytest does it,
    once for every run instead of in each; not again where they are (inside pytest)."""
    import pytest
    if {entry.module for entry in metadata.entry_points(group="pytest11")} <= set(sys.modules):
        return
    with tempfile.TemporaryDirectory(prefix="course-warm-") as empty:
        (Path(empty) / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
        with open(os.devnull, "w", encoding="utf-8") as sink, \
                contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", "--noconftest",
                         "--rootdir", empty, "-c", str(Path(empty) / "pytest.ini"), empty])


def _run_forked(configs: list[RunConfig], jobs: int) -> list[ChapterRun]:
    """Fork up to `jobs` runs at a time; a run past its chapter_timeout is killed."""
    results: list[ChapterRun | None] = [None] * len(configs)
    pending = list(enumerate(configs))
    running: dict[int, tuple[int, float, str]] = {}   # pid -> (index, start, scratch)
    while pending or running:
        while pending and len(running) < jobs:
            index, config = pending.pop(0)
            scratch = tempfile.mkdtemp(prefix="course-run-")
            running[_fork_pytest(config, scratch)] = (index, time.perf_counter(), scratch)
        for pid, (index, started, scratch) in list(running.items()):
            done, status = os.waitpid(pid, os.WNOHANG)
            timed_out = not done and time.perf_counter() - started > configs[index].chapter_timeout
            if timed_out:
                os.killpg(pid, signal.SIGKILL)
                done, status = os.waitpid(pid, 0)
            if done:
                del running[pid]
                results[index] = _result(configs[index], scratch, os.waitstatus_to_exitcode(status),
                                         timed_out, time.perf_counter() - started)
                shutil.rmtree(scratch, ignore_errors=True)
        time.sleep(0.01)
    return results


def _fork_pytest(config: RunConfig, scratch: str) -> int:
    """Start `pytest` for one configuration in a forked child; return its pid."""
    junit, log, output = _paths(scratch)
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid:
        return pid

    def run_pytest() -> int:
        os.setsid()
        sink = os.open(output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(sink, 1)
        os.dup2(sink, 2)
        os.chdir(config.chapter.root)
        sys.dont_write_bytecode = True
        faulthandler.enable()
        import pytest
        return int(pytest.main(config.arguments(junit, log)))

    _leave_child(run_pytest, failed=3)


def _leave_child(body: Callable[[], int], *, failed: int) -> NoReturn:
    """In a forked child: run `body` and exit with the code it returns, or `failed` if it
    raised (printing the traceback). The child never returns into the parent's code."""
    code = failed
    try:
        code = body()
    except BaseException:
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _read_log(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    events = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            events.append(json.loads(line))
        except ValueError:   # a line cut short by a crash
            break
    return events


def _collect(run: ChapterRun, events: list[dict], junit: Path) -> None:
    """Tests and points from the log; outcomes from the JUnit XML, else (a crash) the log."""
    collected = next((e for e in events if e["event"] == "collected"), None)
    if collected is None:
        return
    run.load_errors = collected.get("errors", {})
    run.tests = [TestResult(t["nodeid"], t["tasks"], t["shares"]) for t in collected["tests"]]
    by_node = {test.nodeid: test for test in run.tests}
    finished = {e["nodeid"]: e for e in events if e["event"] == "result"}
    for nodeid, event in finished.items():
        if nodeid in by_node and event["outcome"]:
            by_node[nodeid].outcome, by_node[nodeid].message = event["outcome"], event["message"]
    for test in run.tests:
        if test.nodeid not in finished:
            test.outcome, test.message = "failed", UNFINISHED
    if junit.is_file():
        _merge_junit(by_node, junit)


def _merge_junit(by_node: dict[str, TestResult], junit: Path) -> None:
    try:
        tree = ElementTree.parse(junit)
    except ElementTree.ParseError:
        return
    by_address = {junit_address(nodeid): test for nodeid, test in by_node.items()}
    for case in tree.iter("testcase"):
        test = by_address.get((case.get("classname", ""), case.get("name", "")))
        if test is None:
            continue
        test.duration = float(case.get("time", 0) or 0)
        tags = {child.tag: child for child in case}
        verdict = next((tag for tag in ("failure", "error", "skipped") if tag in tags), None)
        test.outcome = {"failure": "failed", "error": "error", "skipped": "skipped",
                        None: "passed"}[verdict]
        if verdict is not None:
            message = tags[verdict].get("message", "").strip()
            test.message = message.splitlines()[0][:500] if message else test.message
            test.output = tags[verdict].text or ""
        captured = _captured(tags.get("system-out"))
        if captured and not test.passed:
            test.output += "\n--- captured stdout ---\n" + captured
        test.output = test.output.strip()[:OUTPUT_LIMIT]


def _captured(element) -> str:
    """The text pytest captured, without its "---- Captured Out ----" header lines."""
    text = element.text if element is not None and element.text else ""
    return "\n".join(line for line in text.splitlines()
                     if not re.fullmatch(r"-+ Captured .* -+", line)).strip()


def junit_address(nodeid: str) -> tuple[str, str]:
    """(classname, name) that pytest's JUnit XML gives the test `nodeid`."""
    path, bracket, params = nodeid.partition("[")
    names = path.split("::")
    names[0] = re.sub(r"\.py$", "", names[0].replace("/", "."))
    names[-1] += bracket + params
    return ".".join(names[:-1]), names[-1]


def _problem(run: ChapterRun, events: list[dict], timed_out: bool, text: str) -> str:
    """Why the run ended abnormally, or "" if pytest finished (tests may have failed)."""
    running = [e["nodeid"] for e in events if e["event"] == "start"]
    done = {e["nodeid"] for e in events if e["event"] == "result"}
    during = next((f" while running {n}" for n in reversed(running) if n not in done), "")
    if timed_out:
        return f"the run was stopped after {run.config.chapter_timeout:g} s{during}"
    if run.returncode is not None and run.returncode < 0:
        number = -run.returncode
        name = signal.Signals(number).name if number in signal.valid_signals() else number
        return f"the test process died ({name}){during}"
    collected = next((e for e in events if e["event"] == "collected"), None)
    if collected and collected.get("collection_errors"):
        return "collecting the graded tests failed: " + "\n".join(collected["collection_errors"])
    if collected is None:
        last = "\n".join(text.strip().splitlines()[-15:])
        return f"pytest stopped before running any test (exit code {run.returncode}):\n{last}"
    if not any(e["event"] == "finished" for e in events):
        return f"the test process exited abruptly (exit code {run.returncode}){during}"
    return ""
