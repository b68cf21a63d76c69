"""The blocks around an instruction, read off the exception table; live locals.

Small functions checked by hand, then invariants over the standard-library
corpus of the bytecode tests: right after BEFORE_WITH the new `__exit__` slot
is found, right after PUSH_EXC_INFO the saved exception's slot is found, every
slot found lies inside the stack, and a resume code can be built (and
assembled with consistent stack depths) at sampled points of functions that
use `with` and `try`.
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

import pytest
from resume_harness import refused_offsets
from resume_samples import chained_in_handler, closures, nested_with, straight_line, with_in_try

from minidynamo import resume
from minidynamo.bytecode import scan, stack_depths
from minidynamo.resume.blocks import Blocks

sys.path.insert(0, str(Path(__file__).parent.parent / "bytecode"))
from bytecode_corpus import corpus  # noqa: E402

SUSPENDABLE = (inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ITERABLE_COROUTINE
               | inspect.CO_ASYNC_GENERATOR)


def offsets_of(function, opname):
    return [instruction.offset for instruction in scan(function) if instruction.opname == opname]


def test_nested_with_blocks():
    inner_body = offsets_of(nested_with, "BEFORE_WITH")[1] + 4    # after BEFORE_WITH, STORE_FAST
    assert resume.with_blocks_at(nested_with, inner_body) == (resume.WithBlock(0),
                                                              resume.WithBlock(1))
    outer_body = offsets_of(nested_with, "BEFORE_WITH")[0] + 2
    assert resume.with_blocks_at(nested_with, outer_body) == (resume.WithBlock(0),)
    assert resume.with_blocks_at(nested_with, offsets_of(nested_with, "RETURN_VALUE")[-1]) == ()


def test_with_inside_try_and_its_handler():
    body = offsets_of(with_in_try, "BEFORE_WITH")[0] + 2
    assert resume.with_blocks_at(with_in_try, body) == (resume.WithBlock(0),)
    assert resume.exception_slots_at(with_in_try, body) == ()
    handler = offsets_of(with_in_try, "WITH_EXCEPT_START")[0]   # stack: exit, lasti, saved, exc
    assert resume.with_blocks_at(with_in_try, handler) == ()
    assert resume.exception_slots_at(with_in_try, handler) == (2,)


def test_exception_slots_of_nested_handlers():
    raise_type_error = offsets_of(chained_in_handler, "RAISE_VARARGS")[0]
    assert resume.exception_slots_at(chained_in_handler, raise_type_error) == (0,)
    finally_body = offsets_of(chained_in_handler, "PUSH_EXC_INFO")[1] + 2
    assert resume.exception_slots_at(chained_in_handler, finally_body) == (0, 1)
    handler_start = offsets_of(chained_in_handler, "PUSH_EXC_INFO")[0]
    assert resume.exception_slots_at(chained_in_handler, handler_start) == ()


def test_instructions_left_out_of_the_table_still_have_their_blocks():
    instructions = scan(chained_in_handler)
    nops = [i for i in instructions if i.opname == "NOP" and i.exn_tab_entry is None]
    inside_handler = [i for i in nops if i.offset > offsets_of(chained_in_handler,
                                                               "PUSH_EXC_INFO")[0]]
    assert inside_handler                  # the `try:` line inside the except body
    assert resume.exception_slots_at(chained_in_handler, inside_handler[0].offset) == (0,)


def test_live_locals_are_fast_locals_in_slot_order():
    store_x = [i for i in scan(straight_line) if i.argval == "x"][0]
    assert resume.live_locals_at(straight_line, store_x.offset) == ["log", "b"]
    store_values = [i for i in scan(closures) if i.argval == "values"][0]
    assert resume.live_locals_at(closures, store_values.offset) == ["log"]   # base: a cell


@pytest.fixture(scope="module")
def block_functions():
    """Function code objects of the corpus that use `with` or `try`."""
    return [code for code in corpus()
            if code.co_flags & inspect.CO_OPTIMIZED and not code.co_flags & SUSPENDABLE
            and any(i.opname in ("BEFORE_WITH", "PUSH_EXC_INFO") for i in scan(code))]


def test_blocks_agree_with_the_instructions_that_open_them(block_functions):
    checked = 0
    for code in block_functions:
        instructions = scan(code)
        depths = stack_depths(instructions)
        blocks = Blocks(instructions)
        for opener, after, depth, after_depth in zip(instructions, instructions[1:],
                                                     depths, depths[1:]):
            if after_depth is None:
                continue
            slots = set(blocks.with_entries(after)) | set(blocks.exception_slots(after))
            assert all(slot < after_depth for slot in slots), (code, after)
            if opener.opname == "BEFORE_WITH":
                assert depth - 1 in blocks.with_entries(after), (code, after)
                checked += 1
            if opener.opname == "PUSH_EXC_INFO":
                assert depth - 1 in blocks.exception_slots(after), (code, after)
                checked += 1
    assert checked > 500


def test_resume_codes_build_across_the_corpus(block_functions):
    """About 200 points, spread over the functions: each assembles, depths consistent."""
    points = []
    for code in block_functions:
        instructions = scan(code)
        refused = refused_offsets(code)
        points += [(code, instruction.offset, depth)
                   for instruction, depth in zip(instructions, stack_depths(instructions))
                   if depth is not None and instruction.offset not in refused]
    for code, offset, depth in points[::len(points) // 200]:
        withs = resume.with_blocks_at(code, offset)
        resumed = resume.make_resume_code(code, offset, depth,
                                          resume.live_locals_at(code, offset),
                                          with_blocks=withs)
        assert resumed.co_stacksize >= depth
