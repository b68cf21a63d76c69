"""Real models: first call and per-call time, eager vs torch.compile vs minidynamo.

For every model of the model suite (`tests/models/zoo.py`: tiny transformers and
torch.nn models, eval mode, under `torch.no_grad()`), in one run: the first call of
each compiler (trace and compile, after a reset: the median of `--first-runs` fresh
compiles, alternating sides), the time per call of eager and each compiler's overhead
after warm-up (best of `--repeat` rounds of `--number` calls, the sides interleaved
round by round, so that a slow moment of the machine does not fall on one side only),
and the ratios minidynamo / torch.compile. Graphs, FX operations and breaks are
counted for both.

A front end's per-call *overhead* is what a cache hit costs besides the graphs: the
guards, the binding and the transformed code. It is timed directly: for the timed
calls both compilers compile with a backend whose graphs run on their first call and
replay those outputs afterwards (`benchmarks/replay.py`), so a hit
costs the front end's work and nearly nothing for the graph. (The compiled call minus
the graphs alone subtracts two times of a millisecond; the noise of a shared machine
is larger than the difference.) The first calls compile with the `eager` backend.

Targets (issue 12): minidynamo's first call at most a fifth of torch.compile's, its
per-call overhead at most half of torch.compile's.

    python benchmarks/bench_models.py [--repeat 3] [--number 200] [--first-runs 3] [--models gpt2 bert]
    python benchmarks/bench_models.py --markdown chapters/model-suite.md  # the docs page
"""

from __future__ import annotations

import argparse
import dataclasses
import platform
import sys
import time
import warnings
from pathlib import Path
from typing import Any, Callable

import torch
import torch._dynamo
from torch._dynamo.utils import counters

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository's tests/

import minidynamo  # noqa: E402
from minidynamo.testing import MINIDYNAMO_BREAKS_LOGGER, CompileCounter  # noqa: E402
from replay import ReplayingBackend  # noqa: E402  (benchmarks/replay.py)
from minidynamo.trace_logs import capture_log  # noqa: E402
from tests.models.zoo import CASES  # noqa: E402


@dataclasses.dataclass
class Row:
    model: str
    torch_graphs: int
    mini_graphs: int
    torch_ops: int
    mini_ops: int
    torch_breaks: int
    mini_breaks: int
    eager_ms: float
    torch_first_ms: float
    mini_first_ms: float
    torch_overhead_ms: float
    mini_overhead_ms: float
    torch_guards_ms: float  # the part of torch.compile's overhead that is its C++ guards

    @property
    def first_ratio(self) -> float:
        return self.mini_first_ms / self.torch_first_ms

    @property
    def overhead_ratio(self) -> float:
        return self.mini_overhead_ms / self.torch_overhead_ms


def per_call(timed: dict[str, Callable[[], Any]], number: int, repeat: int) -> dict[str, float]:
    """Milliseconds per call of each callable: best of `repeat` rounds of `number` calls,
    the rounds of all callables interleaved."""
    best = dict.fromkeys(timed, float("inf"))
    for _ in range(repeat):
        for name, fn in timed.items():
            start = time.perf_counter()
            for _ in range(number):
                fn()
            best[name] = min(best[name], (time.perf_counter() - start) / number)
    return {name: seconds * 1e3 for name, seconds in best.items()}


def timed(fn: Callable[..., Any], inputs: dict) -> float:
    start = time.perf_counter()
    fn(**inputs)
    return (time.perf_counter() - start) * 1e3


