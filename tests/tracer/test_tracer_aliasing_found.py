"""Wrong results that programs written to probe minidynamo found in views, `out=`, grad
mode and tensor versions, each checked against eager PyTorch (and torch.compile, which
was right on each) under the `eager` and `aot_eager` backends:

- `x.T`, `x.mT`, `x.H`, `x.mH`, `x.data` were reloaded from their source after the
  graph: a new tensor in eager on each read, so an in-place change of its shape, its
  `requires_grad` or its identity was lost (a `t_()` then a write hit the wrong places);
- `x.contiguous()` (which is `x`) then `t_()`: the backend started from the FakeTensor
  the trace had transposed; it now gets a fake mode of its own, as TorchDynamo's does;
- `out=` into a tensor the call resizes, or into one that is not contiguous: kept in the
  graph, where functionalization broadcast the result or accepted an overlap eager
  rejects; the call breaks the graph now (MD0025), as on torch.compile;
- a `torch.set_grad_enabled(False)` object entered a second time left grad mode on;
- `x._version` under aot_eager was a constant (functionalization folds the op): an
  input's version is read again from the input after the graph, as on torch.compile;
- `Tensor.random_(0, 5)` under aot_eager: AOTAutograd's code spelled the argument
  `from`, a keyword; `random_` and `uniform_(from=...)` break the graph now.
"""

from __future__ import annotations

import pytest
import torch

import minidynamo
from minidynamo.testing import assert_same_value

BACKENDS = ["eager", "aot_eager"]


def compiled(fn, backend):
    minidynamo.reset()
    return minidynamo.compile(fn, backend=backend)


def transposed_then_written(x):
    v = x.T
    v.t_()
    v[0].fill_(5)  # v is x's layout again: row 0 of x
    return x


def data_unsqueezed(x):
    d = x.data
    d.unsqueeze_(0)
    return d.shape


def read_twice(x):
    v = x.mH
    return v, v


def data_made_to_require_grad(x):
    d = x.data
    d.requires_grad_()
    return d.requires_grad


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_tensor_attribute_is_a_new_tensor_on_each_read(backend):
    x, expected = torch.zeros(3, 3), torch.zeros(3, 3)
    compiled(transposed_then_written, backend)(x)
    assert torch.equal(x, transposed_then_written(expected))
    assert compiled(data_unsqueezed, backend)(torch.zeros(3)) == (1, 3)
    first, second = compiled(read_twice, backend)(torch.zeros(2, 2))
    assert first is second
    assert compiled(data_made_to_require_grad, backend)(torch.ones(2)) is True


def transposed_through_contiguous(x):
    v = x.contiguous()  # `x` itself
    v.t_()
    return x.sum()


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_metadata_change_through_an_alias_of_an_input_reaches_it(backend):
    x = torch.arange(6.0).view(2, 3).clone()
    assert compiled(transposed_through_contiguous, backend)(x) == 15
    assert x.shape == (3, 2) and x.stride() == (1, 3)


def add_into(x, out):
    torch.add(x, 1, out=out)
    return out


def max_into(x):
    values, indices = torch.empty(0), torch.empty(0, dtype=torch.long)
    torch.max(x, 0, out=(values, indices))
    return values, indices


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_out_tensor_the_call_resizes_breaks_the_graph(backend):
    run = compiled(add_into, backend)
    assert torch.equal(run(torch.arange(4.0), torch.empty(0)), torch.arange(4.0) + 1)
    out = torch.zeros(2, 2)
    run(torch.arange(2.0), out)
    assert out.shape == (2,)
    assert_same_value(max_into(torch.arange(6.0).view(3, 2)),
                      compiled(max_into, backend)(torch.arange(6.0).view(3, 2)))
    reasons = minidynamo.explain(add_into)(torch.ones(3), torch.empty(0)).break_reasons
    assert "MD0025" in str(reasons[0]) and "resizes" in reasons[0].reason
    assert minidynamo.explain(add_into)(torch.ones(3), torch.zeros(3)).graph_count == 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_out_tensor_that_is_not_contiguous_breaks_the_graph(backend):
    base = torch.arange(4.0).view(2, 2)
    with pytest.raises(RuntimeError, match="single memory location"):
        add_into(base, base.t())
    with pytest.raises(RuntimeError, match="single memory location"):
        compiled(add_into, backend)(base, base.t())


def grad_off_entered_twice(x):
    off = torch.set_grad_enabled(False)
    with off:
        first = x * 2
    with off:
        second = x * 3
    return first.requires_grad, second.requires_grad, torch.is_grad_enabled()


def made_then_switched_back(x):
    off = torch.set_grad_enabled(False)
    torch.set_grad_enabled(True)
    with off:  # __enter__ sets its mode again
        y = x * 2
    return y.requires_grad, torch.is_grad_enabled()


def entered_inside_no_grad(x):
    on = torch.set_grad_enabled(True)
    with torch.no_grad():
        with on:
            y = x * 2
        inside = torch.is_grad_enabled()  # __exit__ restored the mode before `on` was made
    return y.requires_grad, inside, torch.is_grad_enabled()


@pytest.mark.parametrize("fn", [grad_off_entered_twice, made_then_switched_back,
                                entered_inside_no_grad], ids=lambda fn: fn.__name__)
@pytest.mark.parametrize("backend", BACKENDS)
def test_set_grad_enabled_sets_its_mode_on_every_enter(fn, backend):
    expected = fn(torch.ones(3, requires_grad=True))
    assert compiled(fn, backend)(torch.ones(3, requires_grad=True)) == expected


def doubled_with_version(w):
    return w * 2, w._version


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_inputs_version_is_read_when_the_call_returns(backend):
    run, w, seen = compiled(doubled_with_version, backend), torch.zeros(3), []
    for _ in range(3):
        w.add_(1)
        seen.append(run(w)[1])
    assert seen == [1, 2, 3]


def drawn_in_place(x):
    return x + torch.empty(3).random_(0, 5), x + torch.empty(3).uniform_(**{"from": -1, "to": 1})


@pytest.mark.parametrize("backend", BACKENDS)
def test_random_draws_with_a_from_argument_run_eagerly(backend):
    torch.manual_seed(0)
    expected = drawn_in_place(torch.zeros(3))
    torch.manual_seed(0)
    assert_same_value(expected, compiled(drawn_in_place, backend)(torch.zeros(3)))
    assert minidynamo.explain(drawn_in_place)(torch.zeros(3)).graph_break_count >= 1
