"""Stack effects and the maximum stack depth of a code object (chapter 1).

CPython's virtual machine keeps temporaries on a value stack whose size is
fixed when the frame is created: `code.co_stacksize`. Every opcode moves the
stack by a known amount (`stack_effect`): LOAD_FAST pushes 1, BINARY_OP pops 2
and pushes 1 (net -1), a conditional jump may move it differently when it
jumps than when it falls through. Walking every path through the code from
depth 0 gives the depth before each instruction (`stack_depths`), and the
largest depth seen is the stack size a rebuilt code object needs.

The net effects are data, in `opcodes.STACK_EFFECTS` and
`opcodes.BRANCH_EFFECTS`; the tests check them against `dis.stack_effect`.

Compare with CPython: `stackdepth()` in `Python/compile.c`; TorchDynamo:
`stacksize_analysis` in `torch/_dynamo/bytecode_analysis.py`.
"""

from __future__ import annotations

from minidynamo.bytecode import opcodes
from minidynamo.bytecode.analysis import instruction_indexes
from minidynamo.bytecode.instruction import Instruction


def _numeric_arg(instruction: Instruction) -> int:
    """The arg a stack effect depends on; a new instruction may only have argval."""
    if instruction.arg is not None:
        return instruction.arg
    return instruction.argval if isinstance(instruction.argval, int) else 0


def stack_effect(instruction: Instruction, *, jump: bool | None = None) -> int:
    """Net change of the stack depth caused by executing `instruction`.

    For an opcode that behaves differently when it jumps, `jump=True` gives
    the effect on the jump, `jump=False` on the fall-through, and `jump=None`
    the larger of the two (the same convention as `dis.stack_effect`).
    """
    opname = instruction.opname
    if opname in opcodes.BRANCH_EFFECTS:
        falls_through, jumps = opcodes.BRANCH_EFFECTS[opname]
        if jump is None:
            return max(falls_through, jumps)
        return jumps if jump else falls_through
    if opname not in opcodes.STACK_EFFECTS:
        raise ValueError(f"no stack effect known for {opname}")
    effect = opcodes.STACK_EFFECTS[opname]
    return effect(_numeric_arg(instruction)) if callable(effect) else effect


def flow_effect(instruction: Instruction) -> int:
    """Stack change from this instruction to the next one in straight-line flow.

    `stack_effect(jump=False)`, except after RETURN_GENERATOR: the frame is
    resumed later with the first sent value pushed, which dis does not count.
    """
    resumed = 1 if instruction.opname in opcodes.RESUMES_WITH_VALUE else 0
    return stack_effect(instruction, jump=False) + resumed


def handler_depth(instruction: Instruction) -> int:
    """Stack depth at the start of the exception handler covering `instruction`.

    The unwinder keeps `depth` values, pushes the raising offset if `lasti`,
    then pushes the exception itself.
    """
    entry = instruction.exn_tab_entry
    return entry.depth + int(entry.lasti) + 1


def stack_depths(instructions: list[Instruction]) -> list[int | None]:
    """The stack depth before each instruction; None for unreachable ones.

    A worklist walk from the first instruction at depth 0: follow the
    fall-through, jump and exception edges, recording the depth each
    instruction is first reached with. Well-formed bytecode reaches every
    instruction with one depth only, so a disagreement is reported.
    """
    indexes = instruction_indexes(instructions)
    depths: list[int | None] = [None] * len(instructions)
    worklist = [(0, 0)] if instructions else []
    while worklist:
        index, depth = worklist.pop()
        while index < len(instructions):
            if depths[index] is not None:
                _check_same_depth(instructions[index], depths[index], depth)
                break
            depths[index] = depth
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


def _check_same_depth(instruction: Instruction, recorded: int, arriving: int) -> None:
    if recorded != arriving:
        raise ValueError(
            f"{instruction} is reached with stack depth {recorded} on one path "
            f"and {arriving} on another; the bytecode is malformed")


def max_stack_depth(instructions: list[Instruction]) -> int:
    """The largest stack depth any path reaches: the code object's co_stacksize."""
    deepest = 0
    for instruction, depth in zip(instructions, stack_depths(instructions)):
        if depth is not None:
            after = depth + flow_effect(instruction)
            deepest = max(deepest, depth, after)
    return deepest
