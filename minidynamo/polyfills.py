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

import contextlib
from typing import Any, Callable, Iterable, Iterator

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


def count_elements(mapping: Any, iterable: Iterable[Any], /) -> None:
    """collections._count_elements, which `Counter.update` calls: count into `mapping`."""
    get = mapping.get
    for element in iterable:
        mapping[element] = get(element, 0) + 1


def chain(*iterables: Iterable[Any]) -> Iterator[Any]:
    """itertools.chain: the items of each iterable in turn."""
    for iterable in iterables:
        yield from iterable


def islice(iterable: Iterable[Any], /, *bounds: Any) -> Iterator[Any]:
    """itertools.islice(iterable, stop) or (iterable, start, stop[, step]). Like the C
    version it takes no item past the last one it needs (a generator stays where it is)."""
    bounds_slice = slice(*bounds)
    wanted = 0 if bounds_slice.start is None else bounds_slice.start  # next item to yield
    step = 1 if bounds_slice.step is None else bounds_slice.step
    stop = bounds_slice.stop
    it = iter(iterable)
    taken = 0  # items taken from `it` so far
    while True:
        for _ in zip(range(wanted - taken), it):  # skip to `wanted`: zip asks range first
            taken += 1
        if taken < wanted or (stop is not None and taken >= stop):
            return
        for element in it:
            break
        else:
            return
        taken += 1
        yield element
        wanted = wanted + step if stop is None else min(wanted + step, stop)


def groupby(iterable: Iterable[Any], key: Callable[[Any], Any] | None = None) -> Iterator[Any]:
    """itertools.groupby: (key, group) for each run of items with equal keys. The groups
    share the one iterator: moving to the next key skips what is left of a group."""
    keyfunc = (lambda item: item) if key is None else key
    it = iter(iterable)
    exhausted = False

    def grouper(target_key: Any) -> Iterator[Any]:
        nonlocal current_value, current_key, exhausted
        yield current_value
        for current_value in it:
            current_key = keyfunc(current_value)
            if current_key != target_key:
                return
            yield current_value
        exhausted = True

    for current_value in it:
        break
    else:
        return
    current_key = keyfunc(current_value)
    while not exhausted:
        target_key = current_key
        group = grouper(target_key)
        yield current_key, group
        if current_key == target_key:  # the group was not read to its end: skip the rest
            for _ in group:
                pass


def accumulate(iterable: Iterable[Any], func: Callable[[Any, Any], Any] | None = None, *,
               initial: Any = None) -> Iterator[Any]:
    """itertools.accumulate: running totals (or running `func`), `initial` first."""
    it = iter(iterable)
    total = initial
    if initial is None:
        for total in it:
            break
        else:
            return
    yield total
    for element in it:
        total = total + element if func is None else func(total, element)
        yield total


def product(*iterables: Iterable[Any], repeat: int = 1) -> Iterator[tuple]:
    """itertools.product: the cartesian product, the last iterable varying fastest; the
    iterables are read when it is called, as itertools reads them."""
    pools = [tuple(pool) for pool in iterables] * repeat
    results = [()]
    for pool in pools:
        results = [result + (element,) for result in results for element in pool]
    return iter(results)


def zip_longest(*iterables: Iterable[Any], fillvalue: Any = None) -> Iterator[tuple]:
    """itertools.zip_longest: tuples until the longest iterable ends, `fillvalue` for
    the ones that ended first."""
    iterators = [iter(iterable) for iterable in iterables]
    active = len(iterators)
    while active:
        row = []
        for position, iterator in enumerate(iterators):
            if iterator is None:
                row.append(fillvalue)
                continue
            try:
                row.append(next(iterator))
            except StopIteration:
                iterators[position] = None
                active -= 1
                row.append(fillvalue)
        if active:
            yield tuple(row)


