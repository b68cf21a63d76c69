"""Testing helpers (chapter 5): compare minidynamo with torch.compile, eager and CPython.

Every test asks: does minidynamo do what the real thing does, computed in the same run?
CPython / eager PyTorch gives the values and the state the inputs are left in (side
effects applied exactly once); ``torch.compile`` gives the graphs.

    assert_same_as_torch(fn, *args, **kwargs)            # a graded test in one line
    comparison = compare_with_torch(fn, *args, **kwargs)  # .ok, .differences, .report()

Backends (torch's protocol, ``(gm, example_inputs) -> callable``): ``CompileCounter``
counts graphs and call nodes; ``RecordingBackend`` keeps every graph and its inputs.
Graphs as data: ``normalize_graph`` (``[("placeholder", "L_x_"), ("call_function",
"torch.relu"), ("call_method", "sum")]``), ``placeholder_names``, ``graph_signature``
(with arguments), ``target_name``. Values: ``describe_difference``,
``assert_same_value``. Runs, to reuse or cache: ``run_eager``, ``run_torch``,
``run_minidynamo`` (a function and a list of ``Call``) give ``RunResult``\ s that
``compare_runs`` and ``compare_with_eager`` compare. Trace logs: ``torch_trace_log``,
``minidynamo_trace_log``, ``capture_trace``, ``trace_opnames``. ``strict_mode()`` sets
``minidynamo.config.strict`` (the runs use it by default), so an internal error
raises instead of falling back to eager.

Layering: on top of the package; ``minidynamo.api`` is imported only inside functions.
"""

from __future__ import annotations

import collections
import contextlib
import copy
import dataclasses
import enum
import importlib
import math
import os
import traceback
import types
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import torch
import torch.fx

__all__ = [  # in the order of this file
    "CompileCounter", "RecordingBackend", "target_name", "normalize_graph", "placeholder_names",
    "graph_signature", "describe_difference", "assert_same_value",
    "Call", "RunResult", "run_eager", "run_torch", "run_minidynamo", "strict_mode",
    "Difference", "Comparison", "compare_runs", "compare_with_eager",
    "compare_calls_with_torch", "compare_with_torch", "assert_same_as_torch",
    "TraceLine", "torch_trace_log", "minidynamo_trace_log", "capture_trace", "trace_opnames",
]  # fmt: skip


from minidynamo.trace_logs import (  # noqa: F401  (re-exported: trace logs as data)
    MINIDYNAMO_BREAKS_LOGGER, TraceLine, capture_log, capture_trace, trace_opnames,
)


## Backends ############################################################################


class CompileCounter:
    """A backend that counts what it is given, and runs each graph as it is.

    ``frame_count`` is the number of graphs compiled (one per captured frame or
    graph-break piece); ``op_count`` the number of ``call_*`` nodes in them, exactly
    as ``torch._dynamo.testing.CompileCounter`` counts.
    """

    def __init__(self) -> None:
        self.clear()

    def __call__(self, gm: torch.fx.GraphModule, example_inputs: list) -> Callable:
        self.frame_count += 1
        self.op_count += sum(1 for node in gm.graph.nodes if node.op.startswith("call"))
        return gm.forward

    def clear(self) -> None:
        self.frame_count = 0
        self.op_count = 0


class RecordingBackend:
    """A backend that keeps every graph it is given, with its example inputs, and
    runs each graph as it is (``gm.forward``, like the "eager" backend)."""

    def __init__(self) -> None:
        self.graphs: list[torch.fx.GraphModule] = []
        self.example_inputs: list[list] = []

    def __call__(self, gm: torch.fx.GraphModule, example_inputs: list) -> Callable:
        self.graphs.append(gm)
        self.example_inputs.append(list(example_inputs))
        return gm.forward


## Graph normalisation #################################################################

