"""Resume functions: the rest of a frame, after a graph break (chapter 7).

When the tracer meets an instruction I that it cannot put in the graph (a graph
break), the code it generates for the frame

1. runs the graph captured so far,
2. runs I itself, natively, and
3. calls a *resume function* with everything the rest of the frame needs, and
   returns what that returns.

This module builds step 3's function from the original code object: the same
instructions, exception table and line numbers, minus what can no longer run,
behind a short prologue that rebuilds the frame's state and jumps to the
resume offset (the instruction after I):

    def minidynamo_resume_in_f_at_12(___stack0, ___stack1, x, y):
        PUSH_NULL                  # stack slot 0 held NULL
        LOAD_FAST ___stack0        # slots 1 and 2: the stacked values, bottom first
        LOAD_FAST ___stack1
        JUMP_FORWARD -> the resume offset
        ... the original instructions that can still run ...

How the caller describes the frame at the break, and what the prologue does:

* the value stack: `stack_depth` slots; the non-NULL ones are the arguments
  `___stack0 ...`, bottom first. A slot holding NULL (3.11 pushes one below a
  callable that is not a method) cannot be passed as a value, so the caller
  names it in `null_slots` and the prologue pushes it with PUSH_NULL;
* the live locals: arguments too, under their own names, so they arrive in their
  own slots with no instruction at all;
* cells and free variables are *shared*, not copied: the resume code's
  co_freevars are the original co_cellvars followed by its co_freevars, and the
  function is called with the frame's own cells as closure. A closure created
  before the break then still sees `x = 2` made after it;
* `with` blocks around the resume point: at the break the stack holds each
  block's bound `__exit__` (pushed by BEFORE_WITH). Pass it as an ordinary value
  and nothing is re-entered. Or put the context manager itself in that slot and
  name it in `with_blocks`: the prologue re-enters it with BEFORE_WITH (a second
  `__enter__`, the new `__exit__` back in the slot), and the original exception
  table entry of the block calls `__exit__` on the way out, as before;
* an `except` or `finally` body around the resume point: the exception being
  handled is re-installed with PUSH_EXC_INFO (found from the exception table;
  nothing to describe).

The same break point always gives the same code object (`ResumeCache`), and a
resume function that breaks again resumes *the original* code, so paths that
meet again share one resume function.

Compare with TorchDynamo: `ContinueExecutionCache.generate` and `ReenterWith` in
`torch/_dynamo/resume_execution.py` (Dynamo builds a fresh `with` handler in the
prologue and redirects the original entries to it; we reuse the original one),
`create_call_resume_at` and `create_resume` in `symbolic_convert.py` (what the
tracer hands over at a break).
"""

from __future__ import annotations

import inspect
import itertools
import weakref
from dataclasses import dataclass, field
from types import CellType, CodeType, FunctionType
from typing import Any, Callable, NamedTuple, Sequence

from minidynamo.bytecode import (
    Instruction,
    InstructionExceptionEntry,
    assemble,
    create_instruction,
    live_variables,
    scan,
    stack_depths,
)
from minidynamo.bytecode.analysis import instruction_indexes, successors

RESUME_PREFIX = "minidynamo_resume_in"   # co_name: minidynamo_resume_in_f_at_12
STACK_PREFIX = "___stack"                # arguments carrying the value stack
GLOBAL_PREFIX = "__resume_at"            # globals: __resume_at_<offset>_<n>

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

# The 3.11 compiler's handler shapes, recognised by their first instructions.
WITH_HANDLER = ("PUSH_EXC_INFO", "WITH_EXCEPT_START")   # calls __exit__(exc)
EXCEPTION_CLEANUP = ("COPY", "POP_EXCEPT")              # leaves an except/finally body


class ResumeError(ValueError):
    """A resume function cannot be made for this code at this point."""


