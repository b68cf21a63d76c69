"""The Ascend NPU backend: the graph handed to torchair, and a stand-in for it (chapter 10).

On a machine with an Ascend NPU, `torch_npu` registers the "npu" device with torch
(through the PrivateUse1 dispatch key) and `torchair` turns FX graphs into graphs of
CANN's Graph Engine (GE). torchair's backend is a torch.compile backend like any other:

    config = torchair.CompilerConfig()          # config.mode = "reduce-overhead": ACL graph
    backend = torchair.get_npu_backend(compiler_config=config)
    torch.compile(model, backend=backend)       # or minidynamo.compile(model, backend=backend)

What it does with a graph is AOTAutograd's hand-off (`aot_backend` in `common.py`):
`aot_module_simplified(gm, example_inputs, fw_compiler=..., decompositions=...,
keep_inference_input_mutations=True)`, whose forward compiler converts each ATen
operator into a GE operator and compiles the GE graph ("max-autotune", the default), or
captures the kernels into an ACL graph and replays it ("reduce-overhead", the NPU's CUDA
graphs, which need static shapes).

`npu_backend(mode=...)` returns torchair's backend, and the name "npu" is it with the
default mode. Neither can run here: torch_npu 2.13.0 imports only where CANN is
installed (its `_C` links CANN's `libhccl.so`), so without it they raise
`NpuUnavailable`, naming what to install. What *can* be checked without an NPU is the
hand-off: `FakeNpuBackend` ("fake_npu") makes the same call to AOTAutograd, with a
compiler that records the forward graph, its example inputs and their devices in place
of the GE compiler, and checks each graph against what torchair's converter accepts
(`torchair_problems`). The graphs then run on the CPU as they are.
"""

from __future__ import annotations

import importlib.util
import operator
from dataclasses import dataclass, field
from typing import Any, Callable

import torch

from minidynamo.backends.common import aot_backend
from minidynamo.backends.registry import register_backend

MODES = ("max-autotune", "reduce-overhead")  # GE graph, ACL graph: torchair's config.mode


class NpuUnavailable(RuntimeError):
    """The NPU backend was asked for where torch_npu or torchair cannot be imported."""


def check_npu_available() -> None:
    """Raise `NpuUnavailable`, saying what to install, unless torch_npu and torchair
    import."""
    missing = [name for name in ("torch_npu", "torchair") if importlib.util.find_spec(name) is None]
    problem = f"{' and '.join(missing)} not installed" if missing else None
    if problem is None:
        try:
            import torch_npu  # noqa: F401  (registers the npu device with torch)
            import torchair  # noqa: F401
        except (ImportError, OSError) as error:
            problem = f"torch_npu does not import: {error}"
    if problem is not None:
        raise NpuUnavailable(
            f"the 'npu' backend needs an Ascend NPU machine: {problem}. Install the CANN "
            "toolkit (Ascend's drivers and libraries, with `source "
            "/usr/local/Ascend/ascend-toolkit/set_env.sh`), then `pip install "
            f"torch-npu=={torch.__version__.split('+')[0]}` (torchair ships with it). "
            "Without an NPU, backend='fake_npu' checks the same hand-off on the CPU")


def npu_backend(*, mode: str = "max-autotune", compiler_config: Any = None) -> Callable[..., Any]:
    """torchair's backend: GE graphs ("max-autotune") or ACL graphs ("reduce-overhead").
    `compiler_config` is a `torchair.CompilerConfig` to start from."""
    if mode not in MODES:
        raise ValueError(f"unknown NPU mode {mode!r}: one of {', '.join(MODES)}")
    check_npu_available()
    import torchair

    config = compiler_config if compiler_config is not None else torchair.CompilerConfig()
    config.mode = mode
    return torchair.get_npu_backend(compiler_config=config)


