"""Torch functions: `torch.relu`, `F.linear`, `torch.ones` ... become graph nodes (chapter 3).

A function from torch's public namespaces is not inlined: the call itself is
recorded as a `call_function` node of the FX graph, whose example value comes
from running the function on FakeTensors. If the result holds no tensor
(`torch.is_tensor(x)`, `torch.get_default_dtype()`) it is a constant instead,
and no node is added.

Functions that change torch's global state (`torch.manual_seed`,
`torch.set_default_dtype`) would change it *while tracing*: they graph break.

Compare with TorchDynamo: `torch/_dynamo/variables/torch.py`
(`TorchInGraphFunctionVariable`) and `trace_rules.py`, whose long
allow-list plays the role of `is_torch_function`.
"""

from __future__ import annotations

import functools
import math
import types
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

import torch

from minidynamo.exc import (
    GLOBAL_SIDE_EFFECT, REQUIRES_GRAD_AT_CREATION, UNSUPPORTED_CALL, UNSUPPORTED_OUT_ARGUMENT,
    USER_GRAPH_BREAK, Unsupported, graph_break,
)
from minidynamo.trace_rules import IN_GRAPH, SKIP, torch_rule
from minidynamo.variables.base import KnownFunctionVariable, VariableTracker
from minidynamo.variables.functorch import call_transform_function, is_transform_function

if TYPE_CHECKING:
    from minidynamo.translator.base import InstructionTranslatorBase as Translator


def _torch_namespaces() -> tuple[types.ModuleType, ...]:
    return (
        torch, torch.nn.functional, torch.special, torch.linalg, torch.fft,
        torch._C._nn, torch._C._VariableFunctions, torch._C._linalg,
        torch._C._special, torch._C._fft,
    )


# Python functions of those namespaces that TorchDynamo inlines instead of recording
# (its trace_rules.py); their bodies call C bindings, which become the nodes.
INLINED_NAMES = frozenset({
    "pad", "threshold", "rms_norm", "grouped_mm", "scaled_mm", "scaled_grouped_mm",
    "linear_cross_entropy", "lp_pool3d", "triplet_margin_with_distance_loss",
    "typename", "cond", "while_loop", "vmap", "lobpcg",
})


def _is_recorded(name: str, value: Any) -> bool:
    """Public callables and C bindings are recorded; private Python helpers are inlined."""
    if not callable(value) or isinstance(value, type):
        return False
    if isinstance(value, types.BuiltinFunctionType):
        return True  # a C binding: always a node
    return not name.startswith("_") and name not in INLINED_NAMES


@functools.cache
def _in_graph_function_ids() -> frozenset[int]:
    """Identities of the callables of torch's namespaces that become nodes (computed once)."""
    return frozenset(
        id(getattr(namespace, name))
        for namespace in _torch_namespaces()
        for name in dir(namespace)
        if _is_recorded(name, getattr(namespace, name, None))
    )


def is_torch_function(value: Any) -> bool:
    """Whether calling `value` should become a `call_function` node: as torch.compile's
    table says (`trace_rules`), or for a function it does not name, the namespace rule."""
    if isinstance(value, OPERATOR_TYPES):  # `torch.ops.aten.add`, a library's custom op
        return True
    if is_transform_function(value):  # torch.func's levels and switches (functorch.py)
        return True
    rule = torch_rule(value)
    if rule is not None:
        return rule == IN_GRAPH
    return id(value) in _in_graph_function_ids()


# Operators of the dispatcher, called through `torch.ops.<namespace>.<name>`: a node each
# (a custom op registered with `torch.library` runs its fake kernel to get its value).
OPERATOR_TYPES = (torch._ops.OpOverloadPacket, torch._ops.OpOverload)


def is_skipped_function(value: Any) -> bool:
    """A torch function that torch.compile's table says it does not trace."""
    return torch_rule(value) == SKIP


@functools.cache
def tracing_state_functions() -> dict[Any, bool | None]:
    """Functions that ask "am I being compiled or traced?", and the answer they get
    while minidynamo traces: the answers torch.compile gives (TorchDynamo's
    `tracing_state_functions`), so library code takes the path it takes under
    torch.compile (transformers' `is_torchdynamo_compiling()`, for one)."""
    return {
        torch.compiler.is_compiling: True,
        torch.compiler.is_dynamo_compiling: True,
        torch._dynamo.external_utils.is_compiling: True,
        torch._utils.is_compiling: True,
        torch.compiler.is_exporting: False,  # only true under torch.export
        torch.jit.is_scripting: False,
        torch.jit.is_tracing: False,
        torch._C._get_tracing_state: None,
        torch.fx._symbolic_trace.is_fx_tracing: False,
        torch.onnx.is_in_onnx_export: False,
        # nn.MultiheadAttention takes its traceable path when this says True
        torch.nn.modules.activation._is_make_fx_tracing: True,
    }


