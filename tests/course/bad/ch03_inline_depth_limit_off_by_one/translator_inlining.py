"""A common mistake: the depth limit compared with `>`, so one level more than
`config.inline_depth_limit` is inlined."""

from __future__ import annotations

import inspect
from typing import Any, Sequence
from minidynamo import config
from minidynamo.bytecode import Instruction, scan
from minidynamo.exc import INLINING_TOO_DEEP, UNSUPPORTED_PYTHON_FEATURE, graph_break
from minidynamo.translator.base import InstructionTranslatorBase
from minidynamo.variables import ConstantVariable, VariableTracker, new_object_id
from minidynamo.variables.iterators import GeneratorVariable
from minidynamo.variables.functions import BaseUserFunctionVariable

# defined next to the exercises in the package:
from minidynamo.translator.inlining import (
    InliningGeneratorInstructionTranslator, UNSUPPORTED_CODE_FLAGS,
)


class InliningInstructionTranslator:
    """The exercise methods of minidynamo.translator.inlining.InliningInstructionTranslator; the class keeps all its others."""

    @classmethod
    def inline_call(
        cls,
        tx: InstructionTranslatorBase,
        fn: BaseUserFunctionVariable,
        args: Sequence[VariableTracker],
        kwargs: dict[str, VariableTracker],
    ) -> VariableTracker:
        """Trace `fn(*args, **kwargs)` and return the tracker of its result."""
        code = fn.get_code()
        for flag, what in UNSUPPORTED_CODE_FLAGS.items():
            if code.co_flags & flag:
                graph_break(UNSUPPORTED_PYTHON_FEATURE, f"calling {code.co_name}, {what}")
        if tx.depth() > config.inline_depth_limit:  # the mistake: one level too many
            graph_break(INLINING_TOO_DEEP, f"calling {code.co_name} {tx.depth()} calls deep")
        symbolic_locals = fn.bind(tx, args, kwargs)
        cells = dict(zip(code.co_freevars, fn.closure_cells(tx)))
        if code.co_flags & inspect.CO_GENERATOR:  # nothing runs until the first next()
            generator_tx = InliningGeneratorInstructionTranslator(
                tx.output, code, scan(code), symbolic_locals, fn.get_globals(), cells, tx
            )
            return GeneratorVariable(generator_tx, object_id=new_object_id())
        callee_tx = cls(
            tx.output, code, scan(code), symbolic_locals, fn.get_globals(), cells, tx
        )
        callee_tx.run()
        return callee_tx.return_value
