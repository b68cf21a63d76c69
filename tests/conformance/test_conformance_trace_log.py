"""The trace log: minidynamo steps through the same instructions as TorchDynamo.

``MINIDYNAMO_LOGS=trace_bytecode`` prints one ``TRACE OPNAME argval [stack]`` line
per instruction the symbolic interpreter executes, like
``TORCH_LOGS=trace_bytecode``. For ten tensor programs of the corpus, the sequence
of opcode names in minidynamo's log must equal TorchDynamo's.

What is compared: the opcode names of every ``TRACE`` line, in order, root frame
and inlined frames together (both tracers log an inlined call's instructions where
the call happens, so the sequences line up instruction for instruction). The rest
of a line (the argument and the stack's ``VariableTracker`` reprs) is not compared:
the class names of the two implementations differ by design. The root-frame
sequence alone is compared as well, so a failure says whether the root frame or an
inlined one went astray. Both logs are captured in-process through their
``logging`` loggers (see ``minidynamo.testing.torch_trace_log``).
"""

from __future__ import annotations

import difflib
import functools

import pytest
from corpus import tensor_programs

from minidynamo.testing import minidynamo_trace_log, torch_trace_log, trace_opnames

# Straight-line code, loops, a branch on a flag, inlined helpers and closures,
# comprehensions (nested functions in 3.11), containers, attribute mutation.
TRACED = [
    "add_tensors",
    "arithmetic_mix",
    "loop_over_range",
    "branch_on_flag",
    "inlined_helper",
    "nested_function_closure",
    "list_comprehension_tensors",
    "shape_arithmetic",
    "dict_input_dict_output",
    "mutate_object_attributes",
]

# A tracer bug may loop forever: fail the one test instead of hanging the run.
pytestmark = pytest.mark.timeout(60)


@functools.cache
def torch_log(case_id: str) -> tuple[str, ...]:
    """TorchDynamo's trace log of a program, traced once for both tests."""
    case = tensor_programs.CASES[case_id]
    return tuple(torch_trace_log(case.fn, *case.args, **case.kwargs))


def opcode_diff(expected: list[str], actual: list[str]) -> str:
    lines = difflib.unified_diff(expected, actual, "torch.compile", "minidynamo", lineterm="", n=2)
    return "\n".join(lines)


@pytest.mark.parametrize("case_id", TRACED)
def test_torch_trace_log_is_captured(case_id):
    names = trace_opnames(list(torch_log(case_id)), root_only=True)
    assert "RESUME" in names
    assert names[-1] == "RETURN_VALUE"


@pytest.mark.parametrize("case_id", TRACED)
def test_same_opcodes_as_torch(case_id):
    case = tensor_programs.CASES[case_id]
    expected = list(torch_log(case_id))
    actual = minidynamo_trace_log(case.fn, *case.args, **case.kwargs)

    expected_root = trace_opnames(expected, root_only=True)
    actual_root = trace_opnames(actual, root_only=True)
    assert actual_root == expected_root, "root frame:\n" + opcode_diff(expected_root, actual_root)

    expected_all, actual_all = trace_opnames(expected), trace_opnames(actual)
    assert actual_all == expected_all, "with inlined frames:\n" + opcode_diff(expected_all, actual_all)
