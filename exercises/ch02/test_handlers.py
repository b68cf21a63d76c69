"""Graded tests for chapter 2's handlers: LOAD_FAST (ch02.3), stack_op (ch02.4),
CALL (ch02.5) and FOR_ITER (ch02.6).

Each program runs eagerly (CPython's values), under torch.compile (the reference
graph) and under minidynamo with the task's handler plugged in; the three must agree.
Every handler here moves values on the stack, so each test also runs its program
through the stack oracle: before every instruction the symbolic stack must be as deep
as CPython's, which catches a value left behind that the result does not show.
"""

from __future__ import annotations

import operator

import pytest
import torch

from minidynamo.bytecode import opcodes
from minidynamo.testing import (
    assert_same_as_torch,
    assert_same_value,
    compare_with_torch,
    minidynamo_trace_log,
    placeholder_names,
    torch_trace_log,
)
from minidynamo.translator.operators import OPERATOR_FUNCTIONS, stack_op

from . import samples


def inputs_for(program, *shapes):
    shapes = shapes or ((4, 4),) * program.__code__.co_argcount
    return samples.tensors(*shapes)[: program.__code__.co_argcount]


# -- ch02.3: LOAD_FAST -------------------------------------------------------------------


@pytest.mark.task("ch02.3")
@pytest.mark.parametrize("program", [samples.f, samples.shuffle, samples.rebinds,
                                     samples.unused_argument],
                         ids=lambda p: p.__name__)
def test_load_fast_graphs_match_torch(program):
    comparison = assert_same_as_torch(program, *inputs_for(program), fullgraph=True)
    assert placeholder_names(comparison.minidynamo.graphs[0]) == \
        placeholder_names(comparison.torch.graphs[0])
    samples.assert_stack_depths_match(program, *inputs_for(program))


@pytest.mark.task("ch02.3")
@pytest.mark.parametrize("program", [samples.f, samples.reads_twice], ids=lambda p: p.__name__)
def test_load_fast_pushes_inputs_lazily(program):
    """Seed 001: the first two pushes are LazyVariableTrackers, realized by BINARY_OP;
    a second read of a realized input pushes what it was realized as."""
    x, y = inputs_for(program)
    theirs = [line.text for line in torch_trace_log(program, x, y)]
    mine = [line.text for line in minidynamo_trace_log(program, x, y)]
    assert mine == theirs
    samples.assert_stack_depths_match(program, x, y)


@pytest.mark.task("ch02.3")
def test_load_fast_of_a_deleted_local_is_not_guessed():
    x, = inputs_for(samples.unbound_local)
    comparison = compare_with_torch(samples.unbound_local, x)
    assert "output" not in comparison.kinds() and "error" not in comparison.kinds(), \
        comparison.report()
    assert any("read before assignment" in message for message in comparison.minidynamo.graph_breaks)
    samples.assert_stack_depths_match(samples.unbound_local, x)


# -- ch02.4: stack_op --------------------------------------------------------------------


def binary_op_from_stack_ops():
    """BINARY_OP as seed 000 describes it: one more table lookup, to a stack_op handler."""
    handlers = {symbol: stack_op(fn) for symbol, fn in OPERATOR_FUNCTIONS.items()}

    def BINARY_OP(self, inst):
        handlers[opcodes.BINARY_OP_SYMBOLS[inst.arg]](self, inst)

    return BINARY_OP


def stack_op_handlers():
    return dict(
        BINARY_OP=binary_op_from_stack_ops(),
        UNARY_NEGATIVE=stack_op(operator.neg),
        UNARY_INVERT=stack_op(operator.invert),
        UNARY_NOT=stack_op(operator.not_),
        BINARY_SUBSCR=stack_op(operator.getitem),
    )


@pytest.mark.task("ch02.4")
@pytest.mark.parametrize("program", samples.OPERATOR_PROGRAMS, ids=lambda p: p.__name__)
def test_stack_op_handlers_give_torch_graph(program):
    args = inputs_for(program) if program is not samples.unary else [*inputs_for(program)[:1], False]
    with samples.custom_translators(**stack_op_handlers()):
        assert_same_as_torch(program, *args, fullgraph=True)
        samples.assert_stack_depths_match(program, *args)


