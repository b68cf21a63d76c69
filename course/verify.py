"""`python -m course verify`: proof that the graded tests grade what they claim.

For every chapter with a manifest:

1. the generated files are fresh (`python -m course check`);
2. every graded test passes on the solutions;
3. every task has at least one graded test;
4. with a task stubbed, every test marked with that task fails ("a stub passes test X"
   otherwise);
5. each known-bad submission under `tests/course/bad/<name>/` loses the tasks its
   `expect.toml` lists (and, unless `exact = false`, no others);
6. the chapter's mutation record (`exercises/chNN/mutants.toml`) is fresh and complete:
   recorded for the solutions and tests as they are now, every surviving mutant
   explained (`course/mutant_records.py`; `python -m course mutants` runs them).

Graded runs plug one task at a time (`course/plugin.py`), so steps 4 and 5 see each
task alone: the other tasks are the package's own code while its tests run. That is why
step 4 needs one run per chapter, not one per task: with every stub loaded
(`--impl=stub`), each test still runs with only its own task's stub plugged in. Two cases
get a run per task instead (`--stub-task`, the other tasks from the solutions): a test
marked with several tasks (that one run stubbed them all at once), and a stub run that
did not finish normally (a crash is charged to the task whose stub caused it).

With `--coupling`, each stubbed run runs every test of the chapter and reports the tests
of *other* tasks that fail too: points a student who skips that task also loses. With
one task plugged at a time there should be none; one that shows up means a test of one
task depends on what another task's test left behind (a cache, a module-level value, a
fixture shared between tests), and grading is not fair until it is fixed.

Each configuration is one pytest process; they run in parallel (the runs per task, if
any, after the others). A known-bad submission
is a directory of exercise files for one chapter (files it lacks come from the
solutions) and an `expect.toml`:

    chapter = 1                      # the chapter its files belong to
    lose = ["ch01.2"]                # tasks that must lose points
    exact = true                     # the default: no other task may lose points
    description = "jump targets off by one instruction"
"""

from __future__ import annotations

import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

from course.generate import check
from course.manifest import Chapter, ManifestError, Task, load_chapters, normalise_chapter
from course.mutant_records import record_problems
from course.runner import ChapterRun, RunConfig, run_many

BAD_KEYS = {"chapter", "lose", "exact", "description"}


@dataclass(frozen=True)
class BadSubmission:
    """A known-bad submission and the tasks it must lose."""

    name: str
    path: Path
    chapter: str
    lose: frozenset[str]
    exact: bool
    description: str


