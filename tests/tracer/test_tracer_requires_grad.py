"""requires_grad set inside a compiled frame, under a backend that traces the graph's
autograd (aot_eager), compared with eager PyTorch and torch.compile:

- `torch.ones(3, requires_grad=True)` made in the frame came back without
  requires_grad: the factory call breaks the graph, as torch.compile's does (MD0022,
  its GB0225);
- `t.requires_grad_()` of a tensor made in the frame and returned came back without it:
  the frame is traced again, breaking at that call (MD0023, torch's GB8985); of an input
  of the graph, the call breaks (its real tensor is the one to change);
- a tensor computed before a trailing `torch.set_grad_enabled(False)` lost its
  requires_grad: the backend ran in the grad mode that tracing had left, not the one
  the graph starts in;
- `x._version` failed under aot_eager: the unbacked symbol of `_tensor_version` was
  left pending in the ShapeEnv AOTAutograd traces with.
"""

from __future__ import annotations

import pytest
import torch
from torch._dynamo.utils import counters

import minidynamo
from minidynamo.testing import CompileCounter


def made_requiring_grad(x):
    return torch.ones(3, requires_grad=True) * x


def made_and_returned(x):
    return x + torch.zeros(3, requires_grad=True)


def intermediate_requires_grad_(x):
    y = x.clone().requires_grad_()
    return y * 2


def detached_requires_grad_(x):
    return x.detach().requires_grad_()


def used_inside_only(x):
    y = x.clone().requires_grad_()
    return (y * 2).detach() + 1


def input_requires_grad_(x):
    x.requires_grad_()
    return x * 2


def grad_off_after(x):
    y = x * 2
    torch.set_grad_enabled(False)
    return y


def version_read(x):
    x.add_(1)
    return x * x._version


def autograd_facts(value):
    if isinstance(value, tuple):
        return [autograd_facts(item) for item in value]
    return value.tolist(), value.requires_grad, value.is_leaf, value.grad_fn is not None


def run(compile_fn, fn, make_input):
    torch.set_grad_enabled(True)
    try:
        x = make_input()
        out = compile_fn(fn)(x)
        return autograd_facts(out), x.requires_grad, torch.is_grad_enabled()
    finally:
        torch.set_grad_enabled(True)


CASES = [
    (made_requiring_grad, lambda: torch.ones(3)),
    (made_and_returned, lambda: torch.ones(3)),
    (intermediate_requires_grad_, lambda: torch.ones(3)),
    (detached_requires_grad_, lambda: torch.ones(3)),
    (used_inside_only, lambda: torch.ones(3)),
    (input_requires_grad_, lambda: torch.ones(3)),
    (grad_off_after, lambda: torch.ones(3, requires_grad=True)),
    (version_read, lambda: torch.ones(3)),
]


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
@pytest.mark.parametrize("fn, make_input", CASES, ids=[fn.__name__ for fn, _ in CASES])
def test_autograd_state_made_in_the_frame_is_eagers(fn, make_input, backend):
    expected = run(lambda f: f, fn, make_input)
    minidynamo.reset()
    ours = run(lambda f: minidynamo.compile(f, backend=backend), fn, make_input)
    assert ours == expected


@pytest.mark.parametrize("fn, make_input", CASES, ids=[fn.__name__ for fn, _ in CASES])
def test_graphs_and_breaks_are_torchs(fn, make_input):
    torch._dynamo.reset()
    counters.clear()
    theirs = CompileCounter()
    run(lambda f: torch.compile(f, backend=theirs), fn, make_input)
    torch_breaks = sum(counters["graph_break"].values())
    minidynamo.reset()
    ours, breaks = CompileCounter(), []
    minidynamo.convert_frame.break_listeners.append(breaks.append)
    try:
        run(lambda f: minidynamo.compile(f, backend=ours), fn, make_input)
    finally:
        minidynamo.convert_frame.break_listeners.remove(breaks.append)
    assert (ours.frame_count, ours.op_count) == (theirs.frame_count, theirs.op_count)
    assert len(breaks) == torch_breaks


def test_fullgraph_refuses_a_returned_requires_grad_intermediate():
    minidynamo.reset()
    with pytest.raises(minidynamo.Unsupported, match="requires_grad_"):
        minidynamo.compile(intermediate_requires_grad_, fullgraph=True)(torch.ones(3))
