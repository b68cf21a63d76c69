"""Graded tests for generic_jump (ch06.3): the handler of every conditional jump.

The handlers are made by *your* generic_jump, installed in the translators for the
test (as chapter 2 did for stack_op), and the program is compiled by minidynamo and by
torch.compile and run eagerly. A condition on a Python value chooses a branch (one
graph); a condition on a tensor is a graph break: the same number of graphs as
torch.compile, the same break count, the same user line in the reason, and the
values of eager PyTorch on both sides of the branch. A jump also moves the stack: it
pops its condition, except JUMP_IF_*_OR_POP when it jumps; before every instruction the
symbolic stack must be as deep as CPython's on the same program (the stack oracle).
"""

from __future__ import annotations

import pytest
import torch

import minidynamo
from minidynamo.stack_oracle import assert_stack_depths_match_cpython
from minidynamo.testing import assert_same_as_torch

from . import programs
from .programs import custom_translators, explain_both, jump_handlers, where


@pytest.mark.task("ch06.3")
@pytest.mark.parametrize("fn, args", [
    (programs.sign_of_int, (5,)),
    (programs.sign_of_int, (-2,)),
    (programs.flag_and_name, (True, "relu")),
    (programs.flag_and_name, (False, "gelu")),
    (programs.list_truth, ([],)),
    (programs.pop_until_empty, ([1.0, 2.0],)),
    (programs.or_default, (0,)),
    (programs.or_default, (4,)),
], ids=lambda value: getattr(value, "__name__", repr(value)))
def test_python_conditions_choose_a_branch(fn, args):
    with custom_translators(**jump_handlers()):
        assert_same_as_torch(fn, torch.randn(3), *args, fullgraph=True)


@pytest.mark.task("ch06.3")
@pytest.mark.parametrize("fn", [programs.tensor_if, programs.tensor_not, programs.tensor_while],
                         ids=lambda fn: fn.__name__)
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_a_tensor_condition_breaks_like_torch(fn, sign):
    x = sign * torch.tensor([1.0, -1.0, 0.5])  # a while loop runs once at most: chapter 9's
                                               # cache, not this one, reuses a resume graph
    with custom_translators(**jump_handlers()):
        assert_same_as_torch(fn, x)
        ours, theirs = explain_both(fn, x)
    assert (ours.graph_count, ours.graph_break_count) == (theirs.graph_count, theirs.graph_break_count)
    assert len(ours.compiled_break_reasons) == len(theirs.break_reasons)
    for mine, torchs in zip(ours.compiled_break_reasons, theirs.break_reasons):
        assert mine.kind.title == "data-dependent branch"
        assert (mine.filename, mine.lineno) == where(torchs)


@pytest.mark.task("ch06.3")
@pytest.mark.parametrize("first", [torch.zeros(3), torch.ones(3)], ids=["falsy", "truthy"])
def test_or_on_a_tensor_keeps_the_value_for_the_jump(first):
    """`x.sum() or y`: JUMP_IF_TRUE_OR_POP leaves the tensor on the stack when it jumps."""
    with custom_translators(**jump_handlers()):
        comparison = assert_same_as_torch(programs.tensor_or, first, torch.full((3,), 5.0))
    assert comparison.minidynamo.graph_count == comparison.torch.graph_count


@pytest.mark.task("ch06.3")
def test_fullgraph_turns_the_branch_into_an_error():
    x = torch.ones(3)
    with custom_translators(**jump_handlers()):
        ours, theirs = programs.fullgraph_errors(programs.tensor_if, x)
    assert isinstance(theirs, torch._dynamo.exc.Unsupported)
    assert isinstance(ours, minidynamo.exc.Unsupported), ours
    assert programs.TORCH_GB_TYPES[theirs.gb_type] == ours.kind.title


PYTHON_CONDITIONS = [
    (programs.sign_of_int, (5,)), (programs.sign_of_int, (-2,)),
    (programs.flag_and_name, (True, "relu")), (programs.flag_and_name, (False, "gelu")),
    (programs.list_truth, ([],)), (programs.list_truth, ([7, 8],)),
    (programs.pop_until_empty, ([1.0, 2.0],)),
    (programs.or_default, (0,)), (programs.or_default, (4,)),
    (programs.branch_on_object, (programs.Switch(False),)),
    (programs.branch_on_object, (programs.Bag([1]),)),
]
TENSOR_CONDITIONS = [
    (programs.tensor_if, ()), (programs.tensor_not, ()), (programs.tensor_while, ()),
    (programs.tensor_or, (torch.full((3,), 5.0),)),
]


def case_id(value) -> str:
    """A test id without addresses: functions by name, objects by class and state."""
    if callable(value) and hasattr(value, "__name__"):
        return value.__name__
    if isinstance(value, tuple):
        return ",".join(case_id(item) for item in value)
    if hasattr(value, "__dict__"):
        return f"{type(value).__name__}{vars(value)}"
    return repr(value)


@pytest.mark.task("ch06.3")
@pytest.mark.parametrize("fn, args", PYTHON_CONDITIONS, ids=case_id)
def test_the_stack_is_cpythons_after_every_python_jump(fn, args):
    """`n or 3` falls through having popped n; `n and 2` jumps keeping it: whichever
    way a jump goes, the next instruction sees CPython's stack depth."""
    with custom_translators(**jump_handlers()):
        assert_stack_depths_match_cpython(fn, torch.randn(3), *args)


@pytest.mark.task("ch06.3")
@pytest.mark.parametrize("fn, args", TENSOR_CONDITIONS, ids=lambda value: getattr(value, "__name__", ""))
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_the_stack_is_cpythons_up_to_a_tensor_jump(fn, args, sign):
    """Up to the break (the resume functions are code CPython never runs)."""
    x = sign * torch.tensor([1.0, -1.0, 0.5])
    with custom_translators(**jump_handlers()):
        steps = assert_stack_depths_match_cpython(fn, x, *args)
    assert any(step.code is fn.__code__ and "JUMP" in step.opname for step in steps)
