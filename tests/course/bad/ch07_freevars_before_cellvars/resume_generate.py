"""A plausible mistake: the resume function's free variables are the original's free
variables, then its cells. But the caller builds the resume function's closure in the
other order (cells first, `MAKE_FUNCTION` with the frame's cell objects, then its free
ones), so in a frame with both, every cell and free variable reads the wrong cell. A
frame with only cells or only free variables cannot tell the two orders apart."""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from types import CodeType
from typing import Any, Sequence
from minidynamo.bytecode import Instruction, InstructionExceptionEntry, assemble, create_instruction, scan, stack_depths
from minidynamo.bytecode.analysis import instruction_indexes, successors
from minidynamo.resume.blocks import Blocks, WithBlock, instruction_at
from minidynamo.resume.origins import ResumeError

# defined next to the exercises in the package:
from minidynamo.resume.generate import RESUME_PREFIX, ResumePoint


def resume_code_fields(code: CodeType, point: ResumePoint, line: int) -> dict[str, Any]:
    """The code-object fields of the resume function (the rest comes from `code`).

    Arguments: the stack values, then the live locals; then the other locals.
    The original cells become free variables, before the original free ones.
    """
    arguments = point.stack_argument_names() + list(point.live_locals)
    others = [name for name in code.co_varnames
              if name not in arguments and name not in code.co_cellvars]
    freevars = code.co_freevars + code.co_cellvars
    flags = code.co_flags & ~(inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)
    if freevars:
        flags &= ~inspect.CO_NOFREE
    name = f"{RESUME_PREFIX}_{code.co_name}_at_{line}"
    scope, _, _ = code.co_qualname.rpartition(".")
    return dict(
        co_name=name, co_qualname=f"{scope}.{name}" if scope else name,
        co_firstlineno=line, co_flags=flags,
        co_argcount=len(arguments), co_posonlyargcount=0, co_kwonlyargcount=0,
        co_varnames=tuple(arguments + others), co_cellvars=(), co_freevars=freevars,
    )


class Prologue:
    """The exercise methods of minidynamo.resume.generate.Prologue; the class keeps all its others."""

    def build(self, target: Instruction) -> list[Instruction]:
        """COPY_FREE_VARS, RESUME, the stack bottom first, and a jump to `target`."""
        code: list[Instruction] = []
        if self.freevar_count:
            code.append(create_instruction("COPY_FREE_VARS", arg=self.freevar_count))
        code.append(create_instruction("RESUME", arg=0))
        values = iter(self.point.stack_argument_names())
        for slot in range(self.point.stack_depth):
            if slot in self.point.null_slots:
                code.append(create_instruction("PUSH_NULL"))
            else:
                code += self.push_slot(slot, next(values))
        code.append(create_instruction("JUMP", target=target))
        return code
