"""Tensor corpus: programs that ``torch.compile`` captures in one graph, no break.

For each case minidynamo must capture the same graph as TorchDynamo (same graph
count, placeholders, normalised ops and arguments), return what eager PyTorch
returns and leave the inputs as eager leaves them (side effects applied exactly
once). ``tests/conformance/test_corpus_sanity.py`` checks on TorchDynamo that every
case really is one graph without a break, so the corpus cannot rot silently.

Tensors are small (a handful of elements) and made from a private, seeded
generator; modules are built under a fixed seed without touching the global RNG.
Cases tagged ``"inductor"`` also run with ``backend="inductor"`` (slow on CPU: keep
them few).
"""

from __future__ import annotations

import collections
import collections.abc
import copy
import dataclasses
import functools
import inspect
import itertools
import math
import typing

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn import MSELoss

from . import Registry

CASES = Registry()
case = CASES.case

_generator = torch.Generator().manual_seed(0)


def t(*shape: int) -> torch.Tensor:
    """A small random float tensor from the corpus's own generator."""
    return torch.randn(*shape, generator=_generator)


def ints(*shape: int, high: int = 5) -> torch.Tensor:
    return torch.randint(0, high, shape, generator=_generator)


def seeded(build):
    """Build a module under seed 0 without disturbing the global RNG."""
    with torch.random.fork_rng():
        torch.manual_seed(0)
        return build()


WEIGHT = t(4, 4)  # a global tensor: read by some programs, becomes a graph input
OFFSET = 0.5


## Arithmetic ##########################################################################


@case(t(3, 4), t(3, 4))
def add_tensors(x, y):
    return x + y


@case(t(3, 4), t(3, 4))
def arithmetic_mix(x, y):
    return x * y - x / (y.abs() + 1) + 2


@case(t(4))
def scalar_arithmetic(x):
    return 3 * x + 1, x - 2.5, 1 / (x.abs() + 1), -x, x**2


@case(t(2, 3), t(3, 4))
def matmul_operator(a, b):
    return a @ b


@case(t(3, 4))
def comparison_ops(x):
    return x > 0, x <= 0.5, x == x, (x > 0) & (x < 1), ~(x > 0)


@case(t(3, 3), t(3))
def broadcasting(x, b):
    return x + b, x * b[:, None], (x - b.unsqueeze(0)).sum()


@case(t(5))
def floor_div_and_mod(x):
    return x // 0.5, x % 0.7, torch.remainder(x, 2.0)


@case(t(4), t(4))
def inplace_on_temporary(x, y):
    z = x + y
    z.mul_(2)
    z.add_(1)
    return z


@case(t(2, 3))
def power_and_sqrt(x):
    return x.abs().sqrt(), torch.pow(x, 3), x.abs() ** 0.5, torch.rsqrt(x.abs() + 1)


@case(t(3))
def chained_arithmetic(x):
    y = x
    for k in (1, 2, 3):
        y = y * k + x
    return y


@case(t(2, 2), t(2, 2), t(2, 2))
def three_inputs(a, b, c):
    return a * b + c, torch.addcmul(c, a, b, value=0.5)


@case(ints(6))
def integer_tensors(x):
    return x * 2 + 1, x // 2, x % 3, x.float().mean()


@case(t(4))
def bool_tensors(x):
    mask = x > 0
    return mask.sum(), mask.any(), mask.all(), mask.float() * x


## torch functions #####################################################################


@case(t(3, 4))
def activations(x):
    return torch.relu(x), torch.sigmoid(x), torch.tanh(x), torch.nn.functional.gelu(x)


@case(t(3, 4))
def elementwise_math(x):
    return torch.exp(x), torch.log(x.abs() + 1), torch.sin(x), torch.cos(x), torch.abs(x)


@case(t(3, 4))
def reductions(x):
    return x.sum(), x.mean(dim=0), x.amax(dim=1), x.prod(), x.std(), x.var(dim=1)


@case(t(3, 4))
def max_with_dim(x):
    values, indices = torch.max(x, dim=1)
    return values, indices, torch.argmax(x), x.min(dim=0).values


@case(t(3, 4))
def clamp_and_where(x):
    return torch.clamp(x, -0.5, 0.5), torch.where(x > 0, x, torch.zeros_like(x)), x.clamp(min=0)


@case(t(2, 3), t(2, 3))
def cat_and_stack(a, b):
    return torch.cat([a, b]), torch.cat((a, b), dim=1), torch.stack([a, b]), torch.stack([a, b], dim=-1)


@case(t(2, 3, 4), t(2, 4, 5))
def bmm_and_matmul(a, b):
    return torch.bmm(a, b), torch.matmul(a, b), a.matmul(b).sum(-1)


@case(t(3, 4))
def softmax_family(x):
    return torch.softmax(x, dim=-1), torch.log_softmax(x, dim=1), x.softmax(0)


@case(t(5))
def cumulative_ops(x):
    return torch.cumsum(x, 0), torch.cumprod(x, dim=0), x.cumsum(-1)


@case(t(6))
def topk_and_sort(x):
    values, indices = torch.topk(x, 3)
    sorted_values, order = torch.sort(x, descending=True)
    return values, indices, sorted_values, order


@case(t(2, 3), t(3, 4))
def einsum(a, b):
    return torch.einsum("ij,jk->ik", a, b), torch.einsum("ij->j", a)


@case(t(3), t(4))
def outer_and_dot(a, b):
    return torch.outer(a, b), torch.dot(a, a), torch.inner(b, b)


@case(t(4, 4))
def triangular(x):
    return torch.tril(x), torch.triu(x, diagonal=1), x.diagonal(), torch.trace(x)


@case(t(3, 4))
def norms(x):
    return torch.norm(x), x.norm(dim=1), torch.linalg.vector_norm(x, ord=1)


@case(t(2, 3))
def factories(x):
    return torch.zeros(2, 3) + x, torch.ones_like(x), torch.full((2, 3), 7.0) * x, torch.zeros(3).sum()


@case(t(5))
def arange_and_linspace(x):
    return x + torch.arange(5), torch.linspace(0, 1, 5) * x, torch.arange(0, 10, 2).float()


@case(t(3, 3))
def eye_and_diag(x):
    return x * torch.eye(3), torch.diag(x), torch.diag_embed(x[0])


@case(t(4))
def lerp_and_minimum(x):
    y = x.flip(0)
    return torch.lerp(x, y, 0.3), torch.minimum(x, y), torch.maximum(x, y)


@case(t(2, 3))
def sign_and_rounding(x):
    return torch.sign(x), torch.floor(x), torch.ceil(x), torch.round(x * 3), torch.trunc(x)


@case(t(6))
def logical_ops(x):
    a, b = x > 0, x < 0.5
    return torch.logical_and(a, b), torch.logical_or(a, b), torch.logical_not(a), a ^ b


@case(t(3, 4))
def any_all_count(x):
    return (x > 0).any(dim=1), (x > -5).all(), torch.count_nonzero(x > 0)


@case(t(3, 5))
def mean_std_keepdim(x):
    mean = x.mean(dim=-1, keepdim=True)
    std = x.std(dim=-1, keepdim=True)
    return (x - mean) / (std + 1e-5)


