"""Graph breaks in the compiled frame: a partial graph, the instruction, a resume call (chapters 6-7).

Only the root translator (the frame being compiled) can survive a graph
break. At a break on instruction I it stops tracing and writes the rest of
the transformed frame:

    ___graph_out = __compiled_fn_1(...)   the partial graph, stack values among its outputs
    <side effects recorded so far>        replayed once, before I runs
    ___stack_N = ..., ___live_x = ...     the frame's state, kept in temporaries
    <I's operands> I                      I itself, natively (a CALL, or the jump)
    return __resume_at_K(___stack_0, ..., result, x, ...)

A jump on a tensor (`break_on_jump`) has two continuations: the real jump on
the real tensor chooses between two resume calls, one per branch target.

A call that fails (print, `.item()`, a break inside an inlined helper) is found
*during* the trace, after the callee's tracing may already have changed the
translator's state. So the root translator restarts the trace from scratch,
knowing where to stop (`RestartAnalysis`, TorchDynamo's speculation log); on
the second pass it breaks *before* running that instruction. A user function
called natively there runs through minidynamo's own wrapper (`frame_compiler`),
so it is compiled as a frame of its own, as PEP 523 makes TorchDynamo do.

Where no resume function can follow a break (an instruction that cannot be
split off, such as the jump of an `if` whose traced `__bool__` breaks, or a
break inside a `try`), the frame falls back to its last *statement boundary*:
an instruction before which the value stack was empty, outside every block,
once the graph has two operations. The trace restarts and stops there; the
generated code runs the partial graph, stores the live locals back, and jumps
into the frame's own bytecode, which runs natively to the end (TorchDynamo's
`speculate` / `step_graph_break`, reason "step_unsupported").

Inside `with torch.no_grad()` (and the other grad-mode blocks) the frame
survives too: the partial graph leaves the blocks before it ends, the breaking
instruction runs inside fresh copies of them, and the resume function enters
them again (`with_blocks.py`, chapters 7-8). Other places cannot be resumed:
inside a `try`/`except` block or another `with` (the resume function would need
the block's state) the frame falls back to its last statement boundary when it has
one, and otherwise runs eagerly, as in torch.compile; in a loop (the resume
function would run once per iteration) or with `fullgraph=True` it never resumes.

Compare with TorchDynamo: `break_graph_if_unsupported`, `generic_jump`'s
`jump_graph_break`, `create_call_resume_at`, `should_compile_partial_graph`,
`maybe_has_backedge`, `speculate`, `step_graph_break` in `torch/_dynamo/symbolic_convert.py`;
`OutputGraph.compile_subgraph` in `output_graph.py`.
"""

from __future__ import annotations

import functools
import itertools
import types

import torch
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from minidynamo.bytecode import Instruction, create_instruction, opcodes, scan, stack_depths
from minidynamo.bytecode.opcodes import jump_variant
from minidynamo.codegen import PyCodegen
from minidynamo.exc import (
    BREAK_AT_A_STATEMENT_BOUNDARY,
    GENERATOR_CLOSED_BY_ITS_LAST_REFERENCE,
    GENERATOR_SUSPENDED_AT_A_BREAK,
    GRAPH_BREAK_IN_LOOP,
    INLINING_TOO_DEEP,
    KEYS_CHANGED_DURING_ITERATION,
    UNSUPPORTED_PYTHON_FEATURE,
    Unsupported,
    graph_break,
    without_frames,
)
from minidynamo.resume import ResumeError, live_locals_at, original_location, resume_cache
from minidynamo.resume.blocks import WITH_HANDLER, Blocks
from minidynamo.translator.with_blocks import exit_blocks, run_inside_blocks
from minidynamo.variables import CellVariable, NullVariable, VariableTracker
from minidynamo.variables.ctx_manager import WithExitFunctionVariable
from minidynamo.variables.functions import BaseUserFunctionVariable

