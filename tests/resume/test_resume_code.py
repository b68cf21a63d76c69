"""The resume code object itself: exception table, lines, names, flags, variables.

These tests read the code objects rather than run them: every original
instruction kept in a resume code must be protected by the same handler (at the
same depth, with the same lasti) and carry the same source position as in the
original; names, flags and variable tables must be what a caller relies on.
"""

from __future__ import annotations

import dis
import inspect
import traceback

import pytest
from resume_harness import refused_offsets
from resume_samples import SAMPLES, Recorder, closures, loops, raising, with_block

from minidynamo import resume
from minidynamo.bytecode import decode_exception_table, scan, stack_depths


def resumable_points(code):
    """(offset, stack depth) of every instruction a resume function may start at."""
    refused = refused_offsets(code)
    instructions = scan(code)
    return [(instruction.offset, depth)
            for instruction, depth in zip(instructions, stack_depths(instructions))
            if depth is not None and instruction.offset not in refused]


def make_at(code, offset, depth, **options):
    return resume.make_resume_code(code, offset, depth, resume.live_locals_at(code, offset),
                                   **options)


def handler_at(code, offset):
    """(handler offset, depth, lasti) of the exception-table row covering `offset`."""
    for row in decode_exception_table(code.co_exceptiontable):
        if row.start <= offset < row.end:
            return row.target, row.depth, row.lasti
    return None


def distinct_codes():
    seen = {}
    for sample in SAMPLES:
        seen.setdefault(sample.name, sample.make().__code__)
    return list(seen.values())


@pytest.mark.parametrize("code", distinct_codes(), ids=lambda code: code.co_name)
def test_kept_instructions_keep_their_handler_and_position(code):
    original_positions = dict(zip((i.offset for i in dis.get_instructions(code)),
                                  (i.positions for i in dis.get_instructions(code))))
    for offset, depth in resumable_points(code):
        resumed = make_at(code, offset, depth)
        origin = resume.resume_origin(resumed)
        assert origin.code is code
        for instruction in dis.get_instructions(resumed):
            if instruction.offset not in origin.offsets:
                continue   # the prologue
            original = origin.offsets[instruction.offset]
            assert instruction.positions == original_positions[original]
            new, old = handler_at(resumed, instruction.offset), handler_at(code, original)
            if new is None or old is None:
                assert new == old, (offset, instruction)
            else:
                assert (origin.offsets[new[0]], *new[1:]) == old, (offset, instruction)


def test_prologue_only_pushes_and_jumps():
    code = closures.__code__
    offset, depth = max(resumable_points(code), key=lambda point: point[1])
    resumed = make_at(code, offset, depth)
    origin = resume.resume_origin(resumed)
    prologue = [i.opname for i in dis.get_instructions(resumed)
                if i.offset not in origin.offsets]
    assert prologue[:2] == ["COPY_FREE_VARS", "RESUME"]
    assert prologue[2:-1] == ["LOAD_FAST"] * depth
    assert prologue[-1] == "JUMP_FORWARD"


def test_dead_code_before_the_resume_point_is_pruned():
    code = loops.__code__
    instructions = scan(code)
    compare = [i for i in instructions if i.opname == "COMPARE_OP"][-1]   # total > 3
    while_test = instructions[instructions.index(compare) - 2]          # LOAD_FAST total
    resumed = make_at(code, while_test.offset, 0)
    kept = set(resume.resume_origin(resumed).offsets.values())
    for_loop = [i for i in instructions if i.opname == "FOR_ITER"][0]
    assert for_loop.offset not in kept
    assert max(kept) == instructions[-1].offset


def test_traceback_after_the_resume_point_shows_the_original_line():
    code = raising.__code__
    subscript = next(i for i in scan(code) if i.opname == "BINARY_SUBSCR")
    function = resume.resume_function(raising, make_at(code, subscript.offset, 2))
    with pytest.raises(KeyError) as caught:
        function({"a": 1}, 4)
    frame, line = traceback.extract_tb(caught.value.__traceback__)[-1][0:2]
    assert frame == inspect.getsourcefile(raising)
    assert line == subscript.positions.lineno
    assert traceback.extract_tb(caught.value.__traceback__)[-1].name.startswith(
        "minidynamo_resume_in_raising_at_")


def test_names_say_which_function_and_line():
    code = loops.__code__
    instruction = [i for i in scan(code) if i.opname == "STORE_FAST"][-1]
    resumed = make_at(code, instruction.offset, 1)
    line = instruction.positions.lineno
    assert resumed.co_name == f"minidynamo_resume_in_loops_at_{line}"
    assert resumed.co_qualname == resumed.co_name
    assert resumed.co_firstlineno == line
    assert resumed.co_filename == code.co_filename


