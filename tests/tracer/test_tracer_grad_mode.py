"""Grad mode set by `torch.set_grad_enabled(b)` outside a `with` block and left set: the
graph that recorded `_set_grad_enabled(b)` sets it when it runs, so that graph is
compiled and called even when it holds nothing else (a break right after the call, a
function that only switches the mode), as torch.compile compiles it. Each program runs
eagerly, under minidynamo and under torch.compile; what it returns (values and
`requires_grad`) and the grad mode it leaves must be eager's, and the graph count
torch.compile's.
"""

from __future__ import annotations

import pytest
import torch
import torch._dynamo
import torch._dynamo.testing

import minidynamo
from minidynamo.testing import CompileCounter
from tracer_helpers import as_values, call_restoring_grad_mode

graph_break = torch._dynamo.graph_break


def switch_off_then_break(x):
    torch.set_grad_enabled(False)
    graph_break()
    return x * 3


def switch_off_then_print(x):
    torch.set_grad_enabled(False)
    print("switched off")
    return x * 3


def only_switch_off(x):
    torch.set_grad_enabled(False)
    return 5


def switch_off_between_breaks(x):
    y = x + 1
    graph_break()
    torch.set_grad_enabled(False)
    graph_break()
    return x * 3, y


def switch_three_times_then_break(x):
    torch.set_grad_enabled(False)
    torch.set_grad_enabled(True)
    torch.set_grad_enabled(False)
    graph_break()
    return x * 3


def helper_switches_off_and_breaks(x):
    torch.set_grad_enabled(False)
    graph_break()
    return x * 2


def switched_off_in_a_callee(x):
    y = helper_switches_off_and_breaks(x)
    z = x * 3
    torch.set_grad_enabled(True)
    return y, z


def enable_grad_block_after_switching_off(x):
    torch.set_grad_enabled(False)
    with torch.enable_grad():
        graph_break()
        y = x * 2
    return y, x * 3


CASES = {fn.__name__: fn for fn in [
    switch_off_then_break, switch_off_then_print, only_switch_off, switch_off_between_breaks,
    switch_three_times_then_break, switched_off_in_a_callee, enable_grad_block_after_switching_off,
]}


def outcome(fn):
    """What a call returns, each tensor with its `requires_grad`, and the grad mode after it."""
    result, mode_after = call_restoring_grad_mode(fn, torch.ones(2, requires_grad=True))
    return as_values(result, with_requires_grad=True), mode_after


@pytest.mark.parametrize("name", sorted(CASES))
def test_grad_mode_left_set_is_eagers(name):
    fn = CASES[name]
    expected = outcome(fn)
    counter = CompileCounter()
    assert outcome(minidynamo.compile(fn, backend=counter)) == expected
    torch._dynamo.reset()
    torch_counter = torch._dynamo.testing.CompileCounter()
    assert outcome(torch.compile(fn, backend=torch_counter)) == expected
    assert counter.frame_count == torch_counter.frame_count
