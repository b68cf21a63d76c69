"""The assembler: from a list of Instructions back to a code object (chapter 1).

The inverse of the scanner. Given instructions that may have been edited
(new ones with only an `argval` or a `target`, old ones moved around), it

1. fills in every argument: indexes into co_consts / co_names / the variable
   slots, appending constants, names and locals that are new (`assign_args`);
2. lays the code out: each instruction's size depends on how many
   EXTENDED_ARG prefixes its argument needs, and a jump's argument depends on
   the offsets, so we repeat until the sizes stop changing (`lay_out`), and
   turn each jump forward or backward as its target requires;
3. writes co_code with EXTENDED_ARG prefixes and zeroed CACHE units
   (`emit_code`), the location table (`line_table`), the exception table from
   the instructions' `exn_tab_entry` (`exception_rows`), and co_stacksize
   (`stack.max_stack_depth`).

An unmodified scan assembles to the very same bytes (the tests check it over
the standard library). `assemble` updates `arg`, `offset` and, for jumps,
`argval` of the instructions it lays out.

Compare with TorchDynamo: `assemble`, `fix_extended_args`, `fix_vars`,
`devirtualize_jumps` and `transform_code_object` in
`torch/_dynamo/bytecode_transformation.py`.
"""

from __future__ import annotations

import dis
from types import CodeType
from typing import Any

from minidynamo.bytecode import opcodes
from minidynamo.bytecode.analysis import instruction_indexes
from minidynamo.bytecode.exception_table import (
    CODE_UNIT,
    ExceptionTableEntry,
    encode_exception_table,
)
from minidynamo.bytecode.instruction import Instruction
from minidynamo.bytecode.line_table import encode_line_table
from minidynamo.bytecode.scanner import arg_kind
from minidynamo.bytecode.stack import max_stack_depth

MAX_ARG = (1 << 32) - 1


class CodeTables:
    """The growing co_consts, co_names and variable lists of the code being built."""

    FIELDS = ("co_consts", "co_names", "co_varnames")   # read here, then recomputed

    def __init__(self, template: CodeType, replace: dict[str, Any]):
        self.consts = list(replace.get("co_consts", template.co_consts))
        self.names = list(replace.get("co_names", template.co_names))
        self.varnames = list(replace.get("co_varnames", template.co_varnames))
        self.cellvars = tuple(replace.get("co_cellvars", template.co_cellvars))
        self.freevars = tuple(replace.get("co_freevars", template.co_freevars))

    def const_index(self, value: Any) -> int:
        """Index of `value` in co_consts, appending it if it is not there."""
        for index, const in enumerate(self.consts):
            if const is value or _same_constant(const, value):
                return index
        self.consts.append(value)
        return len(self.consts) - 1

    def name_index(self, name: str) -> int:
        """Index of `name` in co_names, appending it if it is new."""
        if name not in self.names:
            self.names.append(name)
        return self.names.index(name)

    def variable_index(self, name: str) -> int:
        """Index of a local, cell or free variable in the frame's slots."""
        slots = opcodes.localsplus_names(tuple(self.varnames), self.cellvars, self.freevars)
        return slots.index(name)


def _same_constant(first: Any, second: Any) -> bool:
    """Equal and of the same type: 1, 1.0 and True must stay distinct constants."""
    if type(first) is not type(second):
        return False
    try:
        return bool(first == second) and repr(first) == repr(second)  # 0.0 vs -0.0
    except Exception:
        return False


def _set_name_arg(instruction: Instruction, tables: CodeTables) -> None:
    """Name args: the name's index, shifted past any flag bits the opcode keeps."""
    if not isinstance(instruction.argval, str):
        return   # created with a raw arg only
    flag_bits = opcodes.NAME_FLAG_BITS.get(instruction.opname, 0)
    flags = (instruction.arg or 0) & ((1 << flag_bits) - 1)
    instruction.arg = (tables.name_index(instruction.argval) << flag_bits) | flags


def _arg_from_argval(instruction: Instruction, kind: str, tables: CodeTables) -> int | None:
    """The arg of a new, non-jump instruction that was given only its argval."""
    argval = instruction.argval
    if kind == "const":
        return tables.const_index(argval)
    if kind == "COMPARE_OP" and isinstance(argval, str):
        return opcodes.COMPARE_OPERATORS.index(argval)
    if kind == "BINARY_OP" and isinstance(argval, str):
        return opcodes.BINARY_OP_SYMBOLS.index(argval)
    if isinstance(argval, int) and not isinstance(argval, bool):
        return argval
    return None


