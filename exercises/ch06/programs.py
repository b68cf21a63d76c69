"""Programs and helpers for the chapter 6 graded tests: branches and graph breaks.

Each program is compiled by minidynamo and by torch.compile in the same test and run
eagerly; nothing here is an expected answer. `TORCH_GB_TYPES` is a dictionary, not
an answer: it translates TorchDynamo's graph-break types (`gb_type`, the keys of
`graph_break_registry.json`) into minidynamo's catalogue kinds, so that a test can
check that both compilers give the same *kind* of reason for a break.
"""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Iterator
from typing import Any

import torch

import minidynamo
import minidynamo.convert_frame
import minidynamo.translator.inlining
from minidynamo.translator import control_flow
from minidynamo.translator import InstructionTranslator
from minidynamo.translator.inlining import InliningInstructionTranslator

# TorchDynamo's gb_type -> minidynamo's catalogue kind, for the breaks these tests make.
TORCH_GB_TYPES = {
    "Data-dependent branching": "data-dependent branch",
    "Failed to trace builtin operator": "unsupported builtin call",
    "Attempted to call function marked as skipped": "unsupported call",
}


# -- conditions on Python values: no break ------------------------------------------------


def sign_of_int(x, n):
    if n > 0:
        return x + n
    return x - n


def flag_and_name(x, flag, name):
    if flag and name == "relu":
        x = torch.relu(x)
    if not flag:
        x = x * 2
    return x


def none_or_scale(x, scale):
    if scale:                      # None and 0.0 are false
        return x * scale
    return x.neg()


def list_truth(x, items):
    if items:
        x = x + len(items)
    if not items:
        x = x - 1
    return x


def dict_and_tuple_truth(x, options, shape):
    if options:
        x = x * options["scale"]
    if shape:
        x = x.reshape(shape)
    return x + 1


def pop_until_empty(x, stack):
    while stack:
        x = x + stack.pop()
    return x


def or_default(x, n):
    k = n or 3                     # JUMP_IF_TRUE_OR_POP on a constant
    m = n and 2                    # JUMP_IF_FALSE_OR_POP
    return x * k + m


# -- user objects: __bool__ and __len__ are traced ----------------------------------------


class Switch:
    def __init__(self, on: bool) -> None:
        self.on = on

    def __bool__(self) -> bool:
        return self.on


class Bag:
    def __init__(self, items: list) -> None:
        self.items = items

    def __len__(self) -> int:
        return len(self.items)


class Plain:
    """No __bool__, no __len__: always true."""


class TensorSwitch:
    """A __bool__ that needs a tensor's data: the branch cannot be decided."""

    def __init__(self, t: torch.Tensor) -> None:
        self.t = t

    def __bool__(self) -> bool:
        return bool(self.t.sum() > 0)


def branch_on_object(x, obj):
    if obj:
        return x + 1
    return x - 1


class Stack(torch.nn.Module):
    """`if self.layers:` asks a ModuleList's __len__; `if self.norm:` is None or a module."""

    def __init__(self, layers: int, norm: bool) -> None:
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(3, 3) for _ in range(layers))
        self.norm = torch.nn.LayerNorm(3) if norm else None

    def forward(self, x):
        if self.layers:
            x = self.layers[0](x)
        if self.norm:
            x = self.norm(x)
        return x.relu()


# -- conditions on tensors: graph breaks ---------------------------------------------------


def tensor_if(x):
    y = x * 2
    if y.sum() > 0:
        return y.relu()
    return y - 1


def tensor_not(x):
    y = x + 1
    if not (y > 0).any():
        return y
    return -y


def tensor_or(x, y):
    z = x.sum() or y               # JUMP_IF_TRUE_OR_POP on a tensor
    return z * 2


def tensor_while(x):
    while x.sum() > 0:
        x = x - 1
    return x


def bool_of_tensor(x):
    y = x + 1
    b = bool(y.sum())
    return y * b


# -- unsupported calls ---------------------------------------------------------------------


def prints(x):
    y = x.sin()
    print("between the graphs")
    return y.cos()


def item(x):
    y = x * 3
    n = y.sum().item()
    return y + n


def skipped_builtin(x):
    y = x.sin()
    return y + len(os.getcwd())


def helper_that_prints(x):
    print("in the helper")
    return x + 1


def calls_a_helper(x):
    y = x.sin()
    z = helper_that_prints(y)
    return z.cos()


def print_in_loop(x):
    for i in range(3):
        x = x + i
        print(i)
    return x


# -- running ------------------------------------------------------------------------------


@contextlib.contextmanager
def custom_translators(**handlers: Any) -> Iterator[None]:
    """Trace with root and inlining translators that have `handlers` added (the
    classes are built here, so their dispatch tables hold these handlers)."""
    root = type("TestInstructionTranslator", (InstructionTranslator,), dict(handlers))
    inlining = type("TestInliningInstructionTranslator", (InliningInstructionTranslator,),
                    dict(handlers))
    saved = (minidynamo.convert_frame.InstructionTranslator,
             minidynamo.translator.inlining.InliningInstructionTranslator)
    minidynamo.convert_frame.InstructionTranslator = root
    minidynamo.translator.inlining.InliningInstructionTranslator = inlining
    try:
        yield
    finally:
        (minidynamo.convert_frame.InstructionTranslator,
         minidynamo.translator.inlining.InliningInstructionTranslator) = saved


def jump_handlers() -> dict[str, Any]:
    """Every conditional jump of Python 3.11 whose handler generic_jump makes, made now
    (with whatever generic_jump is plugged)."""
    make = control_flow.generic_jump
    if_true, if_false = control_flow.if_true, control_flow.if_false
    return dict(
        POP_JUMP_FORWARD_IF_TRUE=make(if_true, keep=False),
        POP_JUMP_BACKWARD_IF_TRUE=make(if_true, keep=False),
        POP_JUMP_FORWARD_IF_FALSE=make(if_false, keep=False),
        POP_JUMP_BACKWARD_IF_FALSE=make(if_false, keep=False),
        JUMP_IF_TRUE_OR_POP=make(if_true, keep=True),
        JUMP_IF_FALSE_OR_POP=make(if_false, keep=True),
    )


def explain_both(fn, *args):
    """(minidynamo.explain, torch._dynamo.explain) of one call, each on its own run."""
    minidynamo.reset()
    ours = minidynamo.explain(fn)(*args)
    torch._dynamo.reset()
    theirs = torch._dynamo.explain(fn)(*args)
    return ours, theirs


def where(torch_reason) -> tuple[str, int]:
    """The user's file and line of one of torch.explain's break reasons (innermost)."""
    frame = torch_reason.user_stack[-1]
    return frame.filename, frame.lineno


def fullgraph_errors(fn, *args) -> tuple[BaseException | None, BaseException | None]:
    """What `fullgraph=True` raises in minidynamo and in torch.compile (None: nothing)."""
    found = []
    for compile_fn, reset in ((minidynamo.compile, minidynamo.reset),
                              (torch.compile, torch._dynamo.reset)):
        reset()
        try:
            compile_fn(fn, backend="eager", fullgraph=True)(*args)
            found.append(None)
        except Exception as error:  # noqa: BLE001 - the error is what we compare
            found.append(error)
    return found[0], found[1]


def stdout_of(fn, *args) -> str:
    """What one call of `fn` prints."""
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        fn(*args)
    return buffer.getvalue()
