"""Graded tests for chapter 3: operators (ch03.1), builtins (ch03.2), constants' methods
(ch03.3) and tensor attributes (ch03.4).

Every program runs eagerly (values), under torch.compile (the reference graph) and under
minidynamo with the task plugged; values, graphs, placeholders and op arguments must agree.
"""

from __future__ import annotations

import collections

import pytest

from minidynamo.testing import assert_same_as_torch, normalize_graph, placeholder_names

from . import samples


def run(program, *shapes):
    shapes = shapes or ((4, 4),) * program.__code__.co_argcount
    return assert_same_as_torch(program, *samples.tensors(*shapes), fullgraph=True)


# -- ch03.1: call_operator ----------------------------------------------------------------


@pytest.mark.task("ch03.1")
@pytest.mark.parametrize("program", [samples.folding, samples.reflected, samples.containers],
                         ids=lambda p: p.__name__)
def test_operator_rules_match_torch(program):
    run(program)


def tuple_grows(x, y):
    pair = (x,)
    pair += (y, 2)          # a tuple has no __iadd__: `+=` falls back to `+`
    return pair[0] * pair[2] + pair[1]


def item_of_a_list(xs):
    return xs[1] + 1        # xs[0] is never read: it must not become a graph input


@pytest.mark.task("ch03.1")
def test_in_place_operator_falls_back_to_the_plain_one():
    run(tuple_grows)


@pytest.mark.task("ch03.1")
def test_an_item_of_a_list_leaves_the_other_items_lazy():
    x, y = samples.tensors((4, 4), (4, 4))
    comparison = assert_same_as_torch(item_of_a_list, [x, y], fullgraph=True)
    assert placeholder_names(comparison.minidynamo.graphs[0]) == \
        placeholder_names(comparison.torch.graphs[0])


@pytest.mark.task("ch03.1")
def test_seed_g_folds_and_unrolls():
    """Seed 001's g: three muls by 2, 3, 4 and three adds, the same graph as torch.compile."""
    comparison = run(samples.g, (8,))
    ops = [name for kind, name in normalize_graph(comparison.minidynamo.graphs[0])
           if kind == "call_function"]
    assert ops == ["operator.mul"] * 3 + ["operator.add"] * 3


# -- ch03.2: BuiltinVariable.call_function ------------------------------------------------


@pytest.mark.task("ch03.2")
@pytest.mark.parametrize("program", [samples.builtins_mix, samples.iteration_builtins, samples.g],
                         ids=lambda p: p.__name__)
def test_builtins_match_torch(program):
    run(program)


def makes_a_class(x, y):
    Pair = collections.namedtuple("Pair", "a b")   # a class made at trace time
    pair = Pair(x, b=y)
    return pair.a - pair.b


def rounds(x):
    return x * round(2.567, ndigits=2)            # a pure builtin folds, keywords too


@pytest.mark.task("ch03.2")
@pytest.mark.parametrize("program", [makes_a_class, rounds], ids=lambda p: p.__name__)
def test_builtins_that_fold_at_trace_time(program):
    run(program)


# -- ch03.3: ConstantVariable.call_method -------------------------------------------------


def splits(x):
    head, rest = "a-b-c".split(sep="-", maxsplit=1)
    return x * len(rest) + len(head)


@pytest.mark.task("ch03.3")
def test_a_method_with_keyword_arguments_folds():
    run(splits)


@pytest.mark.task("ch03.3")
def test_string_methods_fold():
    comparison = run(samples.strings)
    ops = normalize_graph(comparison.minidynamo.graphs[0])
    assert ops == normalize_graph(comparison.torch.graphs[0])
    assert [kind for kind, _ in ops] == ["placeholder", "call_function"]  # x * scale, folded


@pytest.mark.task("ch03.3")
@pytest.mark.parametrize("name", ["ReLU ", "sigmoid", " TANH"])
def test_a_folded_method_picks_the_torch_function(name):
    x, = samples.tensors((5,))
    assert_same_as_torch(samples.activation_by_name, x, name, fullgraph=True)


# -- ch03.4: TensorVariable.var_getattr ---------------------------------------------------


def returns_transpose(x):
    return x.T, x.mT.sum()


@pytest.mark.task("ch03.4")
def test_a_returned_attribute_matches_torch():
    run(returns_transpose)


@pytest.mark.task("ch03.4")
@pytest.mark.parametrize("program", [samples.attributes, samples.shape_arithmetic],
                         ids=lambda p: p.__name__)
def test_tensor_attributes_match_torch(program):
    run(program, (3, 5))
