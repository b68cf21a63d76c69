"""Dynamic shapes: which sizes and ints become symbols, decided as torch 2.13 does (chapter 9).

A static graph is right for one shape: `x` of size `[3, 4]`, guarded by
`x.size() == (3, 4)`. Called with a size that keeps changing, a static
compiler recompiles on every new size, up to the limit. TorchDynamo's answer
is *automatic dynamic shapes*, and this module makes the same decision:

1. The first compile is static: every size and every int is a constant.
2. Each code object remembers what its inputs looked like at each compile
   (`FrameSizes`, one `SizeEntry` per source name: TorchDynamo's
   `FrameStateSizeEntry` in `pgo.py`). A dimension, or an int, whose value
   differs from the last compile's is marked `AUTO`: it changed once, so it
   will probably change again.
3. On the recompile, an `AUTO` dimension becomes a *symbol* of torch's
   `ShapeEnv` (`s77`): the FakeTensor has size `[s77, 4]`, the graph takes
   `s77` as an input of its own, and the guard is no longer `size()[0] == 3`
   but what the trace needed of `s77`: `2 <= L['x'].size()[0]` (sizes 0 and 1
   are *specialized*: a symbol is only made for sizes of 2 and more, so `x.size(0)
   == 1` is never a case the graph must handle), plus any relation the trace
   relied on (`L['x'].size()[0] == L['y'].size()[0]` after `x + y`).

`dynamic=True` makes every dimension (and every int that is a frame argument)
a symbol from the first call; `dynamic=False` turns the automatic marking off.
`mark_dynamic(x, 0)` / `mark_static(x, 0)` set the attributes torch's own
functions set (`x._dynamo_dynamic_indices`, `x._dynamo_static_indices`), so a
tensor marked for torch.compile is marked for minidynamo and the other way
round. Parameters and module buffers keep static shapes (torch's
`force_parameter_static_shapes`); bools are always constants. A float that
changes (or any float, with `dynamic=True`) becomes data, as torch 2.13 makes
it: the graph takes a 0-d float64 tensor and reads it back with `.item()`, a
SymFloat (`is_dynamic_float`, `OutputGraph.add_float_input`).

Compare with TorchDynamo: `torch/_dynamo/pgo.py` (`FrameStateSizeEntry`,
`update_automatic_dynamic`), `variables/builder.py` (`_automatic_dynamic`,
`wrap_symint`), `decorators.py` (`mark_dynamic`, `mark_static`), and
`torch/fx/experimental/symbolic_shapes.py` (`ShapeEnv`, `produce_guards`).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Any, Collection, Iterable

import torch
from torch._dynamo.source import FloatTensorSource
from torch._guards import GuardSource
from torch._guards import Source as TorchSource
from torch.fx.experimental.symbolic_shapes import (
    DimDynamic,
    RelaxedUnspecConstraint,
    StatefulSymbolicContext,
)

from minidynamo.sources import AttrSource, ChainedSource, Source, TensorSizeSource


class _Auto:
    """The value of a size or an int that changed between compiles (torch's auto_dynamic)."""

    def __repr__(self) -> str:
        return "AUTO"


AUTO = _Auto()

# The attributes torch's mark_* functions set on a tensor; a guard checks them (chapter 9).
DYNAMIC_INDICES = "_dynamo_dynamic_indices"
STATIC_INDICES = "_dynamo_static_indices"
MARK_ATTRIBUTES = (DYNAMIC_INDICES, "_dynamo_weak_dynamic_indices", "_dynamo_unbacked_indices",
                   "_dynamo_strict_unbacked_indices", STATIC_INDICES)
MARKED = "_has_dynamo_dim_marking"  # set by every mark_* function, torch's and ours


@dataclass
class SizeEntry:
    """What one input looked like at the compiles so far: its sizes (a tensor) or its
    value (an int), AUTO where two compiles saw different values."""

    size: tuple[Any, ...] | None = None
    scalar: Any = None

    def merge_size(self, size: tuple[int, ...]) -> tuple[bool, ...]:
        """Record `size`; which dimensions have changed (AUTO), this time or before."""
        if self.size is None or len(self.size) != len(size):
            self.size = tuple(size) if self.size is None else tuple(AUTO for _ in size)
        else:
            self.size = tuple(old if old == new else AUTO for old, new in zip(self.size, size))
        return tuple(old is AUTO for old in self.size)

    def merge_scalar(self, value: int) -> bool:
        """Record `value`; whether it has changed (AUTO), this time or before."""
        if self.scalar is None:
            self.scalar = value
        elif self.scalar != value:
            self.scalar = AUTO
        return self.scalar is AUTO


@dataclass
class FrameSizes:
    """The size history of one code object's inputs, by source name (kept in its cache)."""

    entries: dict[str, SizeEntry] = field(default_factory=dict)

    def entry(self, name: str) -> SizeEntry:
        return self.entries.setdefault(name, SizeEntry())


# -- the decisions ------------------------------------------------------------------


def dynamic_dims(tensor: torch.Tensor, source: Source, sizes: FrameSizes,
                 dynamic: bool | None, static_shapes: bool) -> list[bool]:
    """Which dimensions of `tensor` (found at `source`) get a symbol in this compile.

    `static_shapes`: a parameter or a buffer, whose shape never is dynamic unless
    marked. `dynamic`: compile's option (True: all, False: none automatically,
    None: those whose size changed between compiles)."""
    changed = sizes.entry(source.name()).merge_size(tuple(tensor.size()))
    marked = getattr(tensor, DYNAMIC_INDICES, set())
    static = getattr(tensor, STATIC_INDICES, set())
    dims = []
    for dim in range(tensor.dim()):
        if dim in static:
            dims.append(False)
        elif dim in marked:
            dims.append(True)
        elif static_shapes or dynamic is False:
            dims.append(False)
        else:
            dims.append(dynamic is True or changed[dim])
    return dims


def is_dynamic_int(value: Any, source: Source | None, sizes: FrameSizes,
                   dynamic: bool | None, module_sources: Collection[Source] = ()) -> bool:
    """Whether an int found at `source` becomes a symbol (SymInt) in this compile.

    Only ints reached from the frame's locals can be dynamic: an argument, an item or
    attribute of one, a closure cell (`L['n']`, `L['sizes'][0]`, `L['cfg'].n`). Ints
    read from globals, from anything under an nn.Module (`module_sources`: the sources
    of the modules met while tracing) and from a function's default arguments are
    specialized, as torch does (`is_int_specialization_case`). Bools are never dynamic."""
    if type(value) is not int or source is None or not unspecialized_int_source(source, module_sources):
        return False
    changed = sizes.entry(source.name()).merge_scalar(value)
    return dynamic is True or (dynamic is None and changed)


def is_dynamic_float(value: Any, source: Source | None, sizes: FrameSizes,
                     dynamic: bool | None) -> bool:
    """Whether a float found at `source` becomes a graph input (a SymFloat) in this compile.

    Unlike ints, a float from anywhere may be: an argument, a global, an attribute
    (torch's `wrap_symfloat`, with `specialize_float=False`). NaN and infinities stay
    constants: the ShapeEnv cannot reason about them."""
    if type(value) is not float or source is None:
        return False
    changed = sizes.entry(source.name()).merge_scalar(value)
    if math.isnan(value) or math.isinf(value):
        return False
    return dynamic is True or (dynamic is None and changed)


def unspecialized_int_source(source: Source, module_sources: Collection[Source] = ()) -> bool:
    """Whether an int at `source` may become a symbol: reached from a local of the frame
    (`L['n']`, `L['xs'][1]`, `L['cfg'].n`), not through a module (`L['self'].k`) or a
    function's defaults (`L['f'].__defaults__[0]`)."""
    while isinstance(source, ChainedSource):
        if isinstance(source, AttrSource) and source.member in ("__defaults__", "__kwdefaults__"):
            return False
        source = source.base
        if source in module_sources:
            return False
    return source.is_local()


def symbolic_context(dims: Iterable[bool], view_base: StatefulSymbolicContext | None = None,
                     marked: Collection[int] = (), *,
                     source: TorchSource | None = None) -> StatefulSymbolicContext:
    """How torch's `FakeTensorMode.from_tensor` should size a tensor: a symbol per
    dynamic dimension, strides inferred from the sizes; for a view, its base's context
    (`view_base`: the base is made first, and the view from it). A dimension `marked`
    dynamic by the user must stay a symbol: the ShapeEnv raises ConstraintViolationError
    when the guards are made if the trace specialized it, as under torch.compile.

    The context keeps the symbols it made, by source (a `StatefulSymbolicContext`, as
    TorchDynamo's): the backend's fake mode sizes the same tensor with the same symbols
    (`OutputGraph.call_backend`)."""
    dims = list(dims)
    return StatefulSymbolicContext(
        dynamic_sizes=[DimDynamic.DYNAMIC if dim else DimDynamic.STATIC for dim in dims],
        dynamic_strides=[DimDynamic.INFER_STRIDE for _ in dims],
        constraint_sizes=[RelaxedUnspecConstraint(warn_only=False)
                          if dim and index in marked else None
                          for index, dim in enumerate(dims)],
        constraint_strides=[None for _ in dims],
        view_base_context=view_base,
        tensor_source=source,
    )


def static_context(tensor: torch.Tensor, source: Source) -> StatefulSymbolicContext:
    """Every size a constant, and a view's base's too: how a backend's fake mode sizes an
    input the trace kept static (`OutputGraph.backend_context`), when it asks."""
    base = static_context(tensor._base, AttrSource(source, "_base")) if tensor._is_view() else None
    return symbolic_context([False] * tensor.dim(), base, source=shape_env_source(source))


# -- talking to torch's ShapeEnv ------------------------------------------------------


@dataclass(frozen=True)
class ShapeEnvSource(TorchSource):
    """A source as torch's ShapeEnv wants one: it only reads the guard name, so the
    guards it produces read `L['x'].size()[0]`, the names our check functions use."""

    expression: str

    @property
    def _name_template(self) -> str:
        return self.expression

    @functools.cached_property
    def guard_source(self) -> GuardSource:
        return GuardSource.LOCAL

    def reconstruct(self, codegen: Any) -> None:  # pragma: no cover (never asked)
        raise NotImplementedError


def shape_env_source(source: Source) -> ShapeEnvSource:
    return ShapeEnvSource(source.name())


def symbolic_properties(source: Source, fake: torch.Tensor
                        ) -> Iterable[tuple[TensorSizeSource, torch.SymInt]]:
    """The symbolic sizes of a graph input's FakeTensor, with where the generated code
    reads each (`L['x'].size()[0]`); then its symbolic strides and storage offset, which
    a view passed beside its base has (`f(x, x[1:])`), as TorchDynamo lifts them."""
    properties = [(TensorSizeSource(source, dim), size) for dim, size in enumerate(fake.size())]
    if fake.layout is torch.strided:
        properties += [(TensorSizeSource(source, dim, "stride"), stride)
                       for dim, stride in enumerate(fake.stride())]
        properties.append((TensorSizeSource(source, None, "storage_offset"),
                           fake.storage_offset()))
    return [(where, value) for where, value in properties if is_symbolic(value)]


def float_tensor_source(source: Source) -> FloatTensorSource:
    """The source of a float passed as a tensor, as torch's FakeTensorMode recognizes
    it: the SymFloat it makes for `.item()` is then named after the float itself,
    `L['s']`, in the shape guards."""
    return FloatTensorSource(shape_env_source(source))


def is_symbolic(value: Any) -> bool:
    """A SymInt, SymFloat or SymBool that is not just a number in disguise."""
    if not isinstance(value, (torch.SymInt, torch.SymFloat, torch.SymBool)):
        return False
    return not value.node.is_constant() and value.node.expr.free_symbols != set()


def as_number(value: Any) -> Any:
    """A SymInt, SymFloat or SymBool that is a number in disguise (its symbol was
    specialized: `x.shape[0]` after `s77` was replaced by 3) as that number; anything
    else as it is. Reading it adds no guard: the ShapeEnv already knows the number."""
    if isinstance(value, (torch.SymInt, torch.SymFloat, torch.SymBool)) and not is_symbolic(value):
        number = {torch.SymInt: int, torch.SymFloat: float, torch.SymBool: bool}[type(value)]
        return number(value.node.expr)
    return value


def hint(value: Any) -> Any:
    """The real value behind a symbol (the example it was made from): `s77` -> 5."""
    if is_symbolic(value):
        return value.node.hint
    return value


# -- the user's functions ---------------------------------------------------------------


def _dims(tensor: torch.Tensor, index: int | Iterable[int]) -> set[int]:
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"mark_dynamic/mark_static expect a tensor, got {type(tensor).__name__}")
    dims = {index} if isinstance(index, int) else set(index)
    for dim in dims:
        if not -tensor.dim() <= dim < max(tensor.dim(), 1):
            raise IndexError(f"dimension {dim} is out of range for a tensor of {tensor.dim()} "
                             "dimensions")
    return {dim % tensor.dim() for dim in dims} if tensor.dim() else dims


