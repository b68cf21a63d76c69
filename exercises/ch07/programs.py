"""Functions the graded tests of chapter 7 stop and resume, each with its arguments.

Every program takes `log` (a list) first and records its side effects there; a
resumed run must leave the same log and give the same result (or raise the same
exception) as CPython's undisturbed run. The shapes cover what a resume function
must rebuild: values and NULLs on the stack, live and dead locals, cells shared
with closures, argument kinds, and the `with`, `try` and `except` blocks around
the resume point.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any, Callable


class Manager:
    """A context manager that logs each `__enter__` and `__exit__`."""

    def __init__(self, log: list, name: str, suppress: bool = False):
        self.log, self.name, self.suppress = log, name, suppress

    def __enter__(self) -> str:
        self.log.append(("enter", self.name))
        return self.name

    def __exit__(self, kind, value, traceback) -> bool:
        self.log.append(("exit", self.name, kind and kind.__name__))
        return self.suppress


def arithmetic(log, a, b):
    c = a * 3
    log.append(c)
    d = c - b
    log.append((c, d))
    return c * d + a


def dead_after_use(log, a, b):
    tmp = a + b              # dead after the next line: never read again
    log.append(tmp)
    tmp = b * 2              # a new value, written before it is read
    unused = a - 1           # never read at all
    log.append(tmp)
    return a + tmp


def branchy(log, n):
    if n > 3:
        label = "big"
        log.append(label)
    else:
        label = "small"
    k = n * 2 if label == "big" else n - 1
    log.append(k)
    return label, k


def looping(log, n):
    total, seen = 0, []
    for i in range(n):
        if i % 3 == 0:
            continue
        total += i
        seen.append(i)
        log.append(total)
    while total > 4:
        total -= 4
    return total, seen


def nulls_in_calls(log, values):
    text = str(len(values)) + ":" + repr(min(values, key=abs))
    log.append(text.upper())
    return max(values) + abs(min(values)) + divmod(sum(values), 4)[1]


def methods_and_kwargs(log, words):
    joined = ",".join(word.strip() for word in words)
    log.append(sorted(words, key=len, reverse=True))
    return joined.split(",", maxsplit=1), dict(a=len(words), b=joined.count(","))


def deep_stack(log, a):
    return (a, [a + 1, {a: log.append(a) or a * 2}], str(a), log.append(-a), len(log))


def argument_kinds(log, a, b=2, *rest, scale=3, **options):
    total = a + b + sum(rest)
    log.append(sorted(options))
    return dict(total=total * scale, n=len(rest), extra=options.get("extra", 0))


def shared_cell(log, n):
    base = n * 10

    def add(k):
        return base + k

    log.append(add(1))
    base = base + 7           # the closure made before the break sees this
    log.append([add(i) for i in range(n)])
    return add(100)


def argument_cell(log, x):
    def get():
        return x

    log.append(get())
    x = x * 5
    return get() - x


def make_accumulator(step):
    count = 0

    def accumulate(log, times):
        nonlocal count
        for _ in range(times):
            count += step
            log.append(count)
        return count

    return accumulate


def make_cells_and_free(offset):
    scale = 2

    def cells_and_free(log, n):
        # `total` is a cell of this frame, `offset` and `scale` are free variables: the
        # resume function receives both kinds in one closure, in co_freevars order
        total = n * scale

        def add(k):
            return total + k + offset

        log.append(add(1))
        total = total + scale * 10
        log.append((add(2), offset, scale))
        return total * offset

    return cells_and_free


def unbound_on_a_path(log, flag):
    if flag:
        y = 1
    log.append("x")
    return y


def raises_late(log, n):
    log.append(n)
    key = n * 2
    return {"a": 1}[key]


def one_with(log, n):
    with Manager(log, "m") as name:
        log.append(name)
        value = n * 2
        log.append(value)
    return value + 1


def nested_with(log, n):
    with Manager(log, "outer"):
        with Manager(log, "inner") as inner:
            log.append(inner * n)
            if n > 5:
                raise IndexError(n)
        log.append("between")
    return n


def suppressing_with(log, n):
    with Manager(log, "s", suppress=True):
        log.append("before")
        log.append(1 / (n - n))
    log.append("after")
    return n


def with_inside_try(log, n):
    try:
        with Manager(log, "t"):
            log.append(n)
            raise KeyError(n)
    except KeyError as error:
        log.append(("handled", error.args))
    return n + 1


def try_except_else(log, items):
    total = 0
    for item in items:
        try:
            log.append(("try", item))
            total += 12 // item
        except ZeroDivisionError as error:
            log.append(("caught", str(error)))
            total -= 1
        else:
            log.append("else")
        finally:
            log.append("finally")
    return total


def reraise(log, n):
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


def nested_handlers(log, n):
    try:
        try:
            log.append({}[n])
        except KeyError:
            log.append("key")
            try:
                raise TypeError(n)
            finally:
                log.append(("finally", repr(sys.exc_info()[1])))
    except TypeError as error:
        log.append(("context", repr(error.__context__)))
    return n


@dataclass
class Program:
    """A function to resume and how to call it; `make` builds the function (fresh cells)."""

    name: str
    make: Callable[[], Callable]
    args: tuple
    kwargs: dict

    def __repr__(self) -> str:
        return f"{self.name}{self.args}"


def program(fn: Callable, *args: Any, **kwargs: Any) -> Program:
    return Program(fn.__name__, lambda: fn, args, kwargs)


STRAIGHT = [
    program(arithmetic, 3, 4),
    program(dead_after_use, 5, 2),
    program(branchy, 5), program(branchy, 1),
    program(looping, 8),
    program(nulls_in_calls, [3, -7, 2]),
    program(methods_and_kwargs, [" ab", "c ", " def "]),
    program(deep_stack, 4),
    program(argument_kinds, 1, 2, 3, 4, scale=2, extra=5, other=6),
    program(raises_late, 2),
    program(unbound_on_a_path, False),
]
CELLS = [
    program(shared_cell, 3),
    program(argument_cell, 4),
    Program("accumulator", lambda: make_accumulator(3), (3,), {}),
    Program("cells_and_free", lambda: make_cells_and_free(5), (3,), {}),
]
WITH_BLOCKS = [
    program(one_with, 4),
    program(nested_with, 2), program(nested_with, 7),
    program(suppressing_with, 3),
    program(with_inside_try, 3),
]
HANDLERS = [
    program(try_except_else, [3, 0, 4]),
    program(reraise, 1), program(reraise, 2),
    program(nested_handlers, 3),
]
ALL = STRAIGHT + CELLS + WITH_BLOCKS + HANDLERS