def add_new_locals(instructions: list[Instruction], tables: CodeTables) -> None:
    """Append to co_varnames the fast locals that generated code introduces."""
    known = set(opcodes.localsplus_names(
        tuple(tables.varnames), tables.cellvars, tables.freevars))
    for instruction in instructions:
        name = instruction.argval
        if isinstance(name, str) and name not in known:
            if instruction.opname in opcodes.FREE_ARGS:
                raise ValueError(f"{instruction} uses {name!r}, which is not a cell or "
                                 "free variable; pass co_cellvars/co_freevars to assemble")
            if instruction.opname in opcodes.LOCAL_ARGS:
                tables.varnames.append(name)
                known.add(name)


def assign_args(instructions: list[Instruction], tables: CodeTables) -> None:
    """Give every non-jump instruction its numeric arg.

    Names and variables are always looked up again from `argval` (appending a
    local shifts the slots of cells and free variables, and names are unique);
    other instructions keep an `arg` they already have.
    """
    add_new_locals(instructions, tables)
    for instruction in instructions:
        kind = arg_kind(instruction.opname)
        if kind == "name":
            _set_name_arg(instruction, tables)
        elif kind == "variable" and isinstance(instruction.argval, str):
            instruction.arg = tables.variable_index(instruction.argval)
        elif kind == "jump":
            if instruction.target is None:
                raise ValueError(f"{instruction} is a jump without a target")
        elif instruction.arg is not None:
            continue
        elif opcodes.has_arg(instruction.opcode):
            instruction.arg = _arg_from_argval(instruction, kind, tables)
            if instruction.arg is None:
                raise ValueError(f"cannot derive the arg of {instruction} from "
                                 f"argval={instruction.argval!r}; pass arg=")


def extended_arg_count(arg: int | None) -> int:
    """How many EXTENDED_ARG prefixes an argument needs (one per byte above the first)."""
    if arg is None or arg < 0x100:
        return 0
    if arg > MAX_ARG:
        raise ValueError(f"argument {arg} does not fit in 32 bits")
    return (arg.bit_length() - 1) // 8


def instruction_size(instruction: Instruction) -> int:
    """Size in code units: prefixes, the instruction, and its CACHE entries."""
    return (extended_arg_count(instruction.arg) + 1
            + opcodes.cache_entries(instruction.opname))


def set_jump_arg(instruction: Instruction, start: int, end: int, target_start: int) -> None:
    """Point a jump at `target_start`, choosing its direction; offsets in bytes.

    `start` and `end` delimit the jump itself (prefixes and caches included).
    Relative jumps count code units from `end`; absolute ones from 0.
    """
    if instruction.opname in opcodes.RELATIVE_JUMPS:
        backward = target_start <= start
        opname = opcodes.jump_variant(instruction.opname, backward=backward)
        if backward != (opname in opcodes.BACKWARD_JUMPS):
            direction = "backward" if backward else "forward"
            raise ValueError(f"{instruction} cannot jump {direction} in this Python")
        instruction.opname, instruction.opcode = opname, opcodes.OPMAP[opname]
        distance = end - target_start if backward else target_start - end
        instruction.arg = distance // CODE_UNIT
    else:
        instruction.arg = target_start // CODE_UNIT


def lay_out(instructions: list[Instruction]) -> list[int]:
    """Fix every jump's arg and return each instruction's size in code units.

    Start with every jump at arg 0 (the shortest encoding), compute offsets,
    recompute jump args from them; if an arg now needs another EXTENDED_ARG,
    the instruction grows, offsets move, and we go round again. Sizes only
    ever grow, so this stops, at the same layout CPython's compiler picks.
    """
    indexes = instruction_indexes(instructions)
    for instruction in instructions:
        if instruction.target is not None:
            instruction.arg = 0
    sizes = [instruction_size(instruction) for instruction in instructions]
    while True:
        starts = start_offsets(sizes)
        for index, instruction in enumerate(instructions):
            if instruction.target is not None:
                end = starts[index] + sizes[index] * CODE_UNIT
                target_start = starts[indexes[id(instruction.target)]]
                set_jump_arg(instruction, starts[index], end, target_start)
        grown = [max(size, instruction_size(instruction))
                 for size, instruction in zip(sizes, instructions)]
        if grown == sizes:
            return sizes
        sizes = grown


def start_offsets(sizes: list[int]) -> list[int]:
    """Byte offset where each instruction (with its prefixes) begins."""
    starts, offset = [], 0
    for size in sizes:
        starts.append(offset)
        offset += size * CODE_UNIT
    return starts


