"""Brute-force oracles built from `dis` alone, independent of minidynamo's analysis.

`live_by_search(code, offset)`: a variable is live before an instruction if some
path of the control-flow graph from there reads it before writing it. Here that is
decided by the definition itself: one depth-first search per variable over the graph
that `dis.get_instructions` and the raw exception table give, stopping a path at a
write. (The package computes all variables at once with a backward fixed point.)

`with_body_nesting(fn)`: for each source line of a simple statement, how many `with`
bodies and `except` bodies enclose it, read off the function's AST.
"""

from __future__ import annotations

import ast
import dis
import inspect
import textwrap
from types import CodeType

# What CPython 3.11's instructions do to a variable slot, by name.
READS = {"LOAD_FAST", "LOAD_DEREF", "LOAD_CLASSDEREF", "LOAD_CLOSURE",
         "MAKE_CELL",                 # wraps the slot's current value (an argument) in a cell
         "DELETE_FAST", "DELETE_DEREF"}   # fail on an unbound variable: a read
WRITES = {"STORE_FAST", "STORE_DEREF", "DELETE_FAST", "DELETE_DEREF"}
NO_FALL_THROUGH = {"RETURN_VALUE", "RAISE_VARARGS", "RERAISE", "JUMP_FORWARD",
                   "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT"}
JUMPS = set(dis.hasjrel) | set(dis.hasjabs)


class FlowGraph:
    """The control-flow graph of a code object, by offset."""

    def __init__(self, code: CodeType):
        self.instructions = {i.offset: i for i in dis.get_instructions(code)}
        offsets = sorted(self.instructions)
        handlers = {}
        for entry in dis._parse_exception_table(code):   # (start, end exclusive, target, ...)
            for offset in offsets:
                if entry.start <= offset < entry.end:
                    handlers[offset] = entry.target
        self.successors = {}
        for position, offset in enumerate(offsets):
            instruction = self.instructions[offset]
            following = []
            if instruction.opname not in NO_FALL_THROUGH and position + 1 < len(offsets):
                following.append(offsets[position + 1])
            if instruction.opcode in JUMPS:
                following.append(instruction.argval)
            if offset in handlers:
                following.append(handlers[offset])
            self.successors[offset] = following

    def variables(self) -> set[str]:
        return {i.argval for i in self.instructions.values() if i.opname in READS | WRITES}

    def read_before_written(self, start: int, name: str) -> bool:
        seen, todo = set(), [start]
        while todo:
            offset = todo.pop()
            if offset in seen:
                continue
            seen.add(offset)
            instruction = self.instructions[offset]
            if instruction.argval == name and instruction.opname in READS:
                return True
            if instruction.argval == name and instruction.opname in WRITES:
                continue
            todo.extend(self.successors[offset])
        return False

    def live_at(self, offset: int) -> set[str]:
        return {name for name in self.variables() if self.read_before_written(offset, name)}


def live_by_search(code: CodeType, offset: int) -> set[str]:
    return FlowGraph(code).live_at(offset)


def statement_lines(code: CodeType) -> dict[int, int | None]:
    """offset -> source line, as `dis` reports the instruction's position.

    An `except` body ends with POP_EXCEPT (and, for `except E as name`, the code that
    deletes `name`) at the line of its last statement: the body has been left there,
    so those instructions are reported with no line.
    """
    lines, leaving = {}, None
    for instruction in dis.get_instructions(code):
        line = instruction.positions.lineno
        if instruction.opname == "POP_EXCEPT":
            leaving = line
        elif line != leaving:
            leaving = None
        lines[instruction.offset] = None if line == leaving else line
    return lines


def with_body_nesting(fn) -> dict[int, tuple[int, int]]:
    """line of a simple statement -> (enclosing with bodies, enclosing except bodies).

    Statements inside a `finally` body are left out: the compiler copies a finally
    body onto the normal path too, where no exception is being handled.
    """
    source = textwrap.dedent(inspect.getsource(fn))
    tree = ast.parse(source)
    first = fn.__code__.co_firstlineno - 1
    nesting: dict[int, tuple[int, int]] = {}

    def visit(statements, withs, handlers):
        for statement in statements:
            if isinstance(statement, ast.With):
                visit(statement.body, withs + 1, handlers)
            elif isinstance(statement, ast.Try):
                visit(statement.body, withs, handlers)
                visit(statement.orelse, withs, handlers)
                for handler in statement.handlers:
                    visit(handler.body, withs, handlers + 1)
            elif isinstance(statement, (ast.For, ast.While, ast.If)):
                visit(statement.body, withs, handlers)
                visit(statement.orelse, withs, handlers)
            elif isinstance(statement, (ast.Expr, ast.Assign, ast.AugAssign)):
                nesting[statement.lineno + first] = (withs, handlers)

    visit(tree.body[0].body, 0, 0)
    return nesting
