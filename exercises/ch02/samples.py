"""Programs and helpers for the chapter-2 graded tests (nothing here is graded).

The programs are small on purpose: each one needs a few handlers of the symbolic VM,
and the tests run it three ways (CPython, torch.compile, minidynamo) and compare; and
once more with the stack oracle, which checks the symbolic stack's depth against
CPython's before every instruction.
`custom_translators` builds translator classes *inside a test*, so that a plugged
metaclass or `stack_op` is what builds them, and makes the pipeline use them.
"""

from __future__ import annotations

import contextlib
import dis
import operator
from collections.abc import Iterator
from typing import Any

import torch
import torch.nn.functional as F

import minidynamo.convert_frame
import minidynamo.translator.inlining
from minidynamo.stack_oracle import StackStep, assert_stack_depths_match_cpython
from minidynamo.testing import strict_mode
from minidynamo.translator import InliningInstructionTranslator, InstructionTranslator


# -- programs ---------------------------------------------------------------------------

def f(x, y):
    """Seed 001's walk-through: eight instructions, two graph nodes."""
    z = x * y
    return z + 1


def shuffle(x, y):
    """STORE_FAST / LOAD_FAST in a different order than the arguments (and a SWAP)."""
    a, b = y, x
    c = a - b
    return c * b, a / 2


def unused_argument(x, unused, y):
    """An argument that is stored but never used stays out of the graph (lazy)."""
    keep = unused
    return x + y


def rebinds(x):
    """A local rebound several times: every name the value gets is a STORE_FAST."""
    y = x + 1
    y = y * 2
    z = y
    return z - x


def unary(x, flag):
    """UNARY_NEGATIVE, UNARY_INVERT on a constant, UNARY_NOT, BINARY_SUBSCR."""
    pair = (x, -x)
    sign = ~1 if not flag else 1
    return pair[1] * sign, -pair[0]


def arithmetic(x, y):
    """Every kind of binary operator on tensors, in an order that makes operand order matter."""
    return (x - y) / (y + 2) - 3 * x, x ** 2 // 1, 2 - x, y % 3


def mixed(x):
    """Constants fold, tensors record, and the operands keep their order."""
    scale = 10 - 4  # folded: 6
    offset = scale // 4 - 7  # folded: -6
    return (x - scale) / offset


def helper(x, scale=2, *, shift=0):
    return x * scale - shift


def calls(x, y):
    """CALL in every 3.11 shape: global + NULL, method, keyword names, user function."""
    a = torch.relu(x)
    b = torch.add(a, y, alpha=2)
    c = b.clamp(min=0.5, max=3.0)
    d = F.linear(c, torch.ones(4, 4), bias=None)
    return helper(d, 3, shift=1) + helper(y, scale=0.5)


def method_chain(x):
    """LOAD_METHOD ... CALL chains on a tensor and a constant."""
    size = x.size(0)
    return x.view(size, -1).sum(dim=1).softmax(0), "{}-{}".format("n", size)


def with_star_args(x, *rest, **options):
    return x + len(rest) + options.get("bias", 0)


def star_call(x, y):
    """CALL_FUNCTION_EX for a user function, and a plain CALL with keywords."""
    args = (y, y)
    return with_star_args(x, *args, bias=5), with_star_args(x)


def loop_range(x):
    total = x
    for i in range(4):
        total = total + i
    return total


def loop_list(x, y):
    """FOR_ITER over a list of tensors, over enumerate, and a nested loop."""
    out = []
    for k, t in enumerate([x, y, x * y]):
        for j in range(2):
            out.append(t * (k + j))
    return out


def loop_break(x):
    """`break` leaves the loop by a jump; `else` runs only when FOR_ITER is exhausted."""
    for i in range(10):
        x = x + i
        if i == 3:
            break
    for j in range(2):
        x = x * 2
    else:
        x = x - 1
    return x