if TYPE_CHECKING:
    from minidynamo.output_graph import OutputGraph
    from minidynamo.translator.root import InstructionTranslator

# Instructions a break may stop at (TorchDynamo's `break_graph_if_unsupported`):
# opname -> (stack slots the instruction consumes, values it pushes).
BREAK_AT_OPCODES: dict[str, Callable[[Instruction], tuple[int, int]]] = {
    "CALL": lambda inst: (inst.arg + 2, 1),
    "CALL_FUNCTION_EX": lambda inst: (3 + (inst.arg & 1), 1),
    "BINARY_SUBSCR": lambda inst: (2, 1),
    "STORE_SUBSCR": lambda inst: (3, 0),
    "STORE_ATTR": lambda inst: (2, 0),
}

# The jumps that keep their condition when they jump, and the popping jump that decides alike.
POPPING_JUMPS = {"JUMP_IF_TRUE_OR_POP": "POP_JUMP_IF_TRUE",
                 "JUMP_IF_FALSE_OR_POP": "POP_JUMP_IF_FALSE"}

# Kinds of break that give up on the whole frame wherever they happen.
WHOLE_FRAME_KINDS = frozenset({INLINING_TOO_DEEP, GRAPH_BREAK_IN_LOOP,
                               KEYS_CHANGED_DURING_ITERATION,
                               GENERATOR_CLOSED_BY_ITS_LAST_REFERENCE,
                               GENERATOR_SUSPENDED_AT_A_BREAK})



class RestartAnalysis(Exception):
    """Trace the frame again and break before the instruction at `offset`."""

    def __init__(self, offset: int, error: Unsupported) -> None:
        super().__init__(f"restart: break at offset {offset}")
        self.offset = offset
        self.error = error


class RequiresGradRestart(RestartAnalysis):
    """Trace the frame again, breaking at every `requires_grad_()` of a tensor made in
    the graph (`OutputGraph.check_requires_grad` found one returned)."""

    def __init__(self, error: Unsupported) -> None:
        super().__init__(-1, error)


@dataclass
class ResumeFunctionMaker:
    """Called by the generated code with the frame's cells: the compiled resume function."""

    code: types.CodeType
    f_globals: dict[str, Any]
    frame_compiler: Callable[[Any], Any]
    _without_cells: Any = field(default=None, repr=False)  # made once: the common case

    def __call__(self, closure: tuple[types.CellType, ...]) -> Any:
        """A resume function without cells is the same on every call: it is made and
        wrapped once (then its cache entry's runner is reused too). One with cells gets
        this frame's cells, so it is made anew."""
        if not closure and self._without_cells is not None:
            return self._without_cells
        function = types.FunctionType(self.code, self.f_globals, self.code.co_name, None,
                                      closure or None)
        compiled = self.frame_compiler(function)
        if not closure:
            self._without_cells = compiled
        return compiled


@dataclass
class FrameState:
    """The frame's state at a break, each value stored in a temporary of the generated code."""

    stack: list[str | None]  # temporaries, bottom first; None for a NULL slot
    locals: dict[str, str]  # live local name -> temporary


