"""Graded tests for chapter 4, the VariableBuilder (ch04.3, ch04.4).

Every input kind goes through `VariableBuilder.__call__` (the same object first, then
the rules table); the items of input containers through `VariableBuilder.child`. Each
test runs the whole pipeline and compares it with torch.compile (graphs, placeholders)
and eager PyTorch (values, the inputs after the call).
"""

from __future__ import annotations

import pytest
import torch

import minidynamo
from minidynamo.testing import assert_same_as_torch, placeholder_names

from . import programs, samples


# -- ch04.3: VariableBuilder.__call__ ------------------------------------------------------

@pytest.mark.task("ch04.3")
def test_every_kind_of_input_is_wrapped():
    assert_same_as_torch(programs.many_kinds, torch.randn(3), 2, 0.5, "double", True,
                         [torch.randn(3)], torch.relu, torch.nn.Tanh())


@pytest.mark.task("ch04.3")
def test_one_tensor_passed_twice_is_one_graph_input():
    x = torch.randn(3)
    comparison = assert_same_as_torch(programs.same_tensor_twice, x, x)
    assert len(placeholder_names(comparison.minidynamo.graphs[0])) == 1


@pytest.mark.task("ch04.3")
def test_one_list_passed_twice_is_one_list():
    xs = [torch.randn(2)]
    assert_same_as_torch(programs.alias_list, xs, xs)  # the append is seen through ys
    item = torch.randn(2)
    eager_list = [item]
    expected = programs.alias_list(eager_list, eager_list)
    compiled_list = [item]
    result = minidynamo.compile(programs.alias_list)(compiled_list, compiled_list)
    assert result == expected and len(compiled_list) == len(eager_list)


@pytest.mark.task("ch04.3")
def test_modules_objects_and_globals_are_wrapped():
    torch.manual_seed(0)
    assert_same_as_torch(programs.Block(), torch.randn(2, 4))
    assert_same_as_torch(programs.add_attributes, torch.randn(4), programs.Config())
    assert_same_as_torch(programs.read_global, torch.randn(4))


# -- ch04.4: VariableBuilder.child ---------------------------------------------------------

@pytest.mark.task("ch04.4")
def test_only_the_items_used_become_graph_inputs():
    xs = [torch.randn(2) for _ in range(3)]
    ys = (torch.randn(2), torch.randn(2))
    comparison = assert_same_as_torch(programs.second_item_only, xs, ys)
    assert len(placeholder_names(comparison.minidynamo.graphs[0])) == 2


@pytest.mark.task("ch04.4")
def test_items_of_dicts_and_nested_containers():
    assert_same_as_torch(programs.dict_items,
                         {"a": torch.randn(3), "b": torch.randn(3), "unused": torch.randn(3)})
    nested = {"pairs": [(torch.randn(2), torch.randn(2)), (torch.randn(2), torch.randn(2))],
              "scale": 3}
    assert_same_as_torch(programs.nested_items, nested)


@pytest.mark.task("ch04.4")
def test_namedtuple_fields_and_list_items():
    assert_same_as_torch(programs.pair_fields, programs.Pair(torch.randn(2), torch.randn(2)))
    assert_same_as_torch(programs.sum_items, [torch.randn(3), torch.randn(3)])


@pytest.mark.task("ch04.4")
def test_torch_module_call_reads_its_argument_tuple():
    torch.manual_seed(0)
    assert_same_as_torch(torch.nn.Linear(4, 2), torch.randn(3, 4))  # L['args'][0]


@pytest.mark.task("ch04.4")
def test_items_of_a_container_with_no_source_are_built_at_once():
    """`super().blocks` has no source: a lazy item would have nothing to reload from
    when the tuple is rebuilt after the graph, so its items are built when it is."""
    assert_same_as_torch(samples.class_table, torch.randn(3), samples.Grid())
