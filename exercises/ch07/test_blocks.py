"""Graded tests for ch07.4, the blocks around an instruction, read off the exception table.

Three oracles: CPython's own frame (a slot named as a `with` block's must hold that
block's bound `__exit__`, a slot named as an `except` body's must hold the exception
saved there), the source (a statement nested in k `with` bodies and j `except` bodies
has k and j such slots), and CPython's run (resuming inside those blocks, re-entering
the `with` blocks and re-handling the exceptions, ends as the undisturbed run does).
"""

from __future__ import annotations

import pytest

from minidynamo import resume

from . import frames, oracle, programs

BLOCK_PROGRAMS = programs.WITH_BLOCKS + programs.HANDLERS


def executed_points(program):
    _, executed = frames.reference(program)
    return frames.resumable_points(program.make().__code__, executed)


@pytest.mark.task("ch07.4")
@pytest.mark.parametrize("program", BLOCK_PROGRAMS, ids=repr)
def test_named_slots_hold_what_cpython_keeps_there(program):
    code = program.make().__code__
    for offset, occurrence in executed_points(program):
        state = frames.stop_at(program, offset, occurrence, lambda fn, state, log: state)
        for block in resume.with_blocks_at(code, offset):
            exit_method = state.stack[block.stack_index]
            assert getattr(exit_method, "__func__", None) is programs.Manager.__exit__, \
                (offset, block, state.stack)
        for slot in resume.exception_slots_at(code, offset):
            saved = state.stack[slot]
            assert saved is None or isinstance(saved, BaseException), (offset, slot, state.stack)


@pytest.mark.task("ch07.4")
@pytest.mark.parametrize("program", BLOCK_PROGRAMS + programs.STRAIGHT[:4], ids=repr)
def test_block_counts_follow_the_source(program):
    fn = program.make()
    code = fn.__code__
    nesting = oracle.with_body_nesting(fn)
    lines = oracle.statement_lines(code)
    checked = 0
    for offset, _ in executed_points(program):
        if lines[offset] not in nesting:
            continue
        withs, handlers = nesting[lines[offset]]
        assert len(resume.with_blocks_at(code, offset)) == withs, (offset, lines[offset])
        assert len(resume.exception_slots_at(code, offset)) == handlers, (offset, lines[offset])
        checked += 1
    assert checked


@pytest.mark.task("ch07.4")
@pytest.mark.parametrize("program", programs.WITH_BLOCKS, ids=repr)
def test_with_blocks_are_left_and_reentered(program):
    assert not frames.reentered_mismatches(program)


@pytest.mark.task("ch07.4")
@pytest.mark.parametrize("program", BLOCK_PROGRAMS, ids=repr)
def test_resuming_inside_blocks_matches_cpython(program):
    assert not frames.mismatches(program)


@pytest.mark.task("ch07.4")
def test_outermost_block_first():
    """Nested `with` blocks are listed outermost first, their slots increasing."""
    code = programs.nested_with.__code__
    depths = [resume.with_blocks_at(code, offset) for offset, _ in
              executed_points(programs.program(programs.nested_with, 2))]
    two = [blocks for blocks in depths if len(blocks) == 2]
    assert two and all(blocks[0].stack_index < blocks[1].stack_index for blocks in two)
