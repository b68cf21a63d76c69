"""Chapter 4: sources, the VariableBuilder's graph inputs and lazy frame inputs."""

from __future__ import annotations

import types

import pytest
import torch
import torch._dynamo
import torch._dynamo.source as torch_source
from torch._guards import TracingContext, tracing

import minidynamo
from minidynamo.bytecode import assemble, create_instruction
from minidynamo.sources import (
    AttrSource, GetItemSource, GlobalSource, ImportSource, LocalSource, install_modules,
)
from tracer_helpers import run_minidynamo

MODULE_WEIGHT = GetItemSource(
    AttrSource(GetItemSource(AttrSource(LocalSource("self"), "_modules"), "fc"), "_parameters"),
    "weight",
)


@pytest.mark.parametrize(
    "ours, theirs",
    [
        (LocalSource("x"), lambda: torch_source.LocalSource("x")),
        (GlobalSource("w"), lambda: torch_source.GlobalSource("w")),
        (
            AttrSource(LocalSource("self"), "fc"),
            lambda: torch_source.AttrSource(torch_source.LocalSource("self"), "fc"),
        ),
        (
            GetItemSource(LocalSource("xs"), 0),
            lambda: torch_source.GetItemSource(torch_source.LocalSource("xs"), 0),
        ),
        (
            GetItemSource(LocalSource("d"), "k"),
            lambda: torch_source.GetItemSource(torch_source.LocalSource("d"), "k"),
        ),
        (ImportSource("math"), lambda: torch_source.ImportSource("math")),
    ],
    ids=lambda value: str(value) if not callable(value) else "torch",
)
def test_guard_names_are_spelled_as_in_torch(ours, theirs):
    with tracing(TracingContext(None)):  # torch's sources want a tracing context
        assert ours.name() == theirs().name


def test_placeholder_names():
    assert LocalSource("x").placeholder_name() == "L_x_"
    assert MODULE_WEIGHT.name() == "L['self']._modules['fc']._parameters['weight']"
    assert MODULE_WEIGHT.placeholder_name() == "L_self_modules_fc_parameters_weight_"


def run_reconstruct(source, **frame_locals):
    """Execute `source.reconstruct()` in a function whose arguments are frame_locals."""

    def probe(self=None, x=None, xs=None):
        return None

    instructions = [
        create_instruction("RESUME", arg=0),
        *source.reconstruct(),
        create_instruction("RETURN_VALUE"),
    ]
    code = assemble(instructions, probe.__code__)
    namespace = {"__builtins__": {}, "torch": torch}  # modules: globals, not IMPORT_NAME
    install_modules(code, namespace)
    return types.FunctionType(code, namespace, "probe", probe.__defaults__)(**frame_locals)


def test_reconstruct_reloads_the_value():
    model = torch.nn.Sequential()
    model.fc = torch.nn.Linear(2, 2)
    assert run_reconstruct(MODULE_WEIGHT, self=model) is model.fc.weight
    assert run_reconstruct(GetItemSource(LocalSource("xs"), 1), xs=[1, 2]) == 2
    assert run_reconstruct(AttrSource(ImportSource("torch.nn"), "Linear")) is torch.nn.Linear
    assert run_reconstruct(GlobalSource("torch")) is torch


def test_an_unused_argument_never_becomes_a_graph_input():
    def fn(x, unused, also_unused):
        return x.cos()

    _, recorder = run_minidynamo(fn, torch.ones(2), torch.ones(2), [torch.ones(2)])
    assert [node.target for node in recorder.graphs[0].graph.nodes if node.op == "placeholder"] == [
        "L_x_"
    ]
    assert len(recorder.example_inputs[0]) == 1


def test_graph_inputs_come_in_order_of_first_use_with_real_example_inputs():
    def fn(a, b, c):
        return c * 2 + a

    a, b, c = torch.ones(2), torch.zeros(2), torch.full((2,), 3.0)
    _, recorder = run_minidynamo(fn, a, b, c)
    assert [node.target for node in recorder.graphs[0].graph.nodes if node.op == "placeholder"] == [
        "L_c_",
        "L_a_",
    ]
    assert (
        recorder.example_inputs[0][0] is c and recorder.example_inputs[0][1] is a
    )  # the real tensors


@pytest.mark.parametrize(
    "model", [torch.nn.Linear(3, 2), torch.nn.Sequential(torch.nn.Linear(3, 2))], ids=str
)
def test_parameters_are_graph_inputs_named_as_in_torch_compile(model):
    def placeholders(compile_function):
        graphs = []

        def backend(gm, example_inputs):
            graphs.append((gm, example_inputs))
            return gm.forward

        compile_function(model, backend=backend, fullgraph=True)(torch.ones(1, 3))
        gm, inputs = graphs[0]
        return [node.target for node in gm.graph.nodes if node.op == "placeholder"], inputs

    torch._dynamo.reset()
    expected, _ = placeholders(torch.compile)
    names, inputs = placeholders(minidynamo.compile)
    assert names == expected
    assert any(input_ is model.parameters().__next__() for input_ in inputs)  # the real parameter


def test_aliased_inputs_make_one_graph_input():
    def fn(x, y):
        return x + y

    x = torch.ones(2)
    _, recorder = run_minidynamo(fn, x, x)
    assert len(recorder.example_inputs[0]) == 1


def test_a_returned_input_is_reloaded_not_output_by_the_graph():
    def fn(x, y):
        return x, y + 1

    x = torch.ones(2)
    result, recorder = run_minidynamo(fn, x, torch.ones(2))
    assert result[0] is x
    assert [node.target for node in recorder.graphs[0].graph.nodes if node.op == "placeholder"] == [
        "L_y_"
    ]


@pytest.mark.parametrize("method", ["wrap_tensor", "wrap_tuple", "wrap_dict"])
def test_the_builder_looks_its_wrap_methods_up_when_a_rule_fires(monkeypatch, method):
    """RULES name the builder's methods, so a replaced method (a student's) is the one used."""
    from minidynamo.variables.builder import VariableBuilder

    original = getattr(VariableBuilder, method)
    calls = []

    def replacement(self, value):
        calls.append(type(value))
        return original(self, value)

    monkeypatch.setattr(VariableBuilder, method, replacement)

    def fn(x, pair, table):
        return x + pair[0] + table["k"]

    x = torch.ones(2)
    result = minidynamo.compile(fn)(x, (x, 1), {"k": x})
    assert torch.equal(result, fn(x, (x, 1), {"k": x}))
    assert calls, f"the replaced VariableBuilder.{method} was never called"
