"""A common mistake: take the exception-table entry of the instruction and stop there.
That is the innermost block only; the blocks around it protect *its handler*, so
finding them means walking from each handler outward. A break inside the inner of
two `with` blocks then re-enters only the inner one, and an `except` body inside
another loses the outer exception."""

from __future__ import annotations


class Blocks:
    def enclosing(self, target: Instruction) -> list[InstructionExceptionEntry]:
        entry = self.entry_around(target)
        return [] if entry is None else [entry]
