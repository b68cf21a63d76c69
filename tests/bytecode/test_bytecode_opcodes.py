"""The opcode tables against the running interpreter's own dis/opcode modules."""

from __future__ import annotations

import dis
import opcode

import pytest

from minidynamo.bytecode import opcodes


def names(numbers):
    return {dis.opname[number] for number in numbers}


def test_argument_tables_equal_dis():
    assert opcodes.CONST_ARGS == names(dis.hasconst)
    assert opcodes.NAME_ARGS == names(dis.hasname)
    assert opcodes.LOCAL_ARGS == names(dis.haslocal)
    assert opcodes.FREE_ARGS == names(dis.hasfree)
    assert opcodes.COMPARE_OPERATORS == tuple(dis.cmp_op)
    assert opcodes.BINARY_OP_SYMBOLS == tuple(symbol for _, symbol in opcode._nb_ops)


def test_jump_tables_equal_dis():
    assert opcodes.RELATIVE_JUMPS == names(dis.hasjrel)
    assert opcodes.ABSOLUTE_JUMPS == names(dis.hasjabs)
    assert opcodes.BACKWARD_JUMPS == {name for name in opcodes.RELATIVE_JUMPS
                                      if dis._is_backward_jump(dis.opmap[name])}
    assert opcodes.CONDITIONAL_JUMPS <= opcodes.JUMPS
    assert opcodes.UNCONDITIONAL_JUMPS <= opcodes.STOPS_FLOW
    for forward, backward in opcodes.JUMP_DIRECTIONS.values():
        assert forward in opcodes.FORWARD_JUMPS and backward in opcodes.BACKWARD_JUMPS


def test_cache_entries_equal_the_interpreter():
    for name, number in dis.opmap.items():
        assert opcodes.cache_entries(name) == opcode._inline_cache_entries[number], name


def test_every_opcode_has_a_stack_effect():
    for name in dis.opmap:
        assert name in opcodes.STACK_EFFECTS or name in opcodes.BRANCH_EFFECTS, name
    assert not set(opcodes.STACK_EFFECTS) & set(opcodes.BRANCH_EFFECTS)


def test_every_named_opcode_exists():
    tables = [opcodes.CACHE_ENTRIES, opcodes.JUMPS, opcodes.STOPS_FLOW, opcodes.LOCAL_READS,
              opcodes.LOCAL_WRITES, opcodes.NAME_FLAG_BITS, opcodes.STACK_EFFECTS]
    for table in tables:
        assert set(table) <= set(dis.opmap), set(table) - set(dis.opmap)


def test_an_unsupported_python_is_named_clearly():
    with pytest.raises(opcodes.UnsupportedPythonError, match=r"3\.11.*Python 3\.99"):
        opcodes.select_table((3, 99))