@case(t(4), t(4))
def torch_distance(a, b):
    return torch.dist(a, b), F.cosine_similarity(a[None], b[None]), F.pairwise_distance(a[None], b[None])


## torch.nn.functional #################################################################


@case(t(2, 5))
def functional_activations(x):
    return F.relu(x), F.silu(x), F.elu(x), F.leaky_relu(x, 0.1), F.softplus(x), F.hardtanh(x)


@case(t(2, 4), t(3, 4), t(3))
def functional_linear(x, w, b):
    return F.linear(x, w, b), F.linear(x, w)


@case(t(1, 2, 5, 5), t(3, 2, 3, 3))
def functional_conv2d(x, w):
    return F.conv2d(x, w), F.conv2d(x, w, padding=1, stride=2)


@case(t(1, 2, 6, 6))
def functional_pooling(x):
    return F.max_pool2d(x, 2), F.avg_pool2d(x, kernel_size=3, stride=1), F.adaptive_avg_pool2d(x, 1)


@case(t(2, 3, 4))
def functional_layer_norm(x):
    return F.layer_norm(x, (4,)), F.normalize(x, dim=-1)


@case(t(2, 3))
def functional_pad(x):
    return F.pad(x, (1, 1)), F.pad(x, (0, 2, 1, 0), value=1.0)


@case(t(4, 5), ints(4, high=5))
def functional_losses(logits, target):
    return F.cross_entropy(logits, target), F.nll_loss(F.log_softmax(logits, -1), target)


@case(t(3, 4), t(3, 4))
def functional_regression_losses(a, b):
    return F.mse_loss(a, b), F.l1_loss(a, b), F.smooth_l1_loss(a, b)


@case(ints(5, high=6), t(6, 3))
def functional_embedding(indices, weight):
    return F.embedding(indices, weight)


@case(ints(4, high=3))
def functional_one_hot(labels):
    return F.one_hot(labels, num_classes=3)


@case(t(2, 6))
def functional_dropout_eval(x):
    return F.dropout(x, p=0.5, training=False)


@case(t(1, 1, 3, 3))
def functional_interpolate(x):
    return F.interpolate(x, scale_factor=2, mode="nearest")


@CASES.tag("inductor")
@case(t(2, 3, 4), t(2, 3, 4), t(2, 3, 4))
def scaled_dot_product_by_hand(q, k, v):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    return F.softmax(scores, dim=-1) @ v


@case(t(2, 4))
def functional_glu_and_logsigmoid(x):
    return F.glu(x, dim=-1), F.logsigmoid(x), F.softmin(x, dim=1)


## Tensor methods and attributes #######################################################


@case(t(2, 3, 4))
def shape_attributes(x):
    return x.shape[0] * x, x.ndim, x.dim(), x.numel(), tuple(x.shape), x.size(1)


@case(t(2, 3))
def dtype_attributes(x):
    y = x.to(torch.float64) if x.dtype == torch.float32 else x
    return y, x.dtype == torch.float32, x.is_floating_point(), y.dtype


@case(t(2, 6))
def view_and_reshape(x):
    return x.view(3, 4), x.reshape(-1), x.view(2, 2, 3), x.reshape(x.shape[0], 3, -1)


@case(t(2, 3, 4))
def permute_transpose(x):
    return x.permute(2, 0, 1), x.transpose(0, 1), x.transpose(-1, -2).contiguous(), x[0].t(), x[0].T


@case(t(3, 1, 4))
def squeeze_unsqueeze(x):
    return x.squeeze(1), x.unsqueeze(0), x.squeeze(), x[None], x.unsqueeze(-1).shape


@case(t(2, 3, 4))
def flatten_unflatten(x):
    return x.flatten(), x.flatten(1), x.flatten(0, 1), x.flatten(1).unflatten(1, (4, 3))


@case(t(1, 3))
def expand_repeat(x):
    return x.expand(4, 3), x.repeat(2, 2), x.expand_as(torch.empty(2, 3)), x.repeat_interleave(2, dim=1)


@case(t(6, 2))
def chunk_split(x):
    a, b, c = x.chunk(3)
    d, e = torch.split(x, [2, 4])
    return a + b + c, d.sum() + e.sum(), x.split(4)


@case(t(2, 3))
def type_conversions(x):
    doubles = torch.zeros(1, dtype=torch.float64)
    return x.double(), x.int(), x.long() + 1, x.half().float(), x.bool(), x.type_as(doubles)


@case(t(3, 3))
def clone_detach(x):
    y = x.clone()
    y[0] = 0
    return y, x.detach() * 2


@case(t(3, 4))
def masked_fill(x):
    return x.masked_fill(x > 0, 0.0), x.masked_fill(x < 0, float("-inf")).softmax(-1)


@case(t(4, 3), torch.tensor([2, 0]))
def index_select_gather(x, idx):
    return x.index_select(0, idx), torch.gather(x, 1, torch.zeros(4, 1, dtype=torch.long))


@case(t(3, 4))
def tensor_method_chain(x):
    return x.abs().sqrt().add(1).mul(2).sum(dim=1).mean()


@case(t(4))
def tensor_item_free_methods(x):
    return x.neg(), x.reciprocal(), x.exp().log(), x.pow(2).sub(1).div(3)


@case(t(2, 3))
def new_tensors_from_tensor(x):
    return x.new_zeros(2), x.new_ones((3,)), x.new_full((2,), 5.0), torch.zeros_like(x).add(x)


@case(t(3, 4))
def tensor_size_method(x):
    n, m = x.size()
    return x.view(m, n), x.size(-1), x.new_zeros(x.size()), x.shape == (3, 4)


@case(t(2, 3))
def tensor_properties(x):
    return x.T, x.mT, x.real, x.requires_grad, x.is_contiguous()


@case(t(2, 2, 3))
def movedim_and_swap(x):
    return x.movedim(0, -1), x.swapaxes(1, 2), torch.flip(x, dims=[0]), torch.roll(x, 1, 2)


@case(t(5))
def tensor_fill_and_zero(x):
    y = torch.empty(5)
    y.fill_(2.0)
    z = x.clone()
    z.zero_()
    return y * x, z


## Indexing and slicing ################################################################


@case(t(4, 5))
def basic_indexing(x):
    return x[0], x[-1], x[1, 2], x[:, 0], x[..., -1]


@case(t(4, 6))
def slicing(x):
    return x[1:3], x[:, ::2], x[1:, 2:4], x[:2, 1:-1], x[:, -2:]


@case(t(2, 3, 4))
def ellipsis_and_none(x):
    return x[..., :2], x[None, 0], x[:, None, :, None].shape, x[0, ..., 1]


@case(t(5, 3), torch.tensor([0, 2, 4]))
def tensor_index(x, idx):
    return x[idx], x[idx, 1], x[:, torch.tensor([0, 2])]


@case(t(4, 4))
def list_index(x):
    return x[[0, 2]], x[[1, 3], [0, 1]]


@case(t(3, 4))
def setitem_on_clone(x):
    y = x.clone()
    y[0] = 1.0
    y[:, 1] = y[:, 2] * 2
    y[1:, 2:] += 5
    return y


