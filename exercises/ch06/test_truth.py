"""Graded tests for the truth of a condition: truth_value (ch06.1), condition_value (ch06.2).

A condition minidynamo can answer while tracing (a constant, a container's length, a
user object's traced __bool__ / __len__) chooses its branch: one graph, no break, the
same graph as torch.compile's and the same value as eager. A condition that needs a
tensor's data cannot be answered and makes the same graph break torch.compile makes.
"""

from __future__ import annotations

import pytest
import torch

from minidynamo.testing import assert_same_as_torch

from . import programs
from .programs import explain_both


def x3():
    return torch.randn(3)


# -- ch06.1: truth_value -------------------------------------------------------------------


@pytest.mark.task("ch06.1")
@pytest.mark.parametrize("fn, args", [
    (programs.sign_of_int, (5,)),
    (programs.sign_of_int, (-2,)),
    (programs.flag_and_name, (True, "relu")),
    (programs.flag_and_name, (False, "relu")),
    (programs.none_or_scale, (None,)),
    (programs.none_or_scale, (0.0,)),
    (programs.none_or_scale, (2.5,)),
    (programs.or_default, (0,)),
    (programs.or_default, (4,)),
], ids=lambda value: getattr(value, "__name__", repr(value)))
def test_a_constant_condition_chooses_its_branch(fn, args):
    assert_same_as_torch(fn, x3(), *args, fullgraph=True)


@pytest.mark.task("ch06.1")
@pytest.mark.parametrize("fn, args", [
    (programs.list_truth, ([],)),
    (programs.list_truth, ([7, 8],)),
    (programs.dict_and_tuple_truth, ({}, ())),
    (programs.dict_and_tuple_truth, ({"scale": 3.0}, (3, 1))),
    (programs.pop_until_empty, ([1.0, 2.0, 3.0],)),
], ids=lambda value: getattr(value, "__name__", repr(value)))
def test_a_container_answers_with_its_length(fn, args):
    assert_same_as_torch(fn, x3(), *args, fullgraph=True)


def containers_of_tensors(x, xs, d):
    if xs:                  # a list of tensors is no constant: its length answers
        x = x + len(xs)
    if d:
        x = x * 2
    else:
        x = x - 1
    return x


def function_truth(x, fn):
    if fn:                  # a function is true, like any plain object
        return fn(x)
    return x


@pytest.mark.task("ch06.1")
@pytest.mark.parametrize("fn, args", [
    (containers_of_tensors, lambda x: ([x, x], {})),
    (containers_of_tensors, lambda x: ([], {"a": x})),
    (function_truth, lambda x: (torch.relu,)),
], ids=["full_list_empty_dict", "empty_list_full_dict", "function"])
def test_truth_of_values_that_are_not_constants(fn, args):
    x = x3()
    assert_same_as_torch(fn, x, *args(x), fullgraph=True)


@pytest.mark.task("ch06.1")
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_bool_of_a_tensor_breaks_like_torch(sign):
    x = sign * torch.ones(3)
    comparison = assert_same_as_torch(programs.bool_of_tensor, x)
    assert comparison.minidynamo.graph_count == comparison.torch.graph_count == 2
    ours, theirs = explain_both(programs.bool_of_tensor, x)
    assert ours.graph_break_count == theirs.graph_break_count
    assert [reason.kind.title for reason in ours.compiled_break_reasons] == ["data-dependent branch"]


# -- ch06.2: condition_value ---------------------------------------------------------------


@pytest.mark.task("ch06.2")
@pytest.mark.parametrize("obj", [
    programs.Switch(True), programs.Switch(False),
    programs.Bag([]), programs.Bag([1, 2, 3]),
    programs.Plain(),
], ids=lambda obj: f"{type(obj).__name__}-{vars(obj)}")
def test_a_user_objects_truth_is_traced(obj):
    assert_same_as_torch(programs.branch_on_object, x3(), obj, fullgraph=True)


@pytest.mark.task("ch06.2")
@pytest.mark.parametrize("layers, norm", [(0, False), (2, False), (1, True)])
def test_module_containers_answer_with_their_length(layers, norm):
    torch.manual_seed(0)
    assert_same_as_torch(programs.Stack(layers, norm), x3(), fullgraph=True)


@pytest.mark.task("ch06.2")
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_a_bool_that_needs_tensor_data_is_not_decided(sign):
    obj = programs.TensorSwitch(sign * torch.ones(3))
    comparison = assert_same_as_torch(programs.branch_on_object, x3(), obj)
    ours, theirs = explain_both(programs.branch_on_object, x3(), obj)
    assert (ours.graph_count, ours.graph_break_count) == (theirs.graph_count, theirs.graph_break_count)
    assert comparison.minidynamo.graph_breaks, "the __bool__ must have been traced, and broken"
