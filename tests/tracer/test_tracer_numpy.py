"""numpy traced as torch._numpy (chapter 3, `minidynamo/variables/numpy.py`).

Each test compares with the real thing in the same run: torch.compile for the graphs
(targets are torch's own `torch._dynamo.utils` wrappers, node for node), make_fx for
the ATen ops those graphs become, eager numpy and torch for the values; a program that
torch.compile splits at a break is split by minidynamo at the same place.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch.fx.experimental.proxy_tensor import make_fx
from tracer_helpers import run_minidynamo, run_torch

from minidynamo.testing import assert_same_as_torch, compare_calls_with_torch, compare_with_torch
from minidynamo.variables.numpy import is_numpy_callable, torch_numpy_twins


def x34() -> torch.Tensor:
    return torch.linspace(-2, 2, 12).reshape(3, 4)


def ufunc_and_operator(x):
    return torch.from_numpy(np.tanh(x.numpy()) * 2)


def method_with_keywords(x):
    array = x.numpy()
    return torch.as_tensor(array.mean(axis=0) + np.max(array, axis=1).sum())


def attributes_and_metadata(x):
    array = x.numpy()
    return torch.from_numpy(array.T.reshape(array.shape[1], -1) + array.ndim + array.size)


def comparison_where_and_clip(x):
    array = x.numpy()
    return torch.from_numpy(np.clip(np.where(array > 0, array, 0.1 * array), a_min=-0.5, a_max=1))


def tensor_operand_wins(x):
    return x * x.numpy() + x.numpy()[0]


def dtype_as_an_argument(x):
    return x + torch.from_numpy(np.zeros((3, 4), dtype=np.float32) + np.arange(4).astype(np.float32))


def ndarray_write(x):
    array = x.numpy().copy()
    array[0] = 0.0
    array += 1
    return torch.from_numpy(array)


def returns_an_ndarray(x):
    return np.exp(x.numpy()) - 1


def numpy_of_a_graph_input(table, x):
    return x + torch.from_numpy(table * 2)


PROGRAMS = [ufunc_and_operator, method_with_keywords, attributes_and_metadata,
            comparison_where_and_clip, tensor_operand_wins, dtype_as_an_argument,
            ndarray_write, returns_an_ndarray]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda program: program.__name__)
def test_same_graph_as_torch(program):
    assert_same_as_torch(program, x34(), fullgraph=True)


def test_numpy_array_input_is_a_graph_input():
    table = np.arange(12, dtype=np.float32).reshape(3, 4)
    comparison = assert_same_as_torch(numpy_of_a_graph_input, table, x34(), fullgraph=True)
    assert comparison.minidynamo.graphs[0].graph.find_nodes(op="placeholder")[0].target == "L_table_"


def test_numpy_array_input_guards_recompile_as_torch():
    def table(rows, dtype=np.float32):
        return np.ones((rows, 4), dtype=dtype)

    calls = [(table(3), x34()), (table(3) * 2, x34()), (table(3, np.float64), x34()),
             (table(2), torch.ones(2, 4)), (table(5), torch.ones(5, 4))]
    comparison = compare_calls_with_torch(numpy_of_a_graph_input, calls)
    assert comparison.ok, comparison.report()


@pytest.mark.parametrize("program", [ufunc_and_operator, method_with_keywords,
                                     attributes_and_metadata, ndarray_write],
                         ids=lambda program: program.__name__)
def test_graph_is_the_same_aten_ops_under_make_fx(program):
    def aten_ops(recorder):
        gm, inputs = recorder.graphs[0], recorder.example_inputs[0]
        traced = make_fx(gm)(*inputs)
        return [str(node.target) for node in traced.graph.nodes if node.op == "call_function"]

    _, mini = run_minidynamo(program, x34())
    _, real = run_torch(program, x34())
    assert aten_ops(mini) == aten_ops(real)
    assert any(op.startswith("aten.") for op in aten_ops(mini))


def test_numpy_on_constants_is_folded_or_recorded_as_torch_does():
    def constants(x):  # np.pi: a float; np.finfo(...).eps: a float; np.sqrt(2.0): a node
        return x * np.pi / (np.finfo(np.float32).eps + np.sqrt(2.0))

    comparison = assert_same_as_torch(constants, x34(), fullgraph=True)
    targets = [str(node.target) for node in comparison.minidynamo.graphs[0].graph.nodes]
    assert "<Wrapped function <original sqrt>>" in targets
    assert not any("finfo" in target for target in targets)  # eps was read at trace time
    assert len(targets) == 6  # L_x_, mul, sqrt, the ndarray's add, truediv, output


@pytest.mark.parametrize("attribute", ["dtype", "flags"])
def test_untraced_ndarray_attribute_breaks_where_torch_does(attribute):
    def reads(x):
        array = x.numpy()
        doubled = array * 2
        value = getattr(array, attribute)
        return torch.from_numpy(doubled + 1), str(value)

    comparison = compare_with_torch(reads, x34())
    assert comparison.ok, comparison.report()
    assert comparison.minidynamo.graph_breaks


def test_unmodelled_method_breaks_and_resumes_with_an_ndarray_as_torch_does():
    def to_bytes(x):
        array = np.cos(x.numpy())
        raw = array.tobytes()
        return torch.from_numpy(array) * 2, len(raw)

    comparison = compare_with_torch(to_bytes, x34())
    assert comparison.ok, comparison.report()
    assert comparison.minidynamo.graph_count == 2


def test_numpy_function_without_torch_numpy_version_breaks_as_torch_does():
    def business_days(x):
        days = np.busday_count("2011-01", "2011-02")
        return x * days

    comparison = compare_with_torch(business_days, x34())
    assert comparison.ok, comparison.report()
    assert "no torch._numpy version" in comparison.minidynamo.graph_breaks[0]


def test_the_table_pairs_numpy_with_torch_numpy():
    import torch._numpy as tnp

    assert is_numpy_callable(np.tanh) and is_numpy_callable(np.linalg.norm)
    assert is_numpy_callable(np.float32) and not is_numpy_callable(torch.tanh)
    assert torch_numpy_twins()[id(np.tanh)][1] is tnp.tanh
    assert torch_numpy_twins()[id(np.linalg.norm)][1] is tnp.linalg.norm