@case(t(3, 4))
def index_with_python_ints(x):
    i, j = 1, 2
    return x[i, j], x[i:i + 2, j - 1], x[-i]


@case(t(4, 4))
def strided_slicing(x):
    return x[::2, ::2], x[1::2, :], x[::3]


@case(t(3, 4))
def narrow_select(x):
    return x.narrow(1, 1, 2), x.select(0, 2), torch.select(x, 1, 0)


## Shape arithmetic ####################################################################


@case(t(2, 3, 4))
def shape_arithmetic(x):
    batch, rows, cols = x.shape
    return x.reshape(batch * rows, cols), x.view(batch, -1), x.sum() / (rows * cols)


@case(t(2, 8))
def heads_split(x):
    batch, width = x.shape
    heads = 2
    return x.view(batch, heads, width // heads).transpose(0, 1)


@case(t(4, 6))
def shape_based_scale(x):
    return x / math.sqrt(x.shape[-1]), x * x.size(0), x[: x.shape[0] // 2]


@case(t(3, 2))
def shape_in_factory(x):
    return torch.zeros(x.shape) + x, torch.ones(x.shape[0], 1) * x, torch.arange(x.shape[1]) + x


@case(t(2, 3, 4))
def numel_and_len(x):
    return x.view(x.numel()), len(x), x.reshape(len(x), -1), x.shape[-2:]


@case(t(6))
def shape_tuple_ops(x):
    shape = x.shape + (1,)
    return x.view(shape), x.reshape(*x.shape, 1).squeeze(-1), list(x.shape)


## Constant control flow ###############################################################


@case(t(3, 4))
def branch_on_ndim(x):
    if x.ndim == 2:
        return x.sum(1)
    return x.sum()


@case(t(3, 4))
def branch_on_dtype(x):
    if x.dtype == torch.float64:
        return x.float()
    if x.is_floating_point():
        return x * 2
    return x


@case(t(3), True)
@case(t(3), False)
def branch_on_flag(x, flag):
    if flag:
        return x.sin()
    return x.cos()


@case(t(4), "relu")
@case(t(4), "tanh")
def branch_on_string(x, mode):
    if mode == "relu":
        return torch.relu(x)
    elif mode == "tanh":
        return torch.tanh(x)
    return x


@case(t(2, 3))
def branch_on_shape(x):
    if x.shape[0] > 1 and x.shape[1] == 3:
        return x.t()
    return x


@case(t(4), None)
@case(t(4), t(4))
def optional_argument(x, bias):
    if bias is not None:
        x = x + bias
    return x * 2


@case(t(3))
def loop_over_range(x):
    for i in range(4):
        x = x * 0.5 + i
    return x


@case([t(2), t(2), t(2)])
def loop_over_list_of_tensors(tensors):
    total = torch.zeros(2)
    for tensor in tensors:
        total = total + tensor
    return total


@case(t(3))
def loop_with_break(x):
    for i in range(10):
        if i == 3:
            break
        x = x + i
    return x


@case(t(2, 3))
def loop_over_shape(x):
    out = x
    for _ in range(x.shape[0]):
        out = out.cumsum(1)
    return out


@case(t(4))
def while_loop_constant(x):
    i = 0
    while i < 3:
        x = x.cos()
        i += 1
    return x


@case(t(3))
def nested_loops_tensor(x):
    for i in range(2):
        for j in range(2):
            x = x + i * j
    return x


@case(t(4), [1.0, 2.0, 3.0])
def loop_over_python_floats(x, weights):
    return sum([w * x for w in weights])


@case(t(2), 3)
def python_int_argument(x, n):
    out = []
    for i in range(n):
        out.append(x * i)
    return torch.stack(out)


@case(t(3))
def ternary_on_constant(x):
    mode = 2
    y = x * 2 if mode > 1 else x
    return y + (1 if mode == 2 else 0)


@case(t(5))
def enumerate_and_zip_tensors(x):
    parts = x.split(2)
    out = []
    for i, (a, b) in enumerate(zip(parts, parts[::-1])):
        out.append(a.sum() * i + b.sum())
    return out


## Containers ##########################################################################


@case((t(2), t(2)))
def tuple_input(pair):
    a, b = pair
    return a * b


@case([t(3), t(3)])
def list_input_list_output(items):
    return [item * 2 for item in items]


@case([t(2), t(2)])
def list_items_used_out_of_order(xs):
    """Placeholders follow first use: xs[1] becomes a graph input before xs[0]."""
    return xs[0] + xs[1] * 2


@case({"a": t(2), "b": t(2)})
def dict_items_used_out_of_order(d):
    return d["b"] * d["a"]


@case((t(2), t(2)))
def tuple_items_used_out_of_order(pair):
    return pair[1] - pair[0]


@case({"a": t(2), "b": t(2)})
def dict_input_dict_output(d):
    return {"sum": d["a"] + d["b"], "diff": d["a"] - d["b"]}


@case(t(3))
def return_nested_structure(x):
    return {"values": [x, x * 2], "pair": (x.sum(), x.mean()), "n": 3}


@case(t(4))
def return_namedtuple(x):
    Stats = collections.namedtuple("Stats", ["mean", "max"])
    return Stats(x.mean(), x.max())


Output = collections.namedtuple("Output", ["value", "aux"])


@case(t(4))
def return_global_namedtuple(x):
    return Output(value=x.relu(), aux=x.shape[0])


@case(Output(t(2), t(2)))
def namedtuple_input(out):
    return out.value + out.aux, out[0] * 2


@case({"x": t(3), "scale": 2.0, "name": "a"})
def dict_with_mixed_values(config):
    return config["x"] * config["scale"], config["name"]


@case([t(2), [t(2), (t(2),)]])
def nested_container_input(nested):
    a, (b, (c,)) = nested
    return a + b + c


@case(t(3))
def build_dict_in_loop(x):
    out = {}
    for name, fn in (("sin", torch.sin), ("cos", torch.cos)):
        out[name] = fn(x)
    return out


@case({"a": t(2), "b": t(2), "c": t(2)})
def dict_iteration_over_tensors(d):
    return sum([v for k, v in d.items() if k != "b"]), list(d.keys())


@case(t(3))
def return_python_values_too(x):
    return x * 2, 5, "label", None, (1, 2)


@case([t(2), t(2), t(2)])
def unpack_star_tensors(items):
    first, *rest = items
    return first - sum(rest)


@case(t(2, 3))
def tuple_of_tensor_and_shape(x):
    return x.relu(), x.shape, x.size()


## Closures, helpers, Python values ####################################################


def _normalize(x, eps=1e-5):
    return (x - x.mean()) / (x.std() + eps)


def _two_layers(x, w):
    return torch.tanh(x @ w) @ w.t()


@case(t(6))
def inlined_helper(x):
    return _normalize(x), _normalize(x, eps=0.1)


@case(t(2, 4))
def global_tensor_read(x):
    return _two_layers(x, WEIGHT) + OFFSET


@case(t(3))
def nested_function_closure(x):
    scale = 3.0

    def apply(y):
        return y * scale + x

    return apply(x.sin())


@case(t(3))
def closure_over_tensor(x):
    shift = x.mean()

    def centered(y):
        return y - shift

    return centered(x), centered(x * 2)


@case(t(4))
def lambda_on_tensor(x):
    square = lambda v: v * v  # noqa: E731 - a lambda is the point
    return square(x) + (lambda v, k=2: v * k)(x)


@case(t(3))
def higher_order_helper(x):
    def twice(f, v):
        return f(f(v))

    return twice(torch.sin, x), twice(lambda v: v + 1, x)


def _recursive_double(x, depth):
    if depth == 0:
        return x
    return _recursive_double(x * 2, depth - 1)


@case(t(3))
def recursion_constant_depth(x):
    return _recursive_double(x, 3)


@case(t(2), 2.5, 4)
def mix_python_scalars(x, scale, n):
    return x * scale + n, x.pow(n) / scale, (n + 1) * x


@case(t(3), t(3))
def keyword_arguments_helper(x, y):
    def combine(a, b, *, alpha=1.0, beta=0.0):
        return alpha * a + beta * b

    return combine(x, y), combine(x, y, beta=2.0), combine(b=x, a=y, alpha=0.5)


@case(t(2), t(2), t(2))
def star_args_helper(*tensors):
    def total(*items):
        return sum(items)

    return total(*tensors), total(tensors[0])


@case(t(2), scale=3.0)
def kwargs_entry(x, **options):
    return x * options["scale"]


@case(t(4))
def python_math_with_tensor(x):
    return x * math.pi + math.sqrt(2.0), x / math.e


@case(t(3))
def fstring_unused_in_graph(x):
    name = f"layer{x.ndim}"
    return x + len(name)


@case(t(4))
def list_comprehension_tensors(x):
    parts = [x * i for i in range(3)]
    return torch.stack(parts).sum(0), [p.sum() for p in parts]


@case(t(3))
def dict_comprehension_tensors(x):
    return {f"p{k}": x**k for k in range(1, 4)}


@case(t(2, 3))
def sum_max_min_builtins(x):
    rows = [x[0], x[1]]
    return sum(rows), max(x.shape), min(3, x.shape[1]), len(rows)


class Scaler:
    """A user object used inside traced code."""

    def __init__(self, factor):
        self.factor = factor

    def __call__(self, x):
        return x * self.factor

    def scale_and_shift(self, x, shift=1.0):
        return self(x) + shift


@case(t(3))
def user_object_created_inside(x):
    scaler = Scaler(2.0)
    return scaler(x), scaler.scale_and_shift(x)


@case(t(3), Scaler(0.5))
def user_object_argument(x, scaler):
    return scaler.scale_and_shift(x, shift=-1.0), scaler.factor * x


## Mutations of inputs #################################################################


@case(t(3), [])
def append_to_input_list(x, out):
    out.append(x * 2)
    out.append(x.sum())
    return x + 1


@case(t(3), {})
def store_into_input_dict(x, cache):
    cache["double"] = x * 2
    cache["count"] = cache.get("count", 0) + 1
    return cache["double"].sum()


class State:
    """An object whose attributes traced code mutates."""

    def __init__(self):
        self.calls = 0
        self.last = None


@case(t(3), State())
def mutate_object_attributes(x, state):
    state.calls += 1
    state.last = x.mean()
    state.note = "seen"
    return x * state.calls


@case(t(3))
def mutate_input_tensor_inplace(x):
    x.add_(1)
    x.mul_(2)
    return x.sum()


@case(nn.Parameter(t(3)), t(3))
def sgd_step_through_data(w, grad):
    """The update a hand-written optimizer makes: `.data` replaced outside autograd
    (torch.compile records `set_` under no_grad and lowers the version counter)."""
    w.data = w.data - 0.1 * grad
    return w * 2


def with_grad(parameter, grad):
    parameter.grad = grad
    return parameter


@case([with_grad(nn.Parameter(t(3)), t(3)), nn.Parameter(t(2))], 0.1)
def hand_written_sgd_step(params, lr):
    """An optimizer's loop: parameters without a gradient skipped (`p.grad` of an input:
    None, guarded, or another graph input), the others updated through `.data`."""
    for p in params:
        if p.grad is None:
            continue
        p.data = p.data - lr * p.grad
    return params[0] * 1


@case(t(3), t(4))
def data_replaced_then_read(x, y):
    before = x + 1
    x.data = y * 3
    return before, x + 1, x.sum()


@case(t(3))
def version_counter_read(x):
    """`x._version` is read when the graph runs (torch's `_tensor_version` op), so an
    in-place update in the frame shows in it."""
    before = x._version
    x.add_(1)
    return x * (x._version - before)


@case(t(3))
def grad_fn_of_a_result_without_grad(x):
    with torch.no_grad():
        y = x * 2
    if y.grad_fn is None:  # made without grad: None, known while tracing
        return x * y + 1
    return x - y


@case(nn.Parameter(t(3)))
def grad_fn_of_a_leaf_input(w):
    if w.grad_fn is None:  # a leaf: None, guarded (a non-leaf passed next recompiles)
        return w * 2
    return w


def tagged(tensor, **attributes):
    """A tensor with attributes of its own (`x.scale = 2.0`), as libraries tag parameters."""
    tensor.__dict__.update(attributes)
    return tensor


@case(t(3))
def attribute_set_on_an_input_tensor(x):
    x.tag = 3
    return x * x.tag


@case(tagged(t(3), scale=2.0))
def attribute_of_an_input_tensor_read_when_present(x):
    if hasattr(x, "scale") and not hasattr(x, "offset"):
        return x * x.scale
    return x - 1


@case(t(3), t(3))
def attribute_of_an_input_tensor_counted_and_set_to_a_tensor(x, y):
    x.calls = getattr(x, "calls", 0) + 1
    x.partner = y * 2
    return x + x.calls, x.partner + 1


@case(t(3))
def in_place_results_are_their_input(x):
    """An in-place operator or method returns the tensor it changed: `is` says so (a
    fuzz-style probe found `y += 1; y is x` False: each result was a new variable)."""
    y = x
    y += 1
    z = x.mul_(2)
    same = (y is x, z is x, x.to(x.dtype) is x, x.contiguous() is x)
    return same, (x.t() is x, x.view(-1) is x, (x + 0) is x), x * 1


@case(t(3), t(3))
def identity_of_two_inputs(x, w):
    return x is w, x is x, (x + w) is x


@case(t(2, 3))
def mutate_input_tensor_setitem(x):
    x[0] = 0.0
    x[:, -1] = 1.0
    return x.clone()


@case(t(3), [t(3), t(3)])
def mutate_list_of_tensors(x, items):
    items[0] = items[0] + x
    items.pop()
    items.insert(0, x.neg())
    return len(items)


@case(t(2), {"a": t(2), "b": t(2)})
def mutate_dict_of_tensors(x, d):
    d["a"] = d["a"] * x
    del d["b"]
    d["c"] = x.exp()
    return d["a"]


@case(t(3), [[], []])
def mutate_nested_lists(x, buckets):
    buckets[0].append(x)
    buckets[1].append(x.sum())
    buckets.append([x.max()])
    return x


@case(t(3), State(), [])
def mutate_several_inputs(x, state, log):
    state.last = x.sum()
    log.append("called")
    log.append(state.calls)
    x.sub_(1)
    return state.last * 2


@case(t(4), [])
def append_in_loop(x, out):
    for i in range(3):
        out.append(x[i])
    return torch.stack(out)


@case(t(3))
def mutate_local_list_only(x):
    parts = []
    parts.append(x)
    parts.append(x * 2)
    parts.extend([x * 3])
    return torch.cat(parts)


@case(t(2), {"values": []})
def mutate_list_inside_dict(x, state):
    state["values"].append(x + 1)
    state["size"] = len(state["values"])
    return x


## nn.Module ###########################################################################


class MLP(nn.Module):
    def __init__(self, sizes=(4, 8, 3)):
        super().__init__()
        self.fc1 = nn.Linear(sizes[0], sizes[1])
        self.fc2 = nn.Linear(sizes[1], sizes[2])

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.head = nn.Linear(4, 2)

    def forward(self, x):
        x = self.pool(F.relu(self.bn(self.conv(x))))  # (B, 4, 1, 1)
        return self.head(x.flatten(1))


class WithBuffer(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(3))
        self.register_buffer("offset", torch.arange(3.0))

    def forward(self, x):
        return x * self.scale + self.offset


class ListOfLayers(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])

    def forward(self, x):
        for layer in self.layers:
            x = torch.tanh(layer(x))
        return x


class DictOfLayers(nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = nn.ModuleDict({"a": nn.Linear(4, 2), "b": nn.Linear(4, 3)})

    def forward(self, x):
        return {name: head(x) for name, head in self.heads.items()}


class Residual(nn.Module):
    def __init__(self, width=4):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.body = nn.Sequential(nn.Linear(width, width), nn.GELU(), nn.Linear(width, width))

    def forward(self, x):
        return x + self.body(self.norm(x))


class Nested(nn.Module):
    def __init__(self):
        super().__init__()
        self.block1 = Residual()
        self.block2 = Residual()
        self.out = nn.Linear(4, 1)

    def forward(self, x):
        return self.out(self.block2(self.block1(x)))


class WithHelperMethod(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)
        self.temperature = 2.0

    def attend(self, x):
        scores = self.proj(x) @ x.t() / self.temperature
        return scores.softmax(-1)

    def forward(self, x):
        return self.attend(x) @ x


class RawParameters(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(4, 3))
        self.bias = nn.Parameter(torch.zeros(3))

    def forward(self, x):
        return F.linear(x, self.weight.t(), self.bias)


class MultiInput(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(3, 2)
        self.b = nn.Linear(5, 2)

    def forward(self, x, y, *, mix=0.5):
        return mix * self.a(x) + (1 - mix) * self.b(y)


class CountingModule(nn.Module):
    """Mutates a Python attribute of itself on every call."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        return self.fc(x) * self.calls


class Embedder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(10, 4)
        self.norm = nn.LayerNorm(4)

    def forward(self, tokens):
        return self.norm(self.embed(tokens)).mean(1)


class ConvStack(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(2, 4, 3, padding=1),
            nn.BatchNorm2d(4),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(4, 4, 1),
        )

    def forward(self, x):
        return self.features(x).sum(dim=(2, 3))


class TinyAttention(nn.Module):
    def __init__(self, width=8, heads=2):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(width, 3 * width)
        self.out = nn.Linear(width, width)

    def forward(self, x):
        batch, length, width = x.shape
        q, k, v = self.qkv(x).split(width, dim=-1)
        q = q.view(batch, length, self.heads, -1).transpose(1, 2)  # (B, nh, T, hs)
        k = k.view(batch, length, self.heads, -1).transpose(1, 2)
        v = v.view(batch, length, self.heads, -1).transpose(1, 2)
        attention = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
        y = attention.softmax(-1) @ v  # (B, nh, T, hs)
        return self.out(y.transpose(1, 2).reshape(batch, length, width))


def _eval(module: nn.Module) -> nn.Module:
    return module.eval()


CASES.add("linear_module", seeded(lambda: nn.Linear(4, 3)), t(2, 4))
CASES.add("conv2d_module", seeded(lambda: nn.Conv2d(2, 3, 3)), t(1, 2, 5, 5))
CASES.add("batchnorm2d_eval", seeded(lambda: _eval(nn.BatchNorm2d(3))), t(2, 3, 4, 4))
CASES.add("batchnorm2d_train", seeded(lambda: nn.BatchNorm2d(3)), t(2, 3, 4, 4))
CASES.add("sequential_module", seeded(lambda: nn.Sequential(nn.Linear(4, 5), nn.ReLU(), nn.Linear(5, 2))),
          t(3, 4))
CASES.add("mlp_module", seeded(MLP), t(2, 4), tags=("inductor",))
CASES.add("small_cnn_eval", seeded(lambda: _eval(SmallCNN())), t(2, 1, 6, 6), tags=("inductor",))
CASES.add("module_with_buffer", seeded(WithBuffer), t(2, 3))
CASES.add("module_list", seeded(ListOfLayers), t(2, 4))
CASES.add("module_dict", seeded(DictOfLayers), t(2, 4))
CASES.add("residual_block", seeded(Residual), t(2, 4))
CASES.add("nested_modules", seeded(Nested), t(3, 4), tags=("inductor",))
CASES.add("module_helper_method", seeded(WithHelperMethod), t(3, 4))
CASES.add("module_raw_parameters", seeded(RawParameters), t(2, 4))
CASES.add("module_multi_input", seeded(MultiInput), t(2, 3), t(2, 5))
CASES.add("module_keyword_input", seeded(MultiInput), t(2, 3), t(2, 5), mix=0.25)
CASES.add("module_counts_calls", seeded(CountingModule), t(2, 3),
          tags=("traced_again",))  # its counter is an int attribute: guarded, changed
CASES.add("embedding_module", seeded(Embedder), ints(2, 3, high=10))
CASES.add("conv_stack_eval", seeded(lambda: _eval(ConvStack())), t(1, 2, 6, 6))
CASES.add("tiny_attention", seeded(TinyAttention), t(2, 3, 8), tags=("inductor",))
CASES.add("layer_norm_module", seeded(lambda: nn.LayerNorm(5)), t(2, 5))
CASES.add("dropout_eval_module", seeded(lambda: _eval(nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.5)))),
          t(2, 3))

_MLP = seeded(MLP)
_CNN = seeded(lambda: _eval(SmallCNN()))


@case(t(2, 4))
def call_global_module(x):
    return _MLP(x).softmax(-1)


@case(t(1, 1, 6, 6))
def call_global_cnn(x):
    return _CNN(x).argmax(-1)


@case(seeded(MLP), t(2, 4))
def module_as_argument(model, x):
    return model(x), model.fc1.weight.shape[0]


@case(seeded(MLP), t(2, 4))
def module_parameters_as_values(model, x):
    return x @ model.fc1.weight.t() + model.fc1.bias


@case(seeded(ListOfLayers), t(2, 4))
def module_list_indexing(model, x):
    return model.layers[0](x) + model.layers[-1](x), len(model.layers)


@case(seeded(MLP), t(2, 4))
def module_submodule_call_and_attribute(model, x):
    hidden = model.fc1(x)
    return hidden * model.fc1.out_features, model.fc2.in_features


## Mixed programs ######################################################################


@case(t(4, 8))
def layer_norm_by_hand(x):
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5)


@case(t(3, 5), ints(3, high=5))
def cross_entropy_by_hand(logits, target):
    log_probs = logits - logits.logsumexp(-1, keepdim=True)
    return -log_probs.gather(1, target[:, None]).mean()


@case(t(2, 4, 6))
def rms_norm(x):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)


@case(t(4, 6))
def rotary_halves(x):
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([-x2, x1], dim=-1)


@case(t(2, 3, 4))
def causal_mask(x):
    length = x.shape[1]
    mask = torch.ones(length, length).tril().bool()
    scores = x @ x.transpose(-1, -2)
    return scores.masked_fill(~mask, float("-inf")).softmax(-1)


@case(t(3, 4), t(4, 2))
def gelu_mlp_by_hand(x, w):
    h = x @ w
    return 0.5 * h * (1 + torch.tanh(math.sqrt(2 / math.pi) * (h + 0.044715 * h**3)))


@case(t(5))
def softmax_by_hand(x):
    e = torch.exp(x - x.max())
    return e / e.sum()


@case(t(2, 6))
def group_statistics(x):
    groups = x.view(2, 3, 2)
    return groups.mean(-1), groups.amax(dim=(1, 2)), groups.var(-1, unbiased=False)


@case(t(4))
def polynomial(x):
    coefficients = [1.0, -2.0, 0.5, 3.0]
    out = torch.zeros_like(x)
    for power, c in enumerate(coefficients):
        out = out + c * x**power
    return out


@case(t(3, 3))
def matrix_power_loop(x):
    y = torch.eye(3)
    for _ in range(3):
        y = y @ x
    return y


@case(t(6), 0.9)
def exponential_moving_average(x, decay):
    avg = x[0]
    for i in range(1, x.shape[0]):
        avg = decay * avg + (1 - decay) * x[i]
    return avg


@case(t(2, 3))
def stack_of_derived(x):
    return torch.stack([x.sum(0), x.mean(0), x.amax(0)], dim=1)


@case(t(8))
def pairwise_sums(x):
    return [x[i] + x[i + 1] for i in range(0, 8, 2)]


@case(t(2, 4), t(2, 4))
def cosine_by_hand(a, b):
    dot = (a * b).sum(-1)
    return dot / (a.norm(dim=-1) * b.norm(dim=-1))


@case(t(3, 4))
def standardize_columns(x):
    return (x - x.mean(0)) / x.std(0), x.sub(x.min(0).values).div(x.max(0).values - x.min(0).values)


@case(t(4, 4))
def symmetric_part(x):
    return (x + x.T) / 2, (x - x.transpose(0, 1)) / 2


@case(t(1, 1, 4, 4))
def sobel_filter(image):
    kernel = torch.tensor([[-1.0, 0.0, 1.0], [-2.0, 0.0, 2.0], [-1.0, 0.0, 1.0]])
    return F.conv2d(image, kernel.view(1, 1, 3, 3), padding=1)


@case(t(3, 4))
def clip_by_norm(x):
    norm = x.norm(dim=-1, keepdim=True)
    return x * torch.clamp(1.0 / (norm + 1e-6), max=1.0)


@case(t(5), t(5))
def huber_by_hand(a, b):
    diff = (a - b).abs()
    return torch.where(diff < 1.0, 0.5 * diff**2, diff - 0.5).mean()


@case(t(2, 3), t(2, 3))
def stacked_features(a, b):
    features = {"sum": a + b, "prod": a * b}
    return torch.cat([features[k] for k in sorted(features)], dim=-1)


@case(t(4), {"alpha": 0.5, "beta": 2.0})
def config_dict_of_floats(x, config):
    return x * config["alpha"] + config["beta"]


@case(t(3), [1, 2, 3])
def python_list_to_tensor_arithmetic(x, values):
    return x * torch.tensor(values), x + len(values)


def _grow_while_yielding(xs, x):
    xs.append(x * 2)
    yield x + 1
    xs.append(x * 3)
    yield x + 4


@case(t(3), [t(1)])
def extend_by_a_generator_that_appends(x, xs):
    """list.extend runs the generator one item at a time: its own appends interleave."""
    xs.extend(_grow_while_yielding(xs, x))
    return x


@case(t(3), [t(1)])
def iadd_by_a_generator_that_appends(x, xs):
    xs += _grow_while_yielding(xs, x)
    return x


@case(t(3), {"a": t(1)})
def dict_update_from_a_generator_that_writes(x, d):
    def pairs():
        d["inside"] = x * 5
        yield "b", x + 1

    d.update(pairs())
    return x


@case(t(3))
def vars_of_the_frame(x):
    scale = 2
    return x * scale, sorted(vars())


@case(t(3))
def locals_with_a_closure(x):
    k = 3

    def inner():
        return k

    return x + inner(), sorted(locals())


## Attribute lookup as Python does it: builtin descriptors ###############################
# `obj.__class__`, slots, `type(obj).__name__`, `functools.cached_property`: what the
# lookup finds on the type decides the tracker, for builtin descriptors as for properties.


class Slotted:
    __slots__ = ("scale", "shift")

    def __init__(self, scale, shift):
        self.scale = scale
        self.shift = shift

    def __eq__(self, other):  # the harness compares inputs after the call
        return type(other) is Slotted and (self.scale, self.shift) == (other.scale, other.shift)


class Named:
    def __init__(self, scale):
        self.scale = scale


@case(t(3), Named(2.0))
def class_of_an_argument(x, obj):
    if obj.__class__ is Named:
        return x * 2
    return x


@case(t(3), Named(2.0))
def name_of_the_class_of_an_argument(x, obj):
    return x + len(obj.__class__.__name__), obj.__class__.__qualname__


@case(t(3), Slotted(2, 1))
def slots_of_an_argument(x, obj):
    return x * obj.scale + obj.shift


@case(t(3))
def slots_of_an_object_made_while_tracing(x):
    obj = Slotted(3, 2)
    return x * obj.scale - obj.shift


@case(t(3))
def class_of_an_object_made_while_tracing(x):
    obj = Named(2)
    return x * len(obj.__class__.__name__)


@case(t(3), Named(2.0))
def module_of_the_class(x, obj):
    return x + 1, type(obj).__module__, obj.__class__.__module__


class Rows(collections.abc.Sequence):
    """A class with a metaclass (ABCMeta), made while tracing."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, index):
        return index * 2


@case(t(3))
def abstract_sequence_made_while_tracing(x):
    rows = Rows(3)
    return x * len(rows) + rows[1]


def compiling_path(x):
    """Library code that asks whether it is compiled, as transformers does."""
    import torch as imported

    if imported.compiler.is_compiling():
        return x * 2  # the same value, another graph: the path taken shows in the ops
    return x + x


@case(t(3))
def is_compiling_is_true_while_tracing(x):
    return compiling_path(x) + torch.jit.is_scripting()


class Aliased:
    """A config whose `__getattribute__` maps aliases to attribute names (transformers'
    `PreTrainedConfig.attribute_map`)."""

    attribute_map = {"layers": "n_layer"}

    def __init__(self, n_layer):
        self.n_layer = n_layer

    def __getattribute__(self, key):
        if key != "attribute_map" and key in super().__getattribute__("attribute_map"):
            key = super().__getattribute__("attribute_map")[key]
        return super().__getattribute__(key)

    def __setattr__(self, key, value):
        if key in super().__getattribute__("attribute_map"):
            key = super().__getattribute__("attribute_map")[key]
        super().__setattr__(key, value)


@case(t(3), Aliased(3))
def custom_getattribute_of_an_argument(x, config):
    return x * config.layers + config.n_layer


@case(t(3), Aliased(3))
def custom_setattr_of_an_argument(x, config):
    config.layers = 4
    return x * config.n_layer


@case(t(3), Named(2.0))
def dict_of_an_argument(x, obj):
    return x * obj.__dict__["scale"], "scale" in obj.__dict__



class FirstLayers(nn.Module):
    """`self.layers[: n]` on a ModuleList and a Sequential, as decoder stacks do."""

    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(3, 3) for _ in range(3)])
        self.head = nn.Sequential(nn.Linear(3, 3), nn.ReLU(), nn.Linear(3, 3))
        self.used = 2

    def forward(self, x):
        for layer in self.layers[: self.used]:
            x = layer(x)
        return self.head[1:](x)


CASES.add("slices_of_module_containers", seeded(FirstLayers), t(2, 3))


class Chunked(nn.Module):
    """transformers' `apply_chunking_to_forward` counts the arguments of the function it
    is given with `inspect.signature`."""

    def feed(self, hidden, scale=2):
        return hidden * scale

    def forward(self, x):
        parameters = inspect.signature(self.feed).parameters
        names = [name for name in parameters if parameters[name].default is inspect.Parameter.empty]
        return self.feed(x) + len(parameters), names


CASES.add("signature_of_a_method", Chunked(), t(3))


@case(t(3))
def signature_of_a_function(x):
    signature = inspect.signature(compiling_path)
    return x * len(signature.parameters), str(signature), list(signature.parameters)


@case(t(3))
def attribute_of_a_function_made_while_tracing(x):
    tagged = lambda: 1  # noqa: E731
    tagged.foo = 17
    return x + tagged.foo, hasattr(tagged, "foo"), hasattr(tagged, "bar"), tagged.__name__


## Subclasses of dict and OrderedDict (transformers' ModelOutput) ########################


class Table(dict):
    """A dict subclass that adds nothing: every method is dict's."""


class Scores(dict):
    """A dict subclass whose lookups go through its own `__getitem__` and `get`."""

    def __getitem__(self, key):
        return super().__getitem__(key) * 2

    def get(self, key, default=None):
        return self[key] if key in self else default


class Output(collections.OrderedDict):
    """transformers' ModelOutput: an OrderedDict subclass that is also a dataclass; its
    non-None fields are both attributes and entries, it indexes by name or position."""

    def __post_init__(self):
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if value is not None:
                self[field.name] = value

    def __setitem__(self, key, value):
        super().__setitem__(key, value)
        super().__setattr__(key, value)

    def __setattr__(self, name, value):
        if name in {field.name for field in dataclasses.fields(self)} and value is not None:
            super().__setitem__(name, value)
        super().__setattr__(name, value)

    def __getitem__(self, key):
        if isinstance(key, str):
            return dict(self.items())[key]
        return self.to_tuple()[key]

    def to_tuple(self):
        return tuple(self[key] for key in self.keys())

    def update(self, *args, **kwargs):
        raise RuntimeError("an Output is not updated in place")


@dataclasses.dataclass
class LayerOutput(Output):
    hidden: torch.Tensor = None
    attention: torch.Tensor | None = None
    states: tuple | None = None


@case(t(3))
def dict_subclass_made_while_tracing(x):
    registry = Table(scale=2, bias=x)
    registry["shift"] = x + 1
    return registry["bias"] * registry.get("scale") + registry["shift"], len(registry), \
        sorted(registry), "shift" in registry


@case(t(3))
def dict_subclass_returned(x):
    registry = Table(a=x * 2)
    registry.setdefault("b", x + 1)
    return registry


@case(t(3))
def dict_subclass_with_its_own_getitem(x):
    scores = Scores(a=x, b=x + 1)
    return scores["a"] + scores.get("b") + (scores.get("c") is None)


@case(t(3))
def dict_subclass_iterated(x):
    registry = Table(a=x, b=x * 3)
    total = x * 0
    for key in registry:
        total = total + registry[key]
    for key, value in registry.items():
        total = total + value
    return total, list(registry.keys()), dict(registry)


@case(t(3))
def model_output_made_and_read(x):
    out = LayerOutput(hidden=x.sin(), states=(x, x * 2))
    return out.hidden + out["hidden"] + out[0], len(out), list(out.keys()), out.attention


@case(t(3))
def model_output_returned(x):
    return LayerOutput(hidden=x + 1, attention=x * 2)


@case(t(3))
def model_output_to_tuple(x):
    first, second = LayerOutput(hidden=x.cos(), attention=x).to_tuple()
    return first * second


@case(t(3))
def model_output_attribute_set_later(x):
    out = LayerOutput(hidden=x)
    out.attention = x * 3
    return out, out["attention"], isinstance(out, dict)


@case(t(3), Table(a=1.5, b=2))
def dict_subclass_argument_read(x, registry):
    return x * registry["a"] + registry.get("b") + len(registry), "a" in registry


@case(t(3), Table(a=1.5))
def dict_subclass_argument_written(x, registry):
    registry["b"] = x * 2
    del registry["a"]
    return x + 1


@case(t(3))
def builtin_methods_called_unbound(x):
    registry = Table()
    dict.__setitem__(registry, "k", x)
    object.__setattr__(registry, "tag", 3)
    return dict.get(registry, "k") * registry.tag, str.join("-", ["a", "b"])


## copy.deepcopy #########################################################################


class Settings:
    """A plain configuration object, copied before it is changed (transformers' caches)."""

    def __init__(self):
        self.layers = 2
        self.names = ["q", "k"]
        self.sizes = {"hidden": 4, "heads": (2, 2)}
        self.same_names = self.names


SETTINGS = Settings()


@case(t(3))
def deepcopy_of_a_global_object(x):
    copied = copy.deepcopy(SETTINGS)
    copied.layers = 5
    copied.names.append("v")
    return x * copied.layers + len(copied.names) + SETTINGS.layers + len(SETTINGS.names), \
        copied.same_names is copied.names, copied.sizes["heads"], copied.sizes is SETTINGS.sizes


@case(t(3))
def deepcopy_of_containers(x):
    nested = {"a": [1, 2, (3, 4)], "b": "text"}
    copied = copy.deepcopy(nested)
    copied["a"].append(5)
    return x + len(copied["a"]) + len(nested["a"]), copied


@case(t(3))
def deepcopy_then_delattr(x):
    copied = copy.deepcopy(SETTINGS)
    del copied.sizes
    delattr(copied, "same_names")
    return x * copied.layers, hasattr(copied, "sizes"), hasattr(copied, "same_names")


## Torch functions decided by torch.compile's trace rules ################################


@case(t(3))
def torch_availability_checks(x):
    if torch.cuda.is_available() or torch.distributed.is_available() and False:
        return x + 1
    return x * 2


class Attention(nn.Module):
    """nn.MultiheadAttention takes the path torch.compile takes (`_is_make_fx_tracing`)."""

    def __init__(self):
        super().__init__()
        self.attention = nn.MultiheadAttention(4, 2, batch_first=True)

    def forward(self, x, padding):
        out, weights = self.attention(x, x, x, key_padding_mask=padding)
        return out, weights


CASES.add("multihead_attention_with_a_padding_mask", seeded(Attention).eval(), t(2, 3, 4),
          torch.tensor([[False, False, True], [False, False, False]]))


## Library code real models use: itertools, collections, functools, torch metadata ######


@case(t(3))
def itertools_chain(x):
    return sum(itertools.chain([x], (x * 2, x * 3), []))


@case(t(3))
def itertools_product(x):
    return [x * a + b for a, b in itertools.product([1, 2], [3, 4])], \
        list(itertools.product("ab", repeat=2))


@case(t(3))
def itertools_combinations(x):
    return x * len(list(itertools.combinations(range(4), 2)))


@case(t(3))
def itertools_islice(x):
    parts = [x, x * 2, x * 3, x * 4, x * 5]
    return list(itertools.islice(parts, 2)), list(itertools.islice(parts, 1, None, 2))


@case(t(3))
def itertools_accumulate(x):
    return list(itertools.accumulate([x, x, x])), list(itertools.accumulate([1, 2, 3], initial=10)), \
        list(itertools.accumulate([3, 1, 2], max))


@case(t(3))
def defaultdict_of_lists(x):
    groups = collections.defaultdict(list)
    for index, value in enumerate([x, x * 2, x * 3]):
        groups[index % 2].append(value)
    return groups[0][1] + groups[1][0], len(groups)


@case(t(3))
def counter_of_strings(x):
    counts = collections.Counter("abracadabra")
    return x * counts["a"] + counts["z"], len(counts)


@case(t(3))
def dict_keys_compared_with_a_set(x):
    config = {"hidden": 4, "heads": 2}
    return x * (config.keys() == {"heads", "hidden"}), config.keys() != {"hidden"}


@case(t(3))
def finfo_and_iinfo(x):
    return x.clamp(min=torch.finfo(x.dtype).min, max=torch.finfo(torch.float16).max), \
        torch.iinfo(torch.int32).bits, torch.finfo(x.dtype).eps


@case(t(3))
def tensor_predicates_folded(x):
    scale = 2 if x.is_floating_point() and not x.is_complex() else 3
    return x * scale * x.dim() + x.element_size(), x.is_contiguous()


@case(t(3))
def partial_made_while_tracing(x):
    scaled_add = functools.partial(torch.add, alpha=2)
    twice = functools.partial(scaled_add, x)
    return twice(x) + scaled_add(x, other=x, alpha=3)


SCALE_BY_THREE = functools.partial(torch.mul, other=3)


@case(t(3))
def partial_from_a_global(x):
    return SCALE_BY_THREE(x) + SCALE_BY_THREE.func(x, 2)


@functools.lru_cache(maxsize=None)
def cached_width(depth):
    return depth * 2


@case(t(3))
def lru_cache_function(x):
    return x * cached_width(3)


@case(t(3))
def class_hierarchy_read(x):
    return x * len(type(x).__mro__), [base.__name__ for base in LayerOutput.__mro__][:2]


@case(t(3))
def in_place_operator_on_an_int(x):
    buckets = 0  # T5's relative position buckets: `0 += tensor` is `0 + tensor`
    buckets += (x > 0).to(torch.long) * 4
    scale = 3
    scale *= x
    return buckets, scale


@case(t(3))
def recursive_inner_function(x):
    def to_list(value):  # transformers' PretrainedConfig.to_dict has this helper
        if isinstance(value, (list, tuple)):
            value = [to_list(item) for item in value]
        return value

    def factorial(n):
        return 1 if n == 0 else n * factorial(n - 1)

    return x * len(to_list([1, (2, 3)])) + factorial(4), to_list(((1,), 2))


# huggingface_hub's strict dataclasses validate fields through a dict keyed by classes and
# `typing` forms, looked up with `get_origin` of the field's annotation
VALIDATORS = {list: len, dict: len, typing.Union: None}


@case(t(3))
def dict_keyed_by_classes_and_typing_forms(x):
    annotation = typing.Optional[int]
    origin = typing.get_origin(annotation)
    return x * VALIDATORS.get(list)([1, 2]), origin is typing.Union, \
        VALIDATORS.get(origin) is None, int in typing.get_args(annotation), \
        {int: 1, str: 2}[str]


@case(t(3))
def dispatcher_operators(x):
    return torch.ops.aten.add(x, 1) + torch.ops.aten.mul.Tensor(x, x)


@case(t(3))
def model_output_returned_beside_a_tensor(x):
    out = LayerOutput(hidden=x.sin())  # made empty, filled after the rest: torch's output order
    return out, out["hidden"] + 1, Table(a=x.cos())


@case(t(4, 5), t(4, 5))
def loss_module_made_while_tracing(prediction, target):
    """Model heads build their loss module in forward: nn.Module.__init__ is traced.
    (torch.compile turns `CrossEntropyLoss(...)` itself into a call of
    F.cross_entropy, without tracing the constructor; minidynamo traces it, so its
    graph has nn.Module.__init__'s `_log_api_usage_once` more.)"""
    loss_function = MSELoss(reduction="sum")
    return loss_function(prediction, target)


@case(t(2, 3))
def module_made_while_tracing_with_a_submodule(x):
    block = nn.Sequential(nn.ReLU(), nn.Tanh())
    return block(x) * 2


@case(t(2))
def deque_made_while_tracing(x):
    """A bounded deque drops from the other end as it fills."""
    window = collections.deque([x, x + 1], maxlen=3)
    window.append(x * 2)
    window.appendleft(x - 1)
    first = window.popleft()
    window.append(x * 5)
    return first, list(window), len(window), window


@case(t(2), collections.deque([t(2), t(2)], maxlen=4))
def deque_input_mutated(x, history):
    history.append(x.sum())
    oldest = history.popleft()
    return oldest * 2 + x, history[-1]


@case(t(3))
def itertools_zip_longest(x):
    pairs = list(itertools.zip_longest([x, x * 2, x * 3], [1, 2], fillvalue=0))
    return [a * b for a, b in pairs], list(itertools.zip_longest("ab", [x]))


from .feature_programs import CASES as _FEATURE_CASES  # noqa: E402  (issue 12's feature corpus)

for _case in _FEATURE_CASES.cases:
    CASES.add(_case.id, _case.fn, *_case.args, tags=tuple(_case.tags), **_case.kwargs)
