"""User-defined classes and objects: attributes are read statically, methods inlined (chapter 3).

Reading `obj.scale` must not run user code while tracing, so attributes are
found the way Python's own lookup would find them, but without calling
anything: `inspect.getattr_static`. What is found decides the tracker:

- an instance attribute                -> the builder wraps it (source `obj.scale`)
- a function on the class              -> a `UserMethodVariable`, inlined when called
- a `property`                         -> its getter is inlined now
- `staticmethod` / `classmethod`       -> the function, unbound / bound to the class
- a C data descriptor                  -> `obj.__class__` is the class; a slot or a
                                          builtin getset is read off the real object
- a Python `__getattribute__`          -> inlined; its `super().__getattribute__` is
                                          the generic lookup (`GenericAttributeVariable`)

Writing `obj.count = 1` makes a new version of the object's tracker with the
attribute recorded; for an object that exists outside the frame, it is a side
effect replayed after the graph. Objects created while tracing (`Point(1, 2)`)
run their `__init__` inlined and are rebuilt in the output code if they escape.

A class itself, read or called, is a `UserDefinedClassVariable` (`user_classes.py`).
An attribute read off the class is guarded where it was read (`type(L['o']).k`, the
entry `super()` found in `type(o).__mro__[i].__dict__`), and one found nowhere is guarded
as missing on every class of the MRO: a class changed between calls is read again.
Special methods Python calls implicitly (`len(obj)`, `iter(obj)`, `-obj`) are looked up
on the class, and a missing one raises CPython's TypeError; `iter()` follows CPython's
protocol (`__iter__` returning `self`, `__getitem__` without `__iter__`).

Compare with TorchDynamo: `torch/_dynamo/variables/user_defined.py`
(`UserDefinedClassVariable`, `UserDefinedObjectVariable`, `var_getattr`).
"""

from __future__ import annotations

import collections
import inspect
import types
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence

import torch

from minidynamo import polyfills
from minidynamo.exc import (
    EXCEPTION_IN_TRACED_CODE,
    UNSUPPORTED_ATTRIBUTE,
    UNSUPPORTED_CALL,
    graph_break,
    raise_observed,
)
from minidynamo.guard_reads import lookup
from minidynamo.sources import AttrSource, GenericAttrSource, GetItemSource, Source, TypeSource
from minidynamo.variables.base import VariableTracker, new_object_id
from minidynamo.variables.constant import ConstantVariable, constant
from minidynamo.variables.lazy import build_lazily

if TYPE_CHECKING:
    from minidynamo.codegen import PyCodegen
    from minidynamo.translator.base import InstructionTranslatorBase as Translator

_MISSING = object()

# Attributes every class has (from `type`), known constants: `type(obj).__name__`.
CLASS_CONSTANT_ATTRIBUTES = frozenset({"__name__", "__qualname__", "__module__", "__doc__"})
# ... and the classes around it: `type(x).__mro__`, `cls.__bases__`
CLASS_HIERARCHY_ATTRIBUTES = frozenset({"__mro__", "__bases__", "__base__"})
# Special methods Python calls implicitly (`len(obj)`, `obj[k]`, `-obj`) look on the
# class only; when the class has none, the operation raises TypeError in these words
# ({} is the class's name). The iteration protocol is `get_iterator` / `next_variable`.
MISSING_SPECIAL_METHODS = {
    "__len__": "object of type '{}' has no len()",
    "__getitem__": "'{}' object is not subscriptable",
    "__setitem__": "'{}' object does not support item assignment",
    "__delitem__": "'{}' object doesn't support item deletion",
    "__call__": "'{}' object is not callable",
    "__next__": "'{}' object is not an iterator",
    "__neg__": "bad operand type for unary -: '{}'",
    "__pos__": "bad operand type for unary +: '{}'",
    "__invert__": "bad operand type for unary ~: '{}'",
    "__abs__": "bad operand type for abs(): '{}'",
}
# object's own methods, written in C, reached on a user object: traced in Python
OBJECT_METHOD_POLYFILLS = {"__init__": polyfills.object_init, "__eq__": polyfills.object_eq,
                           "__ne__": polyfills.object_ne,
                           "__repr__": polyfills.object_repr, "__str__": polyfills.object_str}


def is_data_descriptor(attribute: Any) -> bool:
    """Properties and other descriptors with __set__ win over the instance dict."""
    return hasattr(type(attribute), "__set__") or hasattr(type(attribute), "__delete__")


def _overrides_instance(attribute: Any) -> bool:
    """A data descriptor that wins over the instance's own attributes; not a slot (a
    `member_descriptor`), whose value an object made while tracing keeps with them."""
    return (attribute is not _MISSING and is_data_descriptor(attribute)
            and not isinstance(attribute, types.MemberDescriptorType))


