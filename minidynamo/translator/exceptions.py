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

The exception being handled lives in `tx.exc_info`, one slot (`current`) shared by
a frame and the frames it inlines, as CPython's thread state is: a bare `raise` in a
helper called from an `except` block re-raises the caller's. The exception handled
before it is not kept there but on the value stack, where PUSH_EXC_INFO saves it and
POP_EXCEPT takes it back, exactly as CPython 3.11 does. A generator has a slot of its
own (CPython's `gi_exc_state`), linked to its consumer's while it runs: a bare
`raise` or a new exception's `__context__` looks for the innermost exception being
handled along that chain (`ExcInfo.topmost`, CPython's `_PyErr_GetTopmostException`).

Compare with TorchDynamo: `exception_handler`, `PUSH_EXC_INFO`, `POP_EXCEPT`,
`CHECK_EXC_MATCH`, `RERAISE`, `RAISE_VARARGS`, `WITH_EXCEPT_START` and
`exn_vt_stack` in `torch/_dynamo/symbolic_convert.py`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from minidynamo.bytecode import Instruction
from minidynamo.exc import ObservedException
from minidynamo.variables import ConstantVariable, VariableTracker
from minidynamo.variables.exceptions import (
    ExceptionClassVariable,
    ExceptionVariable,
    TracebackVariable,
    exception_of,
    instantiate,
)

if TYPE_CHECKING:
    from minidynamo.translator.base import InstructionTranslatorBase


@dataclass
class ExcInfo:
    """The exception being handled in one frame and those it inlines (None: none), and
    the slot of the frame that resumed it, for a generator."""

    current: VariableTracker | None = None
    outer: ExcInfo | None = None

    def topmost(self) -> VariableTracker | None:
        """`sys.exc_info()[1]`: the innermost exception being handled along the chain."""
        if self.current is not None or self.outer is None:
            return self.current
        return self.outer.topmost()


def handle_exception(tx: InstructionTranslatorBase, raised: ObservedException) -> None:
    """Send `raised`, raised by `tx.current_instruction`, to its handler in this frame;
    re-raise it (out of the frame) when no exception-table entry covers the instruction."""
    inst = tx.current_instruction
    entry = inst.exn_tab_entry
    if entry is None:
        raise raised
    by_an_operation = raised.value is None  # `d[k]`, not `raise`: no exception object yet
    exception = exception_of(raised)
    handled = tx.exc_info.topmost()
    if by_an_operation and handled is not None:  # raised while another is handled
        exception = raised.value = chain(tx, exception, context=handled)
    del tx.stack[entry.depth:]
    if entry.lasti:
        tx.push(ConstantVariable(inst.offset))
    tx.push(exception)
    tx.instruction_pointer = tx.index_of[id(entry.target)]


def observed(exception: VariableTracker) -> ObservedException:
    """The Python exception that raises the tracker `exception` through the translators."""
    args = exception.args if isinstance(exception, ExceptionVariable) else ()
    return ObservedException(exception.python_type(), args, value=exception)


def raise_exception(tx: InstructionTranslatorBase, exception: ExceptionVariable) -> None:
    """Raise `exception` symbolically; raised while another is handled, that one is
    its `__context__`, as in CPython."""
    handled = tx.exc_info.topmost()
    if handled is not None:
        exception = chain(tx, exception, context=handled)
    raise observed(exception)


def chain(tx: InstructionTranslatorBase, exception: ExceptionVariable,
          **links: VariableTracker) -> ExceptionVariable:
    """`exception` with its `__cause__` or `__context__` set (`ExceptionVariable.chained`),
    as a new version of the same object: every name of it sees the link (`err` after
    `raise err`). A context whose own chain leads back to `exception` is cut there first,
    as CPython's `_PyErr_SetObject` does (`raise a` inside a handler of a later one)."""
    latest = tx.output.side_effects.latest
    link = links.get("context")
    while isinstance(link, ExceptionVariable) and link.object_id is not None and (
            link.object_id != exception.object_id):
        link = latest(link)
        following = link.context
        if following is not None and following.object_id == exception.object_id:
            tx.output.side_effects.mutate(link.clone(context=None))
            break
        link = following
    new = exception.chained(**{name: latest(value) for name, value in links.items()})
    if new is exception or new.object_id is None:
        return new
    tx.output.side_effects.mutate(new)
    return latest(new)


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
        previous = self.exc_info.current
        self.push(previous if previous is not None else ConstantVariable(None))
        self.exc_info.current = exception
        self.push(exception)

    def POP_EXCEPT(self: InstructionTranslatorBase, inst: Instruction) -> None:
        previous = self.pop()  # saved by PUSH_EXC_INFO: current again
        is_none = isinstance(previous, ConstantVariable) and previous.value is None
        self.exc_info.current = None if is_none else previous

    def CHECK_EXC_MATCH(self: InstructionTranslatorBase, inst: Instruction) -> None:
        classes = self.pop()
        self.push(ConstantVariable(exception_matches(self.stack[-1], classes)))

    def RERAISE(self: InstructionTranslatorBase, inst: Instruction) -> None:
        raise observed(self.pop())  # with inst.arg, the saved `lasti` stays below it

    def RAISE_VARARGS(self: InstructionTranslatorBase, inst: Instruction) -> None:
        if inst.arg == 0:  # bare `raise`: the exception being handled
            handled = self.exc_info.topmost()
            if handled is None:
                raise ObservedException(RuntimeError, ("No active exception to reraise",))
            raise observed(handled)
        cause = self.pop() if inst.arg == 2 else None
        exception = instantiate(self, self.pop())
        if cause is not None:  # `raise X from Y`: Y is X's __cause__ (None clears it)
            is_none = isinstance(cause, ConstantVariable) and cause.value is None
            exception = chain(self, exception, cause=cause if is_none else instantiate(self, cause))
        raise_exception(self, exception)

    def WITH_EXCEPT_START(self: InstructionTranslatorBase, inst: Instruction) -> None:
        """`__exit__(type, value, traceback)` of the `with` block an exception leaves;
        below the exception: the saved exception, `lasti` and `__exit__` itself."""
        exception = self.stack[-1]
        exit_function = self.stack[-4]
        arguments = [ExceptionClassVariable(exception.exc_type), exception, TracebackVariable()]
        self.push(exit_function.call_function(self, arguments, {}))
