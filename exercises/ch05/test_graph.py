"""Graded tests for chapter 5, the FX graph (ch05.1, ch05.2, ch05.3).

The OutputGraph runs each operation on FakeTensors (ch05.1), records it as a node with
its example value (ch05.2), and at the end of the frame compiles the graph with the
backend and emits the bytecode that calls it (ch05.3). Each test compares the graphs
with torch.compile's and the values with eager PyTorch, computed in the same test.
"""

from __future__ import annotations

import contextlib
import logging
import re

import pytest
import torch
import torch._dynamo.output_graph  # defines the logger of TORCH_LOGS=graph_code
from torch._subclasses.fake_tensor import FakeTensor

import minidynamo
from minidynamo.testing import (
    Call,
    RecordingBackend,
    assert_same_as_torch,
    compare_with_eager,
    compare_with_torch,
    normalize_graph,
    placeholder_names,
    run_eager,
    run_minidynamo,
)

from . import programs, samples


def call_nodes(gm):
    return [node for node in gm.graph.nodes if node.op.startswith("call_")]


def metadata(value):
    """What a FakeTensor example value tells: shape, stride, dtype, device (per item)."""
    if isinstance(value, (tuple, list)):
        return tuple(metadata(item) for item in value)
    if isinstance(value, torch.Tensor):
        return (tuple(value.shape), value.stride(), value.dtype, value.device.type)
    return value


def assert_same_example_values(comparison):
    for ours, theirs in zip(comparison.minidynamo.graphs, comparison.torch.graphs, strict=True):
        for mine, real in zip(call_nodes(ours), call_nodes(theirs), strict=True):
            example = mine.meta["example_value"]
            assert metadata(example) == metadata(real.meta["example_value"]), mine.format_node()


# -- ch05.1: OutputGraph.run_on_fakes ------------------------------------------------------


def data_dependent(x):
    y = x * 2
    n = torch.nonzero(y)          # its shape depends on the data: no FakeTensor answer
    return n.sum() + 1


@pytest.mark.task("ch05.1")
@pytest.mark.parametrize("fn", [data_dependent, samples.data_dependent_method],
                         ids=["function", "method"])
def test_a_data_dependent_op_breaks_the_graph_like_torch(fn):
    """FakeTensors cannot say how many rows nonzero() has: a graph break where torch.compile
    breaks too (two graphs), not an exception out of the compiler. The break is of the
    data-dependent kind (its hint says what to do) and names the op as the user wrote it,
    called as a function (target torch.nonzero) or as a method (target "nonzero")."""
    x = torch.randn(4, 4)
    comparison = compare_with_torch(fn, x)
    assert comparison.ok, comparison.report()
    (message,) = comparison.minidynamo.graph_breaks
    assert "(data-dependent value): nonzero() " in message, message


@pytest.mark.task("ch05.1")
def test_an_op_that_fails_on_fakes_lets_eager_raise_the_users_error():
    """`(2, 3) @ (2, 3)` fails on FakeTensors as it fails in eager mode: a graph break of
    the kind "exception in traced code", naming the op and the error, so that the frame
    runs eagerly and the user gets eager's own RuntimeError. (torch.compile raises its
    own TorchRuntimeError out of the compiler instead: compared with eager only.)"""
    calls = [Call((torch.randn(2, 3), torch.randn(2, 3)))]
    eager = run_eager(samples.mismatched_shapes, calls)
    ours = run_minidynamo(samples.mismatched_shapes, calls)
    assert eager.outcomes[0].error is not None
    assert compare_with_eager(eager, ours) == []
    (message,) = ours.graph_breaks
    assert "(exception in traced code): matmul() raised RuntimeError: " in message, message


@pytest.mark.task("ch05.1")
def test_shapes_and_dtypes_are_propagated():
    comparison = assert_same_as_torch(programs.shapes, torch.randn(2, 3), torch.randn(3, 4))
    assert_same_example_values(comparison)


@pytest.mark.task("ch05.1")
def test_operations_with_several_results():
    comparison = assert_same_as_torch(programs.multiple_results, torch.randn(3, 5))
    assert_same_example_values(comparison)


@pytest.mark.task("ch05.1")
def test_functions_and_methods_run_on_fakes_without_data():
    x = torch.randn(2, 3)
    comparison = assert_same_as_torch(programs.methods_and_functions, x, torch.randn(2, 3))
    assert_same_example_values(comparison)
    for node in call_nodes(comparison.minidynamo.graphs[0]):
        assert isinstance(node.meta["example_value"], FakeTensor)


@pytest.mark.task("ch05.1")
def test_metadata_is_known_while_tracing():
    assert_same_as_torch(programs.metadata_only, torch.randn(3, 2))


