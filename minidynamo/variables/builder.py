"""VariableBuilder: a real Python value plus its source becomes a tracker (chapter 4).

Values enter tracing from outside the traced code: frame arguments, globals,
attributes of modules and objects, items of input containers. The builder looks
at the *real* value once and picks its tracker by a table of rules
(`VariableBuilder.RULES`, first match wins):

| value | tracker |
|---|---|
| a tensor | `TensorVariable` and a new graph input named after the source |
| a numpy array or scalar | `NumpyNdarrayVariable`, a graph input fed `torch.as_tensor(a)` |
| an int whose value changes (chapter 9) | `SymNodeVariable` and a graph input `L_n_` |
| int, float, str, None, dtype ... | `ConstantVariable` (specialised: its value is baked in) |
| list / tuple / dict / set | a container whose items are *lazy*, with item sources |
| nn.Module | `NNModuleVariable` |
| torch function | `TorchFunctionVariable` |
| numpy function or class (`np.tanh`, `np.float32`) | `NumpyVariable` |
| builtin / Python function | `BuiltinVariable` / `UserFunctionVariable` |
| class / module / cell | `UserDefinedClassVariable` / `PythonModuleVariable` / `CellVariable` |
| anything else | `UserDefinedObjectVariable` |

Mutable objects and tensors are built once per Python object: the side-effect
table remembers them by identity, so `f(xs, xs)` sees one list and `f(x, x)` one
graph input.

Compare with TorchDynamo: `torch/_dynamo/variables/builder.py`
(`VariableBuilder._wrap`, 1,174 lines in 2.13; `wrap_tensor`, `wrap_listlike`).
"""

from __future__ import annotations

import collections
import contextlib
import functools
import sys
import types
from typing import TYPE_CHECKING, Any, Callable

import numpy as np
import torch

from minidynamo.exc import UNSUPPORTED_VALUE, graph_break
from minidynamo.guards import constant_guard_kind, raw_keys
from minidynamo import polyfills
from minidynamo.shapes import dynamic_dims, is_dynamic_float, is_dynamic_int
from minidynamo.sources import (
    AttrSource,
    DictGetItemSource,
    DictKeySource,
    DictValueSource,
    GenericAttrSource,
    GetItemSource,
    ListGetItemSource,
    NumpyTensorSource,
    Source,
    closure_cell_source,
    is_module_state,
)
from minidynamo.variables.base import VariableTracker, new_object_id
from minidynamo.variables.builtins import BuiltinVariable, is_builtin
from minidynamo.variables.constant import ConstantVariable, is_constant_value, is_dict_key_value
from minidynamo.variables.ctx_manager import (
    GradModeClassVariable,
    GradModeVariable,
    is_grad_mode_class,
    is_grad_mode_object,
)
from minidynamo.variables.dicts import (
    ConstDictVariable,
    DictPartVariable,
    MappingProxyVariable,
    SetVariable,
)
from minidynamo.variables.exceptions import ExceptionClassVariable, is_exception_class
from minidynamo.variables.functions import (
    CellVariable,
    PartialVariable,
    UserFunctionVariable,
    UserMethodVariable,
)
from minidynamo.variables.frozen import FrozenFunctionVariable, is_frozen_function
from minidynamo.variables.keys import ObjectKey, hashes_by_identity
from minidynamo.variables.lazy import LazyVariableTracker, build_lazily
from minidynamo.variables.lists import (
    ListPartVariable,
    ListVariable,
    NamedTupleVariable,
    RangeVariable,
    SizeVariable,
    TupleVariable,
)
from minidynamo.variables.misc import PythonModuleVariable
from minidynamo.variables.nn_module import NNModuleVariable
from minidynamo.variables.numpy import NumpyNdarrayVariable, NumpyVariable, is_numpy_callable
from minidynamo.variables.torch import (
    SkippedFunctionVariable,
    TorchFunctionVariable,
    TracingStateFunctionVariable,
    is_skipped_function,
    is_torch_function,
    is_tracing_state_function,
)
from minidynamo.variables.user_classes import MethodDescriptorVariable, UserDefinedClassVariable
from minidynamo.variables.user_defined import (
    BUILTIN_METHOD_DESCRIPTORS,
    UserDefinedDictVariable,
    UserDefinedObjectVariable,
    UserDefinedSequenceVariable,
    dict_base,
    is_dict_subclass_instance,
    is_sequence_subclass_instance,
)

