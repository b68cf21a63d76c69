"""Plugging: swapping a chapter's functions into the live package, and back.

A student's file is not imported; it is executed in a namespace seeded with a copy of
the package module's globals, so an exercise can use every name the module uses, and
helpers the student adds see each other. From that namespace we take each task's
function (or, for a method, the function inside the file's bare `class Name:`).
Plugging a task in replaces every reference the package holds to the original object:
module attributes (the defining module and every `from x import f` re-export), class
attributes, and the dicts and lists they hold (dispatch tables, registries). Taking it
out is the same swap run backwards. A file that does not load, or lacks a task, does
not stop the run: the task gets a stand-in that raises `ExerciseError` naming the
problem, so it costs that task's tests only.

Loading and plugging are separate: `Plugboard.load` executes the files once, and
`Plugboard.plug(tasks)` makes exactly those tasks plugged (all of them by default),
as often as needed. That is what lets the pytest plugin plug one task per graded test
cheaply. Between plugs, the loaded files' namespaces see the reference too (each
file's own task functions are swapped out of it at load), so a student's function that
calls another task's function gets that task's plugged version only while that task is
plugged as well.
"""

from __future__ import annotations

import importlib
import linecache
import sys
import traceback
from collections.abc import Iterable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from types import ModuleType

from course.generate import render_exercise
from course.manifest import Chapter, Task

IMPLS = ("student", "solution", "stub")
WRAPPERS = (staticmethod, classmethod)


class ExerciseError(Exception):
    """Raised in place of a task whose code could not be loaded from its file."""


class PlugError(Exception):
    """The package cannot be plugged (the target is missing, or imported from elsewhere)."""


@dataclass(frozen=True)
class ImplFile:
    """One file of exercise code: where it is shown as coming from, and its text."""

    label: str               # e.g. "exercises/ch01/bytecode_scanner.py"
    module: str              # the package module whose globals it runs in
    text: str | None         # None when the file does not exist
    missing_hint: str = ""   # what to do when it does not exist


# -- choosing the code to plug ---------------------------------------------------------

def impl_file(chapter: Chapter, module: str, impl: str, impl_dir: Path | None = None) -> ImplFile:
    """The file of `impl` ("student", "solution" or "stub") for one module of a chapter."""
    name = chapter.modules()[module][0].file_name
    if impl == "stub":
        label = f"<stub exercises/{chapter.name}/{name}>"
        text = render_exercise(chapter, module)
        linecache.cache[label] = (len(text), None, text.splitlines(True), label)
        return ImplFile(label, module, text)
    if impl_dir is not None and (Path(impl_dir) / name).is_file():
        path = Path(impl_dir) / name
    elif impl == "student" and impl_dir is None:
        path = chapter.directory / name
    else:
        path = chapter.solution_directory / name
    hint = (f"run `python -m course generate {chapter.name}`" if "exercises" in path.parts
            else "this repository has no solution for it (a student edition?)")
    label = _relative(path, chapter.root)
    text = path.read_text(encoding="utf-8") if path.is_file() else None
    return ImplFile(label, module, text, hint)


def choose(chapters: list[Chapter], impl: str, *, stub_task: str | None = None,
           impl_dir: Path | None = None) -> list[tuple[Task, ImplFile]]:
    """Each task of `chapters` with the file its code comes from.

    `stub_task` stubs exactly that task and takes every other from the solutions;
    `impl_dir` takes files from a directory (a known-bad submission), the solutions
    for files it lacks.
    """
    choices = []
    for chapter in chapters:
        for module, tasks in chapter.modules().items():
            if stub_task is not None:
                solution = impl_file(chapter, module, "solution")
                stubbed = any(task.id == stub_task for task in tasks)
                stub = impl_file(chapter, module, "stub") if stubbed else None
                choices += [(task, stub if task.id == stub_task else solution) for task in tasks]
            else:
                chosen = impl_file(chapter, module, impl, impl_dir)
                choices += [(task, chosen) for task in tasks]
    return choices


# -- loading a file ----------------------------------------------------------------------

def load(impl: ImplFile, module: ModuleType) -> tuple[dict, str | None]:
    """Execute a file in a copy of `module`'s globals: (namespace, error message or None)."""
    namespace = dict(vars(module))
    if impl.text is None:
        return namespace, f"{impl.label} does not exist; {impl.missing_hint}"
    try:
        exec(compile(impl.text, impl.label, "exec", dont_inherit=True), namespace)
    except (Exception, SystemExit) as error:  # a student's file may raise anything
        return namespace, f"{impl.label}: {_describe(error, impl.label)}"
    return namespace, None


def _describe(error: BaseException, label: str) -> str:
    if isinstance(error, SyntaxError):
        return f"{type(error).__name__}: {error.msg} (line {error.lineno})"
    lines = [frame.lineno for frame in traceback.extract_tb(error.__traceback__)
             if frame.filename == label]
    where = f" (line {lines[-1]})" if lines else ""
    return f"{type(error).__name__}: {error}{where}"


