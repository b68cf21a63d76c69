"""Backends: what turns a captured FX graph into something callable (chapter 10).

A backend is any callable `(gm: fx.GraphModule, example_inputs: list[Tensor]) ->
callable`, exactly torch.compile's protocol, so torch's own backends plug in.
Names map to backends through a registry:

    eager      run the GraphModule as it is (no compilation): shows what was captured
    aot_eager  torch's AOTAutograd with a no-op compiler (forward and backward graphs)
    inductor   torch's Inductor compiler (`torch._inductor.compile_fx.compile_fx`)

Compare with TorchDynamo: `torch/_dynamo/backends/registry.py`
(`register_backend`, `lookup_backend`) and `backends/debugging.py`.
"""

from __future__ import annotations

from typing import Any, Callable

import torch

Backend = Callable[[torch.fx.GraphModule, list[torch.Tensor]], Callable[..., Any]]

_BACKENDS: dict[str, Backend] = {}


def register_backend(name: str) -> Callable[[Backend], Backend]:
    """Decorator: make a backend available by name."""

    def register(backend: Backend) -> Backend:
        _BACKENDS[name] = backend
        return backend

    return register


def lookup_backend(backend: str | Backend) -> Backend:
    """A backend callable from a name or a callable."""
    if callable(backend):
        return backend
    if backend not in _BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; known: {', '.join(sorted(_BACKENDS))}")
    return _BACKENDS[backend]


def list_backends() -> list[str]:
    return sorted(_BACKENDS)


@register_backend("eager")
def eager(gm: torch.fx.GraphModule, example_inputs: list[torch.Tensor]) -> Callable[..., Any]:
    """Run the captured graph as Python code: no compilation at all."""
    return gm.forward


@register_backend("aot_eager")
def aot_eager(gm: torch.fx.GraphModule, example_inputs: list[torch.Tensor]) -> Callable[..., Any]:
    """torch's AOTAutograd with the no-op compiler, as `torch.compile(backend="aot_eager")`."""
    from torch._dynamo.backends.debugging import aot_eager as torch_aot_eager

    return torch_aot_eager(gm, example_inputs)


@register_backend("inductor")
def inductor(gm: torch.fx.GraphModule, example_inputs: list[torch.Tensor]) -> Callable[..., Any]:
    """torch's Inductor compiler, as `torch.compile(backend="inductor")`."""
    from torch._inductor.compile_fx import compile_fx

    return compile_fx(gm, example_inputs)