# -- ch05.2: OutputGraph.create_node -------------------------------------------------------

@pytest.mark.task("ch05.2")
@pytest.mark.parametrize("fn, shapes", [
    (programs.chain, [(3,)]),
    (programs.in_place, [(4,)]),
    (programs.methods_and_functions, [(2, 3), (2, 3)]),
], ids=lambda value: getattr(value, "__name__", ""))
def test_nodes_match_torch_compile(fn, shapes):
    comparison = assert_same_as_torch(fn, *[torch.randn(shape) for shape in shapes])
    assert_same_example_values(comparison)


@pytest.mark.task("ch05.2")
def test_nodes_carry_their_user_stack():
    comparison = assert_same_as_torch(programs.chain, torch.randn(3))
    for node in call_nodes(comparison.minidynamo.graphs[0]):
        assert programs.__file__ in node.meta["stack_trace"], node.format_node()


@pytest.mark.task("ch05.2")
def test_a_value_without_tensors_is_a_constant_not_a_node():
    comparison = assert_same_as_torch(programs.metadata_only, torch.randn(3, 2))
    assert comparison.minidynamo.graph_count == comparison.torch.graph_count
    comparison = assert_same_as_torch(programs.methods_and_functions, torch.randn(2, 3),
                                      torch.randn(2, 3))  # x.dim() is folded into the graph
    assert len(call_nodes(comparison.minidynamo.graphs[0])) == \
        len(call_nodes(comparison.torch.graphs[0]))


@pytest.mark.task("ch05.2")
def test_a_kept_read_is_a_node_though_its_answer_is_a_constant():
    """A tensor's `itemsize` is folded into the graph (`x * 4`), and its `getattr` node
    stays, as in torch.compile's graph: `create_node(..., keep=True)`."""
    comparison = assert_same_as_torch(programs.attribute_reads, torch.randn(3))
    kept = [node for node in call_nodes(comparison.minidynamo.graphs[0])
            if node.target is getattr]
    assert [node.args[1] for node in kept] == ["itemsize", "is_leaf"]


@pytest.mark.task("ch05.2")
def test_an_item_write_is_a_node_though_it_returns_none():
    """`y[0] = 5.0` is operator.setitem, whose result holds no tensor: it is recorded
    anyway, because it changes y (a mutating op is never folded into a constant)."""
    assert_same_as_torch(samples.write_items, torch.randn(4))


@pytest.mark.task("ch05.2")
def test_a_float_the_algebra_made_a_number_is_computed_by_the_graph():
    """`-x.shape[0] * 0.0` on a dynamic size is 0 to sympy: the example value has no
    symbol left, yet it comes from one. Folded to 0.0, `x / 0.0` would be +inf, where
    eager divides by -0.0 (-inf): it stays a node (torch.compile's graph computes it too)."""
    calls = [Call((torch.ones(n),)) for n in (2, 3, 4)]  # dynamic from the second call
    eager = run_eager(samples.over_negative_zero, calls)
    ours = run_minidynamo(samples.over_negative_zero, calls)
    assert compare_with_eager(eager, ours) == []
    assert (ours.outcomes[2].value == float("-inf")).all()


# -- ch05.3: OutputGraph.call_graph --------------------------------------------------------

@pytest.mark.task("ch05.3")
def test_the_backend_gets_the_graph_and_the_real_inputs():
    x, w = torch.randn(2, 3), torch.randn(3, 4)
    backend = RecordingBackend()
    result = minidynamo.compile(programs.shapes, backend=backend)(x, w)
    expected = programs.shapes(x, w)
    torch.testing.assert_close(result, expected)
    (gm,), (inputs,) = backend.graphs, backend.example_inputs
    assert isinstance(gm, torch.fx.GraphModule)
    assert len(inputs) == 2 and inputs[0] is x and inputs[1] is w
    assert len(placeholder_names(gm)) == len(inputs)


@pytest.mark.task("ch05.3")
def test_the_compiled_callable_is_what_runs():
    calls = []

    def backend(gm, example_inputs):
        def run(*args):
            calls.append(len(args))
            return [-value for value in gm(*args)]  # visibly not the graph's own result
        return run

    x = torch.randn(3)
    result = minidynamo.compile(programs.chain, backend=backend)(x)
    torch.testing.assert_close(result, -programs.chain(x))
    assert calls == [1]


@pytest.mark.task("ch05.3")
def test_unused_inputs_and_empty_graphs_as_in_torch_compile():
    assert_same_as_torch(programs.unused_input, torch.randn(3), torch.randn(2))
    assert_same_as_torch(programs.no_tensor_work, torch.randn(3), 4)
    assert_same_as_torch(programs.multiple_results, torch.randn(3, 5))