def _original(task: Task, module: ModuleType) -> object:
    """The package's own object for a task, as stored (a staticmethod stays wrapped)."""
    owner = module if task.class_name is None else vars(module).get(task.class_name)
    if owner is None or task.name not in vars(owner):
        raise PlugError(f"{task.id}: {task.target} is not defined in {module.__name__}")
    return vars(owner)[task.name]


def _version(task: Task, namespace: dict, module: ModuleType) -> object | None:
    """The task's object defined by a loaded file, or None if the file lacks it."""
    if task.class_name is None:
        found = namespace.get(task.name)
        return found if found is not vars(module).get(task.name) and callable(found) else None
    bare = namespace.get(task.class_name)
    if not isinstance(bare, type) or bare is vars(module).get(task.class_name):
        return None
    return vars(bare).get(task.name)


def _stand_in(task: Task, message: str, original: object) -> object:
    """A function that fails naming why the task's code is not there, wrapped like the
    original (a staticmethod stays a staticmethod) so that it swaps back cleanly."""
    def not_loaded(*args, **kwargs):
        raise ExerciseError(message)
    not_loaded.__name__, not_loaded.__qualname__ = task.name, task.qualname
    return type(original)(not_loaded) if isinstance(original, WRAPPERS) else not_loaded


def _functions(raw: object) -> list[object]:
    """The plain functions inside a class attribute (staticmethod, classmethod, property)."""
    if isinstance(raw, WRAPPERS):
        return [raw.__func__]
    if isinstance(raw, property):
        return [f for f in (raw.fget, raw.fset, raw.fdel) if f is not None]
    return [raw]


def _pairs(old: object, new: object) -> dict[int, tuple[object, object]]:
    """The swap of `old` for `new`, and of the functions inside them (a staticmethod's
    function is also referenced bare, e.g. from a registry that took `Class.method`)."""
    pairs = {id(old): (old, new)}
    for inner_old, inner_new in zip(_functions(old), _functions(new)):
        if inner_old is not old:
            pairs[id(inner_old)] = (inner_old, inner_new)
    return pairs


def _adopt(raw: object, cls: type) -> None:
    """Make zero-argument super() in a method from a bare class see the real class."""
    for function in _functions(raw):
        code = getattr(function, "__code__", None)
        if code is not None and "__class__" in code.co_freevars and function.__closure__:
            function.__closure__[code.co_freevars.index("__class__")].cell_contents = cls


# -- swapping references -----------------------------------------------------------------

def _owned(name: object, packages: set[str]) -> bool:
    return isinstance(name, str) and any(name == p or name.startswith(p + ".") for p in packages)


def swap(mapping: dict[int, tuple[object, object]], roots: list[dict], packages: set[str]) -> None:
    """Replace every `old` by `new` (`mapping[id(old)] == (old, new)`) reachable from `roots`.

    Reachable: the root namespaces' values, the package's classes among them, and the
    dicts and lists those hold, three levels deep.
    """
    seen: set[int] = set()

    def visit(holder: object, depth: int) -> None:
        if id(holder) in seen:
            return
        seen.add(id(holder))
        if isinstance(holder, type):
            items, put = list(vars(holder).items()), partial(setattr, holder)
        elif isinstance(holder, dict):
            items, put = list(holder.items()), holder.__setitem__
        else:
            items, put = list(enumerate(holder)), holder.__setitem__
        for key, value in items:
            pair = mapping.get(id(value))
            if pair is not None and pair[0] is value:
                put(key, pair[1])
            elif depth < 3 and (isinstance(value, (dict, list)) or (isinstance(value, type)
                               and _owned(getattr(value, "__module__", None), packages))):
                visit(value, depth + 1)

    for root in roots:
        visit(root, 0)


@dataclass(frozen=True)
class Plug:
    """One loaded task: the package's object and the one that replaces it when plugged."""

    task: Task
    original: object
    new: object


