"""The cache: compiled code per code object, reused while its guards hold (chapter 9).

Every code object that minidynamo compiles (a compiled function, a function run
as its own frame after a break, a resume function) has one `FrameCache`: a
list of `CacheEntry`s, newest first. A call

1. binds its arguments to the frame's locals `L` with the frame's *binder*, a
   generated function with the same parameters that returns them as a dict
   (free variables included), so binding costs what a Python call costs;
2. tries each entry's check function `check(L, G)`; the first that holds runs
   its transformed code;
3. on a miss, traces again (a *recompile*), unless the code already has
   `config.recompile_limit` entries for this backend: then it warns once, naming
   the last failing guard, and runs the frame eagerly (or raises, with
   `config.fail_on_recompile_limit_hit`).

A frame that could not be compiled at all is marked `skip`: it runs eagerly on
every later call without being traced again, as TorchDynamo skips its code.

Entries are released when what they were compiled for dies: the function or
module given to `minidynamo.compile` (`owner`, held weakly), the backend, or the
code object itself (the caches are keyed by `id(code)`, forgotten by a
`weakref.finalize` on the code). Releasing an entry removes the globals its
code installed (`__compiled_fn_3`, `__resume_at_30_4`).

Compare with TorchDynamo: `torch/_dynamo/eval_frame.py` and the C++ cache in
`torch/csrc/dynamo/cache_entry.cpp` / `extra_state.cpp` (entries kept on the code
object, tried newest first), `convert_frame.py` (`recompile_limit`,
`is_recompilation`).
"""

from __future__ import annotations

import functools
import inspect
import itertools
import types
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable

from minidynamo.guards import CheckFunction
from minidynamo.shapes import FrameSizes

_frame_ids = itertools.count()


@dataclass(eq=False)
class CacheEntry:
    """One compiled version of a frame: its check, its transformed code, its globals."""

    check: CheckFunction
    code: types.CodeType
    backend_id: int  # id() of the backend; the entry is dropped when the backend dies
    fullgraph: bool
    compile_id: str  # "0/1": frame 0, its second compile (as TorchDynamo numbers them)
    f_globals: dict[str, Any]  # the module it was compiled in: its globals hold its graphs
    installed_globals: list[str] = field(default_factory=list)
    dynamic: bool | None = None  # compile's `dynamic` option (chapter 9)
    keep_alive: Any = None  # a backend that cannot be weakly referenced
    # weak references to its owner and its backend, whose callbacks drop the entry when
    # either dies; they die with the entry, so nothing of it outlives it
    lifelines: list[weakref.ref] = field(default_factory=list, repr=False)
    _runner: tuple[weakref.ref, types.FunctionType] | None = field(default=None, repr=False)

    def runner(self, fn: types.FunctionType,
               make: Callable[[types.FunctionType, types.CodeType], types.FunctionType],
               ) -> types.FunctionType:
        """`code` as a function in `fn`'s place (`make` is chapter 0's
        `function_with_code`), made once per `fn` and reused while its defaults are the
        same objects (its globals and closure cannot be replaced). Forgotten when `fn`
        dies: it holds `fn`'s cells."""
        if self._runner is not None:
            of, runner = self._runner
            if of() is fn and runner.__defaults__ is fn.__defaults__ and (
                    runner.__kwdefaults__ is fn.__kwdefaults__):
                return runner
        runner = make(fn, self.code)
        self._runner = weakref.ref(fn, _forgetting(self, "_runner")), runner
        return runner

    def release_globals_with(self, f_globals: dict[str, Any]) -> None:
        """Remove the installed globals from `f_globals` when this entry is collected."""
        hold_globals(self, f_globals, list(self.installed_globals))


def _forgetting(holder: Any, attribute: str) -> Callable[[weakref.ref], None]:
    """The callback of the weak reference kept with `holder.<attribute>`, a pair (weak
    reference to a function, what was made for it): forget the pair when the function
    dies, unless a newer pair replaced it. `holder` itself is held weakly."""
    holder_ref = weakref.ref(holder)

    def forget(dead: weakref.ref) -> None:
        current = holder_ref()
        pair = getattr(current, attribute, None) if current is not None else None
        if pair is not None and pair[0] is dead:
            setattr(current, attribute, None)
    return forget


# (id of a module's globals, name) -> how many live holders use that installed name: a
# resume function's global is shared by every entry whose code calls it
_holders: dict[tuple[int, str], int] = {}


