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
import types
from typing import Any, Sequence

from minidynamo import config
from minidynamo.bytecode import Instruction
from minidynamo.exc import (
    GENERATOR_CLOSED_BY_ITS_LAST_REFERENCE,
    INLINING_TOO_DEEP,
    UNSUPPORTED_PYTHON_FEATURE,
    ObservedException,
    Unsupported,
    graph_break,
    raise_observed,
)
from minidynamo.translator.base import InstructionTranslatorBase, instructions_of
from minidynamo.translator.exceptions import ExcInfo, handle_exception
from minidynamo.variables import ConstantVariable, VariableTracker, new_object_id
from minidynamo.variables.exceptions import ExceptionVariable, is_none
from minidynamo.variables.iterators import GeneratorVariable
from minidynamo.variables.functions import BaseUserFunctionVariable

UNSUPPORTED_CODE_FLAGS = {
    inspect.CO_COROUTINE: "a coroutine",
    inspect.CO_ASYNC_GENERATOR: "an async generator",
    inspect.CO_ITERABLE_COROUTINE: "a coroutine",
}


class InliningInstructionTranslator(InstructionTranslatorBase):
    """Traces a called user function inside its caller's graph."""

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
        if tx.depth() >= config.inline_depth_limit:
            graph_break(INLINING_TOO_DEEP, f"calling {code.co_name} {tx.depth()} calls deep")
        symbolic_locals = fn.bind(tx, args, kwargs)
        cells = dict(zip(code.co_freevars, fn.closure_cells(tx)))
        if code.co_flags & inspect.CO_GENERATOR:  # nothing runs until the first next()
            generator_tx = InliningGeneratorInstructionTranslator(
                tx.output, code, instructions_of(code), symbolic_locals, fn.get_globals(), cells, tx
            )
            generator = GeneratorVariable(generator_tx, object_id=new_object_id())
            generator_tx.object_id = generator.object_id
            return generator
        callee_tx = cls(
            tx.output, code, instructions_of(code), symbolic_locals, fn.get_globals(), cells, tx
        )
        callee_tx.run()
        return callee_tx.return_value

    def RETURN_VALUE(self, inst: Instruction) -> None:
        self.return_value = self.pop()


