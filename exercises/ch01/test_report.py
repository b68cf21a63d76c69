"""Graded tests for chapter 1 (the BytecodeScanner report): counts checked against dis."""

from __future__ import annotations

import dis
import re

import pytest

from minidynamo.bytecode import opcodes, scan
from minidynamo.scan import TENSOR_OPS, report

from . import samples


def field(lines, name):
    line = next(line for line in lines if line.strip().startswith(name))
    return [int(n) for n in re.findall(r"\d+", line.split(":", 1)[1])]


def real(code):
    return [i for i in dis.get_instructions(code) if i.opname != "EXTENDED_ARG"]


@pytest.mark.task("ch01.6")
@pytest.mark.parametrize("function", [samples.tensor_like, samples.handlers,
                                      samples.long_branch_function()],
                         ids=lambda f: f.__name__)
def test_counts_match_dis(function):
    lines = report(scan(function))
    instructions = real(function.__code__)
    assert field(lines, "instructions")[0] == len(instructions)
    touching = sum(1 for i in instructions if i.opname in TENSOR_OPS)
    assert field(lines, "may touch tensors")[0] == touching
    share = 100.0 * touching / len(instructions)
    assert f"{share:.1f}%" in next(l for l in lines if "may touch tensors" in l)
    jumps = [i for i in instructions if i.opcode in dis.hasjrel or i.opcode in dis.hasjabs]
    conditional = [i for i in jumps if i.opname in opcodes.CONDITIONAL_JUMPS]
    assert field(lines, "jumps")[:3] == [len(jumps), len(conditional),
                                         len(jumps) - len(conditional)]


@pytest.mark.task("ch01.6")
def test_per_opcode_breakdown():
    instructions = real(samples.tensor_like.__code__)
    lines = report(scan(samples.tensor_like))
    for name in {i.opname for i in instructions if i.opname in TENSOR_OPS}:
        count = sum(1 for i in instructions if i.opname == name)
        assert any(re.match(rf"\s+{name}\s+{count}\b", line) for line in lines), name


@pytest.mark.task("ch01.6")
def test_notes_name_the_data_dependent_branch():
    lines = report(scan(samples.tensor_like))
    text = "\n".join(lines)
    assert "graph-break notes" in text and "truth" in text.lower() or "branches" in text
    straight = report(scan(lambda x: x + 1))
    assert any("straight-line" in line for line in straight)


@pytest.mark.task("ch01.6")
def test_an_empty_listing_has_no_tensor_share():
    """No instructions: 0 of 0 touch tensors (a share of 0.0%, not a ZeroDivisionError)."""
    lines = report([])
    assert field(lines, "instructions")[0] == 0
    assert "0 (0.0%)" in next(line for line in lines if "may touch tensors" in line)
