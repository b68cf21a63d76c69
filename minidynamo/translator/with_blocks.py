"""`with` blocks: BEFORE_WITH, and grad-mode blocks around a graph break (chapter 8).

CPython 3.11 runs `with torch.no_grad(): body` as

    <the manager>  BEFORE_WITH  POP_TOP   __enter__(); its __exit__ stays on the stack
    body                                  protected by an exception-table entry
    LOAD_CONST None x3  CALL 2  POP_TOP   the normal exit: __exit__(None, None, None)
    handler: PUSH_EXC_INFO  WITH_EXCEPT_START ...   the exit with an exception

BEFORE_WITH on a grad-mode manager asks its tracker to enter (a grad-mode
change becomes a graph node, see `variables/ctx_manager.py`) and pushes its
`WithExitFunctionVariable`. On any other manager it does what CPython does:
look up `__exit__`, call `__enter__` (traced like any call: a user class's
methods are inlined) and push both. The normal exit is an ordinary CALL of the
pushed `__exit__`; the exit with an exception is WITH_EXCEPT_START
(`translator/exceptions.py`), and a true result suppresses the exception.

A graph break inside a grad-mode block (chapter 7's machinery, `breaks.py`)
needs three things that this file provides:

1. the partial graph leaves the blocks before it ends (`exit_blocks`), so the
   graph hands back the grad mode it was called with;
2. the breaking instruction runs natively inside the same blocks
   (`run_inside_blocks`): generated code enters a fresh `torch.no_grad()`
   around it, and leaves it on the normal path and on an exception;
3. the resume function enters the blocks again: each `__exit__` slot is passed
   as a fresh manager and named a `WithBlock` (the resume prologue calls
   `__enter__`; the original exception table calls `__exit__`).

Compare with TorchDynamo: `setup_or_before_with` / `BEFORE_WITH` and
`WithExitFunctionVariable` in `torch/_dynamo/symbolic_convert.py` and
`variables/ctx_manager.py`; `break_graph_if_unsupported` (its
`ReenterWith(...).try_except` around the instruction) and `ReenterWith` in
`resume_execution.py`.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING

from minidynamo.bytecode import Instruction, InstructionExceptionEntry, create_instruction
from minidynamo.exc import raise_observed
from minidynamo.variables import ConstantVariable, VariableTracker
from minidynamo.variables.ctx_manager import GradModeVariable, WithExitFunctionVariable
from minidynamo.variables.user_defined import UserDefinedObjectVariable, class_attribute

if TYPE_CHECKING:
    from minidynamo.translator.base import InstructionTranslatorBase

UNSUPPORTED_HINT = ("minidynamo traces `with torch.no_grad()`, `torch.enable_grad()` and "
                    "`torch.set_grad_enabled(True/False)`; move other `with` blocks out of "
                    "the compiled function.")


class WithBlockHandlers:
    """Entering a `with` block; its exit is a plain CALL of the pushed `__exit__`."""

    def BEFORE_WITH(self: InstructionTranslatorBase, inst: Instruction) -> None:
        manager = self.pop().realize()
        if isinstance(manager, GradModeVariable):  # graph state, not a traced call
            self.push(manager.enter(self))
            self.push(ConstantVariable(None))  # what __enter__ returns: `as g` binds None
            return
        manager_type = manager.python_type()
        protocol = f"{manager_type.__name__!r} object does not support the context manager protocol"
        if not hasattr(manager_type, "__enter__"):
            raise_observed(TypeError, protocol)
        if not hasattr(manager_type, "__exit__"):
            raise_observed(TypeError, f"{protocol} (missed __exit__ method)")
        enter = special_method(self, manager, "__enter__")
        exit_function = special_method(self, manager, "__exit__")  # before entering
        self.push(exit_function)
        self.push(enter.call_function(self, [], {}))


def special_method(tx: InstructionTranslatorBase, manager: VariableTracker,
                   name: str) -> VariableTracker:
    """`type(manager).name` bound to `manager`: a special method is looked up on the
    type, never on the instance (CPython's `_PyObject_LookupSpecial`)."""
    if isinstance(manager, UserDefinedObjectVariable):
        cls = manager.python_type()
        return class_attribute(tx, manager, cls, name, inspect.getattr_static(cls, name), None)
    return manager.var_getattr(tx, name)


def open_blocks(stack: list[VariableTracker]) -> list[WithExitFunctionVariable]:
    """The grad-mode blocks entered and not yet left, outermost first."""
    return [value for value in stack if isinstance(value, WithExitFunctionVariable)]


def exit_blocks(tx: InstructionTranslatorBase) -> None:
    """Before a partial graph ends: leave the open blocks, innermost first."""
    for exit_function in reversed(open_blocks(tx.stack)):
        exit_function.exit(tx)


def run_inside_blocks(body: list[Instruction], managers: list[str]) -> list[Instruction]:
    """`body` (which leaves the stack as it found it) inside `with` blocks on the
    managers held in these temporaries, outermost first."""
    for depth in reversed(range(len(managers))):
        body = with_block(body, managers[depth], depth)
    return body


def with_block(body: list[Instruction], manager: str, depth: int) -> list[Instruction]:
    """`with <manager>: body`, laid out exactly as the 3.11 compiler writes it (so that
    depyf can decompile the generated code); `depth` values lie below on the stack.

    The body unwinds to the `__exit__` and jumps to the handler, which calls
    `__exit__(exception)` and re-raises unless it returned True; the handler's own
    cleanup entry restores the exception state first.
    """
    enter = [create_instruction("LOAD_FAST", argval=manager), create_instruction("BEFORE_WITH")]
    protected = [create_instruction("POP_TOP"), *body]
    after = create_instruction("NOP")
    leave = [create_instruction("LOAD_CONST", argval=None) for _ in range(3)]
    leave += [create_instruction("PRECALL", arg=2), create_instruction("CALL", arg=2),
              create_instruction("POP_TOP"), create_instruction("JUMP_FORWARD", target=after)]
    suppressed = [create_instruction("POP_TOP"), create_instruction("POP_EXCEPT"),
                  create_instruction("POP_TOP"), create_instruction("POP_TOP")]
    handler = [create_instruction("PUSH_EXC_INFO"), create_instruction("WITH_EXCEPT_START"),
               create_instruction("POP_JUMP_FORWARD_IF_TRUE", target=suppressed[0]),
               create_instruction("RERAISE", arg=2)]
    cleanup = [create_instruction("COPY", arg=3), create_instruction("POP_EXCEPT"),
               create_instruction("RERAISE", arg=1)]
    protect(protected, handler[0], depth + 1)
    protect(handler, cleanup[0], depth + 3)
    protect(suppressed[:1], cleanup[0], depth + 3)
    return [*enter, *protected, *leave, *handler, *cleanup, *suppressed, after]


def protect(instructions: list[Instruction], handler: Instruction, depth: int) -> None:
    """Send exceptions of the instructions not protected yet (inner blocks' are) to `handler`."""
    entry = InstructionExceptionEntry(start=instructions[0], end=instructions[-1],
                                      target=handler, depth=depth, lasti=True)
    for instruction in instructions:
        if instruction.exn_tab_entry is None:
            instruction.exn_tab_entry = entry
