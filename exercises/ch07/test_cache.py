"""Graded tests for ch07.5, the cache of resume codes.

The same break point must give the same code object (so the frame cache and guards
of chapter 9 work for resume functions, and a break inside a hot function makes one
resume function), different break points different ones, each with its own global
name; a resume code given in place of its original is looked up as the original.
Every code the cache returns is checked against CPython by running it.
"""

from __future__ import annotations

import dis
import re

import pytest

from minidynamo import resume
from minidynamo.bytecode import scan, stack_depths

from . import frames, programs


def statement_starts(code):
    """Offsets that start a source line with an empty stack (a safe resume point)."""
    instructions = scan(code)
    depths = stack_depths(instructions)
    refused = {after.offset for before, after in zip(instructions, instructions[1:])
               if before.opname in resume.HIDDEN_STATE_BEFORE}
    starts = {i.offset for i in dis.get_instructions(code) if i.starts_line is not None}
    past_prologue = [i.opname for i in instructions].index("RESUME")
    return [i.offset for index, (i, depth) in enumerate(zip(instructions, depths))
            if index > past_prologue and depth == 0 and i.offset in starts
            and i.offset not in refused]


@pytest.mark.task("ch07.5")
@pytest.mark.parametrize("program", programs.STRAIGHT + programs.CELLS, ids=repr)
def test_a_shared_cache_gives_correct_resume_functions(program):
    cache = resume.ResumeCache()
    assert not frames.mismatches(program, frames.Resumer(cache=cache))
    assert not frames.mismatches(program, frames.Resumer(cache=cache))   # all hits now


@pytest.mark.task("ch07.5")
def test_same_point_same_code_and_name():
    cache = resume.ResumeCache()
    code = programs.looping.__code__
    entries = {}
    for offset in statement_starts(code):
        live = resume.live_locals_at(code, offset)
        first = cache.lookup(code, offset, 0, live)
        again = cache.lookup(programs.looping, offset, 0, list(live))   # a function is fine
        assert again.code is first.code and again.name == first.name
        assert re.fullmatch(rf"__resume_at_{offset}_\d+", first.name), first.name
        entries[offset] = first
    codes = [entry.code for entry in entries.values()]
    names = [entry.name for entry in entries.values()]
    assert len(entries) > 3
    assert len({id(c) for c in codes}) == len(codes) and len(set(names)) == len(names)
    other = resume.ResumeCache().lookup(code, next(iter(entries)), 0,
                                        resume.live_locals_at(code, next(iter(entries))))
    assert other.name not in names and other.code is not codes[0]


@pytest.mark.task("ch07.5")
def test_the_key_is_the_whole_point_not_the_offset():
    """At `log.append("x")` of unbound_on_a_path, `y` is bound on one path only: the
    two frames pass different live locals, so they need different resume codes."""
    code = programs.unbound_on_a_path.__code__
    cache = resume.ResumeCache()
    line = next(i.positions.lineno for i in dis.get_instructions(code) if i.argval == "x")
    appends = {i.offset for i in dis.get_instructions(code) if i.positions.lineno == line}
    results = {}
    for flag in (True, False):
        program = programs.program(programs.unbound_on_a_path, flag)
        expected, _ = frames.reference(program)
        offset = next(o for o in statement_starts(code) if o in appends)   # log.append("x")
        got = frames.resume_at(program, offset, 1, frames.Resumer(cache=cache))
        assert got.same_as(expected), (flag, got, expected)
        live = [name for name in resume.live_locals_at(code, offset) if flag or name != "y"]
        results[flag] = cache.lookup(code, offset, 0, live)
    assert results[True].code is not results[False].code
    assert results[True].name != results[False].name
    assert results[True].code.co_argcount == results[False].code.co_argcount + 1


@pytest.mark.task("ch07.5")
def test_a_resume_code_is_looked_up_as_its_original():
    code = programs.arithmetic.__code__
    cache = resume.ResumeCache()
    first, later = statement_starts(code)[:2]
    entry = cache.lookup(code, first, 0, resume.live_locals_at(code, first))
    origin = resume.resume_origin(entry.code)
    assert origin.code is code
    in_resume_code = next(o for o, original in origin.offsets.items() if original == later)
    live = resume.live_locals_at(code, later)
    via_resume = cache.lookup(entry.code, in_resume_code, 0, live)
    assert via_resume is cache.lookup(code, later, 0, live) or (
        via_resume.code is cache.lookup(code, later, 0, live).code)
    assert resume.resume_origin(via_resume.code).code is code
    assert via_resume.code.co_name.startswith(f"minidynamo_resume_in_{code.co_name}_at_")


@pytest.mark.task("ch07.5")
def test_keyed_by_identity_not_equality():
    """Two code objects can be equal (same bytecode, names, constants) and still be two
    functions' codes; each resume code must continue its own original."""
    code = programs.arithmetic.__code__
    twin = code.replace()
    assert twin == code and twin is not code
    cache = resume.ResumeCache()
    offset = statement_starts(code)[1]
    live = resume.live_locals_at(code, offset)
    mine, theirs = cache.lookup(code, offset, 0, live), cache.lookup(twin, offset, 0, live)
    assert resume.resume_origin(mine.code).code is code
    assert resume.resume_origin(theirs.code).code is twin
