"""The score sheet of a grading run and its four renderings.

`Grade` holds every scored test, chapter by chapter, with the warnings that make a
score untrustworthy (graded tests modified since generation, a chapter whose process
died). It is written as:

    report.txt     a text table, per task (also printed)
    junit.xml      one testsuite per chapter, one testcase per graded test
    results.json   Gradescope's format: score, max_score, tests[{name, number, score,
                   max_score, status, output, visibility}], output, visibility
    summary.md     per chapter and task points, failed tests, a warnings section

Points are whole hundredths: a task's points are split among its tests so that the
shares add up to exactly the task's points, so every total here is exact.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from course.manifest import Chapter, Task
from course.runner import junit_address


def total(points: Iterable[float]) -> float:
    """A sum of points, which are whole hundredths (manifest points and the tests'
    shares of them, `course.manifest.split_points`), without float noise."""
    return round(sum(points), 2)


@dataclass
class ScoredTest:
    """One graded test's result and points."""

    number: str                  # "1.3": chapter 1, its third test
    nodeid: str
    shares: dict[str, float]     # task -> the points this test carries for it
    status: str                  # passed, failed, skipped
    message: str = ""
    output: str = ""
    duration: float = 0.0

    @property
    def tasks(self) -> list[str]:
        return list(self.shares)

    @property
    def max_score(self) -> float:
        return 0.0 if self.status == "skipped" else total(self.shares.values())

    @property
    def score(self) -> float:
        return self.max_score if self.status == "passed" else 0.0

    @property
    def name(self) -> str:
        short = self.nodeid
        if short.startswith("exercises/"):
            short = short.split("/", 2)[-1]     # exercises/ch01/test_x.py -> test_x.py
        return f"[{', '.join(self.tasks)}] {short}"


@dataclass
class ChapterGrade:
    """A chapter's scored tests and what went wrong around them."""

    chapter: Chapter
    tests: list[ScoredTest] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def score(self) -> float:
        return total(test.score for test in self.tests)

    @property
    def max_score(self) -> float:
        return total(test.max_score for test in self.tests)

    def task_row(self, task: Task) -> tuple[float, float, int, int]:
        """(points earned, points possible, tests passed, tests counted) for one task."""
        mine = [t for t in self.tests if task.id in t.shares and t.status != "skipped"]
        earned = total(t.shares[task.id] for t in mine if t.status == "passed")
        return earned, total(t.shares[task.id] for t in mine), \
            sum(t.status == "passed" for t in mine), len(mine)


@dataclass
class Grade:
    """A whole grading run."""

    impl: str
    chapters: list[ChapterGrade]

    @property
    def score(self) -> float:
        return total(chapter.score for chapter in self.chapters)

    @property
    def max_score(self) -> float:
        return total(chapter.max_score for chapter in self.chapters)

    @property
    def warnings(self) -> list[str]:
        return [w for chapter in self.chapters for w in chapter.warnings]

    @property
    def tests(self) -> list[ScoredTest]:
        return [test for chapter in self.chapters for test in chapter.tests]


def _points(value: float) -> str:
    return f"{value:.2f}"


def _percent(grade: Grade) -> str:
    return f"{100 * grade.score / grade.max_score:.1f}%" if grade.max_score else "-"


def text_report(grade: Grade) -> str:
    lines = [f"course grade (impl={grade.impl}): {_points(grade.score)} / "
             f"{_points(grade.max_score)} ({_percent(grade)})", ""]
    lines += [f"WARNING: {warning}" for warning in grade.warnings]
    lines += [""] if grade.warnings else []
    lines.append(f"{'task':<9}{'tests':>7}  {'points':>15}  title")
    for chapter in grade.chapters:
        lines.append(f"{chapter.chapter.name}: {chapter.chapter.title}")
        for task in chapter.chapter.tasks:
            earned, possible, passed, counted = chapter.task_row(task)
            lines.append(f"{task.id:<9}{f'{passed}/{counted}':>7}  "
                         f"{_points(earned):>6} / {_points(possible):<6}  {task.title}")
        lines.append(f"{'':<9}{'':>7}  {_points(chapter.score):>6} / "
                     f"{_points(chapter.max_score):<6}  {chapter.chapter.name} total "
                     f"({chapter.seconds:.1f} s)")
    failed = [test for test in grade.tests if test.status != "passed"]
    if failed:
        lines += ["", "Tests that earned nothing:"]
        lines += [f"  {t.number:<6}{t.name}: {t.message or t.status}" for t in failed]
    return "\n".join(lines) + "\n"


