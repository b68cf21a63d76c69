"""`python -m course grade`: score a submission, chapter by chapter.

Each chapter runs in a fresh pytest process (`course/runner.py`) with a per-test
timeout: an infinite loop costs its test, a segfault costs its chapter's remaining
tests, and never the other chapters. Before running, each chapter's graded test files
are compared with the checksums recorded at generation; a modified, added or deleted
test file, or a `conftest.py` slipped into a chapter, is reported at the top of every
output. The reports are written by `course/reports.py`.
"""

from __future__ import annotations

from pathlib import Path

from course.generate import recorded_checksums, test_checksums
from course.manifest import Chapter, load_chapters
from course.reports import ChapterGrade, Grade, ScoredTest, text_report, write_reports
from course.runner import UNFINISHED, ChapterRun, RunConfig, run_many


def tampering(chapter: Chapter) -> list[str]:
    """Graded test files that differ from what was generated, and stray conftests."""
    where = f"exercises/{chapter.name}"
    recorded = recorded_checksums(chapter).get("tests")
    if recorded is None:
        return [f"{where}/.checksums.json is missing: modified graded tests cannot be detected"]
    current = test_checksums(chapter)
    found = []
    for name in sorted(set(recorded) | set(current)):
        if name not in current:
            found.append(f"graded test {where}/{name} was deleted")
        elif name not in recorded:
            found.append(f"{where}/{name} is not a graded test of the course (added)")
        elif current[name] != recorded[name]:
            found.append(f"graded test {where}/{name} was MODIFIED since generation "
                         f"(its checksum differs): its results cannot be trusted")
    if (chapter.directory / "conftest.py").exists():
        found.append(f"{where}/conftest.py is not part of the course and can change results")
    return found


def score_chapter(chapter: Chapter, run: ChapterRun, warnings: list[str]) -> ChapterGrade:
    """Turn a run into scored tests; a run that collected nothing scores each task zero."""
    graded = ChapterGrade(chapter, warnings=list(warnings), seconds=run.seconds)
    if run.problem:
        graded.warnings.append(f"{chapter.name}: {run.problem.splitlines()[0]}")
    for index, test in enumerate(run.tests, start=1):
        message, output = test.message, test.output
        if run.problem and test.message == UNFINISHED:
            message, output = f"no result: {run.problem.splitlines()[0]}", run.problem
        graded.tests.append(ScoredTest(
            number=f"{chapter.number}.{index}", nodeid=test.nodeid, shares=test.shares,
            status=_status(test.outcome), message=message, output=output,
            duration=test.duration))
    tested = {task for test in run.tests for task in test.tasks}
    for index, task in enumerate((t for t in chapter.tasks if t.id not in tested),
                                 start=len(graded.tests) + 1):
        reason = run.problem or "no graded test for this task was collected"
        graded.tests.append(ScoredTest(
            number=f"{chapter.number}.{index}", nodeid=f"exercises/{chapter.name}::{task.id}",
            shares={task.id: float(task.points)}, status="failed",
            message=f"{task.id} earned nothing: {reason.splitlines()[0]}", output=reason))
    for test in graded.tests:
        if test.status == "skipped":
            graded.warnings.append(f"{test.nodeid} was skipped ({test.message}); "
                                   f"it counts for no points")
    return graded


def _status(outcome: str) -> str:
    return {"passed": "passed", "skipped": "skipped"}.get(outcome, "failed")


def grade(root: Path, names: list[str] | None = None, *, impl: str = "student",
          out: Path = Path("grades"), timeout: float = 30, chapter_timeout: float = 1800,
          cumulative: bool = False, jobs: int = 1, warm: bool = True) -> int:
    """Grade the named chapters (default: all), write the reports to `out`, print the table."""
    chapters = load_chapters(root, names)
    if not chapters:
        print("grade: no chapter has a manifest yet (exercises/chNN/manifest.toml)")
        return 1
    warnings = {chapter.name: tampering(chapter) for chapter in chapters}
    configs = [RunConfig(chapter, impl=impl, cumulative=cumulative, timeout=timeout,
                         chapter_timeout=chapter_timeout) for chapter in chapters]
    runs = run_many(configs, jobs, warm=warm)
    result = Grade(impl, [score_chapter(run.config.chapter, run, warnings[run.config.chapter.name])
                          for run in runs])
    files = write_reports(result, out)
    print(text_report(result), end="")
    print(f"\nwrote {', '.join(str(path) for path in files.values())}")
    return 0
