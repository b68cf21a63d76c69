"""Graded tests for chapter 3: operators (ch03.1), builtins (ch03.2), constants' methods
(ch03.3) and tensor attributes (ch03.4).

Every program runs eagerly (values), under torch.compile (the reference graph) and under
minidynamo with the task plugged; values, graphs, placeholders and op arguments must agree.
"""

from __future__ import annotations

import pytest

from minidynamo.testing import assert_same_as_torch, normalize_graph

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


# -- ch03.3: ConstantVariable.call_method -------------------------------------------------


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


@pytest.mark.task("ch03.4")
@pytest.mark.parametrize("program", [samples.attributes, samples.shape_arithmetic],
                         ids=lambda p: p.__name__)
def test_tensor_attributes_match_torch(program):
    run(program, (3, 5))
