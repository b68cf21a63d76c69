"""A common mistake: the last varint of a row is read as the depth, forgetting the lasti bit."""

from __future__ import annotations


def decode_exception_table(table: bytes) -> list[ExceptionTableEntry]:
    stream = iter(table)
    entries = []
    while True:
        try:
            start = _read_varint(stream)
        except StopIteration:
            return entries
        length, target, depth = [_read_varint(stream) for _ in range(3)]
        entries.append(ExceptionTableEntry(
            start=start * CODE_UNIT, end=(start + length) * CODE_UNIT,
            target=target * CODE_UNIT, depth=depth, lasti=False))
