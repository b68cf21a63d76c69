"""Run a sample under CPython, stop it before one instruction, and resume it there.

The real thing is CPython running the original function to the end. For a
chosen instruction (an offset and which execution of it), the harness

1. runs a fresh copy of the sample with an opcode tracer;
2. when the frame is about to execute that instruction, reads its state (the
   value stack with its NULLs, the bound live locals, the cells) and, still
   inside the trace callback, builds the resume function and calls it;
3. records the resume function's outcome and the log at that moment, and stops
   tracing (the original then finishes on a world the resume function has
   already changed; its result is ignored). Setting `frame.f_trace = None`
   stops it: in 3.11 a local tracer that returns None stays installed.

The outcome and the log must equal those of an undisturbed run. With
`reenter=True` each enclosing `with` block is left the way a graph break's code
leaves it (`__exit__(None, None, None)`), and the resume function re-enters it.
"""

from __future__ import annotations

import copy
import sys
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable

from resume_samples import Sample

from minidynamo import resume
from minidynamo.bytecode import scan
from minidynamo.resume.live_frame import (
    NULL,
    call_with_no_handled_exception,
    frame_cells,
    tracing_opcodes,
    value_stack,
)


@dataclass
class Outcome:
    """What a call did: its result or its exception, and the log afterwards."""

    kind: str             # "return", "raise", or "refused" (no resume function)
    value: Any
    log: list
    at: int = 0           # how long the log was when the frame was stopped

    @classmethod
    def of(cls, call: Callable[[], Any], log: list) -> Outcome:
        try:
            result = ("return", copy.deepcopy(call()))
        except resume.ResumeError:
            raise
        except Exception as error:   # noqa: BLE001 - the raised exception is the outcome
            result = ("raise", (type(error).__name__, str(error)))
        return cls(*result, copy.deepcopy(log))


def reference(sample: Sample) -> tuple[Outcome, list[int]]:
    """The undisturbed run's outcome and the offsets it executed, in order."""
    fn, log, args, kwargs = sample.setup()
    executed: list[int] = []

    def trace_opcodes(frame, event, arg):
        if event == "opcode":
            executed.append(frame.f_lasti)
        return trace_opcodes

    with tracing_opcodes(fn.__code__, trace_opcodes):
        outcome = Outcome.of(lambda: fn(log, *args, **kwargs), log)
    return outcome, executed


@dataclass
class FrameState:
    """A frame stopped before one instruction, as a resume function receives it."""

    stack: list
    locals: dict
    cells: list
    handled_exception: BaseException | None    # sys.exc_info()[1] in the frame
    log_length: int

    @classmethod
    def capture(cls, frame, log: list) -> FrameState:
        cells = frame_cells(frame) if frame.f_code.co_cellvars else []
        return cls(value_stack(frame), dict(frame.f_locals), cells,
                   sys.exc_info()[1], len(log))


def call_resume(fn, code, offset: int, state: FrameState, cache: resume.ResumeCache,
                reenter: bool) -> Callable[[], Any]:
    """Build the resume function for `state` and return a thunk that calls it."""
    live = [name for name in resume.live_locals_at(code, offset) if name in state.locals]
    nulls = [slot for slot, value in enumerate(state.stack) if value is NULL]
    stack = list(state.stack)
    handled = state.handled_exception          # the prologue makes it current again
    for slot in reversed(resume.exception_slots_at(code, offset)):
        stack[slot], handled = handled, stack[slot]
    blocks = resume.with_blocks_at(code, offset) if reenter else ()
    for block in reversed(blocks):          # what the graph-break code does: leave them
        exit_method = stack[block.stack_index]
        exit_method(None, None, None)
        stack[block.stack_index] = exit_method.__self__
    entry = cache.lookup(code, offset, len(stack), live,
                         null_slots=nulls, with_blocks=blocks)
    function = resume.resume_function(fn, entry.code, cells=state.cells)
    arguments = [value for value in stack if value is not NULL]
    arguments += [state.locals[name] for name in live]
    return lambda: call_with_no_handled_exception(lambda: function(*arguments))


def resume_at(sample: Sample, offset: int, occurrence: int, cache: resume.ResumeCache,
              *, reenter: bool = False) -> Outcome:
    """Run `sample`, resume it before the `occurrence`-th execution of `offset`."""
    fn, log, args, kwargs = sample.setup()
    seen = Counter()
    outcome: list[Outcome] = []

    def trace_opcodes(frame, event, arg):
        if event != "opcode" or frame.f_lasti != offset:
            return trace_opcodes
        seen[offset] += 1
        if seen[offset] < occurrence:
            return trace_opcodes
        frame.f_trace = None                  # stop tracing this frame from here on
        state = FrameState.capture(frame, log)
        try:
            thunk = call_resume(fn, fn.__code__, offset, state, cache, reenter)
        except resume.ResumeError as error:   # any other error fails the test
            outcome.append(Outcome("refused", str(error), []))
            return None
        outcome.append(Outcome.of(thunk, log))
        outcome[-1].at = state.log_length
        return None

    with tracing_opcodes(fn.__code__, trace_opcodes):
        try:
            fn(log, *args, **kwargs)
        except Exception:   # noqa: BLE001 - the original's end no longer matters
            pass
    assert len(outcome) == 1, f"offset {offset} was reached {len(outcome)} times, not once"
    return outcome[0]


def resume_points(executed: list[int]) -> list[tuple[int, int]]:
    """(offset, occurrence) pairs: the first and last execution of every offset."""
    counts = Counter(executed)
    points = {(offset, 1) for offset in counts}
    points |= {(offset, count) for offset, count in counts.items()}
    return sorted(points)


def refused_offsets(code) -> set[int]:
    """Offsets a resume function may not start at: the frame prologue, mid-call."""
    instructions = scan(code)
    first_resume = next(i for i, inst in enumerate(instructions) if inst.opname == "RESUME")
    refused = {inst.offset for inst in instructions[:first_resume + 1]}
    for before, after in zip(instructions, instructions[1:]):
        if before.opname in resume.HIDDEN_STATE_BEFORE:
            refused.add(after.offset)
    return refused
