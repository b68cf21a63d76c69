"""`python -m course release --out DIR`: the student edition, with no answers in it.

The release is the repository's files (git's view) without `solutions/` and without
`tests/course/` (the instructors' known-bad submissions), and with every exercise's body
in the *package* replaced by its stub, so no answer ships anywhere. The exercise files
are the generated stubs already, so its graded tests fail as shipped and pass once the
solution bodies are put back in `exercises/chNN/`. `--check [chNN ...]` proves exactly
that, inside the edition: every chapter (or the named ones) scores 0 as shipped and every
point of its manifest with the solutions put back. The edition's package must import
with every exercise stubbed, so the package may not call an exercise while it is
imported: a class body that makes handlers with an exercise's factory defers the call
to the handler's first run instead (minidynamo's `stack_op`, `generic_jump` and
dispatch table).
"""

from __future__ import annotations

import ast
import shutil
import tempfile
from pathlib import Path

from course.generate import check, is_stub, stub_text
from course.manifest import Chapter, load_chapters
from course.package import repo_files
from course.runner import ChapterRun, RunConfig, run_many
from course.source import read_module

LEFT_OUT = ("solutions/", "tests/course/")


def release(root: Path, out: Path, *, check_round_trip: bool = False,
            names: list[str] | None = None) -> int:
    """Write the student edition of `root` into `out` (new or empty); with
    `check_round_trip`, check it on the named chapters (default: all)."""
    root, out = Path(root).resolve(), Path(out).resolve()
    chapters = load_chapters(root)
    stale = check(chapters)
    if stale.failed:
        print("release: the generated files are stale; run `python -m course generate` first")
        print("\n".join(stale.lines))
        return 1
    if out.exists() and any(out.iterdir()):
        print(f"release: {out} is not empty; choose a new directory")
        return 1
    files = [name for name in repo_files(root) if not name.startswith(LEFT_OUT)]
    for name in files:
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / name, out / name)
    stubbed = stub_package(root, out, chapters)
    print(f"release: wrote {len(files)} files to {out}; {stubbed} package function(s) stubbed; "
          f"left out {', '.join(LEFT_OUT)}")
    if not check_round_trip:
        return 0
    problems = round_trip(root, out, names)
    print("\n".join(problems) or "release: graded tests fail as shipped and pass with the "
                                 "solutions put back")
    return 1 if problems else 0


def stub_package(root: Path, out: Path, chapters: list[Chapter]) -> int:
    """Replace each task's definition in `out`'s copy of the package by its stub."""
    by_module: dict[str, list] = {}
    for chapter in chapters:
        for task in chapter.tasks:
            by_module.setdefault(task.module, []).append(task)
    for module, tasks in by_module.items():
        source = read_module(root, module)
        lines = source.lines
        found = sorted(((source.definition(t.qualname), t) for t in tasks),
                       key=lambda pair: pair[0].start, reverse=True)
        for definition, task in found:
            lines[definition.start - 1:definition.end] = [stub_text(definition, task)]
        text = "".join(lines)
        ast.parse(text)   # a stubbed module must still be valid Python
        (out / source.path.relative_to(root)).write_text(text, encoding="utf-8")
    return sum(len(tasks) for tasks in by_module.values())


def round_trip(root: Path, out: Path, names: list[str] | None = None) -> list[str]:
    """Problems with the release: an answer left in its package, a graded test that passes
    as shipped, or one that fails with the solutions of `root` put in its exercise files.

    Every chapter's (or the named chapters') graded tests run inside the edition twice
    and each run's score is printed: as shipped (the stubs) each chapter must score 0,
    with the solutions put back every point of its manifest.
    """
    chapters = load_chapters(out, names)
    problems = [f"the release's package still answers {task.id} ({task.target})"
                for chapter in chapters for task in chapter.tasks
                if not is_stub(read_module(out, task.module).definition(task.qualname), task)]
    with tempfile.TemporaryDirectory(prefix="course-release-") as scratch:
        solved = Path(scratch) / "release"
        shutil.copytree(out, solved)
        for solution in sorted((root / "solutions").glob("ch*/*.py")):
            shutil.copyfile(solution, solved / "exercises" / solution.parent.name / solution.name)
        shipped = [RunConfig(chapter, impl="student") for chapter in chapters]
        solutions = [RunConfig(c, impl="student") for c in load_chapters(solved, names)]
        runs = run_many(shipped + solutions, warm=True)
    problems += scored(runs[:len(shipped)], "as shipped", full=False)
    problems += scored(runs[len(shipped):], "with the solutions put back", full=True)
    return problems


def scored(runs: list[ChapterRun], label: str, *, full: bool) -> list[str]:
    """Print each run's score; return what is wrong with it: a test that passes (or, with
    `full`, fails), a run that stopped, a task whose points no collected test carries."""
    problems = []
    for run in runs:
        chapter = run.config.chapter
        earned = round(sum(t.points for t in run.tests if t.passed), 2)
        print(f"release: {chapter.name} {label}: {earned:.2f} / {chapter.points:.2f}")
        wrong = [t for t in run.tests if t.passed != full]
        verdict = "fails with the solutions put back" if full else "passes as shipped"
        problems += [f"{verdict}: {t.nodeid}" + (f": {t.message}" if full else "")
                     for t in wrong]
        if run.problem:
            problems.append(f"{chapter.name} {label}: {run.problem}")
        counted = round(sum(t.points for t in run.tests), 2)
        if counted != chapter.points:
            problems.append(f"{chapter.name} {label}: its tests carry {counted:g} of the "
                            f"manifest's {chapter.points:g} points")
    return problems
