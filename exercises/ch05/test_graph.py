"""Graded tests for chapter 5, the FX graph (ch05.1, ch05.2, ch05.3).

The OutputGraph runs each operation on FakeTensors (ch05.1), records it as a node with
its example value (ch05.2), and at the end of the frame compiles the graph with the
backend and emits the bytecode that calls it (ch05.3). Each test compares the graphs
with torch.compile's and the values with eager PyTorch, computed in the same test.
"""

from __future__ import annotations

import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensor

import minidynamo
from minidynamo.testing import (
    RecordingBackend,
    assert_same_as_torch,
    compare_with_torch,
    placeholder_names,
)

from . import programs


def call_nodes(gm):
    return [node for node in gm.graph.nodes if node.op.startswith("call_")]


def metadata(value):
    """What a FakeTensor example value tells: shape, stride, dtype, device (per item)."""
    if isinstance(value, (tuple, list)):
        return tuple(metadata(item) for item in value)
    if isinstance(value, torch.Tensor):
        return (tuple(value.shape), value.stride(), value.dtype, value.device.type)
    return value


def assert_same_example_values(comparison):
    for ours, theirs in zip(comparison.minidynamo.graphs, comparison.torch.graphs, strict=True):
        for mine, real in zip(call_nodes(ours), call_nodes(theirs), strict=True):
            example = mine.meta["example_value"]
            assert metadata(example) == metadata(real.meta["example_value"]), mine.format_node()


# -- ch05.1: OutputGraph.run_on_fakes ------------------------------------------------------


def data_dependent(x):
    y = x * 2
    n = torch.nonzero(y)          # its shape depends on the data: no FakeTensor answer
    return n.sum() + 1


@pytest.mark.task("ch05.1")
def test_a_data_dependent_op_breaks_the_graph_like_torch():
    """FakeTensors cannot say how many rows nonzero() has: a graph break where torch.compile
    breaks too (two graphs), naming the op, not an exception out of the compiler."""
    x = torch.randn(4, 4)
    comparison = compare_with_torch(data_dependent, x)
    assert comparison.ok, comparison.report()
    assert any("nonzero" in message and "data" in message
               for message in comparison.minidynamo.graph_breaks)

@pytest.mark.task("ch05.1")
def test_shapes_and_dtypes_are_propagated():
    comparison = assert_same_as_torch(programs.shapes, torch.randn(2, 3), torch.randn(3, 4))
    assert_same_example_values(comparison)


@pytest.mark.task("ch05.1")
def test_operations_with_several_results():
    comparison = assert_same_as_torch(programs.multiple_results, torch.randn(3, 5))
    assert_same_example_values(comparison)


@pytest.mark.task("ch05.1")
def test_functions_and_methods_run_on_fakes_without_data():
    x = torch.randn(2, 3)
    comparison = assert_same_as_torch(programs.methods_and_functions, x, torch.randn(2, 3))
    assert_same_example_values(comparison)
    for node in call_nodes(comparison.minidynamo.graphs[0]):
        assert isinstance(node.meta["example_value"], FakeTensor)


@pytest.mark.task("ch05.1")
def test_metadata_is_known_while_tracing():
    assert_same_as_torch(programs.metadata_only, torch.randn(3, 2))


# -- ch05.2: OutputGraph.create_node -------------------------------------------------------

@pytest.mark.task("ch05.2")
@pytest.mark.parametrize("fn, shapes", [
    (programs.chain, [(3,)]),
    (programs.in_place, [(4,)]),
    (programs.methods_and_functions, [(2, 3), (2, 3)]),
], ids=lambda value: getattr(value, "__name__", ""))
def test_nodes_match_torch_compile(fn, shapes):
    comparison = assert_same_as_torch(fn, *[torch.randn(shape) for shape in shapes])
    assert_same_example_values(comparison)


@pytest.mark.task("ch05.2")
def test_nodes_carry_their_user_stack():
    comparison = assert_same_as_torch(programs.chain, torch.randn(3))
    for node in call_nodes(comparison.minidynamo.graphs[0]):
        assert programs.__file__ in node.meta["stack_trace"], node.format_node()


@pytest.mark.task("ch05.2")
def test_a_value_without_tensors_is_a_constant_not_a_node():
    comparison = assert_same_as_torch(programs.metadata_only, torch.randn(3, 2))
    assert comparison.minidynamo.graph_count == comparison.torch.graph_count
    comparison = assert_same_as_torch(programs.methods_and_functions, torch.randn(2, 3),
                                      torch.randn(2, 3))  # x.dim() is folded into the graph
    assert len(call_nodes(comparison.minidynamo.graphs[0])) == \
        len(call_nodes(comparison.torch.graphs[0]))


# -- ch05.3: OutputGraph.call_graph --------------------------------------------------------

@pytest.mark.task("ch05.3")
def test_the_backend_gets_the_graph_and_the_real_inputs():
    x, w = torch.randn(2, 3), torch.randn(3, 4)
    backend = RecordingBackend()
    result = minidynamo.compile(programs.shapes, backend=backend)(x, w)
    expected = programs.shapes(x, w)
    torch.testing.assert_close(result, expected)
    (gm,), (inputs,) = backend.graphs, backend.example_inputs
    assert isinstance(gm, torch.fx.GraphModule)
    assert len(inputs) == 2 and inputs[0] is x and inputs[1] is w
    assert len(placeholder_names(gm)) == len(inputs)


@pytest.mark.task("ch05.3")
def test_the_compiled_callable_is_what_runs():
    calls = []

    def backend(gm, example_inputs):
        def run(*args):
            calls.append(len(args))
            return [-value for value in gm(*args)]  # visibly not the graph's own result
        return run

    x = torch.randn(3)
    result = minidynamo.compile(programs.chain, backend=backend)(x)
    torch.testing.assert_close(result, -programs.chain(x))
    assert calls == [1]


@pytest.mark.task("ch05.3")
def test_unused_inputs_and_empty_graphs_as_in_torch_compile():
    assert_same_as_torch(programs.unused_input, torch.randn(3), torch.randn(2))
    assert_same_as_torch(programs.no_tensor_work, torch.randn(3), 4)
    assert_same_as_torch(programs.multiple_results, torch.randn(3, 5))


@pytest.mark.task("ch05.3")
def test_a_real_backend_compiles_the_graph():
    assert_same_as_torch(programs.chain, torch.randn(3), backend="aot_eager")
