"""The symbolic VM: translators and their opcode handlers (chapters 2-3, 6-8).

Each module below holds one family of handlers (opcode names in capitals) or one
part of the machine; tests/test_package_style.py checks this list against the
package: every module is listed, every opcode named is handled in its module.

    base.py           InstructionTranslatorBase: stack, locals, step/run, dispatch table
    stack_ops.py      NOP, RESUME, PRECALL, POP_TOP, PUSH_NULL, COPY, SWAP
    loads_stores.py   LOAD_FAST, STORE_FAST, DELETE_FAST, LOAD_CONST, LOAD_GLOBAL,
                      LOAD_BUILD_CLASS, STORE_GLOBAL, MAKE_CELL, COPY_FREE_VARS, LOAD_CLOSURE, LOAD_DEREF,
                      STORE_DEREF, DELETE_DEREF, LOAD_ATTR, LOAD_METHOD, STORE_ATTR,
                      DELETE_ATTR,
                      IMPORT_NAME, IMPORT_FROM
    operators.py      stack_op; UNARY_NEGATIVE, UNARY_POSITIVE, UNARY_INVERT, UNARY_NOT,
                      BINARY_SUBSCR, BINARY_OP, COMPARE_OP, IS_OP, CONTAINS_OP,
                      STORE_SUBSCR, DELETE_SUBSCR
    containers.py     BUILD_TUPLE, BUILD_LIST, BUILD_SET, BUILD_MAP, BUILD_CONST_KEY_MAP,
                      BUILD_SLICE, BUILD_STRING, LIST_TO_TUPLE, LIST_APPEND, LIST_EXTEND,
                      SET_ADD, SET_UPDATE, MAP_ADD, DICT_UPDATE, DICT_MERGE,
                      UNPACK_SEQUENCE, UNPACK_EX, FORMAT_VALUE
    calls.py          KW_NAMES, CALL, CALL_FUNCTION_EX, MAKE_FUNCTION
    control_flow.py   generic_jump; JUMP_FORWARD, JUMP_BACKWARD, JUMP_BACKWARD_NO_INTERRUPT,
                      the POP_JUMP_*_IF_* family, JUMP_IF_TRUE_OR_POP,
                      JUMP_IF_FALSE_OR_POP, GET_ITER, FOR_ITER
    exceptions.py     handle_exception (the exception table); LOAD_ASSERTION_ERROR,
                      PUSH_EXC_INFO, POP_EXCEPT, CHECK_EXC_MATCH, RERAISE, RAISE_VARARGS,
                      WITH_EXCEPT_START
    with_blocks.py    BEFORE_WITH (grad-mode blocks) and the blocks open at a break
    breaks.py         graph breaks in the root frame: partial graph, resume calls
    root.py           InstructionTranslator: the compiled frame; its RETURN_VALUE
    inlining.py       InliningInstructionTranslator (called user functions; RETURN_VALUE)
                      and its generator form (RETURN_GENERATOR, YIELD_VALUE,
                      GET_YIELD_FROM_ITER, SEND; throw() into it)

A translator is called `tx` wherever it is a variable or a parameter (`self` in its
own methods); a second one in the same scope is named by its role (`callee_tx`,
`generator_tx`), and `tx.parent` is the caller's.
"""

from minidynamo.translator.base import InstructionTranslatorBase
from minidynamo.translator.inlining import InliningInstructionTranslator
from minidynamo.translator.root import InstructionTranslator

__all__ = ["InliningInstructionTranslator", "InstructionTranslator", "InstructionTranslatorBase"]
