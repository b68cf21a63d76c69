"""`python -m course mutants`: run every task's mutants, report, and keep the record.

For each chapter this runs the mutants of its tasks (`course/mutants.py`) in one pytest
process (`course/mutant_runner.py`), prints killed / survived / timed out per task and
the chapter's kill rate, and writes `exercises/chNN/mutants.toml`:

    chapter = 1
    mutator = 1                       # course.mutants.MUTATOR_VERSION

    [[task]]
    id = "ch01.4"
    solution = "<sha256>"             # of the task's reference function
    tests = "<sha256>"                # of the test files that grade it, and their helpers
    mutants = 50
    killed = 49                       # a timed-out mutant counts as killed
    timed_out = 0

    [[task.equivalent]]               # one per surviving mutant
    mutant = "statement line 12: `x = 1` -> `pass`"
    reason = "x is set again before it is read"

A survivor should be killed by a sharper graded test; the ones that cannot be (the change
does not alter what the function does) keep a one-line `reason`, written by hand. A
rerun keeps the reasons of mutants that still survive and adds new survivors with an
empty reason. Running every mutant takes minutes, so `python -m course verify` only
checks the record (`record_problems`): it exists, every task has an entry whose
fingerprints match the solution and the tests as they are now, and every survivor has
a reason. `make mutants` runs them all.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from course.generate import render_solution
from course.manifest import Chapter, Task, load_chapters
from course.mutants import BASELINE, MUTATOR_VERSION, solution_source, task_submissions

RECORD = "mutants.toml"
HEADER = """\
# Mutation testing of {name}'s graded tests, written by `python -m course mutants {name}`.
# Each [[task.equivalent]] is a mutant that survived every graded test of its task; its
# reason says why it does what the solution does. `python -m course verify` fails when
# this record is stale (the solution or the tests changed) or a reason is empty.
"""


# -- fingerprints ----------------------------------------------------------------------------

def _sha256(parts: list[bytes]) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(hashlib.sha256(part).digest())
    return digest.hexdigest()


def test_files(chapter: Chapter, task: Task) -> list[Path]:
    """The files whose change can change what grades `task`: the test files that mention
    it, and the chapter's helper modules (samples, programs, oracles)."""
    generated = {t.file_name for t in chapter.tasks} | {"__init__.py"}
    files = []
    for path in sorted(chapter.directory.glob("*.py")):
        if path.name in generated:
            continue
        if not path.name.startswith("test_") or f'"{task.id}"' in path.read_text("utf-8"):
            files.append(path)
    return files


test_files.__test__ = False   # not a pytest test, despite its name


def fingerprints(chapter: Chapter, task: Task) -> dict[str, str]:
    """The solution's and the tests' hashes, as a record stores them."""
    tests = [part for path in test_files(chapter, task)
             for part in (path.name.encode(), path.read_bytes())]
    return {"solution": _sha256([solution_source(chapter, task).encode()]),
            "tests": _sha256(tests)}


# -- results ----------------------------------------------------------------------------------

@dataclass
class TaskResult:
    """How one task's mutants ended."""

    task: Task
    outcomes: dict[str, str] = field(default_factory=dict)     # mutant key -> outcome
    messages: dict[str, str] = field(default_factory=dict)     # mutant key -> detail
    baseline: str = ""                                         # "" when it passed

    def count(self, *outcomes: str) -> int:
        return sum(outcome in outcomes for outcome in self.outcomes.values())

    @property
    def survivors(self) -> list[str]:
        return [key for key, outcome in self.outcomes.items() if outcome == "survived"]


