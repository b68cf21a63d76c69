"""The harness itself: ``minidynamo.testing`` must see every kind of difference.

``minidynamo.api`` is replaced, for each test, by a fake: an honest one that is
really ``torch.compile`` (the comparison must then be clean), and dishonest ones
that each get one thing wrong (the comparison must name exactly that thing). This
is what makes the conformance tests able to fail, before minidynamo exists.
"""

from __future__ import annotations

import collections
import sys
import types

import pytest
import torch
import torch.fx

from minidynamo import testing
from minidynamo.testing import (
    Call,
    CompileCounter,
    RecordingBackend,
    compare_calls_with_torch,
    compare_with_torch,
    describe_difference,
    normalize_graph,
    target_name,
    torch_trace_log,
    trace_opnames,
)


def make_fake_api(compile_fn) -> types.ModuleType:
    api = types.ModuleType("minidynamo.api")
    api.compile = compile_fn
    api.reset = torch._dynamo.reset
    return api


def honest_compile(fn, *, backend="eager", fullgraph=False, dynamic=None):
    return torch.compile(fn, backend=backend, fullgraph=fullgraph, dynamic=dynamic)


def compile_calling_twice(fn, *, backend="eager", fullgraph=False, dynamic=None):
    """Applies every side effect twice: runs the function once more, eagerly."""
    compiled = honest_compile(fn, backend=backend, fullgraph=fullgraph, dynamic=dynamic)

    def run(*args, **kwargs):
        fn(*args, **kwargs)
        return compiled(*args, **kwargs)

    return run


def compile_never(fn, *, backend="eager", fullgraph=False, dynamic=None):
    """Falls back to eager: no graph at all."""
    return fn


def compile_off_by_one(fn, *, backend="eager", fullgraph=False, dynamic=None):
    """Captures the right graph but returns a wrong value."""
    compiled = honest_compile(fn, backend=backend, fullgraph=fullgraph, dynamic=dynamic)
    return lambda *args, **kwargs: compiled(*args, **kwargs) + 1


def compile_symbolic_trace(fn, *, backend="eager", fullgraph=False, dynamic=None):
    """Hands the backend an FX symbolic trace: placeholders named ``x``, not ``L_x_``."""

    def run(*args):
        gm = torch.fx.symbolic_trace(fn)
        return backend(gm, list(args))(*args)

    return run


def compile_extra_op(fn, *, backend="eager", fullgraph=False, dynamic=None):
    """Adds a useless ``neg`` call to every graph before handing it on."""

    def add_op(gm, example_inputs):
        first = next(node for node in gm.graph.nodes if node.op == "placeholder")
        with gm.graph.inserting_after(first):
            gm.graph.call_function(torch.neg, (first,))
        gm.recompile()
        return backend(gm, example_inputs)

    return honest_compile(fn, backend=add_op, fullgraph=fullgraph, dynamic=dynamic)


def compile_with_other_constant(fn, *, backend="eager", fullgraph=False, dynamic=None):
    """Changes a constant argument of the first ``mul`` (the value too)."""

    def change(gm, example_inputs):
        for node in gm.graph.nodes:
            if target_name(node.target) in ("operator.mul", "torch.mul", "mul"):
                node.args = (node.args[0], 3.0)
                break
        gm.recompile()
        return backend(gm, example_inputs)

    return honest_compile(fn, backend=change, fullgraph=fullgraph, dynamic=dynamic)


@pytest.fixture
def fake_api(monkeypatch):
    def install(compile_fn):
        monkeypatch.setitem(sys.modules, "minidynamo.api", make_fake_api(compile_fn))

    return install


class Box:
    def __init__(self):
        self.count = 0


def program(x, out, box):
    out.append(x.sum())
    box.count += 1
    return torch.relu(x) * 2.0


def arguments():
    return torch.randn(3), [], Box()


def test_honest_compiler_has_no_difference(fake_api):
    fake_api(honest_compile)
    comparison = compare_with_torch(program, *arguments())
    assert comparison.ok, comparison.report()
    assert comparison.minidynamo.graph_count == 1
    assert "same as torch.compile" in comparison.report()


def test_side_effects_applied_twice_are_seen(fake_api):
    fake_api(compile_calling_twice)
    comparison = compare_with_torch(program, *arguments())
    assert comparison.kinds() == {"side effects"}, comparison.report()


def test_eager_fallback_is_a_graph_count_difference(fake_api):
    fake_api(compile_never)
    comparison = compare_with_torch(program, *arguments())
    assert comparison.kinds() == {"graph count"}, comparison.report()


def test_wrong_value_is_an_output_difference(fake_api):
    fake_api(compile_off_by_one)
    comparison = compare_with_torch(program, *arguments())
    assert comparison.kinds() == {"output"}, comparison.report()


def test_placeholder_names_are_compared(fake_api):
    fake_api(compile_symbolic_trace)
    comparison = compare_with_torch(lambda x: torch.relu(x) + 1, torch.randn(3))
    assert "placeholders" in comparison.kinds(), comparison.report()


