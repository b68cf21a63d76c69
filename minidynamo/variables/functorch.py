"""torch.func's transforms in the graph: `vmap`, `grad`, `jvp`, `jacrev` ... (chapter 8).

`torch.vmap(f)(x)` and `torch.func.grad(f)(x)` are Python code (`torch/_functorch`),
and torch.compile inlines it like any other: what it cannot inline are the few C
functions that enter and leave a *level* of a transform, and the state switches
around them. Those change torch's global state, as `torch.no_grad()` does, and they
are handled the same way (`ctx_manager.py`): each call is a node of the graph, so the
compiled graph enters the level where eager code would, and it also runs for real
while tracing, so that the FakeTensors made inside are batched (`_add_batch_dim`) or
wrapped for grad (`_wrap_for_grad`) as eager's tensors are. One `vmap` call becomes

    _vmap_increment_nesting(3, 'error')      # level 1 entered
    _add_batch_dim(x, 0, 1)                  # x seen as one row at a time
    ... the body, on batched values ...
    _remove_batch_dim(out, 1, 3, 0)          # the rows stacked again
    _vmap_decrement_nesting()                # level 1 left

The tables below are the whole mechanism:

- `state_changes()`: the functions that enter or leave a level or flip a switch, each
  with the function the graph calls (torch's `predispatch` spelling where it has
  one, which is what the transforms call);
- `state_queries()`: functions that read that state (`get_inplace_requires_grad_allowed`),
  answered now: the graph runs in the state the trace ran in;
- `recorded_loaders()`: calls that only load decompositions once; kept as nodes, as
  torch.compile keeps them.

The graph bakes in the levels it was traced at (`_add_batch_dim(x, 0, 1)`), so a
trace that enters a level guards the transform stack it started from
(FUNCTORCH_STACK_MATCH: a compiled function called inside an eager `vmap` traces
again). Whatever a trace leaves entered (it broke inside `vmap`, it failed) is put
back when the trace ends (`restoring_transform_state`).

Compare with TorchDynamo: `VmapIncrementNestingCtxManagerVariable`,
`GradIncrementNestingCtxManagerVariable` and the like in
`torch/_dynamo/variables/ctx_manager.py`, the handlers for
`_grad_increment_nesting` and `set_inplace_requires_grad_allowed` in
`variables/torch.py`, and `FUNCTORCH_STACK_MATCH` in `guards.py`.
"""

from __future__ import annotations

import contextlib
import functools
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence

import torch
import torch._functorch.predispatch as predispatch
from torch._C import _functorch, _autograd

if TYPE_CHECKING:
    from minidynamo.translator.base import InstructionTranslatorBase as Translator
    from minidynamo.variables.base import VariableTracker


@functools.cache
def state_changes() -> dict[Callable[..., Any], Callable[..., Any]]:
    """The function called -> the function the graph calls (built once, on first use)."""
    recorded_as_called = [
        predispatch._vmap_increment_nesting, predispatch._vmap_decrement_nesting,
        predispatch._jvp_increment_nesting, predispatch._jvp_decrement_nesting,
        predispatch._enter_dual_level, predispatch._exit_dual_level,
        _functorch._grad_increment_nesting, _functorch._grad_decrement_nesting,
        _functorch.set_inplace_requires_grad_allowed, torch._C._set_fwd_grad_enabled,
        _autograd._saved_tensors_hooks_disable, _autograd._saved_tensors_hooks_enable,
    ]
    table = {fn: fn for fn in recorded_as_called}
    # the C functions under the predispatch wrappers, should code call them directly
    table.update({
        _functorch._vmap_increment_nesting: predispatch._vmap_increment_nesting,
        _functorch._vmap_decrement_nesting: predispatch._vmap_decrement_nesting,
        _functorch._jvp_increment_nesting: predispatch._jvp_increment_nesting,
        _functorch._jvp_decrement_nesting: predispatch._jvp_decrement_nesting,
    })
    return table


@functools.cache
def state_queries() -> frozenset[Callable[..., Any]]:
    return frozenset({
        _functorch.get_inplace_requires_grad_allowed, torch._C._is_fwd_grad_enabled,
        _autograd._saved_tensors_hooks_get_disabled_error_message,
    })


@functools.cache
def recorded_loaders() -> frozenset[Callable[..., Any]]:
    return frozenset({
        predispatch.lazy_load_decompositions, torch.autograd.forward_ad._maybe_load_decompositions,
    })


@functools.cache
def _transform_function_ids() -> frozenset[int]:
    return frozenset(map(id, (*state_changes(), *state_queries(), *recorded_loaders())))


def is_transform_function(value: Any) -> bool:
    """One of the functions above: a torch function, called as the tables say."""
    return id(value) in _transform_function_ids()


def call_transform_function(
    tx: Translator, fn: Callable[..., Any], args: Sequence[VariableTracker],
    kwargs: dict[str, VariableTracker],
) -> VariableTracker | None:
    """Record and run a state change; a query or a loader as the tables say; None for
    any other function (a plain torch function)."""
    from minidynamo.variables.constant import ConstantVariable

    if id(fn) not in _transform_function_ids():
        return None
    if fn in state_queries():
        return tx.output.create_node(tx, "call_function", fn, args, kwargs)  # a constant
    if fn in recorded_loaders():
        return tx.output.create_node(tx, "call_function", fn, args, kwargs, keep=True)
    tx.output.guards.functorch_stack()
    result = tx.output.create_node(tx, "call_function", state_changes()[fn], args, kwargs,
                                   keep=True)  # runs it now too: the state changes
    if fn is predispatch._enter_dual_level:
        _open_dual_levels.append(result.as_python_constant())
    elif fn is predispatch._exit_dual_level and _open_dual_levels:
        _open_dual_levels.pop()
    return result if result.is_python_constant() else ConstantVariable(None)


# -- the state a trace must leave as it found it --------------------------------------

# The forward-AD levels entered while tracing and not left yet (a C counter, no getter).
_open_dual_levels: list[int] = []


def transform_state() -> tuple:
    """What the functions of `state_changes()` change, bar the forward-AD levels."""
    return (
        _functorch.get_dynamic_layer_stack_depth(),
        _functorch.get_inplace_requires_grad_allowed(),
        torch._C._is_fwd_grad_enabled(),
        _autograd._saved_tensors_hooks_get_disabled_error_message(),
    )


@contextlib.contextmanager
def restoring_transform_state() -> Iterator[None]:
    """However a trace ends, the transform levels it entered are left and the switches
    it flipped are put back (the graph does all that itself when it runs)."""
    depth, inplace_allowed, fwd_grad, hooks_message = transform_state()
    dual_levels = len(_open_dual_levels)
    try:
        yield
    finally:
        _functorch.pop_dynamic_layer_stack_and_undo_to_depth(depth)
        while len(_open_dual_levels) > dual_levels:
            torch._C._exit_dual_level(level=_open_dual_levels.pop())
        _functorch.set_inplace_requires_grad_allowed(inplace_allowed)
        torch._C._set_fwd_grad_enabled(fwd_grad)
        if _autograd._saved_tensors_hooks_get_disabled_error_message() != hooks_message:
            if hooks_message is None:
                _autograd._saved_tensors_hooks_enable()
            else:
                _autograd._saved_tensors_hooks_disable(hooks_message)
