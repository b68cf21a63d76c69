"""`super()`: attribute lookup that starts after a class in the MRO (chapter 3).

`super().__init__(...)` in a method is `super(Owner, self)`: the tracer reads the
owner from the method's `__class__` cell (`builtins.py`) and looks the attribute up
in the classes that follow it in the MRO of `self`'s type, exactly as Python does;
what it finds is bound as `user_defined.class_attribute` binds a class's attribute.
In a classmethod, `self` is the class itself.

Compare with TorchDynamo: `torch/_dynamo/variables/misc.py` (`SuperVariable`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from minidynamo.exc import EXCEPTION_IN_TRACED_CODE, graph_break, raise_observed
from minidynamo.guards import constant_guard_kind
from minidynamo.sources import AttrSource, GetItemSource, Source
from minidynamo.variables.base import VariableTracker
from minidynamo.variables.nn_module import ModuleStoreVariable, NNModuleVariable
from minidynamo.variables.user_classes import UserDefinedClassVariable
from minidynamo.variables.user_defined import IMMUTABLE_TYPE, class_attribute, type_source

if TYPE_CHECKING:
    from minidynamo.translator.base import InstructionTranslatorBase as Translator


@dataclass(frozen=True, eq=False, repr=False)
class SuperVariable(VariableTracker):
    """`super()`: attribute lookup that starts after `owner` in the object's MRO."""

    owner: type  # the class whose method called super()
    obj: VariableTracker
    children_fields = ("obj",)

    def var_getattr(self, tx: Translator, name: str) -> VariableTracker:
        if isinstance(self.obj, UserDefinedClassVariable):  # super() in a classmethod
            return self.class_getattr(tx, name)
        mro = self.obj.python_type().__mro__
        for index in range(mro.index(self.owner) + 1, len(mro)):
            klass = mro[index]
            guard_class_entry(tx, type_source(self.obj), index, klass, name)
            if name in vars(klass):
                if name == "__setattr__" and isinstance(self.obj, NNModuleVariable) and (
                        vars(klass)[name] in (torch.nn.Module.__setattr__, object.__setattr__)):
                    return ModuleStoreVariable(self.obj)  # a module class's own __setattr__
                return class_attribute(tx, self.obj, klass, name, vars(klass)[name], None)
        raise_observed(AttributeError, f"'super' object has no attribute {name!r}")

    def class_getattr(self, tx: Translator, name: str) -> VariableTracker:
        """`super().name` in a classmethod: a classmethod found after `owner` is bound
        to the class, a function stays unbound, a staticmethod is its function."""
        from minidynamo.variables.builder import VariableBuilder
        from minidynamo.variables.functions import UserMethodVariable

        mro = self.obj.cls.__mro__
        for klass in mro[mro.index(self.owner) + 1:]:
            if name in vars(klass):
                attribute = vars(klass)[name]
                if isinstance(attribute, classmethod):
                    return UserMethodVariable(attribute.__func__, self.obj)
                if isinstance(attribute, staticmethod):
                    attribute = attribute.__func__
                return VariableBuilder(tx.output, None)(attribute)
        raise_observed(AttributeError, f"'super' object has no attribute {name!r}")

    def __repr__(self) -> str:
        return f"SuperVariable({self.owner.__name__})"


def guard_class_entry(tx: Translator, on_type: Source | None, index: int, klass: type,
                      name: str) -> None:
    """What `super()` found in (or did not find in) the class at `index` of the object's
    MRO, `type(o).__mro__[index].__dict__`: the same entry next time (`Base.m = other`
    is another method), or still none. A builtin class's dict cannot change."""
    if on_type is None or klass.__flags__ & IMMUTABLE_TYPE:
        return
    namespace = AttrSource(GetItemSource(AttrSource(on_type, "__mro__"), index), "__dict__")
    if name not in vars(klass):
        tx.output.guards.not_in_dict(namespace, name)
        return
    value = vars(klass)[name]
    kind = constant_guard_kind(value) if isinstance(value, (int, float, str, bool, type(None))) \
        else "ID_MATCH"
    tx.output.guards.add(kind, GetItemSource(namespace, name), value)


def call_super(tx: Translator, *args: VariableTracker) -> VariableTracker:
    """super() in a method: the class from the `__class__` cell, the object from the first
    argument."""
    if args:
        owner, obj = args
        return SuperVariable(owner.as_python_constant(), obj)
    if "__class__" not in tx.cells or not tx.code.co_varnames:
        graph_break(EXCEPTION_IN_TRACED_CODE, "super(): no arguments outside a method")
    first = tx.code.co_varnames[0]
    obj = tx.cells[first].contents if first in tx.cells else tx.symbolic_locals[first]
    return SuperVariable(tx.cells["__class__"].contents.as_python_constant(), obj)
