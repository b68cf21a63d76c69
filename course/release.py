"""`python -m course release --out DIR`: the student edition, with no answers in it.

The release is the repository's files (git's view) without `solutions/` and without
`tests/course/` (the instructors' known-bad submissions), and with every exercise's body
in the *package* replaced by its stub, so no answer ships anywhere. The exercise files
are the generated stubs already, so its graded tests fail as shipped and pass once the
solution bodies are put back in `exercises/chNN/`. `--check` proves exactly that.
"""

from __future__ import annotations

import ast
import shutil
import tempfile
from pathlib import Path

from course.generate import check, is_stub, stub_text
from course.manifest import Chapter, load_chapters
from course.package import repo_files
from course.runner import RunConfig, run_many
from course.source import read_module

LEFT_OUT = ("solutions/", "tests/course/")


def release(root: Path, out: Path, *, check_round_trip: bool = False) -> int:
    """Write the student edition of `root` into `out` (new or empty)."""
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
    problems = round_trip(root, out)
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


def round_trip(root: Path, out: Path) -> list[str]:
    """Problems with the release: an answer left in its package, a graded test that passes
    as shipped, or one that fails with the solutions of `root` put in its exercise files."""
    chapters = load_chapters(out)
    problems = [f"the release's package still answers {task.id} ({task.target})"
                for chapter in chapters for task in chapter.tasks
                if not is_stub(read_module(out, task.module).definition(task.qualname), task)]
    shipped = run_many([RunConfig(chapter, impl="student") for chapter in chapters])
    for run in shipped:
        problems += [f"passes as shipped: {t.nodeid}" for t in run.tests if t.passed]
        if run.problem:
            problems.append(f"{run.config.chapter.name} as shipped: {run.problem}")
    with tempfile.TemporaryDirectory(prefix="course-release-") as scratch:
        solved = Path(scratch) / "release"
        shutil.copytree(out, solved)
        for solution in sorted((root / "solutions").glob("ch*/*.py")):
            shutil.copyfile(solution, solved / "exercises" / solution.parent.name / solution.name)
        for run in run_many([RunConfig(c, impl="student") for c in load_chapters(solved)]):
            problems += [f"fails with the solutions put back: {t.nodeid}: {t.message}"
                         for t in run.tests if not t.passed]
            if run.problem:
                problems.append(f"{run.config.chapter.name} with solutions: {run.problem}")
    return problems
