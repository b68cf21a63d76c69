"""The whole pipeline on one function, side by side with torch.compile (`make demo`).

1. the bytecode scanner's report on the function (chapter 1);
2. minidynamo's symbolic trace, one line per instruction (chapters 2-3);
3. the FX graph minidynamo captured and the one torch.compile captured (chapter 5);
4. the comparison the graded tests use: graphs, placeholders, outputs.
"""

from __future__ import annotations

import torch

import minidynamo
from minidynamo.bytecode import scan
from minidynamo.logs import set_logs
from minidynamo.scan import report
from minidynamo.testing import RecordingBackend, compare_with_torch


def f(x, y):
    scale = sum([1, 2, 3])                      # folded while tracing: a constant 6
    hidden = torch.relu(x @ y) * scale
    return hidden.sum(dim=-1), hidden.shape     # a tensor and a torch.Size


def section(title: str) -> None:
    print(f"\n{'=' * 8} {title} {'=' * (70 - len(title))}")


def main() -> None:
    x, y = torch.randn(4, 3), torch.randn(3, 5)

    section("1. the bytecode scanner")
    print("\n".join(report(scan(f))))

    section("2. minidynamo's symbolic trace (MINIDYNAMO_LOGS=trace_bytecode)")
    set_logs(trace_bytecode=True)
    mini = RecordingBackend()
    minidynamo.compile(f, backend=mini)(x, y)
    set_logs(trace_bytecode=False)

    section("3. the captured graphs")
    torch._dynamo.reset()
    real = RecordingBackend()
    torch.compile(f, backend=real)(x, y)
    print("minidynamo:", mini.graphs[0].code)
    print("torch.compile:", real.graphs[0].code)

    section("4. compared as the graded tests compare them")
    print(compare_with_torch(f, x, y).report())


if __name__ == "__main__":
    main()
