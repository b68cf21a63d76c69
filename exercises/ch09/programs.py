"""Programs, call sequences and oracles of chapter 9's graded tests: guards, the check
function and the reasons for a recompile.

A sequence of calls goes three ways: eagerly, through torch.compile (`backend="eager"`,
`dynamic=False`: shapes stay static, as minidynamo's) and through minidynamo with your
functions plugged in. Two oracles compare them:

- `check_recompiles`: for each call, 1 when the frame was traced again and 0 when a cache
  entry was reused (torch's `counters["frames"]["ok"]`, minidynamo's
  `counters["frames"]`): the two patterns must be equal call for call, and every value
  must be eager's. A guard that is too weak reuses an entry torch would not (and may
  return a stale answer); one that is too strong recompiles where torch hits.
- `check_reasons`: the guard failure reason of every entry at every recompile, as
  TorchDynamo records them (`torch._dynamo.utils.guard_failures`), each one's first line
  up to its `#` comment, must be minidynamo's, word for word.

Each call builds its arguments afresh (`Call.args()`) and may change the world around
it (`Call.around`: grad mode, an attribute of a module).
"""

from __future__ import annotations

import contextlib
import dataclasses
from typing import Any, Callable

import torch
import torch._dynamo.utils

import minidynamo
from minidynamo import cache, convert_frame
from minidynamo.testing import assert_same_value


@dataclasses.dataclass
class Call:
    args: Callable[[], tuple]
    around: Callable[[], Any] = contextlib.nullcontext


def same_then(first: Callable[[], tuple], changed: Callable[[], tuple]) -> list[Call]:
    """first, first, changed, changed, first: torch's pattern is [1, 0, 1, 0, 0]."""
    return [Call(first), Call(first), Call(changed), Call(changed), Call(first)]


def t(*shape: int, **kwargs: Any) -> torch.Tensor:
    """A tensor of distinct values (so that a wrong graph gives a wrong answer)."""
    return torch.arange(float(torch.Size(shape).numel()), **kwargs).reshape(shape) / 7 + 1


# -- the oracles ---------------------------------------------------------------------------


def _pattern(compiled: Callable, calls: list[Call], frames: Callable[[], int]):
    pattern, outputs = [], []
    for call in calls:
        args = call.args()
        before = frames()
        with call.around():
            outputs.append(compiled(*args))
        pattern.append(frames() - before)
    return pattern, outputs


def torch_run(fn: Callable, calls: list[Call], dynamic: bool | None = False):
    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()
    torch._dynamo.utils.guard_failures.clear()
    compiled = torch.compile(fn, backend="eager", dynamic=dynamic)
    return _pattern(compiled, calls, lambda: torch._dynamo.utils.counters["frames"]["ok"])


def minidynamo_run(fn: Callable, calls: list[Call], dynamic: bool | None = False):
    minidynamo.reset()
    compiled = minidynamo.compile(fn, backend="eager", dynamic=dynamic)  # as torch_run
    return _pattern(compiled, calls, lambda: convert_frame.counters["frames"])


def eager_outputs(fn: Callable, calls: list[Call]) -> list[Any]:
    outputs = []
    for call in calls:
        args = call.args()
        with call.around():
            outputs.append(fn(*args))
    return outputs


def check_recompiles(fn: Callable, calls: list[Call]) -> list[int]:
    """minidynamo traces again exactly where torch.compile does, with eager's values."""
    expected = eager_outputs(fn, calls)
    ours, our_outputs = minidynamo_run(fn, calls)
    theirs, _ = torch_run(fn, calls)
    for index, (want, got) in enumerate(zip(expected, our_outputs)):
        assert_same_value(want, got, path=f"call {index}")
    assert ours == theirs, f"minidynamo traced {ours}, torch.compile {theirs} (1: traced again)"
    return ours


def first_line(reason: str) -> str:
    return reason.split("\n")[0].split("  #")[0].strip()


def recompile_reasons(fn: Callable, calls: list[Call],
                      dynamic: bool | None = False) -> tuple[list[str], list[str]]:
    """(minidynamo's, torch.compile's) reasons, one per entry tried at each recompile."""
    minidynamo_run(fn, calls, dynamic)
    frame_cache = cache.lookup(fn.__code__)
    ours = [first_line(reason) for reason in frame_cache.failures] if frame_cache else []
    torch_run(fn, calls, dynamic)
    theirs = [first_line(reason) for reason in torch._dynamo.utils.guard_failures[fn.__code__]]
    return ours, theirs


def check_reasons(fn: Callable, calls: list[Call], dynamic: bool | None = False) -> list[str]:
    """The reasons, equal to torch.compile's with the same `dynamic` (False: all static;
    None: automatic dynamic shapes, chapter 9)."""
    ours, theirs = recompile_reasons(fn, calls, dynamic)
    assert theirs, "torch.compile did not recompile: the sequence tests nothing"
    assert ours == theirs
    return ours


def entry_of(fn: Callable, index: int = 0) -> cache.CacheEntry:
    """The cache entry `index` (0: the newest) of `fn`'s code."""
    return cache.lookup(fn.__code__).entries[index]


# -- programs -------------------------------------------------------------------------------


def affine(x):
    return x * 2 + 1


def scaled(x, n):
    return x * n


def over_list(xs):
    total = 0
    for item in xs:
        total = total + item
    return total


def over_dict(x, d):
    out = x
    for key in d:
        out = out + d[key]
    return out


def branch_on_none(x, maybe=None):
    if maybe is None:
        return x * 2
    return x * maybe


def on_string(x, mode):
    if mode == "sum":
        return x.sum()
    return x.mean()


# keys that spell the globals' name `G`: a check that rewrites `G` inside them fails
LAYER_SCALES = {"GPT2": 2.0, "Gemma": 3.0}


def scale_by_name(x, name):
    return len(name) * x * LAYER_SCALES[name]  # `len`, a builtin: guarded on `G` itself


class Holder:
    def __init__(self, value):
        self.value = value

    def apply(self, x):
        return x * self.value


class OtherHolder(Holder):
    def apply(self, x):
        return x * 5


def call_method(x, obj):
    return obj.apply(x)


class Net(torch.nn.Module):
    def __init__(self, features: int = 4):
        super().__init__()
        self.fc = torch.nn.Linear(features, features)
        self.alpha = 0.5

    def forward(self, x):
        return torch.relu(self.fc(x)) * self.alpha


def run_net(x, net):
    return net(x) + 1


def add_pair(a, b):
    a.add_(1)
    return a + b


def needs_grad(x):
    return x * 3


def make_closure(k):
    def scaled_by_k(x):
        return x * k
    return scaled_by_k


CLOSURE_TWO, CLOSURE_THREE = make_closure(2.0), make_closure(3.0)


def call_arg(x, fn):
    return fn(x) + 1


def double(x):
    return x * 2


def triple(x):
    return x * 3


@contextlib.contextmanager
def set_attribute(obj, name, value):
    """Set `obj.name` for one call, then put the old value back."""
    old = getattr(obj, name)
    setattr(obj, name, value)
    try:
        yield
    finally:
        setattr(obj, name, old)


@contextlib.contextmanager
def requires_grad_off(parameter: torch.nn.Parameter):
    parameter.requires_grad_(False)
    try:
        yield
    finally:
        parameter.requires_grad_(True)