@pytest.mark.task("ch05.3")
def test_a_real_backend_compiles_the_graph():
    assert_same_as_torch(programs.chain, torch.randn(3), backend="aot_eager")


@pytest.mark.task("ch05.3")
@pytest.mark.parametrize("fn", [samples.empty_no_grad, samples.no_grad_metadata],
                         ids=lambda fn: fn.__name__)
def test_an_empty_grad_mode_block_leaves_no_toggles(fn):
    """A no_grad block with no operation inside leaves `_set_grad_enabled(False)` and
    `_set_grad_enabled(True)` next to each other: dropped, as torch.compile drops them."""
    assert_same_as_torch(fn, torch.randn(3))


@pytest.mark.task("ch05.3")
def test_a_graph_that_only_switches_grad_mode():
    """An empty no_grad block alone is no graph; `torch.set_grad_enabled(False)` before a
    break is one: without it the mode would stay on and `y` would require grad."""
    assert_same_as_torch(samples.only_an_empty_no_grad, torch.randn(3), 2)
    assert_same_as_torch(samples.grad_off_then_break, torch.randn(3, requires_grad=True))


@pytest.mark.task("ch05.3")
def test_a_graph_with_operations_and_no_output_still_runs():
    """`x.mul_(2); return n`: nothing leaves the graph, but it changes x, so it is compiled
    and called; only a graph with neither outputs nor operations is skipped."""
    comparison = assert_same_as_torch(samples.scale_in_place, torch.randn(3), 2)
    assert comparison.minidynamo.graph_count == 1


class LogRecords(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@contextlib.contextmanager
def graph_code_log(logger_name):
    """The messages of a graph_code logger (minidynamo's or torch's), switched on here."""
    logger, records = logging.getLogger(logger_name), LogRecords()
    saved = logger.level, logger.propagate, logger.handlers
    logger.handlers, logger.propagate = [records], False
    logger.setLevel(logging.DEBUG)
    try:
        yield records.messages
    finally:
        logger.setLevel(saved[0])
        logger.propagate, logger.handlers = saved[1:]


def without_names(message):
    """A graph_code message without what differs by design: the graph's number (torch
    adds a unique id) and the file name torch puts before `class GraphModule`."""
    message = re.sub(r"__compiled_fn_\d+(_[0-9a-f]{8}(_[0-9a-f]{4}){3}_[0-9a-f]{12})?",
                     "__compiled_fn_N", message)
    return re.sub(r"\n \S+\.py class GraphModule", "\n class GraphModule", message)


@pytest.mark.task("ch05.3")
@pytest.mark.parametrize("fn, shapes", [
    (programs.shapes, [(2, 3), (3, 4)]),
    (programs.multiple_results, [(3, 5)]),
], ids=lambda value: getattr(value, "__name__", ""))
def test_the_graph_code_log_is_torch_compiles(fn, shapes, capsys):
    """MINIDYNAMO_LOGS=graph_code prints each graph as TORCH_LOGS=graph_code does (with
    strides and devices), to the log, not to stdout."""
    args = [torch.randn(shape) for shape in shapes]
    torch._dynamo.reset()
    with graph_code_log("torch._dynamo.output_graph.__graph_code") as theirs:
        torch.compile(fn, backend="eager")(*args)
    with graph_code_log("minidynamo.graph_code") as ours:
        minidynamo.compile(fn)(*args)
    assert len(ours) == 1 and ours[0].startswith("TRACED GRAPH\n ===== __compiled_fn_")
    assert [without_names(m) for m in ours] == [without_names(m) for m in theirs]
    assert capsys.readouterr().out == ""


@pytest.mark.task("ch05.3")
@pytest.mark.parametrize("fn, shapes", [
    (programs.chain, [(3,)]),
    (samples.break_on_data, [(4,)]),
], ids=lambda value: getattr(value, "__name__", ""))
def test_explain_sees_the_compiled_graphs(fn, shapes):
    """minidynamo.explain reports the graphs call_graph compiled, and the breaks at which a
    partial graph was compiled, as torch._dynamo.explain does."""
    args = [torch.randn(shape) for shape in shapes]
    theirs = torch._dynamo.explain(fn)(*args)
    ours = minidynamo.explain(fn)(*args)
    assert (ours.graph_count, ours.graph_break_count) == \
        (theirs.graph_count, theirs.graph_break_count)
    assert [normalize_graph(gm) for gm in ours.graphs] == \
        [normalize_graph(gm) for gm in theirs.graphs]
    assert len(ours.compiled_break_reasons) == len(theirs.break_reasons)
