"""Stop a CPython frame before one instruction, read its state, and resume it there.

The oracle of every graded test in this chapter is CPython running the original
function. To check a resume function we need the *real* frame state at a resume
point: the value stack (NULL slots included), the locals, the cells, and the
exception being handled. `minidynamo.resume.live_frame` reads the value stack
from the interpreter's own frame struct inside a `sys.settrace` callback
(chapter 7 explains how).

`resume_at` stops a fresh run of a program before the n-th execution of an offset,
builds the resume function from that state (as a graph break's generated code
would), calls it, and records what it returned or raised and the log: that must
equal the undisturbed run's.
"""

from __future__ import annotations

import copy
import dis
import sys
from collections import Counter
from dataclasses import dataclass
from types import FrameType
from typing import Any, Callable

from minidynamo import resume
from minidynamo.bytecode import scan
from minidynamo.resume.live_frame import (
    NULL,
    call_with_no_handled_exception,
    frame_cells,
    tracing_opcodes,
    value_stack,
)

from .programs import Program

JUMPS = set(dis.hasjrel) | set(dis.hasjabs)


@dataclass
class FrameState:
    """A frame stopped before one instruction, as a resume function receives it."""

    stack: list               # bottom first; NULL slots are NULL
    locals: dict              # the bound locals (f_locals)
    cells: list               # the frame's cells, co_cellvars order
    handled: BaseException | None   # sys.exc_info()[1] inside the frame
    log_length: int

    @classmethod
    def capture(cls, frame: FrameType, log: list) -> FrameState:
        return cls(value_stack(frame), dict(frame.f_locals), frame_cells(frame),
                   sys.exc_info()[1], len(log))


@dataclass
class Outcome:
    """What a call did: ("return", value) or ("raise", (type name, message)), and the log."""

    kind: str
    value: Any
    log: list
    at: int = 0               # the log's length when the frame was stopped

    @classmethod
    def of(cls, call: Callable[[], Any], log: list) -> Outcome:
        try:
            kind, value = "return", copy.deepcopy(call())
        except resume.ResumeError:
            raise
        except Exception as error:  # noqa: BLE001 - the exception is the outcome
            kind, value = "raise", (type(error).__name__, str(error))
        return cls(kind, value, copy.deepcopy(log))

    def same_as(self, other: Outcome) -> bool:
        return (self.kind, self.value, self.log) == (other.kind, other.value, other.log)


def reference(program: Program) -> tuple[Outcome, list[int]]:
    """CPython's undisturbed run: its outcome, and the offsets it executed in order."""
    fn, log = program.make(), []
    executed: list[int] = []

    def trace(frame, event, arg):
        if event == "opcode":
            executed.append(frame.f_lasti)
        return trace

    with tracing_opcodes(fn.__code__, trace):
        outcome = Outcome.of(lambda: fn(log, *program.args, **program.kwargs), log)
    return outcome, executed


def resumable_points(code, executed: list[int]) -> list[tuple[int, int]]:
    """(offset, occurrence): the first and last execution of every offset a resume
    function may start at (not in the frame's prologue, not right after KW_NAMES/PRECALL)."""
    instructions = scan(code)
    first_resume = next(i for i, inst in enumerate(instructions) if inst.opname == "RESUME")
    refused = {inst.offset for inst in instructions[:first_resume + 1]}
    refused |= {after.offset for before, after in zip(instructions, instructions[1:])
                if before.opname in resume.HIDDEN_STATE_BEFORE}
    counts = Counter(offset for offset in executed if offset not in refused)
    return sorted({(offset, 1) for offset in counts} | set(counts.items()))


