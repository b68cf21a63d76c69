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

Reading and writing must not interleave. A source describes a value *as it was
when the frame started*: `L['xs'][1]` is right only while `xs` has not been
changed, and the generated code itself changes things (it replays `xs[:] = ...`,
fills cells, stores globals). So the generated code reads first and writes
after: `preload` reads every source that a write could change into a temporary
before the first write, and from then on that source is loaded from the
temporary (chapter 7, "read everything, then write").

Compare with TorchDynamo: `torch/_dynamo/codegen.py` (`PyCodegen.__call__`,
`add_graph_output`, `load_graph_output`, `tempvars`).
"""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator

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
        self.preloaded: dict[str, str] = {}  # source name -> temporary read before any write
        self.temporaries = 0
        # the new objects made empty first, filled after the values (`fill_new_objects`)
        self.made_empty: list[VariableTracker] = []

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
            return value.reconstruct(self)  # a graph output (an ndarray: made one again)
        # Asked as TorchDynamo's codegen asks it: a container's lazy items are read (and so
        # guarded) up to the first that is not a constant; `return (v, t)` guards v.
        if value.is_python_constant():
            constant = value.as_python_constant()
            if is_constant_value(constant):
                return self.load_const(constant)  # `(1, 'a')`: one LOAD_CONST
        if value.object_id is None:
            return value.reconstruct(self)
        if value.object_id in self.cached_objects:
            return self.append("LOAD_FAST", argval=self.cached_objects[value.object_id])
        value.reconstruct(self)  # build it once, keep it in a temporary local
        self.append("COPY", arg=1)
        self.cached_objects[value.object_id] = self.store_temporary()

    def make_new_objects_first(self, values: Iterable[VariableTracker]) -> None:
        """TorchDynamo's `codegen_save_tempvars`: every instance of a user class made
        while tracing that rebuilding `values` reaches is made first, empty, in the order
        the trace made them, and kept in a temporary; `fill_new_objects` fills them once
        the values are built. So the graph's outputs come in torch.compile's order (the
        constructors' arguments, then the values, then the objects' attributes and
        items), and an object that reaches itself is made before it is filled."""
        for new_object in sorted(new_objects_reached(values, self.output.side_effects.latest),
                                 key=lambda variable: variable.object_id):
            new_object.make_empty(self)
            self.cached_objects[new_object.object_id] = self.store_temporary()
            self.made_empty.append(new_object)

    def build_holding_itself(self, value: VariableTracker, empty: str,
                             contents: Callable[[], None]) -> None:
        """A container made while tracing that holds itself (`xs.append(xs)`): made empty
        first (`empty`: BUILD_LIST or BUILD_MAP) and kept in a temporary, so that
        rebuilding its items finds it there, then filled from a new container of its
        contents (`contents` pushes it) by `refill`, which leaves it on the stack."""
        self.append(empty, arg=0)
        self.cached_objects[value.object_id] = kept = self.store_temporary()
        self.load_callable(refill)
        self.append("LOAD_FAST", argval=kept)
        contents()
        self.call_function(2)

    def holds_itself(self, value: VariableTracker) -> bool:
        """Whether rebuilding `value`'s items would reach `value` again."""
        return value.object_id is not None and value.object_id in objects_reached(
            [getattr(value, name) for name in value.children_fields],
            self.output.side_effects.latest)

    def fill_new_objects(self) -> None:
        """The attributes and items of the objects `make_new_objects_first` made."""
        for new_object in self.made_empty:
            new_object.fill(self)
        self.made_empty = []

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
        if source.name() in self.preloaded:  # read before the writes began, or read once
            return self.append("LOAD_FAST", argval=self.preloaded[source.name()])
        self.extend(source.reconstruct())
        if source.new_object_each_read():  # `x.T`: one object, however often it is loaded
            self.append("COPY", arg=1)
            self.preloaded[source.name()] = self.store_temporary()

    def preload(self, values: Iterable[VariableTracker]) -> None:
        """Before the first write: read every source that rebuilding `values` will load
        and that a write may change (`Source.may_be_overwritten`) into a temporary."""
        self.preload_sources(sources_read_by(values, self.output.side_effects.latest))

    def preload_sources(self, sources: Iterable[Source]) -> None:
        """Read each of `sources` that a write may change into a temporary, once."""
        for source in sources:
            if source.may_be_overwritten() and source.name() not in self.preloaded:
                self.extend(source.reconstruct())
                self.preloaded[source.name()] = self.store_temporary()

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


def sources_read_by(values: Iterable[Any],
                    latest: Callable[[VariableTracker], VariableTracker]) -> list[Source]:
    """The sources that rebuilding `values` loads, in the order met: a value with a
    source is loaded from it; one without is rebuilt from its children."""
    found: dict[str, Source] = {}
    seen: set[int] = set()
    pending = list(values)
    while pending:
        value = pending.pop(0)
        if isinstance(value, (list, tuple)):
            pending[:0] = value
            continue
        if isinstance(value, dict):
            pending[:0] = value.values()
            continue
        if not isinstance(value, VariableTracker) or id(value) in seen:
            continue
        seen.add(id(value))
        if isinstance(value, LazyVariableTracker) and not value.is_realized():
            found.setdefault(value.source.name(), value.source)  # reloaded, never looked at
            continue
        if isinstance(value, LazyVariableTracker):
            value = value.unwrap()
        value = latest(value)  # the order of the tests is `PyCodegen.__call__`'s
        if isinstance(value, ConstantVariable):
            continue
        if value.source is not None:
            found.setdefault(value.source.name(), value.source)
        elif not isinstance(value, TensorVariable):
            pending[:0] = [getattr(value, name) for name in value.children_fields]
    return list(found.values())


