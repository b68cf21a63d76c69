"""Programs for the chapter 5 graded tests: graphs, returned values and side effects.

Each one is compiled by minidynamo and by torch.compile in the same test and run
eagerly; nothing here is an expected answer.
"""

from __future__ import annotations

import collections

import torch

calls = 0                      # a global the compiled code writes
history: list = []             # a global list the compiled code appends to


class Box:
    """A plain object whose attributes the compiled code writes."""

    def __init__(self) -> None:
        self.total = torch.zeros(3)
        self.steps = 0


class Counter(torch.nn.Module):
    """A module that writes its own attributes in forward."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(3, 3)
        self.calls = 0

    def forward(self, x):
        self.calls = self.calls + 1
        self.last = x.detach()
        return self.fc(x)


# -- graphs -------------------------------------------------------------------------------

def shapes(x, w):
    h = x @ w                       # (2, 3) @ (3, 4) -> (2, 4)
    v = h.view(4, 2).sum(dim=0)     # (2,)
    return v.to(torch.float64), h.int()


def multiple_results(x):
    values, indices = torch.max(x, dim=1)
    top = x.topk(2)
    return values + top.values.sum(), indices


def methods_and_functions(x, y):
    a = torch.relu(x) + y.sigmoid()
    b = a.reshape(-1).cumsum(0)
    return torch.nn.functional.gelu(b) * x.dim()


def in_place(x):
    y = x * 2
    y.add_(1)
    y.mul_(x)
    return y


def metadata_only(x):
    return x.shape[0] + x.dim() + x.numel()


def attribute_reads(x):
    """`x.itemsize` and `x.is_leaf` are answered now, and TorchDynamo keeps the reads."""
    return x * x.itemsize, x.is_leaf


def unused_input(x, y):
    y.size()
    return x + 1


def no_tensor_work(x, n):
    return x, n + 1


def chain(x):
    for _ in range(3):
        x = x.sin() * 2
    return x


# -- returned values ------------------------------------------------------------------------

def mixed_return(x, xs, d):
    y = x.cos()
    return y, len(xs), xs, [y, x], {"y": y, "n": None}, x, d["k"], (1.5, "s")


def same_list_twice(x):
    fresh = [x + 1, x - 1]
    return fresh, fresh


def return_input_and_new(x, xs):
    return xs, x, x * 2


Result = collections.namedtuple("Result", ["out", "count"])


def named_result(x):
    return Result(x.relu(), 2)


# -- side effects ---------------------------------------------------------------------------

def append_to_input(x, xs):
    xs.append(x * 2)
    return x + 1


def mutate_input_list(x, xs):
    xs.append(x.sin())
    xs.insert(0, 7)
    del xs[1]
    xs.extend([x, 1])
    xs[2] = "last"
    return len(xs)


def append_only(x, xs):
    ys = xs
    ys.append(x.cos())
    ys.append(3)
    return x


def list_and_global(x, xs):
    global calls
    calls = calls + 1
    history.append(calls)
    xs.append(x * 2)
    return x.exp()


def write_attributes(x, box):
    box.total = box.total + x
    box.steps = box.steps + 1
    box.label = "seen"
    return box.total * 2


def write_two_objects(x, first, second):
    first.total = x.sin()
    second.total = first.total + 1
    second.steps = first.steps
    return second.total
