"""Instances of user subclasses of list and tuple made while tracing (chapter 3).

`UserDefinedSequenceVariable` is an object (attributes, the class's methods inlined)
whose items are a list or tuple part; the builtin methods the class does not override
are the part's. Each program is compared with torch.compile (graphs, ops, outputs,
side effects) and eager, and a few behaviours with CPython itself.
"""

from __future__ import annotations

import pytest
import torch

import minidynamo
from minidynamo.testing import compare_with_torch


class Stack(list):
    def push(self, value):
        self.append(value)
        return self

    def top(self):
        return self[-1]

    def total(self):
        return sum(self)


class Tagged(list):
    def __init__(self, items, tag):
        super().__init__(items)
        self.tag = tag


class Pair(tuple):
    def first(self):
        return self[0]

    def swapped(self):
        return Pair((self[1], self[0]))


class Scaled(tuple):
    def __init__(self, items, scale=2):
        self.scale = scale

    def scaled(self):
        return tuple(item * self.scale for item in self)


def t(*shape):
    return torch.arange(float(torch.Size(shape).numel())).reshape(shape) / 3 + 1


def stack_methods(x):
    s = Stack([x])
    s.push(x * 2).push(x * 3)
    return s.total() + s.top(), len(s)


def list_subclass_returned(x):
    s = Stack()
    s.append(x + 1)
    s.extend([x, x * 2])
    s.tag = "made here"
    return s


def list_subclass_with_init(x):
    items = Tagged([x, x.sin()], "sin")
    return items[1] * len(items), items.tag


def list_subclass_iterated_and_sliced(x):
    s = Stack([x, x + 1, x + 2])
    head = s[:2]
    out = x * 0
    for item in s:
        out = out + item
    return out, head[1], isinstance(s, list), type(head) is list


def tuple_subclass_methods(x):
    p = Pair((x, x * 2))
    q = p.swapped()
    return p.first() + q.first(), len(q), isinstance(q, tuple)


def tuple_subclass_returned(x):
    return Pair((x.cos(), x + 1))


def tuple_subclass_with_init(x):
    s = Scaled((x, x + 1), scale=3)
    a, b = s
    return s.scaled()[0] + a + b, s.scale


PROGRAMS = [stack_methods, list_subclass_returned, list_subclass_with_init,
            list_subclass_iterated_and_sliced, tuple_subclass_methods, tuple_subclass_returned,
            tuple_subclass_with_init]


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda fn: fn.__name__)
def test_same_graph_and_values_as_torch(fn):
    comparison = compare_with_torch(fn, t(3))
    assert comparison.ok, comparison.report()
    assert minidynamo.explain(fn)(t(3)).graph_count == 1


@pytest.mark.parametrize("fn", [list_subclass_returned, tuple_subclass_returned],
                         ids=lambda fn: fn.__name__)
def test_an_escaping_instance_is_rebuilt_with_its_class_and_attributes(fn):
    minidynamo.reset()
    got, expected = minidynamo.compile(fn)(t(3)), fn(t(3))
    assert type(got) is type(expected)
    assert vars(got) == vars(expected)
    assert len(got) == len(expected) and all(torch.equal(a, b) for a, b in zip(got, expected))


def test_the_builtin_constructors_errors_are_cpythons():
    def two_arguments(x):
        return Pair((x,), (x,))

    with pytest.raises(TypeError) as eager:
        two_arguments(t(2))
    with pytest.raises(TypeError) as compiled:
        minidynamo.compile(two_arguments)(t(2))
    assert str(compiled.value) == str(eager.value)


class Logged(list):
    """A list subclass whose own `__setitem__` records every call."""

    writes: list = []

    def __setitem__(self, index, value):
        Logged.writes.append(index)
        super().__setitem__(index, value)

    def total(self):
        return sum(self)


def push_and_sum(s, x):
    s.push(x * 2)
    return s.total() + s.top(), len(s)


def pair_argument(p, x):
    return p.first() * x + p[1]


def append_to_logged(s, x):
    s.append(x + 1)
    return s.total()


@pytest.mark.parametrize("fn, make", [(push_and_sum, lambda: Stack([t(3)])),
                                      (pair_argument, lambda: Pair((t(3), t(3) + 1))),
                                      (append_to_logged, lambda: Logged([t(3)]))],
                         ids=["list_subclass_mutated", "tuple_subclass", "own_setitem"])
def test_an_instance_passed_in_is_read_and_mutated_as_torch_does(fn, make):
    comparison = compare_with_torch(fn, make(), t(3))
    assert comparison.ok, comparison.report()


def test_replaying_a_mutation_does_not_run_the_subclasss_setitem():
    Logged.writes.clear()
    minidynamo.reset()
    s = Logged([t(3)])
    minidynamo.compile(append_to_logged)(s, t(3))
    assert Logged.writes == [] and len(s) == 2 and type(s) is Logged
