"""Graded tests for chapter 1 (exception table): compared with CPython's own decoder."""

from __future__ import annotations

import dis

import pytest

from minidynamo.bytecode import decode_exception_table

from . import samples

CODE_OBJECTS = samples.stdlib_code_objects()


def cpython_rows(code):
    """CPython's decoding (dis's helper) as (start, end, target, depth, lasti)."""
    return [(e.start, e.end, e.target, e.depth, e.lasti)
            for e in dis._parse_exception_table(code)]


def mine(code):
    return [(e.start, e.end, e.target, e.depth, e.lasti)
            for e in decode_exception_table(code.co_exceptiontable)]


@pytest.mark.task("ch01.3")
def test_handlers_function():
    code = samples.handlers.__code__
    assert mine(code) == cpython_rows(code) and len(cpython_rows(code)) >= 3


@pytest.mark.task("ch01.3")
def test_over_stdlib():
    with_tables = [code for code in CODE_OBJECTS if code.co_exceptiontable]
    assert len(with_tables) > 30
    for code in with_tables:
        assert mine(code) == cpython_rows(code), code.co_qualname


@pytest.mark.task("ch01.3")
def test_large_values_use_continuation_bytes():
    # A handler far away: a try around a body long enough that offsets need 2+ chunks.
    body = "\n".join(f"        y = y * {i} + x" for i in range(200))
    source = f"def f(x):\n    y = 0\n    try:\n{body}\n    except Exception:\n        y = -1\n    return y\n"
    code = compile(source, "<large>", "exec").co_consts[0]
    assert any(byte & 0x40 for byte in code.co_exceptiontable)
    assert mine(code) == cpython_rows(code)


@pytest.mark.task("ch01.3")
def test_empty_table():
    assert decode_exception_table(b"") == []


@pytest.mark.task("ch01.3")
def test_a_table_cut_inside_a_row_is_an_error():
    """The rows CPython wrote, then one more that stops after its start: not a shorter
    table (that would drop a handler, or invent one from the previous row) but an error."""
    code = samples.handlers.__code__
    table = code.co_exceptiontable
    rows = cpython_rows(code)
    assert mine(code) == rows and len(rows) >= 2
    cut = table + table[:1]          # a row's first byte: its start, and nothing after
    with pytest.raises(Exception):
        decode_exception_table(cut)
