"""InstructionTranslator: the translator of the frame being compiled (chapter 2).

It differs from the base in where it starts and how it ends:

- it starts from the frame's actual arguments, each wrapped *lazily*
  (`LazyVariableTracker` with source `L['name']`), and its free variables'
  cells from the function's real closure;
- its RETURN_VALUE finishes the frame: the OutputGraph compiles the graph and
  writes the instructions of the transformed code (`output_instructions`);
- it survives graph breaks (chapters 6-7, `breaks.py`): a break stops the
  trace with a partial graph and a call of a resume function, or, where no
  resume function is possible, at the last statement boundary with a partial
  graph and the frame's own bytecode after it. `break_points` are the breaks
  found by an earlier pass of the same frame (offset -> break).

Compare with TorchDynamo: `InstructionTranslator` and its `RETURN_VALUE` /
`_return` in `torch/_dynamo/symbolic_convert.py`.
"""

from __future__ import annotations

import types
from typing import TYPE_CHECKING, Any

from minidynamo.bytecode import Instruction
from minidynamo.exc import (
    BREAK_AT_A_STATEMENT_BOUNDARY,
    EXCEPTION_IN_TRACED_CODE,
    ObservedException,
    Unsupported,
    graph_break,
)
from minidynamo.sources import LocalCellSource, LocalSource
from minidynamo.translator.base import InstructionTranslatorBase, instructions_of
from minidynamo.translator.breaks import GraphBreakMixin
from minidynamo.variables import CellVariable, VariableTracker, new_object_id
from minidynamo.variables.lazy import LazyVariableTracker

if TYPE_CHECKING:
    from minidynamo.output_graph import OutputGraph


class InstructionTranslator(GraphBreakMixin, InstructionTranslatorBase):
    """Traces the compiled frame from its arguments to its RETURN_VALUE."""

    def __init__(
        self,
        code: types.CodeType,
        f_locals: dict[str, Any],
        f_globals: dict[str, Any],
        closure: tuple[types.CellType, ...] | None,
        output: OutputGraph,
        *,
        break_points: dict[int, Unsupported] | None = None,
        one_graph: bool = False,
    ) -> None:
        symbolic_locals: dict[str, VariableTracker] = {
            name: LazyVariableTracker(value, output, source=self.local_source(code, name))
            for name, value in f_locals.items()
        }
        cells = {
            name: self.free_variable_cell(output, name, cell)
            for name, cell in zip(code.co_freevars, closure or ())
        }
        super().__init__(output, code, instructions_of(code), symbolic_locals, f_globals, cells)
        self.output_instructions: list[Instruction] = []
        self.break_points = dict(break_points or {})
        self.one_graph = one_graph  # fullgraph=True: every break is an error
        self.checkpoint: Instruction | None = None  # the last statement boundary (breaks.py)

    @staticmethod
    def local_source(code: types.CodeType, name: str) -> LocalSource:
        """`L['name']`; an argument that an inner function captures is read with LOAD_DEREF."""
        return LocalSource(name, is_cell=name in code.co_cellvars)

    @staticmethod
    def free_variable_cell(output: OutputGraph, name: str, cell: types.CellType) -> VariableTracker:
        """The cell of a free variable; its contents are read lazily with LOAD_DEREF."""
        try:
            contents = cell.cell_contents
        except ValueError:  # an empty cell
            tracker = None
        else:
            tracker = LazyVariableTracker(contents, output, source=LocalSource(name, is_cell=True))
        variable = CellVariable(tracker, source=LocalCellSource(name), object_id=new_object_id())
        return output.side_effects.track_existing(cell, variable)

    def step(self) -> bool:
        """Run one instruction, or break before it if an earlier pass said so (chapter 7)."""
        inst = self.instructions[self.instruction_pointer]
        planned = self.break_points.pop(inst.offset, None)
        if planned is not None:
            self.current_instruction = inst
            if planned.kind is BREAK_AT_A_STATEMENT_BOUNDARY:
                self.continue_natively(inst, planned)
            else:
                self.break_at_instruction(inst, planned)
            return False
        self.note_checkpoint(inst)
        try:
            return super().step() and not self.output_instructions
        except Unsupported as error:
            try:
                self.restart_at(inst, error)
            except Unsupported as refused:  # no resume function here: the last checkpoint?
                self.restart_at_checkpoint(refused)
            raise

    def run(self) -> None:
        """Run the frame; an exception that no handler of the frame catches is a graph
        break (MD0013): the frame runs eagerly and raises the real exception (chapter 8)."""
        try:
            super().run()
        except ObservedException as raised:
            try:
                graph_break(EXCEPTION_IN_TRACED_CODE,
                            f"{raised} is raised and not caught in {self.code.co_name}")
            except Unsupported as error:
                error.add_user_frame(self.user_frame())
                raise error from None

    def RETURN_VALUE(self, inst: Instruction) -> None:
        self.return_value = self.pop()
        if self.output.suspended_generators:  # the frame's locals go: so may its generators
            self.close_dropped_generators(ending=self)
        self.output_instructions = self.output.compile_subgraph(self, self.return_value)
