"""The scanner: from co_code bytes to a list of linked Instructions (chapter 1).

A 3.11 code object stores its bytecode as 2-byte code units: an opcode and a
one-byte argument. Three things make the bytes awkward to edit, and the scanner
undoes each of them:

1. Arguments above 255 are spelled with EXTENDED_ARG prefixes that supply the
   higher bytes (`fold_extended_args`).
2. Specialising opcodes are followed by inline CACHE units the interpreter
   writes into at run time; they carry no meaning for us and are dropped
   (`read_code_units`).
3. Jumps and exception handlers name their destinations by offset, which any
   edit would invalidate; they become references to Instructions
   (`resolve_jump_targets`, `attach_exception_entries`).

The result agrees with `dis.get_instructions` field by field (the tests check
it over the standard library), minus the EXTENDED_ARG and CACHE entries.

Compare with TorchDynamo: `cleaned_instructions` and `virtualize_jumps` in
`torch/_dynamo/bytecode_transformation.py`.
"""

from __future__ import annotations

import dis
from types import CodeType
from typing import Any, Iterator, NamedTuple

from minidynamo.bytecode import opcodes
from minidynamo.bytecode.exception_table import (
    CODE_UNIT,
    ExceptionTableEntry,
    decode_exception_table,
)
from minidynamo.bytecode.instruction import Instruction, InstructionExceptionEntry

# FORMAT_VALUE's low two bits: which conversion (!s, !r, !a) to apply first.
FORMAT_CONVERSIONS = ((None, ""), (str, "str"), (repr, "repr"), (ascii, "ascii"))
FORMAT_HAS_SPEC = 0x4
# MAKE_FUNCTION's arg bits: which extras were pushed below the code object.
MAKE_FUNCTION_FLAGS = ("defaults", "kwdefaults", "annotations", "closure")


class CodeUnit(NamedTuple):
    """One real instruction read from co_code, EXTENDED_ARG prefixes folded in."""

    start: int          # offset of its first EXTENDED_ARG prefix, or of itself
    offset: int         # offset of the opcode proper
    opcode: int
    arg: int | None     # None for an opcode below HAVE_ARGUMENT


class ArgTables(NamedTuple):
    """The tables an instruction's arg can index, taken from its code object."""

    consts: tuple[Any, ...]
    names: tuple[str, ...]
    variables: tuple[str, ...]   # localsplus: locals, then cells, then free vars

    @classmethod
    def from_code(cls, code: CodeType) -> ArgTables:
        variables = opcodes.localsplus_names(
            code.co_varnames, code.co_cellvars, code.co_freevars)
        return cls(code.co_consts, code.co_names, variables)


def read_code_units(co_code: bytes) -> Iterator[tuple[int, int, int]]:
    """Yield (offset, opcode, arg byte) for each instruction, skipping CACHE units."""
    offset = 0
    while offset < len(co_code):
        opcode = co_code[offset]
        yield offset, opcode, co_code[offset + 1]
        caches = opcodes.cache_entries(opcodes.OPNAME[opcode])
        offset += CODE_UNIT * (1 + caches)


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


def jump_target_offset(opname: str, offset: int, arg: int) -> int:
    """The byte offset a jump at `offset` with argument `arg` lands on.

    Relative jumps count code units from the end of the jump instruction
    (its CACHE units included); absolute jumps name a code unit directly.
    """
    end = offset + CODE_UNIT * (1 + opcodes.cache_entries(opname))
    if opname in opcodes.FORWARD_JUMPS:
        return end + arg * CODE_UNIT
    if opname in opcodes.BACKWARD_JUMPS:
        return end - arg * CODE_UNIT
    return arg * CODE_UNIT


def arg_kind(opname: str) -> str:
    """Which table or meaning an opcode's argument refers to."""
    if opname in opcodes.CONST_ARGS:
        return "const"
    if opname in opcodes.NAME_ARGS:
        return "name"
    if opname in opcodes.LOCAL_ARGS or opname in opcodes.FREE_ARGS:
        return "variable"
    if opname in opcodes.JUMPS:
        return "jump"
    return opname if opname in _SPECIAL_ARGS else "plain"


def _describe_name(opname: str, arg: int, tables: ArgTables) -> tuple[Any, str]:
    flag_bits = opcodes.NAME_FLAG_BITS.get(opname, 0)
    name = tables.names[arg >> flag_bits]
    pushes_null = flag_bits and arg & 1   # 3.11's only flag: LOAD_GLOBAL's NULL
    return name, f"NULL + {name}" if pushes_null else name


