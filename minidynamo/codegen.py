"""PyCodegen: writes the bytecode that runs after the graph (chapter 5).

The transformed frame calls the compiled graph, then must give the user exactly
what the original code would have: the return value, with every mutation done.
`PyCodegen` turns trackers back into bytecode that rebuilds their values:

- a value with a *source* is reloaded from it (`LOAD_FAST xs`), which keeps
  object identity: returning an input list returns that very list;
- a constant is a `LOAD_CONST`;
- a tensor computed by the graph becomes a graph output, and is read back as
  `___graph_out[i]`;
- anything else rebuilds itself (`VariableTracker.reconstruct`): a new list is
  its items and BUILD_LIST. A mutable object built once is kept in a temporary
  local, so `return xs, xs` returns one list twice, not two lists.

Compare with TorchDynamo: `torch/_dynamo/codegen.py` (`PyCodegen.__call__`,
`add_graph_output`, `load_graph_output`, `tempvars`).
"""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING, Any

import torch.fx

from minidynamo.bytecode import Instruction, create_instruction
from minidynamo.sources import Source
from minidynamo.variables import (
    ConstantVariable,
    LazyVariableTracker,
    TensorVariable,
    VariableTracker,
)
from minidynamo.variables.constant import is_constant_value

if TYPE_CHECKING:
    from minidynamo.output_graph import OutputGraph

GRAPH_OUTPUT_LOCAL = "___graph_out"


class PyCodegen:
    """Accumulates instructions that push values, replay mutations and return."""

    def __init__(self, output: OutputGraph) -> None:
        self.output = output
        self.instructions: list[Instruction] = []
        self.graph_outputs: list[torch.fx.Node] = []  # position = index in the graph's output tuple
        self.cached_objects: dict[int, str] = {}  # object_id -> temporary local holding it
        self.temporaries = 0

    def __call__(self, value: VariableTracker) -> None:
        """Emit code that pushes `value` onto the stack."""
        if isinstance(value, LazyVariableTracker):
            if not value.is_realized():
                return self.load_source(value.source)  # never looked at: reload it
            value = value.unwrap()
        value = self.output.side_effects.latest(value)
        if isinstance(value, ConstantVariable):
            return self.load_const(value.value)
        if value.source is not None:
            return self.load_source(value.source)
        if isinstance(value, TensorVariable):
            return self.load_graph_output(value.node)
        if value.object_id is None:
            return value.reconstruct(self)
        if value.object_id in self.cached_objects:
            return self.append("LOAD_FAST", argval=self.cached_objects[value.object_id])
        value.reconstruct(self)  # build it once, keep it in a temporary local
        self.append("COPY", arg=1)
        self.cached_objects[value.object_id] = self.store_temporary()

    # -- small emitters ---------------------------------------------------------

    def append(self, opname: str, **fields: Any) -> None:
        self.instructions.append(create_instruction(opname, **fields))

    def extend(self, instructions: list[Instruction]) -> None:
        self.instructions.extend(instructions)

    def store_temporary(self) -> str:
        """Pop the top of the stack into a new local of the generated code; its name."""
        name = f"___temp_{self.temporaries}"
        self.temporaries += 1
        self.append("STORE_FAST", argval=name)
        return name

    def load_source(self, source: Source) -> None:
        self.extend(source.reconstruct())

    def load_const(self, value: Any) -> None:
        if is_constant_value(value) or isinstance(value, (range, torch.Size)):
            self.append("LOAD_CONST", argval=value)
        else:
            self.load_object(value)

    def load_object(self, value: Any, *, push_null: bool = False) -> None:
        """Push an arbitrary object: a builtin by name, anything else via an installed global."""
        name = getattr(value, "__name__", None)
        if not (isinstance(name, str) and getattr(builtins, name, None) is value
                and name not in self.output.f_globals):
            name = self.output.install_global("___minidynamo_object", value)
        self.append("LOAD_GLOBAL", argval=name, arg=int(push_null))

    def load_callable(self, value: Any) -> None:
        """Push NULL and an object, ready for `call_function` (3.11's calling convention)."""
        self.load_object(value, push_null=True)

    def call_function(self, argument_count: int) -> None:
        """Call the callable below `argument_count` arguments (a NULL or self below it)."""
        self.append("PRECALL", arg=argument_count)
        self.append("CALL", arg=argument_count)

    def store_global(self, f_globals: dict[str, Any], name: str) -> None:
        """Store the top of the stack into a global of the frame's or another module."""
        if f_globals is self.output.f_globals:
            self.append("STORE_GLOBAL", argval=name)
        else:  # f_globals[name] = value
            self.load_object(f_globals)
            self.load_const(name)
            self.append("STORE_SUBSCR")

    def load_graph_output(self, node: torch.fx.Node) -> None:
        """Push `___graph_out[i]`, making `node` a graph output if it is not one yet."""
        if node not in self.graph_outputs:
            self.graph_outputs.append(node)
        self.append("LOAD_FAST", argval=GRAPH_OUTPUT_LOCAL)
        self.load_const(self.graph_outputs.index(node))
        self.append("BINARY_SUBSCR")
