"""`copy.deepcopy` while tracing: new trackers, never a copy of a real object (chapter 3).

transformers' caches copy the model's config in `forward` (`DynamicCache(config=...)`
calls `copy.deepcopy(config)`); torch.compile inlines `copy.deepcopy` and gets one
graph. Stepping through `copy.py` would need `id()` of objects that do not exist yet
and `object.__reduce_ex__` (a C method), so minidynamo models what it does instead, for
the values whose copy it can state exactly:

| value | its deep copy |
|---|---|
| an atomic value (a constant, a class, a function) | the value itself |
| a tuple | itself if no item changes, else a new tuple of copies |
| a list, a dict | a new container of copies |
| an object of a plain class (no `__deepcopy__`, `__reduce_ex__`, `__reduce__`, `__getstate__`, `__setstate__` or slots of its own) | a new object of the class, each `__dict__` entry copied: what copy's `_reconstruct` builds from `object.__reduce_ex__(4)` |

Anything else (a tensor, a module, a class with its own copying hooks) is a graph break.
One value reached twice is copied once (`memo`, by identity), as in `copy.deepcopy`.

Compare with TorchDynamo, which inlines `copy.deepcopy` itself (`trace_rules.py`).
"""

from __future__ import annotations

import types
from typing import TYPE_CHECKING

from minidynamo.exc import UNSUPPORTED_CALL, graph_break
from minidynamo.variables.base import VariableTracker, new_object_id
from minidynamo.variables.constant import ConstantVariable

if TYPE_CHECKING:
    from minidynamo.translator.base import InstructionTranslatorBase as Translator

# the hooks that make a class's copy something other than "its __dict__, copied"
COPY_HOOKS = ("__deepcopy__", "__reduce_ex__", "__reduce__", "__getstate__", "__setstate__")


def deepcopy(tx: Translator, value: VariableTracker,
             memo: VariableTracker | None = None) -> VariableTracker:
    """`copy.deepcopy(value)`: the tracker of a new copy."""
    if memo is not None:
        graph_break(UNSUPPORTED_CALL, "copy.deepcopy() with a memo dict")
    return _copy(tx, value, {})


def _copy(
    tx: Translator, value: VariableTracker, memo: dict[int, VariableTracker]
) -> VariableTracker:
    from minidynamo.variables.dicts import ConstDictVariable
    from minidynamo.variables.lists import ListVariable, TupleVariable
    from minidynamo.variables.user_defined import UserDefinedObjectVariable

    value = tx.output.side_effects.latest(value.realize())
    if value.object_id is not None and value.object_id in memo:
        return memo[value.object_id]
    if isinstance(value, ConstantVariable) or (
        value.is_python_constant() and not value.is_mutable()
        and _is_atomic(value.as_python_constant())
    ):
        return value
    if type(value) is TupleVariable:
        items = tuple(_copy(tx, item, memo) for item in value.items)
        same = all(new is old for new, old in zip(items, value.items))
        return value if same else TupleVariable(items)
    if type(value) is ListVariable:
        copied = ListVariable((), object_id=new_object_id())
        memo[value.object_id] = copied
        copied = copied.clone(items=tuple(_copy(tx, item, memo) for item in value.items))
        memo[value.object_id] = copied
        return copied
    if isinstance(value, ConstDictVariable) and value.dict_class is dict:  # obj.__dict__ too
        items = {key: _copy(tx, item, memo) for key, item in value.items.items()}
        return memo.setdefault(value.object_id, ConstDictVariable(items, object_id=new_object_id()))
    if type(value) is UserDefinedObjectVariable and _is_plain_copy(value.cls):
        copied = UserDefinedObjectVariable(None, value.cls, object_id=new_object_id())
        memo[value.object_id] = copied
        # the state `object.__reduce_ex__(4)` gives: its __dict__, read without its hooks
        state = value.generic_getattr(tx, "__dict__").realize() if value.value is not None else None
        entries = dict(state.items) if state is not None else {}
        entries.update(value.attributes)
        attributes = {name: _copy(tx, entry, memo) for name, entry in entries.items()}
        copied = copied.clone(attributes=attributes)
        tx.output.side_effects.track_new(copied)
        memo[value.object_id] = copied
        return copied
    graph_break(UNSUPPORTED_CALL, f"copy.deepcopy() of {value}")


def _is_atomic(value: object) -> bool:
    """What copy's `_deepcopy_atomic` returns as it is: constants, classes, functions."""
    return value is None or isinstance(value, (
        int, float, complex, str, bytes, bool, type, range, types.FunctionType,
        types.BuiltinFunctionType, types.CodeType)) or value is Ellipsis


def _is_plain_copy(cls: type) -> bool:
    """A class whose instances copy.deepcopy copies entry by entry of their `__dict__`."""
    return (cls.__new__ is object.__new__
            and all(getattr(cls, hook, None) is getattr(object, hook, None) for hook in COPY_HOOKS)
            and not any("__slots__" in vars(base) for base in cls.__mro__))