def class_attribute(
    tx: Translator,
    obj: VariableTracker,
    cls: type,
    name: str,
    attribute: Any,
    source: Source | None,
) -> VariableTracker:
    """`obj.name` when `name` was found on the class (statically) as `attribute`."""
    from minidynamo.variables.builder import VariableBuilder
    from minidynamo.variables.functions import UserFunctionVariable, UserMethodVariable

    on_type = type_source(obj)
    if on_type is not None and _lookup_static(obj.python_type(), name) is not attribute:
        on_type = None  # reached another way (`super()`): not `type(obj).name` next time
    if isinstance(attribute, staticmethod):  # `type(o).m` is the function itself
        found = AttrSource(on_type, name) if on_type is not None else None
        return VariableBuilder(tx.output, found)(attribute.__func__)
    if isinstance(attribute, classmethod):  # bound to the class, read through `type(o)`
        owner = VariableBuilder(tx.output, on_type)(cls)
        if on_type is not None:  # the class's function, next time too (`Cls.m = other`)
            on_class = AttrSource(AttrSource(on_type, name), "__func__")
            tx.output.guards.add("ID_MATCH", on_class, attribute.__func__)
        return UserMethodVariable(attribute.__func__, owner)
    if isinstance(attribute, property):
        if attribute.fget is None or not isinstance(attribute.fget, types.FunctionType):
            graph_break(UNSUPPORTED_ATTRIBUTE, f"property {name!r} has no Python getter")
        if on_type is not None:  # the class's getter, next time too (`Cls.prop = other`)
            on_class = AttrSource(AttrSource(on_type, name), "fget")
            tx.output.guards.add("ID_MATCH", on_class, attribute.fget)
        return UserFunctionVariable(attribute.fget).call_function(tx, [obj], {})
    if isinstance(attribute, types.FunctionType):
        if on_type is not None:  # the class's function, next time too (`Cls.f = g`)
            tx.output.guards.add("ID_MATCH", AttrSource(on_type, name), attribute)
        return UserMethodVariable(attribute, obj, source=source)
    if isinstance(attribute, BUILTIN_METHOD_DESCRIPTORS):  # dict.get, object.__setattr__
        return builtin_method(tx, obj, attribute.__objclass__, name)
    getter = getattr(type(attribute), "__get__", None)
    if isinstance(getter, types.FunctionType):  # a descriptor written in Python: inlined
        # the descriptor object itself, `type(o).__dict__['d']`, so that what its
        # `__get__` reads of it is guarded (reading `type(o).d` would call `__get__`)
        in_class_dict = None
        if on_type is not None and vars(obj.python_type()).get(name) is attribute:
            in_class_dict = GetItemSource(AttrSource(on_type, "__dict__"), name)
        descriptor = VariableBuilder(tx.output, in_class_dict)(attribute)
        owner = VariableBuilder(tx.output, on_type)(obj.python_type())
        get = UserFunctionVariable(getter) if in_class_dict is None else VariableBuilder(
            tx.output, AttrSource(TypeSource(in_class_dict), "__get__"))(getter)
        return get.call_function(tx, [descriptor, obj, owner], {})
    if hasattr(type(attribute), "__get__") and not isinstance(attribute, type):
        what = f"{cls.__name__}.{name} is a {type(attribute).__name__} descriptor"
        graph_break(UNSUPPORTED_ATTRIBUTE, what)
    if source is None and on_type is not None and not is_dunder(name):
        # made while tracing: `K.s`, where K was read. A class's own metadata
        # (`__dataclass_fields__`, `__match_args__`), set when the class was made, stays
        # a constant: guarding every field of a model output costs each call microseconds
        source = AttrSource(on_type, name)
    return VariableBuilder(tx.output, source)(attribute)


# Methods of C types, found on a subclass (`dict.get` on a dict subclass): binding one
# to an object runs no Python code; what calling it does depends on the object.
BUILTIN_METHOD_DESCRIPTORS = (types.MethodDescriptorType, types.WrapperDescriptorType)


def builtin_method(
    tx: Translator, obj: VariableTracker, owner: type, name: str
) -> VariableTracker:
    """`owner.name` bound to `obj`, where `owner` is a builtin type in obj's MRO and its
    C method is the one found (the subclass did not override it, or `super()` / an
    unbound `dict.__setitem__(obj, ...)` skipped the override):

    - object's `__getattribute__` / `__setattr__`: the generic lookup or store
    - a method of the builtin container a subclass extends: the container part's
    - a method of a builtin value's own type (`str.join`): the value's method."""
    from minidynamo.variables.misc import GetAttrVariable

    obj = tx.output.side_effects.latest(obj.realize())
    from minidynamo.variables.user_classes import GenericAttributeVariable

    if owner is object and name in GenericAttributeVariable.NAMES and isinstance(
        obj, UserDefinedObjectVariable
    ):
        return GenericAttributeVariable(obj, name)
    if owner is object and name in OBJECT_METHOD_POLYFILLS:
        from minidynamo.variables.functions import UserMethodVariable

        return UserMethodVariable(OBJECT_METHOD_POLYFILLS[name], obj)
    if isinstance(obj, UserDefinedDictVariable) and issubclass(obj.contents.dict_class, owner):
        return GetAttrVariable(tx.output.side_effects.latest(obj.contents), name)
    if isinstance(obj, UserDefinedSequenceVariable) and issubclass(
            obj.contents.python_type(), owner):
        if owner is list and name == "__init__":  # `super().__init__(items)` in a subclass
            from minidynamo.variables.functions import UserMethodVariable

            return UserMethodVariable(polyfills.list_init, obj)
        return GetAttrVariable(tx.output.side_effects.latest(obj.contents), name)
    if not isinstance(obj, UserDefinedObjectVariable) and issubclass(obj.python_type(), owner):
        return GetAttrVariable(obj, name)
    graph_break(UNSUPPORTED_ATTRIBUTE, f"{owner.__name__}.{name} of {obj}")


