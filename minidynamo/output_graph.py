"""OutputGraph: the FX graph being captured, and the code that calls it (chapter 5).

One OutputGraph belongs to one traced frame and is shared by every translator
working on it (the root and all the inlined callees), so every tensor
operation, wherever it is traced, lands in the same `fx.Graph`:

- `add_graph_input` makes a *placeholder* for a tensor from outside, named
  after its source (`L['x']` -> `L_x_`) and placed after the other placeholders;
  its example value is a FakeTensor made from the real tensor.
- `create_node` records an operation: it first runs the operation on the
  FakeTensor example values (under torch's `FakeTensorMode`) to learn the
  result's shape and dtype, then adds the node, with that FakeTensor in
  `node.meta["example_value"]`. A result that holds no tensor is a constant.
- `compile_subgraph` finishes the frame: it writes the code after the graph
  (PyCodegen: return value and side effects), sets the graph's outputs,
  compiles the graph with the backend exactly as torch.compile calls it,
  `backend(gm, example_inputs)` (a failure there raises `BackendCompilerFailed`
  naming the backend and the frame), installs the result as the global
  `__compiled_fn_N` and returns the instructions of the transformed frame.

Compare with TorchDynamo: `torch/_dynamo/output_graph.py` (`OutputGraph`,
`SubgraphTracer.create_graph_input`, `compile_subgraph`,
`compile_and_call_fx_graph`, `call_user_compiler`) and `utils.py::get_fake_value`.
"""

from __future__ import annotations

import functools
import itertools
import operator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence

import torch
import torch.fx
from torch._subclasses.fake_tensor import (
    DataDependentOutputException,
    DynamicOutputShapeException,
    FakeTensorMode,
)

from minidynamo import logs
from minidynamo.bytecode import Instruction, create_instruction
from minidynamo.codegen import GRAPH_OUTPUT_LOCAL, PyCodegen
from minidynamo.exc import (
    DATA_DEPENDENT_VALUE,
    EXCEPTION_IN_TRACED_CODE,
    BackendCompilerFailed,
    Unsupported,
    graph_break,
)
from minidynamo.guards import GuardSet
from minidynamo.side_effects import SideEffects
from minidynamo.sources import AttrSource, ChainedSource, Source
from minidynamo.variables import (
    ConstantVariable,
    ListVariable,
    NamedTupleVariable,
    TensorVariable,
    TupleVariable,
    VariableTracker,
    constant,
    new_object_id,
    replace_version,
)
from minidynamo.variables.ctx_manager import remove_grad_mode_toggles
from minidynamo.variables.tensor import contains_tensor

if TYPE_CHECKING:
    from minidynamo.translator.base import InstructionTranslatorBase as Translator

Backend = Callable[[torch.fx.GraphModule, list[torch.Tensor]], Callable[..., Any]]

_global_names = itertools.count(1)  # __compiled_fn_1, __compiled_fn_2, ... as in TorchDynamo


def is_module_state(source: Source) -> bool:
    """Whether the source reads a module's parameter or buffer: `..._parameters['weight']`."""
    while isinstance(source, ChainedSource):
        base = source.base
        if isinstance(base, AttrSource) and base.member in ("_parameters", "_buffers"):
            return True
        source = base
    return False


@dataclass
class GraphInput:
    """One placeholder: where its value comes from, the real value, and the node."""

    source: Source
    value: torch.Tensor
    node: torch.fx.Node


