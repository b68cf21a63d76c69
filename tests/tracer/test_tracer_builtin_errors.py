"""An error a builtin operation raises inside the traced code is the user's to catch.

`len(5)`, `[1].pop(7)`, `l[4] = 1`, `range(0, 3, 0)`, `isinstance(1, 5)`,
`l.index(9)`, `set().pop()`, `dict([1])` ... raise in CPython, and a `try` around
them takes the `except` branch. The tracer raises the same exception symbolically
(`raise_observed`, chapter 8), with CPython's type and words, so the frame compiles
into one graph with the handler's branch, as torch.compile's does; it used to stop
with an internal error and run the frame eagerly (right values, no graph).
"""

from __future__ import annotations

import pytest
import torch

import minidynamo
from minidynamo import config

STATEMENTS = [
    ("len(5)", "TypeError"), ("range(0, 3, 0)", "ValueError"),
    ("isinstance(1, 5)", "TypeError"), ("isinstance(x, (int, 'a'))", "TypeError"),
    ("l[4] = 1", "IndexError"), ("[1].pop(7)", "IndexError"), ("l.index(9)", "ValueError"),
    ("(1, 2).index(9)", "ValueError"), ("l.remove(9)", "ValueError"), ("del l[5]", "IndexError"),
    ("set().pop()", "KeyError"), ("l[1:2] = 5", "TypeError"), ("tuple(5)", "TypeError"),
    ("dict([1])", "TypeError"), ("dict([(1, 2, 3)])", "ValueError"), ("max(1)", "TypeError"),
    ("list(None)", "TypeError"),
]


def program(statement: str, caught: str):
    source = (f"def f(x):\n    l = [1, 2]\n    try:\n        {statement}\n"
              f"    except {caught} as error:\n        return x + 1, str(error), l\n"
              f"    return x, 'nothing raised', l\n")
    namespace: dict = {}
    exec(source, namespace)  # noqa: S102 (a test program)
    return namespace["f"]


@pytest.mark.parametrize("statement,caught", STATEMENTS, ids=[s for s, _ in STATEMENTS])
def test_the_handler_runs_in_one_graph(statement, caught):
    f = program(statement, caught)
    x = torch.ones(2)
    expected = f(x)
    minidynamo.reset()
    with config.patch(strict=True):  # an internal error raises instead of running eagerly
        explained = minidynamo.explain(f)(x)
        got = minidynamo.compile(f, backend="eager")(x)
    assert (explained.graph_count, explained.graph_break_count) == (1, 0)
    assert torch.equal(got[0], expected[0])
    assert got[1:] == expected[1:]


def test_set_pop_takes_the_items_in_iteration_order():
    def f(x):
        s = {3, 1, 2}
        return x + s.pop(), s

    minidynamo.reset()
    with config.patch(strict=True):
        got = minidynamo.compile(f, backend="eager")(torch.ones(1))
    expected = f(torch.ones(1))
    assert torch.equal(got[0], expected[0]) and got[1] == expected[1]
