"""Graded tests for OutputGraph.call_backend (ch10.4): handing the graph over.

Your `call_backend` calls the backend with the example inputs torch.compile gives:
the real tensors, and for an input that is a symbol (a dynamic size, a dynamic int)
the SymInt itself; inside a TracingContext holding a new FakeTensorMode on the frame's
ShapeEnv (`OutputGraph.backend_context`), so that a backend that traces again
(AOTAutograd, Inductor) keeps sizes symbolic and starts from the inputs' metadata at
the call, not from FakeTensors the trace changed. What it returns must be callable;
otherwise `BackendCompilerFailed` says so.
"""

from __future__ import annotations

import pytest
import torch
from torch._dynamo.backends.common import aot_autograd

import minidynamo


def scale(x, n):
    return x * n + x.shape[0]


CALLS = [(torch.ones(2, 3), 2), (torch.ones(2, 3), 3), (torch.ones(5, 3), 4), (torch.ones(6, 3), 5)]


def received(compile_fn, calls, **options):
    seen = []

    def backend(gm, example_inputs):
        context = torch._guards.TracingContext.try_get()
        placeholders = [node.meta["example_value"] for node in gm.graph.nodes if node.op == "placeholder"]
        fake_mode = torch._guards.detect_fake_mode(placeholders)
        seen.append({
            "kinds": [type(each).__name__ for each in example_inputs],
            "same_symbols": [str(each) for each in example_inputs if isinstance(each, torch.SymInt)]
            == [str(each) for each in placeholders if isinstance(each, torch.SymInt)],
            "tensors_real": all(type(each) in (torch.Tensor, torch.nn.Parameter)
                                for each in example_inputs if isinstance(each, torch.Tensor)),
            "context_mode_is_the_graphs": context is not None and context.fake_mode is fake_mode,
        })
        return gm.forward

    if compile_fn is torch.compile:
        torch._dynamo.reset()
    else:
        minidynamo.reset()
    compiled = compile_fn(scale, backend=backend, **options)
    for x, n in calls:
        torch.testing.assert_close(compiled(x, n), scale(x, n))
    return seen


@pytest.mark.task("ch10.4")
@pytest.mark.parametrize("dynamic", [None, True, False], ids=["automatic", "dynamic", "static"])
def test_example_inputs_and_context_are_torch_compiles(dynamic):
    expected = received(torch.compile, CALLS, dynamic=dynamic)
    assert received(minidynamo.compile, CALLS, dynamic=dynamic) == expected


@pytest.mark.task("ch10.4")
def test_a_module_hands_over_its_parameters_as_they_are():
    layer = torch.nn.Linear(3, 2)
    seen = []

    def backend(gm, example_inputs):
        seen.append(example_inputs)
        return gm.forward

    minidynamo.compile(layer, backend=backend)(torch.ones(4, 3))
    [inputs] = seen
    assert any(each is layer.weight for each in inputs) and any(each is layer.bias for each in inputs)


@pytest.mark.task("ch10.4")
def test_aot_autograd_keeps_a_dynamic_size_symbolic():
    """With the frame's fake mode in the TracingContext, AOTAutograd re-traces with its
    symbols; with a fake mode of its own it would see the first call's sizes."""
    sizes = []

    def record_sizes(gm, example_inputs):
        sizes.append([tuple(each.shape) for each in example_inputs if isinstance(each, torch.Tensor)])
        return gm.forward

    compiled = minidynamo.compile(scale, backend=aot_autograd(fw_compiler=record_sizes), dynamic=True)
    for x, n in CALLS:
        torch.testing.assert_close(compiled(x, n), scale(x, n))
    assert len(sizes) == 1
    [[shape]] = sizes
    assert isinstance(shape[0], torch.SymInt) and shape[1] == 3


def transposed_through_an_alias(x):
    v = x.contiguous()  # `x` itself: the trace transposes the FakeTensor of the input
    v.t_()
    return x.sum()


@pytest.mark.task("ch10.4")
def test_aot_autograd_starts_from_the_inputs_as_they_are_at_the_call():
    x = torch.arange(6.0).view(2, 3).clone()
    minidynamo.reset()
    compiled = minidynamo.compile(transposed_through_an_alias, backend="aot_eager")
    assert compiled(x) == 15
    assert x.shape == (3, 2) and x.stride() == (1, 3)  # eager's: the input transposed


@pytest.mark.task("ch10.4")
@pytest.mark.parametrize("returned", [3, None, "forward"], ids=["int", "None", "str"])
def test_a_backend_must_return_a_callable(returned):
    def wrong(gm, example_inputs):
        return returned

    with pytest.raises(minidynamo.BackendCompilerFailed) as raised:
        minidynamo.compile(scale, backend=wrong)(torch.ones(2), 2)
    error = raised.value
    assert isinstance(error.inner_exception, TypeError) and error.frame_name == "scale"
    assert str(error).startswith(f"backend='wrong' raised:\nTypeError: the backend returned "
                                 f"{type(returned).__name__}, not a callable")
    assert str(error).endswith("while compiling the graph captured from scale")


@pytest.mark.task("ch10.4")
def test_what_the_backend_returns_is_what_runs():
    ran = []

    def backend(gm, example_inputs):
        def run(*args):
            ran.append(len(args))
            return gm.forward(*args)

        return run

    compiled = minidynamo.compile(scale, backend=backend)
    for x in (torch.ones(2, 3), torch.zeros(2, 3)):  # a trace, then a cache hit
        torch.testing.assert_close(compiled(x, 2), scale(x, 2))
    assert ran == [1, 1]  # the graph's one input, x
