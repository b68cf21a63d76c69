"""Memory: compiling, calling and dropping, minidynamo and torch.compile, same run (issue 14).

A program that compiles many short-lived functions (a fresh closure per request, code
made with `exec`, a model rebuilt for every experiment) must get its memory back when
it drops them. Each scenario below makes `--count` things, compiles each with the
"eager" backend, calls it and drops it (the unit a figure is per):

    fresh functions       a new code object each (exec'd), dropped      per function
    closures              new closures of one code object               per closure
    closures, break       the same with a graph break (resume function) per closure
    recompile to limit    a fresh function, dynamic=False, called with  per cache entry
                          recompile_limit + 2 new shapes, then dropped
    calls past limit      one function at its recompile limit, called   per call
                          with a new shape each time
    reset and recompile   one function, reset() before every call       per compile
    modules               a small nn.Module per iteration               per module

For each we measure, after a warm-up, the growth per 1000 units of the resident set
(/proc/self/statm: what the machine pays, allocator slack included; pages freed
earlier in the process are reused first, so it understates) and, in a second phase
with a tenth of the count (at least 50 steps; tracemalloc slows every allocation),
tracemalloc's net growth after `gc.collect()`: what Python objects still hold, the
precise figure. `held` is what one unit holds while it is alive. Then, after
everything is dropped: the live cache entries and (minidynamo) FrameCaches,
GraphModules, ShapeEnvs and installed globals left, and how many `weakref.finalize`
callbacks the measured steps added.

Each compiler runs in a fresh process of its own (this script, `--side`; both at once,
one per core), so that the memory one frees cannot hide the other's growth.
torch.compile keeps its entries on the code object, shared by every closure of that
code and by every instance of a module class, until the code dies or
`torch._dynamo.reset()`: its entries and graphs left for a live code object are by
design. A code object of its own does not free it either: torch 2.13 keeps a dropped
exec'd function's code alive (no Python object refers to it: its entry, in the code's
C-level extra state, refers back to it), and with it the entries, graphs and the
globals it installed (the "fresh functions" and "recompile to limit" rows).
minidynamo ties an entry to the function or module it was compiled for and removes
its globals with it, so nothing should be left.

Bounded means, for minidynamo in every scenario: traced growth under the scenario's
bound, no entry, GraphModule or ShapeEnv left, and fewer than one `weakref.finalize`
per 100 units (one per unit is a registry that only grows). The bound is 2 KiB a unit
where each unit compiles a graph: torch.fx itself keeps the source of every
GraphModule it generates (linecache and `torch.fx.graph_module._loader`), about
0.7 KiB a graph on both sides, and sympy's caches (bounded, but filling) about
0.3 KiB more, which no front end can avoid; 2 KiB leaves room for noise and is a
small part of what a live compiled function holds (`held`: 10 to 50 KiB). A call
past the limit compiles nothing, so it may keep nothing: 0.1 KiB, noise (torch.compile
keeps about 0.03 KiB).

    python benchmarks/bench_memory.py [--count 1000]
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import resource
import subprocess
import sys
import time
import tracemalloc
import types
import warnings
import weakref
from dataclasses import dataclass
from typing import Any, Callable

import torch
import torch._dynamo
from torch.fx.experimental.symbolic_shapes import ShapeEnv

import minidynamo
from minidynamo import cache

TRACED_FRACTION = 10
MIN_TRACED_STEPS = 50
FINALIZERS_PER_100_UNITS = 1
PAGE_SIZE = resource.getpagesize()
NAMESPACE: dict[str, Any] = {"torch": torch, "__name__": "fresh"}  # where exec'd code lives


# -- what is compiled -----------------------------------------------------------


def fresh_function(i: int, shapes: bool = False) -> types.FunctionType:
    """A function with a code object of its own, defined in NAMESPACE (and not kept there)."""
    body = "x.sin() + {i}" if shapes else "(x * 2 + {i}).sin() - x"
    source = f"def fresh_{i}(x):\n    return {body.format(i=i)}\n"
    exec(compile(source, f"<fresh {i}>", "exec"), NAMESPACE)
    return NAMESPACE.pop(f"fresh_{i}")


def closure(i: int) -> types.FunctionType:
    weight = torch.full((4,), float(i))

    def scaled(x):
        return (x * weight + i).sin()
    return scaled


def breaking_closure(i: int) -> types.FunctionType:
    def halves(x):
        y = x * 2 + i
        torch._dynamo.graph_break()
        return y.cos()
    return halves


def shapes_closure(i: int) -> types.FunctionType:
    def sine(x):
        return x.sin() + i
    return sine


class Small(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.first = torch.nn.Linear(8, 8)
        self.second = torch.nn.Linear(8, 8)

    def forward(self, x):
        return self.second(self.first(x).relu())


def inner_codes(factory: Callable) -> list[types.CodeType]:
    return [c for c in factory.__code__.co_consts if isinstance(c, types.CodeType)]


# -- the two compilers ----------------------------------------------------------


class Mini:
    name = "mini"
    limit = minidynamo.config.recompile_limit

    def compile(self, target: Any, **options: Any) -> Any:
        return minidynamo.compile(target, backend="eager", **options)

    def reset(self) -> None:
        minidynamo.reset()

    def entries(self) -> int:
        return sum(len(frame_cache.entries) for frame_cache in cache.caches.values())

    def frame_caches(self) -> int:
        return len(cache.caches)


class Torch:
    name = "torch"
    limit = torch._dynamo.config.recompile_limit

    def compile(self, target: Any, **options: Any) -> Any:
        return torch.compile(target, backend="eager", **options)

    def reset(self) -> None:
        torch._dynamo.reset()

    def entries(self) -> int:
        """Entries on the long-lived codes of this file and on torch's resume codes
        (an exec'd function's entries die with its code)."""
        from torch._dynamo.eval_frame import _debug_get_cache_entry_list
        from torch._dynamo.resume_execution import ContinueExecutionCache

        codes = [code for factory in (closure, breaking_closure, shapes_closure)
                 for code in inner_codes(factory)] + [Small.forward.__code__]
        codes += [code for by_key in ContinueExecutionCache.cache.values.values()
                  for code in by_key.values()]
        return sum(len(_debug_get_cache_entry_list(code)) for code in codes)

    def frame_caches(self) -> int:
        return -1  # torch keeps its entries on the code object itself


# -- the scenarios ----------------------------------------------------------------


@dataclass
class Scenario:
    """`step(compiler, state, i)` makes, compiles and calls one thing and returns what
    must stay alive until it is measured; `setup` makes what lives through the run."""

    name: str
    unit: str
    step: Callable[[Any, dict, int], Any]
    units_per_step: Callable[[Any], int] = lambda compiler: 1
    steps: Callable[[int], int] = lambda count: count
    setup: Callable[[Any], dict] = lambda compiler: {}
    warmup: int = 10
    bound_kib: float = 2.0  # traced growth allowed per unit (see the module docstring)


X = torch.randn(4)
BATCH = torch.randn(2, 8)


def call_twice(compiled: Callable, *args: Any) -> Callable:
    compiled(*args)  # compile
    compiled(*args)  # a cache hit
    return compiled


def compile_and_call(make: Callable[[int], Any], *args: Any) -> Callable[[Any, dict, int], Any]:
    def step(compiler: Any, state: dict, i: int) -> Any:
        target = make(i)
        return target, call_twice(compiler.compile(target), *args)
    return step


def to_the_limit(compiler: Any, state: dict, i: int) -> Any:
    fn = fresh_function(i, shapes=True)
    compiled = compiler.compile(fn, dynamic=False)
    for size in range(1, compiler.limit + 3):  # `limit` compiles, then two calls past it
        compiled(torch.randn(size))
    return fn, compiled


def at_the_limit(compiler: Any) -> dict:
    compiled = compiler.compile(shapes_closure(0), dynamic=False)
    for size in range(1, compiler.limit + 1):
        compiled(torch.randn(size))
    return {"compiled": compiled}


def past_the_limit(compiler: Any, state: dict, i: int) -> None:
    state["compiled"](torch.randn(compiler.limit + 1 + i % 4000))


def reset_and_recompile(compiler: Any, state: dict, i: int) -> None:
    compiler.reset()
    state["compiled"](X)


SCENARIOS = [
    Scenario("fresh functions", "function", compile_and_call(fresh_function, X)),
    Scenario("closures", "closure", compile_and_call(closure, X)),
    Scenario("closures, break", "closure", compile_and_call(breaking_closure, X)),
    Scenario("recompile to limit", "entry", to_the_limit,
             units_per_step=lambda compiler: compiler.limit, steps=lambda count: count // 50,
             warmup=2),
    Scenario("calls past limit", "call", past_the_limit, setup=at_the_limit, bound_kib=0.1),
    Scenario("reset and recompile", "compile", reset_and_recompile, steps=lambda count: count // 20,
             setup=lambda compiler: {"compiled": compiler.compile(closure(0))}, warmup=5),
    Scenario("modules", "module", compile_and_call(lambda i: Small(), BATCH)),
]


# -- measuring, in the process of one compiler --------------------------------------


def rss() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * PAGE_SIZE


def collect() -> None:
    """Collect until nothing more is freed: a finalizer run by one collection (an entry
    removing its globals) may leave more garbage for the next."""
    while gc.collect():
        pass


def census(compiler: Any) -> dict[str, int]:
    """What is alive (after `collect()`): graphs, ShapeEnvs, entries, globals, finalizers."""
    objects = gc.get_objects()
    return {
        "graph_modules": sum(issubclass(type(o), torch.fx.GraphModule) for o in objects),
        "shape_envs": sum(type(o) is ShapeEnv for o in objects),
        "entries": compiler.entries(),
        "frame_caches": compiler.frame_caches(),
        "globals": len(NAMESPACE) + len(globals()),
        "finalizers": len(weakref.finalize._registry),
    }


def run_phase(compiler: Any, scenario: Scenario, steps: int, traced: bool) -> dict[str, Any]:
    """Warm up, then `steps` steps; growth per 1000 units, held per unit, what is left."""
    compiler.reset()
    collect()
    clean = None if traced else census(compiler)  # what is left is counted once, untraced
    state = scenario.setup(compiler)
    for i in range(scenario.warmup):
        scenario.step(compiler, state, i)
    collect()
    finalizers, memory, held = len(weakref.finalize._registry), rss(), 0
    if traced:
        tracemalloc.start()
    for i in range(scenario.warmup, scenario.warmup + steps):
        before = tracemalloc.get_traced_memory()[0] if traced else 0
        alive = scenario.step(compiler, state, i)
        held += (tracemalloc.get_traced_memory()[0] - before) if traced else 0
        del alive
    del state
    collect()
    grown = tracemalloc.get_traced_memory()[0] if traced else rss() - memory
    tracemalloc.stop()
    units = steps * scenario.units_per_step(compiler)
    left = {}
    if clean is not None:
        left = {key: value - clean[key] for key, value in census(compiler).items()}
        left.update(entries=compiler.entries(), frame_caches=compiler.frame_caches(),
                    finalizers=len(weakref.finalize._registry) - finalizers)
    return {"units": units, "kib_per_1000": grown / 1024 / units * 1000,
            "held_kib": held / 1024 / units, "left": left}


def run_side(side: str, count: int) -> dict[str, Any]:
    compiler = Mini() if side == "mini" else Torch()
    results: dict[str, dict[str, Any]] = {scenario.name: {} for scenario in SCENARIOS}
    for scenario in SCENARIOS:  # first untraced, so that tracemalloc's freed tables
        steps = max(1, scenario.steps(count))  # do not hide the resident set's growth
        results[scenario.name]["rss"] = run_phase(compiler, scenario, steps, traced=False)
    for scenario in SCENARIOS:
        steps = max(1, scenario.steps(count))
        steps = max(min(steps, MIN_TRACED_STEPS), steps // TRACED_FRACTION)
        results[scenario.name]["traced"] = run_phase(compiler, scenario, steps, traced=True)
    return results


# -- the report -----------------------------------------------------------------------


def measure_in_subprocesses(count: int) -> dict[str, dict[str, Any]]:
    """Both compilers at the same time, each in a process of its own (one core each)."""
    workers = {side: subprocess.Popen([sys.executable, __file__, "--side", side, "--count",
                                       str(count)], stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True)
               for side in ("torch", "mini")}
    results = {}
    for side, worker in workers.items():
        out, err = worker.communicate()
        if worker.returncode != 0:
            sys.exit(f"the {side} worker failed:\n{err[-4000:]}")
        results[side] = json.loads(out.splitlines()[-1])
    return results


def ratio(mine: float, theirs: float) -> str:
    return f"{mine / theirs:.2f}" if theirs > 1 else "-"  # growth under 1 KiB is noise


def print_growth(results: dict[str, dict], count: int) -> None:
    print(f"growth per 1000 units, after gc.collect() (RSS: {count} units; traced: a tenth)")
    print(f"{'scenario':<21}{'unit':<10}{'torch RSS':>10}{'mini RSS':>10}{'ratio':>7}"
          f"{'torch traced':>13}{'mini traced':>12}{'ratio':>7}{'held torch':>11}"
          f"{'held mini':>10}{'bound':>7}")
    for scenario in SCENARIOS:
        torch_side, mini = results["torch"][scenario.name], results["mini"][scenario.name]
        t_rss, m_rss = torch_side["rss"]["kib_per_1000"], mini["rss"]["kib_per_1000"]
        t_tr, m_tr = torch_side["traced"]["kib_per_1000"], mini["traced"]["kib_per_1000"]
        print(f"{scenario.name:<21}{scenario.unit:<10}{t_rss:>10.0f}{m_rss:>10.0f}"
              f"{ratio(m_rss, t_rss):>7}{t_tr:>13.1f}{m_tr:>12.1f}{ratio(m_tr, t_tr):>7}"
              f"{torch_side['traced']['held_kib']:>11.1f}{mini['traced']['held_kib']:>10.1f}"
              f"{scenario.bound_kib * 1000:>7.0f}")
    print("(KiB per 1000 units; held: KiB one unit holds while alive; bound: minidynamo's, traced)")


def print_left(results: dict[str, dict]) -> None:
    print("\nleft after dropping everything, RSS phase (GraphModules, ShapeEnvs, globals: more "
          "than before the scenario; finalizers: added by its measured steps)")
    print(f"{'scenario':<21}{'side':<6}{'entries':>8}{'FrameCaches':>12}{'GraphModules':>13}"
          f"{'ShapeEnvs':>10}{'globals':>8}{'finalizers':>11}")
    for scenario in SCENARIOS:
        for side in ("torch", "mini"):
            left = results[side][scenario.name]["rss"]["left"]
            caches = "-" if left["frame_caches"] < 0 else left["frame_caches"]
            print(f"{scenario.name:<21}{side:<6}{left['entries']:>8}{caches:>12}"
                  f"{left['graph_modules']:>13}{left['shape_envs']:>10}{left['globals']:>8}"
                  f"{left['finalizers']:>11}")


def plural(unit: str) -> str:
    return unit[:-1] + "ies" if unit.endswith("y") else unit + "s"


def unbounded(results: dict[str, Any]) -> list[str]:
    """What keeps minidynamo's memory from being bounded, one line per scenario."""
    problems = []
    for scenario in SCENARIOS:
        rss_phase, traced = results[scenario.name]["rss"], results[scenario.name]["traced"]
        left, reasons = rss_phase["left"], []
        if traced["kib_per_1000"] > scenario.bound_kib * 1000:
            reasons.append(f"{traced['kib_per_1000']:.0f} KiB per 1000 {plural(scenario.unit)}")
        reasons += [f"{left[key]} {key} left" for key in ("entries", "graph_modules", "shape_envs")
                    if left[key] > 0]
        if left["finalizers"] * 100 > FINALIZERS_PER_100_UNITS * rss_phase["units"]:
            reasons.append(f"{left['finalizers']} finalizers for {rss_phase['units']} "
                           f"{plural(scenario.unit)}")
        if reasons:
            problems.append(f"{scenario.name}: {', '.join(reasons)}")
    return problems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1000, help="units per scenario")
    parser.add_argument("--side", choices=("torch", "mini"), help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.side:  # a worker: one compiler, its results as JSON on the last line
        warnings.filterwarnings("ignore")
        logging.disable(logging.WARNING)  # the recompile-limit warnings of both sides
        print(json.dumps(run_side(options.side, options.count)))
        return
    start = time.perf_counter()
    results = measure_in_subprocesses(options.count)
    print_growth(results, options.count)
    print_left(results)
    problems = unbounded(results["mini"])
    verdict = "stays bounded" if not problems else "is NOT bounded: " + "; ".join(problems)
    print(f"\nminidynamo's memory {verdict} (bounded: traced growth under the bound, no "
          f"entry, GraphModule or ShapeEnv left, under {FINALIZERS_PER_100_UNITS} finalizer "
          f"per 100 units; {time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