def hold_globals(holder: Any, f_globals: dict[str, Any], names: list[str]) -> None:
    """The names installed in a module's globals for `holder` (an entry, a frame's native
    code): taken out when the last holder of each is collected, not the first."""
    for name in names:
        _holders[id(f_globals), name] = _holders.get((id(f_globals), name), 0) + 1
    weakref.finalize(holder, pop_globals, f_globals, list(names))  # holds f_globals: its id stays


def pop_globals(f_globals: dict[str, Any], names: list[str]) -> None:
    """A holder of these installed names is gone: take out those nothing else holds."""
    for name in names:
        key = (id(f_globals), name)
        left = _holders.pop(key, 1) - 1
        if left > 0:
            _holders[key] = left
        else:
            f_globals.pop(name, None)


class FrameCache:
    """The entries of one code object, newest first, and how to bind its arguments."""

    def __init__(self, code: types.CodeType) -> None:
        self.entries: list[CacheEntry] = []
        self.frame_id = next(_frame_ids)
        self.compiles = 0
        self.skip = False  # the frame could not be compiled: always run it eagerly,
        self.native_code: types.CodeType | None = None  # as this code, if set (callees routed)
        self.limit_warned = False
        self.failures: list[str] = []  # "0/1: n == 2" for each entry tried at each recompile
        self.sizes = FrameSizes()  # what its inputs' sizes were at each compile (chapter 9)
        self.finalizer: weakref.finalize | None = None  # forgets this cache with its code
        self.name = code.co_name
        self.location = f"{code.co_filename}:{code.co_firstlineno}"
        self._binder_code = binder_code(code)
        # free variables the binder cannot read itself: filled from the closure per call
        self._free_by_hand = code.co_freevars if not self._binder_code.co_freevars else ()
        # the binder made for the last function called (its defaults and closure): held
        # with a weak reference to that function, and forgotten when it dies
        self._binder: tuple[weakref.ref, Callable[..., dict[str, Any]]] | None = None

    def bind(self, fn: types.FunctionType, args: tuple, kwargs: dict[str, Any]) -> dict[str, Any]:
        """The frame's locals `L` for this call (TypeError for arguments fn would reject)."""
        binder = self._binder_for(fn)
        try:
            f_locals = binder(*args, **kwargs)
            for name, cell in zip(self._free_by_hand, fn.__closure__ or ()):
                f_locals[name] = cell.cell_contents
            return f_locals
        except (NameError, ValueError):  # an empty closure cell: leave that free variable out
            return dict(_bind_slowly(fn, args, kwargs))

    def _binder_for(self, fn: types.FunctionType) -> Callable[..., dict[str, Any]]:
        """The binder of `fn`: made once per function, reused while its defaults are the
        same objects (its closure cannot change)."""
        if self._binder is not None:
            of, binder = self._binder
            if of() is fn and binder.__defaults__ is fn.__defaults__ and (
                    binder.__kwdefaults__ is fn.__kwdefaults__):
                return binder
        closure = fn.__closure__ if self._binder_code.co_freevars else None
        binder = types.FunctionType(self._binder_code, {}, "___bind", fn.__defaults__, closure)
        binder.__kwdefaults__ = fn.__kwdefaults__
        self._binder = weakref.ref(fn, _forgetting(self, "_binder")), binder
        return binder

    def keep_globals(self, f_globals: dict[str, Any], names: list[str]) -> None:
        """Globals installed for `native_code`: removed when this cache is collected."""
        hold_globals(self, f_globals, names)

    def next_compile_id(self) -> str:
        compile_id = f"{self.frame_id}/{self.compiles}"
        self.compiles += 1
        return compile_id

    def add(self, entry: CacheEntry, backend: Any, owner: weakref.ref | None) -> None:
        """Add a new entry, first; it lives no longer than its owner and its backend."""
        self.entries.insert(0, entry)
        owner_object = owner() if owner is not None else None
        cache_ref, entry_ref = weakref.ref(self), weakref.ref(entry)
        for obj in (owner_object, getattr(backend, "__self__", backend)):
            if obj is None:
                continue
            # `drop` is bound now: at interpreter exit, this module's globals may already
            # be None when the callback runs
            try:
                entry.lifelines.append(
                    weakref.ref(obj, lambda dead, drop=_drop_entry: drop(cache_ref, entry_ref)))
            except TypeError:  # cannot be weakly referenced: keep it alive instead
                entry.keep_alive = obj

    def entries_for(self, backend: Any, fullgraph: bool, f_globals: dict[str, Any],
                    dynamic: bool | None = None) -> list[CacheEntry]:
        """The entries a call with this backend, mode and module could use."""
        return [e for e in self.entries if e.backend_id == id(backend)
                and e.fullgraph == fullgraph and e.dynamic is dynamic and e.f_globals is f_globals]


