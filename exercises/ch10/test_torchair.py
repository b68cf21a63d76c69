"""Graded tests for torchair_problems (ch10.5): the NPU hand-off, checked on the CPU.

`FakeNpuBackend` gives AOTAutograd's graphs to your `torchair_problems` before it
records them: an empty list means torchair's converter would take the graph. It must
name every node that is not an ATen operator (or a helper on sizes), every input that
is neither a tensor nor a number, inputs on several devices, and, in "reduce-overhead"
mode (an ACL graph, replayed for fixed shapes), every symbolic input.
"""

from __future__ import annotations

import pytest
import torch
from torch._functorch.aot_autograd import aot_module_simplified

import minidynamo
from minidynamo.backends import FakeNpuBackend, torchair_problems

from .programs import PROGRAMS, inputs_of


def aten_graphs(fn, args, dynamic=None):
    """The ATen graphs (and their example inputs) AOTAutograd makes of `fn`."""
    graphs = []

    def backend(gm, example_inputs):
        def keep(graph, inputs):
            graphs.append((graph, list(inputs)))
            return graph.forward

        return aot_module_simplified(gm, example_inputs, fw_compiler=keep)

    minidynamo.reset()
    minidynamo.compile(fn, backend=backend, dynamic=dynamic)(*args)
    return graphs


def dynamo_graph(fn, args):
    graphs = []
    minidynamo.reset()
    minidynamo.compile(fn, backend=lambda gm, inputs: graphs.append((gm, list(inputs))) or gm.forward)(*args)
    return graphs[0]


@pytest.mark.task("ch10.5")
@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda fn: fn.__name__)
@pytest.mark.parametrize("mode", ["max-autotune", "reduce-overhead"])
def test_static_aten_graphs_are_accepted(fn, mode):
    [(graph, inputs)] = aten_graphs(fn, inputs_of(fn))
    assert torchair_problems(graph, inputs, mode) == []


@pytest.mark.task("ch10.5")
@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda fn: fn.__name__)
def test_dynamo_graphs_are_refused_node_by_node(fn):
    gm, inputs = dynamo_graph(fn, inputs_of(fn))
    problems = torchair_problems(gm, inputs, "max-autotune")
    operators = [node for node in gm.graph.nodes if node.op in ("call_function", "call_method")]
    assert len(problems) == len(operators) >= 2
    for node, problem in zip(operators, problems):
        assert problem.startswith(f"node {node.name}: ")


@pytest.mark.task("ch10.5")
def test_size_helpers_and_getitem_are_accepted():
    def with_sizes(x):
        values, indices = x.max(dim=-1)
        return values * x.shape[0] + indices.float().sum() * (x.shape[0] // 2)

    [(graph, inputs)] = aten_graphs(with_sizes, (torch.randn(4, 3),), dynamic=True)
    targets = {node.target for node in graph.graph.nodes if node.op == "call_function"}
    assert any(not isinstance(target, torch._ops.OpOverload) for target in targets)
    assert torchair_problems(graph, inputs, "max-autotune") == []


@pytest.mark.task("ch10.5")
def test_reduce_overhead_names_each_symbolic_input():
    fn = PROGRAMS[0]
    [(graph, inputs)] = aten_graphs(fn, inputs_of(fn), dynamic=True)
    symbolic = [index for index, each in enumerate(inputs) if isinstance(each, torch.SymInt) or (
        isinstance(each, torch.Tensor) and any(isinstance(size, torch.SymInt) for size in each.shape))]
    assert symbolic
    assert torchair_problems(graph, inputs, "max-autotune") == []
    problems = torchair_problems(graph, inputs, "reduce-overhead")
    assert len(problems) == len(symbolic)
    for index, problem in zip(symbolic, problems):
        assert problem.startswith(f"input {index}: ") and "ACL graph" in problem


@pytest.mark.task("ch10.5")
def test_inputs_on_two_devices_are_refused_once():
    fn = PROGRAMS[1]
    [(graph, inputs)] = aten_graphs(fn, inputs_of(fn))
    assert torchair_problems(graph, inputs, "max-autotune") == []
    moved = [inputs[0], torch.empty(inputs[1].shape, device="meta")]
    problems = torchair_problems(graph, moved, "max-autotune")
    assert len(problems) == 1 and problems[0].startswith("inputs on several devices")
    assert "cpu" in problems[0] and "meta" in problems[0]


@pytest.mark.task("ch10.5")
def test_numbers_are_inputs_other_values_are_not():
    fn = PROGRAMS[1]
    [(graph, inputs)] = aten_graphs(fn, inputs_of(fn))
    assert torchair_problems(graph, [*inputs, 3, 2.5, True], "reduce-overhead") == []
    problems = torchair_problems(graph, [*inputs, "text", None], "max-autotune")
    assert [problem.split(":")[0] for problem in problems] == ["input 2", "input 3"]
    assert all("not a tensor or a number" in problem for problem in problems)


@pytest.mark.task("ch10.5")
def test_each_input_is_judged_on_its_own():
    """A number after a symbolic input is not symbolic; a value that is not a tensor or
    a number is one problem, whatever came before it and in every mode."""
    fn = PROGRAMS[0]
    [(graph, inputs)] = aten_graphs(fn, inputs_of(fn), dynamic=True)
    symbolic = next(index for index, each in enumerate(inputs) if isinstance(each, torch.SymInt) or (
        isinstance(each, torch.Tensor) and any(isinstance(size, torch.SymInt) for size in each.shape)))
    before = torchair_problems(graph, inputs[:symbolic + 1], "reduce-overhead")
    assert torchair_problems(graph, [*inputs[:symbolic + 1], 7, 1.5], "reduce-overhead") == before
    assert torchair_problems(graph, [2, *inputs[:symbolic + 1]], "reduce-overhead") == [
        problem.replace(f"input {symbolic}:", f"input {symbolic + 1}:") for problem in before]
    for mode in ("max-autotune", "reduce-overhead"):
        assert len(torchair_problems(graph, ["text"], mode)) == 1
        after = torchair_problems(graph, [*inputs[:symbolic + 1], object()], mode)
        assert len(after) == len(torchair_problems(graph, inputs[:symbolic + 1], mode)) + 1


@pytest.mark.task("ch10.5")
def test_the_fake_npu_backend_refuses_what_torchair_would():
    fn = PROGRAMS[0]
    minidynamo.reset()
    npu = FakeNpuBackend(mode="reduce-overhead")
    with pytest.raises(minidynamo.BackendCompilerFailed, match="torchair would reject"):
        minidynamo.compile(fn, backend=npu, dynamic=True)(*inputs_of(fn))
    minidynamo.reset()
    npu = FakeNpuBackend()
    result = minidynamo.compile(fn, backend=npu, dynamic=True)(*inputs_of(fn))
    torch.testing.assert_close(result, fn(*inputs_of(fn)))
    assert [handoff.kind for handoff in npu.handoffs] == ["inference"]
