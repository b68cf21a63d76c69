"""The pytest plugin behind `pytest exercises/chNN`: plug the code in, share out points.

`exercises/conftest.py` enables it. When the run collects graded tests from
`exercises/chNN/`, the plugin loads that chapter's implementations before collection
(`course/plugging.py`):

    --impl=student    the files in exercises/chNN (the default)
    --impl=solution   the files in solutions/chNN
    --impl=stub       fresh stubs, generated in memory

and plugs them in one task at a time: while a test marked `@pytest.mark.task("ch01.2")`
runs (its fixtures included), only ch01.2's implementation is in the package and every
other function is the reference, so a missing or broken task costs that task's points
and no others. The files are loaded once; around each test only references are swapped
(a few milliseconds), and not at all between consecutive tests of the same task. Two
options plug everything at once instead, for the whole session:

    --together        every task of the chapters being run
    --cumulative      every chapter up to the last one being run: "your whole dynamo"

In a student edition, where the package's own bodies are stubs, every chapter is
plugged together whatever the options say: the student's other chapters stand in for
the answers the package does not have.

A graded test is marked `@pytest.mark.task("ch01.1")`; the task's points (from the
manifest) are split evenly among its tests, in whole hundredths that add up to exactly
the task's points (3 points over 7 tests: 0.43 each for the first six, 0.42 for the
last). A test that fails because a task is still a
stub, or could not be loaded, fails with one line naming the task instead of a
traceback. The summary at the end gives points per task. Graded tests run with the
package's `config.strict` set, where the package has one (`strict_mode`).

Internal options, used by `python -m course verify` and `grade`: `--stub-task=ID` (stub
exactly that task, take the rest from the solutions, run only its tests; with
`--all-tests`, run them all), `--impl-dir`
(take exercise files from a directory, the solutions for the others), `--course-log`
(a JSON-lines record of what was collected and how each test ended; it survives a crash)
and `--course-root`.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from course.generate import without_answers
from course.manifest import CHAPTER_NAME, Chapter, ManifestError, load_chapters, split_points
from course.plugging import IMPLS, ExerciseError, PlugError, Plugboard, choose

STUB_MESSAGE = re.compile(r"(ch\d\d\.\d+): (.*)", re.DOTALL)
SESSION = pytest.StashKey["CourseSession"]()
_ACTIVE: CourseSession | None = None   # the run's session, for hooks that get no config


# -- strict mode ---------------------------------------------------------------------------

def _package_config(package: str) -> object | None:
    """`<package>.config` (an attribute or a module), or None while it does not exist."""
    try:
        module = importlib.import_module(package)
    except ImportError:
        return None
    config = getattr(module, "config", None)
    if config is None:
        try:
            config = importlib.import_module(f"{package}.config")
        except ImportError:
            return None
    return config if hasattr(config, "strict") else None


@contextlib.contextmanager
def strict_mode(packages=("minidynamo",)):
    """Set `config.strict = True` in each package that has it, and restore it after."""
    saved = []
    for package in packages:
        config = _package_config(package)
        if config is not None:
            saved.append((config, config.strict))
            config.strict = True
    try:
        yield
    finally:
        for config, value in reversed(saved):
            config.strict = value


@pytest.fixture(name="strict_mode")
def strict_mode_fixture(request):
    """Explicit strict mode for a test (graded tests get it automatically)."""
    session = request.config.stash.get(SESSION, None)
    packages = ["minidynamo"]
    if session is not None and session.board.packages:
        packages = sorted(session.board.packages)
    with strict_mode(packages):
        yield


@pytest.fixture(autouse=True)
def _course_graded_strict(request):
    session = request.config.stash.get(SESSION, None)
    if session is None or request.node.nodeid not in session.records:
        yield
        return
    reset_packages(sorted(session.board.packages))
    with strict_mode(sorted(session.board.packages)):
        yield


def reset_packages(packages: list[str]) -> None:
    """Call each graded package's own `reset()`, if it has one, before a graded test: a
    package that caches compiled code (minidynamo's chapter 9) must not answer a test
    with an earlier test's entry, so each test traces what it checks."""
    for name in packages:
        module = sys.modules.get(name) or importlib.import_module(name)
        reset = getattr(module, "reset", None)
        if callable(reset):
            reset()


# -- the session ------------------------------------------------------------------------------

@dataclass
class TestRecord:
    """One graded test: its tasks, its share of their points, and how it ended."""

    nodeid: str
    chapter: str
    tasks: list[str]
    shares: dict[str, float] = field(default_factory=dict)   # task -> its points here
    points: float = 0.0
    outcome: str = ""           # passed, failed, error, skipped; "" until it has run
    message: str = ""
    problem: str = ""           # a marker problem that fails the test at setup

    __test__ = False


@dataclass
class CourseSession:
    """What the plugin knows about one pytest run."""

    root: Path
    selected: list[str]                    # chapters whose tests are being run
    impl: str
    cumulative: bool
    together: bool                         # --together or --cumulative: all for the run
    stub_task: str | None
    impl_dir: Path | None
    log_path: Path | None
    chapters: dict[str, Chapter] = field(default_factory=dict)
    board: Plugboard = field(default_factory=Plugboard)
    records: dict[str, TestRecord] = field(default_factory=dict)
    collection_errors: list[str] = field(default_factory=list)
    always: frozenset[str] = frozenset()   # tasks plugged for the whole run
    edition: bool = False                  # a student edition: the package has no answers

    def log(self, event: dict) -> None:
        if self.log_path is not None:
            with self.log_path.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(event) + "\n")

    def plugged_chapters(self, answerless: set[str]) -> list[Chapter]:
        """The selected chapters (all up to the last with --cumulative), and every chapter
        the package has no answers for (a student edition), whose code must come from
        the same place."""
        last = max(self.chapters[name].number for name in self.selected)
        return [c for c in self.chapters.values()
                if c.name in self.selected or (self.cumulative and c.number <= last)
                or c.name in answerless]

    def mode(self) -> str:
        """How the tasks are plugged, in words (for the header and the points summary)."""
        if self.cumulative:
            return "cumulative, all tasks together"
        if self.together:
            return "all tasks together"
        if self.edition:
            return "all tasks together (the package has no answers)"
        return "one task at a time"

    def tasks_for(self, item) -> frozenset[str]:
        """The tasks plugged while `item` runs: the run's own, and the test's if graded."""
        record = self.records.get(item.nodeid) if item is not None else None
        own = [task for task in record.tasks if task in self.board.plugs] if record else []
        return self.always.union(own)


