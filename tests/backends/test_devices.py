"""Devices: one cache entry per device, and the CUDA backends (chapter 10).

The tensor guard checks the device (through the dispatch keys, and the device index),
so one function called with tensors on two devices gets two entries, as under
torch.compile; on a CPU-only machine the `meta` device stands in for the second one.
The CUDA tests skip cleanly without a GPU (`benchmarks/gpu_check.py` is the longer
check for a GPU machine).
"""

from __future__ import annotations

import pytest
import torch

import minidynamo
from minidynamo.testing import strict_mode

requires_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def affine(x):
    return x * 2 + 1


def compiles_per_call(compile_fn, reset, devices):
    reset()
    seen = []
    compiled = compile_fn(affine, backend=lambda gm, inputs: seen.append(
        [str(each.device) for each in inputs]) or gm.forward)
    for device in devices:
        result = compiled(torch.ones(2, device=device))
        assert result.device.type == torch.device(device).type
    return seen


def test_each_device_gets_its_own_entry_as_under_torch_compile():
    devices = ["cpu", "meta", "cpu", "meta"]
    expected = compiles_per_call(torch.compile, torch._dynamo.reset, devices)
    with strict_mode():
        assert compiles_per_call(minidynamo.compile, minidynamo.reset, devices) == expected
    assert expected == [["cpu"], ["meta"]]


def test_cudagraphs_on_cpu_inputs_runs_the_graph_as_it_is():
    x = torch.randn(4, 4)
    torch.testing.assert_close(minidynamo.compile(affine, backend="cudagraphs")(x), affine(x))


@requires_cuda
def test_cpu_and_cuda_get_separate_entries():
    devices = ["cpu", "cuda", "cpu", "cuda"]
    expected = compiles_per_call(torch.compile, torch._dynamo.reset, devices)
    with strict_mode():
        assert compiles_per_call(minidynamo.compile, minidynamo.reset, devices) == expected


@requires_cuda
@pytest.mark.parametrize("backend", ["inductor", "cudagraphs"])
def test_cuda_backends_equal_eager(backend):
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(),
                                torch.nn.Linear(32, 8)).cuda()
    compiled = minidynamo.compile(model, backend=backend)
    for seed in range(3):  # cudagraphs records on an early call and replays after
        x = torch.randn(4, 16, device="cuda", generator=torch.Generator("cuda").manual_seed(seed))
        with torch.no_grad():
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-3, atol=1e-3)
