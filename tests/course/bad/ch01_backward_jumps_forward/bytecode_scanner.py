"""A common mistake: every relative jump is taken as forward, so loops jump past their end."""

from __future__ import annotations


# right (the solution's), so that only ch01.2 may lose points
def fold_extended_args(units: Iterator[tuple[int, int, int]]) -> list[CodeUnit]:
    """Merge EXTENDED_ARG prefixes into the argument of the instruction they precede.

    Each EXTENDED_ARG shifts the argument collected so far left by 8 bits and
    adds its own byte; the real instruction adds the lowest byte. So
    `EXTENDED_ARG 1; JUMP_FORWARD 4` is `JUMP_FORWARD 260`.
    """
    folded = []
    prefix_start = None
    high_bits = 0
    for offset, opcode, arg_byte in units:
        if opcode == opcodes.EXTENDED_ARG:
            if prefix_start is None:
                prefix_start = offset
            high_bits = (high_bits | arg_byte) << 8
            continue
        arg = high_bits | arg_byte if opcodes.has_arg(opcode) else None
        start = offset if prefix_start is None else prefix_start
        folded.append(CodeUnit(start, offset, opcode, arg))
        prefix_start, high_bits = None, 0
    return folded


def resolve_jump_targets(instructions, index_at):
    for instruction in instructions:
        if instruction.opname not in opcodes.JUMPS:
            continue
        end = instruction.offset + CODE_UNIT * (1 + opcodes.cache_entries(instruction.opname))
        if instruction.opname in opcodes.RELATIVE_JUMPS:
            offset = end + instruction.arg * CODE_UNIT
        else:
            offset = instruction.arg * CODE_UNIT
        if offset in index_at:
            target = instructions[index_at[offset]]
            instruction.target = target
            target.is_jump_target = True