def pytest_addoption(parser) -> None:
    group = parser.getgroup("course", "minidynamo course (graded exercises)")
    group.addoption("--impl", choices=IMPLS, default="student",
                    help="whose code to plug in: student (exercises/chNN, the default), "
                         "solution (solutions/chNN) or stub (fresh stubs); each graded "
                         "test gets only its own task's code, every other function is the "
                         "reference, so a missing task costs only its own points")
    group.addoption("--together", action="store_true",
                    help="plug every task of the chapter in for the whole run instead "
                         "(a test then also goes through the other tasks' code)")
    group.addoption("--cumulative", action="store_true",
                    help="plug every task of every chapter up to the one being run, "
                         "together for the whole run: your whole dynamo")
    group.addoption("--stub-task", metavar="ID", help="internal (verify): stub exactly this "
                    "task, take the rest from the solutions, run only its tests")
    group.addoption("--all-tests", action="store_true", help="internal (verify --coupling): "
                    "with --stub-task, run every test of the chapter")
    group.addoption("--impl-dir", metavar="DIR", help="internal (verify): exercise files from "
                    "DIR, the solutions for files it lacks")
    group.addoption("--course-log", metavar="FILE", help="internal (grade): JSON-lines record")
    group.addoption("--course-root", metavar="DIR", help="internal: the repository root")


