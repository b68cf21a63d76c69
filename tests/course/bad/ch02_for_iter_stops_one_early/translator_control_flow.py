"""A common mistake: FOR_ITER looks ahead and leaves the loop one item early."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable
from minidynamo.bytecode import Instruction
from minidynamo.exc import graph_break
from minidynamo.variables import BuiltinVariable, ConstantVariable, VariableTracker
from minidynamo.variables.builtins import identity_compare, truth_value
if TYPE_CHECKING:
    from minidynamo.translator.base import Handler, InstructionTranslatorBase


class ControlFlowHandlers:
    """The exercise methods of minidynamo.translator.control_flow.ControlFlowHandlers; the class keeps all its others."""

    def FOR_ITER(self: InstructionTranslatorBase, inst: Instruction) -> None:
        # A common mistake: "peek" at whether another item follows, and leave the loop
        # when none does, so the last item's iteration is never traced.
        iterator = self.pop()
        item = iterator.next_variable(self)
        latest = self.output.side_effects.latest(iterator)
        if item is None or not latest.remaining():
            self.jump(inst)
        else:
            self.push(latest)
            self.push(item)
