"""Handlers that read and write names: locals, constants, globals, cells, attributes (chapter 2).

- LOAD_FAST pushes the tracker of a local (a lazy input is pushed as it is:
  realizing it is the job of whoever *uses* it); STORE_FAST names the value
  (a tensor's node is renamed after its first variable, as in torch.compile).
- LOAD_GLOBAL wraps the real global with a `G['name']` source; STORE_GLOBAL is
  a side effect, replayed after the graph.
- LOAD_DEREF / STORE_DEREF read and write the contents of cells; writing makes a
  new version of the cell (a side effect if the cell outlives the frame).
- LOAD_ATTR asks the object's tracker (`var_getattr`); LOAD_METHOD does the same
  and pushes a NULL below, which is what 3.11's CALL expects.

Compare with TorchDynamo: `LOAD_FAST`, `STORE_FAST`, `LOAD_GLOBAL`,
`LOAD_DEREF`, `STORE_DEREF`, `LOAD_ATTR`, `LOAD_METHOD` in
`torch/_dynamo/symbolic_convert.py`.
"""

from __future__ import annotations

import builtins
import sys
import types
from typing import TYPE_CHECKING

from minidynamo.bytecode import Instruction
from minidynamo.exc import UNDEFINED_VARIABLE, UNSUPPORTED_PYTHON_FEATURE, graph_break
from minidynamo.sources import (
    AttrSource, GetItemSource, GlobalSource, GlobalsSource, ImportSource, Source,
)
from minidynamo.variables import (
    CellVariable,
    ConstantVariable,
    NullVariable,
    VariableBuilder,
    VariableTracker,
    constant,
    new_object_id,
)
from minidynamo.variables.lazy import LazyVariableTracker

if TYPE_CHECKING:
    from minidynamo.translator.base import InstructionTranslatorBase


class LoadStoreHandlers:
    """Locals, constants, globals, cells and attributes."""

    ## Locals

    def LOAD_FAST(self: InstructionTranslatorBase, inst: Instruction) -> None:
        if inst.argval not in self.symbolic_locals:
            what = f"local variable {inst.argval!r} is read before assignment"
            graph_break(UNDEFINED_VARIABLE, what)
        value = self.symbolic_locals[inst.argval]
        self.push(value.unwrap() if isinstance(value, LazyVariableTracker) else value)

    def STORE_FAST(self: InstructionTranslatorBase, inst: Instruction) -> None:
        value = self.pop()
        value.set_name_hint(inst.argval)
        self.symbolic_locals[inst.argval] = value

    def DELETE_FAST(self: InstructionTranslatorBase, inst: Instruction) -> None:
        self.symbolic_locals.pop(inst.argval, None)

    def LOAD_CONST(self: InstructionTranslatorBase, inst: Instruction) -> None:
        self.push(constant(inst.argval))

    ## Globals

    def LOAD_GLOBAL(self: InstructionTranslatorBase, inst: Instruction) -> None:
        if inst.arg & 1:
            self.push(NullVariable())
        self.push(load_global(self, inst.argval))

    def LOAD_BUILD_CLASS(self: InstructionTranslatorBase, inst: Instruction) -> None:
        """`class C: ...` starts here: `__build_class__`, read from the frame's builtins
        (never from its globals); calling it breaks the graph (`_build_class`)."""
        self.push(load_builtin(self, "__build_class__"))

    def STORE_GLOBAL(self: InstructionTranslatorBase, inst: Instruction) -> None:
        self.output.side_effects.store_global(self.f_globals, inst.argval, self.pop())

    ## Cells (closures)

    def MAKE_CELL(self: InstructionTranslatorBase, inst: Instruction) -> None:
        # an argument moved into a cell stays lazy, as TorchDynamo keeps it: an argument
        # overwritten before any read guards nothing (LOAD_DEREF realizes it when read)
        contents = self.symbolic_locals.pop(inst.argval, None)
        cell = CellVariable(contents, object_id=new_object_id())  # a new cell: dies with the frame
        self.output.side_effects.track_new(cell)
        self.cells[inst.argval] = cell

    def COPY_FREE_VARS(self: InstructionTranslatorBase, inst: Instruction) -> None:
        pass  # the translator received its free variables' cells when it was made

    def LOAD_CLOSURE(self: InstructionTranslatorBase, inst: Instruction) -> None:
        self.push(self.cells[inst.argval])

    def LOAD_DEREF(self: InstructionTranslatorBase, inst: Instruction) -> None:
        # the cell's newest version: a recursive inner function holds the cell it is
        # stored in, and versions cannot replace each other around that cycle
        cell = self.output.side_effects.latest(self.cells[inst.argval])
        contents = cell.contents
        if contents is None:
            what = f"free variable {inst.argval!r} is read before assignment"
            graph_break(UNDEFINED_VARIABLE, what)
        if cell.source is None and isinstance(contents, LazyVariableTracker):
            contents = contents.realize()  # an argument the frame moved into a cell, read
        self.push(contents)

    def STORE_DEREF(self: InstructionTranslatorBase, inst: Instruction) -> None:
        value = self.pop()
        value.set_name_hint(inst.argval)
        cell = self.output.side_effects.latest(self.cells[inst.argval])
        self.output.side_effects.mutate(cell.clone(contents=value))

    def DELETE_DEREF(self: InstructionTranslatorBase, inst: Instruction) -> None:
        cell = self.cells[inst.argval]
        self.output.side_effects.mutate(cell.clone(contents=None))

    ## Attributes

    def LOAD_ATTR(self: InstructionTranslatorBase, inst: Instruction) -> None:
        self.push(self.pop().var_getattr(self, inst.argval))

    def LOAD_METHOD(self: InstructionTranslatorBase, inst: Instruction) -> None:
        obj = self.pop()
        self.push(NullVariable())
        self.push(obj.var_getattr(self, inst.argval))

    def STORE_ATTR(self: InstructionTranslatorBase, inst: Instruction) -> None:
        obj, value = self.pop(), self.pop()
        obj.call_method(self, "__setattr__", [ConstantVariable(inst.argval), value], {})

    def DELETE_ATTR(self: InstructionTranslatorBase, inst: Instruction) -> None:
        self.pop().call_method(self, "__delattr__", [ConstantVariable(inst.argval)], {})

    ## Imports

    def IMPORT_NAME(self: InstructionTranslatorBase, inst: Instruction) -> None:
        level, fromlist = (value.as_python_constant() for value in self.popn(2))
        if level != 0:
            graph_break(UNSUPPORTED_PYTHON_FEATURE, f"relative import of {inst.argval!r}")
        module = __import__(inst.argval, self.f_globals, None, fromlist, level)
        name = inst.argval if fromlist else inst.argval.split(".")[0]
        self.push(VariableBuilder(self.output, ImportSource(name))(module))

    def IMPORT_FROM(self: InstructionTranslatorBase, inst: Instruction) -> None:
        self.push(self.stack[-1].var_getattr(self, inst.argval))