def gradescope_results(grade: Grade) -> dict:
    """Gradescope's results.json: the top-level score plus one entry per test."""
    header = "".join(f"WARNING: {warning}\n" for warning in grade.warnings)
    return {
        "score": round(grade.score, 4),
        "max_score": round(grade.max_score, 4),
        "output": header + f"Score: {_points(grade.score)} / {_points(grade.max_score)}",
        "visibility": "visible",
        "stdout_visibility": "visible",
        "tests": [{
            "name": test.name,
            "number": test.number,
            "score": round(test.score, 4),
            "max_score": round(test.max_score, 4),
            "status": "passed" if test.status == "passed" else "failed",
            "output": _test_output(test),
            "visibility": "visible",
        } for test in grade.tests],
    }


def _test_output(test: ScoredTest) -> str:
    if test.status == "passed":
        return ""
    if test.output.strip() in ("", test.message.strip()):
        return test.message
    return f"{test.message}\n\n{test.output}"[:8000]


def junit_xml(grade: Grade) -> str:
    suites = ElementTree.Element("testsuites", name="course grade", tests=str(len(grade.tests)))
    for chapter in grade.chapters:
        suite = ElementTree.SubElement(
            suites, "testsuite", name=chapter.chapter.name, tests=str(len(chapter.tests)),
            failures=str(sum(t.status == "failed" for t in chapter.tests)),
            skipped=str(sum(t.status == "skipped" for t in chapter.tests)), errors="0",
            time=f"{chapter.seconds:.3f}")
        properties = ElementTree.SubElement(suite, "properties")
        for name, value in [("title", chapter.chapter.title), ("score", round(chapter.score, 4)),
                            ("max_score", round(chapter.max_score, 4)), ("impl", grade.impl),
                            *[("warning", w) for w in chapter.warnings]]:
            ElementTree.SubElement(properties, "property", name=name, value=str(value))
        for test in chapter.tests:
            classname, name = junit_address(test.nodeid)
            case = ElementTree.SubElement(suite, "testcase", classname=classname, name=name,
                                          time=f"{test.duration:.3f}")
            props = ElementTree.SubElement(case, "properties")
            for key, value in [("task", ",".join(test.tasks)), ("number", test.number),
                               ("score", round(test.score, 4)),
                               ("max_score", round(test.max_score, 4))]:
                ElementTree.SubElement(props, "property", name=key, value=str(value))
            if test.status in ("failed", "skipped"):
                tag = "failure" if test.status == "failed" else "skipped"
                ElementTree.SubElement(case, tag, message=test.message).text = test.output
    ElementTree.indent(suites)
    text = ElementTree.tostring(suites, "unicode")
    return f'<?xml version="1.0" encoding="utf-8"?>\n{text}\n'


def summary_markdown(grade: Grade) -> str:
    lines = [f"# Grade: {_points(grade.score)} / {_points(grade.max_score)} ({_percent(grade)})",
             "", f"Code graded: `{grade.impl}`.", ""]
    if grade.warnings:
        lines += ["> [!WARNING]", *[f"> - {w}" for w in grade.warnings], ""]
    for chapter in grade.chapters:
        lines += [f"## {chapter.chapter.name}: {chapter.chapter.title} "
                  f"({_points(chapter.score)} / {_points(chapter.max_score)})", "",
                  "| task | title | tests passed | points |", "|---|---|---|---|"]
        for task in chapter.chapter.tasks:
            earned, possible, passed, counted = chapter.task_row(task)
            lines.append(f"| {task.id} | {task.title} | {passed} / {counted} | "
                         f"{_points(earned)} / {_points(possible)} |")
        failed = [test for test in chapter.tests if test.status != "passed"]
        if failed:
            lines += ["", "Tests that earned nothing:", ""]
            lines += [f"- {t.number} `{t.name}`: {_one_line(t.message or t.status)}"
                      for t in failed]
        lines.append("")
    lines += ["## Warnings", ""]
    lines += [f"- {w}" for w in grade.warnings] or ["None: every graded test file matches its "
                                                    "checksum and every chapter ran to the end."]
    return "\n".join(lines) + "\n"


def _one_line(text: str) -> str:
    first = text.strip().splitlines()[0] if text.strip() else ""
    return first.replace("|", "\\|")[:300]


def write_reports(grade: Grade, out: Path) -> dict[str, Path]:
    """Write the four files into `out`; return their paths by kind."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    files = {
        "report.txt": text_report(grade),
        "junit.xml": junit_xml(grade),
        "results.json": json.dumps(gradescope_results(grade), indent=2) + "\n",
        "summary.md": summary_markdown(grade),
    }
    for name, text in files.items():
        (out / name).write_text(text, encoding="utf-8")
    return {name: out / name for name in files}
