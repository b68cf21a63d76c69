"""Backends: what turns a captured FX graph into something callable (chapter 10).

A backend is any callable `(gm: fx.GraphModule, example_inputs: list) -> callable`,
exactly torch.compile's protocol, so torch's own backends plug in. The registry
(`registry.py`) maps names to backends; importing this package registers minidynamo's:

    eager       run the GraphModule as it is (no compilation): shows what was captured
    aot_eager   AOTAutograd with a no-op compiler (forward and backward ATen graphs)
    inductor    torch's Inductor compiler (`torch._inductor.compile_fx.compile_fx`)
    cudagraphs  torch's CUDA-graphs backend (CUDA inputs; on CPU the graphs run as they are)
    npu         torchair's backend for Ascend NPUs (`npu.py`; needs torch_npu and CANN)
    fake_npu    the NPU hand-off checked on the CPU: records what torchair would receive

Compare with TorchDynamo: `torch/_dynamo/backends/` (`registry.py`, `common.py`,
`debugging.py`, `cudagraphs.py`) and torch_npu's `torchair.get_npu_backend`.
"""

from minidynamo.backends.common import OpCounter, aot_backend, count_ops
from minidynamo.backends.npu import FakeNpuBackend, NpuUnavailable, npu_backend, torchair_problems
from minidynamo.backends.registry import (
    Backend,
    InvalidBackend,
    list_backends,
    lookup_backend,
    register_backend,
)

__all__ = [
    "Backend", "FakeNpuBackend", "InvalidBackend", "NpuUnavailable", "OpCounter", "aot_backend",
    "count_ops", "list_backends", "lookup_backend", "npu_backend", "register_backend",
    "torchair_problems",
]