def median(values: list[float]) -> float:
    return sorted(values)[len(values) // 2]


def first_calls(model: torch.nn.Module, inputs: dict, runs: int) -> dict[str, Any]:
    """Each compiler's first call (milliseconds, the median of `runs` fresh compiles,
    alternating), with the graphs, FX operations and breaks of the last one."""
    times: dict[str, list[float]] = {"torch": [], "mini": []}
    for _ in range(runs):
        torch._dynamo.reset()
        minidynamo.reset()
        counters.clear()
        torch_counter, mini_counter = CompileCounter(), CompileCounter()
        times["torch"].append(timed(torch.compile(model, backend=torch_counter), inputs))
        with capture_log(MINIDYNAMO_BREAKS_LOGGER, str, silence=True) as mini_breaks:
            times["mini"].append(timed(minidynamo.compile(model, backend=mini_counter), inputs))
        torch_breaks = sum(counters["graph_break"].values())
    return {"torch_ms": median(times["torch"]), "mini_ms": median(times["mini"]),
            "counts": (torch_counter.frame_count, mini_counter.frame_count,
                       torch_counter.op_count, mini_counter.op_count,
                       torch_breaks, len(mini_breaks))}


def measure(case, number: int, repeat: int, first_runs: int) -> Row:
    model, inputs = case.build(), case.inputs(1)
    first = first_calls(model, inputs, first_runs)
    torch._dynamo.reset()
    minidynamo.reset()
    backends = ReplayingBackend(), ReplayingBackend()
    theirs = torch.compile(model, backend=backends[0])
    with capture_log(MINIDYNAMO_BREAKS_LOGGER, str, silence=True):
        ours = minidynamo.compile(model, backend=backends[1])
        for compiled in (theirs, ours):  # warm up: compile, then a few hits
            for _ in range(3):
                compiled(**inputs)
    compiled_graphs = [backend.frame_count for backend in backends]
    calls = {"eager": lambda: model(**inputs), "torch": lambda: theirs(**inputs),
             "mini": lambda: ours(**inputs), "torch unguarded": lambda: unguarded(theirs, inputs)}
    times = per_call(calls, number, repeat)
    if [backend.frame_count for backend in backends] != compiled_graphs:
        raise SystemExit(f"{case.name}: a timed call compiled again; the times are not hits'")
    return Row(case.name, *first["counts"], times["eager"], first["torch_ms"],
               first["mini_ms"], times["torch"], times["mini"],
               max(times["torch"] - times["torch unguarded"], 0.0))


def unguarded(compiled: Callable[..., Any], inputs: dict) -> Any:
    """A call of torch.compile's function that skips its guard evaluation (its unsafe
    stance, which reuses the last entry): the difference with a normal call is what
    torch.compile's C++ guard tree costs per call."""
    with torch.compiler.set_stance("default", skip_guard_eval_unsafe=True):
        return compiled(**inputs)


HEADER = ["model", "graphs (torch / mini)", "FX ops (torch / mini)", "breaks (torch / mini)",
          "eager ms/call", "1st call ms (torch / mini)", "ratio",
          "overhead µs/call (torch / mini)", "ratio", "torch guards µs"]


def cells(row: Row) -> list[str]:
    return [row.model, f"{row.torch_graphs} / {row.mini_graphs}",
            f"{row.torch_ops} / {row.mini_ops}", f"{row.torch_breaks} / {row.mini_breaks}",
            f"{row.eager_ms:.2f}", f"{row.torch_first_ms:.0f} / {row.mini_first_ms:.0f}",
            f"{row.first_ratio:.2f}",
            f"{row.torch_overhead_ms * 1e3:.0f} / {row.mini_overhead_ms * 1e3:.0f}",
            f"{row.overhead_ratio:.2f}", f"{row.torch_guards_ms * 1e3:.0f}"]


def summary(rows: list[Row]) -> list[str]:
    captured = [row for row in rows if row.torch_graphs]
    worst_first = max(row.first_ratio for row in captured)
    worst_overhead = max(row.overhead_ratio for row in captured)
    guarded = sorted(row.mini_overhead_ms / row.torch_guards_ms for row in captured
                     if row.torch_guards_ms > 0)
    lines = [f"worst first-call ratio (minidynamo / torch.compile): {worst_first:.2f} "
             "(target <= 0.2)",
             f"worst per-call overhead ratio (minidynamo / torch.compile): {worst_overhead:.2f} "
             "(target <= 0.5)"]
    if guarded:
        lines.append("minidynamo's whole overhead / torch.compile's guards alone: "
                     f"{guarded[0]:.2f} to {guarded[-1]:.2f} (median {median(guarded):.2f})")
    return lines


def markdown(rows: list[Row], command: str) -> str:
    lines = [
        "# The model suite, measured",
        "",
        "<!-- written by benchmarks/bench_models.py --markdown; do not edit by hand -->",
        "",
        "Every model of the model suite (`tests/models/zoo.py`), compiled by torch.compile",
        "and by minidynamo with the `eager` backend, so that the times are the front ends'.",
        "`tests/models/test_models.py` checks the graph counts, the ATen operators of every",
        "graph, the breaks and the outputs against torch.compile and eager on every `make",
        "test`; this page shows one run of the benchmark beside them. The first call is",
        "the median of fresh compiles. A compiler's overhead is what a cache hit costs",
        "besides its graphs (the guards, the binding and the transformed code), timed with",
        "a backend that replays each graph's first outputs instead of running it. A model",
        "that neither compiler captures (the LSTM: torch.compile runs RNNs eagerly) has no",
        "ratio. The last column is the part of torch.compile's overhead that is its C++",
        "guard tree alone: its time per call less that of calls which skip the guards",
        "(`torch.compiler.set_stance(skip_guard_eval_unsafe=True)`).",
        "",
        f"Measured with `{command}` on {platform.processor() or platform.machine()}, "
        f"torch {torch.__version__}.",
        "",
        "| " + " | ".join(HEADER) + " |",
        "|" + "---|" * len(HEADER),
    ]
    for row in rows:
        row_cells = cells(row)
        if not row.torch_graphs:
            row_cells[6] = row_cells[8] = "-"
        lines.append("| " + " | ".join(row_cells) + " |")
    lines += ["", *summary(rows), ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    # 200 calls a round: with 20, a round's first calls, after the other sides emptied the
    # caches, weighed enough to put torch.compile's overhead 10% to 40% higher, run to run
    parser.add_argument("--number", type=int, default=200)
    parser.add_argument("--first-runs", type=int, default=3,
                        help="fresh compiles per side whose first call is timed (median)")
    parser.add_argument("--models", nargs="*", default=None, help="names from the suite")
    parser.add_argument("--markdown", type=Path, default=None, help="write the docs page here")
    options = parser.parse_args()
    chosen = [case for case in CASES if not case.known_gap
              and (options.models is None or case.name in options.models)]
    rows = []
    print(" | ".join(HEADER))
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for case in chosen:
            rows.append(measure(case, options.number, options.repeat, options.first_runs))
            print(" | ".join(cells(rows[-1])), flush=True)
    for line in summary(rows):
        print(line)
    if options.markdown is not None:
        command = "python benchmarks/bench_models.py " + " ".join(sys.argv[1:])
        options.markdown.write_text(markdown(rows, command.strip()))
        print(f"wrote {options.markdown}")


if __name__ == "__main__":
    main()
