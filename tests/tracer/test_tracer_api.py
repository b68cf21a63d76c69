"""The public API: compile(), graph breaks and fallbacks, explain(), backends, modules."""

from __future__ import annotations

import types

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


def test_compiling_a_compiled_function_or_module_compiles_the_original():
    def f(x):
        return x.sin() + 1

    counter = minidynamo.testing.CompileCounter()
    twice = minidynamo.compile(minidynamo.compile(f), backend=counter)
    assert torch.equal(twice(torch.ones(2)), f(torch.ones(2)))
    assert counter.frame_count == 1 and counter.op_count == 2
    explained = minidynamo.explain(minidynamo.compile(f))(torch.ones(2))
    assert explained.graph_count == 1
    module = torch.nn.Linear(2, 2)
    recompiled = minidynamo.compile(minidynamo.compile(module), backend=counter)
    assert torch.equal(recompiled(torch.ones(2)), module(torch.ones(2)))
    assert counter.frame_count == 2


def test_fullgraph_raises_the_break_with_reason_file_and_line():
    with pytest.raises(minidynamo.Unsupported) as info:
        minidynamo.compile(breaks, fullgraph=True)(torch.ones(2))
    error = info.value
    assert error.kind.id == "MD0003"
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


def prints_first(x):
    print("side effect")
    return x + 1


def test_break_messages_say_what_happens_to_the_frame(caplog, capsys):
    with caplog.at_level("INFO", logger="minidynamo"):
        minidynamo.compile(breaks)(torch.ones(2))
        minidynamo.compile(prints_first)(torch.ones(2))
        with pytest.raises(minidynamo.Unsupported):
            minidynamo.compile(breaks, fullgraph=True)(torch.ones(2))
    messages = [record.getMessage().splitlines()[0] for record in caplog.records]
    assert messages == [
        "minidynamo: graph break in breaks, compiling a partial graph, then resuming after it.",
        "minidynamo: graph break in prints_first, no graph before it, then resuming after it.",
        "minidynamo: graph break in breaks, raising it (fullgraph=True).",
    ]


def test_internal_errors_fall_back_unless_strict(caplog, monkeypatch):
    def buggy_transform(*args, **kwargs):
        raise RuntimeError("tracer bug")

    def fn(x):
        return x + 1

    monkeypatch.setattr(minidynamo.convert_frame, "transform_code", buggy_transform)
    with minidynamo.config.patch(strict=False), caplog.at_level("WARNING", logger="minidynamo"):
        assert torch.equal(minidynamo.compile(fn)(torch.ones(1)), torch.full((1,), 2.0))
    assert "internal error in" in caplog.text and "running it eagerly" in caplog.text
    with pytest.raises(minidynamo.InternalError, match="tracer bug"):
        minidynamo.compile(fn)(torch.ones(1))


def failing_backend(gm, example_inputs):
    raise ValueError("backend bug")


def adds_one(x):
    return x.sin() + 1


@pytest.mark.parametrize("strict", [False, True])
def test_a_failing_backend_raises_backend_compiler_failed_as_torch_does(strict):
    torch._dynamo.reset()
    with torch._dynamo.config.patch(suppress_errors=False):
        with pytest.raises(torch._dynamo.exc.BackendCompilerFailed) as torch_info:
            torch.compile(adds_one, backend=failing_backend)(torch.ones(2))
    assert not minidynamo.config.suppress_errors  # torch's default too: raise, no fallback
    with minidynamo.config.patch(strict=strict):
        with pytest.raises(minidynamo.BackendCompilerFailed) as info:
            minidynamo.compile(adds_one, backend=failing_backend)(torch.ones(2))
    ours, theirs = info.value, torch_info.value
    assert isinstance(ours, RuntimeError) and isinstance(theirs, RuntimeError)
    assert ours.backend_name == theirs.backend_name == "failing_backend"
    assert type(ours.inner_exception) is type(theirs.inner_exception) is ValueError
    assert ours.__cause__ is ours.inner_exception  # the backend's own error, chained
    assert str(ours).splitlines()[:2] == str(theirs).splitlines()[:2]  # backend=... raised:
    assert "adds_one" in str(ours)  # and the frame whose graph failed


