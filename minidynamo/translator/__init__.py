"""The symbolic VM: translators and their opcode handlers (chapters 2-3).

    base.py           InstructionTranslatorBase: stack, locals, step/run, dispatch table
    stack_ops.py      NOP, POP_TOP, COPY, SWAP, PUSH_NULL, ...
    loads_stores.py   LOAD/STORE_FAST, LOAD_CONST, globals, cells, attributes, imports
    operators.py      BINARY_OP, COMPARE_OP, UNARY_*, subscripts, IS_OP, CONTAINS_OP
    containers.py     BUILD_*, LIST_APPEND and friends, UNPACK_*, FORMAT_VALUE
    calls.py          CALL, KW_NAMES, CALL_FUNCTION_EX, MAKE_FUNCTION
    control_flow.py   jumps, GET_ITER, FOR_ITER, raises
    root.py           InstructionTranslator: the compiled frame
    inlining.py       InliningInstructionTranslator: called user functions
"""

from minidynamo.translator.base import InstructionTranslatorBase
from minidynamo.translator.inlining import InliningInstructionTranslator
from minidynamo.translator.root import InstructionTranslator

__all__ = ["InliningInstructionTranslator", "InstructionTranslator", "InstructionTranslatorBase"]