@pytest.mark.task("ch02.4")
def test_stack_op_reads_the_arity_from_the_signature():
    neg, getitem = stack_op(operator.neg), stack_op(operator.getitem)
    assert callable(neg) and callable(getitem)
    args = [*inputs_for(samples.unary)[:1], True]
    with samples.custom_translators(UNARY_NEGATIVE=neg, BINARY_SUBSCR=getitem):
        assert_same_as_torch(samples.unary, *args, fullgraph=True)
        samples.assert_stack_depths_match(samples.unary, *args)


# -- ch02.5: CALL ------------------------------------------------------------------------


@pytest.mark.task("ch02.5")
@pytest.mark.parametrize("program", [samples.calls, samples.method_chain, samples.star_call,
                                     samples.g],
                         ids=lambda p: p.__name__)
def test_calls_give_torch_graph(program):
    assert_same_as_torch(program, *inputs_for(program), fullgraph=True)
    samples.assert_stack_depths_match(program, *inputs_for(program))


@pytest.mark.task("ch02.5")
def test_a_call_with_callable_and_self_below_the_arguments():
    """CALL's other stack shape, [callable, self, args]: CPython runs it, torch.compile
    traces it, and `self` is the call's first argument (torch.sub(x, y), in that order)."""
    program = samples.as_method_call(samples.subtract)
    x, y = inputs_for(samples.subtract)
    assert_same_value(program(x, y), torch.sub(x, y))
    assert_same_as_torch(program, x, y, fullgraph=True)
    samples.assert_stack_depths_match(program, x, y)


@pytest.mark.task("ch02.5")
def test_a_call_with_callable_and_self_takes_keywords_too():
    """[callable, self, args] with KW_NAMES: the last len(names) arguments are keywords
    whichever shape the call has (torch.clamp(x, max=0.5) is not torch.clamp(x, 0.5))."""
    program = samples.as_method_call(samples.keyword_calls)
    x, y = inputs_for(samples.keyword_calls)
    assert_same_value(program(x, y), samples.keyword_calls(x, y))
    assert_same_as_torch(program, x, y, fullgraph=True)
    samples.assert_stack_depths_match(program, x, y)


@pytest.mark.task("ch02.5")
def test_keyword_names_apply_to_one_call_only():
    def two_calls(x):
        a = x.clamp(min=0.0)
        b = x.clamp(-1.0, 1.0)  # positional: the previous KW_NAMES must be forgotten
        return a + b, helper_kw(x, 1, c=2), helper_kw(x, 1)

    assert_same_as_torch(two_calls, *inputs_for(two_calls), fullgraph=True)
    samples.assert_stack_depths_match(two_calls, *inputs_for(two_calls))


def helper_kw(x, a, b=10, c=100):
    return x * a + b - c


# -- ch02.6: FOR_ITER --------------------------------------------------------------------

LOOPS = [samples.loop_range, samples.loop_list, samples.loop_break,
         samples.loop_empty_and_rows, samples.loop_zip_dict, samples.g]


@pytest.mark.task("ch02.6")
@pytest.mark.parametrize("program", LOOPS, ids=lambda p: p.__name__)
def test_loops_unroll_like_torch(program):
    assert_same_as_torch(program, *inputs_for(program, (3, 4), (3, 4)), fullgraph=True)
    samples.assert_stack_depths_match(program, *inputs_for(program, (3, 4), (3, 4)))


@pytest.mark.task("ch02.6")
def test_loop_trace_visits_for_iter_once_per_item_plus_one():
    x, = inputs_for(samples.loop_range)
    mine = [line.opname for line in minidynamo_trace_log(samples.loop_range, x)]
    theirs = [line.opname for line in torch_trace_log(samples.loop_range, x)]
    assert mine.count("FOR_ITER") == theirs.count("FOR_ITER") == 5
    assert mine == theirs
    samples.assert_stack_depths_match(samples.loop_range, x)
