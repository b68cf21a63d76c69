"""Where a resume point is: the blocks around an instruction (chapter 7).

3.11 has no block stack at run time. A `try`, `with` or `except` body is just a
range of instructions that share an exception-table entry, and nesting is
implicit: the next block out is the one that protects the inner block's
handler code. Walking that chain outward from an instruction recovers the
blocks around it, and two kinds matter to a resume function because they keep
something on the value stack that a new frame cannot get back by itself:

* a `with` body: BEFORE_WITH left the block's bound `__exit__` in a stack slot;
  the handler (PUSH_EXC_INFO, WITH_EXCEPT_START, ...) keeps the stack up to and
  including that slot, so it is slot `depth - 1` of the entry;
* an `except` or `finally` body: PUSH_EXC_INFO saved the exception handled
  before on the stack and made the new one current (`sys.exc_info()`, thread
  state that a new frame does not inherit). The body's cleanup entry (COPY 3,
  POP_EXCEPT, RERAISE 1) keeps the stack up to the saved one: slot `depth - 1`.

Also here: `live_locals_at`, the variables a resume function must receive.

Compare with TorchDynamo: the 3.11 `block_stack` that `InstructionTranslator`
rebuilds while tracing (`BlockStackEntry`, `SETUP_WITH`, `PUSH_EXC_INFO`
handlers in `symbolic_convert.py`); Dynamo knows the blocks because it traced
every instruction up to the break, we read them off the exception table.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import CodeType

from minidynamo.bytecode import (
    Instruction,
    InstructionExceptionEntry,
    live_variables,
    opcodes,
    scan,
)
from minidynamo.bytecode.analysis import instruction_indexes
from minidynamo.resume.origins import ResumeError, original_location

# The 3.11 compiler's handler shapes, recognised by their first instructions.
WITH_HANDLER = ("PUSH_EXC_INFO", "WITH_EXCEPT_START")   # calls __exit__(exc)
EXCEPTION_CLEANUP = ("COPY", "POP_EXCEPT")              # leaves an except/finally body
NORMAL_EXIT = (("LOAD_CONST", None),) * 3 + (("PRECALL", 2), ("CALL", 2))  # __exit__(None x3)

# Instructions that cannot raise, which the compiler leaves out of the
# exception table even inside a block: a NOP marking a line, a plain jump.
CANNOT_RAISE = frozenset({"NOP"}) | opcodes.UNCONDITIONAL_JUMPS


@dataclass(frozen=True)
class WithBlock:
    """A `with` block around a resume point, which the prologue re-enters.

    Attributes:
        stack_index: the value-stack slot where the frame keeps the block's bound
            `__exit__`. The caller passes the context manager object there
            instead; the prologue calls its `__enter__` again (the result is
            dropped: an `as` target was stored before the break) and puts the
            new `__exit__` back in the slot.
    """

    stack_index: int


def instruction_at(instructions: list[Instruction], offset: int) -> Instruction:
    """The instruction that starts at `offset`, or a ResumeError naming the near ones."""
    for instruction in instructions:
        if instruction.offset == offset:
            return instruction
    nearby = sorted((i.offset for i in instructions), key=lambda o: abs(o - offset))[:3]
    raise ResumeError(f"no instruction starts at offset {offset}; "
                      f"the nearest are at {sorted(nearby)}")


class Blocks:
    """The `try`, `with` and `except` blocks around instructions of one code object."""

    def __init__(self, instructions: list[Instruction]):
        self.instructions = instructions
        self.indexes = instruction_indexes(instructions)

    def starts_with(self, first: Instruction, opnames: tuple[str, ...]) -> bool:
        """Whether the instructions from `first` on begin with these opnames."""
        start = self.indexes[id(first)]
        found = self.instructions[start:start + len(opnames)]
        return tuple(instruction.opname for instruction in found) == opnames

    def protecting_entry(self, instruction: Instruction) -> InstructionExceptionEntry | None:
        """The entry that catches what `instruction` raises.

        For an instruction that cannot raise and has no entry of its own, the
        block is the one of wherever control goes next.
        """
        visited = set()
        while (instruction.exn_tab_entry is None and instruction.opname in CANNOT_RAISE
               and id(instruction) not in visited):
            visited.add(id(instruction))
            following = self.indexes[id(instruction)] + 1
            if instruction.target is not None:
                instruction = instruction.target
            elif following < len(self.instructions):
                instruction = self.instructions[following]
        return instruction.exn_tab_entry

    def entry_around(self, instruction: Instruction) -> InstructionExceptionEntry | None:
        """The entry of the innermost block that contains `instruction`.

        A handler that begins with PUSH_EXC_INFO is protected by its own cleanup
        entry; seen from outside, the block around the whole statement is the
        one that protects that cleanup.
        """
        entry = self.protecting_entry(instruction)
        if instruction.opname == "PUSH_EXC_INFO" and entry is not None:
            entry = self.protecting_entry(entry.target)
        return entry

    def enclosing(self, target: Instruction) -> list[InstructionExceptionEntry]:
        """The entries of the blocks around `target`, innermost first."""
        chain: list[InstructionExceptionEntry] = []
        entry = self.entry_around(target)
        while entry is not None and all(entry is not seen for seen in chain):
            chain.append(entry)
            entry = self.entry_around(entry.target)
        return chain

    def with_entries(self, target: Instruction) -> dict[int, InstructionExceptionEntry]:
        """`with` blocks around `target`: the slot of each one's `__exit__` -> its entry."""
        return {entry.depth - 1: entry for entry in self.enclosing(target)
                if self.starts_with(entry.target, WITH_HANDLER)}

    def finished_with_entries(self, target: Instruction) -> dict[int, InstructionExceptionEntry]:
        """The `with` block that `target` leaves on the normal path: slot -> its entry.

        `target` is the start of a block's normal exit (`__exit__(None, None, None)`,
        e.g. the jump target of an `if` at the end of the body): outside the
        body's exception-table range, yet the block's `__exit__` is still on the
        stack. The block is the nearest one opened before `target`."""
        start = self.indexes[id(target)]
        while self.instructions[start].opname == "NOP":
            start += 1
        exit_call = self.instructions[start:start + len(NORMAL_EXIT)]
        if [(each.opname, each.argval) for each in exit_call] != list(NORMAL_EXIT):
            return {}
        for index in range(start - 1, 0, -1):  # back from the exit, to the nearest opening
            before, entry = self.instructions[index - 1], self.instructions[index].exn_tab_entry
            if (before.opname == "BEFORE_WITH" and entry is not None
                    and self.starts_with(entry.target, WITH_HANDLER)):
                return {entry.depth - 1: entry}
        return {}

    def exception_slots(self, target: Instruction) -> list[int]:
        """Slots where the `except`/`finally` bodies around `target` saved an exception."""
        return sorted(entry.depth - 1 for entry in self.enclosing(target)
                      if self.starts_with(entry.target, EXCEPTION_CLEANUP))

    def before_with(self, handler: Instruction) -> Instruction:
        """The BEFORE_WITH of the block whose handler is `handler`.

        It is the one whose next instruction, the first of the body, that
        handler protects.
        """
        for before, after in zip(self.instructions, self.instructions[1:]):
            entry = after.exn_tab_entry
            if before.opname == "BEFORE_WITH" and entry is not None \
                    and entry.target is handler:
                return before
        raise ResumeError(f"cannot find the BEFORE_WITH of the with-block handled "
                          f"at offset {handler.offset}")


