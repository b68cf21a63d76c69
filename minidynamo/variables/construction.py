"""Making instances while tracing: what `cls(*args)` does (chapter 3).

Calling a class runs `type.__call__`: `obj = cls.__new__(cls, *args)`, then, if `obj`
is an instance of `cls`, `obj.__init__(*args)`. The tracer does the same steps on
trackers, by the kind of class:

| the class | what `cls(*args)` makes |
|---|---|
| `torch.Size`, a namedtuple, `OrderedDict` / `defaultdict`, `deque` | the builtin tracker of that type |
| a plain class (`object.__new__`, or a dict / list / tuple subclass's builtin one) | a new object tracker, then `__init__` inlined |
| a class with its own `__new__` in Python (a tuple subclass that takes its items) | `__new__` inlined, then `__init__` if it made an instance of `cls` |

A Python `__new__` ends in the builtin one, `super().__new__(cls, items)`: the
builtins table sends `tuple.__new__` and `object.__new__` here (`tuple_new`,
`object_new`), and namedtuple's `_make` calls `tuple.__new__` too.

Compare with TorchDynamo: `torch/_dynamo/variables/user_defined.py`
(`UserDefinedClassVariable.call_function`, `UserDefinedTupleVariable`) and
`builtin.py` (`call_tuple_new`, `call_object_new`).
"""

from __future__ import annotations

import collections
import inspect
import types
from typing import TYPE_CHECKING, Any, Sequence

import torch

from minidynamo.exc import EXCEPTION_IN_TRACED_CODE, UNSUPPORTED_CALL, graph_break, raise_observed
from minidynamo.sources import AttrSource
from minidynamo.variables.base import VariableTracker, new_object_id
from minidynamo.variables.constant import ConstantVariable, constant
from minidynamo.variables.dicts import ConstDictVariable, DictPartVariable, dict_items
from minidynamo.variables.lists import (
    ListVariable,
    NamedTupleVariable,
    SizeVariable,
    TupleVariable,
    make_deque,
)
from minidynamo.variables.user_classes import UserDefinedClassVariable
from minidynamo.variables.user_defined import (
    DICT_BASES,
    UserDefinedDictVariable,
    UserDefinedObjectVariable,
    UserDefinedSequenceVariable,
    builtin_method,
    container_base,
)

if TYPE_CHECKING:
    from minidynamo.sources import Source
    from minidynamo.translator.base import InstructionTranslatorBase as Translator


def construct(
    tx: Translator,
    class_variable: UserDefinedClassVariable,
    args: Sequence[VariableTracker],
    kwargs: dict[str, VariableTracker],
) -> VariableTracker:
    """`cls(*args, **kwargs)` while tracing, by the kind of class (the table above)."""
    cls = class_variable.cls
    if cls is torch.Size:
        return SizeVariable(tuple(args[0].unpack_var_sequence(tx)))
    if issubclass(cls, tuple) and hasattr(cls, "_fields"):
        items = tuple(_namedtuple_items(cls, args, kwargs))
        return NamedTupleVariable(items, tuple_class=cls)
    if cls in (collections.OrderedDict, collections.defaultdict):
        return _construct_dict(tx, cls, args, kwargs)
    if cls is collections.deque:
        return make_deque(tx, args, kwargs)
    abstract = getattr(cls, "__abstractmethods__", ())
    if abstract and cls.__new__ is object.__new__:  # object.__new__ refuses, in these words
        names = sorted(abstract)
        raise_observed(TypeError, f"Can't instantiate abstract class {cls.__name__} with "
                       f"abstract method{'s' if len(names) > 1 else ''} {', '.join(names)}")
    if _makes_instances(cls) and cls.__new__ is (container_base(cls) or object).__new__:
        return _construct(tx, class_variable, args, kwargs)
    new = _python_new(cls)
    if _makes_instances(cls) and new is not None:
        return _construct_with_new(tx, class_variable, new, args, kwargs)
    graph_break(UNSUPPORTED_CALL, f"constructing a {cls.__name__} while tracing")


def _namedtuple_items(
    cls: type, args: Sequence[VariableTracker], kwargs: dict[str, VariableTracker]
) -> list[VariableTracker]:
    """Positional and keyword arguments of a namedtuple, in field order, with defaults."""
    values = dict(zip(cls._fields, args))
    values.update(kwargs)
    for name, default in cls._field_defaults.items():
        values.setdefault(name, constant(default))
    if set(values) != set(cls._fields):
        graph_break(EXCEPTION_IN_TRACED_CODE, f"{cls.__name__}() got fields {sorted(values)}")
    return [values[name] for name in cls._fields]