def object_attribute(
    tx: Translator, obj: VariableTracker, value: Any, cls: type, name: str
) -> VariableTracker:
    """Python's attribute lookup for an existing object `value`, done statically."""
    from minidynamo.variables.builder import VariableBuilder

    attribute = _lookup_static(cls, name)
    source = attribute_source(obj, name)
    if isinstance(attribute, BUILTIN_DATA_DESCRIPTORS):
        return builtin_data_descriptor(tx, obj, value, cls, name, attribute, source)
    if attribute is not _MISSING and is_data_descriptor(attribute):
        return class_attribute(tx, obj, cls, name, attribute, source)
    # (an object of a class with __slots__ only has no __dict__, and nothing to shadow)
    instance_dict = getattr(value, "__dict__", None) if value is not None else None
    if instance_dict is not None and tx.output.side_effects.is_written(instance_dict):
        graph_break(UNSUPPORTED_ATTRIBUTE, f"reading {cls.__name__}.{name} after a write "
                    "through its __dict__")
    if instance_dict is not None and name in instance_dict:
        return build_lazily(tx.output, instance_dict[name], source)
    if obj.source is not None and isinstance(instance_dict, dict):  # not shadowed, next time too
        tx.output.guards.not_in_dict(attribute_source(obj, "__dict__"), name)
    if attribute is not _MISSING:
        return class_attribute(tx, obj, cls, name, attribute, source)
    custom_getattr = _lookup_static(cls, "__getattr__")
    if isinstance(custom_getattr, types.FunctionType) and (
            value is None or custom_getattr is not torch.nn.Module.__getattr__):
        # Python calls the class's __getattr__ when the lookup fails, and so do we,
        # inlined: an EasyDict's `cfg.scale`, a wrapper forwarding to what it wraps, an
        # nn.Module made while tracing reading its buffers and submodules
        from minidynamo.variables.functions import UserFunctionVariable

        if type_source(obj) is not None:  # the class's __getattr__, next time too
            on_class = AttrSource(type_source(obj), "__getattr__")
            tx.output.guards.add("ID_MATCH", on_class, custom_getattr)
        return UserFunctionVariable(custom_getattr).call_function(tx, [obj, constant(name)], {})
    if custom_getattr is not _MISSING and custom_getattr is not torch.nn.Module.__getattr__:
        what = f"{cls.__name__} defines __getattr__ (reading {name!r})"
        graph_break(UNSUPPORTED_ATTRIBUTE, what)
    guard_missing_on_classes(tx, type_source(obj), cls, name)
    raise_observed(AttributeError, f"{cls.__name__!r} object has no attribute {name!r}")


def is_dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


IMMUTABLE_TYPE = 1 << 8  # Py_TPFLAGS_IMMUTABLETYPE: a builtin class, whose dict cannot change


def guard_missing_on_classes(tx: Translator, on_type: Source | None, cls: type, name: str) -> None:
    """`name` was found nowhere: not in an object's `__dict__` (guarded by the caller) nor
    on any class of the MRO of `cls`, read again at `on_type`. Guard the classes too: a
    class attribute added later (`K.extra = 5`) makes `hasattr(o, 'extra')` true. Its
    readable line is `not hasattr(cls, name)`, which the check function runs as a look
    at each class's dict (`joint_guards.class_lacks`); where the metaclass has the name
    (`mro`), which an instance does not see, each class's `__dict__` is guarded instead."""
    if on_type is None:
        return
    if not hasattr(cls, name):
        tx.output.guards.lacks_attribute(on_type, name, cls)
        return
    mro = AttrSource(on_type, "__mro__")
    for index, klass in enumerate(cls.__mro__):
        if not klass.__flags__ & IMMUTABLE_TYPE:
            tx.output.guards.not_in_dict(AttrSource(GetItemSource(mro, index), "__dict__"), name)


# Data descriptors that C types define: reading one runs no Python code.
BUILTIN_DATA_DESCRIPTORS = (types.MemberDescriptorType, types.GetSetDescriptorType)
CLASS_DESCRIPTOR = vars(object)["__class__"]


