"""Cache-hit overhead: eager, torch.compile and minidynamo, same run (chapter 9).

After warm-up, a call of a compiled function is a cache hit: bind the arguments,
run the check function of the entry, run the transformed code. For each workload
we time eager, torch.compile and minidynamo per call (best of `--repeat` runs of
`--number` calls), print each compiled side's overhead over eager and the ratio
minidynamo / torch.compile. Both compile with the "eager" backend, so the graph
itself costs the same on both sides and the overhead is the front end's.

Target (issue 11): minidynamo's overhead at most half of torch.compile's, and the
first call (trace and compile) at most a fifth of torch.compile's.

    python benchmarks/bench_cache_hit.py [--repeat 5] [--number 2000]
"""

from __future__ import annotations

import argparse
import time
from typing import Any, Callable

import torch
import torch._dynamo

import minidynamo


def no_graph(x, n):
    return n + 1


def add_one(x):
    return x + 1


def sum_of(*xs):
    total = xs[0]
    for x in xs[1:]:
        total = total + x
    return total


def scalars(x, n, scale, flag):
    if flag:
        return x * n + scale
    return x - scale


def breaks_once(x):
    y = x * 2
    torch._dynamo.graph_break()
    return y + 1


class Deep(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.Sequential(*[torch.nn.Linear(4, 4) for _ in range(25)])

    def forward(self, x):
        return self.layers(x)


def workloads() -> list[tuple[str, Callable[..., Any], tuple]]:
    x = torch.randn(4)
    deep = Deep()
    return [
        ("no graph", no_graph, (x, 3)),
        ("x + 1", add_one, (x,)),
        ("1 tensor input", sum_of, (x,)),
        ("4 tensor inputs", sum_of, tuple(torch.randn(4) for _ in range(4))),
        ("16 tensor inputs", sum_of, tuple(torch.randn(4) for _ in range(16))),
        ("int/float/bool args", scalars, (x, 3, 0.5, True)),
        ("module, 50 parameters", deep, (torch.randn(2, 4),)),
        ("graph break (2 graphs)", breaks_once, (x,)),
    ]


def per_call(fn: Callable[..., Any], args: tuple, number: int, repeat: int) -> float:
    """Seconds per call: best of `repeat` runs of `number` calls."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn(*args)
        best = min(best, (time.perf_counter() - start) / number)
    return best


def first_call(compile_fn: Callable, fn: Callable, args: tuple) -> float:
    compiled = compile_fn(fn)
    start = time.perf_counter()
    compiled(*args)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--number", type=int, default=2000)
    options = parser.parse_args()
    print(f"{'workload':<24}{'eager us':>10}{'torch +us':>11}{'mini +us':>10}{'ratio':>8}"
          f"{'torch 1st ms':>14}{'mini 1st ms':>13}{'ratio':>8}")
    worst_hit, worst_first = 0.0, 0.0
    for name, fn, args in workloads():
        torch._dynamo.reset()
        minidynamo.reset()
        torch_first = first_call(lambda f: torch.compile(f, backend="eager"), fn, args)
        mini_first = first_call(lambda f: minidynamo.compile(f, backend="eager"), fn, args)
        torch._dynamo.reset()
        minidynamo.reset()
        theirs = torch.compile(fn, backend="eager")
        ours = minidynamo.compile(fn, backend="eager")
        for compiled in (theirs, ours):  # warm up: compile, then a few hits
            for _ in range(3):
                compiled(*args)
        eager = per_call(fn, args, options.number, options.repeat)
        torch_overhead = per_call(theirs, args, options.number, options.repeat) - eager
        mini_overhead = per_call(ours, args, options.number, options.repeat) - eager
        if torch_overhead > 0:
            hit_ratio = mini_overhead / torch_overhead
        else:  # torch.compile is faster than eager here: compare whole calls instead
            hit_ratio = (mini_overhead + eager) / (torch_overhead + eager)
            name += " *"
        first_ratio = mini_first / torch_first
        worst_hit, worst_first = max(worst_hit, hit_ratio), max(worst_first, first_ratio)
        print(f"{name:<24}{eager * 1e6:>10.1f}{torch_overhead * 1e6:>11.1f}"
              f"{mini_overhead * 1e6:>10.1f}{hit_ratio:>8.2f}"
              f"{torch_first * 1e3:>14.1f}{mini_first * 1e3:>13.1f}{first_ratio:>8.2f}")
    print("* torch.compile's call is cheaper than eager's there: the ratio is of whole calls")
    print(f"worst cache-hit overhead ratio (minidynamo / torch.compile): {worst_hit:.2f} "
          f"(target <= 0.5)")
    print(f"worst first-call ratio (minidynamo / torch.compile): {worst_first:.2f} (target <= 0.2)")


if __name__ == "__main__":
    main()
