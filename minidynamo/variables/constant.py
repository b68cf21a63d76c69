"""ConstantVariable: Python values known at trace time, folded as they are used (chapter 3).

An `int`, `str`, `None`, `torch.float32` ... is *specialised*: the tracer keeps
its value and computes with it directly, so `scale + i` becomes `3` while
tracing and the graph only ever sees the result. This is how loops over
`range(3)` unroll and why `x * (2 + 1)` records a single `mul` by 3.

Compare with TorchDynamo: `torch/_dynamo/variables/constant.py`
(`ConstantVariable`, `EnumVariable`).
"""

from __future__ import annotations

import enum
import types
import typing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

import torch

from minidynamo import polyfills
from minidynamo.exc import UNSUPPORTED_CALL, UNSUPPORTED_VALUE, graph_break, raise_observed
from minidynamo.shapes import as_number
from minidynamo.variables.base import VariableTracker, constant_values

if TYPE_CHECKING:
    from minidynamo.codegen import PyCodegen
    from minidynamo.translator.base import InstructionTranslatorBase as Translator

# Immutable values a ConstantVariable may hold (tuples become TupleVariables).
CONSTANT_TYPES: tuple[type, ...] = (
    int, float, bool, complex, str, bytes, type(None), type(Ellipsis),
    type(NotImplemented), torch.dtype, torch.device, torch.layout,
    torch.memory_format, types.CodeType, enum.Enum,
    # type annotations: `typing.Union`, `Optional[int]`, `list[str]`, `int | None`
    typing._SpecialForm, typing._BaseGenericAlias, types.GenericAlias, types.UnionType,
    typing.TypeVar, typing.ForwardRef,
)


def is_dict_key_value(value: Any) -> bool:
    """A dict key the tracer can index with: a constant, or a class or function, which
    hashes by identity (huggingface_hub keys its type validators by `list`, `dict` ...)."""
    return is_constant_value(value) or (
        isinstance(value, (type, types.FunctionType, types.BuiltinFunctionType))
        and type(value).__hash__ in (type.__hash__, object.__hash__))


def is_constant_value(value: Any) -> bool:
    """Whether `value` is an immutable constant (tuples and frozensets of them too)."""
    if isinstance(value, (tuple, frozenset)):
        return all(is_constant_value(item) for item in value)
    if isinstance(value, slice):
        return all(is_constant_value(v) for v in (value.start, value.stop, value.step))
    return isinstance(value, CONSTANT_TYPES)


@dataclass(frozen=True, eq=False, repr=False)
class ConstantVariable(VariableTracker):
    """A Python constant; operations on constants fold at trace time."""

    value: Any

    def python_type(self) -> type:
        return type(self.value)

    def as_python_constant(self) -> Any:
        return self.value

    def as_proxy(self) -> Any:
        if isinstance(self.value, enum.Enum) and isinstance(self.value, int):
            return int(self.value)  # an IntEnum is a plain int in the graph, as in torch's
        return self.value

    def var_getattr(self, tx: Translator, name: str) -> VariableTracker:
        from minidynamo.variables.misc import GetAttrVariable

        if not hasattr(self.value, name):
            raise_observed(AttributeError,
                           f"{type(self.value).__name__!r} object has no attribute {name!r}")
        attribute = getattr(self.value, name)
        if callable(attribute):
            return GetAttrVariable(self, name)  # a bound method, folded when called
        return constant(attribute)

    def call_method(
        self,
        tx: Translator,
        name: str,
        args: Sequence[VariableTracker],
        kwargs: dict[str, VariableTracker],
    ) -> VariableTracker:
        args = [materialize_iterator(tx, arg) for arg in args]  # "".join(reversed(xs))
        values = constant_values(args)
        keyword_values = constant_values(list(kwargs.values()))
        if values is None or keyword_values is None:
            what = f"{type(self.value).__name__}.{name}() with non-constant arguments"
            graph_break(UNSUPPORTED_CALL, what)
        method = getattr(self.value, name)
        return fold(method, values, dict(zip(kwargs, keyword_values)))

    def unpack_var_sequence(self, tx: Translator) -> list[VariableTracker]:
        if isinstance(self.value, (str, bytes, tuple, frozenset)):
            return [constant(item) for item in self.value]
        if not hasattr(type(self.value), "__iter__"):  # `tuple(5)`, `for c in None`
            raise_observed(TypeError, f"{type(self.value).__name__!r} object is not iterable")
        return super().unpack_var_sequence(tx)

    def reconstruct(self, codegen: PyCodegen) -> None:
        codegen.load_const(self.value)

    def __repr__(self) -> str:
        return f"ConstantVariable({type(self.value).__name__}: {self.value!r})"