# C modules by the names users write; minidynamo's graph helpers by torch.compile's (closures).
_MODULE_ALIASES = {"_operator": "operator", "torch._C._VariableFunctions": "torch"}
_HELPER_ALIASES = {"minidynamo.variables.tensor.lower_version_by_one": "torch._dynamo.variables.builtin.SetAttrBuiltinVariable._call_setattr.<locals>._lower_version_count_by_1"}  # noqa: E501


def target_name(target: Any) -> str:
    """A stable, readable name for an FX node's target.

    ``"sum"`` (a method name) stays as it is; ``operator.add``, ``torch.relu``,
    ``torch._C._nn.linear``, ``torch.nn.functional.relu``, ``torch.Tensor.add``
    (an unbound tensor method), ``aten.add.Tensor`` (an operator overload) are named
    the way a user would spell them, never by address.
    """
    if isinstance(target, str):
        return target
    if isinstance(target, (torch._ops.OpOverload, torch._ops.OpOverloadPacket)):
        return str(target)
    owner = getattr(target, "__objclass__", None)
    if owner is not None and callable(target):  # an unbound C method: torch.Tensor.add
        owner_name = "torch.Tensor" if issubclass(owner, torch._C.TensorBase) else owner.__qualname__
        return f"{owner_name}.{target.__name__}"
    module = getattr(target, "__module__", None) or ""
    module = _MODULE_ALIASES.get(module, module)
    if isinstance(target, types.BuiltinFunctionType):
        name = target.__name__  # torch.relu's qualname is "_VariableFunctionsClass.relu"
    else:
        name = getattr(target, "__qualname__", None) or getattr(target, "__name__", None)
    if name is None:
        return repr(target)
    return _HELPER_ALIASES.get(f"{module}.{name}", f"{module}.{name}") if module else name


def normalize_graph(gm: torch.fx.GraphModule) -> list[tuple[str, str]]:
    """The graph as a list of ``(op kind, name)`` pairs, in node order.

    Placeholders are named by their target (``L_x_``,
    ``L_self_modules_fc_parameters_weight_``: TorchDynamo encodes the input's
    *source* in the name); ``get_attr`` nodes by the attribute path; calls by
    :func:`target_name`. The output node is left out (see :func:`graph_signature`).
    """
    return [(node.op, target_name(node.target)) for node in gm.graph.nodes if node.op != "output"]


def placeholder_names(gm: torch.fx.GraphModule) -> list[str]:
    """The graph's inputs, in order, by name (``["L_x_", "L_y_"]``)."""
    return [node.target for node in gm.graph.nodes if node.op == "placeholder"]


def graph_signature(gm: torch.fx.GraphModule) -> list[tuple]:
    """The graph with its arguments: ``(op, name, args, kwargs)`` per node.

    Node arguments are written as ``%i``, the index of the node they refer to, so two
    graphs with the same structure compare equal whatever their nodes are called;
    constants are kept (``torch.Size`` becomes a tuple, dtypes and devices strings).
    The output node is included.
    """
    index = {node: position for position, node in enumerate(gm.graph.nodes)}

    def normal(value: Any) -> Any:
        if isinstance(value, torch.fx.Node):
            return f"%{index[value]}"
        if isinstance(value, (list, tuple)):  # torch.Size is a tuple
            return tuple(normal(item) for item in value)
        if isinstance(value, dict):
            return tuple((key, normal(item)) for key, item in value.items())
        if isinstance(value, slice):
            return ("slice", normal(value.start), normal(value.stop), normal(value.step))
        if isinstance(value, torch.Tensor):
            return ("tensor", tuple(value.shape), str(value.dtype))
        if isinstance(value, (torch.dtype, torch.device, torch.memory_format, torch.layout)):
            return str(value)
        if isinstance(value, float) and math.isnan(value):
            return "nan"
        if callable(value) or isinstance(value, enum.Enum):
            return target_name(value)
        return value

    return [
        (node.op, target_name(node.target), normal(node.args), normal(node.kwargs))
        for node in gm.graph.nodes
    ]


## Comparing values ####################################################################


