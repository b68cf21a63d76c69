"""TensorVariable: a tensor is a node of the FX graph plus a FakeTensor (chapter 3).

A tensor is never computed while tracing. Its tracker holds the `fx.Node` that
will compute it when the graph runs, and an *example value*: a FakeTensor with
the right shape, dtype and device but no data. Every operation on a tensor adds
a node to the graph (through `tx.output.create_node`), whose own example value is
computed by running the operation on the FakeTensors.

What a FakeTensor knows (shape, dtype, device, ndim) is answered at trace time
as constants: `x.shape[0]` is an `int` while tracing. A dynamic size (chapter 9)
is a symbol instead, `x.shape[0]` the SymNodeVariable of `s77`
(`OutputGraph.size_item`). What it does not know (the data: `x.item()`,
`bool(x)`) is a graph break.

Compare with TorchDynamo: `torch/_dynamo/variables/tensor.py` (`TensorVariable`,
`method_attr_*`, `call_method`, `SymNodeVariable`).
"""

from __future__ import annotations

import functools
import operator
import types
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Sequence

import torch
import torch.fx

from minidynamo.exc import (
    DATA_DEPENDENT_VALUE,
    REQUIRES_GRAD_RETURNED,
    UNSUPPORTED_ATTRIBUTE,
    UNSUPPORTED_CALL,
    UNSUPPORTED_MUTATION,
    UNSUPPORTED_OPERATOR,
    UNSUPPORTED_VALUE,
    graph_break,
    raise_observed,
)
from minidynamo.shapes import is_symbolic
from minidynamo.sources import AttrSource, FreshAttrSource
from minidynamo.variables.base import VariableTracker
from minidynamo.variables.constant import constant

if TYPE_CHECKING:
    from minidynamo.codegen import PyCodegen
    from minidynamo.translator.base import InstructionTranslatorBase as Translator

# Attributes answered from the FakeTensor's metadata, as constants, no node (TorchDynamo's
# `method_attr_*` of TensorVariable).
CONSTANT_ATTRIBUTES = frozenset({
    "dtype", "device", "ndim", "shape", "layout", "requires_grad", "is_cuda",
    "is_sparse", "is_quantized", "is_nested",
})

# Methods whose answer is the FakeTensor's metadata: folded to constants, no node.
CONSTANT_METHODS = frozenset({
    "dim", "ndimension", "is_complex", "is_floating_point", "is_signed", "is_contiguous",
    "element_size", "get_device", "is_inference", "has_names",
})

# Methods that answer from what a tensor's guards do not check (where its data sits in
# its storage, whether it is a view, shared, pinned): folded, the next call's view of
# another offset would reuse the answer. A graph break: they run natively.
LAYOUT_METHODS = frozenset({
    "storage_offset", "_is_view", "is_set_to", "is_shared", "is_pinned", "data_ptr",
    "untyped_storage", "storage", "_storage",
})

# Attributes that are tensors themselves: a `getattr` node, like `l_x_.T`.
TENSOR_ATTRIBUTES = frozenset({"T", "mT", "H", "mH", "real", "imag", "data"})

# Autograd's state and the tensor object's internals: not read while tracing.
AUTOGRAD_ATTRIBUTES = frozenset({
    "grad", "_grad", "grad_fn", "_grad_fn", "_version", "retains_grad", "_backward_hooks",
    "_post_accumulate_grad_hooks", "_cdata", "_python_dispatch", "volatile", "name",
    "grad_dtype", "_has_symbolic_sizes_strides",
})

# The tensor type's other data descriptors (`x.itemsize`, `x.nbytes`, `x.is_leaf`,
# `x.is_cpu`): read with a `getattr` node that TorchDynamo keeps even when nothing uses
# it, the answer computed on the FakeTensor (a constant when it is not a tensor).
NODE_READ_ATTRIBUTES = frozenset(
    name for name, attribute in vars(torch._C.TensorBase).items()
    if type(attribute) is types.GetSetDescriptorType
) - CONSTANT_ATTRIBUTES - TENSOR_ATTRIBUTES - AUTOGRAD_ATTRIBUTES

# What an input's autograd history says, which its TENSOR_MATCH does not check: a leaf
# passed once, a computed tensor of the same shape and dtype next (`w` then `w * 1`).
HISTORY_ATTRIBUTES = frozenset({"is_leaf", "output_nr"})

