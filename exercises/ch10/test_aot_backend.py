"""Graded tests for aot_backend (ch10.3): the hand-off to AOTAutograd.

Your `aot_backend(fw_compiler, bw_compiler, ...)` makes a backend. Under minidynamo it
must give each compiler what torch's own `aot_autograd(...)` backend gives it under
torch.compile: the same forward, backward and inference ATen graphs; and the compiled
function must compute eager's values and gradients.
"""

from __future__ import annotations

import warnings

import pytest
import torch
from torch._dynamo.backends.common import aot_autograd
from torch._functorch.aot_autograd import make_boxed_func

import minidynamo
from minidynamo.backends import aot_backend
from minidynamo.testing import normalize_graph

from .programs import PROGRAMS, inputs_of

aten = torch.ops.aten


def recorder(log, kind):
    def compiler(gm, example_inputs):
        log.append((kind, normalize_graph(gm)))
        return gm.forward

    return compiler


def compilers(log):
    return dict(fw_compiler=recorder(log, "forward"), bw_compiler=recorder(log, "backward"),
                inference_compiler=recorder(log, "inference"))


def run(compile_fn, make_backend, fn, args, backward=True):
    log = []
    if compile_fn is torch.compile:
        torch._dynamo.reset()
    else:
        minidynamo.reset()
    result = compile_fn(fn, backend=make_backend(**compilers(log)))(*args)
    if backward and result.requires_grad:
        result.sum().backward()
    return result, log


def gradients(args):
    return [arg.grad.clone() for arg in args if isinstance(arg, torch.Tensor) and arg.grad is not None] + [
        p.grad.clone() for arg in args if isinstance(arg, torch.nn.Module) for p in arg.parameters()]


@pytest.mark.task("ch10.3")
@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda fn: fn.__name__)
def test_training_graphs_equal_torchs_and_gradients_equal_eager(fn):
    args = inputs_of(fn, requires_grad=True)
    result, log = run(minidynamo.compile, aot_backend, fn, args)
    expected_args = inputs_of(fn, requires_grad=True)
    fn(*expected_args).sum().backward()
    _, torch_log = run(torch.compile, aot_autograd, fn, inputs_of(fn, requires_grad=True))
    assert [kind for kind, _ in log] == ["forward", "backward"]
    assert log == torch_log
    torch.testing.assert_close(result, fn(*inputs_of(fn, requires_grad=True)))
    grads, expected = gradients(args), gradients(expected_args)
    assert len(grads) == len(expected) >= 1
    for got, want in zip(grads, expected):
        torch.testing.assert_close(got, want)


@pytest.mark.task("ch10.3")
@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda fn: fn.__name__)
def test_without_gradients_there_is_one_inference_graph(fn):
    result, log = run(minidynamo.compile, aot_backend, fn, inputs_of(fn))
    _, torch_log = run(torch.compile, aot_autograd, fn, inputs_of(fn))
    assert [kind for kind, _ in log] == ["inference"]
    assert log == torch_log
    torch.testing.assert_close(result, fn(*inputs_of(fn)))


@pytest.mark.task("ch10.3")
def test_the_forward_compiler_stands_in_for_the_others():
    log = []
    fn = PROGRAMS[0]
    args = inputs_of(fn, requires_grad=True)
    minidynamo.compile(fn, backend=aot_backend(recorder(log, "fw")))(*args).sum().backward()
    assert [kind for kind, _ in log] == ["fw", "fw"]  # forward, then backward
    log.clear()
    minidynamo.reset()
    minidynamo.compile(fn, backend=aot_backend(recorder(log, "fw")))(*inputs_of(fn))
    assert [kind for kind, _ in log] == ["fw"]  # the inference graph


@pytest.mark.task("ch10.3")
def test_plain_and_boxed_compilers_both_work():
    """A compiler may return a plain callable (boxed for it) or a boxed one (kept)."""
    fn = PROGRAMS[1]
    plain = aot_backend(lambda gm, inputs: gm.forward)
    boxed = aot_backend(lambda gm, inputs: make_boxed_func(gm.forward))
    for backend in (plain, boxed):
        minidynamo.reset()
        args = inputs_of(fn, requires_grad=True)
        result = minidynamo.compile(fn, backend=backend)(*args)
        torch.testing.assert_close(result, fn(*inputs_of(fn, requires_grad=True)))
        result.sum().backward()
        assert args[0].grad is not None


@pytest.mark.task("ch10.3")
def test_plain_callables_are_boxed_so_aot_autograd_does_not_warn():
    """AOTAutograd warns when a compiler's function does not take boxed arguments (one
    list): `aot_backend` boxes a plain callable itself."""
    fn = PROGRAMS[0]
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*boxed arguments")
        args = inputs_of(fn, requires_grad=True)
        minidynamo.compile(fn, backend=aot_backend(lambda gm, inputs: gm.forward))(*args).sum().backward()
        minidynamo.reset()
        minidynamo.compile(fn, backend=aot_backend(lambda gm, inputs: gm.forward))(*inputs_of(fn))


@pytest.mark.task("ch10.3")
def test_a_failing_compiler_is_reported_under_the_backends_name():
    def no_kernels(gm, example_inputs):
        raise RuntimeError("no kernels for this graph")

    fn = PROGRAMS[1]
    with pytest.raises(minidynamo.BackendCompilerFailed) as raised:
        minidynamo.compile(fn, backend=aot_backend(no_kernels))(*inputs_of(fn))
    assert "backend='aot_backend(no_kernels)' raised" in str(raised.value)
    assert "no kernels for this graph" in str(raised.value)


@pytest.mark.task("ch10.3")
def test_decompositions_reach_the_graphs():
    log = []

    def gelu_by_hand(x, approximate="none"):
        return x * 0.5 * (1 + torch.erf(x / 2 ** 0.5))

    fn = PROGRAMS[0]
    backend = aot_backend(recorder(log, "fw"), decompositions={aten.gelu.default: gelu_by_hand})
    result = minidynamo.compile(fn, backend=backend)(*inputs_of(fn))
    torch.testing.assert_close(result, fn(*inputs_of(fn)))
    [(_, graph)] = log
    targets = [str(entry) for entry in graph]
    assert not any("gelu" in each for each in targets) and any("erf" in each for each in targets)


@pytest.mark.task("ch10.3")
@pytest.mark.parametrize("keep", [True, False])
def test_input_mutations_stay_in_the_graph_only_when_asked(keep):
    def accumulate(total, x):
        total.add_(x.relu())
        return total * 2

    graphs = []

    def keep_graph(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    total, x = torch.zeros(3), torch.tensor([1.0, -2.0, 3.0])
    backend = aot_backend(keep_graph, keep_inference_input_mutations=keep)
    result = minidynamo.compile(accumulate, backend=backend)(total, x)
    assert total.tolist() == [1.0, 0.0, 3.0] and result.tolist() == [2.0, 0.0, 6.0]
    copies = [node for node in graphs[0].graph.nodes if node.target is aten.copy_.default]
    assert bool(copies) is keep
