"""InstructionTranslatorBase: the symbolic stack machine (chapter 2).

CPython runs a function by executing its bytecode on a value stack. The
translator runs the same bytecode on a stack of VariableTrackers instead of
values. Its main loop is CPython's, in Python:

    run()  = while self.step(): pass
    step() = fetch the next instruction; self.dispatch_table[inst.opcode](self, inst)

Each opcode has one small handler, a method named exactly after it
(`LOAD_FAST`, `BINARY_OP`, ...), defined in the handler families of this
package (`loads_stores.py`, `operators.py`, ...). A metaclass builds the
256-entry `dispatch_table` once per class from those names (when the class traces
its first instruction), checking each name against `dis.opmap`; an opcode
without a handler gets `missing_handler`, which graph-breaks with "missing
bytecode handler: NAME" when (and only if) it runs.

Three classes share this machine:

- `InstructionTranslatorBase` (here): the stack, the locals, the loop, the handlers;
- `InstructionTranslator` (`root.py`): the frame being compiled; its RETURN_VALUE
  finishes the graph and writes the transformed code;
- `InliningInstructionTranslator` (`inlining.py`): a called user function; its
  RETURN_VALUE hands the value back to the caller's stack.

Compare with TorchDynamo: `torch/_dynamo/symbolic_convert.py`
(`BytecodeDistpatchTableMeta`, `InstructionTranslatorBase.step/run/push/pop`).
"""

from __future__ import annotations

import dis
import linecache
import re
import types
import weakref
from typing import TYPE_CHECKING, Any, Callable, Sequence

from minidynamo import config, logs
from minidynamo.bytecode import Instruction, scan
from minidynamo.exc import (
    GENERATOR_CLOSED_BY_ITS_LAST_REFERENCE,
    MISSING_BYTECODE_HANDLER,
    UNSUPPORTED_PYTHON_FEATURE,
    ObservedException,
    Unsupported,
    UserFrame,
    graph_break,
)
from minidynamo.translator.calls import CallHandlers
from minidynamo.translator.containers import ContainerHandlers
from minidynamo.translator.control_flow import ControlFlowHandlers
from minidynamo.translator.exceptions import ExcInfo, ExceptionHandlers, handle_exception
from minidynamo.translator.loads_stores import LoadStoreHandlers
from minidynamo.translator.operators import OperatorHandlers
from minidynamo.translator.stack_ops import StackHandlers
from minidynamo.translator.with_blocks import WithBlockHandlers
from minidynamo.variables import VariableTracker, replace_version
from minidynamo.variables.base import contained_ids
from minidynamo.variables.functions import BaseUserFunctionVariable

if TYPE_CHECKING:
    from minidynamo.output_graph import OutputGraph


# Each code object's Instructions, scanned once: a translator only reads them (a model
# calls the same layer's methods many times, a function is traced again at each
# recompile). Dropped with the code object.
_scanned: weakref.WeakKeyDictionary[types.CodeType, list[Instruction]] = weakref.WeakKeyDictionary()


def instructions_of(code: types.CodeType) -> list[Instruction]:
    """`scan(code)`, made once per code object and shared: never modify the list."""
    instructions = _scanned.get(code)
    if instructions is None:
        instructions = _scanned[code] = scan(code)
    return instructions


Handler = Callable[["InstructionTranslatorBase", Instruction], None]

_OPCODE_NAME = re.compile(r"[A-Z][A-Z0-9_]*[A-Z0-9]")


def missing_handler(opname: str) -> Handler:
    """The table entry of an opcode nobody handles: a graph break when it runs."""

    def handler(self: InstructionTranslatorBase, inst: Instruction) -> None:
        graph_break(MISSING_BYTECODE_HANDLER, f"missing bytecode handler: {opname}")

    handler.__name__ = f"missing_{opname}"
    return handler


