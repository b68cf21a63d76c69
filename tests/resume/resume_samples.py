"""Functions to resume, each run with fixed arguments and a log of its side effects.

Every sample takes `log` (a list) first and records what it does there; the
harness compares the log and the outcome of the original run with those of a
run resumed at each instruction. The shapes cover what a resume function must
get right: branches and loops, NULLs in call sequences, closures and cells,
argument kinds, try/except/finally and `with` blocks around the resume point.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any, Callable


class Recorder:
    """A context manager that logs each `__enter__` and `__exit__`."""

    def __init__(self, log: list, name: str, suppress: bool = False):
        self.log, self.name, self.suppress = log, name, suppress

    def __enter__(self) -> str:
        self.log.append(("enter", self.name))
        return self.name

    def __exit__(self, kind, value, traceback) -> bool:
        self.log.append(("exit", self.name, kind and kind.__name__))
        return self.suppress


def straight_line(log, a, b):
    x = a * 2
    log.append(x)
    y = x + b
    log.append(y)
    return x - y * 3


def branches(log, n):
    if n > 2:
        log.append("big")
        result = n * 2
    elif n < 0:
        result = -n
    else:
        log.append("small")
        result = n
    return result + len(log)


def loops(log, n):
    total = 0
    for i in range(n):
        if i % 2:
            continue
        total += i
        log.append(total)
    while total > 3:
        total -= 3
    return total


def nested_loops(log, rows, cols):
    cells = []
    for row in range(rows):
        for col in range(cols):
            if col > row:
                break
            cells.append((row, col))
        log.append(len(cells))
    return cells


def calls_with_nulls(log, values):
    text = str(len(values)) + "/" + repr(max(values, key=abs))
    log.append(text.upper())
    return sorted(values, reverse=True)[0] + abs(min(values)) + divmod(sum(values), 3)[1]


def method_calls(log, words):
    joined = "-".join(word.strip() for word in words)
    log.append(joined.replace("-", "+").count("+"))
    return joined.split("-")[1:]


def deep_stack(log, a):
    return [a, a + 1, (a, [a * 2, {a: log.append(a) or a}]), str(a), log.append(-a)]


def arguments(log, a, b=2, *rest, scale=3, **options):
    total = a + b + sum(rest)
    log.append(sorted(options))
    return dict(total=total * scale, extra=options.get("extra", 0), n=len(rest))


def closures(log, n):
    base = n * 10

    def add(k):
        return base + k

    log.append(add(1))
    base = base + 5            # the closure made before the break must see this
    values = [add(i) for i in range(n)]
    log.append(values)
    return add(100)


def cell_argument(log, x):
    def get():
        return x

    log.append(get())
    x = x * 3
    return get() + x


def make_counter(step):
    count = 0

    def counter(log, times):
        nonlocal count
        for _ in range(times):
            count += step
            log.append(count)
        return count

    return counter


def try_except(log, items):
    total = 0
    for item in items:
        try:
            log.append(("try", item))
            total += 10 // item
        except ZeroDivisionError as error:
            log.append(("caught", str(error)))
            total -= 1
        else:
            log.append("else")
        finally:
            log.append("finally")
    return total


def try_finally_raise(log, x):
    try:
        log.append("body")
        if x > 1:
            raise ValueError(x)
        return x
    finally:
        log.append("cleanup")


def handler_after(log, mapping):
    try:
        value = mapping["a"]
        log.append(value)
        other = mapping["missing"]
        log.append(other)
    except KeyError as error:
        log.append(("key", error.args[0]))
        other = -1
    return value + other


def reraise_in_handler(log, n):
    try:
        try:
            raise ValueError(n)
        except ValueError:
            log.append(("handling", repr(sys.exc_info()[1])))
            if n > 1:
                raise
            log.append("swallowed")
        log.append(("after", repr(sys.exc_info()[1])))
    except ValueError as error:
        log.append(("outer", repr(error), repr(sys.exc_info()[1])))
    return repr(sys.exc_info()[1])


def chained_in_handler(log, n):
    try:
        try:
            log.append({}[n])
        except KeyError:
            log.append("key")
            try:
                raise TypeError(n)       # its __context__ is the KeyError
            finally:
                log.append(("finally", repr(sys.exc_info()[1])))
    except TypeError as error:
        log.append(("context", repr(error.__context__)))
    return n


def with_block(log, n):
    with Recorder(log, "outer") as name:
        log.append(name)
        total = n * 2
        log.append(total)
    return total + 1


def nested_with(log, n):
    with Recorder(log, "a"):
        with Recorder(log, "b") as b:
            log.append(b * n)
            if n > 5:
                raise IndexError(n)
        log.append("between")
    return n


def with_suppressing(log, n):
    with Recorder(log, "s", suppress=True):
        log.append("before")
        log.append(1 / (n - n))
        log.append("never")
    log.append("after")
    return n


def with_in_try(log, n):
    try:
        with Recorder(log, "t"):
            log.append(n)
            raise KeyError(n)
    except KeyError as error:
        log.append(("handled", error.args))
    return n + 1


def with_return_inside(log, n):
    with Recorder(log, "r"):
        for i in range(n):
            if i == 2:
                return i
            log.append(i)
    return -1


def comprehensions_after(log, n):
    x = n + 1
    log.append(x)
    squares = [i * i for i in range(x)]
    evens = {i: i % 2 for i in squares if i > 2}
    total = sum(v for v in evens.values())
    return squares, evens, total


def raising(log, n):
    log.append(n)
    value = n * 2
    return {"a": 1}[value]


def unbound_on_a_path(log, flag):
    if flag:
        y = 1
    log.append("x")
    return y


@dataclass
class Sample:
    """A function to resume and how to call it; `make` builds a fresh function each run."""

    name: str
    make: Callable[[], Callable]
    args: tuple
    kwargs: dict

    def setup(self) -> tuple[Callable, list, tuple, dict[str, Any]]:
        log: list = []
        return self.make(), log, self.args, self.kwargs


def sample(fn: Callable, *args, **kwargs) -> Sample:
    return Sample(fn.__name__, lambda: fn, args, kwargs)


SAMPLES = [
    sample(straight_line, 3, 4),
    sample(branches, 5), sample(branches, -2), sample(branches, 1),
    sample(loops, 7),
    sample(nested_loops, 3, 3),
    sample(calls_with_nulls, [3, -7, 2]),
    sample(method_calls, [" a", "b ", " c "]),
    sample(deep_stack, 4),
    sample(arguments, 1, 2, 3, 4, scale=2, extra=5, other=6),
    sample(closures, 3),
    sample(cell_argument, 5),
    Sample("counter", lambda: make_counter(2), (3,), {}),
    sample(try_except, [2, 0, 5]),
    sample(try_finally_raise, 1), sample(try_finally_raise, 2),
    sample(handler_after, {"a": 1}),
    sample(reraise_in_handler, 1), sample(reraise_in_handler, 2),
    sample(chained_in_handler, 3),
    sample(with_block, 4),
    sample(nested_with, 2), sample(nested_with, 7),
    sample(with_suppressing, 3),
    sample(with_in_try, 3),
    sample(with_return_inside, 4),
    sample(comprehensions_after, 3),
    sample(raising, 2),
    sample(unbound_on_a_path, False),
]