@dataclass
class Resumer:
    """How the tests build a resume function from a frame state, like a graph break does.

    `cache`: a ResumeCache to look the code up in (None: `make_resume_code`, uncached).
    `reenter`: leave each enclosing `with` block at the break (`__exit__(None, None,
    None)`) and let the prologue re-enter it, as TorchDynamo does.
    """

    cache: resume.ResumeCache | None = None
    reenter: bool = False

    def build(self, fn, offset: int, state: FrameState) -> Callable[[], Any]:
        """A thunk that calls the resume function for `state` with no handled exception."""
        function, arguments = self.prepare(fn, offset, state)
        return lambda: call_with_no_handled_exception(lambda: function(*arguments))

    def prepare(self, fn, offset: int, state: FrameState) -> tuple[Callable, list]:
        """The resume function for `state`, and the arguments to call it with."""
        code = fn.__code__
        live = [name for name in resume.live_locals_at(code, offset) if name in state.locals]
        stack = list(state.stack)
        nulls = [slot for slot, value in enumerate(stack) if value is NULL]
        handled = state.handled
        for slot in reversed(resume.exception_slots_at(code, offset)):
            stack[slot], handled = handled, stack[slot]   # the one being handled goes in
        blocks = resume.with_blocks_at(code, offset) if self.reenter else ()
        for block in reversed(blocks):
            exit_method = stack[block.stack_index]
            exit_method(None, None, None)
            stack[block.stack_index] = exit_method.__self__
        key = dict(null_slots=nulls, with_blocks=blocks)
        if self.cache is None:
            resume_code = resume.make_resume_code(code, offset, len(stack), live, **key)
        else:
            resume_code = self.cache.lookup(code, offset, len(stack), live, **key).code
        check_prologue(resume_code, offset, stack)
        function = resume.resume_function(fn, resume_code, cells=state.cells)
        arguments = [value for value in stack if value is not NULL]
        arguments += [state.locals[name] for name in live]
        return function, arguments


def check_prologue(resume_code, offset: int, stack: list) -> None:
    """Before running a resume code, check what its prologue pushes, with `dis`.

    A prologue that leaves out a NULL, or pushes one value too many, makes CPython
    read or pop outside the frame's stack: a crash, not a failed test. So the
    instructions before the first jump are simulated on a stack of "NULL"/"value"
    markers, which must match the frame's slots, and the jump must land on the
    instruction that was at `offset` in the original code.
    """
    shape: list[str] = []
    for instruction in dis.get_instructions(resume_code):
        name = instruction.opname
        if instruction.opcode in JUMPS:
            origin = resume.resume_origin(resume_code)
            landing = origin.offsets.get(instruction.argval) if origin else None
            assert landing == offset, (f"the prologue jumps to {instruction.argval}, "
                                       f"which is not original offset {offset}")
            break
        if name in ("COPY_FREE_VARS", "RESUME", "NOP", "CACHE", "EXTENDED_ARG"):
            continue
        if name == "PUSH_NULL":
            shape.append("NULL")
            continue
        effect = dis.stack_effect(instruction.opcode, instruction.arg)
        popped = {"BEFORE_WITH": 1, "PUSH_EXC_INFO": 1, "POP_TOP": 1}.get(name, 0)
        assert len(shape) >= popped, f"the prologue pops an empty stack at {name}"
        del shape[len(shape) - popped:]
        shape += ["value"] * (effect + popped)
    else:
        raise AssertionError("the prologue never jumps to the resume offset")
    expected = ["NULL" if value is NULL else "value" for value in stack]
    assert shape == expected, f"the prologue builds the stack {shape}, the frame had {expected}"


def stop_at(program: Program, offset: int, occurrence: int,
            action: Callable[[Callable, FrameState, list], Any]) -> Any:
    """Run `program`, stop before the `occurrence`-th execution of `offset`, and return
    `action(fn, state, log)`, called inside the trace callback. The original then
    finishes unobserved (its result is ignored)."""
    fn, log = program.make(), []
    seen, results = Counter(), []

    def trace(frame, event, arg):
        if event != "opcode" or frame.f_lasti != offset:
            return trace
        seen[offset] += 1
        if seen[offset] < occurrence:
            return trace
        frame.f_trace = None
        results.append(action(fn, FrameState.capture(frame, log), log))
        return None

    with tracing_opcodes(fn.__code__, trace):
        try:
            fn(log, *program.args, **program.kwargs)
        except Exception:  # noqa: BLE001 - the original's own end no longer matters
            pass
    assert len(results) == 1, f"offset {offset} reached {len(results)} times, not once"
    return results[0]


