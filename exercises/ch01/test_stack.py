"""Graded tests for chapter 1 (stack depths): compared with CPython's co_stacksize and dis."""

from __future__ import annotations

import dis
import types

import pytest

from minidynamo.bytecode import max_stack_depth, scan
from minidynamo.bytecode.stack import stack_depths

from . import samples

CODE_OBJECTS = samples.stdlib_code_objects()


@pytest.mark.task("ch01.4")
def test_max_depth_equals_co_stacksize_over_stdlib():
    for code in CODE_OBJECTS:
        assert max_stack_depth(scan(code)) == code.co_stacksize, code.co_qualname


@pytest.mark.task("ch01.4")
@pytest.mark.parametrize("function", [samples.handlers, samples.tensor_like,
                                      samples.long_branch_function()],
                         ids=lambda f: f.__name__)
def test_depths_follow_dis_stack_effect(function):
    """Along straight-line flow, depth[i+1] = depth[i] + dis.stack_effect(i, jump=False)."""
    instructions = scan(function)
    depths = stack_depths(instructions)
    assert depths[0] == 0
    assert len(depths) == len(instructions)
    raw = [i for i in dis.get_instructions(function) if i.opname != "EXTENDED_ARG"]
    for k in range(len(instructions) - 1):
        current, following = depths[k], depths[k + 1]
        if current is None or following is None:
            continue
        if instructions[k].opname in {"RETURN_VALUE", "RAISE_VARARGS", "RERAISE",
                                      "JUMP_FORWARD", "JUMP_BACKWARD",
                                      "JUMP_BACKWARD_NO_INTERRUPT", "RETURN_GENERATOR"}:
            continue
        effect = dis.stack_effect(raw[k].opcode, raw[k].arg, jump=False)
        assert following == current + effect, (raw[k].opname, raw[k].offset)


@pytest.mark.task("ch01.4")
def test_handler_depth_includes_the_exception():
    instructions = scan(samples.handlers)
    depths = stack_depths(instructions)
    entry = next(i.exn_tab_entry for i in instructions if i.exn_tab_entry is not None)
    handler_index = next(k for k, i in enumerate(instructions) if i is entry.target)
    assert depths[handler_index] == entry.depth + int(entry.lasti) + 1


def with_dead_code(function) -> "types.CodeType":
    """`function`'s code with instructions appended after its last one (a RETURN_VALUE):
    no jump leads there and no exception-table entry covers them, so CPython can never
    run them and they have no stack depth."""
    code = function.__code__
    dead = [("NOP", 0), ("LOAD_CONST", 0), ("LOAD_CONST", 0), ("BUILD_TUPLE", 2),
            ("RETURN_VALUE", 0)]
    no_location = 0x80 | (15 << 3) | (len(dead) - 1)   # one linetable entry: "no line"
    return code.replace(co_code=code.co_code + bytes(
        byte for name, arg in dead for byte in (dis.opmap[name], arg)),
        co_linetable=code.co_linetable + bytes([no_location]))


@pytest.mark.task("ch01.4")
@pytest.mark.parametrize("function", [samples.handlers, samples.tensor_like],
                         ids=lambda f: f.__name__)
def test_dead_code_after_the_last_return_has_no_depth(function):
    code = with_dead_code(function)
    instructions = scan(code)
    depths = stack_depths(instructions)
    original = len(function.__code__.co_code)
    dead = [k for k, i in enumerate(dis.get_instructions(code)) if i.offset >= original]
    assert dead and len(depths) == len(instructions)
    assert [depths[k] for k in dead] == [None] * len(dead)
    # CPython 3.11 drops unreachable blocks when it compiles: everything else is reached
    assert all(depths[k] is not None for k in range(len(depths)) if k not in dead)


@pytest.mark.task("ch01.4")
def test_unreachable_code_has_no_depth():
    def f(x):
        return x
        x = x + 1   # noqa: unreachable, but compiled in 3.11? not always
    instructions = scan(f)
    depths = stack_depths(instructions)
    reached = [d is not None for d in depths]
    assert reached[0] and all(reached[: next(k for k, i in enumerate(instructions)
                                              if i.opname == "RETURN_VALUE") + 1])


@pytest.mark.task("ch01.4")
def test_two_depths_for_one_instruction_are_reported():
    """Malformed bytecode: RETURN_VALUE is reached with 0 values (the jump pops the
    condition) and with 1 (the fall-through pushes one more); CPython's compiler never
    emits that, and stack_depths must say so (a ValueError) instead of guessing."""
    ops = [("RESUME", 0), ("LOAD_CONST", 0), ("POP_JUMP_FORWARD_IF_TRUE", 1),
           ("LOAD_CONST", 0), ("RETURN_VALUE", 0)]
    code = (lambda: None).__code__.replace(
        co_code=bytes(byte for name, arg in ops for byte in (dis.opmap[name], arg)),
        co_linetable=bytes([0x80 | (15 << 3) | (len(ops) - 1)]), co_exceptiontable=b"")
    assert [i.opname for i in dis.get_instructions(code)] == [name for name, _ in ops]
    with pytest.raises(ValueError):
        stack_depths(scan(code))