def _describe_format(arg: int) -> tuple[Any, str]:
    conversion, text = FORMAT_CONVERSIONS[arg & 0x3]
    has_spec = bool(arg & FORMAT_HAS_SPEC)
    parts = [text] if text else []
    if has_spec:
        parts.append("with format")
    return (conversion, has_spec), ", ".join(parts)


_SPECIAL_ARGS = {
    "COMPARE_OP": lambda arg: (opcodes.COMPARE_OPERATORS[arg],) * 2,
    "BINARY_OP": lambda arg: (arg, opcodes.BINARY_OP_SYMBOLS[arg]),
    "FORMAT_VALUE": _describe_format,
    "MAKE_FUNCTION": lambda arg: (arg, ", ".join(
        flag for bit, flag in enumerate(MAKE_FUNCTION_FLAGS) if arg & (1 << bit))),
}


def describe_arg(opname: str, arg: int | None, offset: int,
                 tables: ArgTables) -> tuple[Any, str]:
    """(argval, argrepr) of an instruction, as `dis` reports them."""
    if arg is None:
        return None, ""
    kind = arg_kind(opname)
    if kind == "const":
        return tables.consts[arg], repr(tables.consts[arg])
    if kind == "name":
        return _describe_name(opname, arg, tables)
    if kind == "variable":
        return tables.variables[arg], tables.variables[arg]
    if kind == "jump":
        target = jump_target_offset(opname, offset, arg)
        return target, f"to {target}"
    if kind in _SPECIAL_ARGS:
        return _SPECIAL_ARGS[kind](arg)
    return arg, ""


def find_line_starts(code: CodeType) -> dict[int, int]:
    """Map the offset where each new source line begins to that line number."""
    starts = {}
    previous = None
    for start, _end, line in code.co_lines():
        if line is not None and line != previous:
            starts[start] = line
            previous = line
    return starts


def decode_unit(unit: CodeUnit, tables: ArgTables, line_starts: dict[int, int],
                positions: list[tuple]) -> Instruction:
    """Build the Instruction for one folded code unit (targets resolved later)."""
    opname = opcodes.OPNAME[unit.opcode]
    argval, argrepr = describe_arg(opname, unit.arg, unit.offset, tables)
    starts_line = next((line_starts[offset]
                        for offset in range(unit.start, unit.offset + 1, CODE_UNIT)
                        if offset in line_starts), None)
    return Instruction(
        opcode=unit.opcode, opname=opname, arg=unit.arg, argval=argval,
        argrepr=argrepr, offset=unit.offset, starts_line=starts_line,
        positions=dis.Positions(*positions[unit.offset // CODE_UNIT]),
    )


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


def attach_exception_entries(instructions: list[Instruction],
                             rows: list[ExceptionTableEntry],
                             index_at: dict[int, int]) -> None:
    """Give each instruction inside a protected range that range's entry.

    A row covers the instructions from the one at `row.start` up to the last
    one beginning before `row.end`; they all share one
    InstructionExceptionEntry whose handler Instruction is marked as a jump
    target (dis does the same).
    """
    for row in rows:
        first = index_at[row.start]
        last = first
        while last + 1 < len(instructions) and instructions[last + 1].offset < row.end:
            last += 1
        handler = instructions[index_at[row.target]]
        handler.is_jump_target = True
        entry = InstructionExceptionEntry(
            start=instructions[first], end=instructions[last], target=handler,
            depth=row.depth, lasti=row.lasti)
        for instruction in instructions[first:last + 1]:
            instruction.exn_tab_entry = entry


def scan(code: CodeType) -> list[Instruction]:
    """Decode a code object into Instructions whose jumps and handlers are linked.

    EXTENDED_ARG prefixes are folded into the argument, CACHE units dropped,
    jump targets and exception-table rows resolved to Instructions. A function
    is accepted too and its `__code__` scanned.
    """
    code = getattr(code, "__code__", code)
    tables = ArgTables.from_code(code)
    line_starts = find_line_starts(code)
    positions = list(code.co_positions())
    instructions: list[Instruction] = []
    index_at: dict[int, int] = {}
    for unit in fold_extended_args(read_code_units(code.co_code)):
        for offset in range(unit.start, unit.offset + 1, CODE_UNIT):
            index_at[offset] = len(instructions)
        instructions.append(decode_unit(unit, tables, line_starts, positions))
    resolve_jump_targets(instructions, index_at)
    attach_exception_entries(
        instructions, decode_exception_table(code.co_exceptiontable), index_at)
    return instructions