class BytecodeDispatchTableMeta(type):
    """Gives every translator class its own `dispatch_table` (opcode number -> handler).

    TorchDynamo's metaclass builds the table in `__init__`, while the class statement
    runs. Ours builds it the first time the table is read (when the class traces its
    first instruction): `build_dispatch_table` is an exercise, and the student
    edition's package, every exercise stubbed, must still import.
    """

    @property
    def dispatch_table(cls) -> list[Handler]:
        """`cls`'s table, built on first use and kept (a subclass never shares its base's)
        until `build_dispatch_table` is replaced: the course plugs a student's in."""
        builder = type(cls).build_dispatch_table
        if vars(cls).get("_dispatch_table_built_by") != (builder,):
            cls._dispatch_table = builder(cls)
            # a tuple, which plugging leaves alone (it swaps functions in dicts and lists)
            cls._dispatch_table_built_by = (builder,)
        return cls._dispatch_table

    def build_dispatch_table(cls) -> list[Handler]:
        """The 256 handlers of `cls`, by opcode number; refuses a misspelt handler name."""
        for attribute in dir(cls):
            if _OPCODE_NAME.fullmatch(attribute) and callable(getattr(cls, attribute)):
                if attribute not in dis.opmap:
                    what = f"{cls.__name__}.{attribute} looks like a handler but is not an opcode"
                    raise TypeError(f"{what} of this Python")
        table = [missing_handler(f"<opcode {number}>") for number in range(256)]
        for opname, number in dis.opmap.items():
            table[number] = getattr(cls, opname, None) or missing_handler(opname)
        return table


# Instructions after which an object may have lost its last reference: a value popped or
# overwritten, a call's arguments and callee consumed, an exhausted loop's iterator.
DROPS_REFERENCES = frozenset({"POP_TOP", "STORE_FAST", "DELETE_FAST", "STORE_DEREF",
                              "DELETE_DEREF", "CALL", "FOR_ITER", "STORE_ATTR",
                              "DELETE_ATTR", "STORE_SUBSCR", "DELETE_SUBSCR", "STORE_GLOBAL"})


