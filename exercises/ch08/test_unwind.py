"""Graded tests for handle_exception (ch08.1): where a raised exception goes.

An instruction raises; your `handle_exception` finds the exception-table entry that
covers it, pops the stack to the entry's depth, pushes `lasti` where flagged, pushes
the exception and jumps to the handler, or lets the exception leave the frame. Each
program is compared with eager PyTorch and torch.compile (graphs, values, the
exception that reaches the caller) and the symbolic stack depth with CPython's at
every instruction: a stack popped one value too far or too little fails there.
"""

from __future__ import annotations

import pytest

from . import programs
from .programs import check, x3

UNWINDING = [
    programs.caught_with_values_on_the_stack,
    programs.caught_inside_call_arguments,
    programs.except_as_cleanup,
    programs.nested_try_inner_handler,
    programs.caught_from_inlined_helper,
    programs.finally_on_the_way_out_of_a_helper,
    programs.finally_after_a_caught_exception,
    programs.loop_of_raises,
]


@pytest.mark.task("ch08.1")
@pytest.mark.parametrize("fn", UNWINDING, ids=lambda fn: fn.__name__)
def test_caught_exceptions_give_one_graph_like_torch(fn):
    check(fn, x3(), graphs=1)


@pytest.mark.task("ch08.1")
def test_an_operations_exception_gets_the_handled_one_as_context():
    """The KeyError is raised by a lookup, not a `raise`: handle_exception is where it
    first becomes an exception object, so it is where it gets its `__context__`."""
    comparison = check(programs.context_of_a_failed_lookup, x3(), graphs=1)
    assert comparison.minidynamo.outcomes[0].value[1] == "ValueError('first')"


@pytest.mark.task("ch08.1")
def test_an_uncaught_exception_runs_the_frame_eagerly():
    """No entry covers the raise: the exception leaves the frame, which then runs
    eagerly (MD0013), so the caller gets eager's KeyError; torch.compile does the same."""
    comparison = check(programs.uncaught_after_a_graph_op, x3(), graphs=0)
    assert isinstance(comparison.eager.outcomes[0].error, KeyError)


@pytest.mark.task("ch08.1")
def test_the_handler_sees_the_stack_at_the_entrys_depth():
    """The KeyError is raised with `x` and `x + 1` on the stack (a tuple being built);
    the handler starts with the stack the entry says, not with those two."""
    check(programs.caught_with_values_on_the_stack, x3())
    steps = programs.assert_stack_depths_match_cpython(programs.caught_with_values_on_the_stack, x3())
    opnames = [step.opname for step in steps]
    assert "PUSH_EXC_INFO" in opnames and "CHECK_EXC_MATCH" in opnames
