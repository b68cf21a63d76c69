"""numpy on tensors: an ndarray is a tensor in the graph, numpy runs as torch._numpy (chapter 3).

torch.compile does not treat numpy as an opaque library. `torch._numpy` is a
re-implementation of numpy's API on top of torch ops (`tnp.tanh(a)` calls
`torch.tanh`), so numpy code that works on tensors can be recorded in the graph
like any other tensor code:

- `x.numpy()` is a `view_as(x, x)` node whose tracker is a `NumpyNdarrayVariable`:
  in the graph it is a tensor, to the user's code it is an ndarray;
- `np.tanh(a)` is a `numpy_to_tensor_wrapper(tnp.tanh)` node, `a.mean(axis=0)` a
  `numpy_method_wrapper("mean")` node, `a * 2` a `numpy_operator_wrapper(operator.mul)`
  node and `a.T` a `numpy_attr_wrapper(a, "T")` node. Each wrapper turns its tensor
  arguments into `tnp.ndarray`s, calls torch._numpy, and turns the result back into a
  tensor, so a graph of them is a graph of torch ops (make_fx sees only ATen);
- an operator between an ndarray and a *tensor* is a tensor operator (`operator.mul`):
  the tensor wins;
- `torch.from_numpy(a)` is recorded as `torch.as_tensor(a)`, and an ndarray the frame
  returns is the graph's tensor made an ndarray again (`tensor.numpy(force=True)`);
- a numpy array passed in is a graph input: the frame passes `torch.as_tensor(a)`;
- numpy on plain Python values is not traced: `np.pi` is a float, `np.float32` a dtype
  (a string, `"float32"`, as a node's argument), `np.finfo(np.float32).eps` a float.

Which numpy callable becomes which torch._numpy callable is a table built once from
the two namespaces (`torch_numpy_twins`); what an ndarray attribute or method does is
a table too (`NDARRAY_ATTRIBUTES`, `NDARRAY_METHODS`). The wrappers that become the
nodes' targets are torch's own (`torch._dynamo.utils`), so the graphs are the ones
torch.compile captures, target for target.

Compare with TorchDynamo: `torch/_dynamo/variables/tensor.py` (`NumpyNdarrayVariable`,
`method_numpy`), `variables/misc.py` (`NumpyVariable`), `utils.py`
(`numpy_to_tensor_wrapper`, `numpy_method_wrapper`, `numpy_attr_wrapper`,
`numpy_operator_wrapper`) and `trace_rules.py` (`is_numpy`).
"""

from __future__ import annotations

import functools
import operator
import types
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np
import torch
import torch._numpy as tnp
from torch._dynamo.utils import (
    numpy_attr_wrapper,
    numpy_method_wrapper,
    numpy_operator_wrapper,
    numpy_to_tensor_wrapper,
)

from minidynamo.exc import UNSUPPORTED_ATTRIBUTE, UNSUPPORTED_CALL, graph_break
from minidynamo.variables.base import KnownFunctionVariable, VariableTracker, constant_values
from minidynamo.variables.constant import ConstantVariable, fold_value, is_constant_value
from minidynamo.variables.tensor import TensorVariable

if TYPE_CHECKING:
    from minidynamo.codegen import PyCodegen
    from minidynamo.translator.base import InstructionTranslatorBase as Translator

# numpy's modules that torch.compile traces, and the torch._numpy module of each
NUMPY_MODULES: dict[types.ModuleType, types.ModuleType] = {
    np: tnp, np.fft: tnp.fft, np.linalg: tnp.linalg, np.random: tnp.random,
}

# numpy.random's functions live in numpy.random.mtrand; these few are not traced
UNTRACED_RANDOM_NAMES = frozenset({
    "seed", "ranf", "get_bit_generator", "RandomState", "set_bit_generator", "sample",
})


def _is_numpy_api(name: str, value: Any, module: types.ModuleType) -> bool:
    """A callable that `module` defines (not one it re-exports from elsewhere)."""
    if not callable(value):
        return False
    home = getattr(value, "__module__", None)
    if home is None or home == module.__name__:
        return True
    return (home == "numpy.random.mtrand" and module is np.random
            and name not in UNTRACED_RANDOM_NAMES)


