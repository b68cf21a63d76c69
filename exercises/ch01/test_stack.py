"""Graded tests for chapter 1 (stack depths): compared with CPython's co_stacksize and dis."""

from __future__ import annotations

import dis

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