def builtin_data_descriptor(
    tx: Translator, obj: VariableTracker, value: Any, cls: type, name: str, attribute: Any,
    source: Source | None,
) -> VariableTracker:
    """`obj.name` found on the type as a C data descriptor: `obj.__class__` (object's
    getset descriptor) is the class; a slot (`member_descriptor`) or another getset
    descriptor of a builtin type (`obj.__dict__`, read only while the tracker holds no
    write) is read from the real object, which runs no user code.
    An object made while tracing (`value` None) keeps its slots in its tracker's
    attributes, looked up before this; a slot not there was never set."""
    from minidynamo.variables.builder import VariableBuilder

    if attribute is CLASS_DESCRIPTOR:
        return VariableBuilder(tx.output, source)(cls)
    if name == "__dict__" and value is None:  # all its attributes are in the tracker
        from minidynamo.variables.dicts import InstanceDictVariable

        return InstanceDictVariable.of(obj)
    if name == "__dict__" and getattr(obj, "attributes", None):
        # its attributes written while tracing live in the tracker, not in that dict
        graph_break(UNSUPPORTED_ATTRIBUTE, f"reading {cls.__name__}.__dict__ after writing "
                    "its attributes while tracing")
    if value is None:
        if isinstance(attribute, types.MemberDescriptorType):
            raise_observed(AttributeError, f"'{cls.__name__}' object has no attribute '{name}'")
        graph_break(UNSUPPORTED_ATTRIBUTE,
                    f"{cls.__name__}.{name} of an object made while tracing")
    try:
        found = attribute.__get__(value, cls)
    except AttributeError as error:  # an unset slot: it stays unset while the guard holds
        if obj.source is not None and isinstance(attribute, types.MemberDescriptorType):
            tx.output.guards.lacks_attribute(obj.source, name)
        raise_observed(AttributeError, str(error))
    if name == "__dict__" and source is not None:  # tracked now: a write to an attribute of
        from minidynamo.variables.builder import VariableBuilder  # the object then breaks

        return VariableBuilder(tx.output, source)(found)
    return build_lazily(tx.output, found, source)


def type_source(obj: VariableTracker) -> Source | None:
    """Where `type(obj)` can be read again when the guards run: `type(L['obj'])` for an
    object passed in, the class's own source for one made while tracing (its class
    was called: `Recorder('r')` reads `G['Recorder']`); None when neither is known."""
    if obj.source is not None:
        return TypeSource(obj.source)
    return getattr(obj, "class_source", None)


def attribute_source(obj: VariableTracker, name: str) -> Source | None:
    """Where `object.__getattribute__(obj, name)` is read again: `obj.name`, or, when the
    class has a `__getattribute__` written in Python, `object.__getattribute__(obj, 'name')`
    (that hook is what was traced around the read, not what the read was; and a guard
    that ran it would pay a Python call each time: a transformers config's reads)."""
    if obj.source is None:
        return None
    if isinstance(_lookup_static(obj.python_type(), "__getattribute__"), types.FunctionType):
        return GenericAttrSource(obj.source, name)
    return AttrSource(obj.source, name)


def _lookup_static(cls: type, name: str) -> Any:
    """What an instance's lookup finds on its type (`guard_reads.lookup`); `_MISSING`
    when no class of the MRO has it (None may be what one has)."""
    return lookup(cls, name, _MISSING)


def _lookup_on_class(cls: type, name: str) -> Any:
    """What `cls.name` finds without running code: the MRO, then the metaclass's."""
    try:
        return inspect.getattr_static(cls, name)
    except AttributeError:
        return _MISSING


# The builtin dicts a user class may extend and still be made while tracing (most
# derived first: an OrderedDict subclass's dict part is an OrderedDict).
DICT_BASES = (collections.OrderedDict, dict)


def dict_base(cls: type) -> type | None:
    """The builtin dict type `cls` extends, if any."""
    for base in DICT_BASES:
        if issubclass(cls, base):
            return base
    return None


# The builtin sequences a user class may extend and still be made while tracing.
SEQUENCE_BASES = (list, tuple)
CONTAINER_BASES = DICT_BASES + SEQUENCE_BASES


def container_base(cls: type) -> type | None:
    """The builtin container type `cls` extends (a dict, an OrderedDict, a list or a
    tuple), if any: its instances have a part of that type (`contents`)."""
    for base in CONTAINER_BASES:  # (a plain loop: generated code calls this on every hit)
        if issubclass(cls, base):
            return base
    return None


def is_sequence_subclass_instance(value: Any) -> bool:
    """An instance of a user subclass of list or tuple read as the builtin reads it: not
    a namedtuple, torch.Size or `torch.return_types`; no own `__getitem__` or `__len__`."""
    cls = type(value)
    base = next((base for base in SEQUENCE_BASES if isinstance(value, base)), None)
    return (base is not None and cls is not base and not hasattr(cls, "_fields")
            and not hasattr(cls, "n_fields") and not issubclass(cls, torch.Size)
            and cls.__getitem__ is base.__getitem__ and cls.__len__ is base.__len__)


