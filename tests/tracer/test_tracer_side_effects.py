"""Chapter 5: the transformed frame, its graph call, rebuilt outputs and replayed side effects."""

from __future__ import annotations

import collections
import dis

import pytest
import torch
import torch._dynamo

import minidynamo
from minidynamo import convert_frame
from minidynamo.testing import CompileCounter
from tracer_helpers import run_minidynamo

COUNTER = 0


class Box:
    def __init__(self, value):
        self.value = value


def test_transformed_code_calls_the_compiled_graph_installed_as_a_global():
    def fn(x):
        return x.sin() + 1

    backend = lambda gm, inputs: gm.forward  # noqa: E731
    code, output = convert_frame.transform_code(fn, {"x": torch.ones(2)}, backend)
    names = [inst.argval for inst in dis.get_instructions(code) if inst.opname == "LOAD_GLOBAL"]
    assert names and names[0].startswith("__compiled_fn_")
    assert names[0] in fn.__globals__  # installed, as Dynamo does
    fn.__globals__.pop(names[0])


def test_no_tensor_operation_no_graph():
    def fn(x, n):
        return n * 2, [n] * 3, x  # x is reloaded from its source

    x = torch.ones(2)
    result, recorder = run_minidynamo(fn, x, 4)
    assert result == (8, [4, 4, 4], x) and result[2] is x
    assert recorder.graphs == []


def test_input_list_mutations_are_replayed_once():
    def fn(x, items, table):
        items.append(x * 2)
        items.insert(0, "first")
        table["double"] = items[-1]
        del table["old"]
        return items

    items, table = [], {"old": 1}
    result, recorder = run_minidynamo(fn, torch.ones(2), items, table)
    assert result is items  # the very same list, mutated in place
    assert items[0] == "first" and torch.equal(items[1], torch.full((2,), 2.0)) and len(items) == 2
    assert list(table) == ["double"] and table["double"] is items[1]
    assert len(recorder.graphs) == 1


def test_attribute_global_and_cell_writes_are_replayed():
    counter = 0

    def fn(x, box):
        global COUNTER
        nonlocal counter
        COUNTER += 1
        counter += 10
        box.value = box.value + x
        box.extra = "new"
        return x

    box = Box(torch.zeros(2))
    before = COUNTER
    run_minidynamo(fn, torch.ones(2), box)
    assert COUNTER == before + 1 and counter == 10
    assert torch.equal(box.value, torch.ones(2)) and box.extra == "new"


