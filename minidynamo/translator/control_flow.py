"""Control flow: jumps on constants, loops unrolled by FOR_ITER, RETURN_VALUE (chapter 2).

The translator follows *one* path through the code. A conditional jump pops
its condition; if the tracker knows its truth value at trace time (a constant,
the length of a list, `x is None` on a tensor), the translator simply goes that
way, and the other branch never appears anywhere. If the truth depends on a
tensor's data, it cannot know: that is a graph break (chapter 6 turns it into
two graphs and a resume function).

Loops are unrolled: GET_ITER makes an iterator tracker; each FOR_ITER asks it
for the next item and jumps past the loop when it is exhausted.

The jump opcodes are data: `pop_jump_if(condition)` builds the handler of
each POP_JUMP_* opcode from a small function of the popped value.

Compare with TorchDynamo: `generic_jump`, `jump`, `GET_ITER`, `FOR_ITER` in
`torch/_dynamo/symbolic_convert.py`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from minidynamo.bytecode import Instruction
from minidynamo.exc import graph_break
from minidynamo.variables import BuiltinVariable, ConstantVariable, VariableTracker
from minidynamo.variables.builtins import identity_compare, truth_value

if TYPE_CHECKING:
    from minidynamo.translator.base import Handler, InstructionTranslatorBase

Condition = Callable[["InstructionTranslatorBase", VariableTracker], bool]


def is_true(tx: InstructionTranslatorBase, value: VariableTracker) -> bool:
    return truth_value(tx, value)


def is_false(tx: InstructionTranslatorBase, value: VariableTracker) -> bool:
    return not truth_value(tx, value)


def is_none(tx: InstructionTranslatorBase, value: VariableTracker) -> bool:
    return identity_compare(value, ConstantVariable(None))


def is_not_none(tx: InstructionTranslatorBase, value: VariableTracker) -> bool:
    return not identity_compare(value, ConstantVariable(None))


def pop_jump_if(condition: Condition) -> Handler:
    """POP_JUMP_*_IF_*: pop the value; jump if `condition` holds for it."""

    def handler(self: InstructionTranslatorBase, inst: Instruction) -> None:
        if condition(self, self.pop()):
            self.jump(inst)

    return handler


def jump_if_or_pop(condition: Condition) -> Handler:
    """JUMP_IF_*_OR_POP (`a or b`, `a and b`): keep the value and jump, or pop it."""

    def handler(self: InstructionTranslatorBase, inst: Instruction) -> None:
        if condition(self, self.stack[-1]):
            self.jump(inst)
        else:
            self.pop()

    return handler


def unconditional_jump(self: InstructionTranslatorBase, inst: Instruction) -> None:
    self.jump(inst)


class ControlFlowHandlers:
    """Jumps, loops, returns and raises."""

    JUMP_FORWARD = unconditional_jump
    JUMP_BACKWARD = unconditional_jump
    JUMP_BACKWARD_NO_INTERRUPT = unconditional_jump

    POP_JUMP_FORWARD_IF_TRUE = pop_jump_if(is_true)
    POP_JUMP_BACKWARD_IF_TRUE = pop_jump_if(is_true)
    POP_JUMP_FORWARD_IF_FALSE = pop_jump_if(is_false)
    POP_JUMP_BACKWARD_IF_FALSE = pop_jump_if(is_false)
    POP_JUMP_FORWARD_IF_NONE = pop_jump_if(is_none)
    POP_JUMP_BACKWARD_IF_NONE = pop_jump_if(is_none)
    POP_JUMP_FORWARD_IF_NOT_NONE = pop_jump_if(is_not_none)
    POP_JUMP_BACKWARD_IF_NOT_NONE = pop_jump_if(is_not_none)
    JUMP_IF_TRUE_OR_POP = jump_if_or_pop(is_true)
    JUMP_IF_FALSE_OR_POP = jump_if_or_pop(is_false)

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

    def LOAD_ASSERTION_ERROR(self: InstructionTranslatorBase, inst: Instruction) -> None:
        self.push(BuiltinVariable(AssertionError))

    def RAISE_VARARGS(self: InstructionTranslatorBase, inst: Instruction) -> None:
        raised = self.stack[-1] if inst.arg else None
        what = getattr(getattr(raised, "fn", None), "__name__", str(raised))
        graph_break("exception in traced code", f"the code raises {what}")