def is_dict_subclass_instance(value: Any) -> bool:
    """An instance of a user subclass of dict or OrderedDict (not of defaultdict)."""
    return (isinstance(value, dict) and dict_base(type(value)) is not type(value)
            and not isinstance(value, collections.defaultdict))


@dataclass(frozen=True, eq=False, repr=False)
class UserDefinedObjectVariable(VariableTracker):
    """An instance of a user class. `value` is the real object (None if made while tracing);
    `attributes` holds attribute writes made while tracing, newest first in lookup."""

    value: Any
    cls: type
    attributes: dict[str, VariableTracker] = field(default_factory=dict)
    class_source: Source | None = None  # made while tracing: where its class was read
    # made while tracing by `cls(*args)`: the args, passed on to the base's `__new__` when
    # it is remade, as TorchDynamo does (its `init_args`; `make_empty`)
    new_args: tuple[VariableTracker, ...] = ()
    children_fields = ("attributes",)

    def python_type(self) -> type:
        return self.cls

    def var_getattr(self, tx: Translator, name: str) -> VariableTracker:
        hook = _lookup_static(self.cls, "__getattribute__")
        if isinstance(hook, types.FunctionType):  # the class's own lookup, inlined
            from minidynamo.variables.functions import UserFunctionVariable

            if type_source(self) is not None:
                on_class = AttrSource(type_source(self), "__getattribute__")
                tx.output.guards.add("ID_MATCH", on_class, hook)
            return UserFunctionVariable(hook).call_function(tx, [self, constant(name)], {})
        return self.generic_getattr(tx, name)

    def generic_getattr(self, tx: Translator, name: str) -> VariableTracker:
        """`object.__getattribute__(obj, name)`: Python's lookup without the class's hook.
        A data descriptor of the class (a property, a descriptor with `__set__`) comes
        before the instance's own attributes; a slot is one of them."""
        if name in self.attributes and not _overrides_instance(_lookup_static(self.cls, name)):
            return self.attributes[name]
        return object_attribute(tx, self, self.value, self.cls, name)

    def call_method(
        self,
        tx: Translator,
        name: str,
        args: Sequence[VariableTracker],
        kwargs: dict[str, VariableTracker],
    ) -> VariableTracker:
        if name == "__setattr__" and self.cls.__setattr__ is object.__setattr__:
            return self.generic_setattr(tx, args[0].as_python_constant(), args[1])
        if name == "__delattr__" and self.cls.__delattr__ is object.__delattr__:
            return self.generic_delattr(tx, args[0].as_python_constant())
        if name in polyfills.REFLECTED_OPERATORS and len(args) == 1 and not kwargs:
            # an operator (`a + b`, `a < b`): Python's protocol, NotImplemented and all
            from minidynamo.variables.functions import UserFunctionVariable

            return UserFunctionVariable(polyfills.binary_operator).call_function(
                tx, [self, args[0], ConstantVariable(name)], {})
        if _lookup_static(self.cls, name) is _MISSING:  # looked up on the class only
            if name in MISSING_SPECIAL_METHODS:
                raise_observed(TypeError, MISSING_SPECIAL_METHODS[name].format(self.cls.__name__))
            if name == "__contains__":  # `x in obj` walks obj's iterator
                if _lookup_static(self.cls, "__iter__") is _MISSING and (
                        _lookup_static(self.cls, "__getitem__") is _MISSING):
                    raise_observed(TypeError, f"argument of type '{self.cls.__name__}' is "
                                              "not iterable")
                return self.get_iterator(tx).dunder_contains(tx, args[0])
        return self.var_getattr(tx, name).call_function(tx, args, kwargs)

    def instance_dict(self) -> dict[str, VariableTracker]:
        """What `obj.__dict__` holds: the attributes written while tracing, but slots."""
        return {name: value for name, value in self.attributes.items()
                if not isinstance(_lookup_static(self.cls, name), types.MemberDescriptorType)}

    def replace_instance_dict(self, tx: Translator, entries: dict[str, VariableTracker]) -> None:
        """`obj.__dict__` now holds `entries` (written through the dict itself: no
        descriptor or `__setattr__` runs): a new version, its slots kept."""
        slots = {name: value for name, value in self.attributes.items()
                 if name not in self.instance_dict()}
        tx.output.side_effects.mutate(self.clone(attributes={**slots, **entries}))

    def generic_delattr(self, tx: Translator, name: str) -> VariableTracker:
        """`object.__delattr__(obj, name)` on an object made while tracing: a new version
        without the attribute. Deleting one of an existing object is a graph break."""
        attribute = _lookup_static(self.cls, name)
        if _overrides_instance(attribute):  # a property's deleter, a descriptor's __delete__
            return self.through_descriptor(tx, name, attribute, "delete")
        if self.value is not None:
            graph_break(UNSUPPORTED_ATTRIBUTE, f"deleting {self.cls.__name__}.{name} of an "
                        "object from outside the frame")
        if name not in self.attributes:
            raise_observed(AttributeError,
                           f"{self.cls.__name__!r} object has no attribute {name!r}")
        remaining = {key: value for key, value in self.attributes.items() if key != name}
        tx.output.side_effects.mutate(self.clone(attributes=remaining))
        return ConstantVariable(None)

    def through_descriptor(self, tx: Translator, name: str, attribute: Any, action: str,
                           *values: VariableTracker) -> VariableTracker:
        """`obj.name = value` (`action` "set") or `del obj.name` ("delete") where the class
        has a data descriptor: a property's setter or deleter, a descriptor's `__set__` or
        `__delete__`, written in Python, inlined; CPython's AttributeError without one."""
        from minidynamo.variables.builder import VariableBuilder
        from minidynamo.variables.functions import UserFunctionVariable

        if isinstance(attribute, property):
            method, head = (attribute.fset if action == "set" else attribute.fdel), []
            if method is None:
                raise_observed(AttributeError, f"property {name!r} of {self.cls.__name__!r} "
                               f"object has no {'setter' if action == 'set' else 'deleter'}")
        else:
            method = getattr(type(attribute), f"__{action}__", None)
            if method is None:
                raise_observed(AttributeError, f"__{action}__")
            head = [VariableBuilder(tx.output, None)(attribute)]
        if not isinstance(method, types.FunctionType):
            graph_break(UNSUPPORTED_ATTRIBUTE, f"{'storing' if action == 'set' else 'deleting'} "
                        f"{self.cls.__name__}.{name} through a {type(attribute).__name__} "
                        "written in C")
        UserFunctionVariable(method).call_function(tx, [*head, self, *values], {})
        return ConstantVariable(None)

    def generic_setattr(self, tx: Translator, name: str, value: VariableTracker) -> VariableTracker:
        """`object.__setattr__(obj, name, value)`: a data descriptor of the class stores
        it (a property's setter, a descriptor's `__set__`, inlined); otherwise a new
        version with the attribute."""
        attribute = _lookup_static(self.cls, name)
        if _overrides_instance(attribute):
            return self.through_descriptor(tx, name, attribute, "set", value)
        if self.cls.__dictoffset__ == 0 and not isinstance(attribute, types.MemberDescriptorType):
            # no `__dict__` (`__slots__` all the way up): only its slots can be set
            raise_observed(AttributeError,
                           f"{self.cls.__name__!r} object has no attribute {name!r}")
        tx.output.side_effects.mutate(self.clone(attributes={**self.attributes, name: value}))
        return ConstantVariable(None)

    def call_function(
        self, tx: Translator, args: Sequence[VariableTracker], kwargs: dict[str, VariableTracker]
    ) -> VariableTracker:
        if self.value is None and self.is_module_without_hooks(tx):
            # nn.Module.__call__ ends in self.forward(...) when no hook is set; going
            # there directly keeps torch's frames out of the user's stack, as in torch
            return self.var_getattr(tx, "forward").call_function(tx, args, kwargs)
        return self.call_method(tx, "__call__", args, kwargs)

    def is_module_without_hooks(self, tx: Translator) -> bool:
        """Whether this is an nn.Module made while tracing, called with the module's own
        `__call__`, that no hook of its own or of the process would run for."""
        from minidynamo.global_state import global_module_hooks
        from minidynamo.variables.dicts import ConstDictVariable

        if not (issubclass(self.cls, torch.nn.Module)
                and self.cls.__call__ is torch.nn.Module.__call__):
            return False
        if any(global_module_hooks()):
            return False
        for name in ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks",
                     "_backward_pre_hooks"):
            hooks = self.attributes.get(name)
            hooks = tx.output.side_effects.latest(hooks) if hooks is not None else None
            if not (isinstance(hooks, ConstDictVariable) and not hooks.items):
                return False
        return True

    def get_iterator(self, tx: Translator) -> VariableTracker:
        """`iter(obj)` as CPython's `PyObject_GetIter` does it: the class's `__iter__`,
        whose result must be an iterator (`return self` from a class with `__next__` is
        the object itself, not iterated again); without `__iter__`, a class with
        `__getitem__` is walked by index until IndexError (`polyfills.sequence_iterator`)."""
        from minidynamo.variables.functions import UserFunctionVariable
        from minidynamo.variables.iterators import IteratorVariable

        method = _lookup_static(self.cls, "__iter__")
        if method is _MISSING and _lookup_static(self.cls, "__getitem__") is not _MISSING:
            return UserFunctionVariable(polyfills.sequence_iterator).call_function(tx, [self], {})
        if method is _MISSING or method is None:
            raise_observed(TypeError, f"'{self.cls.__name__}' object is not iterable")
        iterator = self.call_method(tx, "__iter__", [], {}).realize()
        if isinstance(iterator, UserDefinedObjectVariable):
            if _lookup_static(iterator.cls, "__next__") is _MISSING:
                raise_observed(TypeError, "iter() returned non-iterator of type "
                                          f"'{iterator.cls.__name__}'")
            return iterator
        if isinstance(iterator, IteratorVariable):
            return iterator
        return iterator.get_iterator(tx)

    def next_variable(self, tx: Translator) -> VariableTracker | None:
        """FOR_ITER on an object that is its own iterator: its `__next__`, None when it
        raises StopIteration."""
        from minidynamo.exc import ObservedException

        try:
            return self.call_method(tx, "__next__", [], {})
        except ObservedException as raised:
            if issubclass(raised.exc_type, StopIteration):
                return None
            raise

    def dunder_next(self, tx: Translator) -> VariableTracker:
        return self.call_method(tx, "__next__", [], {})

    def unpack_var_sequence(self, tx: Translator) -> list[VariableTracker]:
        """`list(obj)`, `*obj`: its iterator's items; a user iterator (`__iter__` returning
        `self`, or another object with `__next__`) is run to its StopIteration."""
        iterator = self.get_iterator(tx)
        if not isinstance(iterator, UserDefinedObjectVariable):
            return iterator.unpack_var_sequence(tx)
        items, latest = [], tx.output.side_effects.latest
        while (item := latest(iterator).next_variable(tx)) is not None:  # `__next__` writes it
            items.append(item)
        return items

    def reconstruct(self, codegen: PyCodegen) -> None:
        """A new object escapes: made empty by its builtin base's `__new__` (`make_empty`),
        then filled (`fill`): the class's own `__new__`, `__init__` and `__setattr__`
        already ran while tracing, and a frozen dataclass's would refuse. The frame's code
        makes every escaping new object first, before the values that reach it, and fills
        it after them (`PyCodegen.make_new_objects_first`), as TorchDynamo does. An object
        from outside the frame reached where no source says (a `Field` of
        `dataclasses.fields(obj)`) is that very object."""
        if self.value is not None:
            return codegen.load_object(self.value)
        self.make_empty(codegen)
        codegen.load_callable(fill_instance)  # obj, NULL, fill_instance
        codegen.append("COPY", arg=3)
        self.load_items_and_attributes(codegen)
        codegen.call_function(4)
        codegen.append("POP_TOP")

    def make_empty(self, codegen: PyCodegen) -> None:
        """Push `new_instance_of(base, cls, *args)`: the builtin base's `__new__` (found
        now, not on every call) given the constructor's arguments, so they are loaded
        (and a tensor among them made a graph output) where TorchDynamo loads them; a
        tuple subclass's are its items."""
        arguments = self.empty_arguments(codegen)
        codegen.load_callable(new_instance_of)
        codegen.load_object(container_base(self.cls) or object)
        codegen.load_object(self.cls)
        for argument in arguments:
            codegen(argument)
        codegen.call_function(2 + len(arguments))

    def empty_arguments(self, codegen: PyCodegen) -> tuple[VariableTracker, ...]:
        """What `make_empty` passes to `new_instance_of` after the class."""
        return self.new_args

    def fill(self, codegen: PyCodegen) -> None:
        """`fill_instance(obj, items, {attributes})` on the instance made empty, which
        `make_new_objects_first` keeps in a temporary."""
        codegen.load_callable(fill_instance)
        codegen.append("LOAD_FAST", argval=codegen.cached_objects[self.object_id])
        self.load_items_and_attributes(codegen)
        codegen.call_function(4)
        codegen.append("POP_TOP")

    def load_items_and_attributes(self, codegen: PyCodegen) -> None:
        """Push the items a container subclass is filled with (`()` for others), the
        attributes as a dict, and whether they go straight into the instance's
        `__dict__`: when no class of its MRO has a data descriptor of those names (a
        property, a slot), the stores the trace made were plain dict stores."""
        self.load_items(codegen)
        attributes = codegen.output.side_effects.latest(self).attributes
        for name, value in attributes.items():
            codegen.load_const(name)
            codegen(value)
        codegen.append("BUILD_MAP", arg=len(attributes))
        codegen.load_const(bool(attributes) and not any(
            is_data_descriptor(_lookup_static(self.cls, name)) for name in attributes))

    def load_items(self, codegen: PyCodegen) -> None:
        """A plain object has no items."""
        codegen.load_const(())

    def __repr__(self) -> str:
        return f"UserDefinedObjectVariable({self.cls.__name__})"


