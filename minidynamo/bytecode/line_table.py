"""The 3.11 location table: source positions for every instruction (chapter 1).

Tracebacks, `co_lines()` and the `^^^^` markers under a failing expression all
come from `code.co_linetable` (PEP 626 for lines, PEP 657 for columns). It is a
sequence of entries, each covering 1 to 8 code units with one source position
(line, end line, column, end column). The first byte of an entry is

    1 | code (4 bits) | length - 1 (3 bits)

and `code` chooses one of several forms, the shortest that fits:

    0-9   short:    same line as before; the next byte holds the columns
                    (column = code * 8 + high 3 bits, end = column + low 4 bits)
    10-12 one-line: line moves by code - 10 (0..2); two bytes: column, end column
    13    no column: line delta as a signed varint, no column information
    14    long:     line delta (signed varint), end-line delta, column + 1,
                    end column + 1 (varints, 0 meaning "unknown")
    15    none:     the instructions have no source position at all

Line numbers are deltas from the previous entry's line, starting at
`co_firstlineno`. Varints here are little-endian 6-bit chunks with 0x40 as
"more follows" (the exception table's are big-endian: a classic trap).

We choose forms exactly as CPython's compiler does, so an unmodified code
object round-trips to the same bytes.

Compare with CPython: `Objects/locations.md`, `write_location_info_entry` in
`Python/compile.c`; TorchDynamo: `linetable_311_writer` in
`torch/_dynamo/bytecode_transformation.py`.
"""

from __future__ import annotations

import dis

MAX_ENTRY_UNITS = 8
SHORT_FORM_MAX_COLUMN = 80
SHORT_FORM_MAX_WIDTH = 16
ONE_LINE_MAX_DELTA = 3
ONE_LINE_MAX_COLUMN = 128
ONE_LINE_FORM = 10
NO_COLUMN_FORM = 13
LONG_FORM = 14
NO_LOCATION_FORM = 15


def write_varint(value: int) -> bytes:
    """Little-endian 6-bit chunks, 0x40 marking that another chunk follows."""
    encoded = bytearray()
    while value >= 0x40:
        encoded.append(0x40 | (value & 0x3F))
        value >>= 6
    encoded.append(value)
    return bytes(encoded)


def write_signed_varint(value: int) -> bytes:
    """Sign in the lowest bit, magnitude above it, then as `write_varint`."""
    return write_varint((-value << 1) | 1 if value < 0 else value << 1)


def _header(form: int, units: int) -> bytes:
    return bytes([0x80 | (form << 3) | (units - 1)])


def encode_entry(units: int, position: dis.Positions | None,
                 previous_line: int) -> tuple[bytes, int]:
    """One entry for `units` code units at `position`; returns (bytes, new line)."""
    if position is None or position.lineno is None:
        return _header(NO_LOCATION_FORM, units), previous_line
    line, column, end_column = position.lineno, position.col_offset, position.end_col_offset
    end_line = line if position.end_lineno is None else position.end_lineno
    delta = line - previous_line
    if column is None or end_column is None:
        if end_line == line:
            return _header(NO_COLUMN_FORM, units) + write_signed_varint(delta), line
    elif end_line == line:
        width = end_column - column
        if delta == 0 and column < SHORT_FORM_MAX_COLUMN and 0 <= width < SHORT_FORM_MAX_WIDTH:
            low = ((column % 8) << 4) | width
            return _header(column // 8, units) + bytes([low]), line
        if 0 <= delta < ONE_LINE_MAX_DELTA and max(column, end_column) < ONE_LINE_MAX_COLUMN:
            return _header(ONE_LINE_FORM + delta, units) + bytes([column, end_column]), line
    long_form = (write_signed_varint(delta) + write_varint(end_line - line)
                 + write_varint(_plus_one(column)) + write_varint(_plus_one(end_column)))
    return _header(LONG_FORM, units) + long_form, line


def _plus_one(column: int | None) -> int:
    """Columns are stored + 1 in the long form so that 0 can mean 'unknown'."""
    return 0 if column is None else column + 1


def encode_line_table(spans: list[tuple[int, dis.Positions | None]],
                      first_line: int) -> bytes:
    """Encode (size in code units, position) per instruction as co_linetable.

    An instruction longer than 8 code units (with its EXTENDED_ARG prefixes
    and CACHE entries) is written as several entries with the same position.
    """
    table = bytearray()
    line = first_line
    for units, position in spans:
        while units > 0:
            chunk = min(units, MAX_ENTRY_UNITS)
            entry, line = encode_entry(chunk, position, line)
            table += entry
            units -= chunk
    return bytes(table)
