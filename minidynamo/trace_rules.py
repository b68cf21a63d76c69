"""Which torch functions go into the graph, which are inlined, which are skipped (chapter 3).

A call to a torch function is decided by a table, not by code: torch.compile keeps
that table (`torch/_dynamo/trace_rules.py`: about 2,800 torch functions, each named
with the VariableTracker class that handles it), and minidynamo reads it, so the two
compilers decide alike without a hand-kept list:

| torch's class for the function | here | what a call does |
|---|---|---|
| `TorchInGraphFunctionVariable` | `IN_GRAPH` | a `call_function` node (or a constant, with no tensor in its result) |
| `UserFunctionVariable`, `PolyfilledFunctionVariable` | `INLINE` | its Python body is traced |
| `SkipFunctionVariable` and the like | `SKIP` | a graph break: torch.compile does not trace it either |

A function the table does not name is decided by the namespace rule of
`variables/torch.py` (public callables of `torch`, `torch.nn.functional`, ... are
nodes). Answers are looked up by identity, once per object.

A torch function reached natively (after a break, or called by a frame that runs
eagerly) is compiled as a frame of its own unless torch.compile's file rules skip
it as a frame (`torch_skips_frame`: `torch.nn` and most of torch are skipped,
`torch.optim` is not, so an optimizer's `step` is compiled as torch compiles it).

Compare with TorchDynamo: `torch/_dynamo/trace_rules.py` (`lookup`,
`torch_name_rule_map`, `get_torch_obj_rule_map`, `check_verbose`).
"""

from __future__ import annotations

import functools
import types
from typing import Any

IN_GRAPH, INLINE, SKIP = "in_graph", "inline", "skip"

# torch's tracker classes, by name, and what they mean here
TORCH_RULE_KINDS = {
    "TorchInGraphFunctionVariable": IN_GRAPH,
    "UserFunctionVariable": INLINE,
    "PolyfilledFunctionVariable": INLINE,
    "SkipFunctionVariable": SKIP,
    "SparseTensorCreationSkipVariable": SKIP,
}


@functools.cache
def torch_rules() -> dict[int, tuple[Any, str]]:
    """id(function) -> (the function, its kind), from torch.compile's own table; the
    function is kept so that its id stays its own."""
    from torch._dynamo import trace_rules as torch_trace_rules

    return {
        id(function): (function, TORCH_RULE_KINDS[tracker.__name__])
        for function, tracker in torch_trace_rules.get_torch_obj_rule_map().items()
        if tracker.__name__ in TORCH_RULE_KINDS
    }


def torch_rule(value: Any) -> str | None:
    """IN_GRAPH, INLINE or SKIP if torch.compile's table names `value`, else None.
    A callable put out of graphs with `torch._dynamo.disallow_in_graph` is SKIP, and
    so are `torch._dynamo.graph_break` and `skip_frame`, which torch disallows."""
    from torch._dynamo import trace_rules as torch_trace_rules

    if not callable(value):  # (a module with a PEP 562 `__getattr__` answers `__module__`
        return None          # with anything, which torch's lookup then fails on)
    if torch_trace_rules.is_callable_disallowed(value):
        return SKIP
    entry = torch_rules().get(id(value))
    return entry[1] if entry is not None and entry[0] is value else None


@functools.lru_cache(maxsize=4096)
def torch_skips_frame(code: types.CodeType) -> bool:
    """Whether torch.compile runs this frame of torch's own code eagerly, as a frame
    (not inlined): its file rules (`MOD_SKIPLIST`, `MOD_INLINELIST`), asked once per
    code object (torch's code lives as long as the process)."""
    from torch._dynamo import trace_rules as torch_trace_rules

    return torch_trace_rules.check_verbose(code, is_inlined_call=False).skipped
