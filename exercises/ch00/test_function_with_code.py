"""Graded tests for ch00.2, `function_with_code`: a code object run in a function's place.

`original` and `replacement` below are two closures of one factory, in a module of their
own (their globals are not this file's): same parameters, same defaults, same cells.
`function_with_code(original, replacement.__code__)` must run exactly as CPython's own
`replacement` does, with `original`'s globals, defaults, keyword-only defaults and the
very same cells; and minidynamo's transformed frames, run through it, must give
torch.compile's results.
"""

from __future__ import annotations

import types

import pytest
import torch

from minidynamo import convert_frame
from minidynamo.testing import assert_same_as_torch

from . import samples

FACTORY = '''
OFFSET = 100


def make(factor):
    calls = 0

    def original(x, y=2, *rest, scale=3, **extra):
        nonlocal calls
        calls += 1
        return "original", x, y, rest, scale, extra, factor, OFFSET

    def replacement(x, y=2, *rest, scale=3, **extra):
        nonlocal calls
        calls += 1
        return "replacement", x + y + sum(rest), scale * factor + OFFSET, sorted(extra)

    return original, replacement


def plain(a, b):
    return a - b + OFFSET


def other_plain(a, b):
    return (a, b, OFFSET)
'''


def factory_module():
    """A fresh module namespace holding FACTORY's functions."""
    namespace = {"__name__": "factory_for_ch00"}
    exec(compile(FACTORY, "<ch00 factory>", "exec"), namespace)
    return namespace


CALLS = [
    ((1,), {}),                                  # y and scale from the defaults
    ((1, 5), {}),
    ((1, 5, 6, 7), {"scale": 10}),
    ((1,), {"extra_b": 1, "extra_a": 2}),
    ((), {"x": 4, "y": 0}),
]


@pytest.mark.task("ch00.2")
@pytest.mark.parametrize("args, kwargs", CALLS)
def test_the_code_runs_in_the_functions_place(args, kwargs):
    original, replacement = factory_module()["make"](7)
    assert original.__code__.co_freevars == replacement.__code__.co_freevars
    function = convert_frame.function_with_code(original, replacement.__code__)
    assert isinstance(function, types.FunctionType)
    assert function(*args, **kwargs) == replacement(*args, **kwargs)
    assert function.__name__ == original.__name__          # not the code's co_name


@pytest.mark.task("ch00.2")
def test_the_closure_cells_are_shared_not_copied():
    original, replacement = factory_module()["make"](7)
    function = convert_frame.function_with_code(original, replacement.__code__)
    cells = dict(zip(original.__code__.co_freevars, original.__closure__))
    before = cells["calls"].cell_contents
    function(1)
    function(2, scale=0)
    assert cells["calls"].cell_contents == before + 2   # `nonlocal calls` wrote fn's cell
    original(3)
    assert cells["calls"].cell_contents == before + 3


@pytest.mark.task("ch00.2")
def test_globals_are_the_functions_own():
    module = factory_module()
    function = convert_frame.function_with_code(module["plain"], module["other_plain"].__code__)
    assert function(1, 2) == module["other_plain"](1, 2)
    module["OFFSET"] = -1                               # the same dict, not a copy
    assert function(1, 2) == module["other_plain"](1, 2)
    assert function.__globals__ is module["plain"].__globals__


@pytest.mark.task("ch00.2")
def test_a_compiled_closure_runs_with_its_environment():
    affine = samples.make_affine(torch.tensor(3.0))
    x, = samples.tensors((4,))
    assert_same_as_torch(affine, x)                       # bias and clamp from __kwdefaults__
    assert_same_as_torch(affine, x, bias=0.0, clamp=1.0)


@pytest.mark.task("ch00.2")
def test_a_compiled_program_with_every_kind_of_default():
    x, y = samples.tensors((3,), (3,))
    assert_same_as_torch(samples.blend, x, bias=1.0)
    assert_same_as_torch(samples.blend, x, y, x, bias=1.0, weight=3.0, scale=2.0)
