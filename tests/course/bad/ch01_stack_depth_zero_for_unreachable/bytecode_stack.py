"""A plausible mistake: the depth list starts as zeros, so an instruction the walk
never reaches reads as "depth 0" instead of "no depth" (None). Every reachable
instruction still gets its right depth, so only a test that looks at unreachable code
(dead code after a return, a handler no instruction is covered by) can tell."""

from __future__ import annotations

from minidynamo.bytecode import opcodes
from minidynamo.bytecode.analysis import instruction_indexes
from minidynamo.bytecode.instruction import Instruction

# defined next to the exercises in the package:
from minidynamo.bytecode.stack import (
    _check_same_depth, flow_effect, handler_depth, stack_effect,
)


def stack_depths(instructions: list[Instruction]) -> list[int | None]:
    """The stack depth before each instruction; None for unreachable ones.

    A worklist walk from the first instruction at depth 0: follow the
    fall-through, jump and exception edges, recording the depth each
    instruction is first reached with. Well-formed bytecode reaches every
    instruction with one depth only, so a disagreement is reported.
    """
    indexes = instruction_indexes(instructions)
    depths: list[int | None] = [0] * len(instructions)
    worklist = [(0, 0)] if instructions else []
    visited: set[int] = set()
    while worklist:
        index, depth = worklist.pop()
        while index < len(instructions):
            if index in visited:
                _check_same_depth(instructions[index], depths[index], depth)
                break
            depths[index] = depth
            visited.add(index)
            instruction = instructions[index]
            if instruction.exn_tab_entry is not None:
                handler = indexes[id(instruction.exn_tab_entry.target)]
                worklist.append((handler, handler_depth(instruction)))
            if instruction.target is not None:
                target = indexes[id(instruction.target)]
                worklist.append((target, depth + stack_effect(instruction, jump=True)))
            if instruction.opname in opcodes.STOPS_FLOW:
                break
            depth += flow_effect(instruction)
            index += 1
    return depths
