"""A common mistake: CALL's two stack shapes written as two branches, and the keyword
names applied in one of them only."""

from __future__ import annotations

from typing import TYPE_CHECKING
from minidynamo.bytecode import Instruction
from minidynamo.variables import NullVariable
if TYPE_CHECKING:
    from minidynamo.translator.base import InstructionTranslatorBase


class CallHandlers:
    """The exercise methods of minidynamo.translator.calls.CallHandlers; the class keeps all its others."""

    def CALL(self: InstructionTranslatorBase, inst: Instruction) -> None:
        args = self.popn(inst.arg)
        second, first = self.pop(), self.pop()
        names, self.kw_names = self.kw_names, ()
        if isinstance(first, NullVariable):  # [NULL, callable, args]
            positional = args[: len(args) - len(names)]
            keywords = dict(zip(names, args[len(args) - len(names):]))
            self.call_function(second, positional, keywords)
        else:  # [callable, self, args]: the keyword values are passed as positional ones
            self.call_function(first, [second, *args], {})
