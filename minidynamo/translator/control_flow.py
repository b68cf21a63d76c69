"""Control flow: generic_jump, the jumps, loops unrolled by FOR_ITER (chapters 2, 6).

The translator follows *one* path through the code. A conditional jump pops
its condition and asks `generic_jump` which way to go. The answer depends on
the *kind* of value, exactly as CPython's `bool()` would find it:

- a constant chooses its branch (`if n > 0` with n an int);
- a container answers with its length, which its tracker always knows;
- a user object's `__bool__` (or else `__len__`) is *traced*, inlined like any
  call, and its result is asked again;
- a tensor cannot answer: its data is not known while tracing. That is a graph
  break (kind "data-dependent branch"). The root translator turns it into a
  partial graph and two resume functions, one per branch (chapter 7,
  `translator/breaks.py`); an inlined one lets it travel to its caller's CALL.

`generic_jump` is an exercise (chapter 6), so the handler table below does not call
it while the class body runs (the student edition's package, every exercise
stubbed, must still import): `deferred_generic_jump` calls it when the jump runs.

An `assert` on a tensor is the exception: its jump becomes a graph node,
`torch._assert_async(condition, message)`, and no break (chapter 8).

`x is None` style jumps (POP_JUMP_*_IF_NONE) never need the data: a tensor is
never None.

Loops are unrolled: GET_ITER makes an iterator tracker; each FOR_ITER asks it
for the next item and jumps past the loop when it is exhausted.

Compare with TorchDynamo: `generic_jump`, `jump`, `GET_ITER`, `FOR_ITER` in
`torch/_dynamo/symbolic_convert.py`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import torch

from minidynamo import config
from minidynamo.bytecode import Instruction
from minidynamo.exc import DATA_DEPENDENT_BRANCH, Unsupported, graph_break
from minidynamo.variables import BuiltinVariable, ConstantVariable, TensorVariable, VariableTracker
from minidynamo.variables.builtins import identity_compare, truth_value

if TYPE_CHECKING:
    from minidynamo.translator.base import Handler, InstructionTranslatorBase

Truth = Callable[[bool], bool]  # the truth value of the condition -> whether to jump


def data_dependent_branch(value: VariableTracker) -> Unsupported:
    """The graph break of a jump on a tensor (returned, so the root can handle it)."""
    try:
        graph_break(
            DATA_DEPENDENT_BRANCH,
            f"generic_jump on {value}: the truth value of a tensor (`if`, `while`, "
            "`and`, `or`, `not`) depends on its data",
        )
    except Unsupported as error:
        return error


def bool_of_user_object(tx: InstructionTranslatorBase, value: VariableTracker) -> VariableTracker:
    """Trace `value.__bool__()` (or `len(value) != 0`): CPython's rule, inlined."""
    python_type = value.python_type()
    if hasattr(python_type, "__bool__"):
        return value.call_method(tx, "__bool__", [], {})
    length = value.call_method(tx, "__len__", [], {})
    return BuiltinVariable(bool).call_function(tx, [length], {})


def condition_value(tx: InstructionTranslatorBase, value: VariableTracker) -> VariableTracker:
    """The condition reduced to a constant or a tensor: user objects are asked first."""
    value = value.realize()
    python_type = value.python_type() if not isinstance(value, TensorVariable) else None
    is_user_object = (
        python_type is not None
        and not value.is_python_constant()
        and not hasattr(value, "dunder_len")
        and python_type.__module__ not in ("builtins", "torch")
        and (hasattr(python_type, "__bool__") or hasattr(python_type, "__len__"))
    )
    return bool_of_user_object(tx, value).realize() if is_user_object else value


def generic_jump(jump_if: Truth, *, keep: bool) -> Handler:
    """The handler of a conditional jump (chapter 6).

    `jump_if(truth)` says whether to jump for the condition's truth value;
    `keep` is True for JUMP_IF_*_OR_POP, which leave the value on the stack
    when they jump. A tensor condition is a graph break: the root translator
    compiles a partial graph and lets the real jump choose a resume function.
    """

    def handler(self: InstructionTranslatorBase, inst: Instruction) -> None:
        value = self.pop()
        condition = condition_value(self, value)
        if isinstance(condition, TensorVariable):
            error = data_dependent_branch(condition)
            self.push(value)  # the frame's state at the break, condition on top
            self.break_on_jump(inst, error, keep=keep)
            return
        if jump_if(truth_value(self, condition)):
            if keep:
                self.push(value)
            self.jump(inst)

    return handler


