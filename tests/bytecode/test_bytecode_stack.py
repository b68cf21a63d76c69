"""stack_effect against dis.stack_effect; max_stack_depth against co_stacksize."""

from __future__ import annotations

import dis

import pytest

from minidynamo.bytecode import create_instruction, max_stack_depth, scan, stack_effect
from minidynamo.bytecode.stack import stack_depths

SAMPLE_ARGS = (0, 1, 2, 3, 4, 5, 7, 8, 15, 16, 255, 256, 259, 0x1FF, 0x10203)


@pytest.mark.parametrize("opname", sorted(dis.opmap))
def test_stack_effect_equals_dis_for_every_opcode(opname):
    opcode = dis.opmap[opname]
    args = SAMPLE_ARGS if opcode >= dis.HAVE_ARGUMENT else (None,)
    for arg in args:
        instruction = create_instruction(opname, arg=arg)
        for jump in (None, True, False):
            assert stack_effect(instruction, jump=jump) == dis.stack_effect(
                opcode, arg, jump=jump), (opname, arg, jump)


def test_stack_effect_equals_dis_on_the_stdlib(stdlib_code):
    for code in stdlib_code[::5]:
        for instruction in scan(code):
            for jump in (True, False):
                assert stack_effect(instruction, jump=jump) == dis.stack_effect(
                    instruction.opcode, instruction.arg, jump=jump), instruction


def test_max_stack_depth_equals_co_stacksize(stdlib_code):
    for code in stdlib_code:
        assert max_stack_depth(scan(code)) == code.co_stacksize, code


def test_stack_depths_of_a_small_function():
    def f(a, b):
        return a + b * 2

    depths = dict((i.opname + str(i.argval), d) for i, d in zip(scan(f), stack_depths(scan(f))))
    assert depths["LOAD_FASTa"] == 0
    assert depths["BINARY_OP5"] == 3       # a, b, 2 on the stack before the multiply
    assert depths["RETURN_VALUENone"] == 1


def test_unreachable_code_has_no_depth():
    def f():
        return 1

    instructions = scan(f)
    instructions.append(create_instruction("NOP"))      # after RETURN_VALUE: dead
    assert stack_depths(instructions)[-1] is None
    assert max_stack_depth(instructions) == f.__code__.co_stacksize


def test_inconsistent_depths_are_reported():
    def f(x):
        if x:
            x = 1
        return x

    instructions = scan(f)
    jump = next(i for i in instructions if i.target is not None)
    jump.target = instructions[-1]          # RETURN_VALUE, reached with depth 1 and 0
    with pytest.raises(ValueError, match="stack depth"):
        stack_depths(instructions)