if TYPE_CHECKING:
    from minidynamo.output_graph import OutputGraph


DICT_CLASSES = (dict, collections.OrderedDict, collections.defaultdict)
LRU_CACHE_WRAPPER = type(functools.lru_cache(lambda: None))


def is_compiled_function(value: Any) -> bool:
    """A wrapper made by `minidynamo.compile` (it remembers the function it wraps)."""
    return isinstance(value, types.FunctionType) and "_minidynamo_original" in vars(value)


# Set items besides constants that a set tracker holds: hashed by identity, never changed.
IDENTITY_SET_ITEMS = (type, types.FunctionType, types.BuiltinFunctionType)

CONTEXTMANAGER_CODE = contextlib.contextmanager(lambda: None).__code__  # contextlib's `helper`

# The profiler's context managers, ignored while tracing (`polyfills.ignored_profiler_context`)
PROFILER_CONTEXTS = (torch.profiler.record_function, torch.autograd.profiler.record_function,
                     torch.profiler.profile, torch.autograd.profiler.profile)


def is_contextmanager_function(value: Any) -> bool:
    """A function made by `@contextlib.contextmanager` (its code is contextlib's helper)."""
    return isinstance(value, types.FunctionType) and value.__code__ is CONTEXTMANAGER_CODE


def by_name(method: str) -> Callable[[VariableBuilder, Any], VariableTracker]:
    """A rule's action: call the builder's method `method`, looked up when the rule fires.

    Storing `wrap_tuple` itself in `RULES` would freeze the function defined here;
    looking it up by name runs whatever `VariableBuilder.wrap_tuple` is at that
    moment (a subclass's, or a student's plugged in by the course)."""

    def build(builder: VariableBuilder, value: Any) -> VariableTracker:
        return getattr(builder, method)(value)

    build.__name__ = build.__qualname__ = method  # RULES print as wrap_tensor, wrap_constant ...
    return build


