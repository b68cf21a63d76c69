"""Graded tests for chapter 3: binding arguments (ch03.5) and inlining calls (ch03.6).

Calling your own function does not break the graph: the tracer steps into it. Each
program here calls Python functions (with defaults, keywords, closures, recursion,
generators, module methods) and must give exactly torch.compile's single graph.
"""

from __future__ import annotations

import pytest

import minidynamo
from minidynamo import config
from minidynamo.testing import assert_same_as_torch, compare_with_torch

from . import samples


# -- ch03.5: bind_arguments ---------------------------------------------------------------


@pytest.mark.task("ch03.5")
@pytest.mark.parametrize("program", [samples.binding, samples.inner_closure],
                         ids=lambda p: p.__name__)
def test_bound_calls_match_torch(program):
    inputs = samples.tensors((3,), (3,))[: program.__code__.co_argcount]
    assert_same_as_torch(program, *inputs, fullgraph=True)


@pytest.mark.task("ch03.5")
def test_a_bad_call_is_the_users_type_error():
    def bad(x):
        return samples.scaled(x, 1, 2, scale=3)  # scale given twice

    x, = samples.tensors((3,))
    comparison = compare_with_torch(bad, x)
    assert "output" not in comparison.kinds() and "error" not in comparison.kinds(), \
        comparison.report()
    assert isinstance(comparison.minidynamo.outcomes[0].error, TypeError)


# -- ch03.6: inline_call ------------------------------------------------------------------


@pytest.mark.task("ch03.6")
@pytest.mark.parametrize("program", [samples.network, samples.recursion, samples.generator,
                                     samples.g, samples.inner_closure],
                         ids=lambda p: p.__name__)
def test_inlined_calls_give_one_graph(program):
    inputs = samples.tensors((4, 4), (4, 4))[: program.__code__.co_argcount]
    comparison = assert_same_as_torch(program, *inputs, fullgraph=True)
    assert comparison.minidynamo.graph_count == 1


@pytest.mark.task("ch03.6")
def test_module_calls_are_inlined():
    x, = samples.tensors((2, 4))
    comparison = assert_same_as_torch(samples.Block(), x, fullgraph=True)
    assert comparison.minidynamo.graph_count == 1


@pytest.mark.task("ch03.6")
def test_inlining_depth_is_limited():
    x, = samples.tensors((3,))
    with config.patch(inline_depth_limit=2):
        minidynamo.reset()
        explanation = minidynamo.explain(samples.recursion)(x)
    assert any("inlining too deep" in str(reason) for reason in explanation.break_reasons)