def mark_dynamic(tensor: torch.Tensor, index: int | Iterable[int]) -> None:
    """Make dimension(s) `index` of `tensor` a symbol from the first compile on
    (`torch._dynamo.mark_dynamic`; torch.compile honours the same mark)."""
    dims = _dims(tensor, index)
    if not hasattr(tensor, DYNAMIC_INDICES):
        setattr(tensor, DYNAMIC_INDICES, set())
    getattr(tensor, DYNAMIC_INDICES).update(dims)
    setattr(tensor, MARKED, True)


def mark_static(tensor: torch.Tensor, index: int | Iterable[int]) -> None:
    """Keep dimension(s) `index` of `tensor` static whatever changes, even with
    `dynamic=True` (`torch._dynamo.mark_static`)."""
    dims = _dims(tensor, index)
    if not hasattr(tensor, STATIC_INDICES):
        setattr(tensor, STATIC_INDICES, set())
    getattr(tensor, STATIC_INDICES).update(dims)
    setattr(tensor, MARKED, True)


def dynamism_marks(tensor: Any) -> tuple:
    """The mark attributes a tensor carries, as a tuple of (attribute, dimensions) pairs."""
    own = getattr(tensor, "__dict__", {})
    return tuple((name, frozenset(own[name])) for name in MARK_ATTRIBUTES if name in own)


def marks_within(tensor: Any, compiled: dict[str, frozenset]) -> bool:
    """torch's rule for reusing an entry compiled for a marked tensor: each mark the
    tensor carries now was there at compile time, on a subset of its dimensions (a
    plain tensor, or fewer marked dimensions, reuses it; a new mark recompiles)."""
    own = getattr(tensor, "__dict__", {})
    for name in MARK_ATTRIBUTES:
        if name in own and (name not in compiled or not compiled[name].issuperset(own[name])):
            return False
    return True
