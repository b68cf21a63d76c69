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