@dataclass(frozen=True, eq=False, repr=False)
class UserDefinedDictVariable(UserDefinedObjectVariable):
    """An instance of a user subclass of dict or OrderedDict made while tracing (the
    `ModelOutput` pattern of transformers: an OrderedDict subclass that is also a
    dataclass). It is two things at once: an object with attributes, and a dict whose
    entries live in `contents`, a dict tracker of the builtin base with its own versions.
    Methods the subclass does not override (`get`, `keys`, `__setitem__` reached by
    `super()`) are the dict part's; the rest is inlined as for any user object."""

    contents: Any = None  # a DictPartVariable (its newest version: side_effects.latest)
    children_fields = ("attributes", "contents")

    def call_method(
        self,
        tx: Translator,
        name: str,
        args: Sequence[VariableTracker],
        kwargs: dict[str, VariableTracker],
    ) -> VariableTracker:
        """dict's own `d[key]` calls the subclass's `__missing__` for a missing key
        (`Counter`: 0); everything else as for any object."""
        if (name == "__getitem__" and len(args) == 1 and self.cls.__getitem__ is dict.__getitem__
                and _lookup_static(self.cls, "__missing__") is not _MISSING):
            from minidynamo.variables.dicts import as_key

            contents = tx.output.side_effects.latest(self.contents)
            if contents.entry(tx, as_key(tx, args[0])) is None:
                return super().call_method(tx, "__missing__", args, {})
        return super().call_method(tx, name, args, kwargs)

    def get_iterator(self, tx: Translator) -> VariableTracker:
        base_iter = _lookup_static(self.contents.dict_class, "__iter__")  # OrderedDict's too
        if _lookup_static(self.cls, "__iter__") is base_iter:
            return tx.output.side_effects.latest(self.contents).get_iterator(tx)
        return super().get_iterator(tx)

    def empty_arguments(self, codegen: PyCodegen) -> tuple[VariableTracker, ...]:
        return ()  # dict's `__new__` ignores them: TorchDynamo passes none

    def load_items(self, codegen: PyCodegen) -> None:
        """The entries, a dict set with the base's own `__setitem__` (so no override of
        the subclass runs again: `ModelOutput.__setitem__` would write attributes too)."""
        entries = codegen.output.side_effects.latest(self.contents).items
        for key, value in entries.items():
            codegen.load_const(key)
            codegen(value)
        codegen.append("BUILD_MAP", arg=len(entries))

    def __repr__(self) -> str:
        return f"UserDefinedDictVariable({self.cls.__name__})"


