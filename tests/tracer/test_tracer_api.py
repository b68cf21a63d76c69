"""The public API: compile(), graph breaks and fallbacks, explain(), backends, modules."""

from __future__ import annotations

import pytest
import torch
import torch._dynamo

import minidynamo
import minidynamo.testing


def breaks(x):
    y = x * 2
    if y.sum() > 0:
        return y + 1
    return y - 1


def test_compile_wraps_the_function():
    compiled = minidynamo.compile(breaks)
    assert compiled.__name__ == "breaks" and compiled.__wrapped__ is breaks


def test_fullgraph_raises_the_break_with_reason_file_and_line():
    with pytest.raises(minidynamo.Unsupported) as info:
        minidynamo.compile(breaks, fullgraph=True)(torch.ones(2))
    error = info.value
    assert error.kind.id == "GB0003"
    assert error.filename == __file__ and error.lineno == breaks.__code__.co_firstlineno + 2
    assert "if y.sum() > 0:" in str(error) and "Hint:" in str(error)


def breaks_in_try(x):
    y = x * 2
    try:
        if y.sum() > 0:
            return y + 1
    except ValueError:
        pass
    return y - 1


def test_a_graph_break_compiles_a_partial_graph_and_resumes():
    counter = minidynamo.testing.CompileCounter()
    result = minidynamo.compile(breaks, backend=counter)(torch.ones(2))
    assert torch.equal(result, torch.full((2,), 3.0))
    assert counter.frame_count == 2  # the partial graph, then the resume function's


def test_a_graph_break_in_a_try_block_falls_back_to_eager_with_a_warning(caplog):
    with caplog.at_level("WARNING", logger="minidynamo"):
        result = minidynamo.compile(breaks_in_try)(torch.ones(2))
    assert torch.equal(result, torch.full((2,), 3.0))
    assert "graph break in breaks_in_try, running it eagerly" in caplog.text


def test_internal_errors_fall_back_unless_strict(caplog):
    def failing_backend(gm, example_inputs):
        raise RuntimeError("backend bug")

    def fn(x):
        return x + 1

    with minidynamo.config.patch(strict=False), caplog.at_level("WARNING", logger="minidynamo"):
        assert torch.equal(
            minidynamo.compile(fn, backend=failing_backend)(torch.ones(1)), torch.full((1,), 2.0)
        )
    assert "internal error" in caplog.text
    with pytest.raises(minidynamo.InternalError, match="backend bug"):
        minidynamo.compile(fn, backend=failing_backend)(torch.ones(1))


def test_explain_reports_graphs_ops_and_breaks():
    def no_break(x):
        return torch.relu(x) * 2

    explained = minidynamo.explain(no_break)(torch.ones(2))
    torch._dynamo.reset()
    reference = torch._dynamo.explain(no_break)(torch.ones(2))
    assert (explained.graph_count, explained.graph_break_count, explained.op_count) == (
        reference.graph_count,
        reference.graph_break_count,
        reference.op_count,
    )

    explained = minidynamo.explain(breaks)(torch.ones(2))
    torch._dynamo.reset()
    reference = torch._dynamo.explain(breaks)(torch.ones(2))
    assert (explained.graph_count, explained.graph_break_count) == (2, 1)
    assert (reference.graph_count, reference.graph_break_count) == (2, 1)
    assert "truth value of a tensor" in explained.break_reasons[0].reason
    assert "Graph Break Count: 1" in str(explained)

    explained = minidynamo.explain(breaks_in_try)(torch.ones(2))
    assert explained.graph_count == 0 and len(explained.break_reasons) == 1


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_named_backends_compute_the_same_values(backend):
    def fn(x, y):
        return torch.sin(x) @ y.t() + 1

    x, y = torch.randn(3, 4), torch.randn(2, 4)
    torch.testing.assert_close(minidynamo.compile(fn, backend=backend)(x, y), fn(x, y))


def test_unknown_backend_is_an_error():
    with pytest.raises(ValueError, match="unknown backend"):
        minidynamo.compile(breaks, backend="nope")
    assert {"eager", "aot_eager", "inductor"} <= set(minidynamo.list_backends())


def test_compiled_module_behaves_like_the_module():
    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(4, 2)
            self.scale = 3.0

        def forward(self, x):
            return self.fc(x) * self.scale

    model = Model()
    compiled = minidynamo.compile(model, fullgraph=True)
    x = torch.randn(5, 4)
    torch.testing.assert_close(compiled(x), model(x))
    assert compiled.scale == 3.0 and compiled.fc is model.fc
    assert isinstance(compiled, torch.nn.Module)


def test_reset_clears_the_counters():
    minidynamo.compile(lambda x: x + 1)(torch.ones(1))
    assert minidynamo.convert_frame.counters["frames"] >= 1
    minidynamo.reset()
    assert not minidynamo.convert_frame.counters


def test_inductor_backend_computes_the_same_values():
    def fn(x):
        return torch.sin(x) * 2 + 1

    x = torch.randn(8)
    torch.testing.assert_close(minidynamo.compile(fn, backend="inductor")(x), fn(x))