def emit_code(instructions: list[Instruction], sizes: list[int]) -> bytes:
    """co_code: for each instruction its prefixes, itself, and zeroed CACHE units.

    Also records each instruction's new `offset` (of the opcode proper, as dis
    reports it).
    """
    code = bytearray()
    for instruction, size in zip(instructions, sizes):
        arg = instruction.arg or 0
        caches = opcodes.cache_entries(instruction.opname)
        for shift in range(size - 1 - caches, 0, -1):
            code += bytes([opcodes.EXTENDED_ARG, (arg >> (8 * shift)) & 0xFF])
        instruction.offset = len(code)
        code += bytes([instruction.opcode, arg & 0xFF]) + bytes(CODE_UNIT * caches)
    return bytes(code)


def record_targets(instructions: list[Instruction], sizes: list[int]) -> None:
    """After layout: jumps show their new target offset; targets are marked."""
    starts = start_offsets(sizes)
    indexes = instruction_indexes(instructions)
    for instruction in instructions:
        if instruction.target is not None:
            instruction.argval = starts[indexes[id(instruction.target)]]
            instruction.argrepr = f"to {instruction.argval}"
            instruction.target.is_jump_target = True
        if instruction.exn_tab_entry is not None:
            instruction.exn_tab_entry.target.is_jump_target = True


def resolve_positions(instructions: list[Instruction]) -> list[dis.Positions | None]:
    """Each instruction's source position; a new one inherits its predecessor's.

    An instruction with no `positions` but a `starts_line` gets that line
    without columns.
    """
    resolved: list[dis.Positions | None] = []
    previous = None
    for instruction in instructions:
        position = instruction.positions
        if position is None and instruction.starts_line is not None:
            line = instruction.starts_line
            position = dis.Positions(line, line, None, None)
        if position is None:
            position = previous
        resolved.append(position)
        previous = position
    return resolved


def propagate_exception_entries(instructions: list[Instruction]) -> None:
    """Cover instructions inserted inside a protected range by that range's entry.

    3.11 rows never overlap, so an instruction between an entry's `start` and
    `end` that has no entry of its own was added by a transformation and must
    be protected like its neighbours.
    """
    indexes = instruction_indexes(instructions)
    entries = {id(i.exn_tab_entry): i.exn_tab_entry
               for i in instructions if i.exn_tab_entry is not None}
    for entry in entries.values():
        first, last = indexes.get(id(entry.start)), indexes.get(id(entry.end))
        if first is None or last is None:
            continue
        for instruction in instructions[first:last + 1]:
            if instruction.exn_tab_entry is None:
                instruction.exn_tab_entry = entry


def exception_rows(instructions: list[Instruction],
                   sizes: list[int]) -> list[ExceptionTableEntry]:
    """The exception table, one row per run of instructions with the same handler.

    Consecutive instructions whose entries have the same handler, depth and
    lasti share one row, as in CPython's compiler.
    """
    indexes = instruction_indexes(instructions)
    starts = start_offsets(sizes)
    rows: list[ExceptionTableEntry] = []
    previous_key = None
    for index, instruction in enumerate(instructions):
        entry = instruction.exn_tab_entry
        key = None if entry is None else (id(entry.target), entry.depth, entry.lasti)
        end = starts[index] + sizes[index] * CODE_UNIT
        if key is not None and key == previous_key:
            rows[-1] = rows[-1]._replace(end=end)
        elif key is not None:
            target = starts[indexes[id(entry.target)]]
            rows.append(ExceptionTableEntry(starts[index], end, target,
                                            entry.depth, entry.lasti))
        previous_key = key
    return rows


def assemble(instructions: list[Instruction], template: CodeType,
             **code_replace: Any) -> CodeType:
    """Build a code object from `instructions`, taking everything else from `template`.

    `code_replace` overrides code-object fields as in `CodeType.replace`
    (co_name, co_varnames, co_firstlineno, ...); co_code, co_consts, co_names,
    co_varnames, co_nlocals, co_linetable, co_exceptiontable and co_stacksize
    are computed unless given there explicitly.
    """
    tables = CodeTables(template, code_replace)
    assign_args(instructions, tables)
    propagate_exception_entries(instructions)
    sizes = lay_out(instructions)
    first_line = code_replace.get("co_firstlineno", template.co_firstlineno)
    co_code = emit_code(instructions, sizes)
    record_targets(instructions, sizes)
    computed = dict(
        co_code=co_code,
        co_consts=tuple(tables.consts),
        co_names=tuple(tables.names),
        co_varnames=tuple(tables.varnames),
        co_nlocals=len(tables.varnames),
        co_linetable=encode_line_table(
            list(zip(sizes, resolve_positions(instructions))), first_line),
        co_exceptiontable=encode_exception_table(exception_rows(instructions, sizes)),
        co_stacksize=max_stack_depth(instructions),
    )
    overrides = {field: value for field, value in code_replace.items()
                 if field not in CodeTables.FIELDS}
    return template.replace(**{**computed, **overrides})
