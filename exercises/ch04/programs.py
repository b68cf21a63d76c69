"""Programs for the chapter 4 graded tests: where inputs come from.

Each one is compiled by minidynamo and by torch.compile in the same test and run
eagerly; nothing here is an expected answer.
"""

from __future__ import annotations

import collections

import torch

Pair = collections.namedtuple("Pair", ["left", "right"])

WEIGHT = torch.linspace(-1.0, 1.0, 4)  # a global tensor: G['WEIGHT'], placeholder G_WEIGHT_


class Config:
    """A plain object whose attributes are inputs: L['cfg'].scale, L['cfg'].shift."""

    def __init__(self) -> None:
        self.scale = torch.full((4,), 2.0)
        self.shift = torch.arange(4.0)
        self.name = "cfg"


class Block(torch.nn.Module):
    """Parameters, a buffer and a submodule: every kind of module state."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(4, 3)
        self.norm = torch.nn.LayerNorm(3)
        self.register_buffer("offset", torch.linspace(0.0, 1.0, 3))

    def forward(self, x):
        return self.norm(self.fc(x)).relu() + self.offset


class Stack(torch.nn.Module):
    """Submodules in a ModuleList: L['self']._modules['layers']._modules['0']..."""

    def __init__(self) -> None:
        super().__init__()
        self.layers = torch.nn.ModuleList([torch.nn.Linear(4, 4) for _ in range(2)])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x).tanh()
        return x


# -- functions -----------------------------------------------------------------------

def add_attributes(x, cfg):
    return x * cfg.scale + cfg.shift


def read_global(x):
    return x + WEIGHT


def sum_items(xs):
    return xs[0] * 2 + xs[1]


def second_item_only(xs, ys):
    return xs[1].sin() + ys[0]


def dict_items(d):
    return d["a"] * d["b"] - d["a"]


def nested_items(d):
    return d["pairs"][1][0].cos() + d["scale"]


def pair_fields(p):
    return p.left - p.right


def same_tensor_twice(x, y):
    return x * y + y


def alias_list(xs, ys):
    xs.append(ys[0] * 2)
    return len(ys)


def many_kinds(x, n, scale, name, flag, items, fn, module):
    if flag and name == "double":
        x = x * 2
    for _ in range(n):
        x = module(fn(x) * scale)
    return x + items[0]


def unused_arguments(x, unused, also_unused, y):
    return x.cos() + y


def first_use_order(a, b, c):
    return c * 2 + a


def late_input(x, y, z):
    t = x.sin() * 2
    return t + z


def shapes_and_dtypes(x, y, idx):
    return x @ y, idx.to(torch.float32).sum()