def is_tracing_state_function(value: Any) -> bool:
    try:
        return value in tracing_state_functions()
    except TypeError:  # unhashable
        return False


@dataclass(frozen=True, eq=False, repr=False)
class TracingStateFunctionVariable(KnownFunctionVariable):
    """`torch.compiler.is_compiling()` and its family: a constant while tracing."""

    def call_function(
        self, tx: Translator, args: Sequence[VariableTracker], kwargs: dict[str, VariableTracker]
    ) -> VariableTracker:
        from minidynamo.variables.constant import ConstantVariable

        if args or kwargs:
            graph_break(UNSUPPORTED_CALL, f"{self.fn.__name__}() takes no arguments")
        return ConstantVariable(tracing_state_functions()[self.fn])


@dataclass(frozen=True, eq=False, repr=False)
class SkippedFunctionVariable(KnownFunctionVariable):
    """A torch function torch.compile does not trace (`torch.get_rng_state`): a break."""

    def call_function(
        self, tx: Translator, args: Sequence[VariableTracker], kwargs: dict[str, VariableTracker]
    ) -> VariableTracker:
        name = getattr(self.fn, "__qualname__", repr(self.fn))
        if torch._dynamo.trace_rules.is_callable_disallowed(self.fn):
            graph_break(USER_GRAPH_BREAK, f"{name}() is out of graphs (torch._dynamo.disallow_in_graph)"
                        if self.fn is not torch._dynamo.graph_break else "torch._dynamo.graph_break()")
        graph_break(UNSUPPORTED_CALL, f"{name}() is skipped by torch.compile's trace rules")


# Calls that would change torch's global state while tracing.
GLOBAL_STATE_NAMES = frozenset({
    "manual_seed", "seed", "initial_seed", "compile", "save", "load",
    "use_deterministic_algorithms", "set_num_threads", "set_num_interop_threads",
})


# Calls that enter or leave a level of torch's transform stacks (functorch's vmap, grad and
# jvp levels, autocast, forward-mode AD): each returns a level number or None, so folding
# its result would run it while tracing and leave it out of the graph (torch.compile
# records them inside its vmap/grad context trackers).
STACK_LEVEL_SUFFIXES = ("_increment_nesting", "_decrement_nesting", "_dual_level")


def changes_global_state(name: str, args: Sequence[VariableTracker] = ()) -> bool:
    """Whether calling the torch function `name` changes torch's global state. A setter
    given a tensor sets that tensor's property (torch.func's `_set_tensor_requires_grad`)."""
    from minidynamo.variables.tensor import TensorVariable

    if name.lstrip("_").startswith("set_"):
        return not any(isinstance(arg.realize(), TensorVariable) for arg in args)
    return name in GLOBAL_STATE_NAMES or name.endswith(STACK_LEVEL_SUFFIXES)


# Functions recorded as another, as torch.compile records them: in the graph an ndarray
# is already a tensor (variables/numpy.py), so `torch.from_numpy(a)` is `torch.as_tensor(a)`;
# `math.sqrt(n)` of a dynamic int is torch's `torch._sym_sqrt(n)` (one for each `math`
# function its SymNode implements), a symbol, where `math.sqrt` would need the number.
RECORDED_AS: dict[Any, Any] = {
    torch.from_numpy: torch.as_tensor,
    **{getattr(math, name[len("_sym_"):]): getattr(torch, name) for name in dir(torch)
       if name.startswith("_sym_") and hasattr(math, name[len("_sym_"):])},
}