class Plugboard:
    """One session's replacements: load them once, plug any of them in, take them out.

    `load(choices)` executes the files; `plug(tasks)` makes exactly `tasks` plugged
    (every loaded task when None), swapping only what changes; `unplug()` is `plug(())`;
    `patch(namespace)` adds a namespace created after loading (a test module) to those
    every swap reaches; `close()` unplugs and forgets the files.
    """

    def __init__(self, root: Path | None = None):
        self.root = Path(root).resolve() if root else None
        self._reset()

    def _reset(self) -> None:
        self.plugs: dict[str, Plug] = {}       # task id -> its swap, for every loaded task
        self.plugged: frozenset[str] = frozenset()   # the tasks plugged in now
        self.namespaces: list[dict] = []       # loaded files' namespaces
        self.patched: list[dict] = []          # other namespaces reached late (test modules)
        self.added: list[tuple[type, str]] = []
        self.packages: set[str] = set()
        self.sources: dict[str, str] = {}      # task id -> label of the file it came from
        self.errors: dict[str, str] = {}       # task id -> why its stand-in fails

    @property
    def loaded(self) -> bool:
        return bool(self.plugs)

    @property
    def active(self) -> bool:
        return bool(self.plugged)

    def load(self, choices: list[tuple[Task, ImplFile]]) -> None:
        """Load each distinct file once and prepare every task's swap; plug nothing."""
        if self.loaded:
            raise PlugError("already loaded; close first")
        loaded: dict[str, tuple[dict, str | None]] = {}
        for task, impl in choices:
            self.packages.add(task.package)
            if impl.label not in loaded:
                loaded[impl.label] = load(impl, self._import(impl.module))
        rest: dict[int, tuple[object, object]] = {}
        for task, impl in choices:
            self._choose(task, impl, loaded, rest)
        self.namespaces = [namespace for namespace, _ in loaded.values()]
        for task, _ in choices:     # the real classes again where files defined bare ones
            if task.class_name:
                real = vars(sys.modules[task.module])[task.class_name]
                for namespace in self.namespaces:
                    if namespace.get("__name__") == task.module:
                        namespace[task.class_name] = real
        swap(rest, self.namespaces, self.packages)   # at rest, the files see the reference

    def _choose(self, task: Task, impl: ImplFile, loaded: dict, rest: dict) -> None:
        module = sys.modules[task.module]
        original = _original(task, module)
        namespace, error = loaded[impl.label]
        new = None if error else _version(task, namespace, module)
        if error:
            self.errors[task.id] = f"{task.id} could not be loaded: {error}"
        elif new is None:
            kind = "method" if task.class_name else "function"
            self.errors[task.id] = (f"{task.id} is missing: {impl.label} defines no {kind} "
                                    f"{task.qualname}; keep the generated signature")
        else:
            if task.class_name:
                real = vars(module)[task.class_name]
                _adopt(new, real)
                self._adopt_helpers(namespace[task.class_name], real)
        if new is None:
            new = _stand_in(task, self.errors[task.id], original)
        self.sources[task.id] = impl.label
        self.plugs[task.id] = Plug(task, original, new)
        # each loaded file of the module may define the task (a stub file and a solution file
        # side by side with --stub-task): at rest, each of them sees the original
        versions = [_version(task, ns, module) for ns, _ in loaded.values()
                    if ns.get("__name__") == task.module]
        for version in filter(None, versions):
            rest.update(_pairs(version, original))

    def _adopt_helpers(self, bare: type, real: type) -> None:
        """Copy methods a student added to a bare class onto the real one (new names only)."""
        for name, value in vars(bare).items():
            if not name.startswith("__") and not hasattr(real, name):
                _adopt(value, real)
                setattr(real, name, value)
                self.added.append((real, name))

    def plug(self, tasks: Iterable[str] | None = None) -> None:
        """Make exactly `tasks` (default: every loaded task) plugged; the others reference."""
        wanted = frozenset(self.plugs) if tasks is None else frozenset(tasks)
        unknown = sorted(wanted - set(self.plugs))
        if unknown:
            raise PlugError(f"cannot plug {', '.join(unknown)}: not loaded")
        mapping: dict[int, tuple[object, object]] = {}
        for task_id in self.plugged - wanted:
            mapping.update(_pairs(self.plugs[task_id].new, self.plugs[task_id].original))
        for task_id in wanted - self.plugged:
            mapping.update(_pairs(self.plugs[task_id].original, self.plugs[task_id].new))
        if mapping:
            swap(mapping, self._package_namespaces() + self.namespaces + self.patched,
                 self.packages)
        self.plugged = wanted

    def unplug(self) -> None:
        """Put every original back where a plugged function is referenced (stay loaded)."""
        self.plug(())

    def patch(self, namespace: dict) -> None:
        """Reach a namespace created after loading: swap what is plugged into it now, and
        every later plug and unplug too."""
        if self.loaded and all(namespace is not ns for ns in self.patched):
            mapping: dict[int, tuple[object, object]] = {}
            for task_id in self.plugged:
                mapping.update(_pairs(self.plugs[task_id].original, self.plugs[task_id].new))
            if mapping:
                swap(mapping, [namespace], self.packages)
            self.patched.append(namespace)

    def close(self) -> None:
        """Unplug, take out the helper methods copied onto classes, forget the files."""
        self.unplug()
        for cls, name in reversed(self.added):
            if name in vars(cls):
                delattr(cls, name)
        self._reset()

    def _package_namespaces(self) -> list[dict]:
        return [vars(module) for name, module in list(sys.modules.items())
                if module is not None and _owned(name, self.packages)]

    def _import(self, name: str) -> ModuleType:
        module = importlib.import_module(name)
        path = Path(getattr(module, "__file__", "") or "").resolve()
        if self.root is not None and not path.is_relative_to(self.root):
            raise PlugError(f"{name} was imported from {path}, not from the repository at "
                            f"{self.root}; run pytest from the repository's root")
        return module


def _relative(path: Path, root: Path) -> str:
    try:
        return Path(path).resolve().relative_to(Path(root).resolve()).as_posix()
    except ValueError:
        return str(path)