def _drop_entry(cache_ref: weakref.ref, entry_ref: weakref.ref) -> None:
    cache, entry = cache_ref(), entry_ref()
    if cache is not None and entry is not None and entry in cache.entries:
        cache.entries.remove(entry)


def binder_code(code: types.CodeType, with_free_variables: bool = True) -> types.CodeType:
    """The code of `___bind`: `code`'s parameters and free variables, returned as a dict.

    Generated as source, e.g. for `def f(x, n=2, *args, scale, **kw)` closing over `w`:

        def ___outer():
            w = None
            def ___bind(x, n, *args, scale, **kw):
                return {'x': x, 'n': n, 'scale': scale, 'args': args, 'kw': kw, 'w': w}

    so a binder made from it with `f`'s defaults and closure binds exactly as `f` does."""
    positional = code.co_varnames[: code.co_argcount]
    keyword_only = code.co_varnames[code.co_argcount: code.co_argcount + code.co_kwonlyargcount]
    rest = code.co_varnames[code.co_argcount + code.co_kwonlyargcount:]
    params = list(positional)
    if code.co_posonlyargcount:
        params.insert(code.co_posonlyargcount, "/")
    names = [*positional, *keyword_only]
    if code.co_flags & inspect.CO_VARARGS:
        params.append(f"*{rest[0]}")
        names.append(rest[0])
        rest = rest[1:]
    elif keyword_only:
        params.append("*")
    params += keyword_only
    if code.co_flags & inspect.CO_VARKEYWORDS:
        params.append(f"**{rest[0]}")
        names.append(rest[0])
    free = code.co_freevars if with_free_variables else ()
    names += free
    # a comprehension's code takes its iterator as `.0`, which no `def` can spell
    spelled = {name: name if name.isidentifier() else f"___arg{index}"
               for index, name in enumerate(names)}
    params = [spelled.get(param, param) for param in params]
    body = ", ".join(f"{name!r}: {spelled[name]}" for name in names)
    cells = "".join(f"    {name} = None\n" for name in free)
    source = (f"def ___outer():\n{cells}"
              f"    def ___bind({', '.join(params)}):\n        return {{{body}}}\n")
    bind_code = _compiled_binder(source)
    if bind_code.co_freevars != free:  # CPython ordered them differently (generated code)
        return binder_code(code, with_free_variables=False)
    return bind_code


@functools.lru_cache(maxsize=1024)
def _compiled_binder(source: str) -> types.CodeType:
    """The code of `___bind` in a binder's source (functions of one signature share it:
    a code object is immutable, and each binder gets its own defaults and closure)."""
    namespace: dict[str, Any] = {}
    exec(compile(source, "<minidynamo binder>", "exec"), namespace)
    return next(c for c in namespace["___outer"].__code__.co_consts if isinstance(c, types.CodeType))


def _bind_slowly(fn: types.FunctionType, args: tuple, kwargs: dict[str, Any]):
    bound = inspect.signature(fn, follow_wrapped=False).bind(*args, **kwargs)
    bound.apply_defaults()
    yield from bound.arguments.items()
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            yield name, cell.cell_contents
        except ValueError:
            pass


# One cache per code object, by identity (two code objects with the same contents compare
# equal, yet belong to different functions), released when the code object is collected.
caches: dict[int, FrameCache] = {}


def cache_of(code: types.CodeType) -> FrameCache:
    cache = caches.get(id(code))
    if cache is None:
        cache = caches[id(code)] = FrameCache(code)
        cache.finalizer = weakref.finalize(code, _forget, id(code), cache)
    return cache


def lookup(code: types.CodeType) -> FrameCache | None:
    """The cache of `code` if it has one (show_guards)."""
    return caches.get(id(code))


def _forget(code_id: int, cache: FrameCache) -> None:
    if caches.get(code_id) is cache:
        del caches[code_id]


def clear() -> None:
    """Forget every entry (minidynamo.reset); frames are numbered from 0 again."""
    global _frame_ids
    _frame_ids = itertools.count()
    for cache in list(caches.values()):
        cache.entries.clear()
        cache.finalizer.detach()
    caches.clear()