def _construct_dict(
    tx: Translator,
    dict_class: type,
    args: Sequence[VariableTracker],
    kwargs: dict[str, VariableTracker],
) -> VariableTracker:
    """`OrderedDict(pairs)` or `defaultdict(factory, pairs)`: a new dict tracker of that class."""
    factory = None
    if dict_class is collections.defaultdict:
        factory, args = (args[0], args[1:]) if args else (ConstantVariable(None), ())
        if factory.is_python_constant() and factory.as_python_constant() is None:
            factory = None
    items = {**(dict_items(tx, args[0]) if args else {}), **kwargs}
    return ConstDictVariable(items, dict_class, factory, object_id=new_object_id())


def _makes_instances(cls: type) -> bool:
    """A class whose instances we can make symbolically: `type.__call__` (a metaclass
    such as ABCMeta that does not override `__call__` is fine), no tensor, exception or
    defaultdict base, an `__init__` and a `__setattr__` that are Python functions or the
    builtin ones. Slots are kept in the tracker's attributes."""
    base = container_base(cls) or object
    return (
        type(cls).__call__ is type.__call__
        and not issubclass(cls, (torch.Tensor, BaseException, collections.defaultdict))
        and (cls.__init__ is base.__init__ or isinstance(cls.__init__, types.FunctionType))
        and (cls.__setattr__ is object.__setattr__
             or isinstance(cls.__setattr__, types.FunctionType))
    )


def _python_new(cls: type) -> types.FunctionType | None:
    """The class's own `__new__` (an implicit staticmethod), if it is written in Python."""
    new = inspect.getattr_static(cls, "__new__", None)
    function = new.__func__ if isinstance(new, staticmethod) else None
    return function if isinstance(function, types.FunctionType) else None


def new_instance(
    tx: Translator, cls: type, items: tuple[VariableTracker, ...] = (),
    class_source: Source | None = None, new_args: tuple[VariableTracker, ...] = (),
) -> UserDefinedObjectVariable:
    """A new, empty instance of `cls` (what the builtin `__new__` makes): an object, or
    for a container subclass an object with its part (a tuple's holds `items`).
    `class_source` is where the class was read: the guards on what the instance finds
    on its class (`__enter__`, a property's getter) read it again there. `new_args`
    are the constructor's arguments, passed to the base's `__new__` when it is remade."""
    base = container_base(cls)
    if base is None:
        obj = UserDefinedObjectVariable(None, cls, object_id=new_object_id(),
                                        class_source=class_source, new_args=new_args)
    elif base in DICT_BASES:
        contents = DictPartVariable({}, base, object_id=new_object_id())
        tx.output.side_effects.track_new(contents)
        obj = UserDefinedDictVariable(None, cls, contents=contents, object_id=new_object_id(),
                                      class_source=class_source)
    else:
        part = (TupleVariable if base is tuple else ListVariable)(items, object_id=new_object_id())
        tx.output.side_effects.track_new(part)
        obj = UserDefinedSequenceVariable(None, cls, contents=part, object_id=new_object_id(),
                                          class_source=class_source, new_args=new_args)
    tx.output.side_effects.track_new(obj)
    return obj