class VariableBuilder:
    """Builds the tracker of one real value found at `source` (None: made by the tracer)."""

    def __init__(self, output: OutputGraph, source: Source | None) -> None:
        self.output = output
        self.source = source

    def __call__(self, value: Any) -> VariableTracker:
        known = self.output.side_effects.existing_variable(value)
        if known is not None:
            return known  # the same mutable object or tensor, seen again
        for matches, build in self.RULES:
            if matches(value):
                return build(self, value)
        return self.wrap_object(value)

    def guard(self, kind: str, value: Any, **details: Any) -> None:
        """The trace now depends on `value`: guard it (chapter 9; nothing without a source)."""
        self.output.guards.add(kind, self.source, value, **details)

    def keys_guard(self, value: Any) -> Callable[[], None] | None:
        """A dict's TYPE_MATCH, added now, and its DICT_KEYS guard, for its tracker to add
        when the trace first reads all its keys (`ConstDictVariable.items`); the keys
        are the ones it has now, in order. None without a source: nothing to guard."""
        if self.source is None:
            return None
        self.guard("TYPE_MATCH", value)
        keys = raw_keys(value) if isinstance(value, dict) else list(value.keys())
        return functools.partial(self.output.guards.add, "DICT_KEYS", self.source, value, keys=keys)

    # -- children of containers: lazy, with item sources ------------------------

    def child(self, value: Any, index: Any) -> VariableTracker:
        """An item of a container: lazy if it has a source, built now otherwise."""
        if self.source is None:
            return VariableBuilder(self.output, None)(value)
        return LazyVariableTracker(value, self.output, source=GetItemSource(self.source, index))

    # -- one method per kind of value ---------------------------------------

    def wrap_tensor(self, value: torch.Tensor) -> VariableTracker:
        if self.source is None:
            graph_break(UNSUPPORTED_VALUE, "a tensor with no source cannot become a graph input")
        output = self.output
        static = isinstance(value, torch.nn.Parameter) or is_module_state(self.source)
        dims = dynamic_dims(value, self.source, output.frame_sizes, output.dynamic, static)
        variable = output.add_graph_input(self.source, value, dims)
        self.guard("TENSOR_MATCH", value, example=variable.example_value)
        self.guard("DIMENSION_DYNAMIC_MARKING", value)
        return output.side_effects.track_existing(value, variable)

    def wrap_numpy_ndarray(self, value: np.ndarray | np.generic) -> VariableTracker:
        """A numpy array (or scalar, a 0-d array) passed in: a graph input that the traced
        code sees as an ndarray (`variables/numpy.py`); the frame passes `torch.as_tensor(a)`,
        which shares the array's memory."""
        if self.source is None:
            graph_break(UNSUPPORTED_VALUE, "an ndarray with no source cannot become a graph input")
        try:
            tensor = torch.as_tensor(value)
        except TypeError as error:  # an array of objects or strings
            graph_break(UNSUPPORTED_VALUE, f"a numpy array torch cannot hold: {error}")
        self.guard("TYPE_MATCH", value)
        tensor_variable = VariableBuilder(self.output, NumpyTensorSource(self.source))(tensor)
        variable = NumpyNdarrayVariable(tensor_variable.node, tensor_variable.example_value,
                                        source=self.source)
        return self.output.side_effects.track_existing(value, variable)

    def wrap_constant(self, value: Any) -> VariableTracker:
        if isinstance(value, tuple):  # a tuple of constants keeps item trackers
            return self.wrap_tuple(value)
        if is_dynamic_float(value, self.source, self.output.frame_sizes, self.output.dynamic) \
                and self.source.name() not in self.output.specialized_floats:
            self.guard("TYPE_MATCH", value)  # any float will do: the graph reads it as data
            return self.output.add_float_input(self.source, value)
        if is_dynamic_int(value, self.source, self.output.frame_sizes, self.output.dynamic,
                          self.output.module_sources):
            self.guard("TYPE_MATCH", value)  # any int will do; what the trace needs of it
            return self.output.add_symint_input(self.source, value)  # is a SHAPE_ENV guard
        self.guard(constant_guard_kind(value), value)
        return ConstantVariable(value, source=self.source)

    def wrap_tuple(self, value: tuple) -> VariableTracker:
        self.guard("LENGTH_CHECK", value)
        fields = getattr(type(value), "_fields", None)
        if fields is not None and self.source is not None:  # a namedtuple: L['out'].value
            items = tuple(
                LazyVariableTracker(item, self.output, source=AttrSource(self.source, field))
                for field, item in zip(fields, value)
            )
            return NamedTupleVariable(items, tuple_class=type(value), source=self.source)
        items = tuple(self.child(item, index) for index, item in enumerate(value))
        if isinstance(value, torch.Size):
            return SizeVariable(items, source=self.source)
        if type(value) is not tuple:  # namedtuple or torch.return_types
            return NamedTupleVariable(items, tuple_class=type(value), source=self.source)
        return TupleVariable(items, source=self.source)

    def wrap_list(self, value: list) -> VariableTracker:
        self.guard("LENGTH_CHECK", value)
        items = tuple(self.child(item, index) for index, item in enumerate(value))
        variable = ListVariable(items, source=self.source, object_id=new_object_id())
        return self.output.side_effects.track_existing(value, variable)

    def wrap_sequence_subclass(self, value: list | tuple) -> VariableTracker:
        """An instance of a user subclass of list or tuple: an object (its attributes, its
        class's methods) whose items are read by index, as the builtin's (the class does
        not override `__getitem__`). Its type and length are guarded."""
        self.guard("TYPE_MATCH", value)
        self.guard("LENGTH_CHECK", value)
        if isinstance(value, list) and self.source is not None:
            items = tuple(LazyVariableTracker(item, self.output, source=ListGetItemSource(
                self.source, index)) for index, item in enumerate(value))
        else:
            items = tuple(self.child(item, index) for index, item in enumerate(value))
        if isinstance(value, list):
            contents = ListPartVariable(items, source=self.source, object_id=new_object_id())
            self.output.side_effects.track_new(contents)
        else:
            contents = TupleVariable(items, source=self.source)
        variable = UserDefinedSequenceVariable(value, type(value), contents=contents,
                                               source=self.source, object_id=new_object_id())
        return self.output.side_effects.track_existing(value, variable)

    def wrap_deque(self, value: collections.deque) -> VariableTracker:
        """A deque: its items by index (`d[0]`), its length and its maxlen guarded."""
        from minidynamo.variables.lists import DequeVariable

        self.guard("LENGTH_CHECK", value)
        if self.source is not None:
            self.output.guards.equals_match(AttrSource(self.source, "maxlen"), value.maxlen)
        items = tuple(self.child(item, index) for index, item in enumerate(value))
        variable = DequeVariable(items, maxlen=value.maxlen, source=self.source,
                                 object_id=new_object_id())
        return self.output.side_effects.track_existing(value, variable)

    def wrap_dict(self, value: dict) -> VariableTracker:
        if all(is_dict_key_value(key) for key in value):
            keys_guard = self.keys_guard(value)
            # over a copy: a module's globals gain the names the trace installs meanwhile
            items = {key: self.child(item, key) for key, item in list(value.items())}
        else:
            keys_guard, items = self.object_keyed_items(value)
        factory = getattr(value, "default_factory", None)
        factory_source = AttrSource(self.source, "default_factory") if self.source else None
        factory_variable = None if factory is None else VariableBuilder(
            self.output, factory_source)(factory)
        variable = ConstDictVariable(
            items, type(value), factory_variable, keys_guard, source=self.source,
            object_id=new_object_id(), storage_of=self.storage_of(value))
        return self.output.side_effects.track_existing(value, variable)

    def object_keyed_items(
        self, value: dict
    ) -> tuple[Callable[[], None] | None, dict[Any, VariableTracker]]:
        """The entries of a dict with keys that hash by identity (a tensor, a module, a
        plain object: an optimizer's `self.state[p]`), as TorchDynamo builds them: such a
        key is reached by its position, `list(dict.keys(d))[i]`, and realized now (the
        same object reached from two sources gets a DUPLICATE_INPUT guard); its value
        by `d[that key]`, lazily. A lookup that rules the keys out makes the aliasing
        guards keep them distinct from it (`ConstDictVariable.keep_keys_distinct`). When
        the trace reads every key, the length is guarded, and each constant key at its
        position (`{'scale': 2, p: 3}`)."""
        if self.source is None or not all(
                is_dict_key_value(key) or hashes_by_identity(key) for key in value):
            graph_break(UNSUPPORTED_VALUE, "a dict whose keys are not all constants "
                        "or objects hashed by identity")
        self.guard("TYPE_MATCH", value)
        position = {id(key): index for index, key in enumerate(dict.keys(value))}
        constants = [(position[id(key)], key) for key in value if is_dict_key_value(key)]
        guards = self.output.guards

        def guard_keys() -> None:
            guards.add("LENGTH_CHECK", self.source, value)
            for index, key in constants:
                guards.add(constant_guard_kind(key), DictKeySource(self.source, index), key)

        items: dict[Any, VariableTracker] = {}
        for key, item in list(value.items()):  # the dict's own order (an OrderedDict's)
            if is_dict_key_value(key):
                items[key] = self.child(item, key)
                continue
            key_source = DictKeySource(self.source, position[id(key)])
            identity = ("object", id(key))
            python_key = ObjectKey(identity, hash(identity), LazyVariableTracker(
                key, self.output, source=key_source).realize())
            items[python_key] = LazyVariableTracker(
                item, self.output, source=DictValueSource(self.source, key_source))
        return guard_keys, items

    def storage_of(self, value: dict) -> str | None:
        """What `value` stores, when it is a module's globals (the frame's own, or one of
        sys.modules) or an object's `__dict__` (`ConstDictVariable.storage_of`)."""
        name = value.get("__name__")
        module = sys.modules.get(name) if isinstance(name, str) else None
        if value is self.output.f_globals or getattr(module, "__dict__", None) is value:
            return f"the globals of {name if isinstance(name, str) else 'the frame'}"
        if isinstance(self.source, (AttrSource, GenericAttrSource)) and (
                self.source.member == "__dict__"):
            return f"the attributes of {self.source.base.name()}"
        return None

    def wrap_mapping_proxy(self, value: types.MappingProxyType) -> VariableTracker:
        """A read-only view of a dict (`cls.__dict__`, a dataclass field's `metadata`):
        read as a dict, keys guarded and values lazy; no version, as nothing writes it."""
        if not all(is_dict_key_value(key) for key in value):
            graph_break(UNSUPPORTED_VALUE, "a mappingproxy whose keys are not all constants")
        keys_guard = self.keys_guard(value)
        items = {key: self.child(item, key) for key, item in value.items()}
        return MappingProxyVariable(items, keys_guard=keys_guard, source=self.source)

    def wrap_dict_subclass(self, value: dict) -> VariableTracker:
        """An instance of a user subclass of dict or OrderedDict: an object whose dict part
        is read with the builtin lookup (`dict.__getitem__(d, key)`), never the subclass's;
        its keys in the builtin's order (an OrderedDict's own, `raw_keys`)."""
        keys = raw_keys(value)
        if not all(is_dict_key_value(key) for key in keys):
            graph_break(UNSUPPORTED_VALUE, "a dict whose keys are not all constants")
        keys_guard = self.keys_guard(value)
        items = {}
        for key in keys:
            entry = dict.__getitem__(value, key)
            items[key] = VariableBuilder(self.output, None)(entry) if self.source is None else (
                LazyVariableTracker(entry, self.output, source=DictGetItemSource(self.source, key)))
        contents = DictPartVariable(items, dict_base(type(value)), keys_guard=keys_guard,
                                    source=self.source, object_id=new_object_id())
        self.output.side_effects.track_new(contents)
        variable = UserDefinedDictVariable(
            value, type(value), contents=contents, source=self.source, object_id=new_object_id())
        return self.output.side_effects.track_existing(value, variable)

    def wrap_set(self, value: set | frozenset) -> VariableTracker:
        """A set (or a frozenset holding more than constants, like pytree's set of
        builtin classes): guarded equal to its items now, which are constants or
        values compared by identity (classes, functions)."""
        if not all(is_constant_value(item) or isinstance(item, IDENTITY_SET_ITEMS)
                   for item in value):
            graph_break(UNSUPPORTED_VALUE, "a set whose items are not all constants, classes "
                        "or functions")
        self.guard("EQUALS_MATCH", value)
        items = tuple(ConstantVariable(item) if is_constant_value(item)
                      else VariableBuilder(self.output, None)(item) for item in value)
        variable = SetVariable(items, frozen=type(value) is frozenset, source=self.source,
                               object_id=new_object_id())
        return self.output.side_effects.track_existing(value, variable)

    def wrap_module(self, value: torch.nn.Module) -> VariableTracker:
        self.guard("TYPE_MATCH", value)  # its attributes are guarded as they are read
        if self.source is not None:
            self.output.module_sources.add(self.source)
        variable = NNModuleVariable(value, source=self.source, object_id=new_object_id())
        return self.output.side_effects.track_existing(value, variable)

    # -- values whose tracker only needs the value and the source ---------------

    def wrap_range(self, value: range) -> VariableTracker:
        self.guard("EQUALS_MATCH", value)
        return RangeVariable(value, source=self.source)

    def wrap_torch_function(self, value: Any) -> VariableTracker:
        self.guard("ID_MATCH", value)
        return TorchFunctionVariable(value, source=self.source)

    def wrap_skipped_function(self, value: Any) -> VariableTracker:
        self.guard("ID_MATCH", value)
        return SkippedFunctionVariable(value, source=self.source)

    def wrap_frozen_function(self, value: Any) -> VariableTracker:
        self.guard("ID_MATCH", value)
        return FrozenFunctionVariable(value, source=self.source)

    def wrap_tracing_state_function(self, value: Any) -> VariableTracker:
        self.guard("ID_MATCH", value)
        return TracingStateFunctionVariable(value, source=self.source)

    def wrap_numpy_callable(self, value: Any) -> VariableTracker:
        self.guard("ID_MATCH", value)
        return NumpyVariable(value, source=self.source)

    def wrap_method_descriptor(self, value: Any) -> VariableTracker:
        self.guard("ID_MATCH", value)
        return MethodDescriptorVariable(value, source=self.source)

    def wrap_builtin(self, value: Any) -> VariableTracker:
        self.guard("ID_MATCH", value)
        return BuiltinVariable(value, source=self.source)

    def wrap_exception_class(self, value: type[BaseException]) -> VariableTracker:
        self.guard("ID_MATCH", value)
        return ExceptionClassVariable(value, source=self.source)

    def wrap_profiler_context(self, value: type) -> VariableTracker:
        self.guard("ID_MATCH", value)
        return UserFunctionVariable(polyfills.ignored_profiler_context)

    def wrap_contextmanager_function(self, value: types.FunctionType) -> VariableTracker:
        """A `@contextlib.contextmanager` function: calling it is the polyfill's
        `contextmanager_call(generator_function, ...)` (chapter 8)."""
        self.guard("ID_MATCH", value)  # contextlib's helper code; the generator function:
        index = value.__code__.co_freevars.index("func")
        source = closure_cell_source(self.source, index) if self.source else None
        generator_function = value.__closure__[index].cell_contents
        inner = VariableBuilder(self.output, source and AttrSource(source, "cell_contents"))
        return UserMethodVariable(polyfills.contextmanager_call, inner(generator_function))

    def wrap_function(self, value: types.FunctionType) -> VariableTracker:
        self.guard("ID_MATCH", value)  # its code: closures and defaults are guarded when read
        return UserFunctionVariable(value, source=self.source)

    def wrap_python_module(self, value: types.ModuleType) -> VariableTracker:
        self.guard("ID_MATCH", value)
        return PythonModuleVariable(value, source=self.source)

    def wrap_class(self, value: type) -> VariableTracker:
        self.guard("ID_MATCH", value)
        return UserDefinedClassVariable(value, source=self.source)

    def wrap_grad_mode_class(self, value: type) -> VariableTracker:
        self.guard("ID_MATCH", value)
        return GradModeClassVariable(value, source=self.source)

    def wrap_grad_mode_object(self, value: Any) -> VariableTracker:
        """`torch.no_grad()` passed in, e.g. to a resume function that re-enters its block."""
        self.guard("TYPE_MATCH", value)
        return GradModeVariable(isinstance(value, torch.enable_grad), source=self.source)

    def wrap_compiled_function(self, value: Any) -> VariableTracker:
        """A function compiled with minidynamo.compile, called from traced code: inline
        the original function (its frame is part of this one, as in TorchDynamo)."""
        self.guard("ID_MATCH", value)
        source = AttrSource(self.source, "_minidynamo_original") if self.source else None
        return UserFunctionVariable(value._minidynamo_original, source=source)

    def wrap_partial(self, value: functools.partial) -> VariableTracker:
        """`functools.partial(f, 2, scale=3)` made outside: its parts, each from its source."""
        self.guard("TYPE_MATCH", value)
        func, args, keywords = (
            VariableBuilder(self.output, AttrSource(self.source, name) if self.source else None)(
                getattr(value, name)).realize()
            for name in ("func", "args", "keywords"))
        return PartialVariable(func, tuple(args.items), dict(keywords.items), source=self.source)

    def wrap_lru_cache_wrapper(self, value: Any) -> VariableTracker:
        """A `functools.lru_cache` function: its `__wrapped__` function is traced (the
        cache is not consulted while tracing, as under torch.compile)."""
        self.guard("TYPE_MATCH", value)
        source = AttrSource(self.source, "__wrapped__") if self.source else None
        return VariableBuilder(self.output, source)(value.__wrapped__)

    def wrap_method(self, value: types.MethodType) -> VariableTracker:
        owner_source = AttrSource(self.source, "__self__") if self.source else None
        owner = VariableBuilder(self.output, owner_source)(value.__self__)
        if self.source is not None:
            self.output.guards.add("ID_MATCH", AttrSource(self.source, "__func__"), value.__func__)
        return UserMethodVariable(value.__func__, owner, source=self.source)

    def wrap_cell(self, value: types.CellType) -> VariableTracker:
        try:
            contents = value.cell_contents
        except ValueError:  # an empty cell
            tracker = None
        else:
            source = AttrSource(self.source, "cell_contents") if self.source else None
            tracker = build_lazily(self.output, contents, source)  # realized when read
        variable = CellVariable(tracker, source=self.source, object_id=new_object_id())
        return self.output.side_effects.track_existing(value, variable)

    def wrap_object(self, value: Any) -> VariableTracker:
        self.guard("TYPE_MATCH", value)  # its attributes are guarded as they are read
        variable = UserDefinedObjectVariable(
            value, type(value), source=self.source, object_id=new_object_id()
        )
        return self.output.side_effects.track_existing(value, variable)

    # (does the rule match this value?, how to build its tracker), first match wins.
    # The builder's methods are named, not stored: see `by_name`.
    RULES: list[tuple[Callable[[Any], bool], Callable[[VariableBuilder, Any], VariableTracker]]] = [
        (lambda v: isinstance(v, torch.Tensor), by_name("wrap_tensor")),
        (lambda v: isinstance(v, (np.ndarray, np.generic)), by_name("wrap_numpy_ndarray")),
        # a tuple subclass of constants is still an object: its properties run its code
        (is_sequence_subclass_instance, by_name("wrap_sequence_subclass")),
        (is_constant_value, by_name("wrap_constant")),
        (lambda v: isinstance(v, tuple), by_name("wrap_tuple")),
        (lambda v: type(v) is list, by_name("wrap_list")),
        (lambda v: type(v) is collections.deque, by_name("wrap_deque")),
        (lambda v: type(v) in DICT_CLASSES, by_name("wrap_dict")),
        (is_dict_subclass_instance, by_name("wrap_dict_subclass")),
        (lambda v: type(v) is types.MappingProxyType, by_name("wrap_mapping_proxy")),
        (lambda v: type(v) in (set, frozenset), by_name("wrap_set")),
        (lambda v: type(v) is range, by_name("wrap_range")),
        (lambda v: isinstance(v, torch.nn.Module), by_name("wrap_module")),
        (lambda v: any(v is cls for cls in PROFILER_CONTEXTS), by_name("wrap_profiler_context")),
        (is_tracing_state_function, by_name("wrap_tracing_state_function")),
        (is_frozen_function, by_name("wrap_frozen_function")),
        (is_torch_function, by_name("wrap_torch_function")),
        (is_skipped_function, by_name("wrap_skipped_function")),
        (is_numpy_callable, by_name("wrap_numpy_callable")),
        (is_grad_mode_class, by_name("wrap_grad_mode_class")),
        (is_grad_mode_object, by_name("wrap_grad_mode_object")),
        (is_exception_class, by_name("wrap_exception_class")),
        (is_builtin, by_name("wrap_builtin")),
        (lambda v: isinstance(v, BUILTIN_METHOD_DESCRIPTORS), by_name("wrap_method_descriptor")),
        (is_compiled_function, by_name("wrap_compiled_function")),
        (is_contextmanager_function, by_name("wrap_contextmanager_function")),
        (lambda v: isinstance(v, types.FunctionType), by_name("wrap_function")),
        (lambda v: isinstance(v, types.MethodType), by_name("wrap_method")),
        (lambda v: type(v) is functools.partial, by_name("wrap_partial")),
        (lambda v: type(v) is LRU_CACHE_WRAPPER, by_name("wrap_lru_cache_wrapper")),
        (lambda v: isinstance(v, types.ModuleType), by_name("wrap_python_module")),
        (lambda v: isinstance(v, type), by_name("wrap_class")),
        (lambda v: isinstance(v, types.CellType), by_name("wrap_cell")),
        (lambda v: isinstance(v, types.BuiltinFunctionType), by_name("wrap_builtin")),
    ]
