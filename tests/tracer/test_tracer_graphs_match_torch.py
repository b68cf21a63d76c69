"""The captured graphs are torch.compile's: same nodes, names, targets and outputs.

Each case runs eagerly, under torch.compile and under minidynamo with a recording
backend, and compares values and graphs node by node (op, node name, target).
"""

from __future__ import annotations

import collections
import operator

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from tracer_helpers import assert_same_graphs

torch.manual_seed(0)
X = torch.randn(4, 3)
Y = torch.randn(4, 3)
WEIGHT = torch.randn(3, 3)
Pair = collections.namedtuple("Pair", "left right")


def seed_000_add_relu_mul(x, y):
    return (x + y).relu() * 2


def seed_001_loop_sum(x):
    scale = 2
    parts = []
    for i in range(3):
        parts.append(x * (scale + i))
    return sum(parts)


def store_names_nodes(x, y):
    z = x * y
    return z + 1


def constant_folding(x):
    a = 2 + 3 * 4
    return x * a, x + (a // 5)


def torch_functions(x):
    return torch.relu(x), F.relu(x), torch.add(x, 1, alpha=2), torch.ones(2)


def tensor_methods_and_properties(x):
    return x.view(x.size(0), -1) * x.shape[1], x.dim(), x.dtype, x.T


def reflected_comparison(x):
    return 0 < x, x >= 1


def unary_operators(x):
    return -x, ~(x > 0), +x, abs(x)


def in_place_operator(x):
    x = x.clone()
    x += 1
    x[0] = 2
    return x


def min_max_builtins(x, y):
    a, b = x.sum(), y.sum()  # 0-d tensors: eager max() can compare them
    return max(a, b), min(a, 1)


def iterate_over_tensor(x):
    rows = []
    for row in x:
        rows.append(row * 2)
    return rows


def split_and_unpack(x):
    a, b = x.split(2)
    values, indices = x.max(dim=0)
    return a * 2 + b, values, indices


def global_tensor(x):
    return x @ WEIGHT


def inlined_helper(x):
    def helper(t, k=3):
        return t * k

    return helper(x) + helper(x, k=1)


def closure_over_tensor(x):
    shift = x.mean()

    def centered(y):
        return y - shift

    return centered(x), centered(x * 2)


def comprehensions(x):
    squares = [x * i for i in range(3)]
    table = {f"p{i}": x**i for i in range(1, 3)}
    return torch.stack(squares).sum(0), table


def generator_expression(x):
    return sum(x * i for i in range(3))


def lists_and_dicts(x, items, options):
    total = items[0] + items[1]
    if options["double"]:
        total = total * 2
    return total, len(items), list(options)


def namedtuple_input(pair):
    return pair.left + pair.right, Pair(pair.right, pair.left)


def unused_argument(x, unused):
    return x.sin()


def star_arguments(x, *args, scale=2, **kwargs):
    return x * scale + sum(args) + kwargs["bias"]


def recursion_to_constant_depth(n, x):
    if n == 0:
        return x
    return recursion_to_constant_depth(n - 1, x * n)


def in_place_on_input_returned(x, y):
    x.add_(y)  # a lone returned tensor is a graph output, even an input (Dynamo's fast path)
    return x


def returns_an_untouched_input(x, y):
    z = y * 2
    return x


def mutate_input_list(x, items):
    items.append(x * 2)
    return x.sum()


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 4)
        self.register_buffer("offset", torch.ones(4))

    def forward(self, x):
        return self.fc(x).relu() + self.offset


class Stack(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(3, 3), nn.Linear(3, 3)])
        self.head = nn.Sequential(nn.Linear(3, 2), nn.ReLU())

    def forward(self, x):
        for layer in self.layers:
            x = layer(x) + x
        return self.head(x), len(self.layers)


def rows_read_by_no_one(x, y):
    for _ in y:  # getitems nobody reads: dropped, but torch.compile still compiles
        pass     # the (empty) graph, as it asks for operations before dropping them
    return (x,)


def call_module(model, x):
    return model(x)


CASES = [
    (seed_000_add_relu_mul, (X, Y)),
    (seed_001_loop_sum, (X,)),
    (store_names_nodes, (X, Y)),
    (constant_folding, (X,)),
    (torch_functions, (X,)),
    (tensor_methods_and_properties, (X,)),
    (reflected_comparison, (X,)),
    (unary_operators, (X,)),
    (in_place_operator, (X,)),
    (min_max_builtins, (X, Y)),
    (iterate_over_tensor, (X,)),
    (split_and_unpack, (X,)),
    (global_tensor, (X,)),
    (inlined_helper, (X,)),
    (closure_over_tensor, (X,)),
    (comprehensions, (X,)),
    (generator_expression, (X,)),
    (lists_and_dicts, (X, [X, Y], {"double": True})),
    (namedtuple_input, (Pair(X, Y),)),
    (unused_argument, (X, Y)),
    (recursion_to_constant_depth, (3, X)),
    (mutate_input_list, (X, [])),
    (in_place_on_input_returned, (X.clone(), Y)),
    (returns_an_untouched_input, (X, Y)),
    (rows_read_by_no_one, (X, Y)),
]


@pytest.mark.parametrize("fn, args", CASES, ids=[fn.__name__ for fn, _ in CASES])
def test_same_graph_as_torch_compile(fn, args):
    assert_same_graphs(fn, *args)


def test_star_arguments_at_entry():
    assert_same_graphs(star_arguments, X, 1, 2, bias=3)


@pytest.mark.parametrize("module_class", [Block, Stack])
def test_module_called_from_a_function(module_class):
    torch.manual_seed(0)
    assert_same_graphs(call_module, module_class(), X)


def test_operator_functions_are_graph_nodes():
    def fn(x, y):
        return operator.mul(x, y), operator.getitem(x, 0)

    assert_same_graphs(fn, X, Y)
