"""A common mistake: FOR_ITER leaves the exhausted iterator on the stack, as 3.12's does."""

from __future__ import annotations

from typing import TYPE_CHECKING
from minidynamo.bytecode import Instruction
if TYPE_CHECKING:
    from minidynamo.translator.base import InstructionTranslatorBase


class ControlFlowHandlers:
    """The exercise methods of minidynamo.translator.control_flow.ControlFlowHandlers; the class keeps all its others."""

    def FOR_ITER(self: InstructionTranslatorBase, inst: Instruction) -> None:
        # A common mistake, from CPython 3.12's documentation: "when the iterator is
        # exhausted, jump; END_FOR pops it". 3.11 has no END_FOR: its FOR_ITER pops the
        # iterator itself. The value left behind sits under everything the loop's code
        # does next; a single loop's result does not show it, only a loop around it does.
        iterator = self.pop()
        item = iterator.next_variable(self)
        if item is None:
            self.push(iterator)
            self.jump(inst)
        else:
            self.push(self.output.side_effects.latest(iterator))
            self.push(item)
