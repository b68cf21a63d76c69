"""Graded tests for count_ops (ch10.1): the operators of a graph, counted by name.

`OpCounter` calls your `count_ops` on every graph it receives. The counts are checked
against the graph torch.compile hands the same backend, counted here node by node: a
`call_function` by its target's public name, a `call_method` by the method, a
`call_module` by the module's class; the names in the order of their first call.
"""

from __future__ import annotations

import collections
import operator

import pytest
import torch
from torch._functorch.aot_autograd import aot_module_simplified

import minidynamo
from minidynamo.backends import OpCounter, count_ops

from .programs import PROGRAMS, graphs_received, inputs_of


def name_of(node, gm):
    """The expected name of one operator node (independent of your code)."""
    if node.op == "call_method":
        return node.target
    if node.op == "call_module":
        return type(gm.get_submodule(node.target)).__name__
    if isinstance(node.target, torch._ops.OpOverload):
        return f"aten.{node.target._opname}.{node.target._overloadname}"
    qualified = torch.fx.node._get_qualified_name(node.target)
    for private, public in (("_operator.", "operator."), ("torch._C._nn.", "torch.nn.functional.")):
        qualified = qualified.replace(private, public)
    return qualified


def expected_counts(gm):
    counts = collections.Counter()
    for node in gm.graph.nodes:
        if node.op in ("call_function", "call_method", "call_module"):
            counts[name_of(node, gm)] += 1
    return counts


def keeping_graphs(received):
    def backend(gm, example_inputs):
        received.append(gm)
        return gm.forward

    return backend


@pytest.mark.task("ch10.1")
@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda fn: fn.__name__)
def test_counts_equal_the_graph_torch_compile_hands_over(fn):
    _, [torch_graph] = graphs_received(torch.compile, fn, inputs_of(fn), keeping_graphs)
    counter = OpCounter()
    minidynamo.reset()
    minidynamo.compile(fn, backend=counter)(*inputs_of(fn))
    [counts] = counter.graphs
    expected = expected_counts(torch_graph)
    assert counts == expected
    assert list(counts) == list(expected)  # first use first


@pytest.mark.task("ch10.1")
def test_repeated_calls_are_counted_and_placeholders_are_not():
    def repeated(x):
        return torch.sin(torch.sin(x)) + torch.sin(x) + x.sum() + x.sum()

    counter = OpCounter()
    minidynamo.compile(repeated, backend=counter)(torch.ones(3))
    [counts] = counter.graphs
    assert counts["torch.sin"] == 3 and counts["sum"] == 2
    assert counts["operator.add"] == 3
    assert sum(counts.values()) == 8  # no placeholder, no output


@pytest.mark.task("ch10.1")
def test_a_symbolically_traced_module_counts_its_submodules_by_class():
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2),
                                torch.nn.ReLU())
    gm = torch.fx.symbolic_trace(model)
    counts = count_ops(gm)
    assert counts == expected_counts(gm)
    assert list(counts.items()) == [("Linear", 2), ("ReLU", 2)]


@pytest.mark.task("ch10.1")
def test_aten_graphs_are_counted_by_overload():
    counter = OpCounter()

    def through_aot(gm, example_inputs):
        return aot_module_simplified(gm, example_inputs, fw_compiler=counter)

    fn = PROGRAMS[0]
    minidynamo.compile(fn, backend=through_aot)(*inputs_of(fn))
    [counts] = counter.graphs
    assert all(name.startswith("aten.") and name.count(".") == 2 for name in counts)
    assert counts["aten.gelu.default"] == 1 and counts["aten.mm.default"] == 2


@pytest.mark.task("ch10.1")
def test_get_attr_and_output_are_not_operators():
    class WithConstant(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("scale", torch.tensor(2.0))

        def forward(self, x):
            return operator.mul(x, self.scale)

    gm = torch.fx.symbolic_trace(WithConstant())
    assert [node.op for node in gm.graph.nodes] == ["placeholder", "get_attr", "call_function", "output"]
    assert count_ops(gm) == collections.Counter({"operator.mul": 1})


@pytest.mark.task("ch10.1")
def test_the_verbose_counter_prints_each_graph(capsys):
    counter = OpCounter(verbose=True)

    def two(x):
        return torch.cos(x) * torch.cos(x)

    minidynamo.compile(two, backend=counter)(torch.ones(2))
    assert capsys.readouterr().out == "graph 1: torch.cos x2, operator.mul x1\n"
