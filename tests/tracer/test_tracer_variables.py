"""Chapter 3: VariableTrackers, their protocol, immutability and the builtins table."""

from __future__ import annotations

import dataclasses
import operator

import pytest
import torch

import minidynamo
from minidynamo.output_graph import OutputGraph
from minidynamo.sources import LocalSource
from minidynamo.testing import strict_mode
from minidynamo.translator import InstructionTranslator
from minidynamo.variables import (
    BuiltinVariable,
    ConstantVariable,
    ListVariable,
    TensorVariable,
    TupleVariable,
    VariableBuilder,
    VariableTracker,
    new_object_id,
    replace_version,
)
from minidynamo.variables.base import TrackerDict
from tracer_helpers import run_minidynamo


def make_translator() -> InstructionTranslator:
    """A root translator for an empty frame: enough to call trackers' methods."""

    def frame():
        return None

    output = OutputGraph(frame.__globals__, lambda gm, inputs: gm.forward)
    return InstructionTranslator(frame.__code__, {}, frame.__globals__, None, output)


@pytest.fixture
def tx():
    return make_translator()


def test_trackers_are_immutable():
    value = ConstantVariable(3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        value.value = 4  # type: ignore[misc]


def test_protocol_defaults_are_graph_breaks(tx):
    bare = VariableTracker()
    for call in (
        lambda: bare.as_python_constant(),
        lambda: bare.as_proxy(),
        lambda: bare.var_getattr(tx, "x"),
        lambda: bare.call_function(tx, [], {}),
        lambda: bare.call_method(tx, "m", [], {}),
        lambda: bare.unpack_var_sequence(tx),
    ):
        with pytest.raises(minidynamo.Unsupported):
            call()
    assert not bare.is_python_constant()


def test_constants_fold_through_the_operator_protocol(tx):
    add = BuiltinVariable(operator.add)
    result = add.call_function(tx, [ConstantVariable(2), ConstantVariable(3)], {})
    assert isinstance(result, ConstantVariable) and result.value == 5
    assert (
        BuiltinVariable(len).call_function(tx, [TupleVariable((ConstantVariable(1),))], {}).value
        == 1
    )
    assert (
        BuiltinVariable(max).call_function(tx, [ConstantVariable(2), ConstantVariable(7)], {}).value
        == 7
    )


def test_a_tensor_operand_adds_a_graph_node(tx):
    x = VariableBuilder(tx.output, LocalSource("x"))(torch.ones(2, 3))
    assert isinstance(x, TensorVariable) and x.node.op == "placeholder" and x.node.target == "L_x_"
    y = BuiltinVariable(operator.mul).call_function(tx, [x, ConstantVariable(2)], {})
    assert isinstance(y, TensorVariable)
    assert y.node.target is operator.mul and y.node.args == (x.node, 2)
    assert y.example_value.shape == (2, 3)  # computed on FakeTensors
    assert type(y.example_value).__name__ == "FakeTensor"
    assert y.var_getattr(tx, "shape").as_python_constant() == torch.Size([2, 3])


def test_list_mutation_makes_a_new_version_everywhere(tx):
    items = ListVariable((), object_id=new_object_id())
    tx.output.translators.append(tx)  # as while it runs: replace_all walks the running translators
    tx.push(items)
    tx.symbolic_locals["parts"] = items
    items.call_method(tx, "append", [ConstantVariable(1)], {})
    assert tx.stack[-1] is tx.symbolic_locals["parts"]
    assert tx.symbolic_locals["parts"].as_python_constant() == [1]
    assert items.as_python_constant() == []  # the old version is untouched


def test_replace_version_rebuilds_only_what_contains_the_object():
    inner = ListVariable((), object_id=new_object_id())
    outer = TupleVariable((inner, ConstantVariable(2)))
    other = TupleVariable((ConstantVariable(3),))
    new_inner = inner.clone(items=(ConstantVariable(1),))
    replaced = replace_version([outer, other], new_inner)
    assert replaced[0].items[0] is new_inner and replaced[1] is other


def test_a_tracker_dict_knows_which_entries_hold_an_object():
    """`TrackerDict.holding`: the entries whose trackers hold an object, kept up to date
    when an entry's new version holds another object too (a list that now holds a dict),
    so `replace_all` swaps new versions into those entries only."""
    inner = ListVariable((), object_id=new_object_id())
    other = ListVariable((), object_id=new_object_id())
    table = TrackerDict()
    table["a"] = TupleVariable((inner,))
    table["b"] = TupleVariable((ConstantVariable(1),))
    table["c"] = inner
    assert sorted(table.holding(inner.object_id)) == ["a", "c"]
    assert table.holding(other.object_id) == []
    table.update({"b": TupleVariable((other,))})
    table["c"] = inner.clone(items=(other,))  # the list's new version holds `other`
    assert sorted(table.holding(other.object_id)) == ["b", "c"]
    table.clear()
    assert table.holding(inner.object_id) == [] and not table


def test_a_mutation_reaches_every_realized_input_that_holds_the_object():
    """Two inputs that reach one list (`xs` and `pair[0]`): appending through one is seen
    through the other, however many unrelated inputs the trace realized."""
    def fn(x, xs, pair, *others):
        total = x * len(pair[0])  # `pair[0]` realized (the list) before the append
        for other in others:
            total = total + other
        xs.append(total)
        return len(pair[0]), total

    shared = [1]
    args = (torch.ones(2), shared, (shared, 2), *[torch.ones(2) for _ in range(20)])
    expected_list = [1]
    expected = fn(args[0], expected_list, (expected_list, 2), *args[3:])
    result = minidynamo.compile(fn)(*args)
    assert result[0] == expected[0] == 2 and torch.equal(result[1], expected[1])
    assert len(shared) == 2


def _append_a_new_list(outer):
    inner = [1]
    outer.append(inner)  # the waiting caller's list now holds a list made here...
    _grow(inner)  # ...which a deeper call mutates while both callers wait
    return inner


def _grow(inner):
    inner.append(3)


def _counting():
    yield 0
    made = []  # made after a resume: the generator's summary must not outlive it
    made.append(1)
    yield len(made)


def test_a_waiting_caller_sees_every_new_version_of_what_it_holds():
    """While a callee runs, its caller's stack and locals are summarised by the ids they
    hold (`Translator.suspend`): a mutation of an object the caller holds, or comes to
    hold through a new version (a list appended to a list it holds), still reaches it;
    a suspended generator is summarised too, and woken when it resumes."""
    def fn(x):
        outer = []
        _append_a_new_list(outer)
        gen, log = _counting(), []
        log.append(next(gen))
        log.append("between")  # a mutation while the generator waits
        log.append(next(gen))
        return x * len(outer[0]), outer, log

    x = torch.ones(2)
    expected = fn(x.clone())
    result, _ = run_minidynamo(fn, x)
    assert torch.equal(result[0], expected[0])
    assert result[1:] == expected[1:] == ([[1, 3]], [0, "between", 1])


@pytest.mark.parametrize(
    "value, expected",
    [
        (ConstantVariable(2), "ConstantVariable(int: 2)"),
        (ConstantVariable(None), "ConstantVariable(NoneType: None)"),
        (ListVariable((), object_id=1), "ListVariable(length=0)"),
        (BuiltinVariable(operator.add), "BuiltinVariable(add)"),
    ],
)
def test_reprs_follow_torch_trace_logs(value, expected):
    assert repr(value) == expected


@pytest.mark.parametrize(
    "value, tracker",
    [
        (3, "ConstantVariable"),
        ("s", "ConstantVariable"),
        (torch.float32, "ConstantVariable"),
        ([1, 2], "ListVariable"),
        ((1, 2), "TupleVariable"),
        ({"a": 1}, "ConstDictVariable"),
        ({1, 2}, "SetVariable"),
        (range(3), "RangeVariable"),
        (len, "BuiltinVariable"),
        (torch.relu, "TorchFunctionVariable"),
        (make_translator, "UserFunctionVariable"),
        (torch.nn.Linear(2, 2), "NNModuleVariable"),
        (torch, "PythonModuleVariable"),
        (dataclasses.dataclass, "UserFunctionVariable"),
        (object(), "UserDefinedObjectVariable"),
        (torch.Size([2]), "SizeVariable"),
    ],
)
def test_builder_picks_a_tracker_by_value(tx, value, tracker):
    assert type(VariableBuilder(tx.output, LocalSource("v"))(value)).__name__ == tracker


def test_builder_gives_one_tracker_per_object(tx):
    shared = [torch.ones(1)]
    first = VariableBuilder(tx.output, LocalSource("a"))(shared)
    second = VariableBuilder(tx.output, LocalSource("b"))(shared)
    assert first is second  # aliasing: one object, one tracker, one identity


def test_user_function_calls_are_inlined(tx):
    def helper(a, b=10):
        return a * b

    function = VariableBuilder(tx.output, None)(helper)
    assert function.call_function(tx, [ConstantVariable(4)], {}).as_python_constant() == 40


def test_every_value_knows_its_class():
    """`obj.__class__` of any tracker is its Python type, as in eager. (torch.compile
    2.13 answers `torch.no_grad().__class__ is torch.no_grad` with False here.)"""

    def classes(x):
        mode = torch.no_grad()
        return x + 1, mode.__class__ is torch.no_grad, mode.__class__.__name__

    x = torch.ones(2)
    with strict_mode():
        explained = minidynamo.explain(classes)(x)
        out = minidynamo.compile(classes)(x)
    assert (explained.graph_count, explained.break_reasons) == (1, [])
    assert out[1:] == (True, "no_grad") and torch.equal(out[0], x + 1)


def test_a_function_made_while_tracing_keeps_its_attributes_and_identity():
    """`l.foo = 17` on a lambda made while tracing is seen by later reads and by the
    caller; the function stored twice is one object after the graph, as in eager."""

    def make(x):
        tagged = lambda: 1  # noqa: E731
        tagged.foo = 17
        return x + 1, tagged, [tagged]

    with strict_mode():
        explained = minidynamo.explain(make)(torch.ones(2))
        out, tagged, holder = minidynamo.compile(make)(torch.ones(2))
    assert (explained.graph_count, explained.break_reasons) == (1, [])
    assert tagged.foo == 17 and holder[0] is tagged and tagged() == 1
