"""The trace_bytecode log reads like TORCH_LOGS=trace_bytecode (seed 001's walk-through).

One line per symbolic step, printed before the instruction runs:
`TRACE LOAD_FAST y [LazyVariableTracker(unrealized: <class 'torch.Tensor'>)]`.
"""

from __future__ import annotations

import contextlib
import logging
from typing import Iterator

import torch
import torch._dynamo

import minidynamo

TORCH_TRACE_LOGGER = "torch._dynamo.symbolic_convert.__trace_bytecode"
MINIDYNAMO_TRACE_LOGGER = "minidynamo.trace_bytecode"


class ListHandler(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@contextlib.contextmanager
def captured(logger_name: str) -> Iterator[list[str]]:
    logger, handler = logging.getLogger(logger_name), ListHandler()
    saved = logger.level, logger.propagate
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    try:
        yield handler.lines
    finally:
        logger.removeHandler(handler)
        logger.setLevel(saved[0])
        logger.propagate = saved[1]


def torch_log(fn, *args) -> list[str]:
    torch._dynamo.reset()
    torch._logging.set_logs(trace_bytecode=True)
    try:
        with captured(TORCH_TRACE_LOGGER) as lines:
            torch.compile(fn, backend="eager")(*args)
    finally:
        torch._logging.set_logs()
    return list(lines)


def minidynamo_log(fn, *args) -> list[str]:
    with captured(MINIDYNAMO_TRACE_LOGGER) as lines:
        minidynamo.compile(fn, fullgraph=True)(*args)
    return list(lines)


def f(x, y):
    z = x * y
    return z + 1


def g(x):
    scale = 2
    parts = []
    for i in range(3):
        parts.append(x * (scale + i))
    return sum(parts)


def test_straight_line_function_logs_exactly_like_torch():
    x = torch.randn(8)
    expected = torch_log(f, x, x.clone())
    assert minidynamo_log(f, x, x.clone()) == expected
    assert (
        expected[3]
        == "TRACE BINARY_OP 5 [LazyVariableTracker(unrealized: <class 'torch.Tensor'>), "
        "LazyVariableTracker(unrealized: <class 'torch.Tensor'>)]"
    )


def test_loop_logs_like_torch_until_the_polyfill():
    """The root frame of seed 001's g: lazy globals, ListVariable(length=n), the
    RangeIteratorVariable, GetAttrVariable(ListVariable(...), append) ... up to the
    call of `sum`, whose polyfill is our own code (its bytecode differs)."""
    x = torch.randn(8)
    expected, actual = torch_log(g, x), minidynamo_log(g, x)
    sum_call = next(
        index
        for index, line in enumerate(expected)
        if line.startswith("TRACE CALL 1") and line.endswith("ListVariable(length=3)]")
    )
    assert actual[: sum_call + 1] == expected[: sum_call + 1]
    assert actual[-1] == expected[-1] == "TRACE RETURN_VALUE None [TensorVariable()]"


def test_logs_are_off_by_default():
    with captured("minidynamo") as lines:
        minidynamo.compile(f)(torch.ones(2), torch.ones(2))
    assert not [line for line in lines if line.startswith("TRACE")]


def test_set_logs_prints_graph_code(capsys):
    minidynamo.set_logs(graph_code=True)
    try:
        minidynamo.compile(f)(torch.ones(2), torch.ones(2))
    finally:
        minidynamo.set_logs(graph_code=False)
    printed = capsys.readouterr().err
    assert "TRACED GRAPH" in printed and "def forward(self, L_x_" in printed
    assert 'z: "f32[2][1]cpu" = l_x_ * l_y_' in printed
