"""More programs for the chapter 4 graded tests: inputs whose tracker is easy to get wrong.

Like `programs.py`, each one is compiled by minidynamo and by torch.compile in the
same test and run eagerly; nothing here is an expected answer.
"""

from __future__ import annotations

import torch


class BaseGrid:
    blocks = ((2, 3), (4, 5))


class Grid(BaseGrid):
    """A class attribute of a base class read through `super()`: `super().blocks` is a
    container with no source (`type(grid).blocks` would be this class's own), so its
    items cannot be reloaded from anywhere and must be built at once
    (VariableBuilder.child)."""

    blocks = ((0, 0),)

    def base_blocks(self):
        return super().blocks


def class_table(x, grid):
    rows, cols = grid.base_blocks()[1]
    return x * rows + cols, grid.base_blocks()      # the tuple escapes: it is rebuilt


def scale_parameters(x, weight):
    """A parameter passed as an argument: its tracker must say nn.Parameter."""
    if isinstance(weight, torch.nn.Parameter):
        return x * weight
    return x + weight


class Gate(torch.nn.Module):
    """Module state of two classes: the parameter multiplies, the buffer adds."""

    def __init__(self) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.linspace(0.5, 1.5, 3))
        self.register_buffer("offset", torch.linspace(-1.0, 1.0, 3))

    def forward(self, x):
        for state in (self.weight, self.offset):
            x = x * state if isinstance(state, torch.nn.Parameter) else x + state
        return x


def input_and_sum(x, y):
    return x, x + y                  # x itself comes back: reloaded from L['x']


class Tagged(torch.Tensor):
    """A tensor subclass that keeps Tensor's `__torch_function__`: `x * 2` of a Tagged is
    a Tagged, worked out from the classes of the graph's inputs."""

    def __deepcopy__(self, memo):  # the test harness copies the arguments of each run
        return self.clone()


def tagged_results(x):
    y = x * 2
    return y + 1 if isinstance(y, Tagged) else y - 1