class InstructionTranslatorBase(
    StackHandlers,
    LoadStoreHandlers,
    OperatorHandlers,
    ContainerHandlers,
    CallHandlers,
    ControlFlowHandlers,
    ExceptionHandlers,
    WithBlockHandlers,
    metaclass=BytecodeDispatchTableMeta,
):
    """Runs one frame's bytecode symbolically: a stack and locals of VariableTrackers.

    The handlers come from the mixin families listed in the bases, one file each.
    """

    dispatch_table: list[Handler]

    def __init__(
        self,
        output: OutputGraph,
        code: types.CodeType,
        instructions: list[Instruction],
        symbolic_locals: dict[str, VariableTracker],
        f_globals: dict[str, Any],
        cells: dict[str, VariableTracker],
        parent: InstructionTranslatorBase | None = None,
    ) -> None:
        self.dispatch_table = type(self).dispatch_table   # built on first use
        self.output = output
        self.code = code
        self.instructions = instructions
        self.index_of = {id(inst): index for index, inst in enumerate(instructions)}
        self.symbolic_locals = symbolic_locals
        self.f_globals = f_globals
        self.cells = cells  # cell and free variable name -> CellVariable
        self.parent = parent
        # the exception being handled: shared with the frames this one inlines, as
        # CPython's sys.exc_info() is (translator/exceptions.py)
        self.exc_info = parent.exc_info if parent is not None else ExcInfo()
        self.stack: list[VariableTracker] = []
        # what the instruction running now popped: still held by it until it is done
        # (a `for` loop's iterator while a generator it drives runs)
        self.popped: list[VariableTracker] = []
        self.instruction_pointer = 0
        self.current_instruction: Instruction | None = None
        self.kw_names: tuple[str, ...] = ()  # set by KW_NAMES for the next CALL
        self.return_value: VariableTracker | None = None
        self.steps = 0
        # while a callee runs, this frame's stack, locals and cells change only by
        # `replace_version`: the ids they hold, kept then (None: walk them every time)
        self.held_ids: frozenset[int] | None = None
        self.suspended = False

    # -- the stack ----------------------------------------------------------------

    def push(self, value: VariableTracker) -> None:
        self.stack.append(value)

    def pop(self) -> VariableTracker:
        value = self.stack.pop()
        self.popped.append(value)
        return value

    def popn(self, count: int) -> list[VariableTracker]:
        """The top `count` values, deepest first (the order they were pushed)."""
        if count == 0:
            return []
        values = self.stack[-count:]
        del self.stack[-count:]
        self.popped.extend(values)
        return values

    # -- the loop -----------------------------------------------------------------

    def step(self) -> bool:
        """Run one instruction; False once the frame has returned."""
        inst = self.instructions[self.instruction_pointer]
        self.current_instruction = inst
        self.instruction_pointer += 1
        self.steps += 1
        if self.steps > config.max_instructions_per_frame:
            what = "the frame runs too many instructions (an endless loop?)"
            graph_break(UNSUPPORTED_PYTHON_FEATURE, what)
        if logs.is_enabled("trace_bytecode"):
            logs.trace_bytecode_log.debug("TRACE %s %s %s", inst.opname, inst.argval, self.stack)
        self.dispatch_table[inst.opcode](self, inst)
        return self.return_value is None

    def run(self) -> None:
        """Run the frame to its RETURN_VALUE (or to a graph break). Its caller waits
        meanwhile (`suspended`)."""
        self.output.translators.append(self)
        caller = self.parent
        if caller is not None:
            caller.suspend()
        try:
            while self.step_handling_exceptions():
                pass
        except Unsupported as error:
            error.add_user_frame(self.user_frame())
            raise
        finally:
            self.output.translators.remove(self)
            if caller is not None:
                caller.wake()

    def step_handling_exceptions(self) -> bool:
        """`step()`; an exception the instruction raises goes to this frame's handler
        (chapter 8), or out of the frame when no exception-table entry covers it. After an
        instruction that drops a reference, a suspended generator nothing holds any more
        is closed, as CPython closes it when its last reference goes."""
        self.popped.clear()  # what the previous instruction popped is gone now
        try:
            running = self.step()
        except ObservedException as raised:
            handle_exception(self, raised)
            return True
        if self.output.suspended_generators and self.current_instruction.opname in DROPS_REFERENCES:
            self.close_dropped_generators()
        return running

    def close_dropped_generators(self, ending: InstructionTranslatorBase | None = None) -> None:
        """Close each suspended generator that no frame, object or global holds any more
        (`ending`: a frame whose locals are going, its return value kept). Its `finally`
        blocks run here, traced; if they cannot be, no graph can end between two
        instructions: the whole frame runs eagerly (MD0021)."""
        for generator_tx in list(self.output.suspended_generators):
            parked = generator_tx.yielded is not None  # at a `yield`: not running, not waiting
            if parked and not self.holds(generator_tx.object_id, generator_tx, ending):
                self.output.suspended_generators.remove(generator_tx)
                try:
                    generator_tx.close_dropped(self)
                except Unsupported as error:
                    graph_break(GENERATOR_CLOSED_BY_ITS_LAST_REFERENCE,
                                f"closing {generator_tx.code.co_name}(): {error.reason}")

    def holds(self, object_id: int, generator_tx: InstructionTranslatorBase,
              ending: InstructionTranslatorBase | None) -> bool:
        """Whether anything but the generator's own frame (and `ending`'s locals) reaches
        the object: a frame's stack, locals or cells, an object from outside the frame (it
        outlives the frame; one made while tracing counts only if they reach it), a
        written global."""
        for tx in self.output.translators:  # this one's instruction is done: not its `popped`
            if tx is not generator_tx and tx is not ending and (
                    object_id in tx.held(in_flight=tx is not self)):
                return True
        if ending is not None and object_id in contained_ids(ending.return_value):
            return True
        side_effects = self.output.side_effects
        holders = set(side_effects.latest_versions.holding(object_id)) - {object_id}
        if holders and any(variable.object_id in holders
                           for _, variable in side_effects.known_values.values()):
            return True
        return any(object_id in contained_ids(value) for _, value in side_effects.global_writes.values())

    def held(self, in_flight: bool = True) -> frozenset[int]:
        """The object ids this frame's stack, locals and cells reach, and what its running
        instruction popped (`in_flight`); kept while it waits."""
        if self.suspended and self.held_ids is not None:
            return self.held_ids
        ids = contained_ids(self.stack) | contained_ids(self.symbolic_locals) | contained_ids(self.cells)
        if in_flight:
            ids |= contained_ids(self.popped)
        if self.suspended:
            self.held_ids = ids
        return ids

    def jump(self, inst: Instruction) -> None:
        """Continue at the instruction `inst` jumps to."""
        self.instruction_pointer = self.index_of[id(inst.target)]

    def break_on_jump(self, inst: Instruction, error: Unsupported, *, keep: bool) -> None:
        """A jump on a tensor (chapter 6). An inlined frame cannot resume by itself:
        the break travels to the caller's CALL. The root translator overrides this."""
        raise error

    # -- calls --------------------------------------------------------------------

    def call_function(
        self,
        fn: VariableTracker,
        args: Sequence[VariableTracker],
        kwargs: dict[str, VariableTracker],
    ) -> None:
        """Every CALL* opcode ends here: ask the callee's tracker, push the result."""
        self.push(fn.call_function(self, list(args), kwargs))

    def inline_user_function(
        self,
        fn: BaseUserFunctionVariable,
        args: Sequence[VariableTracker],
        kwargs: dict[str, VariableTracker],
    ) -> VariableTracker:
        """Trace a call into Python code in place; the callee's result."""
        from minidynamo.translator.inlining import InliningInstructionTranslator

        return InliningInstructionTranslator.inline_call(self, fn, args, kwargs)

    # -- versions of mutable objects -----------------------------------------------

    def suspend(self) -> None:
        """This frame waits (for its callee, or a generator for its next `next()`): its
        state changes by `replace_version` only until `wake()`."""
        self.suspended = True

    def wake(self) -> None:
        self.suspended, self.held_ids = False, None

    def replace_version(self, new: VariableTracker) -> None:
        """Swap older versions of `new`'s object for `new` in the stack, locals and cells.

        A frame waiting for its callee changes only here, so the ids it holds are
        gathered once per wait: a mutation of the callee's own objects (every step of
        its `for` loops) passes the waiting frames by with one set lookup."""
        if self.suspended:
            if new.object_id not in self.held():
                return
            self.held_ids |= contained_ids(new)  # what the new version holds is held now
        self.stack = replace_version(self.stack, new)
        self.symbolic_locals = replace_version(self.symbolic_locals, new)
        self.cells = replace_version(self.cells, new)

    def depth(self) -> int:
        """How many translators inlined this one (0 for the compiled frame)."""
        return 0 if self.parent is None else self.parent.depth() + 1

    # -- where we are in the user's code ---------------------------------------------

    def lineno(self) -> int | None:
        inst = self.current_instruction
        if inst is not None and inst.positions is not None and inst.positions.lineno is not None:
            return inst.positions.lineno
        return self.code.co_firstlineno

    def user_frame(self) -> UserFrame:
        """Where this frame is now. A frame that inlined another stays at its call while
        the callee runs, and every graph node made there asks (`stack_trace`): the
        answer for the current instruction is kept."""
        known = self.__dict__.get("_user_frame")
        if known is not None and known[0] is self.current_instruction:
            return known[1]
        lineno = self.lineno()
        line = linecache.getline(self.code.co_filename, lineno or 0).strip()
        frame = UserFrame(self.code.co_filename, lineno, self.code.co_name, line)
        self._user_frame = self.current_instruction, frame
        return frame

    def frames(self) -> list[UserFrame]:
        """This frame and the ones that inlined it, outermost first."""
        outer = self.parent.frames() if self.parent is not None else []
        return [*outer, self.user_frame()]

    def stack_trace(self) -> str:
        """A traceback-style text of where a node was made, for `node.meta["stack_trace"]`."""
        lines = []
        for frame in self.frames():
            lines.append(f'  File "{frame.filename}", line {frame.lineno}, in {frame.function}\n')
            lines.append(f"    {frame.line}\n")
        return "".join(lines)
