"""Exceptions in the symbolic VM: the 3.11 exception table and its handlers (chapter 8).

An instruction that would raise in CPython raises `ObservedException` in its
handler (a missing key, `raise`, `next()` of an exhausted iterator). The
translator's `run` catches it and does what CPython's `exception_unwind` does
with the raising instruction's exception-table entry (`handle_exception`):

1. no entry: the exception leaves the frame. An inlined frame's exception
   reaches its caller's CALL, which raised it, so the caller's table is asked
   next; the compiled frame's makes a graph break (MD0013) and the frame runs
   eagerly, raising the real exception to the user;
2. an entry `start to end -> target [depth] lasti`: pop the stack down to
   `depth` values, push the raising instruction's offset if `lasti`, push the
   exception, and continue at `target`.

The handler code the compiler wrote is then ordinary bytecode: PUSH_EXC_INFO
saves the exception being handled and makes this one current, CHECK_EXC_MATCH is
`except E:`, POP_EXCEPT restores the saved one, RERAISE raises again (the
cleanup handlers of `except ... as e` and `finally`), RAISE_VARARGS is `raise`,
and WITH_EXCEPT_START calls a `with` block's `__exit__` with the exception.

The exceptions being handled form a stack shared by a frame and the frames it
inlines (`tx.exception_stack`), as `sys.exc_info()` is shared in CPython: a
bare `raise` in a helper called from an `except` block re-raises the caller's.

Compare with TorchDynamo: `exception_handler`, `PUSH_EXC_INFO`, `POP_EXCEPT`,
`CHECK_EXC_MATCH`, `RERAISE`, `RAISE_VARARGS`, `WITH_EXCEPT_START` and
`exn_vt_stack` in `torch/_dynamo/symbolic_convert.py`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from minidynamo.bytecode import Instruction
from minidynamo.exc import ObservedException, graph_break
from minidynamo.variables import ConstantVariable, VariableTracker
from minidynamo.variables.exceptions import (
    ExceptionClassVariable,
    ExceptionVariable,
    exception_of,
    instantiate,
)

if TYPE_CHECKING:
    from minidynamo.translator.base import InstructionTranslatorBase


def handle_exception(tx: InstructionTranslatorBase, raised: ObservedException) -> None:
    """Send `raised`, raised by `tx.current_instruction`, to its handler in this frame;
    re-raise it (out of the frame) when no exception-table entry covers the instruction."""
    inst = tx.current_instruction
    entry = inst.exn_tab_entry if inst is not None else None
    if entry is None:
        raise raised
    exception = exception_of(raised)
    del tx.stack[entry.depth:]
    if entry.lasti:
        tx.push(ConstantVariable(inst.offset))
    tx.push(exception)
    tx.instruction_pointer = tx.index_of[id(entry.target)]


def raise_exception(tx: InstructionTranslatorBase, exception: ExceptionVariable) -> None:
    """Raise `exception` symbolically; raised while another is handled, that one is
    its `__context__`, as in CPython."""
    if tx.exception_stack:
        exception = exception.chained(context=tx.exception_stack[-1])
    raise ObservedException(exception.exc_type, exception.args, value=exception)


def exception_matches(exception: VariableTracker, classes: VariableTracker) -> bool:
    """`except classes:` for this exception: its type is a subclass of one of them."""
    wanted = classes.as_python_constant()
    wanted = wanted if isinstance(wanted, tuple) else (wanted,)
    if not all(isinstance(cls, type) and issubclass(cls, BaseException) for cls in wanted):
        raise ObservedException(TypeError, (
            "catching classes that do not inherit from BaseException is not allowed",))
    return issubclass(exception.python_type(), wanted)


class ExceptionHandlers:
    """The opcodes of raising and handling exceptions (3.11)."""

    def LOAD_ASSERTION_ERROR(self: InstructionTranslatorBase, inst: Instruction) -> None:
        self.push(ExceptionClassVariable(AssertionError))

    def PUSH_EXC_INFO(self: InstructionTranslatorBase, inst: Instruction) -> None:
        exception = self.pop()
        handled = self.exception_stack
        self.push(handled[-1] if handled else ConstantVariable(None))
        handled.append(exception)
        self.push(exception)

    def POP_EXCEPT(self: InstructionTranslatorBase, inst: Instruction) -> None:
        self.pop()  # the exception handled before this one, which becomes current again
        if self.exception_stack:
            self.exception_stack.pop()

    def CHECK_EXC_MATCH(self: InstructionTranslatorBase, inst: Instruction) -> None:
        classes = self.pop()
        self.push(ConstantVariable(exception_matches(self.stack[-1], classes)))

    def RERAISE(self: InstructionTranslatorBase, inst: Instruction) -> None:
        exception = self.pop()  # with inst.arg, the saved `lasti` stays below it
        raise ObservedException(exception.python_type(), (), value=exception)

    def RAISE_VARARGS(self: InstructionTranslatorBase, inst: Instruction) -> None:
        if inst.arg == 0:  # bare `raise`: the exception being handled
            if not self.exception_stack:
                raise ObservedException(RuntimeError, ("No active exception to reraise",))
            exception = self.exception_stack[-1]
            raise ObservedException(exception.python_type(), (), value=exception)
        cause = self.pop() if inst.arg == 2 else None
        exception = instantiate(self, self.pop())
        if cause is not None:  # `raise X from Y`: Y is X's __cause__ (None clears it)
            is_none = isinstance(cause, ConstantVariable) and cause.value is None
            exception = exception.chained(cause=cause if is_none else instantiate(self, cause))
        raise_exception(self, exception)

    def WITH_EXCEPT_START(self: InstructionTranslatorBase, inst: Instruction) -> None:
        """`__exit__(type, value, traceback)` of the `with` block an exception leaves;
        below the exception: the saved exception, `lasti` and `__exit__` itself."""
        exception = self.stack[-1]
        exit_function = self.stack[-4]
        if not isinstance(exception, ExceptionVariable):
            graph_break("unsupported Python feature", f"`with` block left by {exception}")
        arguments = [ExceptionClassVariable(exception.exc_type), exception, ConstantVariable(None)]
        self.push(exit_function.call_function(self, arguments, {}))