def resume_at(program: Program, offset: int, occurrence: int,
              resumer: Resumer | None = None) -> Outcome:
    """The outcome of resuming `program` before that execution of `offset`."""
    resumer = resumer or Resumer()

    def action(fn, state, log):
        outcome = Outcome.of(resumer.build(fn, offset, state), log)
        outcome.at = state.log_length
        return outcome

    return stop_at(program, offset, occurrence, action)


def mismatches(program: Program, resumer: Resumer | None = None,
               offsets: Callable[[int], bool] = lambda offset: True) -> list:
    """Resume `program` at every resumable point; the points whose outcome differs."""
    expected, executed = reference(program)
    code = program.make().__code__
    failures = []
    for offset, occurrence in resumable_points(code, executed):
        if not offsets(offset):
            continue
        try:
            got = resume_at(program, offset, occurrence, resumer)
        except resume.ResumeError as error:
            failures.append((offset, occurrence, f"refused: {error}"))
            continue
        if not got.same_as(expected):
            failures.append((offset, occurrence, got, expected))
    return failures


def reentered_mismatches(program: Program) -> list:
    """Resume with every enclosing `with` block left and re-entered (`Resumer(reenter=True)`).

    The log must be the undisturbed run's plus, where the frame was stopped, one
    `__exit__(None, None, None)` per block, innermost first, then one `__enter__` per
    block, outermost first."""
    expected, executed = reference(program)
    code = program.make().__code__
    failures, checked = [], 0
    for offset, occurrence in resumable_points(code, executed):
        blocks = resume.with_blocks_at(code, offset)
        if not blocks:
            continue
        checked += 1
        got = resume_at(program, offset, occurrence, Resumer(reenter=True))
        inserted = got.log[got.at:got.at + 2 * len(blocks)]
        exits, enters = inserted[:len(blocks)], inserted[len(blocks):]
        rest = got.log[:got.at] + got.log[got.at + 2 * len(blocks):]
        if not ((got.kind, got.value, rest) == (expected.kind, expected.value, expected.log)
                and [(e[0], e[2]) for e in exits] == [("exit", None)] * len(blocks)
                and enters == [("enter", e[1]) for e in reversed(exits)]):
            failures.append((offset, occurrence, got, expected))
    assert checked, f"{program}: no point inside a with block"
    return failures


def stack_after_prologue(program: Program, offset: int, occurrence: int
                         ) -> tuple[FrameState, FrameState]:
    """The original frame's state before `offset`, and the resume function's own frame
    state when its prologue has jumped there (read the same way, with ctypes)."""
    fn, state, (function, arguments) = stop_at(
        program, offset, occurrence,
        lambda fn, state, log: (fn, state, Resumer().prepare(fn, offset, state)))
    resume_code = function.__code__
    original_offsets = resume.resume_origin(resume_code).offsets  # resume offset -> original
    resumed: list[FrameState] = []

    def trace(frame, event, arg):
        if event == "opcode" and original_offsets.get(frame.f_lasti) == offset:
            frame.f_trace = None
            resumed.append(FrameState.capture(frame, []))
            return None
        return trace

    # Traced here, not inside `stop_at`'s callback: CPython does not trace calls made
    # by a trace function.
    with tracing_opcodes(resume_code, trace):
        try:
            call_with_no_handled_exception(lambda: function(*arguments))
        except Exception:  # noqa: BLE001 - only the state at the resume offset matters
            pass
    assert len(resumed) == 1, "the resume function never reached the resume offset"
    return state, resumed[0]