def describe_difference(expected: Any, actual: Any, path: str = "value") -> str | None:
    """None when ``actual`` equals ``expected``, else one line saying where they differ.

    Tensors are compared like ``torch.testing.assert_close`` (dtype, device, shape,
    values within the default tolerances; NaNs equal); Python values exactly, type
    included (``1``, ``1.0`` and ``True`` are three different answers); lists, tuples,
    dicts, sets, namedtuples and objects with a ``__dict__`` (user classes,
    ``nn.Module``) element by element. ``path`` names the top value in the message.
    """
    return _describe(expected, actual, path, set())


def assert_same_value(expected: Any, actual: Any, path: str = "value") -> None:
    """Raise AssertionError, saying where, unless :func:`describe_difference` is None."""
    difference = describe_difference(expected, actual, path)
    if difference is not None:
        raise AssertionError(difference)


def _describe(expected: Any, actual: Any, path: str, seen: set) -> str | None:
    if expected is actual:
        return None
    if _same_namedtuple_shape(expected, actual):  # e.g. a namedtuple class made per call
        return _describe_sequence(expected, actual, path, seen)
    if type(expected) is not type(actual):
        expected_type, actual_type = type(expected).__name__, type(actual).__name__
        return f"{path}: expected {_short(expected)} ({expected_type}), got {_short(actual)} ({actual_type})"
    if (id(expected), id(actual)) in seen:  # a cycle, or a pair already compared
        return None
    seen.add((id(expected), id(actual)))
    if isinstance(expected, torch.Tensor) or type(expected).__name__ == "ndarray":  # numpy's
        return _describe_tensor(torch.as_tensor(expected), torch.as_tensor(actual), path)
    if isinstance(expected, torch.nn.Module):
        return _describe_dict(_module_state(expected), _module_state(actual), path, seen)
    if isinstance(expected, (list, tuple)):
        return _describe_sequence(expected, actual, path, seen)
    if isinstance(expected, collections.deque):  # the items, then the maxlen
        return _describe_sequence([*expected, expected.maxlen], [*actual, actual.maxlen], path, seen)
    if isinstance(expected, dict):
        return _describe_dict(expected, actual, path, seen)
    if isinstance(expected, float):
        same = expected == actual or (math.isnan(expected) and math.isnan(actual))
        return None if same else f"{path}: expected {expected!r}, got {actual!r}"
    if _compares_by_identity(expected):
        return _describe_dict(vars(expected), vars(actual), f"{path}.__dict__", seen)
    try:
        same = bool(expected == actual)
    except Exception as error:  # noqa: BLE001 - a value that cannot be compared is a difference
        return f"{path}: cannot compare {_short(expected)} with {_short(actual)}: {error}"
    return None if same else f"{path}: expected {_short(expected)}, got {_short(actual)}"


def _describe_tensor(expected: torch.Tensor, actual: torch.Tensor, path: str) -> str | None:
    if expected.requires_grad != actual.requires_grad:  # e.g. a lost `with torch.no_grad()`
        return (f"{path}: expected requires_grad={expected.requires_grad}, "
                f"got requires_grad={actual.requires_grad}")
    try:
        torch.testing.assert_close(actual, expected, equal_nan=True, check_stride=False)
    except AssertionError as error:
        first_line = str(error).strip().splitlines()[0]
        return f"{path}: tensors differ: {first_line}"
    return None


def _describe_sequence(expected: Sequence, actual: Sequence, path: str, seen: set) -> str | None:
    if len(expected) != len(actual):
        return f"{path}: expected length {len(expected)}, got {len(actual)}: {_short(actual)}"
    for position, (left, right) in enumerate(zip(expected, actual)):
        difference = _describe(left, right, f"{path}[{position}]", seen)
        if difference is not None:
            return difference
    return None


