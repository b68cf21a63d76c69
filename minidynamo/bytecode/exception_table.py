"""The 3.11 exception table: zero-cost `try` as a compact list of ranges (chapter 1).

Since Python 3.11 entering a `try` block costs nothing at run time: there is no
SETUP_FINALLY instruction any more. Instead `code.co_exceptiontable` lists, for
ranges of instructions, where to jump when one of them raises:

    start, end   the protected byte range [start, end)
    target       the handler's byte offset
    depth        how many stack values to keep before pushing the exception
    lasti        whether to push the offset of the raising instruction as well

On disk each row is four variable-length integers, counted in code units
(2 bytes), not bytes: start, length (= end - start), target, and
(depth << 1) | lasti. Each integer is written big-endian in 6-bit chunks; a
chunk with more to follow has bit 0x40 set, and the first byte of every row
carries the marker bit 0x80 so a reader can find row boundaries.

This module keeps raw byte offsets; the scanner turns them into references
between Instructions (`InstructionExceptionEntry`).

Compare with CPython: `Objects/exception_handling_notes.txt`,
`dis._parse_exception_table`; TorchDynamo: `parse_exception_table` and
`assemble_exception_table` in `bytecode_transformation.py`.
"""

from __future__ import annotations

from typing import Iterator, NamedTuple

CODE_UNIT = 2          # bytes per code unit (opcode + arg byte, or one CACHE)
CHUNK_BITS = 6         # payload bits per byte of a varint
CHUNK_MASK = 0x3F
CONTINUE_BIT = 0x40    # another chunk of this integer follows
START_BIT = 0x80       # this byte begins a new row


class ExceptionTableEntry(NamedTuple):
    """One row of co_exceptiontable with byte offsets; `end` is exclusive."""

    start: int
    end: int
    target: int
    depth: int
    lasti: bool


def _read_varint(stream: Iterator[int]) -> int:
    """Read one big-endian 6-bit-chunk integer; StopIteration at the end of the table."""
    byte = next(stream)
    value = byte & CHUNK_MASK
    while byte & CONTINUE_BIT:
        byte = next(stream)
        value = (value << CHUNK_BITS) | (byte & CHUNK_MASK)
    return value


def decode_exception_table(table: bytes) -> list[ExceptionTableEntry]:
    """Parse a 3.11 co_exceptiontable into rows with byte offsets."""
    stream = iter(table)
    entries = []
    while True:
        try:
            start = _read_varint(stream)
        except StopIteration:
            return entries
        try:
            length, target, depth_and_lasti = [_read_varint(stream) for _ in range(3)]
        except StopIteration:
            raise ValueError("exception table ends in the middle of a row") from None
        entries.append(ExceptionTableEntry(
            start=start * CODE_UNIT,
            end=(start + length) * CODE_UNIT,
            target=target * CODE_UNIT,
            depth=depth_and_lasti >> 1,
            lasti=bool(depth_and_lasti & 1),
        ))


def _write_varint(value: int, *, starts_row: bool = False) -> bytes:
    """Encode a non-negative integer as big-endian 6-bit chunks."""
    chunks = [value & CHUNK_MASK]
    value >>= CHUNK_BITS
    while value:
        chunks.append(value & CHUNK_MASK)
        value >>= CHUNK_BITS
    chunks.reverse()
    encoded = bytearray(chunk | CONTINUE_BIT for chunk in chunks[:-1])
    encoded.append(chunks[-1])
    if starts_row:
        encoded[0] |= START_BIT
    return bytes(encoded)


def encode_exception_table(entries: list[ExceptionTableEntry]) -> bytes:
    """Write rows with byte offsets as a 3.11 co_exceptiontable."""
    table = bytearray()
    for entry in entries:
        if entry.start % CODE_UNIT or entry.end % CODE_UNIT or entry.target % CODE_UNIT:
            raise ValueError(f"exception table offsets must be even: {entry}")
        if entry.end <= entry.start:
            raise ValueError(f"exception table row covers no instruction: {entry}")
        table += _write_varint(entry.start // CODE_UNIT, starts_row=True)
        table += _write_varint((entry.end - entry.start) // CODE_UNIT)
        table += _write_varint(entry.target // CODE_UNIT)
        table += _write_varint((entry.depth << 1) | int(entry.lasti))
    return bytes(table)