def _construct(
    tx: Translator,
    class_variable: UserDefinedClassVariable,
    args: Sequence[VariableTracker],
    kwargs: dict[str, VariableTracker],
) -> VariableTracker:
    """`cls(*args)`: a new object tracker, then its `__init__` inlined. A container
    subclass gets its part first: a tuple's items are `tuple.__new__`'s (its first
    argument), a dict's and a list's are filled by the builtin `__init__` when the
    class has no Python one (`dict.update`, `list.extend`)."""
    from minidynamo.variables.functions import UserFunctionVariable

    cls = class_variable.cls
    base = container_base(cls)
    own_init = isinstance(cls.__init__, types.FunctionType)
    guard_constructor(tx, class_variable, "__init__")
    if base in (list, tuple):
        if len(args) > 1 and not own_init:
            raise_observed(TypeError, f"{base.__name__} expected at most 1 argument, got {len(args)}")
        if kwargs and not own_init:
            raise_observed(TypeError, f"{base.__name__}() takes no keyword arguments")
        if base is tuple and len(args) > 1:
            raise_observed(TypeError, f"tuple expected at most 1 argument, got {len(args)}")
    items = tuple(args[0].unpack_var_sequence(tx)) if base is tuple and args else ()
    new_args = () if base in DICT_BASES else tuple(args)  # TorchDynamo's `init_args`
    obj = new_instance(tx, cls, items, class_variable.source, new_args)
    if own_init:
        UserFunctionVariable(cls.__init__).call_function(tx, [obj, *args], kwargs)
    elif base in DICT_BASES:
        builtin_method(tx, obj, base, "update").call_function(tx, args, kwargs)
    elif base is list and args:
        builtin_method(tx, obj, list, "extend").call_function(tx, args, {})
    elif base is None and (args or kwargs):
        raise_observed(TypeError, f"{cls.__name__}() takes no arguments")
    return tx.output.side_effects.latest(obj)


def guard_constructor(tx: Translator, class_variable: UserDefinedClassVariable, name: str) -> None:
    """The class's `__init__` (or `__new__`) is the one traced, next time too: one
    replaced between calls (`K.__init__ = other`) makes another object."""
    if class_variable.source is not None:  # `G['K'].__init__`: the function itself
        tx.output.guards.add("ID_MATCH", AttrSource(class_variable.source, name),
                             getattr(class_variable.cls, name))


def _construct_with_new(
    tx: Translator,
    class_variable: UserDefinedClassVariable,
    new: types.FunctionType,
    args: Sequence[VariableTracker],
    kwargs: dict[str, VariableTracker],
) -> VariableTracker:
    """`type.__call__` for a class with a Python `__new__`: `__new__(cls, *args)`
    inlined, then `__init__(obj, *args)` when `obj` is an instance of the class and its
    `__init__` is a Python function (the builtin one does nothing more)."""
    from minidynamo.variables.functions import UserFunctionVariable

    guard_constructor(tx, class_variable, "__new__")
    guard_constructor(tx, class_variable, "__init__")
    obj = UserFunctionVariable(new).call_function(tx, [class_variable, *args], kwargs)
    obj = tx.output.side_effects.latest(obj.realize())
    made = obj.python_type()
    if issubclass(made, class_variable.cls) and isinstance(made.__init__, types.FunctionType):
        UserFunctionVariable(made.__init__).call_function(tx, [obj, *args], kwargs)
        obj = tx.output.side_effects.latest(obj)
    return obj


def tuple_new(
    tx: Translator, cls: VariableTracker, iterable: VariableTracker | None = None
) -> VariableTracker:
    """`tuple.__new__(cls, iterable)`: a tuple, a namedtuple (`_make`), or an instance of
    a tuple subclass holding the items (`super().__new__(cls, items)` in its `__new__`)."""
    tuple_class = cls.as_python_constant()
    if not (isinstance(tuple_class, type) and issubclass(tuple_class, tuple)):
        raise_observed(TypeError, f"tuple.__new__({tuple_class!r}): not a subtype of tuple")
    items = tuple(iterable.unpack_var_sequence(tx)) if iterable is not None else ()
    if tuple_class is tuple:
        return TupleVariable(items)
    if hasattr(tuple_class, "_fields"):
        return NamedTupleVariable(items, tuple_class=tuple_class)
    if not _makes_instances(tuple_class):
        graph_break(UNSUPPORTED_CALL, f"tuple.__new__ of {tuple_class.__name__}")
    return new_instance(tx, tuple_class, items, cls.source)


def object_new(tx: Translator, cls: VariableTracker, *args: Any) -> VariableTracker:
    """`object.__new__(cls)`: a new, empty instance (a singleton's `__new__`, a factory).
    From a Python `__new__`, the class's arguments are not passed on: a TypeError."""
    instance_class = cls.as_python_constant()
    if not (isinstance(instance_class, type) and _makes_instances(instance_class)
            and container_base(instance_class) is None):
        graph_break(UNSUPPORTED_CALL, f"object.__new__ of {instance_class!r}")
    if args and _python_new(instance_class) is not None:
        raise_observed(TypeError, "object.__new__() takes exactly one argument (the type to "
                       "instantiate)")
    return new_instance(tx, instance_class, class_source=cls.source)
