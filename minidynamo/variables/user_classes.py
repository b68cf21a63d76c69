"""User-defined classes as values: read for class attributes, used in `isinstance`,
called to make objects (chapter 3); and the methods of C types read off a class
(`dict.__setitem__(d, k, v)`, `object.__setattr__(self, ...)`), called unbound.

A class's attribute is found as Python finds it, statically (`inspect.getattr_static`:
the MRO, then the metaclass), and guarded where it was read (`G['K'].k`,
`type(L['o']).k`): a class attribute changed between calls is read again. One that is
found nowhere is guarded as missing on every class of the MRO and on the metaclass, so
that `getattr(K, 'z', 0)` sees a `K.z` added later. Calling the class constructs an
object (`construction.py`).

Compare with TorchDynamo: `torch/_dynamo/variables/user_defined.py`
(`UserDefinedClassVariable`).
"""

from __future__ import annotations

import abc
import types
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

import torch

from minidynamo.exc import UNSUPPORTED_ATTRIBUTE, UNSUPPORTED_CALL, graph_break, raise_observed
from minidynamo.sources import AttrSource
from minidynamo.variables.base import KnownFunctionVariable, VariableTracker
from minidynamo.variables.constant import constant
from minidynamo.variables.user_defined import (
    _MISSING,
    BUILTIN_METHOD_DESCRIPTORS,
    CLASS_CONSTANT_ATTRIBUTES,
    CLASS_HIERARCHY_ATTRIBUTES,
    IMMUTABLE_TYPE,
    UserDefinedObjectVariable,
    _lookup_on_class,
    _lookup_static,
    builtin_method,
    guard_missing_on_classes,
    type_source,
)

if TYPE_CHECKING:
    from minidynamo.codegen import PyCodegen
    from minidynamo.translator.base import InstructionTranslatorBase as Translator


@dataclass(frozen=True, eq=False, repr=False)
class UserDefinedClassVariable(VariableTracker):
    """A class: used in isinstance checks, read for class attributes, or called."""

    cls: type

    def python_type(self) -> type:
        return type(self.cls)

    def as_python_constant(self) -> Any:
        return self.cls

    def var_getattr(self, tx: Translator, name: str) -> VariableTracker:
        from minidynamo.variables.builder import VariableBuilder
        from minidynamo.variables.functions import UserMethodVariable

        if name in CLASS_CONSTANT_ATTRIBUTES:  # settable: `K.__name__ = "L"` next time
            if self.source is not None:
                tx.output.guards.add("EQUALS_MATCH", AttrSource(self.source, name),
                                     getattr(self.cls, name))
            return constant(getattr(self.cls, name))
        if name in CLASS_HIERARCHY_ATTRIBUTES:  # classes, known by identity like this one
            return VariableBuilder(tx.output, None)(getattr(self.cls, name))
        if name == "__dict__":  # a mappingproxy of the class's namespace
            source = AttrSource(self.source, name) if self.source else None
            return VariableBuilder(tx.output, source)(self.cls.__dict__)
        attribute = _lookup_on_class(self.cls, name)
        if attribute is _MISSING:
            # on no class of its MRO, nor on its metaclass: `hasattr(K, name)` asks both
            guard_missing_on_classes(tx, self.source, self.cls, name)
            raise_observed(AttributeError,
                           f"type object {self.cls.__name__!r} has no attribute {name!r}")
        if isinstance(attribute, staticmethod):
            attribute = attribute.__func__
        elif isinstance(attribute, classmethod):
            return UserMethodVariable(attribute.__func__, self)
        elif isinstance(getattr(type(attribute), "__get__", None), types.FunctionType):
            # a descriptor written in Python, read off the class: `__get__(None, cls)`
            from minidynamo.variables.functions import UserFunctionVariable

            getter = type(attribute).__get__
            descriptor = VariableBuilder(tx.output, None)(attribute)
            return UserFunctionVariable(getter).call_function(
                tx, [descriptor, constant(None), self], {})
        elif hasattr(type(attribute), "__get__") and not isinstance(
            attribute, (types.FunctionType, type, *BUILTIN_METHOD_DESCRIPTORS)
        ):
            graph_break(UNSUPPORTED_ATTRIBUTE, f"{self.cls.__name__}.{name} is a descriptor")
        source = AttrSource(self.source, name) if self.source else None
        return VariableBuilder(tx.output, source)(attribute)

    def call_function(
        self, tx: Translator, args: Sequence[VariableTracker], kwargs: dict[str, VariableTracker]
    ) -> VariableTracker:
        from minidynamo.variables.construction import construct

        return construct(tx, self, args, kwargs)

    def call_method(
        self,
        tx: Translator,
        name: str,
        args: Sequence[VariableTracker],
        kwargs: dict[str, VariableTracker],
    ) -> VariableTracker:
        """`len(cls)`, `iter(cls)`: a dunder of the metaclass written in Python (an
        Enum's `EnumType.__len__`) is inlined with the class as its `self`."""
        method = _lookup_static(type(self.cls), name) if name.startswith("__") else _MISSING
        if isinstance(method, types.FunctionType):
            from minidynamo.variables.functions import UserFunctionVariable

            return UserFunctionVariable(method).call_function(tx, [self, *args], kwargs)
        return super().call_method(tx, name, args, kwargs)

    def get_iterator(self, tx: Translator) -> VariableTracker:
        return self.call_method(tx, "__iter__", [], {}).get_iterator(tx)

    def unpack_var_sequence(self, tx: Translator) -> list[VariableTracker]:
        return self.get_iterator(tx).unpack_var_sequence(tx)

    def reconstruct(self, codegen: PyCodegen) -> None:
        codegen.load_object(self.cls)

    def __repr__(self) -> str:
        return f"UserDefinedClassVariable({self.cls.__name__})"


