"""Instruction: one bytecode instruction as minidynamo edits it (chapter 1).

`dis.Instruction` is a read-only record of bytes at fixed offsets. To *rewrite*
bytecode we need instructions that point at each other instead of at offsets:
a jump holds its target `Instruction`, an instruction inside a `try` holds its
exception-table entry, whose ends and handler are Instructions too. Then code
can be inserted or removed freely, and the assembler recomputes every offset.

Instructions are compared by identity (`eq=False`): two `LOAD_FAST x` at
different places are different instructions, and a jump must find its own.

Compare with TorchDynamo: `torch._dynamo.bytecode_transformation.Instruction`
and `create_instruction`.
"""

from __future__ import annotations

import dis
from dataclasses import dataclass
from typing import Any

from minidynamo.bytecode import opcodes


class _Unset:
    """The type of UNSET: "no argval was given" (None is a valid argval)."""

    def __repr__(self) -> str:
        return "<unset>"


UNSET: Any = _Unset()


@dataclass(eq=False)
class Instruction:
    """One bytecode instruction, with jumps and handlers as object references.

    Attributes:
        opcode: the numeric opcode, as in `dis.opmap`.
        opname: the human-readable opcode name, e.g. "LOAD_FAST".
        arg: the numeric argument with EXTENDED_ARG prefixes folded in, or None
            for an opcode that takes no argument or a new instruction whose
            argument the assembler computes from `argval` or `target`.
        argval: what the arg means: the constant, the name, the comparison
            ("<"), the jump's target offset as scanned, or the arg itself.
        argrepr: argval as text for listings ("NULL + len", "to 42").
        offset: byte offset of this instruction's opcode in co_code (after its
            EXTENDED_ARG prefixes, as dis reports it); None for a new one.
        starts_line: the source line if this instruction starts one, else None.
        positions: `dis.Positions(lineno, end_lineno, col_offset, end_col_offset)`
            of the source this instruction came from; None for a new one (the
            assembler then gives it the positions of the instruction before it).
        is_jump_target: True if a jump or an exception handler lands here (as
            `dis.dis` marks it with ">>"; 3.11's `dis.get_instructions` leaves
            handlers unmarked).
        target: for a jump, the Instruction it jumps to; otherwise None.
        exn_tab_entry: the exception-table entry covering this instruction (an
            exception raised here unwinds to `exn_tab_entry.target`), or None.
    """

    opcode: int
    opname: str
    arg: int | None
    argval: Any
    argrepr: str = ""
    offset: int | None = None
    starts_line: int | None = None
    positions: dis.Positions | None = None
    is_jump_target: bool = False
    target: Instruction | None = None
    exn_tab_entry: InstructionExceptionEntry | None = None

    def __repr__(self) -> str:
        shown = self.argrepr or ("" if self.argval is None else repr(self.argval))
        if self.target is not None:
            shown = f"-> {_describe(self.target)}"
        parts = [self.opname, shown, "new" if self.offset is None else f"@{self.offset}"]
        return f"Instruction({' '.join(part for part in parts if part)})"


@dataclass(eq=False)
class InstructionExceptionEntry:
    """One exception-table row, expressed with Instructions instead of offsets.

    Every instruction from `start` to `end` (both included) carries this object
    as its `exn_tab_entry`. An exception raised by one of them pops the value
    stack down to `depth` items, pushes the offset of the raising instruction if
    `lasti` is true, pushes the exception, and jumps to `target`.

    Attributes:
        start: the first instruction covered.
        end: the last instruction covered (inclusive, unlike the raw table).
        target: the first instruction of the handler.
        depth: stack depth to unwind to before the handler runs.
        lasti: whether the handler also receives the raising instruction's offset
            (used by `with` and `finally` blocks to re-raise precisely).
    """

    start: Instruction
    end: Instruction
    target: Instruction
    depth: int
    lasti: bool

    def __repr__(self) -> str:
        return (
            f"InstructionExceptionEntry({_describe(self.start)} .. {_describe(self.end)}"
            f" -> {_describe(self.target)}, depth={self.depth}, lasti={self.lasti})"
        )


def _describe(instruction: Instruction) -> str:
    """A short non-recursive name for an instruction inside another's repr."""
    where = "new" if instruction.offset is None else f"@{instruction.offset}"
    return f"{instruction.opname} {where}"


def create_instruction(
    opname: str,
    *,
    arg: int | None = None,
    argval: Any = UNSET,
    target: Instruction | None = None,
) -> Instruction:
    """A new instruction for generated code; the assembler completes it.

    Give either `arg` (the raw number) or `argval` (what it means: a constant
    for LOAD_CONST, a name for LOAD_FAST / LOAD_GLOBAL / LOAD_ATTR, "<" for
    COMPARE_OP, "+" for BINARY_OP); jumps give `target`. The assembler computes
    the missing `arg` when it lays the code out.

    Two conveniences keep generated code version-neutral: a direction-neutral
    jump name ("POP_JUMP_IF_FALSE", "JUMP") becomes a real 3.11 jump whose
    direction the assembler fixes, and for opcodes that pack flags under a name
    index (LOAD_GLOBAL's "push NULL" bit) `arg` may give just those flag bits:
    `create_instruction("LOAD_GLOBAL", argval="len", arg=1)` pushes NULL + len.

        >>> create_instruction("LOAD_CONST", argval=42)
        Instruction(LOAD_CONST 42 new)
    """
    opname = opcodes.canonical_opname(opname)
    if opname not in opcodes.OPMAP:
        raise ValueError(_unknown_opname_message(opname))
    if argval is UNSET:
        argval = arg
    if argval is None:
        argrepr = ""
    else:
        argrepr = repr(argval) if opname in opcodes.CONST_ARGS else str(argval)
    return Instruction(
        opcode=opcodes.OPMAP[opname], opname=opname, arg=arg, argval=argval,
        argrepr=argrepr, target=target,
    )


def _unknown_opname_message(opname: str) -> str:
    """Name the unknown opcode and suggest the closest real ones."""
    import difflib

    close = difflib.get_close_matches(opname, list(opcodes.OPMAP), n=3)
    hint = f" Did you mean {', '.join(close)}?" if close else ""
    return f"{opname!r} is not an opcode of this Python.{hint}"
