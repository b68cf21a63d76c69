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