def _blocks_and_target(code: CodeType, offset: int) -> tuple[Blocks, Instruction]:
    """The blocks of the original code, and the instruction at `offset` there."""
    code, offset = original_location(code, offset)
    instructions = scan(code)
    return Blocks(instructions), instruction_at(instructions, offset)


def with_blocks_at(code: CodeType, offset: int) -> tuple[WithBlock, ...]:
    """The `with` blocks whose body contains the instruction at `offset`, outermost first."""
    blocks, target = _blocks_and_target(code, offset)
    return tuple(WithBlock(slot) for slot in sorted(blocks.with_entries(target)))


def exception_slots_at(code: CodeType, offset: int) -> tuple[int, ...]:
    """Stack slots where `except`/`finally` bodies around `offset` saved an exception.

    The caller of a resume function passes, in each of these slots, the
    exception *being handled* by that body instead of the saved one: the
    prologue makes it current again with PUSH_EXC_INFO, which saves the
    caller's own. (For nested handlers, the one being handled by an outer body
    is the one the inner body saved.)
    """
    blocks, target = _blocks_and_target(code, offset)
    return tuple(blocks.exception_slots(target))


def live_locals_at(code: CodeType, offset: int) -> list[str]:
    """The fast locals the code may still read from `offset` on, in co_varnames order.

    Cells and free variables are left out: they travel in the closure. A
    variable listed here may be unbound at run time (assigned on one path
    only); the caller passes only the bound ones, and the resume function
    raises UnboundLocalError where the original would. Like the other `..._at`
    queries, a resume code is answered for the original code, so the same
    break point always gets the same names in the same order.
    """
    code, offset = original_location(code, offset)
    instructions = scan(code)
    live = live_variables(instructions, instruction_at(instructions, offset))
    if zero_argument_supers(code, instructions):  # `super()` reads the first local itself
        live.add(code.co_varnames[0])
    shared = set(code.co_cellvars) | set(code.co_freevars)
    return [name for name in code.co_varnames if name in live and name not in shared]


def zero_argument_supers(code: CodeType, instructions: list[Instruction]) -> list[Instruction]:
    """The `LOAD_GLOBAL super` of each `super()` called without arguments, in a method
    (a code with the `__class__` cell). CPython answers it from the frame: `__class__`
    and the frame's *first* local, which in a resume function is a stack value; so the
    resume code calls `super(__class__, self)` instead (`generate.explicit_super`), and
    `self` is live wherever such a call may follow."""
    if "__class__" not in code.co_freevars or not code.co_varnames:
        return []
    return [instruction for instruction, following in zip(instructions, instructions[1:])
            if instruction.opname == "LOAD_GLOBAL" and instruction.argval == "super"
            and following.opname == "PRECALL" and following.arg == 0]