def combinations(iterable: Iterable[Any], r: int) -> Iterator[tuple]:
    """itertools.combinations: the r-length tuples of items, in order, without repeats."""
    if r < 0:
        raise ValueError("r must be non-negative")
    pool = tuple(iterable)
    chosen_indices = [()]
    for _ in range(r):
        chosen_indices = [chosen + (index,) for chosen in chosen_indices
                          for index in range(chosen[-1] + 1 if chosen else 0, len(pool))]
    return iter([tuple(pool[index] for index in chosen) for chosen in chosen_indices])


def chain_from_iterable(iterables: Iterable[Iterable[Any]], /) -> Iterator[Any]:
    """itertools.chain.from_iterable: the items of each iterable the argument yields."""
    for iterable in iterables:
        yield from iterable


def permutations(iterable: Iterable[Any], r: int | None = None) -> Iterator[tuple]:
    """itertools.permutations: the r-length orderings of the items, in the order of
    their positions (lexicographic over indices), each position used once."""
    pool = tuple(iterable)
    size = len(pool) if r is None else r
    if size < 0:
        raise ValueError("r must be non-negative")
    chosen_indices = [()] if size <= len(pool) else []
    for _ in range(size if size <= len(pool) else 0):
        chosen_indices = [chosen + (index,) for chosen in chosen_indices
                          for index in range(len(pool)) if index not in chosen]
    return iter([tuple(pool[index] for index in chosen) for chosen in chosen_indices])


def starmap(function: Callable[..., Any], iterable: Iterable[Any], /) -> Iterator[Any]:
    """itertools.starmap: `function(*args)` for each tuple of arguments."""
    for args in iterable:
        yield function(*args)


def pairwise(iterable: Iterable[Any], /) -> Iterator[tuple]:
    """itertools.pairwise: each item with the one after it."""
    iterator = iter(iterable)
    for previous in iterator:
        break
    else:
        return
    for item in iterator:
        yield previous, item
        previous = item


def compress(data: Iterable[Any], selectors: Iterable[Any]) -> Iterator[Any]:
    """itertools.compress: the items whose selector is true, until either ends."""
    for item, selector in zip(data, selectors):
        if selector:
            yield item


def takewhile(predicate: Callable[[Any], Any], iterable: Iterable[Any], /) -> Iterator[Any]:
    """itertools.takewhile: the items up to the first one the predicate rejects."""
    for item in iterable:
        if not predicate(item):
            return
        yield item


def dropwhile(predicate: Callable[[Any], Any], iterable: Iterable[Any], /) -> Iterator[Any]:
    """itertools.dropwhile: the items from the first one the predicate rejects on."""
    iterator = iter(iterable)
    for item in iterator:
        if not predicate(item):
            yield item
            break
    yield from iterator


def filterfalse(predicate: Callable[[Any], Any] | None, iterable: Iterable[Any], /
                ) -> Iterator[Any]:
    """itertools.filterfalse: the items the predicate (or truth, for None) rejects."""
    for item in iterable:
        if not (bool(item) if predicate is None else predicate(item)):
            yield item


def repeat(obj: Any, times: int | None = None) -> Iterator[Any]:
    """itertools.repeat: the object, `times` times or without end (read lazily)."""
    if times is None:
        while True:
            yield obj
    for _ in range(times):
        yield obj


def cycle(iterable: Iterable[Any], /) -> Iterator[Any]:
    """itertools.cycle: the items, then the same items again, without end."""
    saved = []
    for item in iterable:
        yield item
        saved.append(item)
    while saved:
        yield from saved


def count(start: Any = 0, step: Any = 1) -> Iterator[Any]:
    """itertools.count: start, start + step, ... without end (read lazily)."""
    value = start
    while True:
        yield value
        value += step


def object_init(self: Any, /) -> None:
    """object.__init__, reached by `super().__init__()` in a class without a base."""
    return None