# Methods that need the tensor's data as a Python value.
# never traced, as in TorchDynamo ("Unsupported Tensor.resize_() call")
RESIZE_METHODS = frozenset({"resize_", "resize_as_", "sparse_resize_", "sparse_resize_and_clear_"})


@functools.cache
def is_inplace_view(name: str) -> bool:
    """Whether `Tensor.name` is an operator torch tags `inplace_view` (`t_`, `unsqueeze_`,
    `as_strided_`): it changes a tensor's sizes or strides in place. On a graph input,
    AOTAutograd would have to replay that on the caller's tensor, and TorchDynamo
    breaks instead (its list is torch's tags, so is this one)."""
    in_place = name.endswith("_") and not name.startswith("_")
    packet = getattr(torch.ops.aten, name, None) if in_place else None
    overloads = packet.overloads() if packet is not None else []
    return bool(overloads) and torch.Tag.inplace_view in getattr(packet, overloads[0]).tags


DATA_DEPENDENT_METHODS = frozenset({
    "item", "tolist", "__bool__", "__int__", "__float__", "__index__",
    "backward", "nonzero_static", "data_ptr",
})


def result_class(classes: Iterable[type]) -> type:
    """The class of an operation's tensor results, from the classes of its tensor
    arguments, as `Tensor.__torch_function__` converts them: the most derived subclass,
    the one every other argument's class is a base of. A class whose
    `__torch_function__` is disabled (`nn.Parameter`) takes no part: `p * 2` is a
    Tensor. A subclass's own `__torch_function__` could answer anything, and unrelated
    subclasses make eager PyTorch raise TypeError: both break the graph, and the
    operation runs eagerly."""
    overloaded = {cls for cls in classes if cls is not torch.Tensor
                  and cls.__torch_function__ is not torch._C._disabled_torch_function_impl}
    if not overloaded:
        return torch.Tensor
    derived = [cls for cls in overloaded if all(issubclass(cls, other) for other in overloaded)]
    if not derived:
        graph_break(UNSUPPORTED_VALUE, "an operation on tensors of unrelated subclasses "
                    + ", ".join(sorted(cls.__qualname__ for cls in overloaded)))
    if getattr(derived[0].__torch_function__, "__func__", None) is not DEFAULT_TORCH_FUNCTION:
        graph_break(UNSUPPORTED_VALUE, f"an operation on a tensor of {derived[0].__qualname__}, "
                    "a subclass with its own __torch_function__")
    return derived[0]


DEFAULT_TORCH_FUNCTION = torch.Tensor.__torch_function__.__func__

# What `Tensor.__torch_function__` leaves unconverted (torch.overrides'
# `get_default_nowrap_functions`: the getters of these attributes).
NOWRAP_ATTRIBUTES = frozenset({"_base", "grad", "_grad"})


def node_class(node: torch.fx.Node) -> type:
    """The class of a node's tensor result (`result_class` of its inputs' classes), kept
    in `node.meta["tensor_class"]` for the nodes that read it: a graph input's is its
    real tensor's, set by `OutputGraph.add_graph_input`."""
    if "tensor_class" not in node.meta:
        unconverted = not contains_tensor(node.meta.get("example_value")) or (
            node.target is getattr and node.args[1] in NOWRAP_ATTRIBUTES)
        classes = (node_class(item) for item in node.all_input_nodes)
        node.meta["tensor_class"] = torch.Tensor if unconverted else result_class(classes)
    return node.meta["tensor_class"]


# In-place updates with a scale, decomposed as TorchDynamo does (its default
# `enable_dynamo_decompositions`): `p.copy_(fma(a <op> b, scale, p))` with inductor's
# `prims.fma`. ATen would read a tensor scale with `.item()` (Adam's `value=-step_size`).
# the item writes called as methods, and the operator each is (`x.__setitem__(0, v)`,
# `torch.Tensor.__setitem__(x, 0, v)`): a node of its own would return nothing, be used
# by nothing, and be dropped from the graph as dead code with the write it makes
ITEM_WRITES = {"__setitem__": operator.setitem, "__delitem__": operator.delitem}

# name -> (the keyword of the scale, how the operands combine; None: one operand)
FUSED_METHODS: dict[str, tuple[str, Any]] = {
    "addcdiv_": ("value", torch.div), "addcmul_": ("value", torch.mul), "add_": ("alpha", None),
}