def _describe_dict(expected: dict, actual: dict, path: str, seen: set) -> str | None:
    """Keys that each run copies (tensors, modules, objects hashed by identity) are
    compared in order with the values, as the copies of one dict; others by equality."""
    if all(isinstance(key, (str, int, float, bytes, tuple, type(None))) for key in expected):
        if list(expected) != list(actual):
            return f"{path}: expected keys {list(expected)!r}, got {list(actual)!r}"
        pairs = [(f"{path}[{key!r}]", expected[key], actual[key]) for key in expected]
    elif len(expected) != len(actual):
        return f"{path}: expected {len(expected)} keys, got {len(actual)}"
    else:
        pairs = [(f"{path}.{part}()[{position}]", left, right)
                 for part in ("keys", "values")
                 for position, (left, right) in enumerate(zip(getattr(expected, part)(),
                                                              getattr(actual, part)()))]
    for where, left, right in pairs:
        difference = _describe(left, right, where, seen)
        if difference is not None:
            return difference
    return None


def _same_namedtuple_shape(expected: Any, actual: Any) -> bool:
    """Two namedtuples of classes with the same name and fields."""
    return (
        isinstance(expected, tuple)
        and isinstance(actual, tuple)
        and hasattr(expected, "_fields")
        and getattr(actual, "_fields", None) == expected._fields
        and type(expected).__name__ == type(actual).__name__
    )


def _module_state(module: torch.nn.Module) -> dict[str, Any]:
    """What a module's user can observe: training flags, parameters, buffers, public attributes."""
    state: dict[str, Any] = {}
    for prefix, submodule in module.named_modules():
        where = f"{prefix}." if prefix else ""
        state[f"{where}training"] = submodule.training
        for name, value in vars(submodule).items():
            if not name.startswith("_") and name != "training":
                state[f"{where}{name}"] = value
    state.update({f"parameter {name}": value for name, value in module.named_parameters()})
    state.update({f"buffer {name}": value for name, value in module.named_buffers()})
    return state


def _compares_by_identity(value: Any) -> bool:
    """Objects whose ``==`` is ``is`` (user classes): compare their attributes."""
    plain_object = type(value).__eq__ is object.__eq__ and hasattr(value, "__dict__")
    return plain_object and not isinstance(value, (types.FunctionType, types.ModuleType, type))


def _short(value: Any, limit: int = 120) -> str:
    if isinstance(value, torch.Tensor):
        return f"tensor(shape={tuple(value.shape)}, dtype={value.dtype})"
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - any repr failure still needs a description
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


## Running a function three ways #######################################################


@dataclasses.dataclass
class Call:
    """The arguments of one call: ``Call((x, y), {"scale": 2})``."""

    args: tuple = ()
    kwargs: dict = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class Outcome:
    """What one call did: its return value, or the exception it raised."""

    value: Any = None
    error: BaseException | None = None

    def describe(self) -> str:
        if self.error is not None:
            return f"raised {_describe_error(self.error)}"
        return f"returned {_short(self.value)}"


@dataclasses.dataclass
class RunResult:
    """One way of running a function over a list of calls, and what it left behind.

    ``outcomes[i]`` is call *i*'s return value or exception; ``inputs_after[i]`` is
    ``(fn, args, kwargs)`` of call *i* after it ran (the function is included because
    a module's buffers and attributes are inputs too); ``graphs`` and
    ``example_inputs`` are what the backend received (empty for eager).
    """

    name: str
    outcomes: list[Outcome]
    inputs_after: list[tuple]
    graphs: list[torch.fx.GraphModule] = dataclasses.field(default_factory=list)
    example_inputs: list[list] = dataclasses.field(default_factory=list)
    error: BaseException | None = None  # compiling itself failed (before any call)
    graph_breaks: list[str] = dataclasses.field(default_factory=list)  # minidynamo's log

    @property
    def graph_count(self) -> int:
        return len(self.graphs)

    def normalized_graphs(self) -> list[list[tuple[str, str]]]:
        return [normalize_graph(gm) for gm in self.graphs]