class GraphBreakMixin:
    """The root translator's handling of graph breaks (chapters 6-7)."""

    @functools.cached_property
    def blocks(self: InstructionTranslator) -> Blocks:
        """The `try`, `with` and `except` blocks of the traced code (its exception table)."""
        return Blocks(self.instructions)

    # -- may we break here? ---------------------------------------------------------

    def check_can_break(self: InstructionTranslator, inst: Instruction, error: Unsupported) -> None:
        """Raise unless a resume function can follow `inst`: the root translator then
        falls back to the last statement boundary, or runs the whole frame eagerly
        (with `fullgraph=True`, `one_graph`, the break reaches the user instead)."""
        if self.one_graph or error.kind in WHOLE_FRAME_KINDS:
            raise error
        if not self.restorable_blocks(inst):  # try, except, other `with`: not restorable
            raise error
        if self.has_backedge(inst):
            try:
                graph_break(GRAPH_BREAK_IN_LOOP,
                            f"{error.reason} (inside a loop of {self.code.co_name}: skipping the frame)")
            except Unsupported as loop_error:
                loop_error.user_stack = list(error.user_stack)
                raise loop_error from error

    def refuse_suspended_generators(self: InstructionTranslator, error: Unsupported) -> None:
        """A generator made while tracing and paused at a `yield` cannot cross a break:
        its frame cannot be rebuilt after the graph, and dropped there its `finally`
        would never run (MD0024: the whole frame runs eagerly)."""
        if self.output.suspended_generators:
            names = ", ".join(f"{tx.code.co_name}()" for tx in self.output.suspended_generators)
            try:
                graph_break(GENERATOR_SUSPENDED_AT_A_BREAK, f"{error.reason} (while {names} "
                            f"is paused in {self.code.co_name}: skipping the frame)")
            except Unsupported as refused:
                refused.user_stack = list(error.user_stack)
                raise refused from error

    def restorable_blocks(self: InstructionTranslator, inst: Instruction) -> bool:
        """Whether every block around `inst` is a grad-mode `with` block, which the
        generated code and the resume function can enter again (`with_blocks.py`)."""
        blocks = self.blocks
        for entry in blocks.enclosing(inst):
            slot = entry.depth - 1
            if not blocks.starts_with(entry.target, WITH_HANDLER):
                return False  # a try or except body
            if not (0 <= slot < len(self.stack)
                    and isinstance(self.stack[slot], WithExitFunctionVariable)):
                return False
        return True

    def has_backedge(self: InstructionTranslator, inst: Instruction) -> bool:
        """TorchDynamo's heuristic: a jump back before `inst` before the next return.

        Asked of the original code (a resume code is laid out differently)."""
        code, offset = original_location(self.code, inst.offset)
        instructions = scan(code)
        start = next(index for index, each in enumerate(instructions) if each.offset == offset)
        for later in instructions[start + 1:]:
            if later.opname == "RETURN_VALUE":
                return False
            if later.target is not None and later.target.offset < offset:
                return True
        return False

    def restart_at(self: InstructionTranslator, inst: Instruction, error: Unsupported) -> None:
        """A break found while running `inst`: trace again, breaking before it.

        Otherwise the error goes on: `step` then tries the last statement boundary
        (`restart_at_checkpoint`), and failing that the whole frame runs eagerly;
        `run` adds this frame's line to it."""
        if inst.opname not in BREAK_AT_OPCODES:
            raise error
        self.check_can_break(inst, error)
        error.add_user_frame(self.user_frame())
        raise RestartAnalysis(inst.offset, error)

    # -- the last statement boundary ---------------------------------------------------

    def note_checkpoint(self: InstructionTranslator, inst: Instruction) -> None:
        """Remember `inst` as the place to fall back to, if the frame could stop before
        it: the value stack is empty (only locals to restore), no exception-table entry
        covers it (a `try:` line's NOP is outside), and the graph so far has more than
        one call (TorchDynamo's `speculate` and `should_compile_partial_graph`)."""
        if (self.stack or self.one_graph or inst.exn_tab_entry is not None
                or len(list(itertools.islice(self.output.call_nodes(), 2))) < 2):
            return
        self.checkpoint = inst

    def restart_at_checkpoint(self: InstructionTranslator, error: Unsupported) -> None:
        """A break no resume function can follow (an instruction that cannot be split
        off, a break inside `try`): trace again and stop at the last checkpoint, then
        run the frame's own bytecode from there. Otherwise the error goes on."""
        if self.checkpoint is None or error.kind in WHOLE_FRAME_KINDS:
            raise error
        where = error.user_stack[0] if error.user_stack else self.user_frame()
        boundary = Unsupported(BREAK_AT_A_STATEMENT_BOUNDARY, f"back to the last statement boundary "
                               f"from {error.kind.title} at {where.function} line "
                               f"{where.lineno}: {error.reason}", error.hint)
        raise RestartAnalysis(self.checkpoint.offset, boundary) from error

    def continue_natively(self: InstructionTranslator, inst: Instruction,
                          error: Unsupported) -> None:
        """Partial graph, the live locals stored back, then the original code from `inst`."""
        error.add_user_frame(self.user_frame())
        codegen = self.start_partial_graph(error)
        names = [name for name in self.live_locals(inst)
                 if name not in self.code.co_cellvars]  # the frame's cells are filled below
        state = self.store_state(codegen, [], [inst], names=names)
        self.write_back(codegen)
        for name, temp in state.locals.items():
            codegen.append("LOAD_FAST", argval=temp)
            codegen.append("STORE_FAST", argval=name)
        original = scan(self.code)
        body = original[next(i for i, each in enumerate(original) if each.opname == "RESUME") + 1:]
        target = next(each for each in body if each.offset == inst.offset)
        codegen.append("JUMP_FORWARD", target=target)
        self.finish_partial_graph(codegen, error)
        self.output_instructions += self.route_calls(body)

    def route_calls(self: InstructionTranslator, body: list[Instruction]) -> list[Instruction]:
        """The original bytecode, each call of a global function or of a method made
        through minidynamo's wrapper, so that the callee is compiled as a frame of its own,
        as PEP 523 makes TorchDynamo do. Inside a loop too: the callee's cache entry
        (chapter 9) is found again on every iteration, not traced again."""
        return route_calls(self.output, body)

    # -- breaking at an instruction ---------------------------------------------------

    def break_at_instruction(self: InstructionTranslator, inst: Instruction,
                             error: Unsupported) -> None:
        """Partial graph, then `inst` natively, then the resume function after it."""
        consumed, pushed = BREAK_AT_OPCODES[inst.opname](inst)
        after = self.instructions[self.index_of[id(inst)] + 1]
        codegen = self.start_partial_graph(error)
        state = self.store_state(codegen, list(self.stack), [after])
        self.write_back(codegen)
        kept, operands = state.stack[:-consumed], state.stack[-consumed:]
        start = len(codegen.instructions)
        calls = inst.opname in ("CALL", "CALL_FUNCTION_EX")
        for position, temp in enumerate(operands):  # [NULL or fn, fn or self, args...]
            self.load_operand(codegen, temp, as_frame=calls and position < 2)
        codegen.extend(native_copy(inst, self.kw_names))
        result = [codegen.store_temporary()] if pushed else []
        managers = [temp for temp in kept if self.is_with_slot(temp)]  # outermost first
        codegen.instructions[start:] = run_inside_blocks(codegen.instructions[start:], managers)
        self.call_resume(codegen, after, kept + result, state)
        self.finish_partial_graph(codegen, error)

    def break_on_jump(self: InstructionTranslator, inst: Instruction, error: Unsupported,
                      *, keep: bool) -> None:
        """A jump on a tensor: the real jump chooses between two resume functions.

        The condition is on top of the stack (the handler pushed it back)."""
        self.check_can_break(inst, error)
        error.add_user_frame(self.user_frame())
        after, target = self.instructions[self.instruction_pointer], inst.target
        codegen = self.start_partial_graph(error)
        state = self.store_state(codegen, list(self.stack), [after, target])
        self.write_back(codegen)
        kept, condition = state.stack[:-1], state.stack[-1]
        codegen.append("LOAD_FAST", argval=condition)
        taken = create_instruction("NOP")
        # `x or y` jumps keeping x; here the condition stays in its temporary anyway, so
        # a popping jump decides the same way (and depyf reads it as a plain `if`)
        jump = POPPING_JUMPS.get(inst.opname, jump_variant(inst.opname, backward=False))
        codegen.append(jump, target=taken)
        self.call_resume(codegen, after, kept, state)
        codegen.extend([taken])
        self.call_resume(codegen, target, kept + [condition] * keep, state)
        self.finish_partial_graph(codegen, error)

    # -- the pieces -------------------------------------------------------------------

    def start_partial_graph(self: InstructionTranslator, error: Unsupported) -> PyCodegen:
        """A codegen for the code after the partial graph; it writes nothing yet.

        What follows reads first and writes after (codegen.py): `store_state` reads the
        stack and the live locals into temporaries, then `write_back` replays the side
        effects and fills the frame's cells."""
        self.refuse_suspended_generators(error)
        self.output.break_reason = without_frames(error)
        exit_blocks(self)  # the graph hands back the grad mode it was called with
        codegen = PyCodegen(self.output)
        self.load_own_cells(codegen)
        return codegen

    def own_cells(self: InstructionTranslator) -> dict[str, CellVariable]:
        """The frame's own cells (MAKE_CELL) that the trace has seen, newest versions."""
        cells = {name: self.cells.get(name) for name in self.code.co_cellvars}
        return {name: self.output.side_effects.latest(cell) for name, cell in cells.items()
                if cell is not None and cell.source is None}

    def load_own_cells(self: InstructionTranslator, codegen: PyCodegen) -> None:
        """The frame's own cells are real cells of the transformed frame: every reference
        to one is rebuilt as that very cell, so that closures made before the break and
        the resume function share it."""
        for name, cell in self.own_cells().items():
            codegen.append("LOAD_CLOSURE", argval=name)
            codegen.cached_objects[cell.object_id] = codegen.store_temporary()

    def write_back(self: InstructionTranslator, codegen: PyCodegen) -> None:
        """Fill the frame's own cells and replay the side effects, everything they
        read being read before the first of them writes."""
        filled = {name: cell.contents for name, cell in self.own_cells().items()
                  if cell.contents is not None}
        codegen.preload(filled.values())
        self.output.side_effects.codegen_preload(codegen)
        for name, contents in filled.items():
            codegen(contents)
            codegen.append("STORE_DEREF", argval=name)
        self.output.side_effects.codegen_replay(codegen)

    def finish_partial_graph(self: InstructionTranslator, codegen: PyCodegen,
                             error: Unsupported) -> None:
        """Compile the graph (its outputs are what the codegen loaded) and stop tracing."""
        graph_call = self.output.finish_graph(codegen.graph_outputs)
        self.output_instructions = [*graph_call, *codegen.instructions]
        error.compiled_graph = self.output.compiled_graph is not None

    def store_state(self: InstructionTranslator, codegen: PyCodegen,
                    stack: list[VariableTracker], resume_at: list[Instruction],
                    names: list[str] | None = None) -> FrameState:
        """Rebuild each stack value and each live local (at `resume_at`, or `names`)
        into a temporary, before anything is written back."""
        stack_temps: list[str | None] = []
        self.state_values: dict[str, VariableTracker] = {}
        if names is None:
            names = []
            for inst in resume_at:
                names += [name for name in self.live_locals(inst) if name not in names]
        cells = [cell.contents for cell in self.own_cells().values()]
        codegen.make_new_objects_first([*stack, *(self.symbolic_locals[name] for name in names),
                                        *cells, *self.output.side_effects.written_values()])
        for value in stack:
            if isinstance(value, NullVariable):
                stack_temps.append(None)
            else:
                codegen(value)
                stack_temps.append(codegen.store_temporary())
                self.state_values[stack_temps[-1]] = value.realize()
        local_temps = {}
        for name in names:
            codegen(self.symbolic_locals[name])
            local_temps[name] = codegen.store_temporary()
        codegen.fill_new_objects()
        return FrameState(stack_temps, local_temps)

    def live_locals(self: InstructionTranslator, inst: Instruction) -> list[str]:
        """The bound locals the code may read from `inst` on (`live_locals_at` order)."""
        names = live_locals_at(self.code, inst.offset)
        return [name for name in names if name in self.symbolic_locals
                and not isinstance(self.symbolic_locals[name], NullVariable)]

    def call_resume(self: InstructionTranslator, codegen: PyCodegen, inst: Instruction,
                    stack: list[str | None], state: FrameState) -> None:
        """`return __resume_at_K(*stack, *live locals)`, the function made with the frame's cells."""
        live = self.live_locals(inst)
        null_slots = [index for index, temp in enumerate(stack) if temp is None]
        with_slots = [index for index, temp in enumerate(stack) if self.is_with_slot(temp)]
        try:
            entry = resume_cache.lookup(self.code, inst.offset, len(stack), live,
                                        null_slots=null_slots, with_blocks=with_slots)
        except ResumeError as error:
            graph_break(UNSUPPORTED_PYTHON_FEATURE, f"cannot resume here: {error}")
        maker = ResumeFunctionMaker(entry.code, self.f_globals, self.output.frame_compiler)
        global_name = f"__minidynamo{entry.name}"  # not torch.compile's own __resume_at_*
        self.output.install_global_as(global_name, maker)
        codegen.append("PUSH_NULL")  # below the resume function, for the last CALL
        codegen.append("LOAD_GLOBAL", argval=global_name, arg=1)  # NULL, maker
        for name in entry.code.co_freevars:
            codegen.append("LOAD_CLOSURE", argval=name)
        codegen.append("BUILD_TUPLE", arg=len(entry.code.co_freevars))
        codegen.call_function(1)  # NULL, resume function
        arguments = [temp for temp in stack if temp is not None]
        arguments += [state.locals[name] for name in live]
        for temp in arguments:
            codegen.append("LOAD_FAST", argval=temp)
        codegen.call_function(len(arguments))
        codegen.append("RETURN_VALUE")

    def is_with_slot(self: InstructionTranslator, temp: str | None) -> bool:
        """Whether the temporary holds a grad-mode block's manager (its `__exit__` slot)."""
        return isinstance(self.state_values.get(temp), WithExitFunctionVariable)

    def load_operand(self: InstructionTranslator, codegen: PyCodegen, temp: str | None,
                     *, as_frame: bool) -> None:
        """Push an operand of the breaking instruction back. A called user function or
        nn.Module goes through minidynamo's wrapper, so it is compiled as a frame of its
        own (a module: its forward, `compile_module_call`)."""
        if temp is None:
            return codegen.append("PUSH_NULL")
        value = self.state_values[temp]
        if not (as_frame and (isinstance(value, BaseUserFunctionVariable) or is_module(value))):
            return codegen.append("LOAD_FAST", argval=temp)
        codegen.load_callable(self.output.frame_compiler)
        codegen.append("LOAD_FAST", argval=temp)
        codegen.call_function(1)