def run_chapter(chapter: Chapter, tasks: list[Task], *, jobs: int = 2,
                timeout: float = 0) -> list[TaskResult]:
    """Run the mutants of `tasks` (of one chapter) in one pytest process."""
    entries, keys, results = [], {}, {task.id: TaskResult(task) for task in tasks}
    for task in tasks:
        baseline = (BASELINE, render_solution(chapter, task.module))
        for key, text in [baseline] + [(s.mutant.key, s.text)
                                       for s in task_submissions(chapter, task)]:
            keys[len(entries)] = (task.id, key)
            entries.append({"index": len(entries), "task": task.id, "key": key,
                            "chapter": chapter.name, "module": task.module,
                            "file_name": task.file_name, "text": text})
    with tempfile.TemporaryDirectory(prefix="course-mutants-") as scratch:
        given, out = Path(scratch) / "mutants.json", Path(scratch) / "results.jsonl"
        given.write_text(json.dumps(entries), encoding="utf-8")
        output = _pytest(chapter, given, out, jobs, timeout)
        lines = out.read_text(encoding="utf-8").splitlines() if out.is_file() else []
    for line in lines:
        result = json.loads(line)
        task_id, key = keys[result["index"]]
        detail = result.get("test") or result.get("message", "")
        if key == BASELINE:
            failed = result["outcome"] != "survived"
            results[task_id].baseline = f"{result['outcome']}: {detail}" if failed else ""
        else:
            results[task_id].outcomes[key] = result["outcome"]
            results[task_id].messages[key] = detail
    for task_id, key in keys.values():
        if key != BASELINE and key not in results[task_id].outcomes:
            results[task_id].outcomes[key] = "not run"
            results[task_id].baseline = (results[task_id].baseline
                                         or "the run stopped early:\n" + output[-2000:])
    return list(results.values())


def _pytest(chapter: Chapter, given: Path, out: Path, jobs: int, timeout: float) -> str:
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    env.setdefault("OMP_NUM_THREADS", "1")   # children are forked: no thread pools
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(chapter.root),
                                                      env.get("PYTHONPATH")]))
    command = [sys.executable, "-m", "pytest", f"exercises/{chapter.name}", "-q",
               "-p", "no:cacheprovider", "-p", "course.mutant_runner", "--impl=solution",
               f"--course-root={chapter.root}", f"--mutants-file={given}",
               f"--mutants-out={out}", f"--mutant-jobs={jobs}"]
    if timeout:
        command.append(f"--mutant-timeout={timeout:g}")
    done = subprocess.run(command, cwd=chapter.root, env=env, capture_output=True, text=True)
    return done.stdout + done.stderr


# -- the record ---------------------------------------------------------------------------------

def record_path(chapter: Chapter) -> Path:
    return chapter.directory / RECORD


def read_record(chapter: Chapter) -> dict:
    """The chapter's record as {task id: entry}; {} when there is none."""
    path = record_path(chapter)
    if not path.is_file():
        return {}
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    tasks = {entry["id"]: entry for entry in data.get("task", [])}
    for entry in tasks.values():
        entry["mutator"] = data.get("mutator")
    return tasks


def _entry(chapter: Chapter, result: TaskResult, reasons: dict[str, str]) -> dict:
    entry = {"id": result.task.id, **fingerprints(chapter, result.task),
             "mutants": len(result.outcomes),
             "killed": result.count("killed", "timed out"),
             "timed_out": result.count("timed out"),
             "equivalent": [{"mutant": key, "reason": reasons.get(key, "")}
                            for key in result.survivors]}
    return entry


def _reasons(recorded: dict, task_id: str) -> dict[str, str]:
    """Mutant key -> its recorded reason, for one task."""
    return {e["mutant"]: e.get("reason", "")
            for e in recorded.get(task_id, {}).get("equivalent", [])}


def write_record(chapter: Chapter, results: list[TaskResult]) -> Path:
    """Update the record with `results` (other tasks' entries are kept, reasons too)."""
    old = read_record(chapter)
    new = {result.task.id: _entry(chapter, result, _reasons(old, result.task.id))
           for result in results}
    lines = [HEADER.format(name=chapter.name), f"chapter = {chapter.number}",
             f"mutator = {MUTATOR_VERSION}"]
    for task in chapter.tasks:
        entry = new.get(task.id) or old.get(task.id)
        if entry is None:
            continue
        lines += ["", "[[task]]"]
        lines += [f"{name} = {_toml(entry[name])}" for name in
                  ("id", "solution", "tests", "mutants", "killed", "timed_out")]
        for survivor in entry.get("equivalent", []):
            lines += ["", "[[task.equivalent]]", f"mutant = {_toml(survivor['mutant'])}",
                      f"reason = {_toml(survivor.get('reason', ''))}"]
    path = record_path(chapter)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _toml(value: object) -> str:
    return json.dumps(value, ensure_ascii=False) if isinstance(value, str) else str(value)


