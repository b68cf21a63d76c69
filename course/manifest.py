"""Chapter manifests: which package functions are a chapter's exercises.

`exercises/chNN/manifest.toml` lists a chapter's tasks:

    chapter = 1
    title = "The bytecode scanner"

    [[task]]
    id = "ch01.1"                                                 # chapter.task
    target = "minidynamo.bytecode.scanner:resolve_jump_targets"   # module:qualname
    points = 3
    title = "Resolve jump targets to instructions"

A target is a module-level function (`module:function`) or a method defined in a
module-level class (`module:Class.method`). Loading checks every field, rejects unknown
keys and duplicate ids or targets, and checks that each target is defined in the
package's source, so a renamed function fails here with a message that says what to fix.
"""

from __future__ import annotations

import re
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

from course.source import SourceError, read_module

DEFAULT_ROOT = Path(__file__).resolve().parent.parent
CHAPTER_NAME = re.compile(r"ch(\d\d)")
TASK_ID = re.compile(r"ch(\d\d)\.([1-9]\d*)")
TARGET = re.compile(r"(?P<module>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)"
                    r":(?P<qualname>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)?)")
CHAPTER_KEYS = {"chapter", "title", "task"}
TASK_KEYS = {"id", "target", "points", "title"}


class ManifestError(Exception):
    """A manifest that cannot be used; the message names the file and what to fix."""


@dataclass(frozen=True)
class Task:
    """One exercise: a package function or method the student writes."""

    id: str          # "ch01.1"
    target: str      # "minidynamo.bytecode.scanner:resolve_jump_targets"
    points: float
    title: str

    @property
    def module(self) -> str:
        return self.target.partition(":")[0]

    @property
    def qualname(self) -> str:
        return self.target.partition(":")[2]

    @property
    def name(self) -> str:
        """The function's or method's own name."""
        return self.qualname.rpartition(".")[2]

    @property
    def class_name(self) -> str | None:
        """The class that holds a method, or None for a module-level function."""
        owner = self.qualname.rpartition(".")[0]
        return owner or None

    @property
    def package(self) -> str:
        return self.module.partition(".")[0]

    @property
    def file_name(self) -> str:
        return exercise_file_name(self.module)

    @property
    def chapter(self) -> str:
        return self.id.partition(".")[0]


@dataclass(frozen=True)
class Chapter:
    """A chapter's manifest, resolved against a repository root."""

    name: str        # "ch01"
    number: int
    title: str
    tasks: tuple[Task, ...]
    root: Path

    @property
    def directory(self) -> Path:
        return self.root / "exercises" / self.name

    @property
    def solution_directory(self) -> Path:
        return self.root / "solutions" / self.name

    @property
    def points(self) -> float:
        return sum(task.points for task in self.tasks)

    def modules(self) -> dict[str, list[Task]]:
        """Tasks grouped by package module, in manifest order."""
        grouped: dict[str, list[Task]] = {}
        for task in self.tasks:
            grouped.setdefault(task.module, []).append(task)
        return grouped

    def task(self, task_id: str) -> Task:
        for task in self.tasks:
            if task.id == task_id:
                return task
        raise KeyError(f"{task_id} is not a task of {self.name}")


def split_points(points: float, count: int) -> list[float]:
    """`points` in `count` shares of whole hundredths that add up to exactly `points`;
    the hundredths left over go one each to the first shares (3 in 7: 0.43 x 6, 0.42)."""
    whole, left_over = divmod(round(points * 100), count)
    return [(whole + (index < left_over)) / 100 for index in range(count)]


def exercise_file_name(module: str) -> str:
    """`minidynamo.bytecode.scanner` -> `bytecode_scanner.py` (the package name dropped)."""
    return module.partition(".")[2].replace(".", "_") + ".py"


def normalise_chapter(name: str) -> str:
    """Accept `ch01`, `ch1`, `01` or `1` for chapter one."""
    match = re.fullmatch(r"(?:ch)?(\d{1,2})", name.strip())
    if not match:
        raise ManifestError(f"{name!r} is not a chapter; write it like ch01")
    return f"ch{int(match.group(1)):02d}"


def chapter_names(root: Path) -> list[str]:
    """Every `exercises/chNN` that has a manifest, in order."""
    exercises = Path(root) / "exercises"
    if not exercises.is_dir():
        return []
    return sorted(path.parent.name for path in exercises.glob("ch*/manifest.toml")
                  if CHAPTER_NAME.fullmatch(path.parent.name))


def load_chapters(root: Path = DEFAULT_ROOT, names: list[str] | None = None) -> list[Chapter]:
    """Load and validate the named chapters (default: all), checking across chapters too."""
    root = Path(root).resolve()
    available = chapter_names(root)
    wanted = available if not names else [normalise_chapter(name) for name in names]
    for name in wanted:
        if name not in available:
            known = ", ".join(available) or "none yet"
            raise ManifestError(f"{name}: no exercises/{name}/manifest.toml (chapters: {known})")
    chapters = [load_chapter(root, name) for name in wanted]
    _check_unique_targets(load_chapter(root, name) for name in available)
    return chapters