@functools.cache
def torch_numpy_twins() -> dict[int, tuple[Any, Any]]:
    """id(numpy callable) -> (the callable, its torch._numpy twin or None), built once.
    The callable is kept so that its id stays its own."""
    table: dict[int, tuple[Any, Any]] = {}
    for module, twin_module in NUMPY_MODULES.items():
        for name, value in vars(module).items():
            if _is_numpy_api(name, value, module):
                twin = getattr(twin_module, name, None)
                table[id(value)] = (value, twin if callable(twin) else None)
    return table


def is_numpy_callable(value: Any) -> bool:
    """A function or class of numpy's API (`np.tanh`, `np.linalg.norm`, `np.float32`)."""
    entry = torch_numpy_twins().get(id(value))
    return entry is not None and entry[0] is value


def numpy_constant(value: Any) -> VariableTracker:
    """The tracker of a numpy value known at trace time: a numpy scalar is the Python
    number it holds (`np.finfo(np.float32).eps` is a float), a dtype or a dtype's
    limits a `NumpyConstantVariable`, anything else a constant."""
    if isinstance(value, np.generic):
        return ConstantVariable(value.item())
    if isinstance(value, (np.dtype, np.finfo, np.iinfo)):
        return NumpyConstantVariable(value)
    if is_constant_value(value):
        return ConstantVariable(value)
    graph_break(UNSUPPORTED_CALL, f"a numpy {type(value).__name__} made from constants")


# numpy functions that are run at trace time on constant arguments (torch.compile's
# "constant collections" and constant folds); every other numpy call is a node
FOLDED_ON_CONSTANTS = frozenset({np.finfo, np.iinfo, np.dtype, np.issubdtype})

# keywords torch._numpy spells differently: `np.clip(a, a_min=0)` is `tnp.clip(a, min=0)`
RENAMED_KEYWORDS: dict[str, dict[str, str]] = {"clip": {"a_min": "min", "a_max": "max"}}


def renamed_keywords(name: str, kwargs: dict[str, VariableTracker]) -> dict[str, VariableTracker]:
    renames = RENAMED_KEYWORDS.get(name, {})
    return {renames.get(key, key): value for key, value in kwargs.items()}


def as_ndarray(value: VariableTracker) -> VariableTracker:
    """A node's result seen as numpy: tensors become ndarrays (inside tuples too)."""
    from minidynamo.variables.lists import BaseListVariable

    if type(value) is TensorVariable:
        return NumpyNdarrayVariable(value.node, value.example_value)
    if isinstance(value, BaseListVariable):
        return value.with_items(tuple(as_ndarray(item) for item in value.items))
    return value


def ndarray_node(tx: Translator, target: Callable[..., Any], args: Sequence[VariableTracker],
                 kwargs: dict[str, VariableTracker]) -> VariableTracker:
    """A `call_function` node of a torch._numpy wrapper; its result is numpy's."""
    return as_ndarray(tx.output.create_node(tx, "call_function", target, args, kwargs))


@dataclass(frozen=True, eq=False, repr=False)
class NumpyVariable(KnownFunctionVariable):
    """A function or class of numpy (`np.tanh`, `np.float32`): a call is a torch._numpy
    node, or a fold for the few functions of `FOLDED_ON_CONSTANTS`."""

    def as_proxy(self) -> Any:
        if isinstance(self.fn, type):  # np.float32 as `dtype=`: torch._numpy reads the name
            return self.fn.__name__
        return super().as_proxy()

    def call_function(
        self, tx: Translator, args: Sequence[VariableTracker], kwargs: dict[str, VariableTracker]
    ) -> VariableTracker:
        name = getattr(self.fn, "__name__", repr(self.fn))
        twin = torch_numpy_twins()[id(self.fn)][1]
        if twin is None:
            graph_break(UNSUPPORTED_CALL, f"numpy.{name}() has no torch._numpy version",
                        hint="Call it outside the compiled function, or use torch.")
        if self.fn in FOLDED_ON_CONSTANTS:
            values = constant_values([*args, *kwargs.values()])
            if values is None:
                graph_break(UNSUPPORTED_CALL, f"numpy.{name}() of values that are not constants")
            folded = fold_value(self.fn, values[: len(args)], dict(zip(kwargs, values[len(args):])))
            return numpy_constant(folded)
        kwargs = renamed_keywords(name, kwargs)
        return ndarray_node(tx, numpy_to_tensor_wrapper(twin), args, kwargs)

    def call_method(
        self, tx: Translator, name: str, args: Sequence[VariableTracker],
        kwargs: dict[str, VariableTracker],
    ) -> VariableTracker:
        graph_break(UNSUPPORTED_CALL, f"method {name}() of numpy.{self.fn.__name__}")


