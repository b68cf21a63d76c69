"""The 3.11 exception-table codec against dis._parse_exception_table."""

from __future__ import annotations

import dis

import pytest

from minidynamo.bytecode import (
    ExceptionTableEntry,
    decode_exception_table,
    encode_exception_table,
)


def test_decode_equals_dis_on_the_stdlib(stdlib_code):
    rows = 0
    for code in stdlib_code:
        expected = [tuple(row) for row in dis._parse_exception_table(code)]
        assert [tuple(row) for row in decode_exception_table(code.co_exceptiontable)] \
            == expected, code
        rows += len(expected)
    assert rows > 1000


def test_encode_decode_round_trips_byte_for_byte(stdlib_code):
    for code in stdlib_code:
        table = code.co_exceptiontable
        assert encode_exception_table(decode_exception_table(table)) == table, code


@pytest.mark.parametrize("value", [0, 1, 63, 64, 4095, 4096, 262_143, 262_144, 10**9])
def test_large_values_round_trip(value):
    offset = 2 * value
    row = ExceptionTableEntry(offset, offset + 2 * (value + 1), offset, value, True)
    assert decode_exception_table(encode_exception_table([row])) == [row]


def test_rows_start_with_the_marker_bit():
    rows = [ExceptionTableEntry(0, 10, 20, 1, False), ExceptionTableEntry(20, 30, 40, 3, True)]
    table = encode_exception_table(rows)
    assert table[0] & 0x80
    assert sum(byte & 0x80 != 0 for byte in table) == 2


def test_odd_or_empty_ranges_are_rejected():
    with pytest.raises(ValueError, match="even"):
        encode_exception_table([ExceptionTableEntry(1, 4, 6, 0, False)])
    with pytest.raises(ValueError, match="no instruction"):
        encode_exception_table([ExceptionTableEntry(4, 4, 6, 0, False)])


def test_a_truncated_table_is_rejected():
    table = encode_exception_table([ExceptionTableEntry(0, 10, 20, 1, False)])
    with pytest.raises(ValueError, match="middle of a row"):
        decode_exception_table(table[:-1])
