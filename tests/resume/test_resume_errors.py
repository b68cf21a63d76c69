"""Clear errors for what a resume function cannot do, or for a wrong description."""

from __future__ import annotations

import types

import pytest
from resume_samples import Recorder, calls_with_nulls, closures, loops, with_block

from minidynamo import resume
from minidynamo.bytecode import assemble, create_instruction, scan, stack_depths


def point(function, opname, nth=0):
    """(offset, depth) of the nth instruction with this opname."""
    instructions = scan(function)
    matches = [(instruction.offset, depth)
               for instruction, depth in zip(instructions, stack_depths(instructions))
               if instruction.opname == opname]
    return matches[nth]


def generator(n):
    for i in range(n):
        yield i


async def coroutine(n):
    return n


async def async_generator(n):
    yield n


@pytest.mark.parametrize("function, what", [
    (generator, "a generator"), (coroutine, "a coroutine"),
    (async_generator, "an async generator")])
def test_suspendable_frames_are_refused(function, what):
    offset, depth = point(function, "RETURN_VALUE")
    with pytest.raises(resume.ResumeError, match=what):
        resume.make_resume_code(function, offset, depth, [])


def test_module_bodies_are_refused():
    module = compile("x = 1\ny = x + 1\n", "module.py", "exec")
    with pytest.raises(resume.ResumeError, match="module or class body"):
        resume.make_resume_code(module, 4, 0, [])


def test_offset_must_start_an_instruction():
    offset, depth = point(loops, "STORE_FAST")
    with pytest.raises(resume.ResumeError, match=r"no instruction starts at offset .*nearest"):
        resume.make_resume_code(loops, offset + 1, depth, [])


def test_offset_must_be_after_the_frame_prologue():
    offset, _ = point(closures, "MAKE_CELL")
    with pytest.raises(resume.ResumeError, match="prologue"):
        resume.make_resume_code(closures, offset, 0, [])


def test_a_call_sequence_cannot_be_split():
    def keywords(log):
        return sorted(log, reverse=True)

    offset, depth = point(keywords, "PRECALL")            # right after KW_NAMES
    with pytest.raises(resume.ResumeError, match="follows KW_NAMES"):
        resume.make_resume_code(keywords, offset, depth, ["log"])
    offset, depth = point(calls_with_nulls, "CALL")       # PRECALL left the arguments
    with pytest.raises(resume.ResumeError, match="follows PRECALL"):
        resume.make_resume_code(calls_with_nulls, offset, depth, [])


def test_stack_depth_must_agree_with_the_bytecode():
    offset, depth = point(loops, "STORE_FAST", nth=1)
    with pytest.raises(resume.ResumeError, match=f"stack holds {depth} values"):
        resume.make_resume_code(loops, offset, depth + 1, [])


def test_unreachable_offsets_are_refused():
    def returns_early(x):
        return x

    instructions = scan(returns_early)
    dead = create_instruction("LOAD_CONST", argval=None)
    instructions += [dead, create_instruction("RETURN_VALUE")]   # after the return
    code = assemble(instructions, returns_early.__code__)
    with pytest.raises(resume.ResumeError, match="unreachable"):
        resume.make_resume_code(code, dead.offset, 0, [])


@pytest.mark.parametrize("null_slots", [[5], [0, 0], [-1]])
def test_null_slots_must_be_inside_the_stack(null_slots):
    offset, depth = point(calls_with_nulls, "LOAD_FAST", nth=1)
    with pytest.raises(resume.ResumeError, match="NULL slots"):
        resume.make_resume_code(calls_with_nulls, offset, depth, [], null_slots=null_slots)


def test_with_blocks_must_name_an_enclosing_block():
    body = next(i for i in scan(with_block) if i.opname == "BEFORE_WITH").offset + 4
    with pytest.raises(resume.ResumeError, match="no with-block .* slot 1"):
        resume.make_resume_code(with_block, body + 2, 2, ["log"], with_blocks=[1])
    outside, depth = point(with_block, "RETURN_VALUE", nth=-1)
    with pytest.raises(resume.ResumeError, match="no with-block"):
        resume.make_resume_code(with_block, outside, depth, [], with_blocks=[0])


def test_a_with_slot_is_never_null():
    store = [i for i in scan(with_block) if i.opname == "STORE_FAST"][0]
    with pytest.raises(resume.ResumeError, match="never NULL"):
        resume.make_resume_code(with_block, store.offset + 2, 1, ["log"], null_slots=[0])


@pytest.mark.parametrize("live, message", [
    (["nope"], "not a local variable"),
    (["n", "n"], "duplicates"),
    (["base"], "cell or free variable"),
])
def test_live_locals_are_checked(live, message):
    offset, depth = point(closures, "STORE_FAST")
    with pytest.raises(resume.ResumeError, match=message):
        resume.make_resume_code(closures, offset, depth, live)


def test_locals_named_like_stack_arguments_are_refused():
    def clash(___stack0):
        y = ___stack0 + 1
        return y

    offset, depth = point(clash, "STORE_FAST")
    with pytest.raises(resume.ResumeError, match="clashes"):
        resume.make_resume_code(clash, offset, depth, [])


def test_resume_function_needs_the_frame_cells():
    offset, depth = point(closures, "STORE_FAST")
    code = resume.make_resume_code(closures, offset, depth, ["log"])
    with pytest.raises(resume.ResumeError, match=r"needs 2 cells \(.add., .base.\), got 0"):
        resume.resume_function(closures, code)
    function = resume.resume_function(closures, code, cells=[types.CellType(), types.CellType(30)])
    assert isinstance(function, types.FunctionType)


def test_errors_are_value_errors():
    assert issubclass(resume.ResumeError, ValueError)


def test_a_with_block_is_reentered_at_its_normal_exit():
    """The jump target of an `if` that ends a with-body is outside the body's
    exception-table range, but the block's `__exit__` is still on the stack."""

    def body_ends_in_if(log, flag):
        with Recorder(log, "cm"):
            log.append("body")
            if flag:
                log.append("taken")
        return len(log)

    code = body_ends_in_if.__code__
    jump = next(i for i in scan(code) if i.opname.startswith("POP_JUMP") and i.target)
    exit_start = jump.target
    resumed = resume.make_resume_code(code, exit_start.offset, 1, ["log"], with_blocks=[0])
    log = []
    manager = Recorder(log, "cm")
    assert resume.resume_function(body_ends_in_if, resumed)(manager, log) == 2
    assert log == [("enter", "cm"), ("exit", "cm", None)]