def is_module(value: VariableTracker) -> bool:
    """Whether a tracker stands for an nn.Module (existing, or made while tracing)."""
    try:
        return issubclass(value.python_type(), torch.nn.Module)
    except Unsupported:  # a tracker that cannot say its type (a NULL)
        return False


def native_copy(inst: Instruction, kw_names: tuple[str, ...]) -> list[Instruction]:
    """The breaking instruction, to run natively (a CALL with its KW_NAMES and PRECALL)."""
    if inst.opname != "CALL":
        return [create_instruction(inst.opname, arg=inst.arg, argval=inst.argval)]
    keywords = [create_instruction("KW_NAMES", argval=kw_names)] if kw_names else []
    return [*keywords, create_instruction("PRECALL", arg=inst.arg),
            create_instruction("CALL", arg=inst.arg)]


def route_calls(output: OutputGraph, body: list[Instruction]) -> list[Instruction]:
    """`body` with every call made through `output.frame_compiler` (installed as a
    global of the generated code), whatever the callee is: a global function, a method,
    a local (an nn.Module argument), a closure or a lambda made in the frame, a call
    with `*args` or `**kwargs`. PEP 523 gives TorchDynamo each of their frames; the
    wrapper returns what it cannot compile (a builtin, a class, torch's own code, a
    callee already wrapped) as it is. A method call is made a plain call first
    (LOAD_METHOD -> [NULL, obj.name]), so that where each callee lies is known."""
    wrapper = output.install_global("___minidynamo_object", output.frame_compiler)
    body = methods_as_attributes(body)
    callees = callee_distances(body)
    routed = []
    for inst in body:
        distance = callees.get(id(inst))
        if inst.opname == "CALL_FUNCTION_EX":  # [NULL, fn, args, (kwargs)]
            distance = 2 + (inst.arg & 1)
        if distance is not None:
            wrap = wrapped_in_place(wrapper, distance)
            for added in wrap:
                added.exn_tab_entry, added.positions = inst.exn_tab_entry, inst.positions
            routed += wrap
        routed.append(inst)
    return routed


