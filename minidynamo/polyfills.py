"""Polyfills: Python versions of C builtins, so the tracer can inline them (chapter 3).

`sum(parts)` is a C function: the tracer cannot step through it. Instead of
special-casing it, minidynamo traces the plain Python function below in its
place. Inlining it over a list of tensors records one `add` per item; over
constants it folds to a constant. The variable names matter: as in
TorchDynamo's polyfills, the loop stores each item in `element` and the running
total in `value`, and STORE_FAST names the graph's nodes after them.

Every function here must behave exactly like the builtin it replaces, for the
arguments minidynamo accepts.

Compare with TorchDynamo: `torch/_dynamo/polyfills/builtins.py` and
`polyfills/functools.py` (`sum` via `functools.reduce(operator.add, ...)`).
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

_MISSING = object()


def sum(iterable: Iterable[Any], /, start: Any = 0) -> Any:  # noqa: A001 (replaces the builtin)
    """builtins.sum: add the items to `start`, left to right."""
    value = start
    for element in iterable:
        value = value + element
    return value


def reduce(
    function: Callable[[Any, Any], Any], iterable: Iterable[Any], initial: Any = _MISSING, /
) -> Any:
    """functools.reduce: fold the items with `function`, left to right."""
    it = iter(iterable)
    if initial is _MISSING:
        value = next(it)
    else:
        value = initial
    for element in it:
        value = function(value, element)
    return value


def any(iterable: Iterable[Any], /) -> bool:  # noqa: A001
    """builtins.any."""
    for element in iterable:
        if element:
            return True
    return False


def all(iterable: Iterable[Any], /) -> bool:  # noqa: A001
    """builtins.all."""
    for element in iterable:
        if not element:
            return False
    return True


def object_init(self: Any, /) -> None:
    """object.__init__, reached by `super().__init__()` in a class without a base."""
    return None


def itemgetter(*items: Any) -> Callable[[Any], Any]:
    """operator.itemgetter, as a closure the tracer can call."""
    if len(items) == 1:
        item = items[0]

        def get_one(obj: Any) -> Any:
            return obj[item]

        return get_one

    def get_many(obj: Any) -> tuple:
        return tuple([obj[item] for item in items])

    return get_many


def attrgetter(name: str) -> Callable[[Any], Any]:
    """operator.attrgetter for one dotted name, as a closure."""
    parts = name.split(".")

    def get(obj: Any) -> Any:
        for part in parts:
            obj = getattr(obj, part)
        return obj

    return get


class GeneratorContextManager:
    """contextlib.contextmanager's `_GeneratorContextManager`, as plain Python (chapter 8).

    `@contextmanager` turns a generator function into a factory of these: `__enter__`
    runs the generator to its `yield`, `__exit__` runs it to its end, or throws the
    exception that left the `with` block into it at the `yield`, so its `try`/`finally`
    or `except` around the `yield` sees it. Traced, every step is the generator's
    own bytecode."""

    def __init__(self, gen: Any) -> None:
        self.gen = gen

    def __enter__(self) -> Any:
        try:
            return next(self.gen)
        except StopIteration:
            raise RuntimeError("generator didn't yield") from None

    def __exit__(self, typ: Any, value: Any, traceback: Any) -> bool:
        if typ is None:
            try:
                next(self.gen)
            except StopIteration:
                return False
            raise RuntimeError("generator didn't stop")
        try:
            self.gen.throw(value)
        except StopIteration as stopped:
            return stopped is not value  # the generator caught it: suppressed
        except BaseException as raised:
            if raised is value:
                return False  # the same exception goes on
            raise
        raise RuntimeError("generator didn't stop after throw()")


def contextmanager_call(func: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
    """What calling a `@contextlib.contextmanager` function does."""
    return GeneratorContextManager(func(*args, **kwargs))