@dataclass(frozen=True)
class WithBlock:
    """A `with` block around the resume point that the prologue re-enters.

    Attributes:
        stack_index: the value-stack slot where the frame keeps the block's bound
            `__exit__`. The caller passes the context manager object there instead;
            the prologue calls its `__enter__` again (the result is dropped: an
            `as` target was stored before the break) and puts `__exit__` back.
    """

    stack_index: int


@dataclass(frozen=True)
class ResumePoint:
    """Everything a resume function depends on besides the code: the cache key."""

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
# Where are we? Blocks around an instruction, from the exception table
# ---------------------------------------------------------------------------

def instruction_at(instructions: list[Instruction], offset: int) -> Instruction:
    """The instruction that starts at `offset`, or a ResumeError naming the near ones."""
    for instruction in instructions:
        if instruction.offset == offset:
            return instruction
    nearby = sorted((i.offset for i in instructions), key=lambda o: abs(o - offset))[:3]
    raise ResumeError(f"no instruction starts at offset {offset}; "
                      f"the nearest are at {sorted(nearby)}")


def _starts_with(instructions: list[Instruction], indexes: dict[int, int],
                 first: Instruction, opnames: tuple[str, ...]) -> bool:
    """Whether the instructions from `first` on begin with these opnames."""
    start = indexes[id(first)]
    found = [i.opname for i in instructions[start:start + len(opnames)]]
    return tuple(found) == opnames


def _entry_around(instruction: Instruction) -> InstructionExceptionEntry | None:
    """The exception-table entry of the block that contains `instruction`.

    A handler that begins with PUSH_EXC_INFO is protected by its own cleanup
    entry; seen from outside, the block around the whole statement is the one
    that protects that cleanup.
    """
    entry = instruction.exn_tab_entry
    if instruction.opname == "PUSH_EXC_INFO" and entry is not None:
        entry = entry.target.exn_tab_entry
    return entry


def enclosing_entries(target: Instruction) -> list[InstructionExceptionEntry]:
    """The exception-table entries of the blocks around `target`, innermost first.

    3.11 has no block stack: each instruction has one entry, its innermost
    handler. The next block out is the one protecting that handler's code, and
    so on, until an instruction no `try`, `with` or `except` protects.
    """
    chain: list[InstructionExceptionEntry] = []
    entry = _entry_around(target)
    while entry is not None and all(entry is not seen for seen in chain):
        chain.append(entry)
        entry = _entry_around(entry.target)
    return chain


def with_entries(instructions: list[Instruction],
                 target: Instruction) -> dict[int, InstructionExceptionEntry]:
    """`with` blocks around `target`: the slot of each one's `__exit__` -> its entry.

    A with-handler (PUSH_EXC_INFO, WITH_EXCEPT_START) keeps the stack up to and
    including `__exit__`, so `__exit__` lives in slot `depth - 1`.
    """
    indexes = instruction_indexes(instructions)
    return {entry.depth - 1: entry for entry in enclosing_entries(target)
            if _starts_with(instructions, indexes, entry.target, WITH_HANDLER)}


def exception_slots(instructions: list[Instruction], target: Instruction) -> list[int]:
    """Stack slots holding an exception being handled (`except`/`finally` bodies).

    Inside a handler body the stack holds the previously handled exception in
    slot `depth - 1` of the body's cleanup entry and the current one right above
    it, where PUSH_EXC_INFO put them; the cleanup (COPY 3, POP_EXCEPT, RERAISE)
    restores the previous one on the way out.
    """
    indexes = instruction_indexes(instructions)
    return [entry.depth for entry in enclosing_entries(target)
            if _starts_with(instructions, indexes, entry.target, EXCEPTION_CLEANUP)]


def with_blocks_at(code: CodeType, offset: int) -> tuple[WithBlock, ...]:
    """The `with` blocks whose body contains the instruction at `offset`, outermost first."""
    instructions = scan(code)
    target = instruction_at(instructions, offset)
    return tuple(WithBlock(slot) for slot in sorted(with_entries(instructions, target)))


