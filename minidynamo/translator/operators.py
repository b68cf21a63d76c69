"""Operator handlers: BINARY_OP, COMPARE_OP, UNARY_*, subscripts, `is`, `in` (chapter 2).

Every operator handler is the same three steps: pop the operands, call the
`operator` function's tracker, push the result. TorchDynamo writes this once as
a factory, `stack_op(fn)`, and declares the opcodes as one-line aliases
(`UNARY_NEGATIVE = stack_op(operator.neg)`); so do we, with one difference:
`deferred_stack_op` calls `stack_op` when the opcode first runs instead of while the
class body runs, because `stack_op` is an exercise and the student edition's
package, every exercise stubbed, must still import. BINARY_OP and COMPARE_OP
carry *which* operator in their argument, so they look it up in a table.

What the call does (fold constants, add a graph node for tensors, or ask a
container) is decided by `BuiltinVariable.call_function`, not here.

Compare with TorchDynamo: `stack_op`, `BINARY_OP`, `COMPARE_OP`, `IS_OP`,
`CONTAINS_OP` in `torch/_dynamo/symbolic_convert.py`.
"""

from __future__ import annotations

import inspect
import operator
from typing import TYPE_CHECKING, Any, Callable

from minidynamo.bytecode import Instruction, opcodes
from minidynamo.variables import BuiltinVariable, ConstantVariable
from minidynamo.variables.builtins import identity_compare

if TYPE_CHECKING:
    from minidynamo.translator.base import Handler, InstructionTranslatorBase

# BINARY_OP's operator symbol (its argrepr) -> the operator function
OPERATOR_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
    "//": operator.floordiv, "%": operator.mod, "**": operator.pow, "@": operator.matmul,
    "&": operator.and_, "|": operator.or_, "^": operator.xor,
    "<<": operator.lshift, ">>": operator.rshift,
    "+=": operator.iadd, "-=": operator.isub, "*=": operator.imul, "/=": operator.itruediv,
    "//=": operator.ifloordiv, "%=": operator.imod, "**=": operator.ipow, "@=": operator.imatmul,
    "&=": operator.iand, "|=": operator.ior, "^=": operator.ixor,
    "<<=": operator.ilshift, ">>=": operator.irshift,
}

# COMPARE_OP's comparison (its argval) -> the operator function
COMPARE_OPERATORS: dict[str, Callable[..., Any]] = {
    "<": operator.lt, "<=": operator.le, "==": operator.eq,
    "!=": operator.ne, ">": operator.gt, ">=": operator.ge,
}


def stack_op(fn: Callable[..., Any]) -> Handler:
    """A handler that pops fn's arguments, calls fn symbolically and pushes the result."""
    argument_count = len(inspect.signature(fn).parameters)
    fn_variable = BuiltinVariable(fn)

    def handler(self: InstructionTranslatorBase, inst: Instruction) -> None:
        self.push(fn_variable.call_function(self, self.popn(argument_count), {}))

    handler.__name__ = f"stack_op_{fn.__name__}"
    return handler


def deferred_stack_op(fn: Callable[..., Any]) -> Handler:
    """The handler `stack_op(fn)` makes, made the first time the opcode runs.

    It is made again whenever `stack_op` is another function: the course's tests
    plug a student's `stack_op` in, and the package's handlers then use it too.
    """
    made: dict[Callable[..., Any], Handler] = {}  # stack_op -> the handler it made

    def handler(self: InstructionTranslatorBase, inst: Instruction) -> None:
        if stack_op not in made:
            made[stack_op] = stack_op(fn)
        made[stack_op](self, inst)

    handler.__name__ = f"stack_op_{fn.__name__}"
    return handler


class OperatorHandlers:
    """Arithmetic, comparisons, subscripts."""

    UNARY_NEGATIVE = deferred_stack_op(operator.neg)
    UNARY_POSITIVE = deferred_stack_op(operator.pos)
    UNARY_INVERT = deferred_stack_op(operator.invert)
    UNARY_NOT = deferred_stack_op(operator.not_)
    BINARY_SUBSCR = deferred_stack_op(operator.getitem)

    def BINARY_OP(self: InstructionTranslatorBase, inst: Instruction) -> None:
        fn = OPERATOR_FUNCTIONS[opcodes.BINARY_OP_SYMBOLS[inst.arg]]
        self.push(BuiltinVariable(fn).call_function(self, self.popn(2), {}))

    def COMPARE_OP(self: InstructionTranslatorBase, inst: Instruction) -> None:
        fn = COMPARE_OPERATORS[inst.argval]
        self.push(BuiltinVariable(fn).call_function(self, self.popn(2), {}))

    def IS_OP(self: InstructionTranslatorBase, inst: Instruction) -> None:
        left, right = self.popn(2)
        self.push(ConstantVariable(identity_compare(left, right, self) != bool(inst.arg)))

    def CONTAINS_OP(self: InstructionTranslatorBase, inst: Instruction) -> None:
        item, container = self.popn(2)
        found = BuiltinVariable(operator.contains).call_function(self, [container, item], {})
        self.push(ConstantVariable(found.as_python_constant() != bool(inst.arg)))

    def STORE_SUBSCR(self: InstructionTranslatorBase, inst: Instruction) -> None:
        value, container, index = self.popn(3)  # container[index] = value
        BuiltinVariable(operator.setitem).call_function(self, [container, index, value], {})

    def DELETE_SUBSCR(self: InstructionTranslatorBase, inst: Instruction) -> None:
        container, index = self.popn(2)
        BuiltinVariable(operator.delitem).call_function(self, [container, index], {})