def fused_multiply_add(tx: Translator, tensor: TensorVariable, name: str,
                       args: Sequence[VariableTracker], kwargs: dict[str, VariableTracker],
                       ) -> VariableTracker | None:
    """`tensor.<name>(...)` as a fused multiply-add, or None where torch keeps the call
    (no scale; `add_` with a number for its alpha)."""
    keyword, combine = FUSED_METHODS[name]
    scale = kwargs.get(keyword)
    if scale is None or set(kwargs) != {keyword} or len(args) != (1 if combine is None else 2):
        return None
    if combine is None and not isinstance(scale, TensorVariable):
        return None
    from torch._inductor import inductor_prims

    product = args[0] if combine is None else tx.output.create_node(
        tx, "call_function", combine, list(args), {})
    fused = tx.output.create_node(tx, "call_function", inductor_prims.fma,
                                  [product, scale, tensor], {})
    return tensor.call_method(tx, "copy_", [fused], {})


def input_value(tx: Translator, tensor: TensorVariable) -> Any:
    """The real tensor behind a graph input's tracker (None for a tensor made in the frame)."""
    return next((graph_input.value for graph_input in tx.output.graph_inputs
                 if graph_input.node is tensor.node), None)


def has_own_attribute(tx: Translator, tensor: TensorVariable, name: str) -> bool:
    """Whether the real tensor behind a graph input has `name` in its `__dict__`
    (`x.tag = ...` set outside the compiled function)."""
    return name in getattr(input_value(tx, tensor), "__dict__", {})


def source_value(tx: Translator, tensor: TensorVariable, name: str) -> Any:
    """`name` of the real tensor behind a graph input (`x.grad`): the trace breaks if
    the tracker is not a graph input's."""
    real = input_value(tx, tensor)
    if not isinstance(real, torch.Tensor):
        graph_break(UNSUPPORTED_ATTRIBUTE, f"Tensor attribute {name!r}")
    return getattr(real, name)


def grad_fn(tx: Translator, tensor: TensorVariable) -> VariableTracker:
    """`x.grad_fn`, answered when it is None, as torch.compile answers it: a tensor the
    frame made has the grad_fn of its FakeTensor (none without requires_grad), an input
    the real one's, guarded (`L['x'].grad_fn is None`: a non-leaf passed next time
    recompiles). A tensor with a grad_fn breaks, as on torch.compile."""
    from minidynamo.variables.builder import VariableBuilder

    if tensor.source is None and tensor.example_value.grad_fn is None:
        return constant(None)
    if tensor.source is not None and source_value(tx, tensor, "grad_fn") is None:
        return VariableBuilder(tx.output, AttrSource(tensor.source, "grad_fn"))(None)
    graph_break(UNSUPPORTED_ATTRIBUTE, "Tensor attribute 'grad_fn' of a tensor that has one")


def own_attribute(tx: Translator, tensor: TensorVariable, name: str) -> VariableTracker:
    """`x.tag` of a tensor from outside the frame, an attribute of its own (its class has
    none of that name: no descriptor can answer): what the trace stored there (replayed
    after the graph: `SideEffects.store_tensor_attribute`), else the real tensor's value,
    with its source `L['x'].tag` and the guards its kind gets."""
    from minidynamo.variables.builder import VariableBuilder

    stored = tx.output.side_effects.load_tensor_attribute(tensor.source, name)
    if stored is not None:
        return stored
    attributes = getattr(input_value(tx, tensor), "__dict__", None)
    if attributes is not None and tx.output.side_effects.is_written(attributes):
        graph_break(UNSUPPORTED_ATTRIBUTE, f"Tensor attribute {name!r} after a write through "
                    "its __dict__")
    if attributes is None or name not in attributes:
        if attributes is None:
            graph_break(UNSUPPORTED_ATTRIBUTE, f"Tensor attribute {name!r}")
        tx.output.guards.not_in_dict(AttrSource(tensor.source, "__dict__"), name)
        raise_observed(AttributeError, f"'Tensor' object has no attribute {name!r}")
    return VariableBuilder(tx.output, AttrSource(tensor.source, name))(attributes[name])