def live_locals_at(code: CodeType, offset: int) -> list[str]:
    """The fast locals the code may still read from `offset` on, in co_varnames order.

    Cells and free variables are left out: they travel in the closure. A
    variable listed here may be unbound at run time (assigned on one path only);
    the caller passes only those that are bound, and the resume function raises
    UnboundLocalError where the original would.
    """
    code = getattr(code, "__code__", code)
    instructions = scan(code)
    live = live_variables(instructions, instruction_at(instructions, offset))
    shared = set(code.co_cellvars) | set(code.co_freevars)
    return [name for name in code.co_varnames if name in live and name not in shared]


# ---------------------------------------------------------------------------
# Checking a resume point
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
    """The resume offset must be after the frame's prologue and not split a call."""
    index = instruction_indexes(instructions)[id(target)]
    first_resume = next(
        (i for i, inst in enumerate(instructions) if inst.opname == "RESUME"), -1)
    if index <= first_resume:
        raise ResumeError(f"offset {target.offset} is inside the frame's own prologue "
                          "(MAKE_CELL, COPY_FREE_VARS, RESUME); resume after it")
    previous = instructions[index - 1].opname
    if previous in HIDDEN_STATE_BEFORE:
        raise ResumeError(f"offset {target.offset} ({target.opname}) follows {previous}, "
                          "which leaves hidden state for it; resume after the CALL")


def check_stack(instructions: list[Instruction], target: Instruction,
                point: ResumePoint) -> None:
    """The caller's stack must have the depth the bytecode has there."""
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
    clash = set(point.null_slots) & set(special["with"])
    if clash:
        raise ResumeError(f"slots {sorted(clash)} cannot be both NULL and a with-block")


def check_with_blocks(point: ResumePoint,
                      entries: dict[int, InstructionExceptionEntry]) -> None:
    """Every WithBlock must name the `__exit__` slot of a block around the point."""
    for block in point.with_blocks:
        if block.stack_index not in entries:
            raise ResumeError(
                f"no with-block around offset {point.offset} keeps its __exit__ in "
                f"stack slot {block.stack_index}; the blocks there use slots "
                f"{sorted(entries)}")


def check_live_locals(code: CodeType, point: ResumePoint) -> None:
    """Live locals are distinct fast locals of the code; cells come by closure."""
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
# Building the resume code
# ---------------------------------------------------------------------------

def _before_with(instructions: list[Instruction], handler: Instruction) -> Instruction:
    """The BEFORE_WITH whose block `handler` cleans up (its next instruction is protected by it)."""
    for before, after in zip(instructions, instructions[1:]):
        entry = after.exn_tab_entry
        if before.opname == "BEFORE_WITH" and entry is not None and entry.target is handler:
            return before
    raise ResumeError(f"cannot find the BEFORE_WITH of the with-block handled at "
                      f"offset {handler.offset}")


def reenter_with(stack_value: str, original: Instruction) -> list[Instruction]:
    """Re-enter a with-block whose context manager is in `stack_value`.

    BEFORE_WITH calls `__enter__` and leaves `__exit__` in the slot, then the
    result of `__enter__` is dropped. If `__enter__` raises, the exception goes
    where the original BEFORE_WITH's would, and a traceback shows its line.
    """
    enter = create_instruction("BEFORE_WITH")
    enter.positions = original.positions
    if original.exn_tab_entry is not None:
        protect = original.exn_tab_entry
        enter.exn_tab_entry = InstructionExceptionEntry(
            start=enter, end=enter, target=protect.target,
            depth=protect.depth, lasti=protect.lasti)
    return [create_instruction("LOAD_FAST", argval=stack_value), enter,
            create_instruction("POP_TOP")]


