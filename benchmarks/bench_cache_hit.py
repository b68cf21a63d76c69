"""Cache-hit overhead: eager, torch.compile and minidynamo, same run (chapter 9).

After warm-up, a call of a compiled function is a cache hit: bind the arguments,
run the check function of the entry, run the transformed code, which calls the
graph. A front end's overhead is what a hit costs besides the graph: the guards, the
binding and the transformed code. It is timed directly, per call (best of `--repeat`
runs of `--number` calls, all sides interleaved): both compilers compile with a
backend whose graphs run on their first call and replay those outputs afterwards
(`benchmarks/replay.py`), so that a hit costs the front end's work
and nearly nothing for the graph. (Timing the compiled call minus the graphs alone
subtracts two large times; with a graph of 25 Linear layers the noise of a shared
machine is larger than the difference.) Eager is timed beside them for scale. The
ratio is minidynamo's overhead over torch.compile's. "guards us" is the part of each
overhead that is the guard check alone (torch.compile's C++ guard tree, then
minidynamo's check function), on the first frame's locals.

Target (issue 11): minidynamo's overhead at most half of torch.compile's, and the
first call (trace and compile) at most a fifth of torch.compile's.

The first call is the median of `--first-runs` fresh compiles on each side.

    python benchmarks/bench_cache_hit.py [--repeat 5] [--number 2000] [--first-runs 7]
"""

from __future__ import annotations

import argparse
import inspect
import statistics
import time
from typing import Any, Callable

import torch
import torch._dynamo
from torch._dynamo.eval_frame import _debug_get_cache_entry_list

import minidynamo
from minidynamo import cache
from replay import ReplayingBackend


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


def per_call(timed: dict[str, tuple[Callable[..., Any], tuple]], number: int,
             repeat: int) -> dict[str, float]:
    """Seconds per call of each callable: the best of `repeat` runs of `number` calls,
    the runs of all callables interleaved, so that a slow moment of the machine does
    not fall on one side only."""
    best = dict.fromkeys(timed, float("inf"))
    for _ in range(repeat):
        for name, (fn, args) in timed.items():
            start = time.perf_counter()
            for _ in range(number):
                fn(*args)
            best[name] = min(best[name], (time.perf_counter() - start) / number)
    return best


def guard_checks(fn: Callable, args: tuple, number: int) -> str:
    """Microseconds per check of the frame's cache entry's guards alone, torch.compile's
    C++ guard tree (`guard_manager.check`) and minidynamo's generated check function,
    on the frame's locals of one call: how much of each overhead is the guards (of the
    first frame only, after a break; "-" where a compiler keeps no entry for it)."""
    frame = type(fn).forward if isinstance(fn, torch.nn.Module) else fn
    bound = inspect.signature(frame).bind(*((fn,) if frame is not fn else ()), *args)
    f_locals = dict(bound.arguments)
    theirs = _debug_get_cache_entry_list(frame.__code__)
    ours = cache.lookup(frame.__code__).entries
    if not theirs or not ours:
        return "-"
    f_globals = frame.__globals__
    times = []
    for check in (lambda: theirs[0].guard_manager.check(f_locals),
                  lambda: ours[0].check.check(f_locals, f_globals)):
        if not check():
            raise SystemExit(f"{frame.__name__}: a guard check fails on the timed call's locals")
        start = time.perf_counter()
        for _ in range(number):
            check()
        times.append((time.perf_counter() - start) / number)
    return f"{times[0] * 1e6:.1f} /{times[1] * 1e6:>5.1f}"


def first_calls(fn: Callable, args: tuple, runs: int) -> tuple[float, float]:
    """The first call of a fresh compile (trace, guards, backend), torch.compile's and
    minidynamo's: the median of `runs` compiles each, alternating, both caches reset
    before each. One first call is a noisy sample (a collection of the garbage the other
    side left may fall in it); `main` compiles a warm-up function on both sides first,
    so that neither pays its one-time imports and initialisation here."""
    def one(compile_fn: Callable) -> float:
        torch._dynamo.reset()
        minidynamo.reset()
        compiled = compile_fn(fn)
        start = time.perf_counter()
        compiled(*args)
        return time.perf_counter() - start

    times: dict[str, list[float]] = {"torch": [], "mini": []}
    for _ in range(runs):
        times["torch"].append(one(lambda f: torch.compile(f, backend="eager")))
        times["mini"].append(one(lambda f: minidynamo.compile(f, backend="eager")))
    return statistics.median(times["torch"]), statistics.median(times["mini"])


def warm_up() -> None:
    """A first compile on each side: imports and one-time set-up are not a workload's."""
    for compile_fn in (torch.compile, minidynamo.compile):
        compile_fn(lambda x: x * 3, backend="eager")(torch.randn(2))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--number", type=int, default=2000)
    parser.add_argument("--first-runs", type=int, default=7,
                        help="fresh compiles per side whose first call is timed (median)")
    options = parser.parse_args()
    warm_up()
    print(f"{'workload':<24}{'eager us':>9}{'torch +us':>10}{'mini +us':>9}"
          f"{'ratio':>7}{'guards us':>13}{'torch 1st ms':>13}{'mini 1st ms':>12}{'ratio':>7}")
    worst_hit, worst_first = 0.0, 0.0
    for name, fn, args in workloads():
        torch_first, mini_first = first_calls(fn, args, options.first_runs)
        torch._dynamo.reset()
        minidynamo.reset()
        backends = ReplayingBackend(), ReplayingBackend()
        theirs = torch.compile(fn, backend=backends[0])
        ours = minidynamo.compile(fn, backend=backends[1])
        for compiled in (theirs, ours):  # warm up: compile, then a few hits
            for _ in range(3):
                compiled(*args)
        compiled_graphs = [backend.frame_count for backend in backends]
        timed = {"eager": (fn, args), "torch": (theirs, args), "mini": (ours, args)}
        times = per_call(timed, options.number, options.repeat)
        if [backend.frame_count for backend in backends] != compiled_graphs:
            raise SystemExit(f"{name}: a timed call compiled again; the times are not hits'")
        torch_overhead, mini_overhead = times["torch"], times["mini"]
        guards = guard_checks(fn, args, options.number)
        hit_ratio = mini_overhead / torch_overhead
        first_ratio = mini_first / torch_first
        worst_hit, worst_first = max(worst_hit, hit_ratio), max(worst_first, first_ratio)
        print(f"{name:<24}{times['eager'] * 1e6:>9.1f}"
              f"{torch_overhead * 1e6:>10.1f}{mini_overhead * 1e6:>9.1f}{hit_ratio:>7.2f}"
              f"{guards:>13}"
              f"{torch_first * 1e3:>13.1f}{mini_first * 1e3:>12.1f}{first_ratio:>7.2f}")
    print(f"worst cache-hit overhead ratio (minidynamo / torch.compile): {worst_hit:.2f} "
          f"(target <= 0.5)")
    print(f"worst first-call ratio (minidynamo / torch.compile): {worst_first:.2f} (target <= 0.2)")


if __name__ == "__main__":
    main()
