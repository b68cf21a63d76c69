"""Programs and helpers of chapter 10's graded tests.

Each program is compiled by minidynamo (your function plugged in) and by
torch.compile with the same backend, so that what the backend receives under both
can be compared: the graphs, normalised (`minidynamo.testing.normalize_graph`), the
example inputs, the values.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

import minidynamo

def t(generator: torch.Generator, *shape: int, requires_grad: bool = False) -> torch.Tensor:
    return torch.randn(*shape, generator=generator).requires_grad_(requires_grad)


def mlp(x, w1, w2):
    """A two-layer perceptron with a residual: matmuls, an activation, a reduction."""
    hidden = F.gelu(x @ w1)
    return (hidden @ w2 + x).sum(-1)


def mixed_calls(x, y):
    """torch functions, methods, operators and F.* in one graph, some used twice."""
    z = torch.sin(x) + torch.cos(y)
    z = z + x.relu().sum() * y.abs().mean()
    return F.softmax(z, dim=-1) + torch.sin(z)


def with_a_module(layer, x):
    return layer(x).tanh() * 2


def inputs_of(fn, requires_grad=False):
    """Fresh arguments for one of the programs above, the same values on every call."""
    generator = torch.Generator().manual_seed(0)
    if fn is mlp:
        return (t(generator, 3, 4), t(generator, 4, 6, requires_grad=requires_grad),
                t(generator, 6, 4, requires_grad=requires_grad))
    if fn is mixed_calls:
        return t(generator, 2, 5, requires_grad=requires_grad), t(generator, 2, 5)
    with torch.random.fork_rng():
        torch.manual_seed(0)
        layer = torch.nn.Linear(4, 3)
    layer.requires_grad_(requires_grad)
    return layer, t(generator, 2, 4)


PROGRAMS = [mlp, mixed_calls, with_a_module]


def graphs_received(compile_fn, fn, args, backend_factory, **options):
    """Compile `fn` with a backend made by `backend_factory(record)` and call it once;
    returns (result, what `record` collected)."""
    received = []
    if compile_fn is torch.compile:
        torch._dynamo.reset()
    else:
        minidynamo.reset()
    compiled = compile_fn(fn, backend=backend_factory(received), **options)
    return compiled(*args), received