def loop_empty_and_rows(x):
    """An empty loop never runs its body; iterating a tensor walks its first dimension."""
    for _ in range(0):
        x = x + 100
    rows = []
    for row in x:
        rows.append(row.sum())
    return torch.stack(rows), len(rows)


def loop_zip_dict(x, y):
    acc = 0
    weights = {"a": 2, "b": 3}
    for (name, weight), t in zip(weights.items(), (x, y)):
        acc = acc + t * weight + len(name)
    return acc


def g(x):
    """Seed 001's second example: folding, unrolling, a list and the `sum` polyfill."""
    scale = 2
    parts = []
    for i in range(3):
        parts.append(x * (scale + i))
    return sum(parts)


def unbound_local(x):
    """Reading a deleted local: CPython raises UnboundLocalError; the tracer must not guess."""
    y = x + 1
    del y
    return y


def subtract(x, y):
    return torch.sub(x, y)


def keyword_calls(x, y):
    """Keywords that are not the next positional parameter: `max=` is clamp's third."""
    return torch.clamp(x, max=0.5), torch.add(x, y, alpha=2)


def as_method_call(function):
    """`function` with its call's stack laid out as CPython lays out a method call:
    [callable, self, args] instead of [NULL, callable, args]. LOAD_GLOBAL pushes no
    NULL, and PRECALL / CALL count one argument less: the first is `self`."""
    code = bytearray(function.__code__.co_code)
    for instruction in dis.get_instructions(function):
        if instruction.opname == "LOAD_GLOBAL":
            code[instruction.offset + 1] &= ~1
        if instruction.opname in ("PRECALL", "CALL"):
            code[instruction.offset + 1] -= 1
    changed = type(function)(function.__code__.replace(co_code=bytes(code)),
                             function.__globals__)
    changed.__name__ = f"{function.__name__}_as_method_call"
    return changed


def reads_twice(x, y):
    z = x * y
    return z + x


def long_loop(x):
    for _ in range(200):
        x = x + 1
    return x


def tensors(*shapes: tuple[int, ...]) -> list[torch.Tensor]:
    """Random inputs, reproducible."""
    generator = torch.Generator().manual_seed(0)
    return [torch.randn(*shape, generator=generator) for shape in shapes]


def assert_stack_depths_match(program: Any, *args: Any) -> list[StackStep]:
    """The stack oracle: before every instruction CPython runs, the symbolic stack is
    exactly as deep as CPython's. A handler that leaves a value behind (an exhausted
    iterator, a NULL) fails here at the instruction after it, even when the program's
    value comes out right. Strict mode: an internal error raises instead of sending the
    frame to eager, where nothing would be compared."""
    with strict_mode():
        return assert_stack_depths_match_cpython(program, *args)


# -- translators built inside a test ------------------------------------------------------

@contextlib.contextmanager
def custom_translators(**handlers: Any) -> Iterator[tuple[type, type]]:
    """Build a root and an inlining translator class with `handlers` added (a handler
    set to None is removed), and make the pipeline trace with them in this block.

    The classes are built here, by `BytecodeDispatchTableMeta` (plugged, if a test of
    the metaclass is running), not when the package was imported.
    """
    root = type("TestInstructionTranslator", (InstructionTranslator,), dict(handlers))
    inlining = type("TestInliningInstructionTranslator", (InliningInstructionTranslator,),
                    dict(handlers))
    saved = (minidynamo.convert_frame.InstructionTranslator,
             minidynamo.translator.inlining.InliningInstructionTranslator)
    minidynamo.convert_frame.InstructionTranslator = root
    minidynamo.translator.inlining.InliningInstructionTranslator = inlining
    try:
        yield root, inlining
    finally:
        (minidynamo.convert_frame.InstructionTranslator,
         minidynamo.translator.inlining.InliningInstructionTranslator) = saved


OPERATOR_PROGRAMS = [f, shuffle, unary, arithmetic, mixed]
