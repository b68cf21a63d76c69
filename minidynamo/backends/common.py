"""The CPU and CUDA backends, and AOTAutograd's hand-off (chapter 10).

    eager       run the captured GraphModule as it is: shows what was captured
    aot_eager   AOTAutograd with compilers that run the graphs they get as they are:
                shows what AOTAutograd makes (forward and backward ATen graphs)
    inductor    torch's Inductor (`torch._inductor.compile_fx.compile_fx`)
    cudagraphs  torch's CUDA-graphs backend: records each AOT graph into a CUDA graph
                and replays it (CUDA inputs only; on CPU it runs the graphs as they are)

`aot_backend(fw_compiler, bw_compiler)` makes a backend out of compilers of ATen graphs:
it is how aot_eager, and the NPU backend (`npu.py`), hand a graph to AOTAutograd.

Compare with TorchDynamo: `torch/_dynamo/backends/common.py` (`aot_autograd`),
`debugging.py` (eager, aot_eager), `inductor.py`, `cudagraphs.py`.
"""

from __future__ import annotations

import collections
from typing import Any, Callable

import torch

from minidynamo.backends.registry import Backend, register_backend

# A compiler of one ATen graph: (gm, example inputs) -> a callable taking the inputs
GraphCompiler = Callable[[torch.fx.GraphModule, list[Any]], Callable[..., Any]]


@register_backend(tags=("debug",))
def eager(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable[..., Any]:
    """Run the captured graph as Python code: no compilation at all."""
    return gm.forward


def aot_backend(fw_compiler: GraphCompiler, bw_compiler: GraphCompiler | None = None, *,
                inference_compiler: GraphCompiler | None = None,
                decompositions: dict | None = None,
                keep_inference_input_mutations: bool = False) -> Backend:
    """A backend that hands the graph to AOTAutograd, which traces it again at the
    level of ATen operators, with autograd running: `fw_compiler` gets the forward
    graph and `bw_compiler` (default: `fw_compiler`) the backward graph, the first
    time a backward runs; when no input needs a gradient there is one inference graph,
    for `inference_compiler` (default: `fw_compiler`). `decompositions` maps operators to the functions that replace them
    while tracing; `keep_inference_input_mutations` keeps an in-place update of an
    input inside an inference graph (torchair asks for it) instead of returning the
    new value for the caller to copy back.

    AOTAutograd calls compiled graphs "boxed": with one list of arguments, which it
    may clear so that an input dies as soon as the graph is done with it. A compiler
    here returns a plain callable and is boxed for it (`make_boxed_func`).

    torch's `aot_autograd(fw_compiler=..., bw_compiler=...)` makes the same backend."""
    from torch._functorch.aot_autograd import aot_module_simplified, make_boxed_func

    def boxed(compiler: GraphCompiler) -> Callable[..., Any]:
        def compile_boxed(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Any:
            compiled = compiler(gm, example_inputs)
            return compiled if getattr(compiled, "_boxed_call", False) else make_boxed_func(compiled)

        return compile_boxed

    def backend(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable[..., Any]:
        return aot_module_simplified(
            gm, example_inputs,
            fw_compiler=boxed(fw_compiler),
            bw_compiler=boxed(bw_compiler or fw_compiler),
            inference_compiler=boxed(inference_compiler or fw_compiler),
            decompositions=decompositions,
            keep_inference_input_mutations=keep_inference_input_mutations,
        )

    backend.__name__ = f"aot_backend({getattr(fw_compiler, '__name__', 'compiler')})"
    return backend


def run_as_is(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable[..., Any]:
    """The compiler of aot_eager: the ATen graph runs as Python code."""
    return gm.forward


@register_backend(tags=("debug",))
def aot_eager(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable[..., Any]:
    """AOTAutograd's graphs, run as they are: `aot_backend(run_as_is)`, keeping an
    inference graph's in-place updates of its inputs in it, as torch's aot_eager does."""
    return aot_backend(run_as_is, keep_inference_input_mutations=True)(gm, example_inputs)


@register_backend
def inductor(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable[..., Any]:
    """torch's Inductor compiler, as `torch.compile(backend="inductor")`: C++/OpenMP
    kernels on CPU, Triton kernels on CUDA."""
    from torch._inductor.compile_fx import compile_fx

    return compile_fx(gm, example_inputs)


@register_backend
def cudagraphs(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable[..., Any]:
    """torch's CUDA-graphs backend, as `torch.compile(backend="cudagraphs")`: each graph
    AOTAutograd makes is recorded once into a CUDA graph (every kernel launch of one
    call, with its arguments) and replayed by a single launch, its inputs copied into
    the recorded buffers first. It needs every input on one CUDA device and static
    shapes; otherwise (a CPU tensor among the inputs, say) torch's backend runs the
    graph as it is and logs why."""
    from torch._dynamo.backends.cudagraphs import cudagraphs as torch_cudagraphs

    return torch_cudagraphs(gm, example_inputs)


class OpCounter:
    """A backend that counts the operators of each graph it receives, prints them if
    asked, and runs the graph as it is: the smallest useful backend (chapter 10).

    `graphs` holds one `collections.Counter` per graph (`count_ops`)."""

    def __init__(self, *, verbose: bool = False) -> None:
        self.graphs: list[collections.Counter] = []
        self.verbose = verbose
        self.__name__ = "OpCounter"

    def __call__(self, gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable[..., Any]:
        counts = count_ops(gm)
        self.graphs.append(counts)
        if self.verbose:
            print(f"graph {len(self.graphs)}: " + ", ".join(
                f"{name} x{count}" for name, count in counts.items()))
        return gm.forward


def count_ops(gm: torch.fx.GraphModule) -> collections.Counter:
    """How many times each operator is called in `gm`, keyed by its name, the names in
    the order the graph first calls them.

    A `call_function` node is named by `op_name(node.target)`; a `call_method` node by
    the method's name (`"sum"`); a `call_module` node (in a graph from
    `torch.fx.symbolic_trace`: Dynamo inlines modules) by the submodule's class name
    (`"Linear"`). Placeholders, `get_attr` nodes and the output are not operators."""
    counts: collections.Counter = collections.Counter()
    for node in gm.graph.nodes:
        if node.op == "call_function":
            counts[op_name(node.target)] += 1
        elif node.op == "call_method":
            counts[node.target] += 1
        elif node.op == "call_module":
            counts[type(gm.get_submodule(node.target)).__name__] += 1
    return counts


# Where torch's C functions live, by the module users import them from
PUBLIC_MODULES = {
    "_operator": "operator",
    "torch._C._nn": "torch.nn.functional",
    "torch._C._linalg": "torch.linalg",
    "torch._C._special": "torch.special",
    "torch._C._fft": "torch.fft",
    "torch._C._VariableFunctions": "torch",
    "builtins": "",
}


def op_name(target: Any) -> str:
    """The name of a call_function's target, as users write it: `torch.sin`,
    `operator.add`, `torch.nn.functional.linear`, `getattr`, and for an ATen operator
    of an AOTAutograd graph its overload, `aten.mm.default`."""
    if isinstance(target, torch._ops.OpOverload):
        return str(target)
    module = getattr(target, "__module__", None) or ""
    module = PUBLIC_MODULES.get(module, module)
    name = getattr(target, "__name__", None) or repr(target)
    return f"{module}.{name}" if module else name
