"""Building a resume code object: checks, prologue, pruning, assembly (chapter 7).

`generate_resume_code(code, point)` turns the original code object and a
`ResumePoint` (what the frame looked like at the break) into a new code object:

    COPY_FREE_VARS n              the frame's cells and free variables arrive as closure
    RESUME 0
    <one step per stack slot>     PUSH_NULL | LOAD_FAST ___stackN
                                  (+ BEFORE_WITH, POP_TOP to re-enter a with-block)
                                  (+ PUSH_EXC_INFO, POP_TOP to re-handle an exception)
    JUMP_FORWARD -> resume offset
    <the original instructions still reachable from there>

The live locals need no instruction: they are arguments named like the
original locals, so they arrive in their own slots. Everything is checked
first, so that a wrong description is an error here rather than a crash or a
wrong answer later.

Compare with TorchDynamo: `ContinueExecutionCache.generate` in
`torch/_dynamo/resume_execution.py`, which builds the same prologue inside a
`transform_code_object` callback (and leaves the dead code in place).
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from types import CodeType
from typing import Any, Sequence

from minidynamo.bytecode import (
    Instruction,
    InstructionExceptionEntry,
    assemble,
    create_instruction,
    scan,
    stack_depths,
)
from minidynamo.bytecode.analysis import instruction_indexes, successors
from minidynamo.resume.blocks import Blocks, WithBlock, instruction_at, zero_argument_supers
from minidynamo.resume.origins import ResumeError

RESUME_PREFIX = "minidynamo_resume_in"   # co_name: minidynamo_resume_in_f_at_12
STACK_PREFIX = "___stack"                # the arguments that carry the value stack

NOT_RESUMABLE_FLAGS = {
    inspect.CO_GENERATOR: "a generator",
    inspect.CO_COROUTINE: "a coroutine",
    inspect.CO_ITERABLE_COROUTINE: "a generator-based coroutine",
    inspect.CO_ASYNC_GENERATOR: "an async generator",
}

# Opcodes that leave hidden interpreter state for the instruction after them, so
# a resume point may not sit right after one. KW_NAMES stores the keyword names
# of the next call; PRECALL leaves the call's arguments on the real stack,
# although `dis` (and `stack_depths`) count them as popped already.
HIDDEN_STATE_BEFORE = frozenset({"KW_NAMES", "PRECALL"})


@dataclass(frozen=True)
class ResumePoint:
    """Everything a resume code depends on besides the original code: the cache key.

    Attributes:
        offset: the first instruction the resume function runs.
        stack_depth: how many values the frame's stack holds before it.
        live_locals: the locals passed as arguments, after the stack values.
        null_slots: stack slots that hold NULL (not passed; re-pushed).
        with_blocks: `with` blocks re-entered by the prologue.
    """

    offset: int
    stack_depth: int
    live_locals: tuple[str, ...]
    null_slots: tuple[int, ...] = ()
    with_blocks: tuple[WithBlock, ...] = ()

    @classmethod
    def make(cls, offset: int, stack_depth: int, live_locals: Sequence[str], *,
             null_slots: Sequence[int] = (),
             with_blocks: Sequence[WithBlock | int] = ()) -> ResumePoint:
        """Normalise the arguments: tuples, sorted slots, ints as WithBlocks."""
        blocks = (block if isinstance(block, WithBlock) else WithBlock(block)
                  for block in with_blocks)
        return cls(offset, stack_depth, tuple(live_locals), tuple(sorted(null_slots)),
                   tuple(sorted(blocks, key=lambda block: block.stack_index)))

    def stack_argument_names(self) -> list[str]:
        """`___stack0 ...`: one argument per non-NULL stack slot, bottom first."""
        count = self.stack_depth - len(self.null_slots)
        return [f"{STACK_PREFIX}{index}" for index in range(count)]


# ---------------------------------------------------------------------------
# Checking the description of the frame
# ---------------------------------------------------------------------------

def check_resumable(code: CodeType) -> None:
    """Only plain function bodies can be resumed."""
    for flag, what in NOT_RESUMABLE_FLAGS.items():
        if code.co_flags & flag:
            raise ResumeError(
                f"{code.co_name} is {what}; resuming one after a graph break would "
                "need its suspended frame, which minidynamo does not support")
    if not code.co_flags & inspect.CO_OPTIMIZED:
        raise ResumeError(f"{code.co_name} is a module or class body, not a function")


def check_target(instructions: list[Instruction], target: Instruction) -> None:
    """The resume offset must be after the frame's own prologue and not split a call."""
    index = instruction_indexes(instructions)[id(target)]
    first_resume = next(
        (i for i, instruction in enumerate(instructions) if instruction.opname == "RESUME"), -1)
    if index <= first_resume:
        raise ResumeError(f"offset {target.offset} is inside the frame's own prologue "
                          "(MAKE_CELL, COPY_FREE_VARS, RESUME); resume after it")
    previous = instructions[index - 1].opname
    if previous in HIDDEN_STATE_BEFORE:
        raise ResumeError(f"offset {target.offset} ({target.opname}) follows {previous}, "
                          "which leaves hidden state for it; resume after the CALL")


