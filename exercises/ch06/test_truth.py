"""Graded tests for the truth of a condition: truth_value (ch06.1), condition_value (ch06.2).

A condition minidynamo can answer while tracing (a constant, a container's length, a
user object's traced __bool__ / __len__) chooses its branch: one graph, no break, the
same graph as torch.compile's and the same value as eager. A condition that needs a
tensor's data cannot be answered and makes the same graph break torch.compile makes.
"""

from __future__ import annotations

import collections
import inspect

import pytest
import torch

from minidynamo.exc import CATALOGUE, Unsupported
from minidynamo.output_graph import OutputGraph
from minidynamo.testing import assert_same_as_torch, compare_with_torch
from minidynamo.translator import InstructionTranslator
from minidynamo.variables import builtins

from . import programs, samples
from .programs import TORCH_GB_TYPES, explain_both


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


@pytest.mark.task("ch06.1")
@pytest.mark.parametrize("fn, args", [
    (samples.ordered_truth, (collections.OrderedDict(),)),
    (samples.ordered_truth, (collections.OrderedDict(scale=2.0),)),
    (samples.ordered_truth, (collections.defaultdict(list),)),
    (samples.ordered_truth, (collections.defaultdict(list, a=[1]),)),
    (samples.containers_built_here, ()),
    (samples.bool_of_input_list, ([],)),
    (samples.bool_of_input_list, ([torch.ones(2)],)),
    (samples.plain_objects_are_true, ([],)),
    (samples.plain_objects_are_true, ([1.0, -2.0],)),
], ids=lambda value: getattr(value, "__name__", type(value).__name__))
def test_truth_of_containers_and_objects_that_are_not_constants(fn, args):
    """An empty OrderedDict is false though it is no constant; an iterator, a generator
    or a function is true though it has no length; `bool(xs)` of an input list must
    look at the list, not at the lazy tracker that stands for it."""
    assert_same_as_torch(fn, x3(), *args, fullgraph=True)


@pytest.mark.task("ch06.1")
@pytest.mark.parametrize("fn, args", [
    (samples.bool_of_input_tensor, (torch.ones(1),)),
    (samples.bool_of_input_tensor, (torch.zeros(1),)),
    (samples.bool_of_input_item, ([torch.ones(1)],)),
], ids=["true", "false", "item"])
def test_bool_of_a_tensor_input_is_a_data_dependent_break(fn, args):
    """The input is still a lazy tracker when bool() asks: it is a tensor all the same."""
    assert_same_as_torch(fn, x3(), *args)
    ours, theirs = explain_both(fn, x3(), *args)
    assert (ours.graph_count, ours.graph_break_count) == (theirs.graph_count, theirs.graph_break_count)
    assert [reason.kind.title for reason in ours.compiled_break_reasons] == ["data-dependent branch"]


def line_of(fn, text: str) -> int:
    """The source line of `fn` that contains `text`."""
    lines, first = inspect.getsourcelines(fn)
    return first + next(number for number, line in enumerate(lines) if text in line)


@pytest.mark.task("ch06.1")
@pytest.mark.parametrize("obj", [
    programs.Switch(True), programs.Switch(False), programs.Bag([]), programs.Bag([1, 2]),
], ids=lambda obj: f"{type(obj).__name__}-{vars(obj)}")
def test_bool_of_a_user_object_is_never_guessed(obj):
    """`bool(obj)` reaches truth_value with the object itself (no jump traced its
    __bool__ first). torch.compile traces the method; chapter 6 may break instead, at
    the user's line, with a catalogued kind; either way the value is eager's."""
    comparison = compare_with_torch(samples.bool_of_object, x3(), obj)
    wrong = comparison.kinds() & {"output", "side effects", "error"}
    assert not wrong, comparison.report()
    ours, _ = explain_both(samples.bool_of_object, x3(), obj)
    if not ours.break_reasons:
        assert comparison.ok, comparison.report()
        return
    line = line_of(samples.bool_of_object, "truth = bool(obj)")
    assert [(reason.filename, reason.lineno) for reason in ours.break_reasons] == \
        [(samples.__file__, line)]
    assert all(reason.kind is CATALOGUE[reason.kind.title] for reason in ours.break_reasons)


