"""Reading a running CPython 3.11 frame: its value stack and its cells (chapter 7).

A resume function is checked against the frame it replaces: stopped before
one instruction, the original frame holds some values on its stack and some
locals, and the resume function, given exactly those, must do what the rest
of the original frame would have done. `sys.settrace` with
`frame.f_trace_opcodes = True` stops before every instruction and shows
`frame.f_locals`, but not the value stack. So this module reads the stack from
the interpreter's own frame struct with ctypes (CPython 3.11, 64-bit,
`Include/internal/pycore_frame.h`):

    PyFrameObject:        ob_refcnt, ob_type, f_back, f_frame -> ...
    _PyInterpreterFrame:  f_func, f_globals, f_builtins, f_locals, f_code,
                          frame_obj, previous, prev_instr   (8 pointers)
                          int stacktop; bool is_entry; char owner
                          PyObject *localsplus[]            (at 9 pointers)

`localsplus` holds the locals, cells and free variables, then the value stack
up to `stacktop`. A NULL slot is reported as the `NULL` marker. Before calling
the trace function the interpreter stores its stack pointer into `stacktop`,
so inside the callback the stack is exactly the frame's.

Used by the tests of the resume layer and by chapter 7's graded tests, whose
oracle is CPython running the original function. TorchDynamo has no
counterpart: it never needs a frame's stack after the fact, because it traced
every instruction up to the break and knows what it pushed.
"""

from __future__ import annotations

import contextlib
import ctypes
import sys
from types import CellType, CodeType, FrameType
from typing import Any, Callable, Iterator

from minidynamo.bytecode import opcodes

POINTER = ctypes.sizeof(ctypes.c_void_p)
F_FRAME = 3 * POINTER        # PyFrameObject.f_frame
STACKTOP = 8 * POINTER       # _PyInterpreterFrame.stacktop
LOCALSPLUS = 9 * POINTER     # _PyInterpreterFrame.localsplus


class _Null:
    """The marker for a NULL stack slot."""

    def __repr__(self) -> str:
        return "NULL"


NULL = _Null()


def _interpreter_frame(frame: FrameType) -> int:
    return ctypes.c_void_p.from_address(id(frame) + F_FRAME).value


def _slot(interpreter_frame: int, index: int) -> Any:
    address = ctypes.c_void_p.from_address(interpreter_frame + LOCALSPLUS + index * POINTER)
    if address.value is None:
        return NULL
    return ctypes.cast(address.value, ctypes.py_object).value


def slot_names(frame: FrameType) -> tuple[str, ...]:
    """The names of `localsplus`: locals, then cells, then free variables."""
    code = frame.f_code
    return opcodes.localsplus_names(code.co_varnames, code.co_cellvars, code.co_freevars)


def value_stack(frame: FrameType) -> list:
    """The frame's value stack, bottom first; NULL slots are `NULL`.

    Only meaningful inside a trace callback for `frame` (see the module docstring)."""
    interpreter_frame = _interpreter_frame(frame)
    top = ctypes.c_int.from_address(interpreter_frame + STACKTOP).value
    base = len(slot_names(frame))
    return [_slot(interpreter_frame, index) for index in range(base, top)]


def frame_cells(frame: FrameType) -> list[CellType]:
    """The frame's cell objects for co_cellvars, in that order (after MAKE_CELL ran)."""
    interpreter_frame = _interpreter_frame(frame)
    names = slot_names(frame)
    cells = [_slot(interpreter_frame, names.index(name)) for name in frame.f_code.co_cellvars]
    if not all(isinstance(cell, CellType) for cell in cells):
        raise ValueError(f"the cells of {frame.f_code.co_name} are not made yet: {cells}")
    return cells


@contextlib.contextmanager
def tracing_opcodes(code: CodeType, local_trace: Callable[..., Any]) -> Iterator[None]:
    """`with tracing_opcodes(code, local_trace):` calls `local_trace(frame, "opcode",
    None)` before every instruction of each frame that runs `code` (and no other)."""

    def trace_calls(frame: FrameType, event: str, arg: Any) -> Any:
        if frame.f_code is not code:
            return None
        frame.f_trace_opcodes, frame.f_trace_lines = True, False
        return local_trace

    previous = sys.gettrace()
    sys.settrace(trace_calls)
    try:
        yield
    finally:
        sys.settrace(previous)


def call_with_no_handled_exception(thunk: Callable[[], Any]) -> Any:
    """Call `thunk` as code outside any `except` block would: `sys.exc_info()` empty.

    A trace callback runs with the traced frame's handled exception still set
    (3.11 keeps one per thread, not per frame); the generated code that calls a
    resume function after a graph break has none. `PyErr_SetHandledException`
    (new in 3.11) clears it for the call and puts it back afterwards.
    """
    saved = _handled_exception()
    _set_handled_exception(None)
    try:
        return thunk()
    finally:
        _set_handled_exception(saved)


def _handled_exception() -> BaseException | None:
    """`PyErr_GetHandledException()`: a new reference, or NULL when there is none."""
    get = ctypes.pythonapi.PyErr_GetHandledException
    get.restype = ctypes.c_void_p
    address = get()
    if address is None:
        return None
    exception = ctypes.cast(address, ctypes.py_object).value
    ctypes.pythonapi.Py_DecRef(ctypes.c_void_p(address))    # drop the C call's reference
    return exception


def _set_handled_exception(exception: BaseException | None) -> None:
    """`PyErr_SetHandledException(exception)`: None clears it; the reference is not stolen."""
    set_handled = ctypes.pythonapi.PyErr_SetHandledException
    set_handled.argtypes = [ctypes.py_object]
    set_handled.restype = None
    set_handled(exception)