def run_eager(fn: Callable, calls: Sequence[Call]) -> RunResult:
    """Run ``fn`` as plain Python / eager PyTorch, each call on fresh copies."""
    return _run("eager", lambda function: function, fn, calls)


def run_torch(
    fn: Callable,
    calls: Sequence[Call],
    *,
    fullgraph: bool = False,
    dynamic: bool | None = None,
    backend: str | Callable | None = None,
) -> RunResult:
    """Run ``fn`` under ``torch.compile`` (after ``torch._dynamo.reset()``).

    With ``backend`` None a :class:`RecordingBackend` keeps the graphs; a backend
    name or callable is handed to torch.compile as it is (nothing is recorded)."""
    torch._dynamo.reset()
    return _run_compiled("torch.compile", torch.compile, fn, calls, fullgraph, dynamic, backend)


def run_minidynamo(
    fn: Callable,
    calls: Sequence[Call],
    *,
    fullgraph: bool = False,
    dynamic: bool | None = None,
    backend: str | Callable | None = None,
    strict: bool = True,
) -> RunResult:
    """Run ``fn`` under ``minidynamo.compile`` (after ``minidynamo.reset()``), in
    strict mode unless ``strict`` is False. ``backend`` as in :func:`run_torch`:
    a name is handed over as it is, so minidynamo's own backend lookup is tested."""
    api = _minidynamo_api()
    api.reset()
    with strict_mode(strict), capture_log(MINIDYNAMO_BREAKS_LOGGER, str, silence=False) as breaks:
        result = _run_compiled("minidynamo", api.compile, fn, calls, fullgraph, dynamic, backend)
    result.graph_breaks = breaks
    return result


def _run_compiled(name, compile_fn, fn, calls, fullgraph, dynamic, backend) -> RunResult:
    recorder = RecordingBackend()

    def compile_it(function: Callable) -> Callable:
        chosen = recorder if backend is None else backend
        return compile_fn(function, backend=chosen, fullgraph=fullgraph, dynamic=dynamic)

    result = _run(name, compile_it, fn, calls)
    result.graphs, result.example_inputs = recorder.graphs, recorder.example_inputs
    return result


def _run(name: str, compile_it: Callable, fn: Callable, calls: Sequence[Call]) -> RunResult:
    """Compile ``fn`` once; make each call on deep copies of its arguments. A module
    is copied once per run (its state carries over calls) and snapshotted after each."""
    function = copy.deepcopy(fn) if isinstance(fn, torch.nn.Module) else fn
    try:
        compiled = compile_it(function)
    except Exception as error:  # noqa: BLE001 - reported, not raised
        return RunResult(name, [], [], error=error)
    outcomes, inputs_after = [], []
    for call in calls:
        args, kwargs = copy.deepcopy((call.args, call.kwargs))
        torch.manual_seed(0)  # random ops draw the same numbers in every run
        try:
            outcomes.append(Outcome(value=compiled(*args, **kwargs)))
        except Exception as error:  # noqa: BLE001 - an exception is an outcome too
            outcomes.append(Outcome(error=error))
        snapshot = copy.deepcopy(function) if isinstance(function, torch.nn.Module) else function
        inputs_after.append((snapshot, args, kwargs))
    return RunResult(name, outcomes, inputs_after)


def _minidynamo_api() -> types.ModuleType:
    return importlib.import_module("minidynamo.api")  # on first use: see the docstring


@contextlib.contextmanager
def strict_mode(enabled: bool = True) -> Iterator[None]:
    """Set ``minidynamo.config.strict`` in a ``with`` block: an internal error then
    raises instead of falling back to eager, so a stub cannot pass by not compiling."""
    config = importlib.import_module("minidynamo.config")
    previous = config.strict
    config.strict = enabled
    try:
        yield
    finally:
        config.strict = previous


## Comparing runs ######################################################################


@dataclasses.dataclass(frozen=True)
class Difference:
    """One way two runs disagree. ``kind`` is one of ``Comparison.KINDS``."""

    kind: str
    detail: str

    def __str__(self) -> str:
        return f"[{self.kind}] {self.detail}"


