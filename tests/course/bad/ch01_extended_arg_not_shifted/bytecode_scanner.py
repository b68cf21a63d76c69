"""A common mistake: EXTENDED_ARG's byte is added, not shifted into the high bits."""

from __future__ import annotations


def fold_extended_args(units):
    folded = []
    prefix_start = None
    extra = 0
    for offset, opcode, arg_byte in units:
        if opcode == opcodes.EXTENDED_ARG:
            if prefix_start is None:
                prefix_start = offset
            extra += arg_byte
            continue
        arg = extra + arg_byte if opcodes.has_arg(opcode) else None
        start = offset if prefix_start is None else prefix_start
        folded.append(CodeUnit(start, offset, opcode, arg))
        prefix_start, extra = None, 0
    return folded


# right (the solution's), so that only ch01.1 may lose points
def resolve_jump_targets(instructions: list[Instruction],
                         index_at: dict[int, int]) -> None:
    """Point every jump's `target` at the Instruction its argument lands on.

    `index_at` maps each byte offset where an instruction begins (its
    EXTENDED_ARG prefixes included) to that instruction's index. The target
    is marked `is_jump_target`.
    """
    for instruction in instructions:
        if instruction.opname not in opcodes.JUMPS:
            continue
        offset = jump_target_offset(instruction.opname, instruction.offset, instruction.arg)
        if offset not in index_at:
            raise ValueError(f"{instruction} jumps to {offset}, which starts no instruction")
        target = instructions[index_at[offset]]
        instruction.target = target
        target.is_jump_target = True
