"""Graded tests for chapter 1 (scanner): compared with `dis` and CPython, never with fixed answers."""

from __future__ import annotations

import dis

import pytest

from minidynamo.bytecode import opcodes, scan
from minidynamo.bytecode.scanner import fold_extended_args, read_code_units

from . import samples

CODE_OBJECTS = samples.stdlib_code_objects()
SPECIAL = [samples.long_branch_function(), samples.many_constants_function(),
           samples.handlers, samples.tensor_like]


def dis_instructions(code):
    """dis's view, with EXTENDED_ARG entries removed (the scanner folds them)."""
    return [i for i in dis.get_instructions(code) if i.opname != "EXTENDED_ARG"]


# -- ch01.1: EXTENDED_ARG --------------------------------------------------------------

@pytest.mark.task("ch01.1")
@pytest.mark.parametrize("function", SPECIAL[:2], ids=["long_branch", "many_constants"])
def test_fold_extended_args_matches_dis(function):
    code = function.__code__
    units = fold_extended_args(read_code_units(code.co_code))
    expected = dis_instructions(code)
    assert [(u.offset, u.opcode, u.arg) for u in units] == \
        [(i.offset, i.opcode, i.arg) for i in expected]
    assert any(i.opname == "EXTENDED_ARG" for i in dis.get_instructions(code))


@pytest.mark.task("ch01.1")
def test_fold_extended_args_over_stdlib():
    for code in CODE_OBJECTS:
        units = fold_extended_args(read_code_units(code.co_code))
        assert [(u.offset, u.arg) for u in units] == \
            [(i.offset, i.arg) for i in dis_instructions(code)], code.co_qualname


@pytest.mark.task("ch01.1")
def test_fold_extended_args_records_prefix_start():
    code = samples.long_branch_function().__code__
    raw = list(dis.get_instructions(code))
    prefixed = {raw[k + 1].offset: raw[k].offset for k in range(len(raw) - 1)
                if raw[k].opname == "EXTENDED_ARG" and (k == 0 or raw[k - 1].opname != "EXTENDED_ARG")}
    units = fold_extended_args(read_code_units(code.co_code))
    starts = {u.offset: u.start for u in units if u.start != u.offset}
    assert starts == prefixed and starts


# -- ch01.2: jump targets ----------------------------------------------------------------

def _landing_offsets(code):
    """Map each offset dis may name as a target to the real instruction it starts.

    A jump to an instruction with EXTENDED_ARG prefixes lands on the first prefix.
    """
    landing, pending = {}, []
    for instruction in dis.get_instructions(code):
        pending.append(instruction.offset)
        if instruction.opname != "EXTENDED_ARG":
            landing.update({offset: instruction.offset for offset in pending})
            pending = []
    return landing


def _check_targets(code):
    instructions = scan(code)
    expected = dis_instructions(code)
    landing = _landing_offsets(code)
    for mine, theirs in zip(instructions, expected, strict=True):
        if theirs.opcode in dis.hasjrel or theirs.opcode in dis.hasjabs:
            assert mine.target is not None, f"{code.co_qualname}: {theirs.opname} at {theirs.offset}"
            assert mine.target.offset == landing[theirs.argval], (code.co_qualname, theirs)
            assert mine.target.is_jump_target
        else:
            assert mine.target is None


@pytest.mark.task("ch01.2")
@pytest.mark.parametrize("function", SPECIAL, ids=lambda f: f.__name__)
def test_jump_targets_special(function):
    _check_targets(function.__code__)


@pytest.mark.task("ch01.2")
def test_jump_targets_over_stdlib():
    checked = 0
    for code in CODE_OBJECTS:
        _check_targets(code)
        checked += 1
    assert checked > 200


@pytest.mark.task("ch01.2")
def test_jump_targets_are_instructions_of_the_same_list():
    instructions = scan(samples.long_branch_function())
    ids = {id(i) for i in instructions}
    jumps = [i for i in instructions if i.opname in opcodes.JUMPS]
    assert jumps and all(id(j.target) in ids for j in jumps)
