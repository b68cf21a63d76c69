"""Control-flow analysis over Instructions: successors and live variables (chapter 1).

Once jumps and exception handlers are references, the instruction list is a
control-flow graph: from each instruction control goes to the next one
(unless it returns, raises or jumps unconditionally), to its jump target, and,
if it raises inside a `try`, to its exception handler. Two analyses walk that
graph:

* `stack.stack_depths` / `max_stack_depth` push stack depths forward along it;
* `live_variables` pulls variable uses backward along it: which local
  variables may still be *read* from a given point on, before being written?
  Chapter 7 needs exactly that set: a resume function, the code that runs
  after a graph break, must receive every live variable as an argument.

Compare with TorchDynamo: `torch/_dynamo/bytecode_analysis.py`
(`livevars_analysis`, `stacksize_analysis`).
"""

from __future__ import annotations

from minidynamo.bytecode import opcodes
from minidynamo.bytecode.instruction import Instruction


def instruction_indexes(instructions: list[Instruction]) -> dict[int, int]:
    """Map id(instruction) -> its index: Instructions are compared by identity."""
    return {id(instruction): index for index, instruction in enumerate(instructions)}


def successors(instructions: list[Instruction], index: int,
               indexes: dict[int, int]) -> list[int]:
    """Indexes of the instructions control may reach right after instructions[index].

    The next instruction (unless this one stops the flow), the jump target,
    and the exception handler if this instruction is inside a `try`.
    """
    instruction = instructions[index]
    following = []
    if instruction.opname not in opcodes.STOPS_FLOW and index + 1 < len(instructions):
        following.append(index + 1)
    if instruction.target is not None:
        following.append(indexes[id(instruction.target)])
    if instruction.exn_tab_entry is not None:
        following.append(indexes[id(instruction.exn_tab_entry.target)])
    return following


def reads_and_writes(instruction: Instruction) -> tuple[set[str], set[str]]:
    """The variable names an instruction reads and the ones it overwrites.

    DELETE_FAST x is both: it fails if x is unbound (a read), and afterwards
    x's old value is gone (a write).
    """
    reads = {instruction.argval} if instruction.opname in opcodes.LOCAL_READS else set()
    writes = {instruction.argval} if instruction.opname in opcodes.LOCAL_WRITES else set()
    return reads, writes


def live_variables(instructions: list[Instruction], start: Instruction) -> set[str]:
    """Names of the variables that may be read before being written, from `start` on.

    A variable is live at an instruction if some path from there reads it
    before any write to it. We compute, for every instruction, the set live on
    entry: live_in = reads | (live_out - writes), where live_out is the union
    of the successors' live_in, repeating until nothing changes (a backward
    data-flow fixed point; loops need more than one pass). Locals, cells and
    free variables are all included.
    """
    indexes = instruction_indexes(instructions)
    following = [successors(instructions, index, indexes)
                 for index in range(len(instructions))]
    effects = [reads_and_writes(instruction) for instruction in instructions]
    live_in: list[set[str]] = [set() for _ in instructions]
    changed = True
    while changed:
        changed = False
        for index in reversed(range(len(instructions))):
            live_out = set().union(*(live_in[successor] for successor in following[index]))
            reads, writes = effects[index]
            updated = reads | (live_out - writes)
            if updated != live_in[index]:
                live_in[index] = updated
                changed = True
    return live_in[indexes[id(start)]]
