"""First-call compile time: minidynamo against torch.compile, same run (chapters 5, 11).

The first call of a compiled function pays for everything: tracing the bytecode,
building the FX graph, compiling it (here the "eager" backend, so this is the
front end's own cost) and running it. For each program both compilers are timed
in turn, each after its own reset, on fresh copies of the arguments:

    torch:       torch._dynamo.reset();  torch.compile(fn, backend="eager")(*args)
    minidynamo:  minidynamo.reset();     minidynamo.compile(fn, backend="eager")(*args)

Groups: the tensor corpus (``tests/corpus/tensor_programs.py``, each program once)
and three modules of this file (an MLP, a small CNN, a transformer block), each
``--repeat`` times. We print per-group medians and totals and the ratio
minidynamo / torch.compile of the totals; the target is at most 0.5. A program that
minidynamo fails on is counted, named, and left out of both sides' totals.

    python benchmarks/bench_compile.py [--repeat 5] [--limit N]
"""

from __future__ import annotations

import argparse
import copy
import math
import statistics
import sys
import time
import warnings
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from corpus import tensor_programs  # noqa: E402

TARGET_RATIO = 0.5


## The three modules ###################################################################


class MLP(nn.Module):
    def __init__(self, width=64, depth=4):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(width, width) for _ in range(depth)])
        self.head = nn.Linear(width, 10)

    def forward(self, x):
        for layer in self.layers:
            x = F.gelu(layer(x))
        return self.head(x)


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1),
            nn.BatchNorm2d(8),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1),
            nn.BatchNorm2d(16),
            nn.ReLU(),
            nn.AdaptiveAvgPool2d(1),
        )
        self.classifier = nn.Linear(16, 10)

    def forward(self, x):
        return self.classifier(self.features(x).flatten(1))


class TransformerBlock(nn.Module):
    """Pre-norm block: causal multi-head self-attention, then a GELU MLP."""

    def __init__(self, width=32, heads=4):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.norm2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))

    def attention(self, x):
        batch, length, width = x.shape
        q, k, v = self.qkv(x).split(width, dim=2)
        q = q.view(batch, length, self.heads, -1).transpose(1, 2)  # (B, nh, T, hs)
        k = k.view(batch, length, self.heads, -1).transpose(1, 2)
        v = v.view(batch, length, self.heads, -1).transpose(1, 2)
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(k.shape[-1])  # (B, nh, T, T)
        mask = torch.ones(length, length).tril() == 0
        scores = scores.masked_fill(mask, float("-inf"))
        y = scores.softmax(dim=-1) @ v  # (B, nh, T, hs)
        return self.proj(y.transpose(1, 2).reshape(batch, length, width))

    def forward(self, x):
        x = x + self.attention(self.norm1(x))
        return x + self.mlp(self.norm2(x))


def module_programs():
    torch.manual_seed(0)
    return {
        "mlp": (MLP(), (torch.randn(8, 64),)),
        "small cnn": (SmallCNN().eval(), (torch.randn(2, 3, 16, 16),)),
        "transformer block": (TransformerBlock(), (torch.randn(2, 8, 32),)),
    }


## Timing ##############################################################################


def torch_first_call(fn, args, kwargs):
    torch._dynamo.reset()
    start = time.perf_counter()
    torch.compile(fn, backend="eager")(*args, **kwargs)
    return time.perf_counter() - start


def minidynamo_first_call_function():
    """minidynamo's timer, or None (with the reason printed) if it cannot compile yet."""
    try:
        import minidynamo

        minidynamo.compile, minidynamo.reset  # noqa: B018 - fail here if not there yet
    except (ImportError, AttributeError) as error:
        print(f"minidynamo.compile is not available ({error}); timing torch.compile only.\n")
        return None

    def first_call(fn, args, kwargs):
        minidynamo.reset()
        start = time.perf_counter()
        minidynamo.compile(fn, backend="eager")(*args, **kwargs)
        return time.perf_counter() - start

    return first_call


def time_group(programs, minidynamo_first_call, repeat):
    """Times of both compilers over ``programs`` [(name, fn, args, kwargs)]; the
    programs minidynamo fails on are reported and left out of both lists."""
    torch_times, mini_times, failures = [], [], []
    for name, fn, args, kwargs in programs:
        for _ in range(repeat):
            fresh = [copy.deepcopy((fn, args, kwargs)) for _ in range(2)]
            torch_time = torch_first_call(*fresh[0])
            if minidynamo_first_call is None:
                torch_times.append(torch_time)
                continue
            try:
                mini_time = minidynamo_first_call(*fresh[1])
            except Exception as error:  # noqa: BLE001 - counted and reported, not hidden
                failures.append(f"{name}: {type(error).__name__}: {str(error).splitlines()[0][:80]}")
                break
            torch_times.append(torch_time)
            mini_times.append(mini_time)
    return torch_times, mini_times, failures


def warm_up(minidynamo_first_call):
    """First compiles in a process pay one-off import and setup costs: pay them here."""
    program = (lambda x: torch.relu(x) + 1, (torch.randn(2),), {})
    torch_first_call(*program)
    if minidynamo_first_call is not None:
        try:
            minidynamo_first_call(*program)
        except Exception:  # noqa: BLE001 - the real runs report failures
            pass


## Report ##############################################################################


def milliseconds(seconds):
    return f"{seconds * 1000:8.1f} ms"


def print_row(group, count, torch_times, mini_times):
    torch_total = sum(torch_times)
    row = f"{group:<18} {count:>5}  {milliseconds(statistics.median(torch_times))}"
    row += f" {milliseconds(torch_total)}"
    if mini_times:
        mini_total = sum(mini_times)
        row += f"  {milliseconds(statistics.median(mini_times))} {milliseconds(mini_total)}"
        row += f"  {mini_total / torch_total:6.2f}"
    print(row)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="timed first calls per module")
    parser.add_argument("--limit", type=int, default=None, help="time only the first N corpus programs")
    options = parser.parse_args()
    warnings.filterwarnings("ignore")

    minidynamo_first_call = minidynamo_first_call_function()
    warm_up(minidynamo_first_call)

    cases = tensor_programs.CASES.cases[: options.limit]
    groups = {"tensor corpus": ([(case.id, case.fn, case.args, case.kwargs) for case in cases], 1)}
    for name, (module, args) in module_programs().items():
        groups[name] = ([(name, module, args, {})], options.repeat)

    print(f"{'group':<18} {'runs':>5}  {'torch median':>11} {'torch total':>11}  "
          f"{'mini median':>11} {'mini total':>11}  {'ratio':>6}")
    all_torch, all_mini, all_failures = [], [], []
    started = time.perf_counter()
    for group, (programs, repeat) in groups.items():
        torch_times, mini_times, failures = time_group(programs, minidynamo_first_call, repeat)
        all_failures += failures
        if torch_times:
            print_row(group, len(torch_times), torch_times, mini_times)
            all_torch += torch_times
            all_mini += mini_times
    print_row("all", len(all_torch), all_torch, all_mini)

    if all_mini:
        ratio = sum(all_mini) / sum(all_torch)
        verdict = "meets" if ratio <= TARGET_RATIO else "misses"
        print(f"\nminidynamo / torch.compile first-call time: {ratio:.2f} ({verdict} the target {TARGET_RATIO})")
    if all_failures:
        print(f"\nminidynamo failed on {len(all_failures)} program(s), left out of both totals:")
        for failure in all_failures:
            print(f"  {failure}")
    print(f"\nbenchmark time: {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
