"""Graded tests for chapter 4, sources (ch04.1, ch04.2).

A source has two jobs: its guard name (compared with TorchDynamo's own source classes,
and, through the placeholder names derived from it, with torch.compile's graphs) and
its reconstruct() bytecode (compared with Python evaluating the guard name, and run
inside the transformed frames that reload graph inputs).
"""

from __future__ import annotations

import types

import pytest
import torch
import torch._dynamo.source as torch_source
from torch._guards import TracingContext, tracing

from minidynamo.bytecode import assemble, create_instruction
from minidynamo.sources import AttrSource, GetItemSource, GlobalSource, LocalSource
from minidynamo.testing import assert_same_as_torch, compare_with_torch, placeholder_names

from . import programs

# A path is a root ("L", name) or ("G", name) followed by steps ("attr", name) or
# ("item", key); both libraries build their sources from the same path.
PATHS = [
    [("L", "self"), ("attr", "fc")],
    [("L", "self"), ("attr", "_modules"), ("item", "fc"), ("attr", "_parameters"),
     ("item", "weight")],
    [("L", "cfg"), ("attr", "scale"), ("attr", "data")],
    [("G", "model"), ("attr", "layers"), ("item", 0), ("attr", "bias")],
    [("L", "obj"), ("attr", "my-attr")],          # not an identifier: getattr(...)
    [("L", "obj"), ("attr", "class")],            # a keyword is an identifier
    [("L", "xs"), ("item", 1), ("attr", "grad")],
]


def build(path, library):
    """The source for `path`, built with minidynamo's classes or TorchDynamo's."""
    classes = {"L": library.LocalSource, "G": library.GlobalSource,
               "attr": library.AttrSource, "item": library.GetItemSource}
    (root_kind, root_name), *steps = path
    source = classes[root_kind](root_name)
    for kind, key in steps:
        source = classes[kind](source, key)
    return source


def ours(path):
    import minidynamo.sources

    return build(path, minidynamo.sources)


def theirs(path):
    with tracing(TracingContext(None)):  # TorchDynamo's sources want a tracing context
        return build(path, torch_source).name


def run_reconstruct(source, frame_locals, frame_globals):
    """Run `source.reconstruct()` as the body of a function whose locals are given."""
    names = tuple(frame_locals)
    template = eval(f"lambda {', '.join(names)}: None") if names else (lambda: None)
    instructions = [create_instruction("RESUME", arg=0), *source.reconstruct(),
                    create_instruction("RETURN_VALUE")]
    code = assemble(instructions, template.__code__)
    return types.FunctionType(code, frame_globals)(**frame_locals)


def evaluate_name(source, frame_locals, frame_globals):
    """What the guard name means: Python evaluates it over L and G."""
    return eval(source.name(), {"L": frame_locals, "G": frame_globals})


# -- ch04.1: AttrSource.name -------------------------------------------------------------

@pytest.mark.task("ch04.1")
@pytest.mark.parametrize("path", PATHS, ids=lambda p: "-".join(str(step[1]) for step in p))
def test_guard_names_are_spelled_as_torchdynamo_spells_them(path):
    assert ours(path).name() == theirs(path)


@pytest.mark.task("ch04.1")
def test_attribute_guard_names_evaluate_to_the_value():
    cfg = programs.Config()
    setattr(cfg, "my-attr", torch.ones(1))
    frame_locals = {"cfg": cfg}
    for member in ("scale", "shift", "my-attr"):
        source = AttrSource(LocalSource("cfg"), member)
        assert evaluate_name(source, frame_locals, {}) is getattr(cfg, member)


@pytest.mark.task("ch04.1")
def test_attribute_inputs_are_named_as_in_torch_compile():
    comparison = assert_same_as_torch(programs.add_attributes, torch.randn(4), programs.Config())
    names = placeholder_names(comparison.minidynamo.graphs[0])
    assert names == placeholder_names(comparison.torch.graphs[0]) and len(names) == 3


@pytest.mark.task("ch04.1")
@pytest.mark.parametrize("module", [programs.Block, programs.Stack], ids=lambda m: m.__name__)
def test_module_parameters_are_named_as_in_torch_compile(module):
    torch.manual_seed(0)
    assert_same_as_torch(module(), torch.randn(2, 4))


# -- ch04.2: GetItemSource.reconstruct -----------------------------------------------------

@pytest.mark.task("ch04.2")
def test_reconstruct_loads_what_the_guard_name_names():
    model = programs.Stack()
    frame_locals = {"self": model, "xs": [torch.ones(1), {"k": (3, "v")}]}
    frame_globals = {"table": {"w": [10, 20]}}
    self_layers = GetItemSource(AttrSource(LocalSource("self"), "_modules"), "layers")
    sources = [
        GetItemSource(LocalSource("xs"), 0),
        GetItemSource(GetItemSource(GetItemSource(LocalSource("xs"), 1), "k"), 1),
        GetItemSource(GetItemSource(GlobalSource("table"), "w"), -1),
        GetItemSource(AttrSource(GetItemSource(AttrSource(self_layers, "_modules"), "1"),
                                 "_parameters"), "bias"),
    ]
    for source in sources:
        expected = evaluate_name(source, frame_locals, frame_globals)
        assert run_reconstruct(source, frame_locals, frame_globals) is expected, source.name()


@pytest.mark.task("ch04.2")
def test_list_items_are_reloaded_as_graph_inputs():
    assert_same_as_torch(programs.sum_items, [torch.randn(3), torch.randn(3), torch.randn(3)])


@pytest.mark.task("ch04.2")
def test_dict_and_nested_items_are_reloaded_as_graph_inputs():
    d = {"a": torch.randn(3), "b": torch.randn(3), "c": torch.randn(3)}
    assert_same_as_torch(programs.dict_items, d)
    nested = {"pairs": [(torch.randn(2), torch.randn(2)), (torch.randn(2), torch.randn(2))],
              "scale": 3}
    assert_same_as_torch(programs.nested_items, nested)


@pytest.mark.task("ch04.2")
def test_module_parameters_are_reloaded_through_module_state():
    torch.manual_seed(0)
    model = programs.Block()
    comparison = compare_with_torch(model, torch.randn(2, 4))
    assert comparison.ok, comparison.report()
    names = placeholder_names(comparison.minidynamo.graphs[0])
    assert "L_self_modules_fc_parameters_weight_" in names
