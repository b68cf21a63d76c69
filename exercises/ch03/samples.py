"""Programs for the chapter-3 graded tests (nothing here is graded).

Each program exercises one family of VariableTrackers; the tests run it eagerly, under
torch.compile and under minidynamo, and compare values and graphs.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import torch
import torch.nn.functional as F

from minidynamo.stack_oracle import StackStep, assert_stack_depths_match_cpython
from minidynamo.testing import strict_mode


def tensors(*shapes: tuple[int, ...]) -> list[torch.Tensor]:
    """Random inputs, reproducible."""
    generator = torch.Generator().manual_seed(0)
    return [torch.randn(*shape, generator=generator) for shape in shapes]


def assert_stack_depths_match(program: Callable[..., Any], *args: Any) -> list[StackStep]:
    """The stack oracle: before every instruction CPython runs, the symbolic stack is
    exactly as deep as CPython's (a value left behind, or one taken too many, fails at
    the instruction where it happens). Strict mode: an internal error raises instead
    of sending the frame to eager, where nothing would be compared."""
    with strict_mode():
        return assert_stack_depths_match_cpython(program, *args)


# -- operators (call_operator) -------------------------------------------------------------

def folding(x):
    """Rule 1: constants fold while tracing; only the tensor ops reach the graph."""
    scale = 2 ** 3 - 5
    offset = (scale * 4) // 5 % 3
    flag = scale > offset and not (scale == 0)
    return x * scale + offset, flag, "ab" * 2, 7 / 2


def reflected(x, y):
    """Rule 2: a tensor on either side, in either order: `2 - x` is not `x - 2`."""
    return 2 - x, 3 / (y + 1), 0 < x, 10 ** y.abs().neg(), -x @ y.T


def containers(x, y):
    """Rule 3: operators on lists and tuples are their own methods; tensors inside are items."""
    pair = (x,) + (y,)
    xs = [x] * 2
    xs += [y]
    twice = 2 * [y]
    found = 3 in [1, 2, 3]
    table = {"a": x, "b": y}
    return pair[1] + xs[2] * len(xs) + twice[0] - table["a"], found


class Scale:
    """A user class with a method and its reflected twin: `s * 4` and `2 * s` differ."""

    def __init__(self, k):
        self.k = k

    def __mul__(self, other):
        return other * self.k

    def __rmul__(self, other):
        return other - self.k

    def __gt__(self, other):
        return self.k > other


def user_objects(x, y):
    """Rule 3 for an object of a user class: its own method on the left (`s * 4`); with a
    number on the left, its reflected method (`2 * s` is `s.__rmul__(2)`: int's declines)."""
    s = Scale(3)
    return x * (s * 4) + y * (2 * s), 5 < s


def constant_and_list(x, y):
    """Rule 3 with a constant on the left of a list: int's own method says NotImplemented
    to a list, and the operator's whole protocol answers (`3 == xs` is False, not the
    NotImplemented object)."""
    xs = [1, 2]
    return x * (3 == xs) + y * (3 != xs) - ("ab" * 2 == "abab")


def g(x):
    """Seed 001: folding, unrolling, a list that never reaches the graph, `sum` inlined."""
    scale = 2
    parts = []
    for i in range(3):
        parts.append(x * (scale + i))
    return sum(parts)


# -- builtins (BuiltinVariable.call_function) -----------------------------------------------

def builtins_mix(x, y):
    ys = [x, y, x + y]
    n = len(ys)
    total = sum(ys)
    k = min(3, n, 5)
    biggest = max([k, 2, n - 1])
    steps = list(range(k))
    is_tensor = isinstance(x, torch.Tensor) and not isinstance(n, float)
    numbers = abs(-2) + int("3") + round(2.6) + math.floor(math.sqrt(17))
    return total * n + biggest * k, steps, is_tensor, numbers, sorted([3, 1, 2]), bool(ys)


def iteration_builtins(x, y):
    out = []
    for i, (a, b) in enumerate(zip([x, y], [y, x]), start=1):
        out.append(a * i - b)
    return out, any([False, 0, 1]), all(v > 0 for v in (1, 2)), tuple(reversed(out))


# -- constants' methods (ConstantVariable.call_method) -------------------------------------

def strings(x):
    name = "layer_{}".format(3)
    parts = "a,b,c".split(",")
    scale = len(name.upper()) + parts.index("b")
    key = "-".join(reversed(parts))
    return x * scale, key, name.startswith("layer"), (2.5).is_integer(), (10).bit_length()


def activation_by_name(x, name="relu"):
    """A constant's method decides which torch function is called."""
    fn = getattr(torch, name.lower().strip())
    return fn(x) * "xyz".count("y")


# -- tensor attributes (TensorVariable.var_getattr) ----------------------------------------

def attributes(x):
    rows, cols = x.shape
    y = x.T @ x
    if x.dtype == torch.float32 and x.ndim == 2 and not x.requires_grad:
        y = y + rows * cols
    return y.relu().sum(dim=0) + x.mT.mean(), x.device.type, x.is_cuda


def shape_arithmetic(x):
    batch = x.size(0)
    flat = x.reshape(batch, -1)
    return flat * x.shape[-1] + flat.new_ones(flat.shape).cumsum(1), x.dim()


# -- calls to user functions (bind_arguments, inline_call) ----------------------------------

def scaled(x, scale=2.0, *extra, shift=0, **options):
    total = x * scale + shift
    for e in extra:
        total = total + e
    return total * options.get("gain", 1)


def binding(x, y):
    return (scaled(x), scaled(x, 3), scaled(x, 1, y, y, shift=1, gain=2),
            scaled(shift=2, x=y), (lambda a, b=4: a * b)(x), [v + 1 for v in (x, y)])


def inner_closure(x):
    offset = 3

    def add_offset(t, times=1):
        return t + offset * times

    return add_offset(x), add_offset(x, times=2)


def depth(x, n):
    return x if n == 0 else depth(x.cos(), n - 1) + n


def recursion(x):
    return depth(x, 4)


def layer(x, w):
    return F.relu(x @ w)


def network(x, w):
    """Calls several levels deep: every call is inlined, one graph."""
    h = layer(x, w)
    h = layer(h, w.T)
    return F.softmax(h, dim=-1)


def generator(x, y):
    return sum(t * 2 for t in (x, y))


def shifted_rows(x):
    """A generator function reading a parameter (n), a closure cell (x, shift) and a
    global (torch): its suspended frame needs all three."""
    shift = 2

    def rows(n):
        for i in range(n):
            yield torch.relu(x) * i + shift

    return list(rows(3))


def powers(x, n):
    for i in range(n):
        yield x * i


def consume(values):
    if iter(values) is values:  # an iterator can be read once: keep its items
        values = list(values)
    return sum(values) + len(values)


def reads_a_generator(x):
    """`iter(gen) is gen`: a generator is one object, whatever names it has."""
    return consume(powers(x, 3)), consume([x, x])


def tail_calls(x):
    """Three levels of inlined calls, made from translators at depths 0, 1 and 2: they
    fit an `inline_depth_limit` of 3 exactly; with a limit of 2, call_3 is not inlined."""
    return call_1(x)


def call_1(x):
    return call_2(x + 1)


def call_2(x):
    return call_3(x * 2)


def call_3(x):
    return x - 3


async def scaled_later(x):
    return x * 2


def makes_a_coroutine(x):
    """Calling an `async def` function makes a coroutine: minidynamo refuses to inline it."""
    coroutine = scaled_later(x)
    coroutine.close()
    return x + 1


class Block(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)
        self.scale = 0.5

    def helper(self, h):
        return torch.tanh(h) * self.scale

    def forward(self, x):
        return self.helper(self.fc(x)) + x