class OutputGraph:
    """The graph of one frame, its inputs, its side effects, and its compilation."""

    def __init__(
        self, f_globals: dict[str, Any], backend: Backend, frame_name: str = "<frame>"
    ) -> None:
        self.graph = torch.fx.Graph()
        self.fake_mode = FakeTensorMode()  # static shapes: no ShapeEnv
        self.side_effects = SideEffects(self)
        self.guards = GuardSet(user_line=self.user_line)  # what this trace assumed (ch 9)
        self.guards.global_state()
        self.f_globals = f_globals  # the root frame's globals
        self.backend = reporting_failures(backend, frame_name)
        self.graph_inputs: list[GraphInput] = []
        self.realized_inputs: dict[Source, VariableTracker] = {}  # lazy inputs, by source
        self.translators: list[Translator] = []  # active translators, root first
        self.installed_globals: dict[str, Any] = {}
        self.compiled_graph: torch.fx.GraphModule | None = None
        self.break_reason: Unsupported | None = None  # set when the frame ends at a break
        # compiles a function called natively after a break (set by convert_frame, ch 7)
        self.frame_compiler: Callable[[Any], Any] = lambda function: function

    # -- guards (chapter 9) ---------------------------------------------------------

    def user_line(self) -> str:
        """Where tracing is now, for a guard's comment: `y = x * n  # tr.py:4 in f`."""
        if not self.translators:
            return ""
        frame = self.translators[-1].user_frame()
        short = "/".join(frame.filename.split("/")[-2:])
        return f"{(frame.line or '').strip()}  # {short}:{frame.lineno} in {frame.function}"

    def finish_guards(self) -> GuardSet:
        """The frame's guards, with the ones about identity: an object found at two sources
        (`f(x, x)`: its second source realized to the first one's tracker) stays one
        object, and distinct objects (tensors, mutable containers) stay distinct."""
        firsts = [variable.source for _, variable in self.side_effects.known_values.values()
                  if variable.source is not None and variable.source.is_guardable()]
        first_set = set(firsts)
        for source, variable in self.realized_inputs.items():
            first = variable.source
            if first in first_set and first != source and source.is_guardable():
                self.guards.duplicate_input(source, first)
        # Parameters and buffers are left out, as TorchDynamo leaves them out: tied
        # weights are common, and a graph that reads two of them is right either way.
        self.guards.no_aliasing([source for source in firsts if not is_module_state(source)])
        return self.guards

    # -- inputs -----------------------------------------------------------------

    def add_graph_input(self, source: Source, value: torch.Tensor) -> TensorVariable:
        """A placeholder for a tensor from outside, after the other placeholders."""
        placeholders = [node for node in self.graph.nodes if node.op == "placeholder"]
        if placeholders:
            insert_point = self.graph.inserting_after(placeholders[-1])
        else:
            insert_point = self.graph.inserting_before(next(iter(self.graph.nodes), None))
        with insert_point:
            node = self.graph.placeholder(source.placeholder_name())
        example = self.fake_mode.from_tensor(value, static_shapes=True)
        node.meta["example_value"] = example
        self.graph_inputs.append(GraphInput(source, value, node))
        return TensorVariable(node, example, class_=type(value), source=source)

    # -- operations -------------------------------------------------------------

    def create_node(
        self,
        tx: Translator,
        kind: str,
        target: Any,
        args: Sequence[VariableTracker],
        kwargs: dict[str, VariableTracker],
    ) -> VariableTracker:
        """Record `target(*args, **kwargs)` (kind "call_function" or "call_method")."""
        node_args = tuple(arg.realize().as_proxy() for arg in args)
        node_kwargs = {name: value.realize().as_proxy() for name, value in kwargs.items()}
        example = self.run_on_fakes(kind, target, node_args, node_kwargs)
        if not contains_tensor(example) and not has_side_effect(kind, target):
            return constant(example)  # x.dim(), torch.is_tensor(x): known now, no node
        node = self.graph.create_node(kind, target, node_args, node_kwargs)
        node.meta["example_value"] = example
        node.meta["stack_trace"] = tx.stack_trace()
        return self.wrap_result(tx, node, example)

    def run_on_fakes(self, kind: str, target: Any, args: tuple, kwargs: dict[str, Any]) -> Any:
        """Run the operation on FakeTensors: the result's shape, dtype and device, no data."""

        def example_of(node: torch.fx.Node) -> Any:
            return node.meta["example_value"]

        fake_args = torch.fx.node.map_arg(args, example_of)
        fake_kwargs = torch.fx.node.map_arg(kwargs, example_of)
        name = target if isinstance(target, str) else getattr(target, "__name__", repr(target))
        try:
            with self.fake_mode:
                if kind == "call_method":
                    return getattr(fake_args[0], target)(*fake_args[1:], **fake_kwargs)
                return target(*fake_args, **fake_kwargs)
        except (DataDependentOutputException, DynamicOutputShapeException) as error:
            what = f"{name}() depends on tensor data ({type(error).__name__})"
            graph_break(DATA_DEPENDENT_VALUE, what)
        except Exception as error:  # the same call would raise in eager mode
            what = f"{name}() raised {type(error).__name__}: {error}"
            graph_break(EXCEPTION_IN_TRACED_CODE, what)

    def wrap_result(self, tx: Translator, node: torch.fx.Node, example: Any) -> VariableTracker:
        """The tracker of a node's result; tuples of tensors get one getitem node per item."""
        if isinstance(example, torch.Tensor):
            return TensorVariable(node, example)
        if isinstance(example, (tuple, list)):
            items = tuple(self.wrap_item(tx, node, i, item) for i, item in enumerate(example))
            if isinstance(example, list):
                return ListVariable(items, object_id=new_object_id())
            if type(example) is not tuple:  # torch.return_types.max, a namedtuple
                return NamedTupleVariable(items, tuple_class=type(example))
            return TupleVariable(items)
        return constant(example) if example is not None else ConstantVariable(None)

    def wrap_item(
        self, tx: Translator, node: torch.fx.Node, index: int, example: Any
    ) -> VariableTracker:
        """Item `index` of a tuple result: a getitem node if it holds a tensor."""
        if not contains_tensor(example):
            return constant(example)
        item = self.graph.create_node("call_function", operator.getitem, (node, index), {})
        item.meta["example_value"] = example
        item.meta["stack_trace"] = node.meta.get("stack_trace")
        return self.wrap_result(tx, item, example)

    # -- versions of mutable objects ---------------------------------------------

    def replace_all(self, new: VariableTracker) -> None:
        """Make `new` the only version of its object that anyone holds."""
        for tx in self.translators:
            tx.replace_version(new)
        for source, variable in list(self.realized_inputs.items()):
            self.realized_inputs[source] = replace_version(variable, new)
        versions = self.side_effects.latest_versions
        for object_id, variable in list(versions.items()):
            if object_id != new.object_id:
                versions[object_id] = replace_version(variable, new)
        self.side_effects.replace_in_pending_writes(new)

    def install_global(self, prefix: str, value: Any) -> str:
        """Put `value` in the frame's globals under a fresh name, for generated code."""
        name = f"{prefix}_{next(_global_names)}"
        self.f_globals[name] = value
        self.installed_globals[name] = value
        return name

    def install_global_as(self, name: str, value: Any) -> None:
        """Put `value` in the frame's globals under a name chosen by the caller."""
        self.f_globals[name] = value
        self.installed_globals[name] = value

    # -- the end of the frame ---------------------------------------------------

    def compile_subgraph(self, tx: Translator, return_value: VariableTracker) -> list[Instruction]:
        """The body of the transformed frame: call the graph, replay, rebuild, return."""
        codegen = PyCodegen(self)
        if self.returns_graph_output(return_value):
            codegen.load_graph_output(return_value.realize().node)
        else:
            codegen(return_value)  # first, as TorchDynamo does: it decides the output order
        self.side_effects.codegen_replay(codegen)
        codegen.append("RETURN_VALUE")
        return [*self.call_graph(codegen.graph_outputs), *codegen.instructions]

    def returns_graph_output(self, return_value: VariableTracker) -> bool:
        """TorchDynamo's common case: a frame that returns one tensor and has no side
        effects returns the graph's output, even a (mutated) input it could reload."""
        return (
            isinstance(return_value.realize(), TensorVariable)
            and self.side_effects.is_empty()
            and any(node.op.startswith("call_") for node in self.graph.nodes)
        )

    def call_nodes(self) -> Iterator[torch.fx.Node]:
        """The graph's operations so far (call_function, call_method, call_module)."""
        return (node for node in self.graph.nodes if node.op.startswith("call_"))

    def call_graph(self, outputs: list[torch.fx.Node]) -> list[Instruction]:
        """Finish and compile the graph; the instructions that call it (none if empty)."""
        self.graph.output(tuple(outputs))
        self.remove_unused_nodes()
        remove_grad_mode_toggles(self.graph)  # a block entered just before a break
        if not outputs and not any(node.op.startswith("call_") for node in self.graph.nodes):
            return []  # nothing for a backend to do: no graph, as in torch.compile
        gm = torch.fx.GraphModule(torch.nn.Module(), self.graph)
        name = f"__compiled_fn_{next(_global_names)}"
        if logs.is_enabled("graph_code"):
            code = gm.print_readable(print_output=False, include_stride=True, include_device=True)
            logs.graph_code_log.debug("TRACED GRAPH\n ===== %s =====\n %s\n", name, code)
        example_inputs = [graph_input.value for graph_input in self.graph_inputs]
        compiled = self.backend(gm, example_inputs)
        self.compiled_graph = gm
        self.f_globals[name] = self.installed_globals[name] = compiled
        instructions = [create_instruction("LOAD_GLOBAL", argval=name, arg=1)]
        for graph_input in self.graph_inputs:
            instructions += graph_input.source.reconstruct()
        instructions += [
            create_instruction("PRECALL", arg=len(self.graph_inputs)),
            create_instruction("CALL", arg=len(self.graph_inputs)),
            create_instruction("STORE_FAST", argval=GRAPH_OUTPUT_LOCAL),
        ]
        return instructions

    def remove_unused_nodes(self) -> None:
        """Drop getitems nobody reads and placeholders nobody uses, as TorchDynamo does."""
        for node in reversed(list(self.graph.nodes)):
            if not node.users and node.op == "call_function" and node.target is operator.getitem:
                self.graph.erase_node(node)
        for graph_input in list(self.graph_inputs):
            if not graph_input.node.users:
                self.graph.erase_node(graph_input.node)
                self.graph_inputs.remove(graph_input)


def reporting_failures(backend: Backend, frame_name: str) -> Backend:
    """`backend`, except that an exception it raises becomes `BackendCompilerFailed`
    naming the backend and the frame (TorchDynamo's `call_user_compiler`)."""

    @functools.wraps(backend)
    def call_backend(gm: torch.fx.GraphModule, example_inputs: list[torch.Tensor]) -> Any:
        try:
            return backend(gm, example_inputs)
        except Exception as error:
            raise BackendCompilerFailed(backend, frame_name, error) from error

    return call_backend


# Operations recorded only for their effect when the graph runs: they return nothing.
RUN_TIME_CHECKS = frozenset({torch._assert_async, torch._assert})


def has_side_effect(kind: str, target: Any) -> bool:
    """Whether the operation must be recorded whatever it returns: it changes a tensor
    in place (`x.add_(1)`, `x[0] = 1`), or checks a condition when the graph runs
    (`torch._assert_async`, what an `assert` on a tensor becomes, chapter 8)."""
    if target in (operator.setitem, operator.delitem) or target in RUN_TIME_CHECKS:
        return True
    name = target if isinstance(target, str) else getattr(target, "__name__", "")
    return name.endswith("_") and not name.startswith("_")