@dataclass(frozen=True, eq=False, repr=False)
class MethodDescriptorVariable(KnownFunctionVariable):
    """A C type's method read off its class, called unbound: `dict.__setitem__(d, k, v)`,
    `object.__setattr__(self, name, value)`, `str.join(sep, parts)`."""

    def call_function(
        self, tx: Translator, args: Sequence[VariableTracker], kwargs: dict[str, VariableTracker]
    ) -> VariableTracker:
        if not args:
            raise_observed(TypeError, f"unbound method {self.fn.__qualname__}() needs an argument")
        method = builtin_method(tx, args[0], self.fn.__objclass__, self.fn.__name__)
        return method.call_function(tx, args[1:], kwargs)


@dataclass(frozen=True, eq=False, repr=False)
class GenericAttributeVariable(VariableTracker):
    """`object.__getattribute__` or `object.__setattr__` bound to `obj`, reached through
    `super()` from a class's own hook: the generic lookup or store, without the hook
    (which would call itself again)."""

    NAMES = ("__getattribute__", "__setattr__")

    obj: VariableTracker
    name: str
    children_fields = ("obj",)

    def call_function(
        self, tx: Translator, args: Sequence[VariableTracker], kwargs: dict[str, VariableTracker]
    ) -> VariableTracker:
        obj = tx.output.side_effects.latest(self.obj.realize())
        if not isinstance(obj, UserDefinedObjectVariable) or kwargs:
            graph_break(UNSUPPORTED_CALL, f"object.{self.name} of {obj}")
        expected = 1 if self.name == "__getattribute__" else 2
        if len(args) != expected:
            raise_observed(TypeError, f"expected {expected} arguments, got {len(args)}")
        attribute = args[0].as_python_constant()
        if self.name == "__getattribute__":
            return obj.generic_getattr(tx, attribute)
        return obj.generic_setattr(tx, attribute, args[1])

    def __repr__(self) -> str:
        return f"GenericAttributeVariable(object.{self.name})"


def is_class_info(wanted: Any) -> bool:
    """What `isinstance` accepts as its second argument: a class, a union, or a tuple
    of those (nested)."""
    if isinstance(wanted, tuple):
        return all(is_class_info(item) for item in wanted)
    return isinstance(wanted, (type, types.UnionType)) or any(
        "__instancecheck__" in vars(klass) for klass in type(wanted).__mro__)


def guard_registration(tx: Translator, obj: VariableTracker, classes: VariableTracker,
                       cls: type, answer: bool) -> None:
    """An abstract base class answers `isinstance` from what was registered with it
    (`A.register(B)`, `__subclasshook__`), not from the MRO: guard the answer itself,
    `issubclass(type(L['b']), G['A'])`, for an object of a user class. (torch.compile
    2.13 guards nothing, and keeps its answer after `A.register(B)`.)"""
    klass = obj.python_type()
    if not isinstance(cls, abc.ABCMeta) or klass.__flags__ & IMMUTABLE_TYPE or (
            issubclass(klass, torch.Tensor)):
        return
    cls_source = classes.source
    if isinstance(classes.as_python_constant(), tuple):
        wanted = [item for item in getattr(classes, "items", ())
                  if item.is_python_constant() and item.as_python_constant() is cls]
        cls_source = wanted[0].source if wanted else None
    if type_source(obj) is not None and cls_source is not None:
        tx.output.guards.registered(type_source(obj), cls_source, answer)