@dataclass(frozen=True, eq=False, repr=False)
class UserDefinedSequenceVariable(UserDefinedObjectVariable):
    """An instance of a user subclass of list or tuple: an object (attributes, its
    class's methods inlined) whose items are `contents`, a list or tuple tracker that
    the builtin methods the class does not override act on (`builtin_method`)."""

    contents: Any = None  # a ListVariable (its newest version: side_effects.latest) or TupleVariable
    children_fields = ("attributes", "contents")

    def get_iterator(self, tx: Translator) -> VariableTracker:
        base = self.contents.python_type()
        if _lookup_static(self.cls, "__iter__") is _lookup_static(base, "__iter__"):
            return tx.output.side_effects.latest(self.contents).get_iterator(tx)
        return super().get_iterator(tx)

    def empty_arguments(self, codegen: PyCodegen) -> tuple[VariableTracker, ...]:
        if self.contents.python_type() is tuple:  # immutable: its items from the start
            return (codegen.output.side_effects.latest(self.contents),)
        return self.new_args

    def load_items(self, codegen: PyCodegen) -> None:
        """A list's items (extended with `list.extend`); a tuple's are already in it."""
        if self.contents.python_type() is tuple:
            return codegen.load_const(())
        codegen(codegen.output.side_effects.latest(self.contents))

    def __repr__(self) -> str:
        return f"UserDefinedSequenceVariable({self.cls.__name__})"