@dataclass(frozen=True, eq=False, repr=False)
class NumpyConstantVariable(VariableTracker):
    """A dtype or a dtype's limits made at trace time (`np.finfo(np.float32)`): its
    attributes are read off the real object."""

    value: Any

    def python_type(self) -> type:
        return type(self.value)

    def as_python_constant(self) -> Any:
        return self.value

    def as_proxy(self) -> Any:
        if isinstance(self.value, np.dtype):  # a dtype argument: its name, as np.float32's
            return self.value.type.__name__
        return super().as_proxy()

    def var_getattr(self, tx: Translator, name: str) -> VariableTracker:
        value = getattr(self.value, name)
        if isinstance(value, type) and issubclass(value, np.generic):  # `dtype.type`
            return NumpyVariable(value)
        return numpy_constant(value)

    def reconstruct(self, codegen: PyCodegen) -> None:
        codegen.load_object(self.value)

    def __repr__(self) -> str:
        return f"NumpyConstantVariable({self.value!r})"


## ndarrays ###########################################################################

# What reading `a.<name>` does (torch.compile's choices): a torch._numpy attribute node,
# the example value's metadata as constants (a symbolic size: a node), or a break.
NODE, METADATA, UNSUPPORTED = "node", "metadata", "unsupported"
NDARRAY_ATTRIBUTES = {
    "T": NODE, "real": NODE, "imag": NODE, "flat": NODE,
    "ndim": METADATA, "itemsize": METADATA, "shape": METADATA, "strides": METADATA,
    "size": METADATA,
    "base": UNSUPPORTED, "flags": UNSUPPORTED, "dtype": UNSUPPORTED, "__version__": UNSUPPORTED,
}

# Methods answered as a tensor's (their answer is the same), and methods torch._numpy
# does not model; every other method is a `numpy_method_wrapper(name)` node.
TENSOR_METHODS = frozenset({"__len__", "size", "tolist", "__iter__"})
UNMODELLED_METHODS = frozenset({"tostring", "tobytes", "__delattr__"})

# Methods that change an ndarray in place: their nodes are kept although they return
# nothing. (`a[i] = v` is the method `__setitem__`, as torch.compile records it.)
IN_PLACE_METHODS = frozenset({"fill", "sort", "put", "partition", "__setitem__"})
OPERATOR_METHODS = {operator.setitem: "__setitem__"}


def changes_an_ndarray(target: Any) -> bool:
    """Whether a node's target is a torch._numpy wrapper that writes into its ndarray."""
    return isinstance(target, numpy_method_wrapper) and target.method in IN_PLACE_METHODS


