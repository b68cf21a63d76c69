"""A common mistake: dynamic_dims forgets `static_shapes`, so with dynamic=True a
module's parameters get symbolic sizes too (torch keeps them static)."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence
import torch
from torch._dynamo.source import FloatTensorSource
from torch._guards import GuardSource
from torch._guards import Source as TorchSource
from torch.fx.experimental.symbolic_shapes import DimDynamic, StatelessSymbolicContext
from minidynamo.sources import ChainedSource, GetItemSource, Source

# defined next to the exercises in the package:
from minidynamo.shapes import DYNAMIC_INDICES, FrameSizes, STATIC_INDICES


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
        elif dynamic is False:  # the mistake: parameters are not kept static
            dims.append(False)
        else:
            dims.append(dynamic is True or changed[dim])
    return dims