# `a op b`: the method asked of the right operand when the left says NotImplemented,
# and how Python words the TypeError when neither answers
REFLECTED_OPERATORS = {
    "__add__": ("__radd__", "+"), "__sub__": ("__rsub__", "-"), "__mul__": ("__rmul__", "*"),
    "__truediv__": ("__rtruediv__", "/"), "__floordiv__": ("__rfloordiv__", "//"),
    "__mod__": ("__rmod__", "%"), "__pow__": ("__rpow__", "** or pow()"),
    "__matmul__": ("__rmatmul__", "@"), "__and__": ("__rand__", "&"),
    "__or__": ("__ror__", "|"), "__xor__": ("__rxor__", "^"),
    "__lshift__": ("__rlshift__", "<<"), "__rshift__": ("__rrshift__", ">>"),
    "__lt__": ("__gt__", "<"), "__le__": ("__ge__", "<="), "__gt__": ("__lt__", ">"),
    "__ge__": ("__le__", ">="), "__eq__": ("__eq__", "=="), "__ne__": ("__ne__", "!="),
}


# the builtin number types, whose operator methods decline any operand not a number
NUMBERS = (bool, int, float, complex)


def binary_operator(left: Any, right: Any, name: str, /) -> Any:
    """`left op right` for an object of a user class on either side, as CPython's
    `binary_op1` and `do_richcompare` run it: the right operand's reflected method first
    when its class is a subclass of the left's that overrides it; then the left's
    method; then the right's reflected one; each may say NotImplemented. If all do,
    `==` and `!=` compare identity, anything else is a TypeError. (object's own
    comparisons only ever say NotImplemented, or True for `==` of one object.)"""
    reflected, symbol = REFLECTED_OPERATORS[name]
    left_type, right_type = type(left), type(right)
    forward = operator_method(left_type, name)
    if left_type in NUMBERS and not issubclass(right_type, NUMBERS):
        forward = None  # `2 * obj`: int's methods say NotImplemented to other types
    backward = operator_method(right_type, reflected) if right_type is not left_type else None
    if backward is not None and issubclass(right_type, left_type) and (
            backward is not getattr(left_type, reflected, None)):
        result = backward(right, left)
        if result is not NotImplemented:
            return result
        backward = None
    if forward is not None:
        result = forward(left, right)
        if result is not NotImplemented:
            return result
    if backward is not None:
        result = backward(right, left)
        if result is not NotImplemented:
            return result
    if name == "__eq__":
        return left is right
    if name == "__ne__":
        return left is not right
    if symbol in ("<", "<=", ">", ">="):
        raise TypeError(f"'{symbol}' not supported between instances of "
                        f"'{left_type.__name__}' and '{right_type.__name__}'")
    raise TypeError(f"unsupported operand type(s) for {symbol}: "
                    f"'{left_type.__name__}' and '{right_type.__name__}'")


def operator_method(cls: type, name: str) -> Any:
    """The class's own method for an operator, None where object's answers NotImplemented
    (object's `__eq__` but for one object, which `binary_operator` falls back to) and
    `not_equal` where object's `__ne__` inverts the class's own `__eq__`."""
    method = getattr(cls, name, None)
    if method is not getattr(object, name, None):
        return method
    if name == "__ne__" and getattr(cls, "__eq__", None) is not object.__eq__:
        return not_equal
    return None


def not_equal(self: Any, other: Any, /) -> Any:
    """object.__ne__ of a class with its own `__eq__`: its answer inverted."""
    result = type(self).__eq__(self, other)
    return result if result is NotImplemented else not result


def object_eq(self: Any, other: Any, /) -> Any:
    """object.__eq__, reached by `self == other` on a class without `__eq__` (a module,
    a plain object). Python's `==` asks `other` in turn when this says NotImplemented,
    and falls back to identity when both do; a traced `==` asks this method alone, so it
    answers as `==` does: True for the same object, else what a class of `other` with
    its own `__eq__` says, else False."""
    if self is other:
        return True
    theirs = type(other).__eq__
    if theirs is not object.__eq__:
        result = theirs(other, self)
        if result is not NotImplemented:
            return result
    return False