def load_global(self: InstructionTranslatorBase, name: str) -> VariableTracker:
    """The tracker of global `name`: a pending write, the module's global, or a builtin."""
    written = self.output.side_effects.load_global(self.f_globals, name)
    if written is not None:
        return written
    if name in self.f_globals:  # lazy, like a frame argument
        source = global_source(self, name)
        return LazyVariableTracker(self.f_globals[name], self.output, source=source)
    if name in frame_builtins(self.f_globals):
        self.output.guards.not_in_dict(globals_source(self), name)  # not shadowed later
        return load_builtin(self, name)
    graph_break(UNDEFINED_VARIABLE, f"global name {name!r} is not defined")


def load_builtin(self: InstructionTranslatorBase, name: str) -> VariableTracker:
    """The frame's builtin `name`, lazy too, with the source `__import__('builtins').name`
    (or, for a function with its own builtins, `G['__builtins__']['len']`)."""
    own_builtins = frame_builtins(self.f_globals)
    if own_builtins is builtins.__dict__:
        source: Source = AttrSource(ImportSource("builtins"), name)
    else:
        source = GetItemSource(global_source(self, "__builtins__"), name)
    return LazyVariableTracker(own_builtins[name], self.output, source=source)


def frame_builtins(f_globals: dict) -> dict:
    """The builtins a frame with these globals looks names up in, as CPython finds them:
    `__builtins__` of the globals (a module: its dict; a dict, as sandboxes pass: that
    dict), or the interpreter's own builtins when there is none."""
    own = f_globals.get("__builtins__", builtins)
    return own.__dict__ if isinstance(own, types.ModuleType) else own


def globals_source(self: InstructionTranslatorBase) -> Source:
    """The globals dict itself: `G`, or `__import__('mod').__dict__` for another module."""
    if self.f_globals is self.output.f_globals:
        return GlobalsSource()
    return AttrSource(ImportSource(imported_module_name(self.f_globals)), "__dict__")


def global_source(self: InstructionTranslatorBase, name: str) -> Source:
    """`G['name']` in the compiled frame's module; `__import__('mod').name` elsewhere."""
    if self.f_globals is self.output.f_globals:
        return GlobalSource(name)
    return AttrSource(ImportSource(imported_module_name(self.f_globals)), name)


def imported_module_name(f_globals: dict) -> str:
    """The name under which `sys.modules` holds the module whose globals these are: how
    the check function and the transformed code reach them. Usually its `__name__`; not
    always (`_collections_abc` calls itself `collections.abc`, another module), so
    `sys.modules` is searched then (once per dict). Code run with `exec` in a dict of its
    own has no module to be reached by: a break."""
    name = f_globals.get("__name__")
    module = sys.modules.get(name) if isinstance(name, str) else None
    if module is not None and getattr(module, "__dict__", None) is f_globals:
        return name
    known = _module_names.get(id(f_globals))
    if known is not None and known[0] is f_globals:
        return known[1]
    for other_name, other in list(sys.modules.items()):
        if getattr(other, "__dict__", None) is f_globals:
            _module_names[id(f_globals)] = (f_globals, other_name)
            return other_name
    graph_break(UNSUPPORTED_PYTHON_FEATURE, "a global of a function whose globals are no "
                "imported module's (code run with exec)")


# globals dicts whose module is in sys.modules under another name than its __name__
_module_names: dict[int, tuple[dict, str]] = {}