def test_suppress_errors_runs_the_frame_eagerly_when_the_backend_fails(caplog):
    torch._dynamo.reset()
    x = torch.ones(2)
    with torch._dynamo.config.patch(suppress_errors=True):
        expected = torch.compile(adds_one, backend=failing_backend)(x)
    with minidynamo.config.patch(suppress_errors=True), caplog.at_level("WARNING", "minidynamo"):
        result = minidynamo.compile(adds_one, backend=failing_backend)(x)
    assert torch.equal(result, expected) and torch.equal(result, adds_one(x))
    assert "backend 'failing_backend' failed on adds_one, running it eagerly" in caplog.text


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
    with pytest.raises(minidynamo.InvalidBackend, match="unknown backend"):
        minidynamo.compile(breaks, backend="nope")
    assert {"eager", "aot_eager", "inductor"} <= set(minidynamo.list_backends(exclude_tags=()))


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
    # set through the compiled module, an attribute is the original's (as on torch.compile's
    # OptimizedModule), and the next call sees it: a changed float, a swapped submodule
    compiled.scale = 5.0
    compiled.fc = torch.nn.Linear(4, 2)
    assert model.scale == 5.0 and model.fc is compiled.fc
    torch.testing.assert_close(compiled(x), model(x))
    del compiled.scale
    assert not hasattr(model, "scale")


def test_the_training_flag_of_a_compiled_module_is_the_originals():
    """`compiled.training = True` set the wrapper's own flag, and the next call read the
    module's, still False; on torch.compile's OptimizedModule it is the module's."""
    class Dropping(torch.nn.Module):
        def forward(self, x):
            return x * (2 if self.training else 1)

    for compile_fn in (torch.compile, minidynamo.compile):
        model = Dropping().eval()
        compiled = compile_fn(model, backend="eager")
        x = torch.ones(2)
        assert torch.equal(compiled(x), x) and compiled.training is False
        compiled.training = True
        assert model.training is True and compiled.training is True
        assert torch.equal(compiled(x), x * 2)
        compiled.eval()
        assert (model.training, compiled.training) == (False, False)


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


def test_a_function_with_its_own_globals_and_builtins_runs_as_in_eager():
    """Sandboxes and some libraries make functions with a globals dict of their own
    (`types.FunctionType(code, {'__builtins__': {...}})`): the compiled wrapper and the
    generated code must not need anything from it."""
    namespace = {"__builtins__": {"len": len}}
    exec("def f(x):\n    return x * len([1, 2])\n", namespace)
    own = types.FunctionType(namespace["f"].__code__, {"__builtins__": {"len": len}})
    x = torch.ones(2)
    explained = minidynamo.explain(own)(x)
    assert explained.graph_count == 1
    assert torch.equal(minidynamo.compile(own)(x), own(x))


SANDBOXED = '''
def f(x):
    y = torch.nn.functional.relu(x) * len([1, 2])
    torch._dynamo.graph_break()
    return y + 1
'''


def sandboxed(builtins_dict: dict):
    namespace = {"__builtins__": builtins_dict, "torch": torch}
    exec(SANDBOXED, namespace)
    return namespace["f"]


def test_a_module_reloaded_after_a_break_needs_no_import_from_the_frames_builtins():
    """The code after a break reloads `torch.nn.functional` (an ImportSource) from a
    global, not with IMPORT_NAME: the function's own builtins have no `__import__`."""
    f, x = sandboxed({"len": len}), torch.randn(3)
    minidynamo.reset()
    assert torch.equal(minidynamo.compile(f)(x), f(x))
    assert minidynamo.explain(f)(x).graph_count == 2


def test_builtins_are_looked_up_in_the_functions_own_builtins():
    x = torch.randn(3)
    custom = sandboxed({"len": lambda items: 10})  # `len` means something else in there
    minidynamo.reset()
    assert torch.equal(minidynamo.compile(custom)(x), custom(x))
    missing = sandboxed({})  # no `len` at all: the NameError eager raises
    with pytest.raises(NameError, match="'len' is not defined"):
        missing(x)
    with pytest.raises(NameError, match="'len' is not defined"):
        minidynamo.compile(missing)(x)