def materialize_iterator(tx: Translator, value: VariableTracker) -> VariableTracker:
    """An iterator argument of a constant's method, consumed into a tuple of its items."""
    from minidynamo.variables.iterators import IteratorVariable
    from minidynamo.variables.lists import TupleVariable

    value = value.realize()
    if isinstance(value, IteratorVariable):
        return TupleVariable(tuple(value.unpack_var_sequence(tx)))
    return value


def constant(value: Any) -> VariableTracker:
    """The tracker of a constant; tuples of constants become TupleVariables (a
    specialized symbol, `SymInt(3)`, is its number: `as_number`)."""
    value = as_number(value)
    if isinstance(value, tuple) and not isinstance(value, torch.Size):
        from minidynamo.variables.lists import NamedTupleVariable, TupleVariable

        items = tuple(constant(item) for item in value)
        if type(value) is tuple:
            return TupleVariable(items)
        if hasattr(type(value), "_fields") or hasattr(type(value), "n_sequence_fields"):
            # `max(p, Point(0, 0))`, a namedtuple key: stays of its class
            return NamedTupleVariable(items, tuple_class=type(value))
        graph_break(UNSUPPORTED_VALUE, f"the {type(value).__name__} {value!r} is a tuple of "
                    "a class of its own")
    if isinstance(value, torch.Size):
        from minidynamo.variables.lists import SizeVariable

        return SizeVariable(tuple(constant(item) for item in value))
    if isinstance(value, slice):
        from minidynamo.variables.lists import SliceVariable

        return SliceVariable(constant(value.start), constant(value.stop), constant(value.step))
    if type(value) in (list, dict, set):  # e.g. "a b".split(): a new mutable container
        return _new_container(value)
    if not is_constant_value(value):
        from minidynamo.variables.frozen import FROZEN_TYPES, frozen

        if isinstance(value, FROZEN_TYPES):  # an `inspect.Parameter` out of a signature
            return frozen(value)
        graph_break(UNSUPPORTED_VALUE, f"the {type(value).__name__} {value!r} is not a constant")
    return ConstantVariable(value)


def _new_container(value: list | dict | set) -> VariableTracker:
    from minidynamo.variables.base import new_object_id
    from minidynamo.variables.dicts import ConstDictVariable, set_from_values
    from minidynamo.variables.lists import ListVariable

    if isinstance(value, list):
        return ListVariable(tuple(constant(item) for item in value), object_id=new_object_id())
    if isinstance(value, dict):
        items = {key: constant(item) for key, item in value.items()}
        return ConstDictVariable(items, object_id=new_object_id())
    return set_from_values(list(value))


def fold(function: Any, args: Sequence[Any], kwargs: dict[str, Any]) -> VariableTracker:
    """Run a pure function on constants now, at trace time, and track the result."""
    return constant(fold_value(function, args, kwargs))


def fold_value(function: Any, args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
    """`function(*args, **kwargs)` on constants, at trace time; an exception it raises
    is raised symbolically, with the same type and arguments (chapter 8)."""
    try:
        return function(*args, **kwargs)
    except Exception as error:  # the user's code raises the same in eager
        raise_observed(type(error), *error.args)


def is_number(value: VariableTracker) -> bool:
    """Whether `value` is a constant of a builtin number type (a bool, an int, a float)."""
    return isinstance(value, ConstantVariable) and type(value.value) in polyfills.NUMBERS


def is_sequence_constant(value: VariableTracker) -> bool:
    """A str, bytes or tuple constant: on the left of `*` it repeats itself, and asks
    the right operand for a count (`'s' * [1]` names the list in its TypeError)."""
    return isinstance(value, ConstantVariable) and isinstance(value.value, (str, bytes, tuple))
