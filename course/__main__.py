"""`python -m course <command>`: the course machinery's command line.

    generate [chNN ...] [--force]        write stubs, solutions and checksums
    check [chNN ...]                     fail listing stale or missing generated files
    verify [chNN ...]                    solutions pass, stubs fail, known-bad submissions lose
    grade [chNN ...] --impl --out DIR    score a submission: report.txt, junit.xml,
                                         results.json (Gradescope), summary.md
    package gradescope [chNN ...]        a Gradescope autograder zip (--out FILE) [--check]
    import-submission DIR                copy a submission's exercise files into exercises/
    release --out DIR [--check chNN...]  a student edition: no solutions, no answers
    notebooks [--check] [--execute]      the chapters' lab notebooks (course/notebooks.py)
    mutants [chNN ...]                   mutation testing of the graded tests; records
                                         exercises/chNN/mutants.toml

Every command takes `--root DIR` (default: this repository).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from course.manifest import DEFAULT_ROOT, ManifestError, load_chapters
from course.source import SourceError


def _generate(args) -> int:
    from course.generate import generate
    report = generate(load_chapters(args.root, args.chapters), force=args.force)
    print("\n".join(report.lines) or "generate: everything is up to date")
    return 1 if report.failed else 0


def _check(args) -> int:
    from course.generate import check
    chapters = load_chapters(args.root, args.chapters)
    report = check(chapters)
    if report.failed:
        print("\n".join(report.lines))
        print(f"check: {len(report.lines)} generated file(s) stale or missing")
        return 1
    print(f"check: generated files are fresh ({len(chapters)} chapter(s))")
    return 0


def _verify(args) -> int:
    from course.verify import verify
    return verify(args.root, args.chapters, jobs=args.jobs, timeout=args.timeout,
                  coupling=args.coupling, warm=not args.no_fork)


def _grade(args) -> int:
    from course.grade import grade
    return grade(args.root, args.chapters, impl=args.impl, out=args.out, timeout=args.timeout,
                 chapter_timeout=args.chapter_timeout, cumulative=args.cumulative,
                 jobs=args.jobs, warm=not args.no_fork)


def _package(args) -> int:
    from course.package import build_gradescope, check_gradescope
    path = build_gradescope(args.root, args.out, args.chapters, timeout=args.timeout)
    print(f"wrote {path}")
    if not args.check:
        return 0
    problems = check_gradescope(args.root, path, args.chapters)
    print("\n".join(problems) or "gradescope check: the solutions score every point, "
                                 "the stubs none")
    return 1 if problems else 0


def _import_submission(args) -> int:
    from course.package import import_submission
    return import_submission(args.root, args.submission)


def _release(args) -> int:
    from course.release import release
    return release(args.root, args.out, check_round_trip=args.check,
                   names=args.chapters or None)


def _mutants(args) -> int:
    from course.mutant_records import mutants
    return mutants(args.root, args.chapters, tasks=args.task, jobs=args.jobs,
                   timeout=args.timeout, record=not args.no_record, show=args.show,
                   listing=args.list)


NO_FORK = ("start a new interpreter for every pytest run instead of forking this one "
           "after importing the package once (slower; for debugging)")


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--root", type=lambda p: Path(p).resolve(), default=DEFAULT_ROOT,
                        help="the repository (default: %(default)s)")
    parser = argparse.ArgumentParser(prog="python -m course", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True, metavar="command")

    def add(name: str, run, help: str) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, parents=[common], help=help, description=help)
        sub.set_defaults(run=run)
        return sub

    sub = add("generate", _generate, "write exercise stubs, solutions and test checksums")
    sub.add_argument("chapters", nargs="*", help="chapters (default: all), e.g. ch01")
    sub.add_argument("--force", action="store_true", help="overwrite edited exercise files")
    sub = add("check", _check, "fail if a generated file is stale or missing")
    sub.add_argument("chapters", nargs="*")
    sub = add("verify", _verify, "solutions pass, every stub fails its tests, bad submissions lose")
    sub.add_argument("chapters", nargs="*")
    sub.add_argument("--jobs", type=int, default=None, help="parallel pytest runs (default: CPUs)")
    sub.add_argument("--timeout", type=float, default=60, help="seconds per test (default: 60)")
    sub.add_argument("--coupling", action="store_true",
                     help="also report tests of other tasks that fail when one task is a stub")
    sub.add_argument("--no-fork", action="store_true", help=NO_FORK)
    sub = add("grade", _grade, "score a submission chapter by chapter")
    sub.add_argument("chapters", nargs="*")
    sub.add_argument("--impl", choices=["student", "solution", "stub"], default="student")
    sub.add_argument("--out", type=Path, default=Path("grades"), help="directory for the reports")
    sub.add_argument("--timeout", type=float, default=30, help="seconds per test (default: 30)")
    sub.add_argument("--chapter-timeout", type=float, default=1800,
                     help="seconds per chapter's whole run (default: 1800)")
    sub.add_argument("--cumulative", action="store_true", help="plug every chapter up to each one")
    sub.add_argument("--jobs", type=int, default=1, help="chapters graded in parallel")
    sub.add_argument("--no-fork", action="store_true", help=NO_FORK)
    sub = add("package", _package, "build a Gradescope autograder zip")
    sub.add_argument("kind", choices=["gradescope"])
    sub.add_argument("chapters", nargs="*", help="chapters it grades (default: all)")
    sub.add_argument("--out", type=Path, default=Path("dist/gradescope-autograder.zip"))
    sub.add_argument("--timeout", type=float, default=30, help="seconds per test (default: 30)")
    sub.add_argument("--check", action="store_true",
                     help="then run it as Gradescope would: the solutions score every point, "
                          "the stubs none")
    sub = add("import-submission", _import_submission,
              "copy a submission's exercise files into exercises/ (Gradescope's run_autograder)")
    sub.add_argument("submission", type=Path)
    sub = add("release", _release, "write a student edition: no solutions, package bodies stubbed")
    sub.add_argument("--out", type=Path, required=True)
    sub.add_argument("--check", action="store_true",
                     help="then prove it: tests fail as shipped, pass with the solutions put back")
    sub.add_argument("chapters", nargs="*", help="chapters --check runs (default: all)")
    sub = add("mutants", _mutants, "run mutants of every task's solution against its graded "
                                   "tests; report and record the survivors")
    sub.add_argument("chapters", nargs="*", help="chapters (default: all)")
    sub.add_argument("--task", action="append", help="only this task (repeatable)")
    sub.add_argument("--jobs", type=int, default=2, help="mutants run at once (default: 2)")
    sub.add_argument("--timeout", type=float, default=0,
                     help="seconds per mutant (default: 6 x the solution's, at least 4)")
    sub.add_argument("--no-record", action="store_true", help="do not write mutants.toml")
    sub.add_argument("--show", action="store_true", help="also list equivalent survivors")
    sub.add_argument("--list", action="store_true", help="list the mutants; run nothing")
    commands.add_parser("notebooks", help="the lab notebooks: [--check] [--execute] "
                                          "(course/notebooks.py parses its own options)")
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["notebooks"]:   # its own command line, written next to the notebooks
        from course.notebooks import main as notebooks
        return notebooks(argv[1:])
    args = build_parser().parse_args(argv)
    started = time.perf_counter()
    try:
        status = args.run(args)
    except (ManifestError, SourceError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.command == "grade":
        print(f"({args.command} took {time.perf_counter() - started:.1f} s)")
    return status


if __name__ == "__main__":
    sys.exit(main())
