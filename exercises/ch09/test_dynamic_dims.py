"""Graded tests for dynamic_dims (ch09.5): which dimensions of a tensor input get a symbol.

Each call sequence runs through torch.compile and through minidynamo with your function
plugged in, both with the same `dynamic` option and a backend that records every graph.
Three things must be equal, call for call: where the frame is traced again (the compile
pattern), every graph's placeholders (`s77`, `L_x_`), and the size of every tensor
placeholder's FakeTensor (`(s77, 4)`: which dimensions are symbols). Every value must be
eager's.

The rules come in torch's order: a `mark_static` mark wins over everything, then a
`mark_dynamic` mark (even with `dynamic=False`); a parameter or a module buffer keeps its
sizes unless marked; `dynamic=False` makes nothing dynamic, `dynamic=True` everything,
and the default `None` only the dimensions whose size changed between compiles, which
`SizeEntry.merge_size` records (call it on every compile, whatever the answer).
"""

from __future__ import annotations

from typing import Any, Callable

import pytest
import torch
import torch._dynamo
import torch._dynamo.utils

import minidynamo
from minidynamo import convert_frame
from minidynamo.testing import assert_same_value

from .programs import Net, t


def graph_signature(gm: torch.fx.GraphModule) -> list[str]:
    """`s77`, `L_x_ (s77, 4)`: each placeholder, with its sizes when it is a tensor."""
    signature = []
    for node in gm.graph.nodes:
        if node.op != "placeholder":
            continue
        example = node.meta.get("example_value")
        if isinstance(example, torch.Tensor):
            signature.append(f"{node.target} {tuple(str(size) for size in example.size())}")
        else:
            signature.append(str(node.target))
    return signature


def run(compile_fn: Callable, fn: Callable, calls: list[Callable[[], tuple]],
        frames: Callable[[], int], dynamic: bool | None):
    graphs: list[list[str]] = []

    def backend(gm, example_inputs):
        graphs.append(graph_signature(gm))
        return gm.forward

    compiled = compile_fn(fn, backend=backend, dynamic=dynamic)
    pattern, outputs = [], []
    for make_args in calls:
        args = make_args()
        before = frames()
        outputs.append(compiled(*args))
        pattern.append(frames() - before)
    return pattern, graphs, outputs


def check(fn: Callable, calls: list[Callable[[], tuple]], dynamic: bool | None = None) -> Any:
    """minidynamo compiles where torch.compile does, the same graphs, eager's values."""
    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()
    theirs, their_graphs, _ = run(torch.compile, fn, calls,
                                  lambda: torch._dynamo.utils.counters["frames"]["ok"], dynamic)
    minidynamo.reset()
    ours, our_graphs, outputs = run(minidynamo.compile, fn, calls,
                                    lambda: convert_frame.counters["frames"], dynamic)
    for index, make_args in enumerate(calls):
        assert_same_value(fn(*make_args()), outputs[index], path=f"call {index}")
    assert ours == theirs, f"minidynamo compiled {ours}, torch.compile {theirs}"
    assert our_graphs == their_graphs
    return ours, our_graphs


def shapes(*sizes: tuple[int, ...]) -> list[Callable[[], tuple]]:
    return [lambda size=size: (t(*size),) for size in sizes]


def marked(mark: Callable, dim: int, *size: int) -> Callable[[], tuple]:
    def make():
        x = t(*size)
        mark(x, dim)
        return (x,)
    return make


def double(x):
    return x * 2


def rows_and_columns(x):
    return x.sum(0) * x.shape[1]


NET = Net()


def run_net(x):
    return NET(x) + 1


@pytest.mark.task("ch09.5")
def test_a_changed_size_becomes_a_symbol_at_the_next_compile():
    pattern, graphs = check(double, shapes((3, 4), (3, 4), (5, 4), (7, 4), (3, 4)))
    assert pattern == [1, 0, 1, 0, 0]
    assert graphs[1] == ["s77", "L_x_ ('s77', '4')"]


@pytest.mark.task("ch09.5")
def test_only_the_dimension_that_changed_is_dynamic():
    pattern, graphs = check(rows_and_columns, shapes((3, 4), (3, 6), (3, 8), (5, 8)))
    assert pattern == [1, 1, 0, 1]
    assert graphs[1] == ["s27", "L_x_ ('3', 's27')"]


@pytest.mark.task("ch09.5")
def test_sizes_of_0_and_1_stay_constants():
    check(double, shapes((1, 4), (2, 4), (3, 4), (1, 4), (4, 4)))


@pytest.mark.task("ch09.5")
def test_dynamic_false_keeps_every_size_static():
    pattern, _ = check(double, shapes((3, 4), (5, 4), (7, 4)), dynamic=False)
    assert pattern == [1, 1, 1]


@pytest.mark.task("ch09.5")
def test_dynamic_true_makes_every_dimension_a_symbol_from_the_first_call():
    pattern, graphs = check(double, shapes((3, 4), (5, 6), (1, 6), (7, 2)), dynamic=True)
    assert graphs[0] == ["s77", "s27", "L_x_ ('s77', 's27')"]


@pytest.mark.task("ch09.5")
@pytest.mark.parametrize("dynamic", [True, None])
def test_parameters_keep_their_sizes(dynamic):
    """The batch is dynamic, `fc.weight` is not: its sizes are the module's."""
    _, graphs = check(run_net, shapes((2, 4), (3, 4), (5, 4)), dynamic=dynamic)
    assert any("(4, 4)" in placeholder.replace("'", "") for placeholder in graphs[-1])


@pytest.mark.task("ch09.5")
@pytest.mark.parametrize("dynamic", [None, False], ids=["automatic", "dynamic_false"])
def test_mark_dynamic_makes_a_dimension_a_symbol_from_the_first_call(dynamic):
    pattern, graphs = check(double, [marked(torch._dynamo.mark_dynamic, 0, 3, 4),
                                     marked(torch._dynamo.mark_dynamic, 0, 6, 4)], dynamic)
    assert pattern == [1, 0] and graphs[0] == ["s77", "L_x_ ('s77', '4')"]


@pytest.mark.task("ch09.5")
def test_mark_static_wins_over_dynamic_true():
    _, graphs = check(double, [marked(torch._dynamo.mark_static, 0, 3, 4),
                               marked(torch._dynamo.mark_static, 0, 3, 5)], dynamic=True)
    assert graphs[0] == ["s27", "L_x_ ('3', 's27')"]


@pytest.mark.task("ch09.5")
def test_mark_static_wins_over_a_changed_size():
    check(double, [lambda: (t(3, 4),), marked(torch._dynamo.mark_static, 0, 5, 4),
                   marked(torch._dynamo.mark_static, 0, 7, 4), lambda: (t(9, 4),)])


@pytest.mark.task("ch09.5")
def test_a_size_that_changed_before_a_static_compile_is_still_remembered():
    """A `dynamic=False`-like compile (a mark_static call) still records the sizes: the
    history is merged on every compile, whatever the answer."""
    check(double, [marked(torch._dynamo.mark_static, 0, 3, 4),
                   marked(torch._dynamo.mark_static, 0, 5, 4), lambda: (t(7, 4),),
                   lambda: (t(9, 4),)])