@dataclasses.dataclass(repr=False)
class Comparison:
    """minidynamo against torch.compile (graphs) and eager (values, side effects).

    ``ok`` is True when ``differences`` is empty; ``report()`` shows them with both
    compilers' normalised graphs; the runs stay available as ``eager``, ``torch``,
    ``minidynamo``. Kinds of difference: ``error`` (compiling failed), ``output``
    (a value or exception differs from eager's), ``side effects`` (the inputs after
    the call differ from eager's), ``graph count``, ``placeholders`` (by name, which
    encodes the source), ``ops`` (normalised targets in order), ``op arguments``;
    ``backend ...`` for the run with a real backend. ``reference ...`` kinds mean
    torch.compile itself disagrees with eager: the program is not a fair test.
    """

    function: str
    eager: RunResult
    torch: RunResult
    minidynamo: RunResult
    differences: list[Difference]

    @property
    def ok(self) -> bool:
        return not self.differences

    def kinds(self) -> set[str]:
        return {difference.kind for difference in self.differences}

    def report(self) -> str:
        verdict = "same as torch.compile" if self.ok else f"{len(self.differences)} difference(s)"
        lines = [f"{self.function}: {verdict}"]
        lines += [f"  {difference}" for difference in self.differences]
        for run in (self.torch, self.minidynamo):
            lines.append(f"  {run.name}: {run.graph_count} graph(s)")
            for number, ops in enumerate(run.normalized_graphs()):
                lines.append(f"    graph {number}: " + ", ".join(f"{op}:{name}" for op, name in ops))
            lines += [f"    graph break: {message}" for message in run.graph_breaks]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.report()

    def __repr__(self) -> str:
        return f"Comparison({self.function!r}, differences={sorted(self.kinds())})"


def compare_runs(eager: RunResult, reference: RunResult, candidate: RunResult, name: str = "") -> Comparison:
    """Compare finished runs: ``candidate`` (minidynamo) against ``reference``
    (torch.compile) on graphs, and both against ``eager`` on values and side effects.

    Use it to reuse runs, e.g. a torch.compile reference cached for a test session.
    """
    differences = compare_with_eager(eager, reference, prefix="reference")
    differences += compare_with_eager(eager, candidate)
    if candidate.error is None and reference.error is None:
        differences += _compare_graphs(reference, candidate)
    return Comparison(name, eager, reference, candidate, differences)


def compare_with_eager(eager: RunResult, run: RunResult, prefix: str = "") -> list[Difference]:
    """Return values and inputs-after-the-call of ``run`` against eager's.

    Kinds are ``"output"``, ``"side effects"`` and ``"error"`` (compiling failed);
    a ``prefix`` is put in front of them (``"reference output"``: the reference
    itself disagrees with eager).
    """

    def kind(name: str) -> str:
        return f"{prefix} {name}" if prefix else name

    if run.error is not None:
        return [Difference(kind("error"), f"{run.name} failed to compile: {_describe_error(run.error)}")]
    differences = []
    for number, (expected, actual) in enumerate(zip(eager.outcomes, run.outcomes)):
        call = f"call {number}: " if len(eager.outcomes) > 1 else ""
        problem = _compare_outcomes(expected, actual, "result")
        if problem is not None:
            differences.append(Difference(kind("output"), f"{call}{run.name} {problem}"))
        problem = _describe_inputs(eager.inputs_after[number], run.inputs_after[number])
        if problem is not None:
            differences.append(Difference(kind("side effects"), f"{call}{run.name}: {problem}"))
    return differences


def _compare_outcomes(expected: Outcome, actual: Outcome, path: str) -> str | None:
    if expected.error is None and actual.error is None:
        return describe_difference(expected.value, actual.value, path)
    if type(expected.error) is type(actual.error):  # the same exception type
        return None
    return f"{actual.describe()}, eager {expected.describe()}"