@dataclass
class Prologue:
    """What the prologue must rebuild, slot by slot, and the code it becomes."""

    point: ResumePoint
    freevar_count: int
    exception_slots: list[int]                 # slots of exceptions being handled
    reentries: dict[int, Instruction]          # with slot -> original BEFORE_WITH
    instructions: list[Instruction] = field(default_factory=list)

    def emit(self, *instructions: Instruction) -> None:
        self.instructions.extend(instructions)

    def push_slot(self, slot: int, value: str) -> None:
        """Push one non-NULL stack value back into its slot."""
        if slot + 1 in self.exception_slots:
            return    # the previous exception: PUSH_EXC_INFO of the slot above puts it
        if slot in self.reentries:
            self.emit(*reenter_with(value, self.reentries[slot]))
        else:
            self.emit(create_instruction("LOAD_FAST", argval=value))
        if slot in self.exception_slots:
            self.emit(create_instruction("PUSH_EXC_INFO"))

    def build(self, target: Instruction) -> list[Instruction]:
        """COPY_FREE_VARS, RESUME, the stack slot by slot, and a jump to `target`."""
        if self.freevar_count:
            self.emit(create_instruction("COPY_FREE_VARS", arg=self.freevar_count))
        self.emit(create_instruction("RESUME", arg=0))
        values = iter(self.point.stack_argument_names())
        for slot in range(self.point.stack_depth):
            if slot in self.point.null_slots:
                self.emit(create_instruction("PUSH_NULL"))
            else:
                self.push_slot(slot, next(values))
        self.emit(create_instruction("JUMP", target=target))
        return self.instructions


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


def make_resume_code(code: CodeType, resume_offset: int, stack_depth: int,
                     live_locals: Sequence[str], *, null_slots: Sequence[int] = (),
                     with_blocks: Sequence[WithBlock | int] = ()) -> CodeType:
    """A code object that continues `code` at `resume_offset` (see the module docstring).

    Its arguments are `___stack0 ...` (the non-NULL stack slots, bottom first)
    and then `live_locals`, in the given order; its closure must be the frame's
    cells (co_cellvars order) followed by the original closure (`resume_function`).
    A function is accepted for `code`, and so is a resume code made here: then
    the resume function is made from the original code at the matching offset.
    """
    code, resume_offset = original_location(getattr(code, "__code__", code), resume_offset)
    point = ResumePoint.make(resume_offset, stack_depth, live_locals,
                             null_slots=null_slots, with_blocks=with_blocks)
    return _generate(code, point)


def _generate(code: CodeType, point: ResumePoint) -> CodeType:
    """make_resume_code for a checked, original code object and a normalised point."""
    check_resumable(code)
    instructions = scan(code)
    target = instruction_at(instructions, point.offset)
    check_target(instructions, target)
    check_stack(instructions, target, point)
    check_live_locals(code, point)
    entries = with_entries(instructions, target)
    check_with_blocks(point, entries)
    reentries = {block.stack_index: _before_with(instructions, entries[block.stack_index].target)
                 for block in point.with_blocks}
    prologue = Prologue(point, len(code.co_cellvars) + len(code.co_freevars),
                        exception_slots(instructions, target), reentries).build(target)
    body = reachable(instructions, target)
    original_offsets = {id(instruction): instruction.offset for instruction in body}
    fields = resume_code_fields(code, point, resume_line(code, instructions, target))
    resume_code = assemble(prologue + body, code, **fields)
    _ORIGINS[resume_code] = ResumeOrigin(code, {
        instruction.offset: original_offsets[id(instruction)] for instruction in body})
    return resume_code


# ---------------------------------------------------------------------------
# Where a resume code came from, and the cache
# ---------------------------------------------------------------------------

class CodeKeyedDict:
    """A dict keyed by code objects *by identity*, forgetting a code when it dies.

    Code objects compare by value: two functions with equal bytecode in
    different files are equal, and must not share a resume function.
    """

    def __init__(self) -> None:
        self._items: dict[int, tuple[weakref.ref, Any]] = {}

    def _forget(self, key: int) -> Callable[[weakref.ref], None]:
        return lambda _ref: self._items.pop(key, None)

    def get(self, code: CodeType, default: Any = None) -> Any:
        item = self._items.get(id(code))
        return default if item is None or item[0]() is not code else item[1]

    def __setitem__(self, code: CodeType, value: Any) -> None:
        self._items[id(code)] = (weakref.ref(code, self._forget(id(code))), value)

    def __len__(self) -> int:
        return len(self._items)

    def clear(self) -> None:
        self._items.clear()


