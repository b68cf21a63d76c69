"""Trace logs as data (chapters 2 and 5): the `TRACE` lines both tracers log, collected.

TorchDynamo logs every instruction it steps (`TORCH_LOGS=trace_bytecode`), and so
does minidynamo (`MINIDYNAMO_LOGS=trace_bytecode`), each with a plain `logging`
logger. `capture_trace()` switches one on inside a block and keeps its lines as
`TraceLine`s (opcode, the rest of the line, the inlining depth of the frame that
logged it); `trace_opnames` gives their opcodes. `minidynamo.testing` re-exports them,
with `torch_trace_log` / `minidynamo_trace_log`, which compile a function to get one.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import sys
from collections.abc import Callable, Iterator, Sequence

TORCH_TRACE_LOGGER = "torch._dynamo.symbolic_convert.__trace_bytecode"
MINIDYNAMO_TRACE_LOGGER = "minidynamo.trace_bytecode"
MINIDYNAMO_BREAKS_LOGGER = "minidynamo.graph_breaks"


@dataclasses.dataclass(frozen=True)
class TraceLine:
    """One ``TRACE`` line of a bytecode trace log: the opcode, the rest of the line
    (argument and stack), and the inlining depth of its frame (0: the root frame)."""

    opname: str
    text: str
    depth: int = 0


def capture_trace(tracer: str = "minidynamo") -> contextlib.AbstractContextManager[list[TraceLine]]:
    """``with capture_trace() as lines:`` collects the ``TRACE`` lines that
    ``tracer`` ("minidynamo" or "torch") logs inside the block, printing none."""
    logger_name = {"minidynamo": MINIDYNAMO_TRACE_LOGGER, "torch": TORCH_TRACE_LOGGER}[tracer]
    return capture_log(logger_name, _trace_line)


@contextlib.contextmanager
def capture_log(logger_name: str, convert: Callable, *, silence: bool = True) -> Iterator[list]:
    """Switch a logger on (level DEBUG) and collect ``convert(message)`` of each of
    its records (None: skipped). With ``silence`` nothing else sees the records.

    The trace and graph-break logs of both tracers are plain ``logging`` loggers
    checked with ``isEnabledFor(DEBUG)``, so this is what ``set_logs`` does too."""
    handler, logger = _ListHandler(convert), logging.getLogger(logger_name)
    saved = logger.level, logger.propagate, logger.handlers
    logger.handlers = [handler] if silence else [*logger.handlers, handler]
    logger.propagate = logger.propagate and not silence
    logger.setLevel(logging.DEBUG)  # setLevel, not assignment: it clears logging's cache
    try:
        yield handler.items
    finally:
        logger.setLevel(saved[0])
        logger.propagate, logger.handlers = saved[1:]


class _ListHandler(logging.Handler):
    def __init__(self, convert: Callable) -> None:
        super().__init__(level=logging.DEBUG)
        self.convert, self.items = convert, []

    def emit(self, record: logging.LogRecord) -> None:
        item = self.convert(record.getMessage())
        if item is not None:
            self.items.append(item)


def _trace_line(message: str) -> TraceLine | None:
    """``TRACE OPNAME rest`` as a TraceLine (with its inlining depth), else None."""
    if not message.startswith("TRACE "):
        return None
    opname, _, text = message[len("TRACE "):].partition(" ")
    return TraceLine(opname, text, _inlining_depth())


def _inlining_depth() -> int:
    """The inlining depth of the translator that is logging: the number of distinct
    translators (objects of a class named ``*Translator*``) on the Python stack,
    less one. Both tracers inline a call by running a child translator inside the
    parent's CALL handler, so the stack holds one translator per inlined frame;
    the log lines themselves do not say which frame they belong to."""
    translators = set()
    frame = sys._getframe(1)
    while frame is not None:
        candidate = frame.f_locals.get("self")
        if "Translator" in type(candidate).__name__:
            translators.add(id(candidate))
        frame = frame.f_back
    return max(len(translators) - 1, 0)


def trace_opnames(lines: Sequence[TraceLine], *, root_only: bool = False) -> list[str]:
    """The opcode names of a trace log, optionally of the root frame only."""
    return [line.opname for line in lines if not root_only or line.depth == 0]