@dataclass(frozen=True, eq=False, repr=False)
class TensorVariable(VariableTracker):
    """A tensor computed by `node` in the graph; `example_value` is its FakeTensor."""

    node: torch.fx.Node
    example_value: torch.Tensor
    class_: type = torch.Tensor  # torch.nn.Parameter for parameters

    def python_type(self) -> type:
        return self.class_

    def as_proxy(self) -> torch.fx.Node:
        return self.node

    def var_getattr(self, tx: Translator, name: str) -> VariableTracker:
        from minidynamo.variables.misc import GetAttrVariable

        if name == "shape":
            return self.sizes(tx, "size")
        if name in CONSTANT_ATTRIBUTES:
            return constant(getattr(self.example_value, name))
        if name in TENSOR_ATTRIBUTES:  # a node, but reloaded from `x.T` if it is returned
            if name == "data":  # as torch.compile records it: an alias autograd does not see
                result = tx.output.create_node(
                    tx, "call_function", torch._C._autograd._get_data_attr, [self], {})
            else:
                result = tx.output.create_node(
                    tx, "call_function", getattr, [self, constant(name)], {})
            # a new tensor on each read: the generated code reads it once (FreshAttrSource)
            return result.clone(source=FreshAttrSource(self.source, name)) if self.source else result
        if name == "nbytes" and is_symbolic(self.example_value.numel()):
            from minidynamo.variables.builtins import BuiltinVariable  # the fake cannot answer

            numel = self.call_method(tx, "numel", [], {})
            itemsize = constant(self.example_value.itemsize)
            return BuiltinVariable(operator.mul).call_function(tx, [numel, itemsize], {})
        if name in NODE_READ_ATTRIBUTES:
            result = tx.output.create_node(tx, "call_function", getattr, [self, constant(name)],
                                           {}, keep=True)
            if self.source is not None and name in HISTORY_ATTRIBUTES and (
                    result.is_python_constant()):  # not what TENSOR_MATCH checks: guarded
                from minidynamo.guards import constant_guard_kind

                value = result.as_python_constant()
                tx.output.guards.add(constant_guard_kind(value), AttrSource(self.source, name),
                                     value)
            return result
        if callable(getattr(torch.Tensor, name, None)):
            return GetAttrVariable(self, name)  # a method: called by call_method
        if name == "_version":  # read when the graph runs, as torch.compile reads it: torch's
            from torch._dynamo.tensor_version_op import _tensor_version  # op, an unbacked SymInt

            version = tx.output.create_node(tx, "call_function", _tensor_version, [self], {})
            # AOTAutograd's functionalization makes the op a constant: an input's version
            # that leaves the graph is read again from the input after it, as on torch.compile
            return version.clone(source=AttrSource(self.source, name)) if self.source else version
        if name == "grad_fn":
            return grad_fn(tx, self)
        if self.source is not None and name == "grad":  # None, or another input of the graph
            from minidynamo.variables.builder import VariableBuilder

            source = AttrSource(self.source, name)
            return VariableBuilder(tx.output, source)(source_value(tx, self, name))
        if self.source is not None and not hasattr(self.class_, name):
            return own_attribute(tx, self, name)
        if not hasattr(self.class_, name) and not has_own_attribute(tx, self, name):
            raise_observed(AttributeError, f"'Tensor' object has no attribute {name!r}")
        graph_break(UNSUPPORTED_ATTRIBUTE, f"Tensor attribute {name!r}")

    def call_method(
        self,
        tx: Translator,
        name: str,
        args: Sequence[VariableTracker],
        kwargs: dict[str, VariableTracker],
    ) -> VariableTracker:
        if name in DATA_DEPENDENT_METHODS:
            graph_break(DATA_DEPENDENT_VALUE, f"Tensor.{name}() needs the tensor's data")
        if name == "random_" or (name == "uniform_" and "from" in kwargs):
            graph_break(UNSUPPORTED_CALL, f"Tensor.{name}(): its ATen operator has an argument "
                        "named `from`, which the code AOTAutograd generates cannot spell "
                        "(a Python keyword; TorchDynamo breaks too)")
        if name == "retain_grad":  # a flag on the real tensor autograd reads at backward
            graph_break(UNSUPPORTED_MUTATION, "Tensor.retain_grad() in the compiled frame")
        if name == "requires_grad_":
            return self.requires_grad_(tx, args, kwargs)
        if name in ITEM_WRITES:  # `x.__setitem__(i, v)` is `x[i] = v`: the same recorded write
            from minidynamo.variables.builtins import BuiltinVariable

            return BuiltinVariable(ITEM_WRITES[name]).call_function(tx, [self, *args], kwargs)
        if name in FUSED_METHODS:  # p.addcdiv_(a, b, value=v): as TorchDynamo decomposes it
            fused = fused_multiply_add(tx, self, name, args, kwargs)
            if fused is not None:
                return fused
        if name in RESIZE_METHODS or (self.source is not None and is_inplace_view(name)):
            graph_break(UNSUPPORTED_MUTATION, f"Tensor.{name}() changes the sizes or strides "
                        "of a tensor from outside the frame in place (TorchDynamo breaks too)")
        if name in ("__setattr__", "__delattr__"):  # x.data = y, x.grad = g, x.tag = 1
            what = args[0].as_python_constant() if args and args[0].is_python_constant() else "?"
            if name == "__setattr__" and what == "data" and len(args) == 2:
                return set_data(tx, self, args[1])
            if name == "__setattr__" and len(args) == 2 and isinstance(what, str) and (
                    self.source is not None and not hasattr(self.class_, what)):
                tx.output.side_effects.store_tensor_attribute(self.source, what, args[1])
                return constant(None)
            action = "setting" if name == "__setattr__" else "deleting"
            graph_break(UNSUPPORTED_MUTATION, f"{action} attribute {what!r} of a tensor")
        if name == "numpy" and not args:  # an ndarray backed by this tensor (variables/numpy.py)
            from minidynamo.variables.numpy import tensor_to_ndarray

            return tensor_to_ndarray(tx, self, kwargs.get("force"))
        if name in LAYOUT_METHODS:
            graph_break(UNSUPPORTED_ATTRIBUTE, f"Tensor.{name}() answers from the tensor's "
                        "storage, which its guards do not check")
        if name in CONSTANT_METHODS and all(arg.is_python_constant() for arg in args):
            values = [arg.as_python_constant() for arg in args]
            keywords = {key: value.as_python_constant() for key, value in kwargs.items()}
            return constant(getattr(self.example_value, name)(*values, **keywords))
        if name in ("size", "stride") and not kwargs and len(args) <= 1:
            sizes = self.sizes(tx, name)
            return sizes.call_method(tx, "__getitem__", args, {}) if args else sizes
        return tx.output.create_node(tx, "call_method", name, [self, *args], kwargs)

    def requires_grad_(self, tx: Translator, args: Sequence[VariableTracker],
                       kwargs: dict[str, VariableTracker]) -> VariableTracker:
        """`t.requires_grad_()`, as torch.compile takes it: nothing to do when the tensor
        already is so; an input of the graph changed breaks the graph (its real tensor is
        the one to change); a tensor made in the graph gets a node, marked so that the
        graph's outputs computed from it are found (`OutputGraph.check_requires_grad`):
        a backend that traces autograd would return them without requires_grad. After
        such a find, the frame is traced again and every one of these calls breaks."""
        wanted = (args[0] if args else kwargs.get("requires_grad", constant(True))).realize()
        if not wanted.is_python_constant():
            graph_break(UNSUPPORTED_MUTATION, "Tensor.requires_grad_() with a value known "
                        "only when the graph runs")
        if bool(wanted.as_python_constant()) is self.example_value.requires_grad:
            return self
        if self.source is not None:
            graph_break(UNSUPPORTED_MUTATION, "Tensor.requires_grad_() of an input of the graph")
        if tx.output.break_on_requires_grad:
            graph_break(REQUIRES_GRAD_RETURNED, "requires_grad_() on a tensor made in the graph, "
                        "which the graph returns")
        # allowed on a functional tensor only between these (a backend that traces the
        # graph functionalizes it), as torch.compile's graph has it
        allowed = torch._C._functorch.set_inplace_requires_grad_allowed
        tx.output.create_node(tx, "call_function", allowed, [constant(True)], {}, keep=True)
        result = tx.output.create_node(tx, "call_method", "requires_grad_", [self, *args], kwargs)
        tx.output.create_node(tx, "call_function", allowed, [constant(False)], {}, keep=True)
        # the tensor itself is marked too: `y.requires_grad_()` as a statement leaves
        # `y` naming its own node, which the rest of the frame computes from
        result.node.meta["requires_grad_called"] = self.node.meta["requires_grad_called"] = True
        return result

    def sizes(self, tx: Translator, what: str) -> VariableTracker:
        """`x.size()` / `x.shape` (`what`: "size") or `x.stride()` ("stride"): a tuple of
        constants, with a SymNodeVariable for each symbolic entry."""
        from minidynamo.variables.lists import SizeVariable, TupleVariable

        values = getattr(self.example_value, what)()
        items = tuple(tx.output.size_item(tx, self, what, dim, value)
                      for dim, value in enumerate(values))
        return SizeVariable(items) if what == "size" else TupleVariable(items)

    def unpack_var_sequence(self, tx: Translator) -> list[VariableTracker]:
        """Iterating a tensor walks its first dimension: one `x[i]` node per row."""
        if self.example_value.dim() == 0:
            graph_break(UNSUPPORTED_OPERATOR, "iterating over a 0-d tensor")
        rows = self.example_value.shape[0]  # a symbolic size: the number is specialized
        return [self.getitem(tx, constant(index)) for index in range(int(rows))]

    def getitem(self, tx: Translator, index: VariableTracker) -> VariableTracker:
        import operator

        return tx.output.create_node(tx, "call_function", operator.getitem, [self, index], {})

    def reconstruct(self, codegen: PyCodegen) -> None:
        codegen.load_graph_output(self.node)  # `___graph_out[i]`

    def set_name_hint(self, name: str) -> None:
        """Name the node after the first variable that stores it, as torch.compile does."""
        if self.node.op != "placeholder" and not self.node.meta.get("name_hint_set"):
            self.node._rename(name)
            self.node.meta["name_hint_set"] = True

    def __repr__(self) -> str:
        return "TensorVariable()"