def check_stack(instructions: list[Instruction], target: Instruction,
                point: ResumePoint) -> None:
    """The stack must have the depth the bytecode has there; special slots inside it."""
    depth = stack_depths(instructions)[instruction_indexes(instructions)[id(target)]]
    if depth is None:
        raise ResumeError(f"offset {target.offset} is unreachable in the original code")
    if depth != point.stack_depth:
        raise ResumeError(f"the stack holds {depth} values before offset {target.offset} "
                          f"({target.opname}), not {point.stack_depth}")
    special = {"NULL": point.null_slots,
               "with": [block.stack_index for block in point.with_blocks]}
    for kind, slots in special.items():
        if len(set(slots)) != len(slots) or any(not 0 <= s < depth for s in slots):
            raise ResumeError(f"{kind} slots {list(slots)} must be distinct and "
                              f"within the stack (0..{depth - 1})")


def check_special_slots(point: ResumePoint, with_entries: dict[int, Any],
                        exception_slots: list[int]) -> None:
    """WithBlocks name `with` blocks around the point; NULLs are not special slots."""
    for block in point.with_blocks:
        if block.stack_index not in with_entries:
            raise ResumeError(
                f"no with-block around offset {point.offset} keeps its __exit__ in "
                f"stack slot {block.stack_index}; the blocks there use slots "
                f"{sorted(with_entries)}")
    clash = set(point.null_slots) & (set(with_entries) | set(exception_slots))
    if clash:
        raise ResumeError(f"stack slots {sorted(clash)} hold a with-block's __exit__ "
                          "or a saved exception, never NULL")


def check_live_locals(code: CodeType, point: ResumePoint) -> None:
    """Live locals are distinct fast locals of the code; cells come in the closure."""
    names = point.live_locals
    if len(set(names)) != len(names):
        raise ResumeError(f"live locals {list(names)} contain duplicates")
    for name in names:
        if name in code.co_cellvars or name in code.co_freevars:
            raise ResumeError(f"{name!r} is a cell or free variable: it is shared "
                              "through the closure, not passed as an argument")
        if name not in code.co_varnames:
            raise ResumeError(f"{name!r} is not a local variable of {code.co_name}")
    for name in code.co_varnames:
        if name.startswith(STACK_PREFIX):
            raise ResumeError(f"{code.co_name} has a local named {name!r}, which "
                              "clashes with the resume function's stack arguments")


# ---------------------------------------------------------------------------
# The prologue
# ---------------------------------------------------------------------------

def reenter_with(stack_value: str, original: Instruction) -> list[Instruction]:
    """Re-enter a with-block whose context manager is in `stack_value`.

    BEFORE_WITH calls `__enter__` and leaves `__exit__` in the slot; the
    result of `__enter__` is dropped. If `__enter__` raises, the exception goes
    where the original BEFORE_WITH's would, and a traceback shows its line.
    """
    enter = create_instruction("BEFORE_WITH")
    enter.positions = original.positions
    protect = original.exn_tab_entry
    if protect is not None:
        enter.exn_tab_entry = InstructionExceptionEntry(
            start=enter, end=enter, target=protect.target,
            depth=protect.depth, lasti=protect.lasti)
    return [create_instruction("LOAD_FAST", argval=stack_value), enter,
            create_instruction("POP_TOP")]


def rehandle_exception(stack_value: str) -> list[Instruction]:
    """Make the exception in `stack_value` the one being handled again.

    PUSH_EXC_INFO saves the caller's handled exception in the slot (POP_EXCEPT
    restores it when the body ends) and pushes the exception back on top;
    POP_TOP drops that copy.
    """
    return [create_instruction("LOAD_FAST", argval=stack_value),
            create_instruction("PUSH_EXC_INFO"), create_instruction("POP_TOP")]


@dataclass
class Prologue:
    """The code that rebuilds the frame's value stack, slot by slot, then jumps."""

    point: ResumePoint
    freevar_count: int
    exception_slots: list[int]               # where a saved exception goes
    reentries: dict[int, Instruction]        # with-block slot -> its BEFORE_WITH

    def push_slot(self, slot: int, value: str) -> list[Instruction]:
        """The instructions that put one non-NULL value back into its slot."""
        if slot in self.reentries:
            return reenter_with(value, self.reentries[slot])
        if slot in self.exception_slots:
            return rehandle_exception(value)
        return [create_instruction("LOAD_FAST", argval=value)]

    def build(self, target: Instruction) -> list[Instruction]:
        """COPY_FREE_VARS, RESUME, the stack bottom first, and a jump to `target`."""
        code: list[Instruction] = []
        if self.freevar_count:
            code.append(create_instruction("COPY_FREE_VARS", arg=self.freevar_count))
        code.append(create_instruction("RESUME", arg=0))
        values = iter(self.point.stack_argument_names())
        for slot in range(self.point.stack_depth):
            if slot in self.point.null_slots:
                code.append(create_instruction("PUSH_NULL"))
            else:
                code += self.push_slot(slot, next(values))
        code.append(create_instruction("JUMP", target=target))
        return code


