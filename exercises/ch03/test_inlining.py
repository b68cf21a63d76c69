"""Graded tests for chapter 3: binding arguments (ch03.5) and inlining calls (ch03.6).

Calling your own function does not break the graph: the tracer steps into it. Each
program here calls Python functions (with defaults, keywords, closures, recursion,
generators, module methods) and must give exactly torch.compile's single graph; and
before every instruction, in the caller and in each inlined callee, the symbolic
stack must be as deep as CPython's (the stack oracle).
"""

from __future__ import annotations

import pytest

import minidynamo
from minidynamo import config
from minidynamo.testing import (
    Call,
    assert_same_as_torch,
    compare_with_eager,
    compare_with_torch,
    run_eager,
    run_minidynamo,
)

from . import samples


def break_reasons(program, *args):
    """The first line of each graph break `minidynamo.explain` reports for one call."""
    minidynamo.reset()
    explanation = minidynamo.explain(program)(*args)
    return [str(reason).splitlines()[0] for reason in explanation.break_reasons]


# -- ch03.5: bind_arguments ---------------------------------------------------------------


def options_mutated(x, **options):
    options["gain"] = 3                  # **options is a new dict of the callee's: it may change
    scale = options.pop("scale", 1)
    return x * scale * options["gain"], options


def calls_with_options(x):
    return options_mutated(x, scale=2, bias=1)


@pytest.mark.task("ch03.5")
@pytest.mark.parametrize("program", [samples.binding, samples.inner_closure, calls_with_options],
                         ids=lambda p: p.__name__)
def test_bound_calls_match_torch(program):
    inputs = samples.tensors((3,), (3,))[: program.__code__.co_argcount]
    assert_same_as_torch(program, *inputs, fullgraph=True)
    samples.assert_stack_depths_match(program, *inputs)


@pytest.mark.task("ch03.5")
def test_a_bad_call_is_the_users_type_error():
    def bad(x):
        return samples.scaled(x, 1, 2, scale=3)  # scale given twice

    x, = samples.tensors((3,))
    comparison = compare_with_torch(bad, x)
    assert "output" not in comparison.kinds() and "error" not in comparison.kinds(), \
        comparison.report()
    assert isinstance(comparison.minidynamo.outcomes[0].error, TypeError)
    samples.assert_stack_depths_match(bad, x)


# -- ch03.6: inline_call ------------------------------------------------------------------


INLINED = [samples.network, samples.recursion, samples.generator, samples.g,
           samples.inner_closure, samples.shifted_rows, samples.reads_a_generator]


@pytest.mark.task("ch03.6")
@pytest.mark.parametrize("program", INLINED, ids=lambda p: p.__name__)
def test_inlined_calls_give_one_graph(program):
    inputs = samples.tensors((4, 4), (4, 4))[: program.__code__.co_argcount]
    comparison = assert_same_as_torch(program, *inputs, fullgraph=True)
    assert comparison.minidynamo.graph_count == 1
    samples.assert_stack_depths_match(program, *inputs)


@pytest.mark.task("ch03.6")
def test_module_calls_are_inlined():
    x, = samples.tensors((2, 4))
    comparison = assert_same_as_torch(samples.Block(), x, fullgraph=True)
    assert comparison.minidynamo.graph_count == 1
    samples.assert_stack_depths_match(samples.Block(), x)


@pytest.mark.task("ch03.6")
def test_inlining_depth_is_limited():
    x, = samples.tensors((3,))
    with config.patch(inline_depth_limit=2):
        assert any("inlining too deep" in reason for reason in break_reasons(samples.recursion, x))
        samples.assert_stack_depths_match(samples.recursion, x)


@pytest.mark.task("ch03.6")
def test_the_depth_limit_is_the_number_of_inlined_levels():
    """inline_depth_limit=N inlines N levels of calls and refuses the next one."""
    x, = samples.tensors((3,))
    with config.patch(inline_depth_limit=3):
        assert break_reasons(samples.tail_calls, x) == []
        assert_same_as_torch(samples.tail_calls, x, fullgraph=True)
        samples.assert_stack_depths_match(samples.tail_calls, x)
    with config.patch(inline_depth_limit=2):
        reasons = break_reasons(samples.tail_calls, x)
        assert any("inlining too deep" in reason and "call_3" in reason for reason in reasons), \
            reasons
        samples.assert_stack_depths_match(samples.tail_calls, x)


@pytest.mark.task("ch03.6")
def test_a_coroutine_is_not_inlined():
    """`async def` code is refused by name before anything of it is traced; the frame
    then runs eagerly and gives eager's value. (Compared with eager only: torch.compile
    inlines the coroutine's body and raises on `coroutine.close()`.)"""
    x, = samples.tensors((3,))
    calls = [Call((x,))]
    eager = run_eager(samples.makes_a_coroutine, calls)
    compiled = run_minidynamo(samples.makes_a_coroutine, calls)
    assert compare_with_eager(eager, compiled) == []
    first = compiled.graph_breaks[0].splitlines()[0]
    assert "(unsupported Python feature): calling scaled_later, a coroutine" in first, first
    samples.assert_stack_depths_match(samples.makes_a_coroutine, x)
