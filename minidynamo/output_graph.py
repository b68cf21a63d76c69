"""OutputGraph: the FX graph being captured, and the code that calls it (chapter 5).

One OutputGraph belongs to one traced frame and is shared by every translator
working on it (the root and all the inlined callees), so every tensor
operation, wherever it is traced, lands in the same `fx.Graph`:

- `add_graph_input` makes a *placeholder* for a tensor from outside, named
  after its source (`L['x']` -> `L_x_`) and placed after the other placeholders;
  its example value is a FakeTensor made from the real tensor. A dynamic size
  (chapter 9, `shapes.py`) is a symbol of the frame's `ShapeEnv` and gets a
  placeholder of its own before the tensor's (`s77`), as does a dynamic int
  (`add_symint_input`: `L_n_`).
- `create_node` records an operation: it first runs the operation on the
  FakeTensor example values (under torch's `FakeTensorMode`) to learn the
  result's shape and dtype, then adds the node, with that FakeTensor in
  `node.meta["example_value"]`. A result that holds no tensor is a constant,
  unless it is symbolic (a SymInt computed from a dynamic size: a node too).
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
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Sequence

import sympy
import torch
import torch._guards
import torch.fx
from torch._dispatch.python import enable_python_dispatcher
from torch._dynamo.tensor_version_op import _tensor_version
from torch._subclasses.fake_tensor import (
    DataDependentOutputException,
    DynamicOutputShapeException,
    FakeTensorMode,
)
from torch.fx.experimental.symbolic_shapes import (
    DimDynamic, ShapeEnv, compute_unbacked_bindings, free_symbols,
)

from minidynamo import logs
from minidynamo.bytecode import Instruction, create_instruction
from minidynamo.codegen import GRAPH_OUTPUT_LOCAL, PyCodegen, SharedPrefixes
from minidynamo.exc import (
    DATA_DEPENDENT_VALUE,
    EXCEPTION_IN_TRACED_CODE,
    REQUIRES_GRAD_RETURNED,
    BackendCompilerFailed,
    Unsupported,
    graph_break,
)
from minidynamo.guards import GuardSet
from minidynamo.shapes import (
    DYNAMIC_INDICES,
    FrameSizes,
    dynamic_dims as dynamic_dims_of,
    float_tensor_source,
    is_symbolic,
    shape_env_source,
    symbolic_context,
    static_context,
    symbolic_properties,
)
from minidynamo.side_effects import SideEffects
from minidynamo.sources import AttrSource, Source, is_module_state
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
from minidynamo.variables.base import TrackerDict
from minidynamo.variables.ctx_manager import remove_grad_mode_toggles
from minidynamo.variables.numpy import changes_an_ndarray
from minidynamo.variables.sym_node import SymNodeVariable
from minidynamo.variables.tensor import contains_tensor, node_class

if TYPE_CHECKING:
    from minidynamo.translator.base import InstructionTranslatorBase as Translator

Backend = Callable[[torch.fx.GraphModule, list[torch.Tensor]], Callable[..., Any]]

_global_names = itertools.count(1)  # __compiled_fn_1, __compiled_fn_2, ... as in TorchDynamo
AS_TENSOR_GLOBAL = "___as_tensor_fullprec"  # installed for dynamic floats, as a graph input


@dataclass
class GraphInput:
    """One placeholder: where its value comes from, the real value, and the node."""

    source: Source
    value: torch.Tensor | int  # an int: a dynamic size or a dynamic int argument
    node: torch.fx.Node
    as_tensor: bool = False  # a dynamic float: the frame passes a float, the graph wants a tensor


def holds_graph_value(value: Any) -> bool:
    """Whether an example value must come from the graph: it holds a tensor or a
    symbolic int (a constant otherwise)."""
    if isinstance(value, (list, tuple)):
        return any(holds_graph_value(item) for item in value)
    return contains_tensor(value) or is_symbolic(value)


class OutputGraph:
    """The graph of one frame, its inputs, its side effects, and its compilation."""

    def __init__(
        self, f_globals: dict[str, Any], backend: Backend, frame_name: str = "<frame>",
        dynamic: bool | None = None, frame_sizes: FrameSizes | None = None,
    ) -> None:
        self.graph = torch.fx.Graph()
        # Dynamic sizes are symbols of this ShapeEnv; it records what the trace assumed
        # of them (chapter 9). Data-dependent outputs (`nonzero`, `item`) stay breaks.
        self.shape_env = ShapeEnv(allow_scalar_outputs=False, allow_dynamic_output_shape_ops=False)
        self.fake_mode = FakeTensorMode(shape_env=self.shape_env)
        self.dynamic = dynamic  # compile's option: True, False or None (automatic)
        self.frame_sizes = frame_sizes if frame_sizes is not None else FrameSizes()
        # an earlier pass found a graph output made requires_grad_() in the graph: this
        # pass breaks at each such call (`TensorVariable.requires_grad_`)
        self.break_on_requires_grad = False
        self.specialized_floats: frozenset[str] = frozenset()  # sources: floats kept constant
        self.grad_enabled_at_start = torch.is_grad_enabled()
        self.symbol_nodes: dict[sympy.Symbol, torch.fx.Node] = {}  # s77 -> its placeholder
        # a dynamic int or float read again from the same source (`type(o).k` twice) is
        # the same input: ints are not tracked by identity as tensors are
        self.scalar_inputs: dict[Source, SymNodeVariable] = {}
        self.tracked_fakes: list[tuple[Any, Source]] = []  # what the shape guards are about
        self.input_contexts: dict[int, Any] = {}  # id(fake) -> how it was sized (its marks)
        # a dynamic input's real tensor -> its context, for the backend's fake mode
        self.real_contexts: Any = torch.utils.weak.WeakTensorKeyDictionary()
        self.side_effects = SideEffects(self)
        self.guards = GuardSet(user_line=self.user_line)  # what this trace assumed (ch 9)
        self._user_line: tuple[tuple, str] = ((None, None), "")  # (code, instruction), text
        self.guards.global_state()
        self.f_globals = f_globals  # the root frame's globals
        self.backend = reporting_failures(backend, frame_name)
        self.frame_name = frame_name
        self.graph_inputs: list[GraphInput] = []
        self.realized_inputs: dict[Source, VariableTracker] = TrackerDict()  # lazy inputs, by source
        self.identity_keys: set[Source] = set()  # objects used as set items or dict keys
        self.module_sources: set[Source] = set()  # nn.Modules met: their int attributes stay static
        self.translators: list[Translator] = []  # active translators, root first
        # generators made while tracing, started and not finished: closed when dropped
        self.suspended_generators: list[Translator] = []
        self.installed_globals: dict[str, Any] = {}
        self.compiled_graph: torch.fx.GraphModule | None = None
        self.break_reason: Unsupported | None = None  # set when the frame ends at a break
        # compiles a function called natively after a break (set by convert_frame, ch 7)
        self.frame_compiler: Callable[[Any], Any] = lambda function: function

    # -- guards (chapter 9) ---------------------------------------------------------

    def user_line(self) -> str:
        """Where tracing is now, for a guard's comment: `y = x * n  # tr.py:4 in f`. One
        instruction often adds many guards (a module call: its type, hooks, methods):
        the text of the last instruction asked about is kept."""
        if not self.translators:
            return ""
        tx = self.translators[-1]
        (code, inst), text = self._user_line  # what the text depends on, no translator
        if code is not tx.code or inst is not tx.current_instruction:
            frame = tx.user_frame()
            short = "/".join(frame.filename.split("/")[-2:])
            text = f"{(frame.line or '').strip()}  # {short}:{frame.lineno} in {frame.function}"
            self._user_line = (tx.code, tx.current_instruction), text
        return text

    def cleanup(self) -> None:
        """Once the entry is built: drop what the trace held of the call it traced. The
        trace is a web of cycles (the side effects and the guards point back at this
        graph), freed only by the cyclic collector; without this, the first call's
        inputs and the modules it met would live until then (TorchDynamo's
        `OutputGraph.cleanup`)."""
        self.graph_inputs.clear()
        self._user_line = (None, None), ""
        self.realized_inputs.clear()
        self.tracked_fakes.clear()
        self.input_contexts.clear()
        self.real_contexts.clear()
        self.scalar_inputs.clear()
        self.translators.clear()
        self.suspended_generators.clear()
        self.side_effects.clear()
        for guard in self.guards:  # the check function is built: the values it read go
            guard.instance = guard.tensor = None

    def discard(self) -> None:
        """A trace that makes no entry (traced again, or the frame runs eagerly): its
        guards go too, with the objects they refer to."""
        self.cleanup()
        self.guards.clear()

    def finish_guards(self) -> GuardSet:
        """The frame's guards, with the ones about identity: an object found at two sources
        (`f(x, x)`: its second source realized to the first one's tracker) stays one
        object, and distinct objects (tensors, mutable containers) stay distinct."""
        known = self.side_effects.known_values.values()
        firsts = [variable.source for _, variable in known
                  if variable.source is not None and variable.source.is_guardable()]
        first_set = set(firsts)
        for source, variable in self.realized_inputs.items():
            first = variable.source
            if first in first_set and first != source and source.is_guardable():
                self.guards.duplicate_input(source, first)
        written, mutated = self.written_types(), self.mutated_inputs()
        self.guards.no_aliasing([variable.source for value, variable in known
                                 if variable.source in first_set
                                 and self.may_alias(value, variable.source, written, mutated)])
        if self.shape_env.backed_var_to_val:  # a symbol was made: sizes, ints or floats
            fakes, sources = zip(*self.tracked_fakes)
            expressions = self.shape_env.produce_guards(
                list(fakes), [shape_env_source(source) for source in sources],
                input_contexts=[self.input_contexts.get(id(fake)) for fake in fakes])
            for expression in expressions:
                self.guards.shape_env(expression)
        return self.guards

    def may_alias(self, value: Any, source: Source, written: set[type],
                  mutated: set[Source] = frozenset()) -> bool:
        """Whether the aliasing guard must keep this input distinct from the others.

        Parameters and buffers are left out, as TorchDynamo leaves them out: tied
        weights are common, and a graph that reads two of them is right either way;
        unless the trace used them as dict keys or set items (`named_modules()`'s memo)
        or compared them with `is`, where being one object or two decides the answer,
        or the graph changes them in place (`mutated`): a buffer passed in as an
        argument too is then read before or after the change, and AOTAutograd, which
        takes its inputs to be distinct, would read the wrong one.
        Other tensors are kept. Any other object is kept when the trace wrote to an
        object of its type: one object under two names is of one type (each name's type
        is guarded), and only a write read back under the other name tells one object
        from two; what the trace read of each is guarded at each one's own source."""
        if source in self.identity_keys:
            return True
        if is_module_state(source):
            return source in mutated
        return isinstance(value, torch.Tensor) or type(value) in written

    def mutated_inputs(self) -> set[Source]:
        """The sources of the graph's inputs that an operation changes in place."""
        sources = {graph_input.node: graph_input.source for graph_input in self.graph_inputs}
        return {sources[node.args[0]] for node in self.graph.nodes
                if node.op in ("call_function", "call_method") and node.args
                and node.args[0] in sources and has_side_effect(node.op, node.target)}

    def written_types(self) -> set[type]:
        """The types of the objects from outside the frame that the trace wrote to."""
        mutated = self.side_effects.mutated
        return {type(value) for value, variable in self.side_effects.known_values.values()
                if variable.object_id in mutated}

    # -- inputs -----------------------------------------------------------------

    def add_graph_input(
        self, source: Source, value: torch.Tensor, dynamic_dims: Sequence[bool] = ()
    ) -> TensorVariable:
        """A placeholder for a tensor from outside, after the other placeholders.

        Its example value is a FakeTensor made from the real tensor, with static
        sizes unless chapter 9's `dynamic_dims` make some of them symbols
        (`fake_input` does that)."""
        placeholders = [node for node in self.graph.nodes if node.op == "placeholder"]
        if placeholders:
            insert_point = self.graph.inserting_after(placeholders[-1])
        else:
            insert_point = self.graph.inserting_before(next(iter(self.graph.nodes), None))
        with insert_point:
            node = self.graph.placeholder(source.placeholder_name())
        example = self.fake_input(source, value, dynamic_dims, node)
        node.meta["example_value"] = example
        node.meta["tensor_class"] = type(value)
        self.graph_inputs.append(GraphInput(source, value, node))
        return TensorVariable(node, example, class_=type(value), source=source)

    def fake_input(self, source: Source, value: torch.Tensor, dynamic_dims: Sequence[bool],
                   node: torch.fx.Node) -> torch.Tensor:
        """The FakeTensor of a graph input (chapter 9: dynamic shapes).

        Each dimension in `dynamic_dims` gets a symbol (`s77`, for sizes of 2 or more;
        0 and 1 stay constants): the FakeTensor is sized `[s77, 4]` and each new
        symbol gets a placeholder of its own before the tensor's `node`, fed
        `x.size()[0]` by the generated code, as in torch.compile's graphs."""
        base_context, base_source = None, AttrSource(source, "_base")
        if value._is_view():  # the base's sizes are remembered too, as TorchDynamo's are
            base_context = symbolic_context(dynamic_dims_of(
                value._base, base_source, self.frame_sizes, self.dynamic, False),
                source=shape_env_source(base_source))
        if not any(dynamic_dims):
            example = self.fake_mode.from_tensor(value, static_shapes=True)
        else:
            marked = getattr(value, DYNAMIC_INDICES, ())
            context = symbolic_context(dynamic_dims, base_context, marked,
                                       source=shape_env_source(source))
            example = self.fake_mode.from_tensor(value, source=shape_env_source(source),
                                                 symbolic_context=context)
            self.input_contexts[id(example)] = context  # its marks: `produce_guards` checks them
            self.real_contexts[value] = context
        for symbol_source, size in symbolic_properties(source, example):
            if isinstance(size.node.expr, sympy.Symbol) and size.node.expr not in self.symbol_nodes:
                with self.graph.inserting_before(node):
                    symbol_node = self.graph.placeholder(str(size.node.expr))
                symbol_node.meta["example_value"] = size
                real = getattr(value, symbol_source.method)()
                real = real if symbol_source.dim is None else real[symbol_source.dim]
                self.graph_inputs.append(GraphInput(symbol_source, real, symbol_node))
                self.symbol_nodes[size.node.expr] = symbol_node
        self.tracked_fakes.append((example, source))
        if value._is_view() and any(dynamic_dims):  # its base's symbols, `L['y']._base`
            base = self.fake_mode.from_tensor(  # (memoized: the one the view was made from)
                value._base, source=shape_env_source(base_source), symbolic_context=base_context)
            self.tracked_fakes.append((base, base_source))
        return example

    def add_symint_input(self, source: Source, value: int) -> SymNodeVariable:
        """A dynamic int from outside (chapter 9): a symbol of the ShapeEnv, whose
        placeholder is named after the source (`L_n_`); any value but its type may change."""
        if source in self.scalar_inputs:
            return self.scalar_inputs[source]
        symint = self.shape_env.create_unspecified_symint_and_symbol(
            value, shape_env_source(source), DimDynamic.DYNAMIC)
        placeholders = [node for node in self.graph.nodes if node.op == "placeholder"]
        with self.graph.inserting_after(placeholders[-1]) if placeholders else \
                self.graph.inserting_before(next(iter(self.graph.nodes), None)):
            node = self.graph.placeholder(source.placeholder_name())
        node.meta["example_value"] = symint
        self.graph_inputs.append(GraphInput(source, value, node))
        self.symbol_nodes[symint.node.expr] = node
        self.tracked_fakes.append((symint, source))
        variable = self.scalar_inputs[source] = SymNodeVariable(node, symint, source=source)
        return variable

    def add_float_input(self, source: Source, value: float) -> SymNodeVariable:
        """A dynamic float from outside (chapter 9), as torch 2.13 takes one: the graph's
        input is a 0-d float64 tensor (`L_s_`) and its first use reads it back,
        `item = l_s_.item()`, a SymFloat that the rest of the graph computes with."""
        if source in self.scalar_inputs:
            return self.scalar_inputs[source]
        tensor = torch.tensor(value, dtype=torch.float64)
        placeholders = [node for node in self.graph.nodes if node.op == "placeholder"]
        with self.graph.inserting_after(placeholders[-1]) if placeholders else \
                self.graph.inserting_before(next(iter(self.graph.nodes), None)):
            node = self.graph.placeholder(source.placeholder_name())
        example = self.fake_mode.from_tensor(tensor, source=float_tensor_source(source))
        node.meta["example_value"] = example
        self.graph_inputs.append(GraphInput(source, tensor, node, as_tensor=True))
        item = self.graph.call_method("item", (node,))
        item.meta["example_value"] = symfloat = example.item_memo
        self.tracked_fakes.append((symfloat, source))
        variable = self.scalar_inputs[source] = SymNodeVariable(item, symfloat, source=source)
        return variable

    def size_item(self, tx: Translator, tensor: TensorVariable, what: str, dim: int,
                  value: Any) -> VariableTracker:
        """Item `dim` of `tensor`'s sizes (`what`: "size") or strides ("stride"): a
        constant, the placeholder of its symbol (`s77`), or a `sym_size` node for a
        size computed from symbols (`2*s77` after a `cat`)."""
        if not is_symbolic(value):
            return constant(value)
        if value.node.expr in self.symbol_nodes:
            return SymNodeVariable(self.symbol_nodes[value.node.expr], value)
        op = torch.ops.aten.sym_size.int if what == "size" else torch.ops.aten.sym_stride.int
        node = self.graph.create_node("call_function", op, (tensor.node, dim), {})
        node.meta["example_value"] = value
        node.meta["stack_trace"] = tx.stack_trace()
        return SymNodeVariable(node, value)

    # -- operations -------------------------------------------------------------

    def create_node(
        self,
        tx: Translator,
        kind: str,
        target: Any,
        args: Sequence[VariableTracker],
        kwargs: dict[str, VariableTracker],
        *,
        keep: bool = False,
    ) -> VariableTracker:
        """Record `target(*args, **kwargs)` (kind "call_function" or "call_method").
        A call whose answer is a plain value is folded to it, no node, unless `keep`
        (TorchDynamo's reads of a tensor's attributes stay in its graph)."""
        node_args = tuple(arg.realize().as_proxy() for arg in args)
        node_kwargs = {name: value.realize().as_proxy() for name, value in kwargs.items()}
        example = self.run_on_fakes(kind, target, node_args, node_kwargs)
        if not (holds_graph_value(example) or keep or has_side_effect(kind, target)
                or folded_by_algebra(example, arguments_of(node_args, node_kwargs))):
            return constant(example)  # x.dim(), torch.is_tensor(x): known now, no node
        node = self.graph.create_node(kind, target, node_args, node_kwargs)
        node.meta["example_value"] = example
        node.meta["stack_trace"] = tx.stack_trace()
        return self.wrap_result(tx, node, example)

    def run_on_fakes(self, kind: str, target: Any, args: tuple, kwargs: dict[str, Any]) -> Any:
        """Run the operation on FakeTensors: the result's shape, dtype and device, no data.
        With the Python dispatcher on, as TorchDynamo runs them (`get_fake_value`): an
        operator's Python implementation for fake tensors is the one that runs (`x._version`
        is then an unknown SymInt, not the fake's 0)."""

        def example_of(node: torch.fx.Node) -> Any:
            return node.meta["example_value"]

        fake_args = torch.fx.node.map_arg(args, example_of)
        fake_kwargs = torch.fx.node.map_arg(kwargs, example_of)
        name = target if isinstance(target, str) else getattr(target, "__name__", repr(target))
        try:
            with self.fake_mode, enable_python_dispatcher():
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
        """The tracker of a node's result; tuples of tensors get one getitem node per item.

        A symbol made by the call itself (`x._version`: an unbacked SymInt) is bound to
        where the node's output holds it, as TorchDynamo's `set_example_value` does: a
        backend that traces the graph again (aot_eager) then finds no symbol pending."""
        bindings = compute_unbacked_bindings(self.shape_env, example)
        if bindings:
            node.meta["unbacked_bindings"] = bindings
        if isinstance(example, torch.Tensor):
            return TensorVariable(node, example, class_=node_class(node))
        if is_symbolic(example) or folded_by_algebra(example, node.all_input_nodes):
            return SymNodeVariable(node, example)
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
        """Item `index` of a tuple result: a getitem node if it holds a tensor or a symbol."""
        if not holds_graph_value(example):
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
        realized = self.realized_inputs
        for source in realized.holding(new.object_id):  # (a TrackerDict: only those)
            updated = replace_version(realized[source], new)
            if updated is not realized[source]:
                realized[source] = updated
        versions = self.side_effects.latest_versions
        for object_id in versions.holding(new.object_id):
            if object_id != new.object_id:
                versions[object_id] = replace_version(versions[object_id], new)
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
            return_value.realize().reconstruct(codegen)  # the graph's output, even with a source
        else:
            codegen.make_new_objects_first([return_value, *self.side_effects.written_values()])
            codegen(return_value)  # first, as TorchDynamo does: it decides the output order
            codegen.fill_new_objects()
        self.side_effects.codegen_replay(codegen)
        codegen.append("RETURN_VALUE")
        return [*self.finish_graph(codegen.graph_outputs), *codegen.instructions]

    def returns_graph_output(self, return_value: VariableTracker) -> bool:
        """TorchDynamo's common case: a frame that returns one tensor and has no side
        effects returns the graph's output, even a (mutated) input it could reload."""
        return (
            isinstance(return_value.realize(), TensorVariable)
            and self.side_effects.is_empty()
            and any(node.op.startswith("call_") for node in self.graph.nodes)
        )

    def finish_graph(self, outputs: list[torch.fx.Node]) -> list[Instruction]:
        """`call_graph` at the end of a trace or before a break: once its outputs are
        checked (`check_requires_grad`), in the grad mode the graph starts in (tracing
        `torch.set_grad_enabled(False)` flips the real one), from which AOTAutograd
        decides whether the graph's outputs need autograd."""
        self.check_requires_grad(outputs)
        with torch.set_grad_enabled(self.grad_enabled_at_start):
            return self.call_graph(outputs)

    def check_requires_grad(self, outputs: list[torch.fx.Node]) -> None:
        """An output that requires grad, computed from a tensor made in the graph and
        given requires_grad_() there: a backend that traces the graph's autograd
        (aot_eager) returns it without, so the frame is traced again, breaking at those
        calls (`RequiresGradRestart`), as torch.compile does (its taint of the graph)."""
        tainted = {node for node in self.graph.nodes if node.meta.get("requires_grad_called")}
        if not tainted:
            return
        for node in self.graph.nodes:
            if node not in tainted and any(arg in tainted for arg in node.all_input_nodes):
                tainted.add(node)
        for node in outputs:
            example = node.meta.get("example_value")
            if node in tainted and isinstance(example, torch.Tensor) and example.requires_grad:
                from minidynamo.translator.breaks import RequiresGradRestart

                raise RequiresGradRestart(Unsupported(
                    REQUIRES_GRAD_RETURNED, "a tensor made requires_grad_() in the graph (or "
                    "one computed from it) is returned from it", REQUIRES_GRAD_RETURNED.hint))

    def call_nodes(self) -> Iterator[torch.fx.Node]:
        """The graph's operations so far (call_function, call_method, call_module)."""
        return (node for node in self.graph.nodes if node.op.startswith("call_"))

    def call_graph(self, outputs: list[torch.fx.Node]) -> list[Instruction]:
        """Finish and compile the graph (`call_backend`); the instructions that call it
        (none if the graph is empty)."""
        remove_grad_mode_toggles(self.graph)  # a block entered just before a break
        # asked before the unused nodes go, as torch.compile asks (a loop over a tensor's
        # rows that reads none of them leaves an empty graph, compiled); a lone
        # `_set_grad_enabled(False)` is a call: the graph sets the mode when it runs
        traced_calls = any(node.op.startswith("call_") for node in self.graph.nodes)
        self.graph.output(tuple(outputs))
        self.remove_unused_nodes()
        if not outputs and not traced_calls:
            return []  # nothing for a backend to do: no graph, as in torch.compile
        gm = torch.fx.GraphModule(torch.nn.Module(), self.graph)
        name = f"__compiled_fn_{next(_global_names)}"
        if logs.is_enabled("graph_code"):
            code = gm.print_readable(print_output=False, include_stride=True, include_device=True)
            logs.graph_code_log.debug("TRACED GRAPH\n ===== %s =====\n %s\n", name, code)
        compiled = self.call_backend(gm)
        self.compiled_graph = gm
        self.f_globals[name] = self.installed_globals[name] = compiled
        instructions = [create_instruction("LOAD_GLOBAL", argval=name, arg=1)]
        prefixes = SharedPrefixes(graph_input.source for graph_input in self.graph_inputs)
        for graph_input in self.graph_inputs:
            instructions += self.load_graph_input(graph_input, prefixes)
        instructions += [
            create_instruction("PRECALL", arg=len(self.graph_inputs)),
            create_instruction("CALL", arg=len(self.graph_inputs)),
            create_instruction("STORE_FAST", argval=GRAPH_OUTPUT_LOCAL),
        ]
        return instructions + self.set_grad_mode_after(gm.graph)

    def set_grad_mode_after(self, graph: torch.fx.Graph) -> list[Instruction]:
        """`torch.set_grad_enabled(False)` left on in the graph: the grad mode its last
        `_set_grad_enabled` node leaves, set again after the call. A backend that traces
        the graph again (AOTAutograd) runs that node while tracing, not when it runs."""
        modes = [node.args[0] for node in graph.nodes if node.target is torch._C._set_grad_enabled]
        if not modes:
            return []
        setter = self.install_global("___set_grad_enabled", torch._C._set_grad_enabled)
        return [create_instruction("LOAD_GLOBAL", argval=setter, arg=1),
                create_instruction("LOAD_CONST", argval=modes[-1]),
                create_instruction("PRECALL", arg=1), create_instruction("CALL", arg=1),
                create_instruction("POP_TOP")]

    def call_backend(self, gm: torch.fx.GraphModule) -> Any:
        """Hand the graph to the backend as torch.compile does (chapter 10).

        The example inputs are the real tensors, and for an input that is a symbol (a
        dynamic size or int) the SymInt itself, so that a backend that traces again
        (AOTAutograd, Inductor) keeps it symbolic. The call runs inside a
        `TracingContext` holding this frame's FakeTensorMode: `detect_fake_mode` finds it
        there, and with it the ShapeEnv whose symbols the graph's sizes use. A backend
        that made its own fake mode from the real tensors would specialize every size.
        """
        example_inputs = []
        for graph_input in self.graph_inputs:
            example = graph_input.node.meta.get("example_value")
            example_inputs.append(example if isinstance(example, (torch.SymInt, torch.SymFloat))
                                  and not graph_input.as_tensor else graph_input.value)
        # the fakes are held until this returns: the fake mode's memo holds them weakly
        context, _fakes = self.backend_context()
        with torch._guards.tracing(context):
            compiled = self.backend(gm, example_inputs)
        if not callable(compiled):
            raise BackendCompilerFailed(self.backend, self.frame_name, TypeError(
                f"the backend returned {type(compiled).__name__}, not a callable; a backend "
                "returns something that runs the graph, e.g. gm.forward"))
        return compiled

    def backend_context(self) -> tuple[torch._guards.TracingContext, list[torch.Tensor]]:
        """What the backend traces in: a new FakeTensorMode on this frame's ShapeEnv, as
        TorchDynamo makes one. Tracing changed the inputs' FakeTensors in place
        (`x.contiguous().t_()` transposes `x`'s), so a backend that traces again
        (AOTAutograd) makes its own from the real tensors, as each is when the graph
        starts, sized by its context (`tensor_to_context`): a static input's has every
        size a constant, a dynamic input's the symbols its cache kept. A dynamic float's
        0-d tensor is made here, with its SymFloat as the answer of `item()`; the
        fakes made here are returned, to be held (the mode's memo holds them weakly)."""
        mode = torch._subclasses.FakeTensorMode(shape_env=self.shape_env)
        context, fakes = torch._guards.TracingContext(mode), []
        for graph_input in self.graph_inputs:
            value = graph_input.value
            if not isinstance(value, torch.Tensor):
                continue
            if graph_input.as_tensor:
                fake = mode.from_tensor(value, static_shapes=True)
                fake.item_memo = graph_input.node.meta["example_value"].item_memo
                fakes.append(fake)
            else:
                context.tensor_to_context[value] = self.real_contexts.get(value) or \
                    static_context(value, graph_input.source)
        return context, fakes

    def load_graph_input(self, graph_input: GraphInput,
                         prefixes: SharedPrefixes | None = None) -> list[Instruction]:
        """The instructions that push one input of the graph's call: its source (with
        `prefixes`, the starts it shares with other inputs read once), and for a
        dynamic float (chapter 9) that float made a 0-d float64 tensor, as the placeholder
        wants it (TorchDynamo's `pass_arg_as_tensor` calls `torch._as_tensor_fullprec`)."""
        load = prefixes.load if prefixes is not None else Source.reconstruct
        if not graph_input.as_tensor:
            return load(graph_input.source)
        self.install_global_as(AS_TENSOR_GLOBAL, torch._as_tensor_fullprec)
        return [
            create_instruction("LOAD_GLOBAL", argval=AS_TENSOR_GLOBAL, arg=1),
            *load(graph_input.source),
            create_instruction("PRECALL", arg=1),
            create_instruction("CALL", arg=1),
        ]

    def remove_unused_nodes(self) -> None:
        """Drop what nobody reads, as TorchDynamo does (`remove_unused_graphargs`):
        getitems, computations on symbols only (`s77 > 2`, asked by a branch and
        guarded), placeholders; a symbol's placeholder stays while a tensor input
        still has that symbol in its sizes (the backend reads it from there)."""
        for node in reversed(list(self.graph.nodes)):
            if not node.users and (node.op == "call_function" and (
                    node.target is operator.getitem or is_symbol_computation(node))
                    or is_float_read(node)):
                self.graph.erase_node(node)
        for graph_input in list(self.graph_inputs):
            if not graph_input.node.users and not binds_symbol(graph_input.node):
                self.graph.erase_node(graph_input.node)
                self.graph_inputs.remove(graph_input)
        used: set[sympy.Symbol] = set()
        for graph_input in self.graph_inputs:
            if isinstance(graph_input.value, torch.Tensor):
                used |= free_symbols(graph_input.node.meta["example_value"])
        for graph_input in list(self.graph_inputs):
            symbol = binds_symbol(graph_input.node)
            if symbol is not None and not graph_input.node.users:
                if symbol in used:
                    used.remove(symbol)  # one placeholder per symbol is enough
                    continue
                self.graph.erase_node(graph_input.node)
                self.graph_inputs.remove(graph_input)


def is_float_read(node: torch.fx.Node) -> bool:
    """`item = l_s_.item()` on a dynamic float's placeholder (`add_float_input`)."""
    return node.op == "call_method" and node.target == "item" and \
        node.args[0].op == "placeholder"


def binds_symbol(node: torch.fx.Node) -> sympy.Symbol | None:
    """The symbol a placeholder stands for (`s77`, `L_n_`), or None (a tensor)."""
    example = node.meta.get("example_value")
    if node.op == "placeholder" and isinstance(example, torch.SymInt) and isinstance(
            example.node.expr, sympy.Symbol):
        return example.node.expr
    return None


def is_symbol_computation(node: torch.fx.Node) -> bool:
    """A node computing a symbolic value from symbols and numbers (`s77 > 2`), or
    reading one (`sym_size(x, 0)`, `x._version`): pure, so removable when nothing reads it. (A symbol
    the trace later specialized, `s77` replaced by 3, is still one here.)"""
    if node.target in PURE_READS:
        return True
    if not isinstance(node.meta.get("example_value"), SYMBOLIC_TYPES):
        return False
    return all(isinstance(arg, (int, float, bool)) or (
        isinstance(arg, torch.fx.Node) and isinstance(arg.meta.get("example_value"), SYMBOLIC_TYPES))
        for arg in (*node.args, *node.kwargs.values()))


SYMBOLIC_TYPES = (torch.SymInt, torch.SymFloat, torch.SymBool)
# reads of a tensor's metadata, as nodes: a size, a stride, its version (`x._version`)
PURE_READS = (torch.ops.aten.sym_size.int, torch.ops.aten.sym_stride.int, _tensor_version)


def folded_by_algebra(example: Any, inputs: Iterable[torch.fx.Node]) -> bool:
    """A float computed from a symbol that the symbolic algebra made a number (`s * 0.0`,
    `s - s`: 0 for sympy). IEEE floats disagree when `s` is inf or NaN (NaN) or negative
    (-0.0): the graph computes it when it runs, as torch.compile's does. (`inputs` is
    iterated only for such a float.)"""
    return isinstance(example, torch.SymFloat) and any(
        is_symbolic(node.meta.get("example_value")) for node in inputs)


def arguments_of(args: tuple, kwargs: dict[str, Any]) -> Iterator[torch.fx.Node]:
    """The nodes among a call's arguments, nested ones included."""
    found: list[torch.fx.Node] = []
    torch.fx.node.map_arg((args, kwargs), found.append)
    yield from found


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
# (`_log_api_usage_once` is what nn.Module.__init__ calls first: torch.compile keeps it.)
RUN_TIME_CHECKS = frozenset({torch._assert_async, torch._assert, torch._C._log_api_usage_once})


def has_side_effect(kind: str, target: Any) -> bool:
    """Whether the operation must be recorded whatever it returns: it changes a tensor
    in place (`x.add_(1)`, `x[0] = 1`), or checks a condition when the graph runs
    (`torch._assert_async`, what an `assert` on a tensor becomes, chapter 8)."""
    if target in (operator.setitem, operator.delitem) or target in RUN_TIME_CHECKS:
        return True
    if changes_an_ndarray(target):  # `a[0] = 1` on an ndarray, a torch._numpy node
        return True
    name = target if isinstance(target, str) else getattr(target, "__name__", "")
    return name.endswith("_") and not name.startswith("_")