def test_module_attribute_write_is_replayed():
    class Counting(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.calls = 0

        def forward(self, x):
            self.calls += 1
            return x * self.calls

    model = Counting()
    compiled = minidynamo.compile(model, fullgraph=True)
    assert torch.equal(compiled(torch.ones(1)), torch.ones(1))
    assert torch.equal(compiled(torch.ones(1)), torch.full((1,), 2.0))
    assert model.calls == 2 and compiled.calls == 2


def test_new_objects_are_rebuilt_with_aliasing_kept():
    def fn(x):
        shared = [x + 1]
        box = Box(x * 2)
        box.tag = "made while tracing"
        return shared, shared, box, (lambda y: y + 1)

    shared, again, box, function = minidynamo.compile(fn, fullgraph=True)(torch.ones(2))
    assert shared is again
    assert (
        isinstance(box, Box)
        and box.tag == "made while tracing"
        and torch.equal(box.value, torch.full((2,), 2.0))
    )
    assert function(1) == 2


def test_tracing_never_runs_user_side_effects(caplog):
    calls = []

    def fn(x):
        calls.append("ran")  # recorded while tracing, replayed once after the graph
        y = x * 2
        if y.sum() > 0:  # graph break: replayed before the jump, resumed after it
            return y
        return -y

    with caplog.at_level("INFO", logger="minidynamo"):
        minidynamo.compile(fn)(torch.ones(2))
    assert calls == ["ran"]  # once: replayed after the partial graph, never by tracing
    assert (
        "graph break in test_tracing_never_runs_user_side_effects.<locals>.fn, compiling a partial graph"
        in caplog.text
    )


def test_graph_outputs_follow_torch_order_return_value_first():
    def fn(x, items):
        items.append(x.sum())
        return x * 2

    items = []
    result, recorder = run_minidynamo(fn, torch.ones(2), items)
    outputs = recorder.graphs[0].graph.output_node().args[0]
    assert [node.name for node in outputs] == ["mul", "sum_1"]
    assert torch.equal(result, torch.full((2,), 2.0)) and torch.equal(items[0], torch.tensor(2.0))


def sets_data(x):
    x.data = torch.zeros(2)
    return x


def sets_data_of_a_result(x):
    y = x * 2
    y.data = torch.ones(3)
    return y + 1


def sets_grad(x):
    y = x * 2
    y.grad = torch.ones(3)
    return y.grad + y


def sets_a_plain_attribute(x):
    x.tag = 3
    return x * x.tag


def test_attribute_stores_on_tensors_are_never_dropped():
    """`x.data = y` was traced as a `__setattr__` node on the FakeTensor and lost (the
    input kept its data). On an input it is now recorded as torch.compile records it
    (`set_` under no_grad, one graph), and `x.tag = 3` is replayed after the graph; on a
    tensor made in the frame it breaks the graph (MD0012), as torch.compile breaks, and
    runs natively, as `y.grad = g` does (torch.compile keeps that one in its graph): the
    values, the inputs and the attributes are eager's."""
    for fn in (sets_data, sets_data_of_a_result, sets_grad, sets_a_plain_attribute):
        expected_input, input_ = torch.ones(3), torch.ones(3)
        expected = fn(expected_input)
        for backend in ("eager", "aot_eager"):
            input_ = torch.ones(3)
            result = minidynamo.compile(fn, backend=backend)(input_)
            assert torch.equal(result, expected), (fn.__name__, backend)
            assert torch.equal(input_, expected_input), (fn.__name__, backend)
            assert getattr(input_, "tag", None) == getattr(expected_input, "tag", None)
        kinds = {reason.kind.id for reason in minidynamo.explain(fn)(torch.ones(3)).break_reasons}
        assert ("MD0012" in kinds) == (fn in (sets_data_of_a_result, sets_grad)), fn.__name__
        if fn is not sets_grad:  # (torch.compile keeps `.grad =` on a tensor made in the
            torch._dynamo.reset()  # frame in its graph: minidynamo does not, yet)
            theirs = torch._dynamo.explain(fn)(torch.ones(3))
            assert ("MD0012" in kinds) == (theirs.graph_break_count > 0), fn.__name__


def test_setting_data_keeps_the_version_counter_and_the_entry():
    """`x.data = y` leaves x's version counter as eager leaves it (the graph lowers the
    one `set_` adds), and the entry holds for the next call: its TENSOR_MATCH compares
    the input's sizes, not the sizes the trace's FakeTensor took from `y`."""
    def replaces(x):
        before = x * 2
        x.data = torch.zeros(5)
        return before, x + 1

    minidynamo.reset()
    counter = CompileCounter()
    compiled = minidynamo.compile(replaces, backend=counter)
    for _ in range(3):
        mine, theirs = torch.ones(3, 4), torch.ones(3, 4)
        results, expected = compiled(mine), replaces(theirs)
        assert all(torch.equal(a, b) for a, b in zip(results, expected))
        assert torch.equal(mine, theirs) and mine._version == theirs._version
    assert counter.frame_count == 1


def reorder_ordered_dict(x, od):
    od.move_to_end("a")
    od.move_to_end("c", last=False)
    return x + 1


def pop_and_put_back(x, d):
    value = d.pop("a")
    d["a"] = value + 1  # a key removed and put back goes to the end
    return x + 1


def assign_values_only(x, d):
    d["b"] = d["a"] + 10
    return x + 1


def grow_and_shrink(x, d):
    del d["b"]
    d["z"] = 26
    return x + 1


@pytest.mark.parametrize("fn, make", [
    (reorder_ordered_dict, lambda: collections.OrderedDict(a=1, b=2, c=3)),
    (pop_and_put_back, lambda: {"a": 1, "b": 2, "c": 3}),
    (pop_and_put_back, lambda: collections.OrderedDict(a=1, b=2, c=3)),
    (assign_values_only, lambda: collections.OrderedDict(a=1, b=2, c=3)),
    (grow_and_shrink, lambda: {"a": 1, "b": 2, "c": 3}),
])
def test_an_input_dict_ends_as_eager_leaves_it(fn, make):
    """The replay (`replace_entries`) writes what changed: the entries, in eager's order
    (an OrderedDict reordered by moving its keys), and an OrderedDict's iterator made
    before the call lives on exactly when it does in eager Python."""
    outcomes = []
    for run in (fn, minidynamo.compile(fn, backend="eager")):
        d = make()
        it = iter(d)
        next(it)
        run(torch.ones(2), d)
        try:
            rest = list(it)
        except RuntimeError as error:
            rest = str(error)
        outcomes.append((list(d.items()), rest))
    assert outcomes[1] == outcomes[0]