def record_problems(chapter: Chapter) -> list[str]:
    """Why the chapter's mutation record cannot be trusted ([] when it can)."""
    where = record_path(chapter).relative_to(chapter.root).as_posix()
    fix = f"run `python -m course mutants {chapter.name}`"
    if not chapter.tasks:
        return []
    try:
        recorded = read_record(chapter)
    except tomllib.TOMLDecodeError as error:
        return [f"{where}: not valid TOML: {error}"]
    if not recorded:
        return [f"{where} is missing; {fix}"]
    problems = []
    for task in chapter.tasks:
        entry = recorded.get(task.id)
        if entry is None:
            problems.append(f"{where}: no entry for {task.id}; {fix}")
            continue
        if entry.get("mutator") != MUTATOR_VERSION:
            problems.append(f"{where}: {task.id} was recorded by another version of the "
                            f"mutator; {fix}")
        now = fingerprints(chapter, task)
        for name, what in (("solution", "its solution"), ("tests", "its graded tests")):
            if entry.get(name) != now[name]:
                problems.append(f"{where}: {task.id} is stale: {what} changed since it "
                                f"was recorded; {fix}")
        for survivor in entry.get("equivalent", []):
            if not str(survivor.get("reason", "")).strip():
                problems.append(f"{where}: {task.id}: unexplained survivor "
                                f"{survivor.get('mutant')!r}: kill it with a sharper test, "
                                f"or give the reason it is equivalent")
    return problems


# -- the command -----------------------------------------------------------------------------------

def _report_task(result: TaskResult, reasons: dict[str, str], show: bool) -> int:
    """Print one task's line (and its survivors); the number of unexplained survivors."""
    detected, timed_out = result.count("killed", "timed out"), result.count("timed out")
    survived = result.survivors
    explained = [key for key in survived if reasons.get(key, "").strip()]
    print(f"  {result.task.id:<8} {len(result.outcomes):4d} mutants  {detected:4d} killed "
          f"({timed_out} timed out)  {len(survived):3d} survived "
          f"({len(explained)} recorded as equivalent)")
    if result.baseline:
        print(f"           the unchanged solution does not pass: {result.baseline}")
    for key in survived:
        if show or key not in explained:
            mark = "equivalent" if key in explained else "SURVIVED"
            print(f"           {mark}: {key}")
    not_run = result.count("not run", "error")
    if not_run:
        print(f"           {not_run} mutant(s) did not run")
    return len(survived) - len(explained) + (1 if result.baseline or not_run else 0)


def mutants(root: Path, names: list[str] | None = None, *, tasks: list[str] | None = None,
            jobs: int = 2, timeout: float = 0, record: bool = True,
            show: bool = False, listing: bool = False) -> int:
    """`python -m course mutants`: 0 when no chapter has an unexplained survivor."""
    unexplained = 0
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(line_buffering=True)   # a chapter's report as soon as it ends
    for chapter in load_chapters(root, names):
        chosen = [t for t in chapter.tasks if not tasks or t.id in tasks]
        if not chosen:
            continue
        if listing:
            for task in chosen:
                for submission in task_submissions(chapter, task):
                    print(f"{task.id}  {submission.mutant.key}")
            continue
        started = time.perf_counter()
        results = run_chapter(chapter, chosen, jobs=jobs, timeout=timeout)
        recorded = read_record(chapter)
        print(f"{chapter.name}  {chapter.title}")
        missed = sum(_report_task(result, _reasons(recorded, result.task.id), show)
                     for result in results)
        total = sum(len(r.outcomes) for r in results)
        detected = sum(r.count("killed", "timed out") for r in results)
        rate = 100 * detected / total if total else 100.0
        print(f"{chapter.name}: kill rate {rate:.1f}% ({detected} of {total} mutants killed; "
              f"{total - detected} survived, {missed} unexplained; "
              f"{time.perf_counter() - started:.0f} s)")
        if record:
            print(f"  wrote {write_record(chapter, results).relative_to(root)}")
        unexplained += missed
    return 1 if unexplained else 0