def _describe_inputs(expected: tuple, actual: tuple) -> str | None:
    """The inputs after the call: the function (a module's state), args, kwargs."""
    function, args, kwargs = expected
    other_function, other_args, other_kwargs = actual
    if isinstance(function, torch.nn.Module):
        difference = describe_difference(function, other_function, "self")
        if difference is not None:
            return difference
    return describe_difference(args, other_args, "args") or describe_difference(
        kwargs, other_kwargs, "kwargs"
    )


def _compare_graphs(reference: RunResult, candidate: RunResult) -> list[Difference]:
    if reference.graph_count != candidate.graph_count:
        counts = f"torch.compile captured {reference.graph_count} graph(s), "
        counts += f"minidynamo {candidate.graph_count}"
        if candidate.graph_breaks:
            counts += f" (first graph break: {candidate.graph_breaks[0].splitlines()[0]})"
        return [Difference("graph count", counts)]
    differences = []
    for number, (torch_gm, mini_gm) in enumerate(zip(reference.graphs, candidate.graphs)):
        differences += _compare_graph(number, torch_gm, mini_gm)
    return differences


def _compare_graph(
    number: int, torch_gm: torch.fx.GraphModule, mini_gm: torch.fx.GraphModule
) -> list[Difference]:
    where = f"graph {number}"
    torch_inputs, mini_inputs = placeholder_names(torch_gm), placeholder_names(mini_gm)
    differences = []
    if torch_inputs != mini_inputs:
        found = f"{where}: torch.compile {torch_inputs}, minidynamo {mini_inputs}"
        differences.append(Difference("placeholders", found))
    torch_ops = [op for op in normalize_graph(torch_gm) if op[0] != "placeholder"]
    mini_ops = [op for op in normalize_graph(mini_gm) if op[0] != "placeholder"]
    if torch_ops != mini_ops:
        differences.append(Difference("ops", f"{where}: {_first_mismatch(torch_ops, mini_ops)}"))
    if differences:  # node indexes in the arguments would not line up
        return differences
    torch_nodes, mini_nodes = graph_signature(torch_gm), graph_signature(mini_gm)
    if torch_nodes != mini_nodes:
        return [Difference("op arguments", f"{where}: {_first_mismatch(torch_nodes, mini_nodes)}")]
    return []


def _first_mismatch(expected: list, actual: list) -> str:
    for position, (left, right) in enumerate(zip(expected, actual)):
        if left != right:
            return f"node {position}: torch.compile {left}, minidynamo {right}"
    if len(expected) > len(actual):
        return f"minidynamo lacks {expected[len(actual):]}"
    return f"minidynamo has extra {actual[len(expected):]}"


def _describe_error(error: BaseException) -> str:
    """``Type: first line of the message (file:line in function)``: the innermost
    frame that raised it, passing over ``minidynamo/exc.py`` (which only builds
    graph-break errors) to the handler that called it."""
    message = f"{type(error).__name__}: {error}".splitlines()[0]
    frames = [frame for frame in traceback.extract_tb(error.__traceback__)
              if not frame.filename.endswith(os.path.join("minidynamo", "exc.py"))]
    if not frames:
        return message
    last = frames[-1]
    return f"{message} ({os.path.basename(last.filename)}:{last.lineno} in {last.name})"


## Entry points for tests ############################################################