def test_extra_op_is_an_ops_difference(fake_api):
    fake_api(compile_extra_op)
    comparison = compare_with_torch(lambda x: torch.relu(x) + 1, torch.randn(3))
    assert comparison.kinds() == {"ops"}, comparison.report()


def test_changed_constant_is_an_op_arguments_difference(fake_api):
    fake_api(compile_with_other_constant)
    comparison = compare_with_torch(lambda x: x * 2.0, torch.randn(3))
    assert "op arguments" in comparison.kinds(), comparison.report()
    assert "output" in comparison.kinds()


def test_compile_error_is_reported(fake_api):
    def broken(fn, **options):
        raise RuntimeError("internal tracer error")

    fake_api(broken)
    comparison = compare_with_torch(program, *arguments())
    assert comparison.kinds() == {"error"}
    assert "internal tracer error" in comparison.report()


def test_several_calls_and_recompilation(fake_api):
    fake_api(honest_compile)
    comparison = compare_calls_with_torch(lambda x: x.sum(), [(torch.randn(2),), (torch.randn(2, 3),)])
    assert comparison.ok, comparison.report()
    assert comparison.torch.graph_count == 2


def test_module_state_is_a_side_effect(fake_api):
    fake_api(compile_calling_twice)
    comparison = compare_with_torch(torch.nn.BatchNorm1d(3), torch.randn(4, 3))
    assert "side effects" in comparison.kinds(), comparison.report()


def test_assert_same_as_torch_raises_with_the_report(fake_api):
    fake_api(compile_never)
    with pytest.raises(AssertionError, match="graph count"):
        testing.assert_same_as_torch(program, *arguments())
    testing.assert_same_as_torch(program, *arguments(), ignore=("graph count",))


## Pieces ##############################################################################


def test_target_names():
    import operator

    assert target_name(operator.add) == "operator.add"
    assert target_name(torch.relu) == "torch.relu"
    assert target_name(torch._C._nn.linear) == "torch._C._nn.linear"
    assert target_name(torch.nn.functional.relu) == "torch.nn.functional.relu"
    assert target_name(torch.Tensor.add) == "torch.Tensor.add"
    assert target_name(torch.ops.aten.add.Tensor) == "aten.add.Tensor"
    assert target_name("sum") == "sum"
    assert target_name(getattr) == "builtins.getattr"


LINEAR = torch.nn.Linear(3, 2)


def test_normalize_graph_of_a_torch_capture():
    recorder = RecordingBackend()

    def fn(x):
        return torch.relu(LINEAR(x)).sum(dim=0) + x.shape[0]

    torch._dynamo.reset()
    torch.compile(fn, backend=recorder)(torch.randn(2, 3))
    assert normalize_graph(recorder.graphs[0]) == [
        ("placeholder", "G_LINEAR_parameters_weight_"),
        ("placeholder", "G_LINEAR_parameters_bias_"),
        ("placeholder", "L_x_"),
        ("call_function", "torch._C._nn.linear"),
        ("call_function", "torch.relu"),
        ("call_method", "sum"),
        ("call_function", "operator.add"),
    ]


def test_compile_counter_counts_frames_and_ops():
    counter = CompileCounter()
    torch._dynamo.reset()
    torch.compile(lambda x: (x + 1).relu(), backend=counter)(torch.randn(2))
    assert (counter.frame_count, counter.op_count) == (1, 2)
    counter.clear()
    assert (counter.frame_count, counter.op_count) == (0, 0)


Pair = collections.namedtuple("Pair", "a b")


@pytest.mark.parametrize(
    "expected, actual, differs",
    [
        (1, 1, False),
        (1, 1.0, True),
        (1, True, True),
        (float("nan"), float("nan"), False),
        ([1, (2, "x")], [1, (2, "x")], False),
        ([1, (2, "x")], [1, (2, "y")], True),
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}, True),  # key order is observable
        (torch.ones(2), torch.ones(2), False),
        (torch.ones(2), torch.ones(3), True),
        (torch.ones(2), torch.ones(2, dtype=torch.float64), True),
        (Pair(1, 2), Pair(1, 2), False),
        (Pair(1, 2), (1, 2), True),
    ],
)
def test_describe_difference(expected, actual, differs):
    assert (describe_difference(expected, actual) is not None) == differs


def test_objects_compare_by_attributes():
    first, second = Box(), Box()
    assert describe_difference(first, second) is None
    second.count = 5
    assert "count" in describe_difference(first, second)


def test_strict_mode_sets_and_restores_config():
    from minidynamo import config

    before = config.strict
    with testing.strict_mode(True):
        assert config.strict is True
    assert config.strict == before


def test_torch_trace_log_has_root_and_inlined_frames():
    def helper(y):
        return y * 2

    def fn(x):
        return helper(x) + 1

    lines = torch_trace_log(fn, torch.randn(2))
    assert "RESUME" in trace_opnames(lines)
    assert {line.depth for line in lines} == {0, 1}
    assert trace_opnames(lines, root_only=True)[-1] == "RETURN_VALUE"


def test_calls_are_copied_per_run():
    items = []
    run = testing.run_eager(lambda out: out.append(1), [Call((items,))])
    assert items == []
    assert run.inputs_after[0][1] == ([1],)
