"""Graded tests for chapter 2: the dispatch table (ch02.1) and the step loop (ch02.2).

The table is checked against `dis.opmap` (the real opcode numbers of this Python); the
loop against TorchDynamo's own `TORCH_LOGS=trace_bytecode` log of the same call; the
captured graphs against torch.compile's, computed in the same test; and every program
also against CPython's stack, instruction by instruction (the stack oracle).
"""

from __future__ import annotations

import dis

import pytest
import torch

import minidynamo
from minidynamo import config
from minidynamo.exc import Unsupported
from minidynamo.testing import (
    assert_same_as_torch,
    compare_with_torch,
    minidynamo_trace_log,
    torch_trace_log,
    trace_opnames,
)
from minidynamo.translator import InstructionTranslatorBase

from . import samples

# -- ch02.1: the metaclass builds the dispatch table -------------------------------------


def _is_missing(handler, opname: str) -> bool:
    """Whether `handler` is the missing-handler entry: running it graph-breaks, naming the opcode."""
    try:
        handler(None, None)
    except Unsupported as error:
        return opname in str(error) and "missing bytecode handler" in str(error)
    except Exception:  # noqa: BLE001 - a real handler run on None fails some other way
        return False
    return False


@pytest.mark.task("ch02.1")
def test_table_maps_every_opcode_number_to_its_handler():
    class Probe(InstructionTranslatorBase):
        pass

    table = Probe.dispatch_table
    assert isinstance(table, list) and len(table) == 256
    for opname, number in dis.opmap.items():
        if number >= 256:
            continue
        handler = getattr(Probe, opname, None)
        if callable(handler):
            assert table[number] is handler, opname
        else:
            assert _is_missing(table[number], opname), f"{opname} should be a missing handler"
    unused = [n for n in range(256) if n not in dis.opmap.values()]
    assert unused and all(_is_missing(table[n], "") for n in unused)


@pytest.mark.task("ch02.1")
def test_each_class_gets_its_own_table():
    def NOP(self, inst):
        raise AssertionError("not called")

    class Override(InstructionTranslatorBase):
        pass

    Special = type("Special", (InstructionTranslatorBase,), {"NOP": NOP, "BINARY_OP": None})
    assert Special.dispatch_table[dis.opmap["NOP"]] is NOP
    assert _is_missing(Special.dispatch_table[dis.opmap["BINARY_OP"]], "BINARY_OP")
    assert InstructionTranslatorBase.dispatch_table[dis.opmap["NOP"]] is InstructionTranslatorBase.NOP
    assert Override.dispatch_table is not InstructionTranslatorBase.dispatch_table
    assert Override.dispatch_table[dis.opmap["LOAD_FAST"]] is InstructionTranslatorBase.LOAD_FAST


@pytest.mark.task("ch02.1")
def test_a_handler_name_that_is_not_an_opcode_is_refused():
    def LOAD_FASTEST(self, inst):
        pass

    with pytest.raises(TypeError, match="LOAD_FASTEST"):
        type("Typo", (InstructionTranslatorBase,), {"LOAD_FASTEST": LOAD_FASTEST}).dispatch_table


@pytest.mark.task("ch02.1")
@pytest.mark.parametrize("program", [samples.f, samples.calls, samples.loop_list],
                         ids=lambda p: p.__name__)
def test_pipeline_with_translators_built_by_the_metaclass(program):
    inputs = samples.tensors((4, 4), (4, 4))[: program.__code__.co_argcount]
    with samples.custom_translators():
        assert_same_as_torch(program, *inputs)
        samples.assert_stack_depths_match(program, *inputs)


@pytest.mark.task("ch02.1")
def test_a_missing_handler_breaks_the_graph_when_it_runs():
    x, y = samples.tensors((3,), (3,))
    with samples.custom_translators(BINARY_OP=None):
        minidynamo.reset()
        explanation = minidynamo.explain(samples.f)(x, y)
        assert any("missing bytecode handler: BINARY_OP" in str(reason)
                   for reason in explanation.break_reasons)
        with pytest.raises(Unsupported, match="BINARY_OP"):
            minidynamo.reset()
            minidynamo.compile(samples.f, fullgraph=True)(x, y)
        # a table with a hole still gives CPython's answer: the frame runs eagerly
        minidynamo.reset()
        torch.testing.assert_close(minidynamo.compile(samples.f)(x, y), samples.f(x, y))
        samples.assert_stack_depths_match(samples.f, x, y)  # up to the break
    with samples.custom_translators(SETUP_ANNOTATIONS=None):  # never runs in f: no break
        assert_same_as_torch(samples.f, x, y)
        samples.assert_stack_depths_match(samples.f, x, y)