class ResumeOrigin(NamedTuple):
    """The original code of a resume code, and resume offset -> original offset."""

    code: CodeType
    offsets: dict[int, int]


_ORIGINS = CodeKeyedDict()


def resume_origin(code: CodeType) -> ResumeOrigin | None:
    """Where a resume code made here came from; None for any other code."""
    return _ORIGINS.get(code)


def original_location(code: CodeType, offset: int) -> tuple[CodeType, int]:
    """Map an offset in a resume code to the same instruction of the original code.

    The prologue rebuilds exactly the original stack, so at every original
    instruction kept in the resume code the frame looks as it would in the
    original: same depth, same blocks, same live variables.
    """
    origin = resume_origin(code)
    if origin is None:
        return code, offset
    if offset not in origin.offsets:
        raise ResumeError(f"offset {offset} of {code.co_name} is in its prologue; a "
                          "resume function can only be resumed in the original code")
    return origin.code, origin.offsets[offset]


class ResumeEntry(NamedTuple):
    """A cached resume code and the global name the caller installs it under."""

    code: CodeType
    name: str


_GLOBAL_NAME_NUMBERS = itertools.count()   # never reused, even after clear()


class ResumeCache:
    """The same break point always gets the same resume code object.

    Keyed by the original code (by identity) and the `ResumePoint`. Each entry
    also gets a global name `__resume_at_<offset>_<n>` for the caller to install
    the resume function under in the frame's globals.
    """

    def __init__(self) -> None:
        self._by_code = CodeKeyedDict()

    def lookup(self, code: CodeType, resume_offset: int, stack_depth: int,
               live_locals: Sequence[str], *, null_slots: Sequence[int] = (),
               with_blocks: Sequence[WithBlock | int] = ()) -> ResumeEntry:
        """The cached resume code for this point; made by `make_resume_code` once."""
        code, resume_offset = original_location(getattr(code, "__code__", code), resume_offset)
        point = ResumePoint.make(resume_offset, stack_depth, live_locals,
                                 null_slots=null_slots, with_blocks=with_blocks)
        entries = self._by_code.get(code)
        if entries is None:
            entries = self._by_code[code] = {}
        if point not in entries:
            name = f"{GLOBAL_PREFIX}_{resume_offset}_{next(_GLOBAL_NAME_NUMBERS)}"
            entries[point] = ResumeEntry(_generate(code, point), name)
        return entries[point]

    def __len__(self) -> int:
        return len(self._by_code)

    def clear(self) -> None:
        """Forget every resume code (`minidynamo.reset()` calls this)."""
        self._by_code.clear()


resume_cache = ResumeCache()


def resume_function(fn: FunctionType, resume_code: CodeType, *,
                    cells: Sequence[CellType] = ()) -> FunctionType:
    """A callable for `resume_code` with `fn`'s globals and closure.

    `cells` are the frame's cells for `fn.__code__.co_cellvars`, in that order
    (generated code loads them with LOAD_CLOSURE); the closure is `cells`
    followed by `fn.__closure__`. For a resume function `fn`, `cells` is empty.
    """
    closure = tuple(cells) + (fn.__closure__ or ())
    if len(closure) != len(resume_code.co_freevars):
        raise ResumeError(
            f"{resume_code.co_name} needs {len(resume_code.co_freevars)} cells "
            f"{resume_code.co_freevars}, got {len(closure)}: pass the frame's cells "
            "for co_cellvars, followed by the function's own closure")
    return FunctionType(resume_code, fn.__globals__, resume_code.co_name, None,
                        closure or None)