def contains_tensor(value: Any) -> bool:
    """Whether a (nested) example value holds a tensor."""
    if isinstance(value, torch.Tensor):
        return True
    if isinstance(value, (list, tuple)):
        return any(contains_tensor(item) for item in value)
    if isinstance(value, dict):
        return any(contains_tensor(item) for item in value.values())
    return False


def set_data(tx: Translator, tensor: TensorVariable, value: VariableTracker) -> VariableTracker:
    """`x.data = y` on a tensor from outside the frame, recorded as torch.compile records
    it: `torch.Tensor.set_(x, y)` with grad disabled (so autograd does not see it), then
    x's version counter lowered by one (`x.data = y` does not bump it in eager; `set_`
    does). `x` keeps its node (set_'s result is the same tensor): the graph's later reads of
    `x` see the new data, in torch.compile's graph too.

    The trace's FakeTensor of `x` is changed by `set_` too; a backend that makes fakes of
    its inputs again (AOTAutograd) makes them in a fake mode of its own, from the real
    `x` as it is when the graph starts (`OutputGraph.backend_context`). x's TENSOR_MATCH
    compares the real x's sizes, not the changed fake's."""
    from minidynamo.variables.ctx_manager import set_grad_mode

    fake, new = tensor.example_value, value.realize()
    if tensor.source is None or not isinstance(new, TensorVariable):
        graph_break(UNSUPPORTED_MUTATION, "setting .data of a tensor made inside the frame, "
                    "or to something that is not a tensor")
    if fake.dtype != new.example_value.dtype:
        graph_break(UNSUPPORTED_MUTATION, "setting .data of a tensor to another dtype")
    if any(is_symbolic(size) for size in (*fake.size(), *new.example_value.size())):
        graph_break(UNSUPPORTED_MUTATION, "setting .data of a tensor with a dynamic size")
    if fake._base is not None:  # a view of another input: its fake would alias the base's
        graph_break(UNSUPPORTED_MUTATION, "setting .data of a view")
    output = tx.output
    real = input_value(tx, tensor)
    if not isinstance(real, torch.Tensor):
        graph_break(UNSUPPORTED_MUTATION, "setting .data of a tensor that is not a graph input")
    for guard in output.guards:  # its TENSOR_MATCH: the real x's sizes (static: none is a symbol)
        if guard.kind == "TENSOR_MATCH" and guard.source == tensor.source and guard.tensor:
            guard.tensor = guard.tensor[0], None
    output.tracked_fakes[:] = [(example, source) for example, source in output.tracked_fakes
                               if source != tensor.source]
    enabled = torch.is_grad_enabled()
    set_grad_mode(tx, False)
    result = output.create_node(tx, "call_function", torch.Tensor.set_, [tensor, new], {}, keep=True)
    set_grad_mode(tx, enabled)
    output.create_node(tx, "call_function", lower_version_by_one, [result], {}, keep=True)
    return constant(None)


def lower_version_by_one(tensor: torch.Tensor) -> torch.Tensor:
    """Runs in the graph, after `set_`: the version counter `x.data = y` leaves in eager."""
    version = tensor._version
    torch._C._autograd._unsafe_set_version_counter((tensor,), (max(version - 1, 0),))
    return tensor