# -- ch02.2: step() ----------------------------------------------------------------------


TRACED = [samples.f, samples.shuffle, samples.calls, samples.loop_range, samples.g]


@pytest.mark.task("ch02.2")
@pytest.mark.parametrize("program", TRACED, ids=lambda p: p.__name__)
def test_trace_log_matches_torch(program):
    """One TRACE line per instruction, before it runs, with the stack: as TORCH_LOGS prints."""
    inputs = samples.tensors((4, 4), (4, 4))[: program.__code__.co_argcount]
    theirs = torch_trace_log(program, *inputs)
    mine = minidynamo_trace_log(program, *inputs)
    assert trace_opnames(mine, root_only=True) == trace_opnames(theirs, root_only=True)
    root = [line for line in mine if line.depth == 0]
    assert root[0].opname == "RESUME" and root[0].text.endswith("[]")
    if program is samples.f:  # seed 001's table, stack by stack
        assert [line.text for line in mine] == [line.text for line in theirs]
    samples.assert_stack_depths_match(program, *inputs)


@pytest.mark.task("ch02.2")
@pytest.mark.parametrize("program", TRACED, ids=lambda p: p.__name__)
def test_stepping_gives_torch_graph(program):
    inputs = samples.tensors((4, 4), (4, 4))[: program.__code__.co_argcount]
    assert_same_as_torch(program, *inputs, fullgraph=True)
    samples.assert_stack_depths_match(program, *inputs)


@pytest.mark.task("ch02.2")
def test_the_limit_counts_each_instruction_once():
    """Straight-line code runs each of its instructions once (dis lists them): a limit of
    exactly that many steps compiles it, one fewer gives up."""
    x, y = samples.tensors((4, 4), (4, 4))
    count = len(list(dis.get_instructions(samples.f)))
    for limit, breaks in ((count, False), (count - 1, True)):
        with config.patch(max_instructions_per_frame=limit):
            minidynamo.reset()
            explanation = minidynamo.explain(samples.f)(x, y)
            samples.assert_stack_depths_match(samples.f, x, y)
        reasons = [str(r) for r in explanation.break_reasons]
        assert any("too many instructions" in r for r in reasons) == breaks, (limit, reasons)
    minidynamo.reset()


@pytest.mark.task("ch02.2")
def test_a_break_names_the_line_of_the_instruction_it_stopped_at():
    """The endless-loop break happens inside the loop: its user frame names a line of the
    loop's instructions (dis), not the `def` line of the function."""
    x, = samples.tensors((3,))
    with config.patch(max_instructions_per_frame=100):
        minidynamo.reset()
        explanation = minidynamo.explain(samples.long_loop)(x)
    instructions = list(dis.get_instructions(samples.long_loop))
    start = next(k for k, i in enumerate(instructions) if i.opname == "FOR_ITER")
    end = next(k for k, i in enumerate(instructions) if i.opname == "JUMP_BACKWARD")
    loop_lines = {i.positions.lineno for i in instructions[start:end + 1]}
    [reason] = [r for r in explanation.break_reasons if "too many instructions" in str(r)]
    assert reason.lineno in loop_lines
    assert samples.long_loop.__code__.co_firstlineno not in loop_lines


@pytest.mark.task("ch02.2")
def test_step_counts_instructions_and_gives_up_on_endless_loops():
    x, = samples.tensors((3,))
    with config.patch(max_instructions_per_frame=100):
        minidynamo.reset()
        explanation = minidynamo.explain(samples.long_loop)(x)
    assert any("too many instructions" in str(reason) for reason in explanation.break_reasons)
    comparison = compare_with_torch(samples.long_loop, x)  # the default limit is far away
    assert comparison.ok, comparison.report()
    samples.assert_stack_depths_match(samples.long_loop, x)