def _find_root(config) -> Path:
    explicit = config.getoption("course_root")
    if explicit:
        return Path(explicit).resolve()
    for arg in config.args or ["."]:
        path = (config.invocation_params.dir / arg.split("::")[0]).resolve()
        for candidate in [path, *path.parents]:
            if candidate.name == "exercises":
                return candidate.parent
            if (candidate / "exercises" / "conftest.py").is_file():
                return candidate
    return config.rootpath


def _selected_chapters(config, root: Path) -> list[str]:
    """The chapters whose graded tests this run's arguments reach."""
    exercises = root / "exercises"
    names: set[str] = set()
    every = sorted(p.name for p in exercises.glob("ch*") if CHAPTER_NAME.fullmatch(p.name)
                   and (p / "manifest.toml").is_file())
    for arg in config.args or ["."]:
        path = (config.invocation_params.dir / arg.split("::")[0]).resolve()
        if path == exercises or exercises.is_relative_to(path):
            names.update(every)
        elif path.is_relative_to(exercises):
            first = path.relative_to(exercises).parts[0]
            names.update(name for name in every if name == first)
    return sorted(names)


def pytest_configure(config) -> None:
    config.addinivalue_line(
        "markers", "task(id): the exercise (manifest id, e.g. ch01.1) a graded test checks; "
                   "the test gets an equal share of the task's points (in whole hundredths)")
    root = _find_root(config)
    selected = _selected_chapters(config, root)
    if not selected:
        return
    impl_dir = config.getoption("impl_dir")
    log_path = config.getoption("course_log")
    config.stash[SESSION] = CourseSession(
        root=root, selected=selected, impl=config.getoption("impl"),
        cumulative=config.getoption("cumulative"), stub_task=config.getoption("stub_task"),
        together=config.getoption("together") or config.getoption("cumulative"),
        impl_dir=(config.invocation_params.dir / impl_dir).resolve() if impl_dir else None,
        log_path=Path(log_path) if log_path else None, board=Plugboard(root))


def pytest_report_header(config) -> list[str]:
    session = config.stash.get(SESSION, None)
    if session is None:
        return []
    how = f"--stub-task={session.stub_task}" if session.stub_task else f"impl={session.impl}"
    return [f"course: {', '.join(session.selected)} with {how}, {session.mode()} "
            f"(root {session.root})"]


def pytest_sessionstart(session) -> None:
    global _ACTIVE
    course = _ACTIVE = session.config.stash.get(SESSION, None)
    if course is None:
        return
    try:
        course.chapters = {c.name: c for c in load_chapters(course.root)}
        known = {t.id for name in course.selected for t in course.chapters[name].tasks}
        if course.stub_task is not None and course.stub_task not in known:
            raise pytest.UsageError(f"--stub-task={course.stub_task}: not a task of "
                                    f"{', '.join(course.selected)}")
        if str(course.root) not in sys.path:
            sys.path.insert(0, str(course.root))
        answerless = {c.name for c in course.chapters.values() if without_answers(c)}
        chapters = course.plugged_chapters(answerless)
        choices = choose(chapters, course.impl, stub_task=course.stub_task,
                         impl_dir=course.impl_dir)
        course.board.load(choices)
        # A task the package has no answer for cannot fall back on the reference: it is
        # plugged for the whole run (in a student edition, that is every task).
        course.edition = all(c.name in answerless for c in chapters)
        course.always = frozenset(task.id for c in chapters for task in c.tasks
                                  if course.together or c.name in answerless)
        course.board.plug(course.always)
    except (ManifestError, PlugError) as error:
        raise pytest.UsageError(f"course: {error}") from None


# -- collection: tasks, points, late namespaces ---------------------------------------------

