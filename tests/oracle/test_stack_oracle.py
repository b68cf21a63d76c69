"""The stack oracle (minidynamo/stack_oracle.py): CPython's depth per instruction, and
the translator's checked against it. It must pass on the real handlers and catch a
handler that leaves the stack one value too deep or too shallow (chapters 2 and 7)."""

from __future__ import annotations

import contextlib
import dis

import pytest
import torch

from minidynamo.stack_oracle import (
    assert_stack_depths_match_cpython,
    cpython_depths,
    stack_depth_mismatches,
    symbolic_steps,
)
from minidynamo.translator.inlining import (
    InliningGeneratorInstructionTranslator,
    InliningInstructionTranslator,
)
from minidynamo.translator.root import InstructionTranslator


def loop_and_call(x, y):
    total = x
    for t in [x, y]:
        total = total + torch.relu(t).sum(dim=0, keepdim=True)
    return total, max(1, 2)


def helper(t):
    return t * 2


def inlines(x):
    return helper(x) + helper(x + 1)


def breaks(x):
    if x.sum() > 0:  # a data-dependent branch: a partial graph and resume functions
        return x + 1
    return x - 1


@pytest.mark.parametrize("program", [loop_and_call, inlines, breaks], ids=lambda p: p.__name__)
def test_real_handlers_match_cpython(program):
    args = [torch.ones(3)] * program.__code__.co_argcount
    steps = assert_stack_depths_match_cpython(program, *args)
    assert any(step.code is program.__code__ for step in steps)


def test_cpython_depths_are_the_frames_own():
    def f(a, b):
        return (a, b)  # LOAD_FAST a: depth 0; LOAD_FAST b: 1; BUILD_TUPLE: 2; RETURN_VALUE: 1

    depths = cpython_depths(f, 1, 2)  # (RESUME runs before the trace function sees the frame)
    assert [depths[f.__code__, inst.offset] for inst in dis.get_instructions(f)
            if inst.opname != "RESUME"] == [0, 1, 2, 1]


def test_inlined_callees_are_compared_too():
    steps = assert_stack_depths_match_cpython(inlines, torch.ones(3))
    assert any(step.code is helper.__code__ for step in steps)


TRANSLATORS = (InstructionTranslator, InliningInstructionTranslator,
               InliningGeneratorInstructionTranslator)


@contextlib.contextmanager
def handler_replaced(opname, handler):
    """Every translator class runs `handler` for `opname` inside the block."""
    opcode = dis.opmap[opname]
    saved = [cls.dispatch_table[opcode] for cls in TRANSLATORS]
    for cls in TRANSLATORS:
        cls.dispatch_table[opcode] = handler
    try:
        yield
    finally:
        for cls, handler in zip(TRANSLATORS, saved):
            cls.dispatch_table[opcode] = handler


def for_iter_keeping_the_iterator(tx, inst):
    iterator = tx.pop()
    item = iterator.next_variable(tx)
    if item is None:
        tx.push(iterator)  # the bug: CPython 3.11 pops the exhausted iterator
        tx.jump(inst)
    else:
        tx.push(tx.output.side_effects.latest(iterator))
        tx.push(item)


def test_catches_an_iterator_left_on_the_stack():
    with handler_replaced("FOR_ITER", for_iter_keeping_the_iterator):
        with pytest.raises(AssertionError, match=r"\(LOAD_FAST\), after FOR_ITER at offset \d+: the symbolic stack holds 1 "
                           r"value\(s\), CPython's holds 0"):
            assert_stack_depths_match_cpython(loop_and_call, torch.ones(3), torch.ones(3))


def test_catches_a_pop_too_many():
    real = InstructionTranslator.dispatch_table[dis.opmap["BUILD_TUPLE"]]

    def build_tuple_eating_one_more(tx, inst):
        real(tx, inst)
        top = tx.pop()
        tx.pop()  # the bug: one value too many taken
        tx.push(top)

    def f(a, x):
        return a + 1, (x, x)

    with handler_replaced("BUILD_TUPLE", build_tuple_eating_one_more):
        steps = symbolic_steps(f, torch.ones(2), torch.ones(2))
    mismatches, compared = stack_depth_mismatches(steps, cpython_depths(f, torch.ones(2), torch.ones(2)))
    assert compared and mismatches


def test_refuses_to_pass_when_nothing_was_compared():
    def f(x):
        return x

    with handler_replaced("RESUME", lambda tx, inst: (_ for _ in ()).throw(RuntimeError("no"))):
        with pytest.raises(AssertionError):
            assert_stack_depths_match_cpython(f, torch.ones(2))


def test_catches_a_raw_python_value_on_the_stack():
    real = InstructionTranslator.dispatch_table[dis.opmap["LOAD_CONST"]]

    def load_const_unwrapped(tx, inst):
        if inst.argval is None:
            tx.push(None)  # the bug: a Python value, not ConstantVariable(None)
        else:
            real(tx, inst)

    def f(x):
        y = None
        return x + 1, y

    with handler_replaced("LOAD_CONST", load_const_unwrapped):
        steps = symbolic_steps(f, torch.ones(2))
    mismatches, _ = stack_depth_mismatches(steps, cpython_depths(f, torch.ones(2)))
    assert any("not a VariableTracker (slot 0: None)" in line for line in mismatches)