@dataclass(frozen=True, eq=False, repr=False)
class TorchFunctionVariable(KnownFunctionVariable):
    """A torch function called into the graph."""

    def var_getattr(self, tx: Translator, name: str) -> VariableTracker:
        if isinstance(self.fn, torch._ops.OpOverloadPacket):  # `aten.mul.Tensor`: an overload
            from minidynamo.sources import AttrSource
            from minidynamo.variables.builder import VariableBuilder

            source = AttrSource(self.source, name) if self.source else None
            return VariableBuilder(tx.output, source)(getattr(self.fn, name))
        return super().var_getattr(tx, name)

    def call_function(
        self, tx: Translator, args: Sequence[VariableTracker], kwargs: dict[str, VariableTracker]
    ) -> VariableTracker:
        name = getattr(self.fn, "__name__", "")
        if isinstance(self.fn, OPERATOR_TYPES):  # `aten.set_`, an operator like any other
            return tx.output.create_node(tx, "call_function", self.fn, args, kwargs)
        recorded = call_transform_function(tx, self.fn, args, kwargs)
        if recorded is not None:
            return recorded
        if changes_global_state(name, args):
            graph_break(GLOBAL_SIDE_EFFECT, f"torch.{name}() changes global state")
        if self.fn in (torch.autograd.grad, torch.autograd.backward):
            # as torch.compile with `trace_autograd_ops=False` (its default): a backward
            # pass inside the graph would need the autograd graph the backend traces away
            graph_break(UNSUPPORTED_CALL, f"torch.autograd.{self.fn.__name__}() in the compiled "
                        "frame")
        if isinstance(self.fn, type) and issubclass(self.fn, torch.nn.Parameter):
            # the graph's output would be a plain tensor: `isinstance(p, nn.Parameter)`,
            # a module made here (its `_parameters`), an optimizer would not see one
            graph_break(UNSUPPORTED_CALL, f"creating a {self.fn.__name__} in the compiled frame",
                        hint="Create parameters (and modules) outside the compiled function.")
        wanted = kwargs.get("requires_grad")
        if wanted is not None and wanted.is_python_constant() and wanted.as_python_constant():
            # a leaf of autograd made in the graph: a backend that traces the graph's
            # autograd would return it without requires_grad (torch.compile breaks too)
            graph_break(REQUIRES_GRAD_AT_CREATION, f"torch.{name}(..., requires_grad=True)",
                        hint="Create the tensor outside the compiled function.")
        if "out" in kwargs:
            refuse_unsafe_out(tx, self.fn, args, kwargs)
        target = RECORDED_AS.get(self.fn, self.fn)
        data = args[0] if args else kwargs.get("data")
        if self.fn is torch.tensor and data is not None and holds_graph_values(data):
            # `torch.tensor([x.size(0), 2])`: data with a symbol (or a tensor) in it is
            # recorded as torch's reference implementation, whose FakeTensor run keeps
            # the symbol, where torch.tensor's would make it a number (as TorchDynamo)
            target = torch._refs.tensor
        return tx.output.create_node(tx, "call_function", target, args, kwargs)


def holds_graph_values(data: VariableTracker) -> bool:
    """Whether a list or tuple (nested) holds a symbol or a tensor among its items."""
    from minidynamo.variables.lists import BaseListVariable
    from minidynamo.variables.sym_node import SymNodeVariable
    from minidynamo.variables.tensor import TensorVariable

    data = data.realize()
    if isinstance(data, (SymNodeVariable, TensorVariable)):
        return True
    return isinstance(data, BaseListVariable) and any(
        holds_graph_values(item) for item in data.items)


def refuse_unsafe_out(tx: Translator, fn: Any, args: Sequence[VariableTracker],
                      kwargs: dict[str, VariableTracker]) -> None:
    """`torch.add(x, 1, out=o)` breaks the graph (MD0025) where the call would resize
    `o` or where `o` is not contiguous, as TorchDynamo breaks: AOTAutograd's
    functionalization keeps neither. The result's shape comes from the call without
    `out=`, run on the FakeTensors first, so nothing is written before the break."""
    from minidynamo.variables.lists import BaseListVariable
    from minidynamo.variables.tensor import TensorVariable

    out = kwargs["out"].realize()
    outs = [item.realize() for item in out.items] if isinstance(out, BaseListVariable) else [out]
    fakes = [item.example_value for item in outs if isinstance(item, TensorVariable)]
    if not fakes:
        return
    if not all(torch._prims_common.is_contiguous_or_false(fake) for fake in fakes):
        graph_break(UNSUPPORTED_OUT_ARGUMENT, f"{getattr(fn, '__name__', fn)}(out=) into a "
                    "tensor that is not contiguous")
    node_args = tuple(arg.realize().as_proxy() for arg in args)
    node_kwargs = {key: value.realize().as_proxy() for key, value in kwargs.items() if key != "out"}
    try:
        result = tx.output.run_on_fakes("call_function", fn, node_args, node_kwargs)
    except Unsupported:  # the call itself breaks: the call with out= will say why
        return
    results = list(result) if isinstance(result, (tuple, list)) else [result]
    if any(not isinstance(made, torch.Tensor) or made.shape != fake.shape
           for made, fake in zip(results, fakes)):
        graph_break(UNSUPPORTED_OUT_ARGUMENT, f"{getattr(fn, '__name__', fn)}(out=) into a "
                    "tensor of another shape, which the call resizes")