def methods_as_attributes(body: list[Instruction]) -> list[Instruction]:
    """Each LOAD_METHOD made a LOAD_ATTR under a NULL: [obj] -> [NULL, obj.name], the
    bound method called as a plain function (LOAD_METHOD leaves [NULL, bound] or
    [function, obj], and which one is known only when it runs)."""
    converted = []
    for inst in body:
        converted.append(inst)
        if inst.opname == "LOAD_METHOD":
            inst.opname, inst.opcode, inst.arg = "LOAD_ATTR", opcodes.OPMAP["LOAD_ATTR"], None
            added = [create_instruction("PUSH_NULL"), create_instruction("SWAP", arg=2)]
            for each in added:
                each.exn_tab_entry, each.positions = inst.exn_tab_entry, inst.positions
            converted += added
    return converted


def callee_distances(body: list[Instruction]) -> dict[int, int]:
    """For each call in `body` (a whole frame's code after RESUME), keyed by the id of
    its first instruction (KW_NAMES or PRECALL): how far below the top of the stack its
    callable lies. A CALL of n arguments finds [NULL, callable, args] (distance n + 1)
    or [callable, self, args] (n + 2: a decorator, a comprehension, a `with` block's
    `__exit__`); which one is read off where the NULLs are, walked in code order (the
    compiler's stack below an expression is the same on every path into it)."""
    depths = stack_depths(body)
    nulls: set[int] = set()  # the stack positions holding a NULL
    distances = {}
    for index, (inst, depth) in enumerate(zip(body, depths)):
        if depth is None:
            continue
        nulls = {position for position in nulls if position < depth}
        if inst.opname == "PUSH_NULL" or (inst.opname == "LOAD_GLOBAL" and inst.arg & 1):
            nulls.add(depth)
        elif inst.opname == "SWAP":
            top, other = depth - 1, depth - inst.arg
            if (top in nulls) != (other in nulls):
                nulls ^= {top, other}
        elif inst.opname == "PRECALL":
            first = depth - inst.arg - 2  # the NULL, or the callable of [callable, self]
            start = body[index - 1] if body[index - 1].opname == "KW_NAMES" else inst
            distances[id(start)] = inst.arg + (1 if first in nulls else 2)
            nulls.discard(first)
    return distances


def wrapped_in_place(wrapper: str, distance: int) -> list[Instruction]:
    """[..., fn, <distance - 1 values>] -> [..., wrapper(fn), <the same values>]."""
    def swap() -> list[Instruction]:
        return [create_instruction("SWAP", arg=distance)] if distance > 1 else []

    # [fn] -> [NULL, fn] -> [NULL, fn, wrapper] -> [NULL, wrapper, fn] -> CALL 1 -> [wrapper(fn)]
    return [*swap(), create_instruction("PUSH_NULL"), create_instruction("SWAP", arg=2),
            create_instruction("LOAD_GLOBAL", argval=wrapper, arg=0),
            create_instruction("SWAP", arg=2), create_instruction("PRECALL", arg=1),
            create_instruction("CALL", arg=1), *swap()]
