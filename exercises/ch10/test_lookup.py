"""Graded tests for lookup_backend (ch10.2): names, callables, entry points, torch's names.

`minidynamo.compile(fn, backend=...)` calls your `lookup_backend`. A callable is the
backend itself; a name is looked up in minidynamo's registry, then in the entry-point
group `minidynamo_backends`, then in torch's registry; a backend found by name that has
`check_available` is checked at once; an unknown name is `InvalidBackend`.
"""

from __future__ import annotations

import functools

import pytest
import torch

import minidynamo
from minidynamo.backends import common, lookup_backend, registry


@pytest.fixture
def clean_registry():
    """Registrations made by the test are forgotten after it (the dicts themselves stay:
    your function reads them)."""
    saved = dict(registry._BACKENDS), dict(registry._TAGS)
    yield registry
    for table, contents in zip((registry._BACKENDS, registry._TAGS), saved):
        table.clear()
        table.update(contents)


def affine(x):
    return x * 3 + 1


def recording(calls, tag):
    def backend(gm, example_inputs):
        calls.append(tag)
        return gm.forward

    return backend


@pytest.mark.task("ch10.2")
@pytest.mark.parametrize("name", ["eager", "aot_eager", "inductor", "cudagraphs", "fake_npu"])
def test_registered_names_give_the_registered_backend(name):
    assert lookup_backend(name) is registry._BACKENDS[name]


@pytest.mark.task("ch10.2")
def test_minidynamos_names_come_before_torchs():
    assert lookup_backend("aot_eager") is common.aot_eager
    assert lookup_backend("aot_eager") is not torch._dynamo.lookup_backend("aot_eager")


@pytest.mark.task("ch10.2")
def test_a_callable_is_the_backend_itself():
    calls = []
    backend = recording(calls, "function")
    assert lookup_backend(backend) is backend
    partial = functools.partial(lambda gm, inputs, tag: calls.append(tag) or gm.forward, tag="partial")
    assert lookup_backend(partial) is partial
    counter = minidynamo.backends.OpCounter()
    assert lookup_backend(counter) is counter
    for each in (backend, partial, counter):
        torch.testing.assert_close(minidynamo.compile(affine, backend=each)(torch.ones(2)),
                                   affine(torch.ones(2)))
    assert calls == ["function", "partial"] and len(counter.graphs) == 1


@pytest.mark.task("ch10.2")
def test_a_name_registered_by_the_user_is_compiled_with(clean_registry):
    calls = []
    minidynamo.register_backend(recording(calls, "mine"), name="mine")
    minidynamo.compile(affine, backend="mine")(torch.ones(2))
    assert calls == ["mine"]


@pytest.mark.task("ch10.2")
def test_an_entry_point_is_loaded_and_registered(clean_registry, tmp_path, monkeypatch):
    """An installed package that offers a backend in the group `minidynamo_backends`
    (here a distribution's metadata written to a folder put on sys.path)."""
    metadata = tmp_path / "offers_a_backend-1.0.dist-info"
    metadata.mkdir()
    (metadata / "METADATA").write_text("Metadata-Version: 2.1\nName: offers-a-backend\nVersion: 1.0\n")
    (metadata / "entry_points.txt").write_text(
        f"[{registry.ENTRY_POINT_GROUP}]\npackaged = minidynamo.backends.common:run_as_is\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert "packaged" not in registry._BACKENDS
    assert lookup_backend("packaged") is common.run_as_is
    assert registry._BACKENDS["packaged"] is common.run_as_is  # registered once found
    calls = []
    minidynamo.register_backend(recording(calls, "other"), name="other")
    assert lookup_backend("other") is not common.run_as_is  # not every name is the package's


@pytest.mark.task("ch10.2")
def test_a_name_only_torch_knows_is_torchs_backend():
    name = "minidynamo_graded_only_in_torch"
    if name not in torch._dynamo.list_backends(exclude_tags=()):
        torch._dynamo.register_backend(lambda gm, inputs: gm.forward, name=name)
    assert lookup_backend(name) is torch._dynamo.lookup_backend(name)
    assert lookup_backend("tvm") is torch._dynamo.lookup_backend("tvm")


@pytest.mark.task("ch10.2")
@pytest.mark.parametrize("name", ["inductr", "", "EAGER"])
def test_an_unknown_name_is_invalid_backend_listing_the_known(name):
    with pytest.raises(minidynamo.InvalidBackend) as raised:
        lookup_backend(name)
    message = str(raised.value)
    assert f"unknown backend {name!r}" in message
    for known in ("eager", "inductor", "fake_npu", "tvm"):
        assert known in message
    assert raised.value.name == name


@pytest.mark.task("ch10.2")
@pytest.mark.parametrize("value", [3.5, None, ["eager"], b"eager"])
def test_neither_a_name_nor_a_callable_is_a_type_error(value):
    with pytest.raises(TypeError, match="a name or a callable"):
        lookup_backend(value)


@pytest.mark.task("ch10.2")
def test_check_available_runs_at_lookup(clean_registry):
    checked = []

    def needs_hardware(gm, example_inputs):
        return gm.forward

    def check():
        checked.append("checked")
        raise RuntimeError("no such accelerator here")

    needs_hardware.check_available = check
    minidynamo.register_backend(needs_hardware, name="needs_hardware")
    with pytest.raises(RuntimeError, match="no such accelerator"):
        minidynamo.compile(affine, backend="needs_hardware")
    assert checked == ["checked"]
    with pytest.raises(minidynamo.backends.NpuUnavailable, match="torch_npu"):
        lookup_backend("npu")

    def available(gm, example_inputs):
        return gm.forward

    available.check_available = lambda: checked.append("fine")
    minidynamo.register_backend(available, name="available")
    assert lookup_backend("available") is available and checked[-1] == "fine"
