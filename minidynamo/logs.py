"""Structured logs: see what the tracer does, like TORCH_LOGS (chapters 2, 5, 6 and 9).

Logs switched on by the environment variable or by `set_logs`:

    MINIDYNAMO_LOGS=trace_bytecode,graph_code python my_script.py

- `trace_bytecode`: one line per symbolic step, before the instruction runs:
  `TRACE LOAD_FAST x [LazyVariableTracker(unrealized: <class 'torch.Tensor'>)]`
  (the same format as `TORCH_LOGS=trace_bytecode`).
- `graph_code`: the captured FX GraphModule's code, as `TORCH_LOGS=graph_code`
  prints it.
- `graph_breaks`: every graph break, with its reason and user stack.
- `guards`: the guards of each new cache entry (chapter 9).
- `recompiles`: why a frame is traced again, the failing guard of every entry, in
  torch's words; `recompiles_verbose`: the same reasons in torch's verbose layout.

Each log is a standard `logging` logger (`minidynamo.trace_bytecode`,
`minidynamo.graph_code`), so tests can capture it with a handler.

Compare with TorchDynamo: `torch/_logging/_registrations.py` registers the same
artifact names; `symbolic_convert.py` writes the trace and `output_graph.py`
the graph code.
"""

from __future__ import annotations

import logging
import os
import sys

LOG_NAMES = ("trace_bytecode", "graph_code", "graph_breaks", "guards", "recompiles",
             "recompiles_verbose")
ENV_VAR = "MINIDYNAMO_LOGS"

# The package's own logger: warnings about eager fallbacks go here.
log = logging.getLogger("minidynamo")
trace_bytecode_log = logging.getLogger("minidynamo.trace_bytecode")
graph_code_log = logging.getLogger("minidynamo.graph_code")
graph_breaks_log = logging.getLogger("minidynamo.graph_breaks")
guards_log = logging.getLogger("minidynamo.guards")  # chapter 9: each new entry's guards
recompiles_log = logging.getLogger("minidynamo.recompiles")  # why a frame was traced again
recompiles_verbose_log = logging.getLogger("minidynamo.recompiles_verbose")

class _StderrHandler(logging.StreamHandler):
    """Writes to whatever `sys.stderr` is when a record is emitted (pytest swaps it)."""

    def emit(self, record: logging.LogRecord) -> None:
        self.stream = sys.stderr
        super().emit(record)


_handler = _StderrHandler()
_handler.setFormatter(logging.Formatter("%(message)s"))


def set_logs(**enabled: bool) -> None:
    """Switch logs on or off by name: `set_logs(trace_bytecode=True)`."""
    for name, on in enabled.items():
        if name not in LOG_NAMES:
            raise ValueError(f"unknown log {name!r}; known logs: {', '.join(LOG_NAMES)}")
        logger = logging.getLogger(f"minidynamo.{name}")
        logger.setLevel(logging.DEBUG if on else logging.WARNING)
        if on and _handler not in logger.handlers:
            logger.addHandler(_handler)
            logger.propagate = False
        elif not on and _handler in logger.handlers:
            logger.removeHandler(_handler)
            logger.propagate = True


def is_enabled(name: str) -> bool:
    """Whether a log would print; check it before formatting an expensive message (the
    translator asks before each instruction: the logger is looked up once)."""
    logger = _loggers.get(name)
    if logger is None:
        logger = _loggers[name] = logging.getLogger(f"minidynamo.{name}")
    return logger.isEnabledFor(logging.DEBUG)


_loggers: dict[str, logging.Logger] = {}  # logging keeps its loggers forever: so can we


def _configure_from_environment() -> None:
    """Read MINIDYNAMO_LOGS once, at import time (comma separated log names)."""
    names = {name.strip() for name in os.environ.get(ENV_VAR, "").split(",")}
    set_logs(**{name: name in names for name in LOG_NAMES})


_configure_from_environment()