def _chapter_of(course: CourseSession, path: Path) -> str | None:
    exercises = course.root / "exercises"
    if not Path(path).resolve().is_relative_to(exercises):
        return None
    first = Path(path).resolve().relative_to(exercises).parts[0]
    return first if first in course.chapters else None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session, config, items) -> None:
    course = config.stash.get(SESSION, None)
    if course is None:
        return
    for item in items:
        chapter = _chapter_of(course, item.path)
        if chapter is None:
            continue
        tasks = [arg for marker in item.iter_markers("task") for arg in marker.args]
        record = course.records[item.nodeid] = TestRecord(item.nodeid, chapter, tasks)
        known = {task.id for task in course.chapters[chapter].tasks}
        unknown = [task for task in tasks if task not in known]
        if unknown or not tasks:
            record.problem = (f"@pytest.mark.task({', '.join(map(repr, unknown))}): not a task of "
                              f"exercises/{chapter}/manifest.toml" if unknown else
                              "a graded test needs @pytest.mark.task(\"chNN.K\") to earn points")
        if getattr(item, "module", None) is not None:
            course.board.patch(vars(item.module))
    _patch_exercise_modules(course)
    _share_points(course)
    for item in items:
        record = course.records.get(item.nodeid)
        if record is not None:
            item.user_properties += [("task", ",".join(record.tasks)), ("points", record.points)]
    if course.stub_task is not None and not config.getoption("all_tests"):
        keep = [item for item in items if course.stub_task in getattr(
            course.records.get(item.nodeid), "tasks", [])]
        config.hook.pytest_deselected(items=[item for item in items if item not in keep])
        items[:] = keep
    course.log({"event": "collected", "impl": course.impl, "chapters": course.selected,
                "tests": [vars(course.records[item.nodeid]) for item in items
                          if item.nodeid in course.records],
                "errors": course.board.errors, "collection_errors": course.collection_errors})


def _patch_exercise_modules(course: CourseSession) -> None:
    """Let every swap reach the modules imported from exercises/ (a test module's helpers,
    like `samples.py`), not just the test modules: a name they imported from the package
    must follow what is plugged."""
    exercises = course.root / "exercises"
    for module in list(sys.modules.values()):
        file = getattr(module, "__file__", None)
        if file and Path(file).resolve().is_relative_to(exercises):
            course.board.patch(vars(module))


def pytest_collectreport(report) -> None:
    if report.failed and _ACTIVE is not None:
        error = str(report.longrepr).strip()[-1500:]
        _ACTIVE.collection_errors.append(f"{report.nodeid}: {error}")


def _share_points(course: CourseSession) -> None:
    """Each task's points, split among the tests marked with it in whole hundredths that
    add up to exactly the task's points (the first tests collected take the odd ones)."""
    points = {task.id: task.points
              for chapter in course.chapters.values() for task in chapter.tasks}
    marked: dict[str, list[TestRecord]] = {}
    for record in course.records.values():
        record.shares = dict.fromkeys(t for t in record.tasks if t in points)
        for task in record.shares:
            marked.setdefault(task, []).append(record)
    for task, records in marked.items():
        for record, share in zip(records, split_points(points[task], len(records))):
            record.shares[task] = share
    for record in course.records.values():
        record.points = round(sum(record.shares.values()), 2)


# -- running: each graded test with its own task plugged -----------------------------------