# ---------------------------------------------------------------------------
# The rest of the code object
# ---------------------------------------------------------------------------

def reachable(instructions: list[Instruction], start: Instruction) -> list[Instruction]:
    """The instructions control can reach from `start` (jumps and handlers followed), in order."""
    indexes = instruction_indexes(instructions)
    seen = {indexes[id(start)]}
    worklist = [indexes[id(start)]]
    while worklist:
        for following in successors(instructions, worklist.pop(), indexes):
            if following not in seen:
                seen.add(following)
                worklist.append(following)
    return [instruction for index, instruction in enumerate(instructions) if index in seen]


def explicit_super(code: CodeType, body: list[Instruction]) -> list[Instruction]:
    """`body` with each `super()` of a method made `super(__class__, <first local>)`
    (`blocks.zero_argument_supers`): in the resume code the first local is not the
    method's `self` or `cls`. The instructions are this generation's own (a fresh scan)."""
    calls = {id(load) for load in zero_argument_supers(code, body)}
    if not calls:
        return body
    first = code.co_varnames[0]
    read_first = "LOAD_DEREF" if first in code.co_cellvars else "LOAD_FAST"
    rewritten: list[Instruction] = []
    for index, instruction in enumerate(body):
        rewritten.append(instruction)
        if id(instruction) in calls:
            added = [create_instruction("LOAD_DEREF", argval="__class__"),
                     create_instruction(read_first, argval=first)]
            for new in added:
                new.exn_tab_entry = instruction.exn_tab_entry
                new.positions = instruction.positions
            rewritten += added
            precall, call = body[index + 1], body[index + 2]
            precall.arg = precall.argval = call.arg = call.argval = 2
    return rewritten


def resume_line(code: CodeType, instructions: list[Instruction], target: Instruction) -> int:
    """The source line of `target` (or of the closest instruction before it that has one)."""
    index = instruction_indexes(instructions)[id(target)]
    for instruction in reversed(instructions[:index + 1]):
        if instruction.positions is not None and instruction.positions.lineno is not None:
            return instruction.positions.lineno
    return code.co_firstlineno


def resume_code_fields(code: CodeType, point: ResumePoint, line: int) -> dict[str, Any]:
    """The code-object fields of the resume function (the rest comes from `code`).

    Arguments: the stack values, then the live locals; then the other locals.
    The original cells become free variables, before the original free ones.
    """
    arguments = point.stack_argument_names() + list(point.live_locals)
    others = [name for name in code.co_varnames
              if name not in arguments and name not in code.co_cellvars]
    freevars = code.co_cellvars + code.co_freevars
    flags = code.co_flags & ~(inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)
    if freevars:
        flags &= ~inspect.CO_NOFREE
    name = f"{RESUME_PREFIX}_{code.co_name}_at_{line}"
    scope, _, _ = code.co_qualname.rpartition(".")
    return dict(
        co_name=name, co_qualname=f"{scope}.{name}" if scope else name,
        co_firstlineno=line, co_flags=flags,
        co_argcount=len(arguments), co_posonlyargcount=0, co_kwonlyargcount=0,
        co_varnames=tuple(arguments + others), co_cellvars=(), co_freevars=freevars,
    )


def build_prologue(code: CodeType, blocks: Blocks, target: Instruction,
                   point: ResumePoint) -> list[Instruction]:
    """Check the special slots around `target` and build the prologue for them."""
    # the blocks around `target`; at a block's normal exit, the block just left
    with_entries = {**blocks.finished_with_entries(target), **blocks.with_entries(target)}
    exception_slots = blocks.exception_slots(target)
    check_special_slots(point, with_entries, exception_slots)
    reentries = {block.stack_index: blocks.before_with(with_entries[block.stack_index].target)
                 for block in point.with_blocks}
    freevar_count = len(code.co_cellvars) + len(code.co_freevars)
    return Prologue(point, freevar_count, exception_slots, reentries).build(target)


def generate_resume_code(code: CodeType, point: ResumePoint) -> tuple[CodeType, dict[int, int]]:
    """The resume code for `point`, and its offsets -> the original offsets they came from."""
    check_resumable(code)
    instructions = scan(code)
    target = instruction_at(instructions, point.offset)
    check_target(instructions, target)
    check_stack(instructions, target, point)
    check_live_locals(code, point)
    prologue = build_prologue(code, Blocks(instructions), target, point)
    body = explicit_super(code, reachable(instructions, target))
    original_offsets = [instruction.offset for instruction in body]
    fields = resume_code_fields(code, point, resume_line(code, instructions, target))
    resume_code = assemble(prologue + body, code, **fields)
    return resume_code, {instruction.offset: original
                         for instruction, original in zip(body, original_offsets)}
