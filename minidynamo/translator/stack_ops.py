"""Handlers that only move values on the stack: NOP, POP_TOP, COPY, SWAP, PUSH_NULL (chapter 2).

These are the symbolic VM at its simplest: the same stack manipulation as
CPython's, on VariableTrackers instead of objects.

Compare with TorchDynamo: the same-named methods of `InstructionTranslatorBase`
in `torch/_dynamo/symbolic_convert.py`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from minidynamo.bytecode import Instruction
from minidynamo.variables import NullVariable

if TYPE_CHECKING:
    from minidynamo.translator.base import InstructionTranslatorBase


class StackHandlers:
    """Stack manipulation."""

    def NOP(self: InstructionTranslatorBase, inst: Instruction) -> None:
        pass

    def RESUME(self: InstructionTranslatorBase, inst: Instruction) -> None:
        pass  # CPython's hook for tracing and interrupts: nothing to model

    def PRECALL(self: InstructionTranslatorBase, inst: Instruction) -> None:
        pass  # a 3.11 specialisation hint; CALL does the work

    def POP_TOP(self: InstructionTranslatorBase, inst: Instruction) -> None:
        self.pop()

    def PUSH_NULL(self: InstructionTranslatorBase, inst: Instruction) -> None:
        self.push(NullVariable())

    def COPY(self: InstructionTranslatorBase, inst: Instruction) -> None:
        self.push(self.stack[-inst.arg])

    def SWAP(self: InstructionTranslatorBase, inst: Instruction) -> None:
        self.stack[-1], self.stack[-inst.arg] = self.stack[-inst.arg], self.stack[-1]