def new_instance_of(base: type, cls: type, *constructor_args: Any) -> Any:
    """Runs in generated code: an empty instance of a class made while tracing, by its
    builtin `base`'s `__new__` (no override of the class runs again). The constructor's
    arguments are loaded where TorchDynamo loads them (so the graph's outputs come in its
    order); only a tuple's `__new__` uses them, its items. A dict's, a list's and
    object's are called without them."""
    if base is tuple:
        return tuple.__new__(cls, *constructor_args)
    return base.__new__(cls)


def fill_instance(obj: Any, items: list | dict | tuple, attributes: dict, plain: bool) -> Any:
    """Runs in generated code: the items (a list's or a dict's, set with the builtin
    base's methods) and the attributes of a new instance: `plain` ones (no descriptor
    of those names) into its `__dict__` at once, others with `object.__setattr__`."""
    if isinstance(obj, dict):
        setitem = collections.OrderedDict.__setitem__ if isinstance(
            obj, collections.OrderedDict) else dict.__setitem__
        for key, value in items.items():
            setitem(obj, key, value)
    elif isinstance(obj, list):
        list.extend(obj, items)
    if plain:
        obj.__dict__.update(attributes)
        return obj
    for name, value in attributes.items():
        object.__setattr__(obj, name, value)
    return obj
