"""Wrong results that programs written to probe the backends found (about 600 programs
under aot_eager and inductor), each checked against eager PyTorch and torch.compile,
which was right on each:

- `x.__setitem__(0, v)` (and `torch.Tensor.__setitem__(x, 0, v)`) made a node that
  returned nothing and that nothing used: dropped as dead code, with the write;
- `y = x.clone(); y.requires_grad_(True)` as a statement: the mark that makes the frame
  break at that call (a backend that traces autograd would return `y * 2` without
  requires_grad) was on the call's result, which nothing used, not on `y`;
- a 0-d float64 tensor reaching the graph: AOTAutograd's pass that turns scalars into
  tensors asks once to start again (`TensorifyScalarRestartAnalysis`) about a symbol of
  its own, which no float input of the frame names; it was raised as a backend failure
  where torch.compile compiles the graph a second time.
"""

from __future__ import annotations

import pytest
import torch

import minidynamo
from minidynamo import config
from torch._dynamo.testing import CompileCounterWithBackend

BACKENDS = ["eager", "aot_eager"]


def written_through_methods(x):
    x.__setitem__(0, 5.0)
    torch.Tensor.__setitem__(x, 1, 7.0)
    y = x.clone()
    y.__setitem__(y > 6, 0.0)
    return x.sum(), y


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_item_write_called_as_a_method_is_made(backend):
    minidynamo.reset()
    x, expected = torch.ones(3, 2), torch.ones(3, 2)
    with config.patch(strict=True):
        out = minidynamo.compile(written_through_methods, backend=backend)(x)
    reference = written_through_methods(expected)
    assert torch.equal(x, expected)
    assert all(torch.equal(a, b) for a, b in zip(out, reference))


def made_to_require_grad(x, detach):
    y = x.detach() if detach else x.clone()
    y.requires_grad_(True)
    return y * 2, y


@pytest.mark.parametrize("detach", [False, True])
def test_requires_grad_of_a_tensor_made_in_the_frame_reaches_its_results(detach):
    minidynamo.reset()
    torch._dynamo.reset()
    ours, theirs = CompileCounterWithBackend("aot_eager"), CompileCounterWithBackend("aot_eager")
    out, y = minidynamo.compile(made_to_require_grad, backend=ours)(torch.ones(3), detach)
    torch.compile(made_to_require_grad, backend=theirs)(torch.ones(3), detach)
    assert out.requires_grad and y.requires_grad
    out.sum().backward()
    assert torch.equal(y.grad, torch.full((3,), 2.0))
    assert ours.frame_count == theirs.frame_count  # the break at requires_grad_(), as torch's


class Scaled(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("scale", torch.tensor(1.5, dtype=torch.float64))

    def forward(self, x):
        return x * self.scale


def doubled(s):
    return s * 2


def scaled_in_place(v, s):
    v.mul_(s)
    return v + s


def test_a_zero_dim_float64_tensor_compiles_under_aot_eager():
    minidynamo.reset()
    s = torch.tensor(2.5, dtype=torch.float64)
    with config.patch(strict=True):
        assert torch.equal(minidynamo.compile(doubled, backend="aot_eager")(s), doubled(s))
        x = torch.ones(2, dtype=torch.float64)
        assert torch.equal(minidynamo.compile(Scaled(), backend="aot_eager")(x), Scaled()(x))
        v, expected = torch.ones(2, dtype=torch.float64), torch.ones(2, dtype=torch.float64)
        out = minidynamo.compile(scaled_in_place, backend="aot_eager")(v, s)
    assert torch.equal(out, scaled_in_place(expected, s)) and torch.equal(v, expected)
