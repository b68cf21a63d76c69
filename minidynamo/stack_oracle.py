"""The stack oracle: the symbolic stack's depth checked against CPython's (chapters 2 and 7).

A handler can return the right value and still leave the stack wrong: one value
too many left behind by a CALL, a FOR_ITER that forgets to pop its iterator when
the loop ends. The graph may even come out right, because nothing reads the
stale slot until much later. The oracle catches that class of bug where it
happens.

In CPython the stack depth before an instruction is a property of the
instruction, not of the path that reached it: the compiler guarantees every
path arrives with the same depth (that is how `co_stacksize` is computed). So one
eager run gives CPython's depth at every instruction it executed, read from the
live frame with chapter 7's reader (`resume.live_frame.value_stack`, inside a
`sys.settrace` opcode callback). The compiled run records the translator's
`len(tx.stack)` before every instruction it steps, in every translator (the root
frame, inlined calls, frames compiled after a break). Each step whose code and
offset CPython also ran must have CPython's depth. Steps in code CPython never
runs (a polyfill standing in for a C builtin, a resume function) have no
reference and are not compared. At every step the oracle also checks that each
slot of the symbolic stack holds a VariableTracker: a handler that pushes a raw
Python value (`None` instead of `ConstantVariable(None)`) may go unnoticed until
a graph break has to rebuild that slot.

    steps = assert_stack_depths_match_cpython(fn, x, y)   # raises on the first mismatch

Compare with TorchDynamo: it has no such oracle; its translator asserts only
that the stack is empty at RETURN_VALUE, and a wrong depth shows later as a
wrong stack index or a failed assembly.
"""

from __future__ import annotations

import contextlib
import copy
import sys
from dataclasses import dataclass
from types import CodeType, FrameType
from typing import Any, Callable, Iterator

from minidynamo.resume.live_frame import value_stack
from minidynamo.variables import VariableTracker


@dataclass(frozen=True)
class StackStep:
    """One instruction as a translator stepped it: where, and how deep its stack was."""

    code: CodeType
    offset: int
    opname: str
    depth: int
    strays: tuple[str, ...] = ()  # stack slots holding something other than a tracker

    def where(self) -> str:
        return f"{self.code.co_name} offset {self.offset} ({self.opname})"


class Depths(dict):
    """(code object, offset) -> CPython's stack depth before that instruction; `raised`:
    the exception type the eager call raised (None if it returned)."""

    raised: type[BaseException] | None = None


def cpython_depths(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Depths:
    """CPython's stack depth before every instruction an eager call of `fn` runs,
    keyed by (code object, offset), over every Python frame the call runs.

    If the call raises, the depths up to the exception are returned; the exception
    is kept as `depths.raised` for the compiled run to match."""
    depths = Depths()

    def on_opcode(frame: FrameType, event: str, arg: Any) -> Any:
        if event == "opcode":
            depths[frame.f_code, frame.f_lasti] = len(value_stack(frame))
        return on_opcode

    def on_call(frame: FrameType, event: str, arg: Any) -> Any:
        frame.f_trace_opcodes, frame.f_trace_lines = True, False
        return on_opcode

    previous = sys.gettrace()
    sys.settrace(on_call)
    try:
        fn(*args, **kwargs)
    except Exception as error:  # an outcome too: the depths up to it still count
        depths.raised = type(error)
    finally:
        sys.settrace(previous)
    return depths



@contextlib.contextmanager
def recording_steps() -> Iterator[list[StackStep]]:
    """`with recording_steps() as steps:` records every translator step inside the block."""
    from minidynamo.translator.base import InstructionTranslatorBase

    steps: list[StackStep] = []
    step = InstructionTranslatorBase.step  # whatever is plugged in (a student's step too)

    def recording_step(tx: InstructionTranslatorBase) -> bool:
        inst = tx.instructions[tx.instruction_pointer]
        strays = tuple(f"slot {index}: {value!r}" for index, value in enumerate(tx.stack)
                       if not isinstance(value, VariableTracker))
        steps.append(StackStep(tx.code, inst.offset, inst.opname, len(tx.stack), strays))
        return step(tx)

    InstructionTranslatorBase.step = recording_step
    try:
        yield steps
    finally:
        InstructionTranslatorBase.step = step


def symbolic_steps(fn: Callable[..., Any], *args: Any, backend: str = "eager",
                   raises: type[BaseException] | None = None, **kwargs: Any) -> list[StackStep]:
    """Every step of every translator while `minidynamo.compile(fn)` runs one call.

    The call must return, or raise `raises` (what the eager call raised): anything
    else (a stubbed handler's NotImplementedError, an internal error) propagates.
    It starts from `minidynamo.reset()`, so the call traces: an earlier call's cache
    entry, or a frame skipped after it ran eagerly, would leave nothing to compare."""
    import minidynamo

    minidynamo.reset()
    with recording_steps() as steps:
        try:
            minidynamo.compile(fn, backend=backend)(*args, **kwargs)
        except Exception as error:
            if raises is None or not isinstance(error, raises):
                raise
    return steps


def stack_depth_mismatches(steps: list[StackStep],
                           reference: Depths) -> tuple[list[str], int]:
    """(one line per step whose depth is not CPython's, how many steps were compared).

    Each line also names the step before it in the same code: the handler that ran
    there left the stack wrong."""
    mismatches, compared = [], 0
    previous: dict[CodeType, StackStep] = {}
    for step in steps:
        expected = reference.get((step.code, step.offset))
        before = previous.get(step.code)
        previous[step.code] = step
        if step.strays:  # checked everywhere: the symbolic stack holds trackers only
            mismatches.append(f"{step.where()}: the symbolic stack holds a value that is not "
                              f"a VariableTracker ({', '.join(step.strays)})")
        if expected is None:
            continue
        compared += 1
        if step.depth != expected:
            after = f", after {before.opname} at offset {before.offset}" if before else ""
            mismatches.append(f"{step.where()}{after}: the symbolic stack holds {step.depth} "
                              f"value(s), CPython's holds {expected}")
    return mismatches, compared


def assert_stack_depths_match_cpython(fn: Callable[..., Any], *args: Any,
                                      **kwargs: Any) -> list[StackStep]:
    """Run `fn` eagerly and compiled (each on a deep copy of the arguments) and check
    that before every instruction both ran, the symbolic stack is as deep as CPython's.
    Returns the symbolic steps (so a test can also check what was stepped)."""
    reference = cpython_depths(fn, *copy.deepcopy(args), **copy.deepcopy(kwargs))
    steps = symbolic_steps(fn, *copy.deepcopy(args), raises=reference.raised,
                           **copy.deepcopy(kwargs))
    mismatches, compared = stack_depth_mismatches(steps, reference)
    assert compared, (f"the stack oracle compared no instruction of {fn.__qualname__}: "
                      "the translator stepped nothing CPython ran")
    assert not mismatches, ("the symbolic stack depth differs from CPython's (first "
                            "mismatches first):\n" + "\n".join(mismatches[:10]))
    return steps
