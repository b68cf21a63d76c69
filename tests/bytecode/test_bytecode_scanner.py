"""scan() against dis.get_instructions over the standard-library corpus."""

from __future__ import annotations

import dis
import math

import pytest

from minidynamo.bytecode import opcodes, scan
from minidynamo.bytecode.scanner import fold_extended_args, read_code_units


def dis_view(code):
    """dis's instructions with EXTENDED_ARG prefixes folded the way scan() does.

    A prefix's offset, line start and jump-target mark belong to the
    instruction it prefixes. Exception handlers count as jump targets, as in
    `dis.dis` listings (3.11's `get_instructions` leaves them unmarked); `starts` maps every offset of a prefixed
    instruction (prefixes included) to the offset of the instruction proper.
    """
    folded, starts, pending = [], {}, []
    handlers = {row.target for row in dis._parse_exception_table(code)}
    for instruction in dis.get_instructions(code):
        pending.append(instruction)
        if instruction.opname == "EXTENDED_ARG":
            continue
        first = pending[0]
        for prefix in pending:
            starts[prefix.offset] = instruction.offset
        folded.append((instruction, first.starts_line,
                       any(p.is_jump_target or p.offset in handlers for p in pending)))
        pending = []
    return folded, starts


def same_value(first, second):
    if isinstance(first, float) and math.isnan(first):
        return isinstance(second, float) and math.isnan(second)
    return first is second or first == second


def test_scan_equals_dis_on_the_stdlib(stdlib_code):
    compared = 0
    for code in stdlib_code:
        expected, starts = dis_view(code)
        scanned = scan(code)
        assert len(scanned) == len(expected), code
        for ours, (theirs, starts_line, is_jump_target) in zip(scanned, expected):
            where = (code, theirs.offset)
            assert (ours.opname, ours.opcode, ours.arg, ours.offset) == (
                theirs.opname, theirs.opcode, theirs.arg, theirs.offset), where
            if theirs.argval is dis.UNKNOWN:   # 3.11's dis leaves KW_NAMES undecoded
                assert ours.opname == "KW_NAMES", where
                assert ours.argval == code.co_consts[theirs.arg], where
            else:
                assert same_value(ours.argval, theirs.argval), where
                assert ours.argrepr == theirs.argrepr, where
            assert ours.starts_line == starts_line, where
            assert ours.is_jump_target == is_jump_target, where
            assert ours.positions == theirs.positions, where
            if theirs.opcode in dis.hasjrel or theirs.opcode in dis.hasjabs:
                assert ours.target is not None, where
                assert ours.target.offset == starts[theirs.argval], where
            else:
                assert ours.target is None, where
            compared += 1
    assert compared > 100_000


def test_exception_entries_cover_exactly_the_table_ranges(stdlib_code):
    for code in stdlib_code:
        rows = dis._parse_exception_table(code)
        if not rows:
            continue
        _, starts = dis_view(code)
        for instruction in scan(code):
            covering = [row for row in rows if row.start <= instruction.offset < row.end]
            entry = instruction.exn_tab_entry
            if not covering:
                assert entry is None, (code, instruction)
                continue
            (row,) = covering
            assert entry.target.offset == starts[row.target]
            assert (entry.depth, entry.lasti) == (row.depth, row.lasti)
            assert entry.start.offset == starts[row.start]
            assert entry.start.offset <= instruction.offset <= entry.end.offset


def test_extended_args_fold_into_the_next_argument():
    code = compile("\n".join(f"v{i} = {i}" for i in range(300)), "<many>", "exec")
    folded = fold_extended_args(read_code_units(code.co_code))
    big = [unit for unit in folded if unit.arg is not None and unit.arg > 255]
    assert big, "the sample needs arguments above 255"
    for unit in big:
        assert unit.start == unit.offset - 2 * ((unit.arg.bit_length() - 1) // 8)
    assert not any(unit.opcode == opcodes.EXTENDED_ARG for unit in folded)


def test_variable_slots_match_the_interpreter(stdlib_code):
    for code in stdlib_code[::7]:
        slots = opcodes.localsplus_names(code.co_varnames, code.co_cellvars, code.co_freevars)
        assert slots == tuple(code._varname_from_oparg(i) for i in range(len(slots))), code


def test_scan_accepts_a_function():
    def f(x):
        return x + 1

    assert [i.opname for i in scan(f)] == [i.opname for i in scan(f.__code__)]


def test_instruction_repr_does_not_recurse():
    def loop(n):
        while n:
            n -= 1

    text = repr(scan(loop))
    assert "JUMP_BACKWARD" in text and "->" in text


@pytest.mark.parametrize("opname", ["NOT_AN_OPCODE", "LOAD_FASST"])
def test_create_instruction_rejects_unknown_names(opname):
    from minidynamo.bytecode import create_instruction

    with pytest.raises(ValueError, match="not an opcode"):
        create_instruction(opname)