def compare_calls_with_torch(
    fn: Callable,
    calls: Sequence[Call | tuple],
    *,
    fullgraph: bool = False,
    backend: str | Callable = "eager",
    dynamic: bool | None = None,
    strict: bool = True,
) -> Comparison:
    """:func:`compare_with_torch` over several calls of one compiled function (a
    call is a ``Call`` or a tuple of positional arguments); recompilations show up as
    extra graphs."""
    calls = [call if isinstance(call, Call) else Call(tuple(call)) for call in calls]
    options = {"fullgraph": fullgraph, "dynamic": dynamic}
    eager = run_eager(fn, calls)
    reference = run_torch(fn, calls, **options)
    candidate = run_minidynamo(fn, calls, strict=strict, **options)
    comparison = compare_runs(eager, reference, candidate, getattr(fn, "__qualname__", type(fn).__qualname__))
    if backend != "eager":  # once more each, with the real backend: values must be eager's
        reference_run = run_torch(fn, calls, backend=backend, **options)
        candidate_run = run_minidynamo(fn, calls, backend=backend, strict=strict, **options)
        for run, prefix in ((reference_run, "reference backend"), (candidate_run, "backend")):
            for found in compare_with_eager(eager, run, prefix=prefix):
                comparison.differences.append(Difference(found.kind, f"backend={backend!r}: {found.detail}"))
    return comparison


def compare_with_torch(
    fn: Callable,
    *args: Any,
    fullgraph: bool = False,
    backend: str | Callable = "eager",
    dynamic: bool | None = None,
    strict: bool = True,
    **kwargs: Any,
) -> Comparison:
    """Run ``fn(*args, **kwargs)`` eagerly, under torch.compile and under minidynamo.

    Each run starts from ``torch._dynamo.reset()`` / ``minidynamo.reset()`` and from
    deep copies of the arguments (and of ``fn`` when it is an ``nn.Module``), so
    mutations do not leak between runs; ``torch.manual_seed(0)`` precedes each call.
    Both compilers get a :class:`RecordingBackend`; the comparison covers graph count,
    placeholders, normalised ops and their arguments (against torch.compile), return
    values and the inputs after the call (against eager, so a side effect applied twice
    or not at all is caught). With ``backend`` other than ``"eager"`` both compilers
    run once more with that backend, whose values must match eager's too.

    ``fullgraph``, ``backend``, ``dynamic`` and ``strict`` are the harness's own
    keywords; to pass an argument of that name to ``fn``, wrap ``fn`` in a lambda.
    """
    options = {"fullgraph": fullgraph, "backend": backend, "dynamic": dynamic, "strict": strict}
    return compare_calls_with_torch(fn, [Call(args, kwargs)], **options)


def assert_same_as_torch(
    fn: Callable,
    *args: Any,
    fullgraph: bool = False,
    backend: str | Callable = "eager",
    dynamic: bool | None = None,
    strict: bool = True,
    ignore: Sequence[str] = (),
    **kwargs: Any,
) -> Comparison:
    """:func:`compare_with_torch`, failing the test with the report unless every
    difference is of a kind listed in ``ignore`` (e.g. ``ignore=("op arguments",)``).
    Returns the comparison for further assertions."""
    comparison = compare_with_torch(
        fn, *args, fullgraph=fullgraph, backend=backend, dynamic=dynamic, strict=strict, **kwargs
    )
    remaining = [difference for difference in comparison.differences if difference.kind not in ignore]
    if remaining:
        raise AssertionError(comparison.report())
    return comparison


## Trace logs ########################################################################


def torch_trace_log(fn: Callable, *args: Any, **kwargs: Any) -> list[TraceLine]:
    """TorchDynamo's ``trace_bytecode`` log (``TORCH_LOGS=trace_bytecode``) of
    compiling and calling ``fn(*args, **kwargs)`` once, eager backend."""
    torch._dynamo.reset()
    with capture_trace("torch") as lines:
        torch.compile(fn, backend="eager")(*copy.deepcopy(args), **copy.deepcopy(kwargs))
    return lines


def minidynamo_trace_log(fn: Callable, *args: Any, **kwargs: Any) -> list[TraceLine]:
    """minidynamo's ``trace_bytecode`` log (``MINIDYNAMO_LOGS=trace_bytecode``) of
    compiling and calling ``fn(*args, **kwargs)`` once, eager backend, strict mode."""
    api = _minidynamo_api()
    api.reset()
    with strict_mode(), capture_trace("minidynamo") as lines:
        api.compile(fn, backend="eager")(*copy.deepcopy(args), **copy.deepcopy(kwargs))
    return lines