def test_qualified_names_keep_their_scope():
    class Model:
        def forward(self, x):
            y = x + 1
            return y * 2

    code = Model.forward.__code__
    store = next(i for i in scan(code) if i.opname == "STORE_FAST")
    resumed = make_at(code, store.offset, 1)
    scope = Model.forward.__qualname__.rpartition(".")[0]
    line = store.positions.lineno
    assert resumed.co_qualname == f"{scope}.minidynamo_resume_in_forward_at_{line}"


def test_arguments_flags_and_variables():
    code = closures.__code__      # cell variable `base`, argument `n`
    store = [i for i in scan(code) if i.opname == "STORE_FAST" and i.argval == "values"][0]
    resumed = make_at(code, store.offset, 1)
    live = resume.live_locals_at(code, store.offset)
    assert resumed.co_varnames[:resumed.co_argcount] == ("___stack0", *live)
    assert resumed.co_cellvars == ()
    assert resumed.co_freevars == code.co_cellvars + code.co_freevars
    assert resumed.co_posonlyargcount == resumed.co_kwonlyargcount == 0
    assert resumed.co_flags & inspect.CO_OPTIMIZED and resumed.co_flags & inspect.CO_NEWLOCALS


def test_varargs_flags_are_cleared():
    def spread(*args, **kwargs):
        total = sum(args)
        return total + len(kwargs)

    code = spread.__code__
    store = next(i for i in scan(code) if i.opname == "STORE_FAST")
    resumed = make_at(code, store.offset, 1)
    assert not resumed.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)
    function = resume.resume_function(spread, resumed)
    assert function(6, {"a": 1}) == spread(1, 2, 3, a=1)


def test_free_variables_come_from_the_original_closure():
    scale = 3

    def scaled(x):
        y = x * scale
        return y + scale

    code = scaled.__code__
    store = next(i for i in scan(code) if i.opname == "STORE_FAST")
    resumed = make_at(code, store.offset, 1)
    assert resumed.co_freevars == code.co_freevars == ("scale",)
    assert resume.resume_function(scaled, resumed)(12) == scaled(4)


def test_resuming_a_resume_function_resumes_the_original():
    code = with_block.__code__
    points = resumable_points(code)
    cache = resume.ResumeCache()
    first_offset, first_depth = points[3]
    first = cache.lookup(code, first_offset, first_depth,
                         resume.live_locals_at(code, first_offset)).code
    origin = resume.resume_origin(first)
    for new_offset, original_offset in origin.offsets.items():
        depth = dict(points).get(original_offset)
        if depth is None:
            continue
        again = cache.lookup(first, new_offset, depth,
                             resume.live_locals_at(first, new_offset)).code
        direct = cache.lookup(code, original_offset, depth,
                              resume.live_locals_at(code, original_offset)).code
        assert again is direct
        assert "resume_in_minidynamo" not in again.co_name


def test_a_resume_function_cannot_be_resumed_in_its_prologue():
    code = with_block.__code__
    offset, depth = resumable_points(code)[3]
    resumed = make_at(code, offset, depth)
    with pytest.raises(resume.ResumeError, match="prologue"):
        resume.original_location(resumed, 0)


def test_reentering_a_with_block_whose_enter_fails():
    class Once(Recorder):
        entered = False

        def __enter__(self):
            if self.entered:
                raise RuntimeError("cannot enter twice")
            self.entered = True
            return super().__enter__()

    def guarded(log, n):
        try:
            with Once(log, "once"):
                log.append(n)
        except RuntimeError as error:
            log.append(("caught", str(error)))
        return n

    def unguarded(log, n):
        with Once(log, "once"):
            log.append(n)
        return n

    for function, handled in ((guarded, True), (unguarded, False)):
        code = function.__code__
        body = next(i for i in scan(code) if i.opname == "BEFORE_WITH").offset + 4
        resumed = make_at(code, body, 1, with_blocks=[resume.WithBlock(0)])
        log = []
        manager = Once(log, "once")
        manager.__enter__()
        call = resume.resume_function(function, resumed)
        if handled:
            assert call(manager, log, 7) == 7
            assert log == [("enter", "once"), ("caught", "cannot enter twice")]
        else:
            with pytest.raises(RuntimeError) as caught:
                call(manager, log, 7)
            with_line = next(i for i in scan(code) if i.opname == "BEFORE_WITH").positions.lineno
            assert caught.value.__traceback__.tb_next.tb_lineno == with_line

