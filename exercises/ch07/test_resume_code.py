"""Graded tests for ch07.2 (the resume code's fields) and ch07.3 (the prologue).

The oracle is CPython: each program is stopped before an instruction, the resume
function is built from the frame's real state (value stack with its NULLs, live
locals, cells, handled exception) and called; its result or exception and the log of
side effects must equal those of the undisturbed run. ch07.3 is also checked slot by
slot: when the prologue has jumped to the resume offset, the resume function's own
frame must hold the very objects the original frame held there.
"""

from __future__ import annotations

import dis
import inspect

import pytest

from minidynamo import resume

from . import frames, programs, samples


def first_points(program):
    """The first execution of every resumable offset."""
    _, executed = frames.reference(program)
    return [(offset, n) for offset, n in
            frames.resumable_points(program.make().__code__, executed) if n == 1]


def resume_line(code, offset):
    """The source line `dis` gives the instruction at `offset` (or the closest before)."""
    line = code.co_firstlineno
    for instruction in dis.get_instructions(code):
        if instruction.positions.lineno is not None:
            line = instruction.positions.lineno
        if instruction.offset == offset:
            return line
    raise AssertionError(offset)


# -- ch07.2: resume_code_fields -------------------------------------------------------

SIGNATURE_PROGRAMS = programs.STRAIGHT + programs.CELLS + samples.POSITIONAL_ONLY


@pytest.mark.task("ch07.2")
@pytest.mark.parametrize("program", SIGNATURE_PROGRAMS, ids=repr)
def test_signature_matches_the_frame(program):
    for offset, occurrence in first_points(program)[::3]:
        fn, state, (function, arguments) = frames.stop_at(
            program, offset, occurrence,
            lambda fn, state, log: (fn, state, frames.Resumer().prepare(fn, offset, state)))
        original, code = fn.__code__, function.__code__
        values = [value for value in state.stack if value is not frames.NULL]
        live = [name for name in resume.live_locals_at(original, offset) if name in state.locals]
        parameters = [f"___stack{i}" for i in range(len(values))] + live
        assert code.co_argcount == len(parameters) == len(arguments)
        assert code.co_posonlyargcount == code.co_kwonlyargcount == 0
        assert list(code.co_varnames[:code.co_argcount]) == parameters
        others = [name for name in original.co_varnames
                  if name not in parameters and name not in original.co_cellvars]
        assert list(code.co_varnames[code.co_argcount:]) == others
        assert code.co_cellvars == ()
        assert code.co_freevars == original.co_cellvars + original.co_freevars
        assert not code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)
        assert not (code.co_freevars and code.co_flags & inspect.CO_NOFREE)
        assert code.co_flags & inspect.CO_OPTIMIZED and code.co_flags & inspect.CO_NEWLOCALS
        line = resume_line(original, offset)
        name = f"minidynamo_resume_in_{original.co_name}_at_{line}"
        assert (code.co_name, code.co_firstlineno) == (name, line)
        scope = original.co_qualname.rpartition(".")[0]
        assert code.co_qualname == (f"{scope}.{name}" if scope else name)
        assert list(inspect.signature(function).parameters) == parameters


@pytest.mark.task("ch07.2")
@pytest.mark.parametrize("program", SIGNATURE_PROGRAMS, ids=repr)
def test_resuming_matches_cpython(program):
    assert not frames.mismatches(program)


@pytest.mark.task("ch07.2")
def test_the_closure_is_shared_not_copied():
    """A closure made before the break and the resume function see the same cell."""
    program = programs.program(programs.shared_cell, 3)
    code = programs.shared_cell.__code__
    store = [i for i in dis.get_instructions(code)
             if i.opname == "STORE_DEREF" and i.argval == "base"][-1]   # base = base + 7
    fn, state, (function, arguments) = frames.stop_at(
        program, store.offset, 1,
        lambda fn, state, log: (fn, state, frames.Resumer().prepare(fn, store.offset, state)))
    assert [cell for cell in function.__closure__] == state.cells
    base_cell = state.cells[code.co_cellvars.index("base")]
    add = state.cells[code.co_cellvars.index("add")].cell_contents
    assert add.__closure__ == (base_cell,)
    base_cell.cell_contents = None          # (the stopped original has finished since)
    function(*arguments)                    # stores the stacked base + 7 in the shared cell
    assert base_cell.cell_contents == 3 * 10 + 7 and add(0) == 3 * 10 + 7


# -- ch07.3: Prologue.build -----------------------------------------------------------

@pytest.mark.task("ch07.3")
@pytest.mark.parametrize("program", programs.ALL, ids=repr)
def test_prologue_rebuilds_the_stack_slot_for_slot(program):
    instructions = list(dis.get_instructions(program.make()))
    upcoming = {i.offset: [after.opname for after in instructions[k:k + 2]]
                for k, i in enumerate(instructions)}
    for offset, occurrence in first_points(program):
        original, resumed = frames.stack_after_prologue(program, offset, occurrence)
        assert len(resumed.stack) == len(original.stack), offset
        for slot, (ours, theirs) in enumerate(zip(resumed.stack, original.stack)):
            assert ours is theirs, (offset, slot, ours, theirs)
        if "POP_EXCEPT" not in upcoming[offset]:   # which resets it before it can be seen
            assert resumed.handled is original.handled, offset
        code = program.make().__code__
        for name in resume.live_locals_at(code, offset):     # fast locals, not cells
            if name in original.locals:
                assert resumed.locals[name] is original.locals[name], (offset, name)


@pytest.mark.task("ch07.3")
@pytest.mark.parametrize("program", programs.ALL, ids=repr)
def test_resuming_anywhere_matches_cpython(program):
    assert not frames.mismatches(program)


@pytest.mark.task("ch07.3")
@pytest.mark.parametrize("program", programs.WITH_BLOCKS, ids=repr)
def test_reentered_with_blocks(program):
    assert not frames.reentered_mismatches(program)


@pytest.mark.task("ch07.3")
def test_prologue_starts_like_a_frame():
    """COPY_FREE_VARS (when there is a closure), then RESUME, before any value is pushed.

    RESUME 0, as at the start of every function: its argument tells CPython (and dis,
    debuggers) where the frame resumes from, and 1 to 3 mean after a yield or an await."""
    for program in (programs.CELLS[0], programs.STRAIGHT[0]):
        offset, occurrence = first_points(program)[-2]
        fn, state, (function, _) = frames.stop_at(
            program, offset, occurrence,
            lambda fn, state, log: (fn, state, frames.Resumer().prepare(fn, offset, state)))
        first = [(i.opname, i.arg) for i in dis.get_instructions(function.__code__)][:2]
        expected = ([("COPY_FREE_VARS", len(function.__code__.co_freevars)), ("RESUME", 0)]
                    if function.__code__.co_freevars else [("RESUME", 0)])
        assert first[:len(expected)] == expected