@dataclass(frozen=True, eq=False, repr=False)
class NumpyNdarrayVariable(TensorVariable):
    """An ndarray, which the graph holds as the tensor `node` computes. Its methods,
    attributes and operators are torch._numpy's; it is a tensor only where numpy
    and torch agree (an argument of a torch function, `len`)."""

    def python_type(self) -> type:
        return np.ndarray

    def var_getattr(self, tx: Translator, name: str) -> VariableTracker:
        from minidynamo.variables.misc import GetAttrVariable

        rule = NDARRAY_ATTRIBUTES.get(name)
        if rule == NODE:
            return ndarray_node(tx, numpy_attr_wrapper, [self, ConstantVariable(name)], {})
        if rule == METADATA:
            return self.metadata(tx, name)
        if rule is None and callable(getattr(np.ndarray, name, None)):
            return GetAttrVariable(self, name)  # a method: called by call_method
        if rule is None and not hasattr(np.ndarray, name):
            from minidynamo.exc import raise_observed

            raise_observed(AttributeError, f"'numpy.ndarray' object has no attribute {name!r}")
        graph_break(UNSUPPORTED_ATTRIBUTE, f"ndarray.{name} is not traced (torch.compile "
                    "does not trace it either)")

    def metadata(self, tx: Translator, name: str) -> VariableTracker:
        """`a.shape`, `a.ndim` ...: constants read off the example value, numpy's way
        (`shape` a tuple of ints, not a torch.Size); a symbolic one is a node."""
        from minidynamo.shapes import is_symbolic
        from minidynamo.variables.builder import VariableBuilder

        value = getattr(tnp.ndarray(self.example_value), name)
        if any(is_symbolic(item) for item in (value if isinstance(value, tuple) else (value,))):
            return ndarray_node(tx, numpy_attr_wrapper, [self, ConstantVariable(name)], {})
        return VariableBuilder(tx.output, None)(value)

    def call_method(
        self, tx: Translator, name: str, args: Sequence[VariableTracker],
        kwargs: dict[str, VariableTracker],
    ) -> VariableTracker:
        if name in TENSOR_METHODS:
            return super().call_method(tx, name, args, kwargs)
        if name in UNMODELLED_METHODS:
            graph_break(UNSUPPORTED_CALL, f"ndarray.{name}() is not modelled in torch._numpy")
        if name == "astype" and is_object_dtype([*args, *kwargs.values()][:1]):
            graph_break(UNSUPPORTED_CALL, "ndarray.astype(object): a tensor has no object dtype")
        kwargs = renamed_keywords(name, kwargs)
        return ndarray_node(tx, numpy_method_wrapper(name), [self, *args], kwargs)

    def reconstruct(self, codegen: PyCodegen) -> None:
        """The graph's tensor, made an ndarray again after the graph has run."""
        codegen.load_callable(graph_output_to_ndarray)
        codegen.load_graph_output(self.node)
        codegen.call_function(1)

    def __repr__(self) -> str:
        return "NumpyNdarrayVariable()"


def is_object_dtype(dtype: Sequence[VariableTracker]) -> bool:
    """Whether `a.astype(...)`'s argument is numpy's object dtype (`object`, `"O"`)."""
    return bool(dtype) and dtype[0].is_python_constant() and (
        dtype[0].as_python_constant() in (object, "O"))


def graph_output_to_ndarray(tensor: torch.Tensor) -> np.ndarray:
    """Run by the generated code on a graph output that the frame holds as an ndarray."""
    return tensor.numpy(force=True)


## Where numpy meets torch ###########################################################


def tensor_to_ndarray(tx: Translator, tensor: TensorVariable,
                      force: VariableTracker | None = None) -> VariableTracker:
    """`x.numpy()`: a view of x that the frame sees as an ndarray (`view_as(x, x)`);
    `x.numpy(force=True)` is x detached and moved to the CPU first, as in eager."""
    if tensor.example_value.layout != torch.strided:
        from minidynamo.exc import raise_observed

        raise_observed(TypeError, f"can't convert {tensor.example_value.layout} layout tensor "
                       "to numpy. Use Tensor.to_dense() first")
    if force is not None and force.as_python_constant():
        detached = tensor.call_method(tx, "detach", [], {})
        return as_ndarray(tx.output.create_node(tx, "call_method", "cpu", [detached], {}))
    return as_ndarray(tx.output.create_node(tx, "call_method", "view_as", [tensor, tensor], {}))


def is_ndarray_operation(args: Sequence[VariableTracker]) -> bool:
    """Whether numpy computes an operator: an ndarray among its operands and no tensor
    (with a tensor among them, the tensor's operator wins: `x * a` is `operator.mul`)."""
    return any(isinstance(arg, NumpyNdarrayVariable) for arg in args) and not any(
        type(arg) is TensorVariable for arg in args)


def ndarray_operator(tx: Translator, fn: Callable[..., Any],
                     args: Sequence[VariableTracker]) -> VariableTracker:
    """`a * 2`, `a > 0`, `-a`, `a[0]` on an ndarray: a `numpy_operator_wrapper(fn)` node
    (`a[0] = v` a method node)."""
    if fn in OPERATOR_METHODS and isinstance(args[0], NumpyNdarrayVariable):
        return args[0].call_method(tx, OPERATOR_METHODS[fn], args[1:], {})
    return ndarray_node(tx, numpy_operator_wrapper(fn), args, {})
