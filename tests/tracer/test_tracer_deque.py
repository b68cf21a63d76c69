"""collections.deque while tracing, against CPython (what torch.compile does not capture
in one graph, or gets wrong: it reads a new deque's `maxlen` as None).

Each program runs eagerly and compiled in strict mode (no eager fallback can pass):
values, the deque itself (items and maxlen) and the exceptions must be CPython's.
"""

from __future__ import annotations

import collections

import pytest
import torch

import minidynamo
from minidynamo.testing import assert_same_value, strict_mode


def run_both(fn, *args):
    graphs = []
    minidynamo.reset()
    with strict_mode():
        compiled = minidynamo.compile(fn, backend=lambda gm, inputs: graphs.append(gm) or gm.forward)
        return fn(*args), compiled(*args), graphs


def rotate_and_extendleft(x):
    window = collections.deque([x, x + 1, x + 2], maxlen=4)
    window.rotate(1)
    window.rotate(-2)
    window.extendleft([x * 5, x * 6])  # full: drops from the right
    return list(window), window.maxlen, window


def counts_and_index(x):
    window = collections.deque([1, 2, 3, 2])
    window.remove(2)
    return x * window.count(2) + window.index(3), window.copy(), collections.deque(maxlen=0)


@pytest.mark.parametrize("fn", [rotate_and_extendleft, counts_and_index], ids=lambda fn: fn.__name__)
def test_deque_methods_as_cpython(fn):
    expected, actual, graphs = run_both(fn, torch.ones(2))
    assert_same_value(expected, actual)
    assert len(graphs) == 1


def errors(kind):
    def program(x):
        window = collections.deque([x], maxlen=1)
        try:
            if kind == "insert":
                window.insert(0, x)
            elif kind == "slice":
                window[0:1]
            elif kind == "pop_argument":
                window.pop(0)
            elif kind == "sort":
                window.sort()
            elif kind == "empty":
                window.popleft()
                window.popleft()
            elif kind == "maxlen":
                collections.deque([], maxlen=-1)
        except (IndexError, TypeError, AttributeError, ValueError) as error:
            return x + 1, type(error).__name__, str(error)
        return x, "", ""

    program.__name__ = f"deque_{kind}"
    return program


@pytest.mark.parametrize("kind", ["insert", "slice", "pop_argument", "sort", "empty", "maxlen"])
def test_deque_errors_as_cpython(kind):
    expected, actual, graphs = run_both(errors(kind), torch.ones(2))
    assert_same_value(expected, actual)
    assert expected[1] != ""


def test_an_existing_deque_is_guarded_on_length_and_maxlen():
    def push(x, history):
        history.append(x)
        return history[0] * 2

    calls = []
    compiled = minidynamo.compile(push, backend=lambda gm, inputs: calls.append(1) or gm.forward)
    for maxlen in (2, 2, 3):
        history = collections.deque([torch.zeros(2)], maxlen=maxlen)
        expected_history = collections.deque([torch.zeros(2)], maxlen=maxlen)
        assert_same_value(push(torch.ones(2), expected_history), compiled(torch.ones(2), history))
        assert_same_value(expected_history, history)
    assert len(calls) == 2  # the third call's maxlen differs: traced again
