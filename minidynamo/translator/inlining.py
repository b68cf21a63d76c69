"""InliningInstructionTranslator: tracing a call by stepping into the callee (chapter 3).

When traced code calls a Python function, a new translator runs the callee's
bytecode: the arguments are bound to its parameters (trackers, still lazy if
they were lazy), its free variables are the callee's closure cells, and it
shares the caller's OutputGraph, so its tensor operations go into the same
graph. Its RETURN_VALUE ends its loop; the caller pushes the returned tracker.
Nothing of the call is left in the graph: it has been *inlined*.

Recursion unrolls to a constant depth and stops at `config.inline_depth_limit`.

Compare with TorchDynamo: `InliningInstructionTranslator.inline_call_` in
`torch/_dynamo/symbolic_convert.py`.
"""

from __future__ import annotations

import inspect
from typing import Sequence

from minidynamo import config
from minidynamo.bytecode import Instruction, scan
from minidynamo.exc import graph_break
from minidynamo.translator.base import InstructionTranslatorBase
from minidynamo.variables import VariableTracker
from minidynamo.variables.functions import BaseUserFunctionVariable

UNSUPPORTED_CODE_FLAGS = {
    inspect.CO_GENERATOR: "a generator",
    inspect.CO_COROUTINE: "a coroutine",
    inspect.CO_ASYNC_GENERATOR: "an async generator",
    inspect.CO_ITERABLE_COROUTINE: "a coroutine",
}


class InliningInstructionTranslator(InstructionTranslatorBase):
    """Traces a called user function inside its caller's graph."""

    @classmethod
    def inline_call(
        cls,
        parent: InstructionTranslatorBase,
        fn: BaseUserFunctionVariable,
        args: Sequence[VariableTracker],
        kwargs: dict[str, VariableTracker],
    ) -> VariableTracker:
        """Trace `fn(*args, **kwargs)` and return the tracker of its result."""
        code = fn.get_code()
        for flag, what in UNSUPPORTED_CODE_FLAGS.items():
            if code.co_flags & flag:
                graph_break("unsupported Python feature", f"calling {code.co_name}, {what}")
        if parent.depth() >= config.inline_depth_limit:
            graph_break("inlining too deep", f"calling {code.co_name} {parent.depth()} calls deep")
        symbolic_locals = fn.bind(parent, args, kwargs)
        cells = dict(zip(code.co_freevars, fn.closure_cells(parent)))
        tracer = cls(parent.output, code, scan(code), symbolic_locals, fn.get_globals(), cells, parent)
        tracer.run()
        return tracer.return_value

    def RETURN_VALUE(self, inst: Instruction) -> None:
        self.return_value = self.pop()
