"""Real models: first call and per-call time, eager vs torch.compile vs minidynamo.

For every model of the model suite (`tests/models/zoo.py`: tiny transformers and
torch.nn models, eval mode, under `torch.no_grad()`), in one run: the first call of
each compiler (trace and compile, after a reset), the time per call after warm-up
(best of `--repeat` runs of `--number` calls) for eager and both compilers, each
compiler's overhead over eager, and the ratios minidynamo / torch.compile. Both
compile with the "eager" backend, so the graph costs the same on both sides and the
times are the front ends'. Graphs, FX operations and breaks are counted for both.

A front end's per-call *overhead* is its compiled call minus its own graphs alone,
called with the arguments a cache hit passes them (recorded on one call): what the
guards, the binding and the transformed code cost, whatever the graph costs (one graph
is often cheaper than eager's many module calls). The timed callables are interleaved
round by round, so that a slow moment of the machine does not fall on one side only.

Targets (issue 12): minidynamo's first call at most a fifth of torch.compile's, its
per-call overhead at most half of torch.compile's.

    python benchmarks/bench_models.py [--repeat 3] [--number 20] [--models gpt2 bert]
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
from minidynamo.testing import _capture_log as capture_log  # noqa: E402
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

    @property
    def first_ratio(self) -> float:
        return self.mini_first_ms / self.torch_first_ms

    @property
    def overhead_ratio(self) -> float:
        return self.mini_overhead_ms / self.torch_overhead_ms


class GraphRecorder(CompileCounter):
    """A counting backend that can record the arguments of each graph call, to time
    the graphs alone (`recording` on for one call)."""

    def __init__(self) -> None:
        super().__init__()
        self.recording = False
        self.calls: list[tuple[Callable[..., Any], tuple]] = []

    def __call__(self, gm: torch.fx.GraphModule, example_inputs: list) -> Callable:
        forward = super().__call__(gm, example_inputs)

        def run(*args: Any) -> Any:
            if self.recording:
                self.calls.append((forward, args))
            return forward(*args)
        return run


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


def recorded_graphs(compiled: Callable[..., Any], recorder: GraphRecorder,
                    inputs: dict) -> dict[str, Callable[[], Any]]:
    """The graph calls of one cache hit of `compiled`, each a callable of no arguments."""
    recorder.recording = True
    compiled(**inputs)
    recorder.recording = False
    return {f"graph {index}": (lambda fn=fn, args=args: fn(*args))
            for index, (fn, args) in enumerate(recorder.calls)}


def measure(case, number: int, repeat: int) -> Row:
    model, inputs = case.build(), case.inputs(1)
    torch_counter, mini_counter = GraphRecorder(), GraphRecorder()
    torch._dynamo.reset()
    minidynamo.reset()
    counters.clear()
    theirs = torch.compile(model, backend=torch_counter)
    ours = minidynamo.compile(model, backend=mini_counter)
    torch_first = timed(theirs, inputs)
    with capture_log(MINIDYNAMO_BREAKS_LOGGER, str, silence=True) as mini_breaks:
        mini_first = timed(ours, inputs)
    torch_breaks = sum(counters["graph_break"].values())
    for compiled in (theirs, ours):  # warm up: a few cache hits
        for _ in range(2):
            compiled(**inputs)
    calls = {"eager": lambda: model(**inputs), "torch": lambda: theirs(**inputs),
             "mini": lambda: ours(**inputs)}
    for side, compiled, recorder in (("torch", theirs, torch_counter), ("mini", ours, mini_counter)):
        calls.update({f"{side} {name}": call
                      for name, call in recorded_graphs(compiled, recorder, inputs).items()})
    times = per_call(calls, number, repeat)
    graphs = {side: sum(t for name, t in times.items() if name.startswith(f"{side} graph"))
              for side in ("torch", "mini")}
    return Row(
        case.name, torch_counter.frame_count, mini_counter.frame_count,
        torch_counter.op_count, mini_counter.op_count, torch_breaks,
        len(mini_breaks), times["eager"], torch_first, mini_first,
        times["torch"] - graphs["torch"], times["mini"] - graphs["mini"])


HEADER = ["model", "graphs (torch / mini)", "FX ops (torch / mini)", "breaks (torch / mini)",
          "eager ms/call", "1st call ms (torch / mini)", "ratio",
          "overhead µs/call (torch / mini)", "ratio"]


def cells(row: Row) -> list[str]:
    return [row.model, f"{row.torch_graphs} / {row.mini_graphs}",
            f"{row.torch_ops} / {row.mini_ops}", f"{row.torch_breaks} / {row.mini_breaks}",
            f"{row.eager_ms:.2f}", f"{row.torch_first_ms:.0f} / {row.mini_first_ms:.0f}",
            f"{row.first_ratio:.2f}",
            f"{row.torch_overhead_ms * 1e3:.0f} / {row.mini_overhead_ms * 1e3:.0f}",
            f"{row.overhead_ratio:.2f}"]


def summary(rows: list[Row]) -> list[str]:
    captured = [row for row in rows if row.torch_graphs]
    worst_first = max(row.first_ratio for row in captured)
    worst_overhead = max(row.overhead_ratio for row in captured)
    return [f"worst first-call ratio (minidynamo / torch.compile): {worst_first:.2f} "
            "(target <= 0.2)",
            f"worst per-call overhead ratio (minidynamo / torch.compile): {worst_overhead:.2f} "
            "(target <= 0.5)"]


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
        "test`; this page shows one run of the benchmark beside them. A compiler's overhead",
        "is its compiled call minus its own graphs alone (called with the arguments a cache",
        "hit passes them): the guards, the binding and the transformed code. A model that",
        "neither compiler captures (the LSTM: torch.compile runs RNNs eagerly) has no ratio.",
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
    parser.add_argument("--number", type=int, default=20)
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
            rows.append(measure(case, options.number, options.repeat))
            print(" | ".join(cells(rows[-1])), flush=True)
    for line in summary(rows):
        print(line)
    if options.markdown is not None:
        command = "python benchmarks/bench_models.py " + " ".join(sys.argv[1:])
        options.markdown.write_text(markdown(rows, command.strip()))
        print(f"wrote {options.markdown}")


if __name__ == "__main__":
    main()