def deferred_generic_jump(jump_if: Truth, *, keep: bool) -> Handler:
    """The handler `generic_jump(jump_if, keep=keep)` makes, made each time the jump
    runs (a closure: cheap), so the translator uses whichever `generic_jump` is plugged."""

    def handler(self: InstructionTranslatorBase, inst: Instruction) -> None:
        generic_jump(jump_if, keep=keep)(self, inst)

    return handler


def assert_message(tx: InstructionTranslatorBase, inst: Instruction) -> str | None:
    """The message of the `assert` whose jump `inst` is, or None if `inst` is not one.

    `assert condition, "message"` compiles to a POP_JUMP_FORWARD_IF_TRUE over
    LOAD_ASSERTION_ERROR, [LOAD_CONST "message", PRECALL 0, CALL 0,] RAISE_VARARGS 1.
    A message that is not a constant string (an f-string) is not recognised."""
    following = [i.opname for i in tx.instructions[tx.instruction_pointer:][:5]]
    if following[:2] == ["LOAD_ASSERTION_ERROR", "RAISE_VARARGS"]:
        return "assertion error"  # torch's message when the assert has none
    if following == ["LOAD_ASSERTION_ERROR", "LOAD_CONST", "PRECALL", "CALL", "RAISE_VARARGS"]:
        message = tx.instructions[tx.instruction_pointer + 1].argval
        return message if isinstance(message, str) else None
    return None


def tensor_assert(tx: InstructionTranslatorBase, inst: Instruction) -> bool:
    """`assert tensor_condition, "message"` (chapter 8): the condition's data is not
    known while tracing, so the check becomes a graph node, `torch._assert_async(
    condition, message)`, that raises when the graph runs, and tracing goes on past
    the `raise`, as torch.compile does (`config.rewrite_assert_with_torch_assert`).
    False, touching nothing, when `inst` is not such an assert."""
    if not config.rewrite_assert_with_torch_assert or not isinstance(tx.stack[-1].realize(),
                                                                      TensorVariable):
        return False
    message = assert_message(tx, inst)
    if message is None:
        return False
    condition = tx.pop().realize()
    tx.output.create_node(tx, "call_function", torch._assert_async,
                          [condition, ConstantVariable(message)], {})
    tx.jump(inst)
    return True


def jump_if_true_or_assert(self: InstructionTranslatorBase, inst: Instruction) -> None:
    """POP_JUMP_FORWARD_IF_TRUE: an assert on a tensor, or any other jump."""
    if not tensor_assert(self, inst):
        deferred_generic_jump(if_true, keep=False)(self, inst)


def jump_if_none(is_none: bool) -> Handler:
    """POP_JUMP_*_IF_NONE / _NOT_NONE: identity, never the data."""

    def handler(self: InstructionTranslatorBase, inst: Instruction) -> None:
        if identity_compare(self.pop(), ConstantVariable(None)) == is_none:
            self.jump(inst)

    return handler


def unconditional_jump(self: InstructionTranslatorBase, inst: Instruction) -> None:
    self.jump(inst)


def if_true(truth: bool) -> bool:
    return truth


def if_false(truth: bool) -> bool:
    return not truth


class ControlFlowHandlers:
    """Jumps and loops."""

    JUMP_FORWARD = unconditional_jump
    JUMP_BACKWARD = unconditional_jump
    JUMP_BACKWARD_NO_INTERRUPT = unconditional_jump

    POP_JUMP_FORWARD_IF_TRUE = jump_if_true_or_assert
    POP_JUMP_BACKWARD_IF_TRUE = deferred_generic_jump(if_true, keep=False)
    POP_JUMP_FORWARD_IF_FALSE = deferred_generic_jump(if_false, keep=False)
    POP_JUMP_BACKWARD_IF_FALSE = deferred_generic_jump(if_false, keep=False)
    POP_JUMP_FORWARD_IF_NONE = jump_if_none(True)
    POP_JUMP_BACKWARD_IF_NONE = jump_if_none(True)
    POP_JUMP_FORWARD_IF_NOT_NONE = jump_if_none(False)
    POP_JUMP_BACKWARD_IF_NOT_NONE = jump_if_none(False)
    JUMP_IF_TRUE_OR_POP = deferred_generic_jump(if_true, keep=True)
    JUMP_IF_FALSE_OR_POP = deferred_generic_jump(if_false, keep=True)

    def GET_ITER(self: InstructionTranslatorBase, inst: Instruction) -> None:
        self.push(self.pop().get_iterator(self))

    def FOR_ITER(self: InstructionTranslatorBase, inst: Instruction) -> None:
        iterator = self.pop()
        item = iterator.next_variable(self)  # makes the next version of the iterator
        if item is None:
            self.jump(inst)  # exhausted: the iterator stays popped
        else:
            self.push(self.output.side_effects.latest(iterator))
            self.push(item)
