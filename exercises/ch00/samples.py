"""Functions the chapter 0 graded tests call: every kind of parameter, closures, globals.

Each signature exercises one rule of how CPython fills a new frame (positional and
keyword arguments, `__defaults__`, `__kwdefaults__`, `*args`, `**kwargs`, positional-only
parameters, a parameter held in a cell); the tensor programs are compiled with
minidynamo and torch.compile and must agree.
"""

from __future__ import annotations

import functools

import torch

SHIFT = 0.5  # a global the compiled programs read


## Signatures (ch00.1) ###################################################################


def positional(a, b, c=3):
    return a, b, c


def keyword_only(a, *, shift, scale=2.0):
    return a, shift, scale


def star_args(a, *rest, flag=False, **options):
    return a, rest, flag, options


def positional_only(a, b=1, /, c=2, *, d=4):
    return a, b, c, d


def captured(x, y=2):
    """`x` and `y` are cells: an inner function reads them."""

    def inner():
        return x + y

    return inner()


@functools.wraps(positional)
def wrapper(*args, **kwargs):
    """A frame of its own: its locals are `args` and `kwargs`, not `positional`'s."""
    return positional(*args, **kwargs)


## Tensor programs ########################################################################


def blend(x, y=None, *more, weight=0.5, bias, **extra):
    out = x * weight + bias + SHIFT
    if y is not None:
        out = out + y
    for tensor in more:
        out = out - tensor
    return out * extra.get("scale", 1.0)


def make_affine(weight):
    """A closure over `weight`, with keyword-only defaults and a global."""

    def affine(x, *, bias=1.0, clamp=None):
        y = x * weight + bias + SHIFT
        return y if clamp is None else y.clamp(max=clamp)

    return affine


def helper(x):
    y = x.sin()
    print("a break inside helper")
    return y.cos()


def calls_helper(x):
    """The call to `helper` breaks: it runs natively, as a frame of its own."""
    a = x + 1
    return helper(a) * 2


class Scaler:
    def __init__(self, factor):
        self.factor = factor

    def scale(self, x):
        y = x * self.factor
        print("a break inside a method")
        return y + 1


SCALER = Scaler(3.0)


def calls_method(x):
    """The call to a bound method breaks: the method runs natively, compiled."""
    a = x - 1
    return SCALER.scale(a) * 2


def breaks(x):
    """A break at the top level: the rest of the frame is a resume function."""
    y = x.sin()
    print("a break at the top level")
    return y.cos()


def one_graph(x, y):
    """No break: one graph."""
    return (x * y).relu() + SHIFT


class Printing(torch.nn.Module):
    """A module whose forward breaks: called natively, that forward is a frame."""

    def forward(self, x):
        y = torch.cos(x) * 2
        print("forward")
        return y + 1


PRINTING = Printing()


def calls_module(x):
    return PRINTING(x).sum()


def tensors(*shapes):
    generator = torch.Generator().manual_seed(0)
    return [torch.randn(shape, generator=generator) for shape in shapes]
