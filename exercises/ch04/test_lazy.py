"""Graded tests for chapter 4, lazy inputs and graph inputs (ch04.5, ch04.6).

An input is realized on first use (ch04.5), so unused inputs never become graph inputs
and graph inputs come in the order of first use; a realized tensor becomes a
placeholder named after its source, with a FakeTensor example value (ch04.6). Compared
with torch.compile's graphs and its `trace_bytecode` log, computed in the same test.
"""

from __future__ import annotations

import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensor

import minidynamo
from minidynamo.testing import (
    RecordingBackend,
    assert_same_as_torch,
    minidynamo_trace_log,
    placeholder_names,
    torch_trace_log,
)

from . import programs, samples


def stacks(lines):
    """The (opcode, stack) of each traced instruction of the root frame."""
    return [(line.opname, line.text) for line in lines if line.depth == 0]


# -- ch04.5: LazyVariableTracker.realize ---------------------------------------------------

@pytest.mark.task("ch04.5")
def test_unused_arguments_never_become_graph_inputs():
    args = (torch.randn(2), torch.randn(2), [torch.randn(2)], torch.randn(2))
    comparison = assert_same_as_torch(programs.unused_arguments, *args)
    assert len(comparison.minidynamo.example_inputs[0]) == 2


@pytest.mark.task("ch04.5")
@pytest.mark.parametrize("fn", [programs.first_use_order, programs.late_input],
                         ids=lambda fn: fn.__name__)
def test_graph_inputs_come_in_order_of_first_use(fn):
    assert_same_as_torch(fn, torch.randn(3), torch.randn(3), torch.randn(3))


@pytest.mark.task("ch04.5")
@pytest.mark.parametrize("fn, make_args", [
    (programs.unused_arguments, lambda: (torch.ones(2), torch.ones(2), [torch.ones(2)], torch.ones(2))),
    (programs.read_global, lambda: (torch.ones(4),)),
    (programs.add_attributes, lambda: (torch.ones(4), programs.Config())),
], ids=["unused_arguments", "read_global", "add_attributes"])
def test_trace_shows_lazy_trackers_until_first_use(fn, make_args):
    theirs = stacks(torch_trace_log(fn, *make_args()))
    ours = stacks(minidynamo_trace_log(fn, *make_args()))
    assert ours == theirs
    assert any("LazyVariableTracker" in text for _, text in ours)


@pytest.mark.task("ch04.5")
def test_module_state_is_realized_when_read():
    torch.manual_seed(0)
    assert_same_as_torch(programs.Stack(), torch.randn(2, 4))


# -- ch04.6: OutputGraph.add_graph_input -----------------------------------------------------

@pytest.mark.task("ch04.6")
def test_placeholders_match_torch_compile_with_fake_example_values():
    comparison = assert_same_as_torch(programs.shapes_and_dtypes, torch.randn(2, 3),
                                      torch.randn(3, 5).t().contiguous().t(), torch.arange(4))
    ours, theirs = comparison.minidynamo.graphs[0], comparison.torch.graphs[0]
    for mine, real in zip(ours.graph.find_nodes(op="placeholder"),
                          theirs.graph.find_nodes(op="placeholder"), strict=True):
        example, expected = mine.meta["example_value"], real.meta["example_value"]
        assert isinstance(example, FakeTensor)
        assert (example.shape, example.stride(), example.dtype, example.device) == \
               (expected.shape, expected.stride(), expected.dtype, expected.device)


@pytest.mark.task("ch04.6")
def test_example_inputs_are_the_real_tensors_in_placeholder_order():
    a, b, c = torch.randn(3), torch.randn(3), torch.randn(3)
    backend = RecordingBackend()
    result = minidynamo.compile(programs.first_use_order, backend=backend)(a, b, c)
    torch.testing.assert_close(result, programs.first_use_order(a, b, c))
    (gm,), (inputs,) = backend.graphs, backend.example_inputs
    by_name = {"L_a_": a, "L_b_": b, "L_c_": c}
    assert len(inputs) == len(placeholder_names(gm)) == 2
    assert all(inputs[i] is by_name[name] for i, name in enumerate(placeholder_names(gm)))


@pytest.mark.task("ch04.6")
def test_an_input_first_used_late_is_placed_with_the_other_placeholders():
    assert_same_as_torch(programs.late_input, torch.randn(3), torch.randn(3), torch.randn(3))
    torch.manual_seed(0)
    assert_same_as_torch(programs.Block(), torch.randn(2, 4))  # the buffer is read last


@pytest.mark.task("ch04.6")
def test_globals_and_parameters_become_graph_inputs():
    assert_same_as_torch(programs.read_global, torch.randn(4))
    torch.manual_seed(0)
    assert_same_as_torch(torch.nn.Linear(4, 2), torch.randn(3, 4))


@pytest.mark.task("ch04.6")
def test_a_parameter_input_keeps_its_class():
    """`isinstance(w, nn.Parameter)` is answered from the tracker: it must know the class,
    and so must the placeholder, whose class the results of a tensor subclass take."""
    assert_same_as_torch(samples.scale_parameters, torch.randn(3),
                         torch.nn.Parameter(torch.randn(3)))
    assert_same_as_torch(samples.Gate(), torch.randn(3))

    x = torch.randn(3).as_subclass(samples.Tagged)  # (torch.compile records x.mul(2) here)
    got = minidynamo.compile(samples.tagged_results, backend="eager")(x)
    assert type(got) is samples.Tagged and torch.equal(got, samples.tagged_results(x))


@pytest.mark.task("ch04.6")
def test_an_input_returned_unchanged_is_reloaded_from_its_source():
    """`return x, x + y`: x is reloaded after the graph, not made a graph output."""
    x, y = torch.randn(3), torch.randn(3)
    comparison = assert_same_as_torch(samples.input_and_sum, x, y)
    (gm,) = comparison.minidynamo.graphs
    assert len(gm.graph.output_node().args[0]) == 1    # only x + y leaves the graph
    result = minidynamo.compile(samples.input_and_sum)(x, y)
    assert result[0] is x
