"""Helpers of the tracer tests: run a function under minidynamo and under torch.compile
with a recording backend, and describe the captured graphs as plain data."""

from __future__ import annotations

import copy
from typing import Any, Callable

import torch
import torch._dynamo

import minidynamo


class Recorder:
    """A backend (torch's protocol) that keeps every graph and its example inputs."""

    def __init__(self) -> None:
        self.graphs: list[torch.fx.GraphModule] = []
        self.example_inputs: list[list[torch.Tensor]] = []

    def __call__(
        self, gm: torch.fx.GraphModule, example_inputs: list[torch.Tensor]
    ) -> Callable[..., Any]:
        self.graphs.append(gm)
        self.example_inputs.append(list(example_inputs))
        return gm.forward


def target_name(target: Any) -> str:
    if isinstance(target, str):
        return target
    module = getattr(target, "__module__", None) or ""
    return f"{module}.{getattr(target, '__name__', repr(target))}"


def describe(gm: torch.fx.GraphModule) -> list[tuple[str, str, str]]:
    """(op, node name, target) of every node, the output's arguments included."""
    rows = []
    for node in gm.graph.nodes:
        if node.op == "output":
            rows.append(("output", "output", repr(node.args)))
        else:
            rows.append((node.op, node.name, target_name(node.target)))
    return rows


def run_minidynamo(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[Any, Recorder]:
    recorder = Recorder()
    result = minidynamo.compile(fn, backend=recorder, fullgraph=True)(*args, **kwargs)
    return result, recorder


def run_torch(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[Any, Recorder]:
    torch._dynamo.reset()
    recorder = Recorder()
    result = torch.compile(fn, backend=recorder, fullgraph=True)(*args, **kwargs)
    return result, recorder


def assert_same_graphs(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Run fn eagerly, under torch.compile and under minidynamo (on copies of the
    arguments); assert equal results and identical graphs. Returns minidynamo's result."""
    expected = fn(*copy.deepcopy(args), **copy.deepcopy(kwargs))
    _, torch_recorder = run_torch(fn, *copy.deepcopy(args), **copy.deepcopy(kwargs))
    result, mini_recorder = run_minidynamo(fn, *copy.deepcopy(args), **copy.deepcopy(kwargs))
    assert_same_value(expected, result)
    assert [describe(gm) for gm in mini_recorder.graphs] == [
        describe(gm) for gm in torch_recorder.graphs
    ]
    return result


def assert_same_value(expected: Any, actual: Any) -> None:
    if isinstance(expected, torch.Tensor):
        assert isinstance(actual, torch.Tensor)
        torch.testing.assert_close(actual, expected)
    elif isinstance(expected, (list, tuple)):
        assert type(actual) is type(expected) and len(actual) == len(expected)
        for left, right in zip(expected, actual):
            assert_same_value(left, right)
    elif isinstance(expected, dict):
        assert type(actual) is type(expected) and list(actual) == list(expected)
        for key in expected:
            assert_same_value(expected[key], actual[key])
    else:
        assert actual == expected


def same_outcome(left: Any, right: Any) -> bool:
    """Whether two calls' outcomes (values, or an error's type and message) are equal:
    tensors exactly, containers item by item and of the same type."""
    if isinstance(left, torch.Tensor):
        return isinstance(right, torch.Tensor) and torch.equal(left, right)
    if isinstance(left, (list, tuple)):
        return (type(left) is type(right) and len(left) == len(right)
                and all(same_outcome(a, b) for a, b in zip(left, right)))
    return left == right


def call_restoring_grad_mode(fn: Callable[..., Any], *args: Any) -> tuple[Any, bool]:
    """`fn(*args)` and the grad mode it left, which is then switched back on (a program
    that leaves it off must not leak into the next test)."""
    try:
        result = fn(*args)
        return result, torch.is_grad_enabled()
    finally:
        torch.set_grad_enabled(True)


def as_values(result: Any, with_requires_grad: bool = False) -> list[Any]:
    """A result (or the items of a tuple one) with each tensor as a list, to compare."""
    items = result if isinstance(result, tuple) else (result,)
    return [((item.tolist(), item.requires_grad) if with_requires_grad else item.tolist())
            if isinstance(item, torch.Tensor) else item for item in items]

