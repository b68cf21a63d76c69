"""Running mutants inside one pytest process: collect once, fork once per mutant.

`python -m course mutants` starts, for each chapter,

    pytest exercises/chNN -p course.mutant_runner --impl=solution \\
        --mutants-file=IN.json --mutants-out=OUT.jsonl [--mutant-jobs=N] [--mutant-timeout=S]

IN.json lists submissions: a task, the mutant's key and the whole exercise file of the
task's module with the one function changed (`course/mutants.py`). After collection this
plugin takes over pytest's test loop: for each submission it forks the process; the
child loads the file through the course plugin's own plugboard (`course/plugging.py`,
exactly as a student's file is loaded: the solutions for every other module), runs that
task's graded tests in order, as the course plugin plugs them, and stops at the first
failure. The parent waits for at most S seconds (then the mutant has *timed out*: it
hangs or is far slower than the solution), records one JSON line per submission, and
never runs a test itself, so every child starts from the same clean state: just
collected, nothing plugged, no test run. The first submission of each task is its
unchanged solution (the baseline): it must pass, and its time sets that task's
timeout.
"""

from __future__ import annotations

import json
import os
import signal
import tempfile
import time
from pathlib import Path

import pytest

from course.mutants import BASELINE
from course.plugging import ImplFile, choose
from course.plugin import SESSION, _patch_exercise_modules

KILLING = ("failed", "error")


def pytest_addoption(parser) -> None:
    group = parser.getgroup("course-mutants", "mutation testing (python -m course mutants)")
    group.addoption("--mutants-file", metavar="FILE", help="JSON list of submissions to run")
    group.addoption("--mutants-out", metavar="FILE", help="JSON lines, one per submission")
    group.addoption("--mutant-jobs", type=int, default=1, help="mutants run at once")
    group.addoption("--mutant-timeout", type=float, default=0,
                    help="seconds per mutant (default: 6 x its task's baseline, at least 4)")


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session) -> bool | None:
    config = session.config
    source = config.getoption("mutants_file")
    if not source:
        return None
    submissions = json.loads(Path(source).read_text(encoding="utf-8"))
    course = config.stash[SESSION]
    out = Path(config.getoption("mutants_out"))
    if session.testsfailed or course.collection_errors:
        _write(out, [{"index": s["index"], "outcome": "error",
                      "message": "collection failed"} for s in submissions])
        return True
    items = {}
    for item in session.items:
        record = course.records.get(item.nodeid)
        for task in record.tasks if record else []:
            items.setdefault(task, []).append(item)
    _Scheduler(session, course, items, submissions, out).run()
    return True


def _write(out: Path, results: list[dict]) -> None:
    with out.open("a", encoding="utf-8") as handle:
        for result in results:
            handle.write(json.dumps(result) + "\n")


class _Scheduler:
    """Forks one child per submission, `--mutant-jobs` at a time, baselines first."""

    def __init__(self, session, course, items: dict, submissions: list[dict], out: Path):
        self.session, self.course, self.items, self.out = session, course, items, out
        self.jobs = max(1, session.config.getoption("mutant_jobs"))
        self.fixed_timeout = session.config.getoption("mutant_timeout")
        self.baselines = [s for s in submissions if s["key"] == BASELINE]
        self.mutants = [s for s in submissions if s["key"] != BASELINE]
        self.baseline_seconds: dict[str, float] = {}
        self.broken: set[str] = set()    # tasks whose baseline failed: mutants not run
        self.scratch = Path(tempfile.mkdtemp(prefix="course-mutants-"))

    def timeout(self, task: str) -> float:
        if self.fixed_timeout:
            return self.fixed_timeout
        return max(4.0, 6 * self.baseline_seconds.get(task, 6.0))

    def run(self) -> None:
        self._batch(self.baselines, baseline=True)
        self._batch([m for m in self.mutants if m["task"] not in self.broken], baseline=False)
        _write(self.out, [{"index": m["index"], "outcome": "not run",
                           "message": "its task's unchanged solution fails the tests"}
                          for m in self.mutants if m["task"] in self.broken])

    def _batch(self, submissions: list[dict], baseline: bool) -> None:
        pending = list(submissions)
        running: dict[int, tuple[dict, float]] = {}
        while pending or running:
            while pending and len(running) < self.jobs:
                submission = pending.pop(0)
                running[self._fork(submission)] = (submission, time.perf_counter())
            for pid, (submission, started) in list(running.items()):
                done, _ = os.waitpid(pid, os.WNOHANG)
                elapsed = time.perf_counter() - started
                timed_out = not done and elapsed > (
                    120 if baseline else self.timeout(submission["task"]))
                if timed_out:
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                if done or timed_out:
                    del running[pid]
                    self._finish(submission, elapsed, timed_out, baseline)
            time.sleep(0.005)

    def _finish(self, submission: dict, elapsed: float, timed_out: bool, baseline: bool) -> None:
        path = self.scratch / f"{submission['index']}.json"
        if timed_out:
            result = {"outcome": "timed out", "message": f"stopped after {elapsed:.1f} s"}
        elif path.is_file():
            result = json.loads(path.read_text(encoding="utf-8"))
        else:
            result = {"outcome": "killed", "message": "the test process died"}
        result.update(index=submission["index"], seconds=round(elapsed, 3))
        if baseline:
            self.baseline_seconds[submission["task"]] = elapsed
            if result["outcome"] != "survived":
                self.broken.add(submission["task"])
        _write(self.out, [result])

    def _fork(self, submission: dict) -> int:
        pid = os.fork()
        if pid:
            return pid
        try:
            _quiet(self.session.config)
            result = _run_one(self.session, self.course, self.items, submission)
            path = self.scratch / f"{submission['index']}.json"
            path.write_text(json.dumps(result), encoding="utf-8")
        finally:
            os._exit(0)


def _quiet(config) -> None:
    """A child writes nothing to the terminal: its parent reports."""
    terminal = config.pluginmanager.get_plugin("terminalreporter")
    if terminal is not None:
        config.pluginmanager.unregister(terminal)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)


def _run_one(session, course, items: dict, submission: dict) -> dict:
    """In the child: plug the submission in as the student's code and run its task's tests."""
    task = submission["task"]
    chapter = course.chapters[submission["chapter"]]
    label = f"<mutant of {task}: exercises/{chapter.name}/{submission['file_name']}>"
    choices = [(t, ImplFile(label, submission["module"], submission["text"])
                if t.module == submission["module"] else impl)
               for t, impl in choose([chapter], "solution")]
    course.board.close()
    course.board.load(choices)
    for item in session.items:
        if getattr(item, "module", None) is not None:
            course.board.patch(vars(item.module))
    _patch_exercise_modules(course)
    if task in course.board.errors:
        return {"outcome": "killed", "message": course.board.errors[task]}
    chosen = items.get(task, [])
    for index, item in enumerate(chosen):
        following = chosen[index + 1] if index + 1 < len(chosen) else None
        item.config.hook.pytest_runtest_protocol(item=item, nextitem=following)
        record = course.records[item.nodeid]
        if record.outcome in KILLING:
            return {"outcome": "killed", "test": item.nodeid, "message": record.message}
    return {"outcome": "survived", "tests": len(chosen)}