@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Plug the test's tasks in (on top of those plugged for the whole run) for its setup,
    call and teardown, and take them out after, unless the next test has the same ones."""
    course = item.config.stash.get(SESSION, None)
    if course is None:
        return (yield)
    tasks = course.tasks_for(item)
    course.board.plug(tasks)
    try:
        return (yield)
    finally:
        if nextitem is None or course.tasks_for(nextitem) != tasks:
            course.board.plug(course.always)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item) -> None:
    course = item.config.stash.get(SESSION, None)
    record = course.records.get(item.nodeid) if course else None
    if record is not None and record.problem:
        pytest.fail(record.problem, pytrace=False)


# -- reporting: short failures, outcomes, points ---------------------------------------------

class ShortFailure:
    """A failure shown as one line instead of a traceback."""

    @dataclass
    class Crash:
        message: str

    def __init__(self, message: str):
        self.message = message
        self.reprcrash = self.Crash(message)

    def toterminal(self, writer) -> None:
        writer.line(self.message)

    def __str__(self) -> str:
        return self.message


def short_message(error: BaseException) -> str | None:
    """One line for a failure caused by a stub or an unloadable task, else None."""
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, ExerciseError):
            return str(error)
        match = isinstance(error, NotImplementedError) and STUB_MESSAGE.fullmatch(str(error))
        if match:
            return f"{match.group(1)} is not implemented yet: {match.group(2)}"
        error = error.__cause__ or error.__context__
    return None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.failed and call.excinfo is not None:
        message = short_message(call.excinfo.value)
        if message is not None:
            report.longrepr = ShortFailure(message)
    return report


def pytest_runtest_logstart(nodeid, location) -> None:
    course = _course_of_node(nodeid)
    if course is not None:
        course.log({"event": "start", "nodeid": nodeid})


def pytest_runtest_logreport(report) -> None:
    course = _course_of_node(report.nodeid)
    if course is None:
        return
    record = course.records[report.nodeid]
    if report.failed and record.outcome not in ("failed", "error"):
        record.outcome = "failed" if report.when == "call" else "error"
        record.message = _first_line(report)
    elif report.skipped and not record.outcome:
        record.outcome = "skipped"
        record.message = report.longrepr[2] if isinstance(report.longrepr, tuple) else "skipped"
    elif report.passed and report.when == "call" and not record.outcome:
        record.outcome = "passed"


def pytest_runtest_logfinish(nodeid, location) -> None:
    course = _course_of_node(nodeid)
    if course is not None:
        record = course.records[nodeid]
        course.log({"event": "result", "nodeid": nodeid, "outcome": record.outcome,
                    "message": record.message})


def _course_of_node(nodeid: str) -> CourseSession | None:
    """The run's session if `nodeid` is a graded test (the logging hooks get no config)."""
    return _ACTIVE if _ACTIVE is not None and nodeid in _ACTIVE.records else None


def _first_line(report) -> str:
    crash = getattr(report.longrepr, "reprcrash", None)
    text = crash.message if crash is not None else str(report.longrepr)
    lines = text.strip().splitlines()
    return lines[0][:500] if lines else "failed"


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    course = config.stash.get(SESSION, None)
    if course is None or not course.records:
        return
    writer = terminalreporter
    writer.section(f"points (impl={course.impl}, {course.mode()})")
    earned_total = max_total = 0.0
    for chapter in course.selected:
        for task in course.chapters[chapter].tasks:
            ran = [r for r in course.records.values()   # skipped tests count for nothing
                   if task.id in r.tasks and r.outcome not in ("", "skipped")]
            if not ran:
                continue
            maximum = sum(r.shares[task.id] for r in ran)
            earned = sum(r.shares[task.id] for r in ran if r.outcome == "passed")
            passed = sum(r.outcome == "passed" for r in ran)
            earned_total, max_total = earned_total + earned, max_total + maximum
            writer.write_line(f"{task.id:<9}{earned:6.2f} / {maximum:<6.2f}  "
                              f"{passed}/{len(ran)} tests  {task.title}")
    writer.write_line(f"{'total':<9}{earned_total:6.2f} / {max_total:<6.2f}")
    if course.board.errors:
        writer.write_line("")
        for message in course.board.errors.values():
            if "is not implemented" not in message:
                writer.write_line(message)


def pytest_sessionfinish(session, exitstatus) -> None:
    course = session.config.stash.get(SESSION, None)
    if course is not None:
        course.log({"event": "finished", "exitstatus": int(exitstatus)})


def pytest_unconfigure(config) -> None:
    course = config.stash.get(SESSION, None)
    if course is not None:
        course.board.close()
    global _ACTIVE
    _ACTIVE = None
