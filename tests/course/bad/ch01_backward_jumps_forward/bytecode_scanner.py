"""A common mistake: every relative jump is taken as forward, so loops jump past their end."""

from __future__ import annotations


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