class InliningGeneratorInstructionTranslator(InliningInstructionTranslator):
    """The suspended frame of a generator made while tracing.

    Calling a generator function runs nothing: it makes this translator and
    returns a `GeneratorVariable` pointing at it. Each `next()` (a FOR_ITER over
    the generator, the `sum` polyfill's loop, ...) *resumes* the frame until its
    next YIELD_VALUE, exactly as CPython resumes a generator's frame, so the
    generator's graph nodes interleave with its consumer's as in eager code.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.yielded: VariableTracker | None = None
        self.exc_info = ExcInfo()  # a generator's own exception state (CPython's gi_exc_state)
        self.stop_value: VariableTracker | None = None  # what it returned, for StopIteration.value
        # Suspended inside `yield from inner`: (inner, its SEND), so that a throw() goes to
        # the inner iterator first, as CPython's gen_throw does; None at a plain `yield`.
        self.delegate: tuple[VariableTracker, Instruction] | None = None
        self.sending_to: tuple[VariableTracker, Instruction] | None = None
        self.output.translators.append(self)  # alive (its locals see new versions) until exhausted

    def resume(self, tx: InstructionTranslatorBase,
               sent: VariableTracker | None = None) -> VariableTracker | None:
        """`next(gen)` (sent None) or `gen.send(sent)`: run to the next yield, the
        suspended `yield` evaluating to `sent`; the yielded value, or None once the
        generator returned (then `stop_value` is what it returned)."""
        self.stop_value = None
        self.wake()  # its state changes from here on: no longer summarised
        if self.return_value is not None:
            return None
        if self.steps > 0:
            self.push(ConstantVariable(None) if sent is None else sent)  # what `yield` evaluates to
        elif sent is not None and not is_none(sent):
            raise_observed(TypeError, "can't send non-None value to a just-started generator")
        return self.run_to_yield(tx, None)

    def throw(self, tx: InstructionTranslatorBase, raised: ObservedException) -> VariableTracker | None:
        """`gen.throw(exception)`: raise it where the generator is suspended (its
        YIELD_VALUE), so its own handlers see it; the next value it yields, or None
        once it returned. Not started or finished, it raises the exception at once.
        Suspended in `yield from inner`, the inner generator gets it first."""
        self.stop_value = None
        self.wake()  # its state changes from here on: no longer summarised
        if self.return_value is not None or self.steps == 0:
            self.finish()
            raise raised
        if self.delegate is not None and isinstance(self.delegate[0], GeneratorVariable):
            self.attach(tx)
            try:
                return self.throw_into_delegate(tx, raised)
            except ObservedException as from_inner:  # it left the inner one: raised here
                raised = from_inner
        return self.run_to_yield(tx, raised)

    def throw_into_delegate(self, tx: InstructionTranslatorBase,
                            raised: ObservedException) -> VariableTracker | None:
        """The `yield from` this generator is suspended in passes `raised` on: closed
        (GeneratorExit) the inner one is closed and the exception raised here; thrown,
        the inner one's next value is this one's, and if the inner one returns, its
        value is what `yield from` evaluates to and this generator goes on."""
        inner, send = self.delegate
        if issubclass(raised.exc_type, GeneratorExit):
            inner.method_close(self)
            raise raised
        item = inner.generator_tx.throw(self, raised)
        if item is not None:
            self.yielded = item
            return item  # still suspended in the same `yield from`
        self.delegate = None
        self.pop()  # the inner generator, then what it returned, after the SEND loop
        returned = inner.generator_tx.stop_value
        self.push(ConstantVariable(None) if returned is None else returned)
        self.jump(send)
        return self.run_to_yield(tx, None)

    def attach(self, tx: InstructionTranslatorBase) -> None:
        """Run on behalf of `tx`: its caller for user frames, its exception state outside."""
        self.parent, self.yielded = tx, None
        self.exc_info.outer = tx.exc_info  # its own slot, then its consumer's (gi_exc_state)

    def run_to_yield(self, tx: InstructionTranslatorBase,
                     raised: ObservedException | None) -> VariableTracker | None:
        self.attach(tx)
        tx.suspend()
        try:
            if raised is not None:
                handle_exception(self, raised)
            while self.yielded is None and self.step_handling_exceptions():
                pass
        except Unsupported as error:
            error.add_user_frame(self.user_frame())
            raise
        except ObservedException:  # it leaves the generator, which is then finished
            self.finish()
            raise
        finally:
            tx.wake()
            self.suspend()  # until the next resume() or throw()
            self.exc_info.outer = None  # its consumer's state is linked only while it runs
        if self.return_value is not None:
            self.stop_value = self.return_value
            self.finish()
            return None
        if self not in self.output.suspended_generators:  # closed when it is dropped
            self.output.suspended_generators.append(self)
        return self.yielded

    def finish(self) -> None:
        """The generator is done: later resumes return None."""
        if self.return_value is None:
            self.return_value = ConstantVariable(None)
        if self in self.output.translators:
            self.output.translators.remove(self)
        if self in self.output.suspended_generators:
            self.output.suspended_generators.remove(self)

    def close(self, tx: InstructionTranslatorBase) -> None:
        """`gen.close()`: GeneratorExit thrown in where it waits; it must not yield again."""
        exit_exception = ExceptionVariable(GeneratorExit, (), object_id=new_object_id())
        try:
            if self.throw(tx, ObservedException(GeneratorExit, (), exit_exception)) is not None:
                raise_observed(RuntimeError, "generator ignored GeneratorExit")
        except ObservedException as raised:
            if not issubclass(raised.exc_type, (GeneratorExit, StopIteration)):
                raise

    def close_dropped(self, tx: InstructionTranslatorBase) -> None:
        """Closed because its last reference went: what `close()` raises would be
        "Exception ignored in ..." on stderr, which the trace does not write (MD0021)."""
        try:
            self.close(tx)
        except ObservedException as raised:
            graph_break(GENERATOR_CLOSED_BY_ITS_LAST_REFERENCE,
                        f"closing {self.code.co_name}() raised {raised.exc_type.__name__}")

    def RETURN_GENERATOR(self, inst: Instruction) -> None:
        self.push(ConstantVariable(None))  # popped by the POP_TOP that follows

    def YIELD_VALUE(self, inst: Instruction) -> None:
        self.yielded = self.pop()  # what `yield` evaluates to is pushed on resume
        self.delegate, self.sending_to = self.sending_to, None

    def GET_YIELD_FROM_ITER(self, inst: Instruction) -> None:
        value = self.pop()
        self.push(value if isinstance(value, GeneratorVariable) else value.get_iterator(self))

    def SEND(self, inst: Instruction) -> None:
        """`yield from`: send the value into the inner iterator and push what it yields,
        which YIELD_VALUE yields next; once the inner one is exhausted, its return value
        and a jump past the loop."""
        sent, inner = self.pop(), self.stack[-1]
        if isinstance(inner, GeneratorVariable):
            item = inner.generator_tx.resume(self, sent)
        elif is_none(sent):
            item = inner.next_variable(self)
        else:  # CPython calls inner.send(value), which a plain iterator does not have
            raise_observed(AttributeError, f"{inner.python_type().__name__!r} object has no "
                           "attribute 'send'")
        if item is None:  # `r = yield from inner()`: r is what inner returned
            self.pop()
            is_generator = isinstance(inner, GeneratorVariable)
            returned = inner.generator_tx.stop_value if is_generator else None
            self.push(ConstantVariable(None) if returned is None else returned)
            self.jump(inst)
        else:
            self.sending_to = (inner, inst)
            self.push(item)