@register_backend
def npu(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable[..., Any]:
    """torchair's backend with its default configuration (GE graphs)."""
    return npu_backend()(gm, example_inputs)


npu.check_available = check_npu_available  # `lookup_backend("npu")` fails early, clearly


@dataclass
class NpuHandoff:
    """One graph as torchair's compiler would have received it."""

    graph: torch.fx.GraphModule  # the ATen graph after AOTAutograd
    kind: str  # "inference", "forward" or "backward"
    example_inputs: list[Any]
    devices: list[torch.device | None]  # each example input's device (None: not a tensor)


@dataclass
class FakeNpuBackend:
    """A stand-in for torchair on a machine without an NPU (backend name "fake_npu").

    Called with a captured graph, it hands the graph to AOTAutograd as torchair's
    backend does (torchair also passes its own table of decompositions,
    `get_npu_default_decompositions`, which needs torchair: the stand-in passes none, so
    its graphs hold those few operators undecomposed), records every ATen graph it gets back in `handoffs`, and
    raises `ValueError` listing the problems if a graph is not one torchair's
    converter accepts (`torchair_problems`). The recorded graphs run as they are."""

    mode: str = "max-autotune"
    handoffs: list[NpuHandoff] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"unknown NPU mode {self.mode!r}: one of {', '.join(MODES)}")
        self.__name__ = "fake_npu"

    def __call__(self, gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable[..., Any]:
        backend = aot_backend(self.recorder("forward"), self.recorder("backward"),
                              inference_compiler=self.recorder("inference"),
                              keep_inference_input_mutations=True)
        return backend(gm, example_inputs)

    def recorder(self, kind: str) -> Callable[..., Any]:
        def record(graph: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable[..., Any]:
            problems = torchair_problems(graph, example_inputs, self.mode)
            if problems:
                raise ValueError("torchair would reject this graph:\n  " + "\n  ".join(problems))
            self.handoffs.append(NpuHandoff(
                graph, kind, list(example_inputs),
                [getattr(each, "device", None) for each in example_inputs]))
            return graph.forward

        return record


register_backend(FakeNpuBackend(), name="fake_npu", tags=("debug",))


# What a call_function node of an ATen graph may call besides an ATen operator: reading
# one output of a multi-output operator (getitem), and arithmetic on symbolic sizes
# (the others, whose result is then not a tensor).
SYMBOLIC_HELPERS = (operator.getitem, operator.add, operator.sub, operator.mul,
                    operator.floordiv, operator.mod, operator.neg, operator.truediv,
                    operator.eq, operator.ne, operator.lt, operator.le, operator.gt,
                    operator.ge, torch.sym_float, torch.sym_int, torch.sym_max, torch.sym_min)


def torchair_problems(graph: torch.fx.GraphModule, example_inputs: list[Any], mode: str) -> list[str]:
    """Why torchair's converter would reject an ATen graph, one line each (none: it
    would take it).

    torchair converts node by node, so every call must be an ATen operator overload
    (`aten.mm.default`, not `torch.mm`: the graph must come from AOTAutograd), a
    `getitem` of a multi-output operator, or arithmetic on sizes (`SYMBOLIC_HELPERS`,
    `is_torchair_call`); every example input is a tensor, an int, a
    float, a bool or a symbol; the tensors share one device; and in "reduce-overhead"
    mode, an ACL graph replays kernels recorded for fixed shapes, so no input may be a
    symbol and no tensor may have a symbolic size (compile with dynamic=False)."""
    problems = []
    for node in graph.graph.nodes:
        if node.op in ("call_module", "call_method"):
            problems.append(f"node {node.name}: {node.op} {node.target!r} (only ATen operators)")
        elif node.op == "call_function" and not is_torchair_call(node):
            problems.append(f"node {node.name}: {getattr(node.target, '__name__', node.target)} "
                            "is not an ATen operator")
    devices = set()
    for index, value in enumerate(example_inputs):
        if isinstance(value, torch.Tensor):
            devices.add(value.device)
            symbolic = any(isinstance(size, torch.SymInt) for size in value.shape)
        elif isinstance(value, (torch.SymInt, torch.SymFloat, torch.SymBool)):
            symbolic = True
        elif isinstance(value, (int, float, bool)):
            symbolic = False
        else:
            problems.append(f"input {index}: a {type(value).__name__}, not a tensor or a number")
            continue
        if symbolic and mode == "reduce-overhead":
            problems.append(f"input {index}: symbolic ({value!r}); an ACL graph needs static "
                            "shapes: compile with dynamic=False")
    if len(devices) > 1:
        problems.append(f"inputs on several devices: {', '.join(sorted(map(str, devices)))}")
    return problems


def is_torchair_call(node: torch.fx.Node) -> bool:
    """Whether torchair converts this call_function node: an ATen operator, a getitem,
    or a size helper whose result is not a tensor (`x + y` on tensors is `operator.add`
    in a Dynamo graph, an ATen operator only after AOTAutograd)."""
    if isinstance(node.target, torch._ops.OpOverload) or node.target is operator.getitem:
        return True
    value = node.meta.get("val", node.meta.get("example_value"))
    return node.target in SYMBOLIC_HELPERS and not isinstance(value, torch.Tensor)