def refill(container: Any, contents: Any) -> Any:
    """`container`, made empty, given its contents (`PyCodegen.build_holding_itself`)."""
    if isinstance(container, list):
        container.extend(contents)
    else:
        container.update(contents)
    return container


def made_here_reached(values: Iterable[Any],
                      latest: Callable[[VariableTracker], VariableTracker]) -> Iterator[Any]:
    """The trackers made while tracing (no source; not a constant or a tensor) that
    rebuilding `values` reaches, each newest version once, through their children."""
    seen: set[int] = set()
    pending = list(values)
    while pending:
        value = pending.pop()
        if isinstance(value, (list, tuple)):
            pending.extend(value)
            continue
        if isinstance(value, dict):
            pending.extend(value.values())
            continue
        if not isinstance(value, VariableTracker) or id(value) in seen:
            continue
        seen.add(id(value))
        if isinstance(value, LazyVariableTracker):
            if not value.is_realized():
                continue
            value = value.unwrap()
        value = latest(value)
        if value.source is not None or isinstance(value, (ConstantVariable, TensorVariable)):
            continue
        yield value
        pending.extend(getattr(value, name) for name in value.children_fields)


def objects_reached(values: Iterable[Any],
                    latest: Callable[[VariableTracker], VariableTracker]) -> set[int]:
    """The object_ids of the mutable objects made while tracing that rebuilding `values`
    reaches."""
    return {value.object_id for value in made_here_reached(values, latest)
            if value.object_id is not None}


def new_objects_reached(values: Iterable[Any],
                        latest: Callable[[VariableTracker], VariableTracker]) -> list[Any]:
    """The instances of user classes made while tracing (no source, no real object)
    that rebuilding `values` reaches."""
    from minidynamo.variables.user_defined import UserDefinedObjectVariable

    found = {value.object_id: value for value in made_here_reached(values, latest)
             if isinstance(value, UserDefinedObjectVariable) and value.value is None}
    return list(found.values())


class SharedPrefixes:
    """Loads of many sources that share a start, each shared start read once.

    The graph's inputs of a module are paths from `self`: `self._modules['layers']
    ._modules['0']._parameters['weight']`, then `...['bias']`, then layer 1's. Each
    path reloaded in full repeats the lookups of its start on every call. A start where
    the paths part (`..._modules`, followed by `['0']` and `['1']`) is kept in a local
    the first time it is read (`COPY 1`, `STORE_FAST ___prefix_0`) and loaded from there
    after, as
    TorchDynamo's codegen keeps reused values in `tmp_N` locals. Used for the graph's
    inputs, which are all read before the graph runs and anything is written.
    """

    def __init__(self, sources: Iterable[Source]) -> None:
        self.lengths: dict[Source, int | None] = {}  # `base_length`'s answers
        branches: dict[str, set[str]] = {}  # a start's name -> the links that follow it
        for source in sources:
            chain = chain_of(source, self.lengths)
            for start, after in zip(chain, chain[1:]):
                branches.setdefault(start.name(), set()).add(after.name())
        # kept: a start where paths part (a local itself, `L['self']`, is one LOAD_FAST)
        self.shared = {name for name, after in branches.items() if len(after) > 1}
        self.locals: dict[str, str] = {}  # start's name -> the local that holds it

    def load(self, source: Source) -> list[Instruction]:
        """The instructions that push `source`, through the locals of its shared starts."""
        chain = chain_of(source, self.lengths)
        done = 0
        for index in range(len(chain) - 1, -1, -1):  # the deepest start already kept
            if chain[index].name() in self.locals:
                done = index + 1
                break
        instructions = ([create_instruction("LOAD_FAST", argval=self.locals[chain[done - 1].name()])]
                        if done else [])
        for link in chain[done:]:
            instructions += own_instructions(link, self.lengths) if instructions else link.reconstruct()
            if link.name() in self.shared and link is not source and hasattr(link, "base"):
                local = self.locals[link.name()] = f"___prefix_{len(self.locals)}"
                instructions += [create_instruction("COPY", arg=1),
                                 create_instruction("STORE_FAST", argval=local)]
        return instructions


def chain_of(source: Source, lengths: dict[Source, int | None]) -> list[Source]:
    """`source` and the sources it starts from, outermost first: `L['self']`,
    `L['self']._modules`, ... A base whose loads do not begin the source's own
    (`own_instructions`) ends the chain there: the source is loaded whole."""
    chain = [source]
    while isinstance(getattr(chain[0], "base", None), Source) and (
            base_length(chain[0], lengths) is not None):
        chain.insert(0, chain[0].base)
    return chain


def own_instructions(source: Source, lengths: dict[Source, int | None]) -> list[Instruction] | None:
    """What `source` adds to its base's loads (`LOAD_ATTR fc`), or None when its
    instructions do not begin with its base's."""
    length = base_length(source, lengths)
    return None if length is None else source.reconstruct()[length:]


def base_length(source: Source, lengths: dict[Source, int | None]) -> int | None:
    """How many of `source`'s load instructions are its base's, or None when they do
    not begin with its base's; remembered in `lengths` (every link of every graph
    input's path is asked, and the 25 layers of a module share their starts)."""
    if source not in lengths:
        whole, start = source.reconstruct(), source.base.reconstruct()
        same = [(i.opname, i.argval) for i in whole[:len(start)]] == \
            [(i.opname, i.argval) for i in start]
        lengths[source] = len(start) if same else None
    return lengths[source]
