"""Graded tests for ch07.1, live-variable analysis.

Compared with a brute-force oracle built from `dis` (one search per variable, by the
definition of liveness), and with CPython itself: a resume function that receives
only the live locals must finish every program as the undisturbed run does.
"""

from __future__ import annotations

import argparse
import json.decoder
import textwrap

import pytest

from minidynamo.bytecode import live_variables, scan
from minidynamo.resume import live_locals_at

from . import frames, oracle, programs

# Library functions with loops, try blocks, closures and many locals.
LIBRARY = [textwrap.TextWrapper._wrap_chunks, json.decoder.py_scanstring,
           argparse.ArgumentParser._parse_known_args]


@pytest.mark.task("ch07.1")
@pytest.mark.parametrize("program", programs.ALL, ids=repr)
def test_live_variables_match_the_definition(program):
    code = program.make().__code__
    instructions = scan(code)
    graph = oracle.FlowGraph(code)
    for instruction in instructions:
        assert live_variables(instructions, instruction) == graph.live_at(instruction.offset), \
            (instruction.offset, instruction.opname)


@pytest.mark.task("ch07.1")
@pytest.mark.parametrize("function", LIBRARY, ids=lambda f: f.__qualname__)
def test_live_variables_in_library_code(function):
    code = function.__code__
    instructions = scan(code)
    graph = oracle.FlowGraph(code)
    for instruction in instructions[::4]:
        assert live_variables(instructions, instruction) == graph.live_at(instruction.offset), \
            (instruction.offset, instruction.opname)


@pytest.mark.task("ch07.1")
def test_dead_locals_are_not_passed():
    """After `log.append(tmp)` the old `tmp` is dead (overwritten before any read) and
    `unused` is never read: neither may be a resume function's argument."""
    code = programs.dead_after_use.__code__
    instructions = scan(code)
    graph = oracle.FlowGraph(code)
    store_unused = next(i for i in instructions
                        if i.opname == "STORE_FAST" and i.argval == "unused")
    after = instructions[instructions.index(store_unused) + 1]
    assert live_locals_at(code, after.offset) == [
        name for name in code.co_varnames if name in graph.live_at(after.offset)]
    live = live_variables(instructions, after)
    assert "unused" not in live and "tmp" in live    # tmp: the new value is read later
    first_append = next(i for i in instructions if i.opname == "STORE_FAST" and i.argval == "tmp")
    between = instructions[instructions.index(first_append) + 1:]
    second_store = next(i for i in between if i.opname == "STORE_FAST" and i.argval == "tmp")
    # just before `tmp = b * 2` (its LOAD_FAST b), the first tmp is dead
    load_b = instructions[instructions.index(second_store) - 3]
    assert (load_b.opname, load_b.argval) == ("LOAD_FAST", "b")
    assert "tmp" not in live_variables(instructions, load_b)
    assert "tmp" not in graph.live_at(load_b.offset)


@pytest.mark.task("ch07.1")
@pytest.mark.parametrize("program", programs.STRAIGHT + programs.CELLS, ids=repr)
def test_resuming_with_the_live_locals_matches_cpython(program):
    assert not frames.mismatches(program)
