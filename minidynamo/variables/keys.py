"""Dict keys and set elements: the Python value a tracker is hashed as (chapter 3).

A dict tracker maps *Python* keys to value trackers, so that `d["scale"]` finds its
value while tracing. A constant is its own key. Other values are keys too, as long
as the way Python hashes and compares them is known while tracing:

| the tracker's value | hashed and compared as |
|---|---|
| a constant (`"scale"`, `2`, a class, a function) | itself |
| a tuple of keys | the tuple of their keys |
| an object whose class keeps `object.__eq__` and `object.__hash__` (an `nn.Module`, most user objects) | its identity: the real object, or the object made while tracing |
| a tensor that is a graph input | its identity: its placeholder (one per real tensor) |
| an instance of a frozen dataclass made while tracing | its class and its fields' keys, as the generated `__eq__` / `__hash__` compare them |

A key that is not a constant is an `ObjectKey`: it compares by that identity and
keeps the tracker, so iterating the dict (`for module in memo`) gives the tracker
back and generated code rebuilds it (`key_variable`). This is how `nn.Module`'s own
`named_modules()` runs inlined: its `memo = set()` holds modules.

An object from outside the frame is guarded by identity (ID_MATCH) when it becomes
a key: whether two sources are the same object decides `module in memo`.

Compare with TorchDynamo: `torch/_dynamo/variables/dicts.py` (`HashableTracker`,
`is_hashable`) and `FrozenDataClassVariable` in `user_defined.py`.
"""

from __future__ import annotations

import dataclasses
import types
from typing import TYPE_CHECKING, Any

import torch

from minidynamo.exc import UNSUPPORTED_OPERATOR, graph_break, raise_observed
from minidynamo.variables.base import VariableTracker
from minidynamo.variables.constant import constant
from minidynamo.variables.lists import TupleVariable
from minidynamo.variables.nn_module import NNModuleVariable
from minidynamo.variables.sym_node import specialized
from minidynamo.variables.tensor import TensorVariable
from minidynamo.variables.user_defined import UserDefinedObjectVariable

if TYPE_CHECKING:
    from minidynamo.output_graph import OutputGraph
    from minidynamo.translator.base import InstructionTranslatorBase as Translator


@dataclasses.dataclass(frozen=True)
class ObjectKey:
    """A key that is not a constant: equal to another when `identity` is; `variable`
    is the tracker it stands for (not compared). `hash_value` is the hash Python gives
    the object where it is known (a frozen dataclass), so a set iterates in its order."""

    identity: Any
    hash_value: int = dataclasses.field(compare=False)
    variable: VariableTracker = dataclasses.field(compare=False)

    def __hash__(self) -> int:
        return self.hash_value

    def __repr__(self) -> str:
        return repr(self.variable)


def as_key(tx: Translator, variable: VariableTracker) -> Any:
    """The Python value `variable` is hashed as, when it is a dict key or a set element."""
    variable = specialized(tx.output.side_effects.latest(variable.realize()))  # a symbol: its number
    if variable.is_python_constant():
        key = variable.as_python_constant()
        try:
            hash(key)
        except TypeError:
            raise_observed(TypeError, f"unhashable type: {type(key).__name__!r}")
        return key
    if isinstance(variable, TupleVariable) and variable.python_type() is tuple:
        return tuple(as_key(tx, item) for item in variable.items)
    if _is_frozen_dataclass(variable):
        fields = tuple(as_key(tx, variable.attributes[field.name])
                       for field in dataclasses.fields(variable.cls) if field.compare)
        return ObjectKey((variable.cls, fields), hash(fields), variable)
    identity = _identity(tx.output, variable)
    if identity is None:
        graph_break(UNSUPPORTED_OPERATOR, f"using {variable} as a dict key or set element")
    return ObjectKey(identity, hash(identity), variable)


def hashes_by_identity(value: Any) -> bool:
    """A value whose hash and `==` are its identity's, as a tensor's hash is, a module's,
    and a plain object's: a dict keyed by it finds an entry only under that object."""
    cls = type(value)
    if isinstance(value, torch.Tensor):
        return cls.__hash__ is torch.Tensor.__hash__
    return cls.__hash__ is object.__hash__ and cls.__eq__ is object.__eq__


def key_variable(key: Any) -> VariableTracker:
    """The tracker of a key: the one an ObjectKey keeps, else a constant's."""
    if isinstance(key, ObjectKey):
        return key.variable
    if type(key) is tuple and any(isinstance(item, (ObjectKey, tuple)) for item in key):
        return TupleVariable(tuple(key_variable(item) for item in key))
    return constant(key)


def is_constant_key(key: Any) -> bool:
    """Whether `key` is a real Python value (no tracker inside), as a constant dict needs."""
    if type(key) is tuple:
        return all(is_constant_key(item) for item in key)
    return not isinstance(key, ObjectKey)


def _identity(output: OutputGraph, variable: VariableTracker) -> tuple | None:
    """What an object hashed by identity is compared by: its real object, else the
    object made while tracing. A graph input is its real tensor, as a key of a dict
    from outside is before it is realized (`VariableBuilder.object_keyed_items`)."""
    if isinstance(variable, TensorVariable):
        node = variable.node
        if node.op != "placeholder":
            return None
        if variable.source is not None:  # kept distinct or one by the aliasing guards
            output.identity_keys.add(variable.source)
        real = next(graph_input.value for graph_input in output.graph_inputs
                    if graph_input.node is node)  # one placeholder per real tensor
        return ("object", id(real))
    if not isinstance(variable, (NNModuleVariable, UserDefinedObjectVariable)):
        return None
    cls = variable.python_type()
    if cls.__eq__ is not object.__eq__ or cls.__hash__ is not object.__hash__:
        return None
    real = real_object(None, variable, guard=False)
    if real is None:
        return ("made while tracing", variable.object_id)
    # Only which keys are the same object matters, not which objects they are: the
    # aliasing guards keep that (`OutputGraph.finish_guards`), so the next call's
    # model, a copy of this one, reuses the entry (as on torch.compile).
    if variable.source is not None:
        output.identity_keys.add(variable.source)
    return ("object", id(real))


# Constants that are one object, known by identity: `id(fn)` is the same on every call
# that passes the builder's ID_MATCH guard.
IDENTITY_CONSTANTS = (type, types.FunctionType, types.BuiltinFunctionType, types.ModuleType)


def real_object(tx: Translator | None, variable: VariableTracker, guard: bool = True) -> Any:
    """The real object a tracker stands for, when it is one known by identity (`id()`
    of it is known while tracing), else None: a function, a class or a Python module,
    or a module or user object from outside the frame (guarded here by ID_MATCH,
    unless `guard` is False: then `tx` may be None)."""
    variable = variable.realize()
    if isinstance(variable, NNModuleVariable):
        real = variable.module
    elif isinstance(variable, UserDefinedObjectVariable):
        real = variable.value
    elif variable.is_python_constant():
        value = variable.as_python_constant()
        return value if isinstance(value, IDENTITY_CONSTANTS) else None
    else:
        return None
    if real is not None and guard:
        tx.output.guards.add("ID_MATCH", variable.source, real)
    return real


def _is_frozen_dataclass(variable: VariableTracker) -> bool:
    """An instance of a frozen dataclass with the generated `__eq__`, made while tracing."""
    if not isinstance(variable, UserDefinedObjectVariable) or variable.value is not None:
        return False
    params = getattr(variable.cls, "__dataclass_params__", None)
    if params is None or not (params.eq and params.frozen):
        return False
    names = [field.name for field in dataclasses.fields(variable.cls) if field.compare]
    return all(name in variable.attributes for name in names)