# -- ch06.1, unit level: truth_value of a frame input ---------------------------------------


def as_frame_input(value):
    """A root translator for a frame called with `value`, and the frame's tracker of it
    (a lazy one, as the translator makes for every argument)."""

    def frame(value):
        return value

    output = OutputGraph(frame.__globals__, lambda gm, inputs: gm.forward)
    tx = InstructionTranslator(frame.__code__, {"value": value}, frame.__globals__, None, output)
    return tx, tx.symbolic_locals["value"]


@pytest.mark.task("ch06.1")
@pytest.mark.parametrize("value", [
    0, 3, "", "relu", None, 0.0, [], [1], [torch.ones(1)], (), {}, {"a": torch.ones(1)},
    collections.OrderedDict(), collections.OrderedDict(a=torch.ones(1)),
    collections.defaultdict(list), range(0), range(2), set(), {1},
    iter([]), programs.Plain(), torch.relu, programs.Switch,
], ids=lambda value: getattr(value, "__name__", None) or f"{type(value).__name__}-{bool(value)}")
def test_truth_value_of_a_frame_input_is_cpythons(value):
    """What bool() of the real object gives, and a real bool."""
    tx, tracker = as_frame_input(value)
    assert builtins.truth_value(tx, tracker) is bool(value)


@pytest.mark.task("ch06.1")
@pytest.mark.parametrize("value", [
    programs.Switch(False), programs.Switch(True), programs.Bag([]), programs.Bag([3]),
    torch.nn.ModuleList(),
], ids=lambda value: f"{type(value).__name__}-{bool(value)}")
def test_truth_value_of_an_object_with_bool_or_len_is_right_or_a_break(value):
    """Without tracing its __bool__ / __len__ (ch06.2 does that for jumps), truth_value
    cannot know: it breaks with a catalogued reason. It must never guess."""
    tx, tracker = as_frame_input(value)
    try:
        truth = builtins.truth_value(tx, tracker)
    except Unsupported as error:
        assert error.kind is CATALOGUE[error.kind.title] and error.reason
    else:
        assert truth is bool(value)


@pytest.mark.task("ch06.1")
@pytest.mark.parametrize("value", [torch.ones(1), torch.zeros(1), torch.nn.Parameter(torch.ones(1))],
                         ids=["one", "zero", "parameter"])
def test_truth_value_of_a_tensor_input_breaks_like_torch(value):
    tx, tracker = as_frame_input(value)
    with pytest.raises(Unsupported) as caught:
        builtins.truth_value(tx, tracker)
    assert caught.value.kind.title == TORCH_GB_TYPES["Data-dependent branching"]


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


@pytest.mark.task("ch06.2")
@pytest.mark.parametrize("t", [torch.ones(1), torch.zeros(1), torch.nn.Parameter(torch.ones(1))],
                         ids=["one", "zero", "parameter"])
def test_a_tensor_input_is_a_tensor_condition(t):
    """`if t:` on an input nothing has looked at yet (a lazy tracker), and on a
    parameter (whose type is a subclass of torch.Tensor, from torch.nn): both are
    tensors, never user objects, so the jump breaks like torch's."""
    assert_same_as_torch(samples.if_input_tensor, x3(), t)
    ours, theirs = explain_both(samples.if_input_tensor, x3(), t)
    assert (ours.graph_count, ours.graph_break_count) == (theirs.graph_count, theirs.graph_break_count)
    assert [reason.kind.title for reason in ours.compiled_break_reasons] == ["data-dependent branch"]


def branch_on_rows(x):
    if x.shape[0] > 2:             # with dynamic=True, a SymBool: answered and guarded
        return x + 1
    return x - 1


@pytest.mark.task("ch06.1")
def test_the_truth_of_a_symbolic_comparison_is_known():
    """A comparison of a dynamic size (chapter 9) is not data: no break, as in torch."""
    comparison = assert_same_as_torch(branch_on_rows, torch.ones(4, 3), fullgraph=True,
                                      dynamic=True)
    assert len(comparison.minidynamo.graphs) == 1
