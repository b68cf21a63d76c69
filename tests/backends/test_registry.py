"""The backend registry and the hand-off to a backend, against torch.compile's (chapter 10).

A backend gets what torch.compile gives it: the graph, the real tensors, the SymInt of
every input that is a symbol, and a TracingContext holding the frame's FakeTensorMode
(so that a backend that traces again, AOTAutograd or Inductor, keeps sizes symbolic).
"""

from __future__ import annotations

import importlib.metadata

import pytest
import torch

import minidynamo
from minidynamo.backends import registry


@pytest.fixture
def clean_registry(monkeypatch):
    """Registrations made by a test are forgotten after it."""
    monkeypatch.setattr(registry, "_BACKENDS", dict(registry._BACKENDS))
    monkeypatch.setattr(registry, "_TAGS", dict(registry._TAGS))


def double(x):
    return x * 2 + 1


def test_register_bare_with_a_name_and_called(clean_registry):
    calls = []

    @minidynamo.register_backend
    def bare(gm, example_inputs):
        calls.append("bare")
        return gm.forward

    @minidynamo.register_backend(name="named", tags=("debug",))
    def anything(gm, example_inputs):
        calls.append("named")
        return gm.forward

    minidynamo.register_backend(lambda gm, inputs: calls.append("called") or gm.forward, name="called")
    x = torch.ones(3)
    for name in ("bare", "named", "called"):
        torch.testing.assert_close(minidynamo.compile(double, backend=name)(x), double(x))
    assert calls == ["bare", "named", "called"]
    assert "bare" in minidynamo.list_backends() and "named" not in minidynamo.list_backends()
    assert "named" in minidynamo.list_backends(exclude_tags=())


def test_default_listing_leaves_out_debug_backends_as_torch_does():
    ours = minidynamo.list_backends()
    assert "eager" not in ours and "aot_eager" not in ours
    assert {"inductor", "cudagraphs"} <= set(ours) and {"inductor", "cudagraphs"} <= set(
        torch._dynamo.list_backends())
    assert {"eager", "aot_eager", "fake_npu"} <= set(minidynamo.list_backends(exclude_tags=()))


def test_registering_badly_is_a_clear_error(clean_registry):
    with pytest.raises(TypeError, match="must be callable"):
        minidynamo.register_backend(42, name="number")
    minidynamo.register_backend(lambda gm, inputs: gm.forward, name="taken")
    with pytest.raises(ValueError, match="'taken' is registered already"):
        minidynamo.register_backend(lambda gm, inputs: gm.forward, name="taken")
    with pytest.raises(TypeError, match="a name or a callable"):
        minidynamo.compile(double, backend=3.5)


def test_an_unknown_name_lists_the_known_ones():
    with pytest.raises(minidynamo.InvalidBackend) as raised:
        minidynamo.compile(double, backend="inductr")
    message = str(raised.value)
    assert "unknown backend 'inductr'" in message and "inductor" in message
    assert "register_backend" in message and isinstance(raised.value, RuntimeError)


def test_an_entry_point_backend_is_found_by_name(clean_registry, monkeypatch):
    entry = importlib.metadata.EntryPoint(
        name="from_a_package", value="minidynamo.backends.common:eager",
        group=registry.ENTRY_POINT_GROUP)
    monkeypatch.setattr(registry, "entry_points",
                        lambda group: [entry] if group == registry.ENTRY_POINT_GROUP else [])
    assert "from_a_package" not in registry._BACKENDS
    assert minidynamo.lookup_backend("from_a_package") is minidynamo.backends.common.eager
    assert "from_a_package" in minidynamo.list_backends()


def test_torchs_registered_backends_work_by_name():
    received = []

    def only_in_torch(gm, example_inputs):
        received.append(len(example_inputs))
        return gm.forward

    if "minidynamo_test_only_in_torch" not in torch._dynamo.list_backends(exclude_tags=()):
        torch._dynamo.register_backend(only_in_torch, name="minidynamo_test_only_in_torch")
    x = torch.ones(3)
    compiled = minidynamo.compile(double, backend="minidynamo_test_only_in_torch")
    torch.testing.assert_close(compiled(x), double(x))
    assert received == [1]


def test_a_backend_that_raises_or_returns_no_callable_names_itself_and_the_frame():
    def broken(gm, example_inputs):
        raise ValueError("no kernels today")

    def returns_a_number(gm, example_inputs):
        return 3

    x = torch.ones(3)
    with pytest.raises(minidynamo.BackendCompilerFailed, match="backend='broken' raised") as raised:
        minidynamo.compile(double, backend=broken)(x)
    assert "no kernels today" in str(raised.value) and "double" in str(raised.value)
    with pytest.raises(minidynamo.BackendCompilerFailed, match="returned int, not a callable"):
        minidynamo.compile(double, backend=returns_a_number)(x)


def test_suppress_errors_runs_the_frame_eagerly_with_a_warning(monkeypatch, caplog):
    monkeypatch.setattr(minidynamo.config, "suppress_errors", True)

    def broken(gm, example_inputs):
        raise ValueError("no kernels today")

    x = torch.ones(3)
    torch.testing.assert_close(minidynamo.compile(double, backend=broken)(x), double(x))
    assert "backend 'broken' failed on double, running it eagerly" in caplog.text
    assert "no kernels today" in caplog.text


def received_inputs(compile_fn, calls, **options):
    """What the backend got on each compile: the example inputs' kinds, and whether the
    fake mode was found through the TracingContext."""
    seen = []

    def backend(gm, example_inputs):
        context = torch._guards.TracingContext.try_get()
        seen.append(([type(each).__name__ for each in example_inputs],
                     context is not None and context.fake_mode is not None))
        return gm.forward

    def scale(x, n):
        return x * n

    compiled = compile_fn(scale, backend=backend, **options)
    for x, n in calls:
        compiled(x, n)
    return seen


CALLS = [(torch.ones(2), 2), (torch.ones(2), 3), (torch.ones(5), 4)]


@pytest.mark.parametrize("dynamic", [None, True, False])
def test_example_inputs_are_what_torch_compile_passes(dynamic):
    torch._dynamo.reset()
    expected = received_inputs(torch.compile, CALLS, dynamic=dynamic)
    minidynamo.reset()
    assert received_inputs(minidynamo.compile, CALLS, dynamic=dynamic) == expected


def test_inductor_keeps_a_dynamic_size_symbolic():
    """Inductor must see the frame's ShapeEnv: with a fake mode of its own it would
    compile for the first size, and the next size would fail its assertions."""

    def reduce(x):
        return (x * 2).sum(0) + x.shape[0]

    compiled = minidynamo.compile(reduce, backend="inductor", dynamic=True)
    for rows in (2, 5, 7):
        x = torch.randn(rows, 3)
        torch.testing.assert_close(compiled(x), reduce(x))
