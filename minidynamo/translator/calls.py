"""Call handlers: CALL, KW_NAMES, CALL_FUNCTION_EX, MAKE_FUNCTION (chapter 2).

Python 3.11 calls in two or three steps. The callable is pushed with a NULL
below it (PUSH_NULL, LOAD_GLOBAL's low bit, our LOAD_METHOD), or with the
`self` argument after it; then the arguments; an optional KW_NAMES names the
last few arguments; PRECALL is a hint and CALL does the call. All of them end
in one place, `InstructionTranslatorBase.call_function(fn, args, kwargs)`, which
asks the callee's tracker what calling it means: a graph node (torch
functions), a folded constant (builtins on constants), or an inlined frame
(user functions).

MAKE_FUNCTION is how lambdas, comprehensions and inner functions come to
exist: it makes a `NestedUserFunctionVariable` from the code object, its
defaults and its closure cells; calling it later inlines it like any function.

Compare with TorchDynamo: `CALL`, `KW_NAMES`, `CALL_FUNCTION_EX`,
`MAKE_FUNCTION` in `torch/_dynamo/symbolic_convert.py`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from minidynamo.bytecode import Instruction
from minidynamo.exc import UNSUPPORTED_CALL, graph_break
from minidynamo.variables import ConstDictVariable, NestedUserFunctionVariable, NullVariable
from minidynamo.variables.base import new_object_id

if TYPE_CHECKING:
    from minidynamo.translator.base import InstructionTranslatorBase

# MAKE_FUNCTION's flag bits, in the order their values sit on the stack (deepest first)
MAKE_FUNCTION_FLAGS = (
    ("defaults", 0x01), ("keyword_defaults", 0x02), ("annotations", 0x04), ("closure", 0x08),
)


class CallHandlers:
    """Calling and making functions."""

    def KW_NAMES(self: InstructionTranslatorBase, inst: Instruction) -> None:
        self.kw_names = inst.argval

    def CALL(self: InstructionTranslatorBase, inst: Instruction) -> None:
        args = self.popn(inst.arg)
        second, first = self.pop(), self.pop()  # [NULL, callable] or [callable, self]
        if isinstance(first, NullVariable):
            fn = second
        else:
            fn, args = first, [second, *args]
        names, self.kw_names = self.kw_names, ()
        positional = args[: len(args) - len(names)]
        keywords = dict(zip(names, args[len(args) - len(names):]))
        self.call_function(fn, positional, keywords)

    def CALL_FUNCTION_EX(self: InstructionTranslatorBase, inst: Instruction) -> None:
        kwargs = self.pop().realize() if inst.arg & 0x01 else ConstDictVariable({})
        args = self.pop()
        fn = self.pop()
        self.pop()  # the NULL below the callable
        if not isinstance(kwargs, ConstDictVariable):
            graph_break(UNSUPPORTED_CALL, f"** unpacking of {kwargs} in a call")
        self.call_function(fn, args.unpack_var_sequence(self), dict(kwargs.items))

    def MAKE_FUNCTION(self: InstructionTranslatorBase, inst: Instruction) -> None:
        code = self.pop().as_python_constant()
        parts = {}
        for name, flag in reversed(MAKE_FUNCTION_FLAGS):
            parts[name] = self.pop() if inst.arg & flag else None
        closure = tuple(parts["closure"].unpack_var_sequence(self)) if parts["closure"] else None
        attributes = {}
        if parts["annotations"] is not None:  # a tuple of names and values, pairwise
            flat = parts["annotations"].unpack_var_sequence(self)
            annotations = {name.as_python_constant(): value
                           for name, value in zip(flat[::2], flat[1::2])}
            attributes["__annotations__"] = ConstDictVariable(annotations,
                                                              object_id=new_object_id())
        function = NestedUserFunctionVariable(  # a new object: rebuilt once if it escapes
            code, self.f_globals, parts["defaults"], parts["keyword_defaults"], closure,
            attributes, object_id=new_object_id(),
        )
        self.output.side_effects.track_new(function)
        self.push(function)