def bad_submissions(root: Path) -> list[BadSubmission]:
    """Every `tests/course/bad/<name>/expect.toml`, validated."""
    found = []
    for expect in sorted((Path(root) / "tests" / "course" / "bad").glob("*/expect.toml")):
        where = expect.relative_to(root).as_posix()
        try:
            data = tomllib.loads(expect.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as error:
            raise ManifestError(f"{where}: not valid TOML: {error}") from None
        if set(data) - BAD_KEYS or "chapter" not in data or not data.get("lose"):
            raise ManifestError(f"{where}: needs `chapter` and `lose = [...]` "
                                f"(optional: `exact`, `description`), nothing else")
        found.append(BadSubmission(
            name=expect.parent.name, path=expect.parent,
            chapter=normalise_chapter(str(data["chapter"])), lose=frozenset(data["lose"]),
            exact=bool(data.get("exact", True)), description=str(data.get("description", ""))))
    return found


class Findings:
    """Lines of the report and a count of problems."""

    def __init__(self) -> None:
        self.problems = 0

    def ok(self, text: str) -> None:
        print(f"  ok    {text}")

    def fail(self, text: str) -> None:
        self.problems += 1
        print(f"  FAIL  {text}")

    def warn(self, text: str) -> None:
        print(f"  warn  {text}")


def verify(root: Path, names: list[str] | None = None, *, jobs: int | None = None,
           timeout: float = 60, coupling: bool = False, warm: bool = True) -> int:
    """Run every check on the named chapters (default: all); 0 when all hold."""
    started = time.perf_counter()
    chapters = load_chapters(root, names)
    if not chapters:
        print("verify: no chapter has a manifest yet (exercises/chNN/manifest.toml)")
        return 0
    by_name = {chapter.name: chapter for chapter in chapters}
    bad = [b for b in bad_submissions(root) if b.chapter in by_name]
    configs = []
    for chapter in chapters:
        configs.append(RunConfig(chapter, impl="solution", timeout=timeout, label="solution"))
        if coupling:
            configs += _alone(chapter, chapter.tasks, timeout, coupling=True)
        else:
            configs.append(RunConfig(chapter, impl="stub", timeout=timeout, label="stubs"))
    configs += [RunConfig(by_name[b.chapter], impl="student", impl_dir=b.path, timeout=timeout,
                          label=f"bad:{b.name}") for b in bad]
    runs = _by_label(run_many(configs, jobs, warm=warm))
    if not coupling:
        again = [config for chapter in chapters for config in _alone(
            chapter, _needing_own_run(chapter, runs[chapter.name, "stubs"]), timeout)]
        runs.update(_by_label(run_many(again, jobs, warm=warm)))
        configs += again
    findings = Findings()
    for chapter in chapters:
        print(f"{chapter.name}  {chapter.title}")
        _check_fresh(chapter, findings)
        _check_mutants(chapter, findings)
        solution = runs[chapter.name, "solution"]
        _check_solution(chapter, solution, findings)
        for task in chapter.tasks:
            stubbed = runs.get((chapter.name, task.id)) or runs[chapter.name, "stubs"]
            _check_stub(task.id, solution, stubbed, findings)
        for submission in (b for b in bad if b.chapter == chapter.name):
            _check_bad(submission, runs[chapter.name, f"bad:{submission.name}"], findings)
    seconds = time.perf_counter() - started
    verdict = f"{findings.problems} problem(s)" if findings.problems else "all checks hold"
    print(f"verify: {verdict} ({len(chapters)} chapter(s), {len(configs)} pytest runs, "
          f"{seconds:.1f} s)")
    return 1 if findings.problems else 0


def _by_label(runs: list[ChapterRun]) -> dict[tuple[str, str], ChapterRun]:
    return {(run.config.chapter.name, run.config.label): run for run in runs}


def _alone(chapter: Chapter, tasks: list[Task], timeout: float, *,
           coupling: bool = False) -> list[RunConfig]:
    """One run per task: that task stubbed, the others from the solutions."""
    return [RunConfig(chapter, stub_task=task.id, all_tests=coupling, timeout=timeout,
                      label=task.id) for task in tasks]


def _needing_own_run(chapter: Chapter, stubs: ChapterRun) -> list[Task]:
    """The tasks the run with every stub loaded cannot judge alone: all of them if it did
    not finish normally, else those with a test also marked with another task."""
    if stubs.problem:
        return list(chapter.tasks)
    shared = {task for test in stubs.tests if len(test.tasks) > 1 for task in test.tasks}
    return [task for task in chapter.tasks if task.id in shared]


def _check_fresh(chapter: Chapter, findings: Findings) -> None:
    report = check([chapter])
    if report.failed:
        for line in report.lines:
            findings.fail(line)
    else:
        findings.ok("generated files are fresh")


def _check_mutants(chapter: Chapter, findings: Findings) -> None:
    problems = record_problems(chapter)
    for problem in problems:
        findings.fail(problem)
    if not problems:
        findings.ok("the mutation record is fresh and explains every survivor")


def _check_solution(chapter: Chapter, run: ChapterRun, findings: Findings) -> None:
    if run.problem:
        findings.fail(f"solutions: {run.problem}")
    if not run.tests:
        findings.fail(f"no graded tests were collected from exercises/{chapter.name}")
        return
    failing = [test for test in run.tests if test.outcome in ("failed", "error")]
    for test in failing:
        findings.fail(f"the solutions fail {test.nodeid}: {test.message}")
    for test in (t for t in run.tests if t.outcome == "skipped"):
        findings.warn(f"skipped on the solutions (it grades nothing here): {test.nodeid}: "
                      f"{test.message}")
    if not failing and not run.problem:
        findings.ok(f"the solutions pass all {len(run.tests)} graded tests")
    tested = {task for test in run.tests for task in test.tasks}
    untested = [task.id for task in chapter.tasks if task.id not in tested]
    if untested:
        findings.fail(f"no graded test is marked with {', '.join(untested)}")
    else:
        findings.ok("every task has graded tests")


def _check_stub(task_id: str, solution: ChapterRun, run: ChapterRun, findings: Findings) -> None:
    expected = [test.nodeid for test in solution.tests if task_id in test.tasks]
    if not expected:
        return
    if run.problem:
        findings.fail(f"{task_id} stubbed: {run.problem}")
        return
    passing = [test.nodeid for test in run.tests if test.passed and task_id in test.tasks]
    for nodeid in passing:
        findings.fail(f"{task_id} stubbed: a stub passes test {nodeid}")
    ran = {test.nodeid for test in run.tests if task_id in test.tasks}
    for nodeid in (n for n in expected if n not in ran):
        findings.fail(f"{task_id} stubbed: {nodeid} did not run")
    if not passing and ran >= set(expected):
        findings.ok(f"{task_id} stubbed: its {len(expected)} test(s) fail")
    if run.config.all_tests:
        _report_coupling(task_id, solution, run, findings)


def _report_coupling(task_id: str, solution: ChapterRun, run: ChapterRun,
                     findings: Findings) -> None:
    """Tests of other tasks that pass on the solutions but fail with `task_id` stubbed."""
    fine = {test.nodeid for test in solution.tests if test.passed}
    lost: dict[str, int] = {}
    for test in run.tests:
        if task_id not in test.tasks and test.nodeid in fine and not test.passed:
            for other in test.tasks:
                lost[other] = lost.get(other, 0) + 1
    if lost:
        counts = ", ".join(f"{count} of {other}" for other, count in sorted(lost.items()))
        findings.warn(f"{task_id} stubbed: also fails tests of other tasks ({counts}); "
                      f"a student who skips {task_id} loses those too")
    else:
        others = sum(task_id not in test.tasks for test in run.tests)
        findings.ok(f"{task_id} stubbed: no test of another task fails ({others} ran)")


def _check_bad(bad: BadSubmission, run: ChapterRun, findings: Findings) -> None:
    label = f"bad submission {bad.name}"
    if run.problem:
        findings.fail(f"{label}: {run.problem}")
        return
    known = {task for test in run.tests for task in test.tasks}
    for task in sorted(bad.lose - known):
        findings.fail(f"{label}: expect.toml names {task}, which no graded test checks")
    lost = run.tasks_losing_points()
    kept = sorted(bad.lose - lost)
    extra = sorted(lost - bad.lose) if bad.exact else []
    if kept:
        findings.fail(f"{label} should lose {', '.join(kept)} but scores full points on it")
    if extra:
        findings.fail(f"{label} also loses {', '.join(extra)} (set `exact = false` if intended)")
    if not kept and not extra:
        how = "exactly" if bad.exact else "at least"
        findings.ok(f"{label} loses {how} {', '.join(sorted(bad.lose))}")
