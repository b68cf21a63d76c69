"""The process-wide settings a traced graph bakes in (chapter 9's GLOBAL_STATE guard).

With grad mode off, a graph has no autograd in it; `torch.ones(3)` takes the default
dtype; `torch.get_num_threads()` folds to a number. Every cache entry's first guard
checks that these are as they were when its frame was traced, with the checker
torch.compile itself uses. The hooks registered for every module
(`register_module_forward_hook`) are process-wide too: an entry that called a module
checks that there are still none (`global_module_hooks`).

Compare with TorchDynamo: `GlobalStateGuard` in `torch/csrc/dynamo/guards.cpp`,
`___check_global_state` in `torch/_dynamo/guards.py`.
"""

from __future__ import annotations

import functools

import torch
from torch._C._dynamo.guards import GlobalStateGuard


class GlobalState:
    """The process-wide torch settings a traced graph bakes in, as they were when tracing
    began: torch's own checker of them (its C++ `GlobalStateGuard`, the `GLOBAL_STATE`
    guard of torch.compile: grad mode, default dtype, deterministic algorithms, autocast
    per device, TF32 and reduced-precision reductions, the number of threads, the
    torch-function state), and inference mode."""

    def __init__(self) -> None:
        self.torch_state = GlobalStateGuard()
        self.inference_mode = torch.is_inference_mode_enabled()

    def holds(self) -> bool:
        return self.torch_state.check() and (
            torch.is_inference_mode_enabled() is self.inference_mode)

    def changed(self) -> str:
        """`GLOBAL_STATE changed: grad_mode, num_threads`: the settings that differ now."""
        names = self.torch_state.reason().split()
        if torch.is_inference_mode_enabled() is not self.inference_mode:
            names.append("inference_mode")
        return f"GLOBAL_STATE changed: {', '.join(names)}"


@functools.cache
def global_module_hooks() -> tuple[dict, ...]:
    """The hooks `nn.modules.module.register_module_*_hook` add for every module: the
    dicts themselves, which registering a hook fills in place (one tuple, so that the
    guard on them, `not any(___global_module_hooks)`, is added once per entry)."""
    from torch.nn.modules import module

    return (module._global_forward_hooks, module._global_forward_pre_hooks,
            module._global_backward_hooks, module._global_backward_pre_hooks)