def load_chapter(root: Path, name: str) -> Chapter:
    """Parse `exercises/<name>/manifest.toml` and check its targets against the source."""
    root = Path(root).resolve()
    path = root / "exercises" / name / "manifest.toml"
    where = path.relative_to(root).as_posix()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise ManifestError(f"{where}: not valid TOML: {error}") from None
    chapter = _parse_chapter(data, name, where, root)
    for task in chapter.tasks:
        _check_target(root, task, where)
    return chapter


def _parse_chapter(data: dict, name: str, where: str, root: Path) -> Chapter:
    unknown = set(data) - CHAPTER_KEYS
    if unknown:
        raise ManifestError(f"{where}: unknown key(s) {sorted(unknown)}; "
                            f"a manifest has {sorted(CHAPTER_KEYS)}")
    number = int(CHAPTER_NAME.fullmatch(name).group(1))
    if data.get("chapter") != number:
        raise ManifestError(f"{where}: `chapter = {data.get('chapter')!r}` should be "
                            f"`chapter = {number}` (the directory is {name})")
    title = data.get("title")
    if not isinstance(title, str) or not title.strip():
        raise ManifestError(f"{where}: needs a `title = \"...\"`")
    entries = data.get("task", [])
    if not isinstance(entries, list) or not entries:
        raise ManifestError(f"{where}: lists no [[task]]")
    tasks = tuple(_parse_task(entry, name, where) for entry in entries)
    _check_duplicates(tasks, where)
    return Chapter(name=name, number=number, title=title, tasks=tasks, root=root)


def _parse_task(entry: dict, chapter: str, where: str) -> Task:
    task_id = entry.get("id")
    label = f"{where}: task {task_id!r}"
    unknown = set(entry) - TASK_KEYS
    if unknown:
        raise ManifestError(f"{label}: unknown key(s) {sorted(unknown)}; "
                            f"a task has {sorted(TASK_KEYS)}")
    if not isinstance(task_id, str) or not TASK_ID.fullmatch(task_id):
        raise ManifestError(f"{label}: an id is written {chapter}.K, e.g. {chapter}.1")
    if not task_id.startswith(chapter + "."):
        raise ManifestError(f"{label}: the id does not match the chapter; "
                            f"tasks of {chapter} are {chapter}.1, {chapter}.2, ...")
    target = entry.get("target")
    if not isinstance(target, str) or not TARGET.fullmatch(target) or "." not in target:
        raise ManifestError(f"{label}: target {target!r} should be 'package.module:function' "
                            f"or 'package.module:Class.method'")
    points = entry.get("points")
    if isinstance(points, bool) or not isinstance(points, (int, float)) or points <= 0:
        raise ManifestError(f"{label}: points must be a positive number, not {points!r}")
    if abs(points * 100 - round(points * 100)) > 1e-6:
        raise ManifestError(f"{label}: points are whole hundredths (so that the tests' "
                            f"shares add up exactly), not {points!r}")
    title = entry.get("title")
    if not isinstance(title, str) or not title.strip():
        raise ManifestError(f"{label}: needs a `title = \"...\"`")
    return Task(id=task_id, target=target, points=points, title=title)


def _check_duplicates(tasks: tuple[Task, ...], where: str) -> None:
    seen_ids: set[str] = set()
    seen_targets: dict[str, str] = {}
    for task in tasks:
        if task.id in seen_ids:
            raise ManifestError(f"{where}: duplicate task id {task.id}")
        seen_ids.add(task.id)
        if task.target in seen_targets:
            raise ManifestError(f"{where}: {task.id} and {seen_targets[task.target]} "
                                f"both target {task.target}")
        seen_targets[task.target] = task.id


def _check_target(root: Path, task: Task, where: str) -> None:
    """The package-side guard: the target must be defined where the manifest says."""
    file_stem = task.file_name.removesuffix(".py")
    if not file_stem or file_stem in sys.stdlib_module_names or file_stem.startswith("test_") \
            or file_stem == "conftest":
        raise ManifestError(f"{where}: task {task.id}: {task.module} would be written to "
                            f"exercises/{task.chapter}/{task.file_name}, a name that clashes "
                            f"with pytest or the standard library; target the defining module")
    try:
        read_module(root, task.module).definition(task.qualname)
    except SourceError as error:
        raise ManifestError(f"{where}: task {task.id}: unknown target {task.target}: {error}") \
            from None


def _check_unique_targets(chapters) -> None:
    owner: dict[str, str] = {}
    for chapter in chapters:
        for task in chapter.tasks:
            if task.target in owner:
                raise ManifestError(f"{task.target} is an exercise twice: "
                                    f"{owner[task.target]} and {task.id}")
            owner[task.target] = task.id