def object_ne(self: Any, other: Any, /) -> Any:
    """object.__ne__, for a class that defines only `__eq__`: the inverse of `__eq__`
    (`functools.total_ordering`'s `self != other`)."""
    result = self.__eq__(other)
    if result is NotImplemented:
        return NotImplemented
    return not result


def sequence_iterator(sequence: Any, /) -> Iterator[Any]:
    """iter() of an object whose class has `__getitem__` and no `__iter__`: its items at
    0, 1, 2, ... until `__getitem__` raises IndexError (or StopIteration), as CPython's
    sequence iterator does."""
    index = 0
    while True:
        try:
            item = sequence[index]
        except (IndexError, StopIteration):
            return
        yield item
        index += 1


def object_repr(self: Any, /) -> str:
    """object.__repr__, as CPython's `object_repr` writes it: `<module.Qualname object at
    0x...>`, without the module for a builtins class. Tracing `id(self)` guards the
    object's identity; an object made while tracing has no address yet (a graph break)."""
    cls = type(self)
    module = cls.__module__
    if isinstance(module, str) and module != "builtins":
        return f"<{module}.{cls.__qualname__} object at {hex(id(self))}>"
    return f"<{cls.__qualname__} object at {hex(id(self))}>"


def object_str(self: Any, /) -> str:
    """object.__str__: the object's repr, by its class's `__repr__`."""
    return type(self).__repr__(self)


def sequence_eq(left: Any, right: Any, /) -> bool:
    """`left == right` for two lists (or two tuples) whose items are not all constants:
    equal lengths, and each pair the same object or equal, as CPython compares them. Two
    ints are only compared (`is` would add nothing to `==`): a size that is a symbol
    (`x.shape == y.shape`) has no identity to ask."""
    if len(left) != len(right):
        return False
    for mine, theirs in zip(left, right):
        if type(mine) is int and type(theirs) is int:
            if mine != theirs:
                return False
        elif not (mine is theirs or mine == theirs):
            return False
    return True


def sequence_contains(items: Any, value: Any, /) -> bool:
    """`value in items` for a list or tuple whose items are not all constants: an item
    that is the value or equals it, as CPython asks (two ints only compared: a symbol,
    `n in (1, 2)`, is guarded `n != 1`, `n != 2`, not made a number)."""
    for item in items:
        if type(item) is int and type(value) is int:
            if item == value:
                return True
        elif item is value or item == value:
            return True
    return False


def list_init(self: list, iterable: Any = (), /) -> None:
    """list.__init__, reached by `super().__init__(items)` in a list subclass: the list
    is emptied, then filled from the iterable."""
    self.clear()
    self.extend(iterable)


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


def attrgetter(*names: str) -> Callable[[Any], Any]:
    """operator.attrgetter: one dotted name gives its value, several a tuple of them."""
    paths = [name.split(".") for name in names]

    def get_path(obj: Any, path: list[str]) -> Any:
        for part in path:
            obj = getattr(obj, part)
        return obj

    if len(paths) == 1:
        path = paths[0]

        def get_one(obj: Any) -> Any:
            return get_path(obj, path)

        return get_one

    def get_many(obj: Any) -> tuple:
        return tuple([get_path(obj, path) for path in paths])

    return get_many


def methodcaller(name: str, /, *args: Any, **kwargs: Any) -> Callable[[Any], Any]:
    """operator.methodcaller: calls the method `name` of its operand with these arguments."""

    def call(obj: Any) -> Any:
        return getattr(obj, name)(*args, **kwargs)

    return call


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


def ignored_profiler_context(*args: Any, **kwargs: Any) -> Any:
    """`torch.profiler.record_function(name)` or `torch.profiler.profile(...)` made while
    tracing: a context manager that does nothing, as TorchDynamo ignores them (an
    optimizer's `step` enters one; its ops would work on a ScriptObject)."""
    return contextlib.nullcontext()
