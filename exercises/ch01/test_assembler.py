"""Graded tests for chapter 1 (layout in the assembler): rebuilt code equals CPython's."""

from __future__ import annotations

import pytest

from minidynamo.bytecode import assemble, create_instruction, scan

from . import samples

CODE_OBJECTS = samples.stdlib_code_objects()


@pytest.mark.task("ch01.5")
def test_round_trip_is_byte_identical_over_stdlib():
    for code in CODE_OBJECTS:
        rebuilt = assemble(scan(code), code)
        assert rebuilt.co_code == code.co_code, code.co_qualname


@pytest.mark.task("ch01.5")
def test_stale_jump_args_do_not_keep_extended_args():
    """Jump args left from an earlier layout (here: all too large, as if code had been
    removed since) must not keep their EXTENDED_ARGs: lay_out starts from the shortest
    encoding, so the result is still CPython's own bytes."""
    for code in CODE_OBJECTS:
        instructions = scan(code)
        for instruction in instructions:
            if instruction.target is not None:
                instruction.arg = 300
        assert assemble(instructions, code).co_code == code.co_code, code.co_qualname


@pytest.mark.task("ch01.5")
def test_long_jumps_get_extended_args():
    function = samples.long_branch_function()
    rebuilt = assemble(scan(function), function.__code__)
    assert rebuilt.co_code == function.__code__.co_code
    clone = type(function)(rebuilt, function.__globals__)
    assert clone(3, True) == function(3, True) and clone(3, False) == function(3, False)


@pytest.mark.task("ch01.5")
def test_inserted_instructions_shift_jumps():
    """Insert NOPs before every jump target: offsets grow past 256, results stay the same."""
    for function in (samples.handlers, samples.long_branch_function()):
        instructions = scan(function)
        padded = []
        for instruction in instructions:
            if instruction.is_jump_target:
                padded += [create_instruction("NOP") for _ in range(150)]
            padded.append(instruction)
        rebuilt = assemble(padded, function.__code__)
        clone = type(function)(rebuilt, function.__globals__)
        args = [(0,), (2,)] if function is samples.handlers else [(3, True), (3, False)]
        for call_args in args:
            assert clone(*call_args) == function(*call_args)
        assert len(rebuilt.co_code) > len(function.__code__.co_code) + 256
