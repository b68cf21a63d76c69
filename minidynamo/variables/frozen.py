"""Library functions answered at trace time, and the immutable objects they return (chapter 3).

`inspect.signature(fn)` reads nothing but the code and defaults of `fn`, which the
trace already guards; tracing its 300 lines of `inspect` would only reach C code
minidynamo cannot follow. So it runs now, for real, and its result, a `Signature`,
is a `FrozenObjectVariable`: attributes are read off the real object, methods are
called on it with constant arguments, and what comes back is wrapped in turn
(constants as constants, `Parameter`s and the `parameters` mapping as frozen
objects). TorchDynamo has the same rule for the same function
(`variables/functions.py`, `InspectSignatureVariable`). `torch.finfo(dtype)` and
`torch.iinfo(dtype)` are answered the same way (a dtype's limits never change).
"""

from __future__ import annotations

import inspect
import types
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence

import torch

from minidynamo.exc import UNSUPPORTED_CALL, graph_break, raise_observed
from minidynamo.variables.base import KnownFunctionVariable, VariableTracker, constant_values
from minidynamo.variables.constant import ConstantVariable, fold_value, is_constant_value

if TYPE_CHECKING:
    from minidynamo.codegen import PyCodegen
    from minidynamo.translator.base import InstructionTranslatorBase as Translator

# Objects that never change once made, safe to read and call at trace time.
FROZEN_TYPES = (inspect.Signature, inspect.Parameter, types.MappingProxyType,
                type(inspect.Parameter.empty), torch.finfo, torch.iinfo)


def frozen(value: Any) -> VariableTracker:
    """The tracker of a value read off a frozen object."""
    if is_constant_value(value) or value is inspect.Parameter.empty:
        return ConstantVariable(value)
    if isinstance(value, tuple):
        from minidynamo.variables.lists import TupleVariable

        return TupleVariable(tuple(frozen(item) for item in value))
    if isinstance(value, FROZEN_TYPES) or (
            isinstance(value, types.MethodType) and isinstance(value.__self__, FROZEN_TYPES)):
        return FrozenObjectVariable(value)
    graph_break(UNSUPPORTED_CALL, f"a {type(value).__name__} read off a frozen object")


def _signature(tx: Translator, target: VariableTracker, **options: VariableTracker) -> Any:
    """`inspect.signature(fn)` of a function known by its code: a bound method's
    signature does not depend on the object it is bound to."""
    from minidynamo.variables.functions import UserFunctionVariable, UserMethodVariable

    target = target.realize()
    settings = constant_values(list(options.values()))
    if settings is None or not isinstance(target, UserFunctionVariable):
        graph_break(UNSUPPORTED_CALL, f"inspect.signature of {target}")
    fn = target.fn
    if isinstance(target, UserMethodVariable):
        fn = types.MethodType(fn, object())
    return fold_value(inspect.signature, [fn], dict(zip(options, settings)))


def _on_constants(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` called at trace time on constant arguments: `torch.finfo(x.dtype)`."""
    def call(tx: Translator, *args: VariableTracker, **kwargs: VariableTracker) -> Any:
        values = constant_values([*args, *kwargs.values()])
        if values is None:
            graph_break(UNSUPPORTED_CALL, f"{fn.__name__}() of values that are not constants")
        return fold_value(fn, values[: len(args)], dict(zip(kwargs, values[len(args):])))

    return call


FROZEN_FUNCTIONS: dict[Callable[..., Any], Callable[..., Any]] = {
    inspect.signature: _signature,
    torch.finfo: _on_constants(torch.finfo),  # a dtype's limits: eps, min, max, bits ...
    torch.iinfo: _on_constants(torch.iinfo),
}


def is_frozen_function(value: Any) -> bool:
    return isinstance(value, (types.FunctionType, type)) and value in FROZEN_FUNCTIONS


@dataclass(frozen=True, eq=False, repr=False)
class FrozenFunctionVariable(KnownFunctionVariable):
    """A function of `FROZEN_FUNCTIONS`, run at trace time."""

    def call_function(
        self, tx: Translator, args: Sequence[VariableTracker], kwargs: dict[str, VariableTracker]
    ) -> VariableTracker:
        return frozen(FROZEN_FUNCTIONS[self.fn](tx, *args, **kwargs))


@dataclass(frozen=True, eq=False, repr=False)
class FrozenObjectVariable(VariableTracker):
    """An immutable object made at trace time (a `Signature`, a `Parameter`)."""

    value: Any

    def python_type(self) -> type:
        return type(self.value)

    def as_python_constant(self) -> Any:
        return self.value

    def var_getattr(self, tx: Translator, name: str) -> VariableTracker:
        try:
            return frozen(getattr(self.value, name))
        except AttributeError as error:
            raise_observed(AttributeError, *error.args)

    def call_function(
        self, tx: Translator, args: Sequence[VariableTracker], kwargs: dict[str, VariableTracker]
    ) -> VariableTracker:
        if not callable(self.value):
            graph_break(UNSUPPORTED_CALL, f"calling a {type(self.value).__name__}")
        values = constant_values([*args, *kwargs.values()])
        if values is None:
            graph_break(UNSUPPORTED_CALL, f"{self.value!r} with arguments that are not constants")
        return frozen(fold_value(self.value, values[: len(args)], dict(zip(kwargs, values[len(args):]))))

    def call_method(
        self, tx: Translator, name: str, args: Sequence[VariableTracker],
        kwargs: dict[str, VariableTracker],
    ) -> VariableTracker:
        method = getattr(type(self.value), name, None)
        if method is None:
            raise_observed(AttributeError, f"{type(self.value).__name__!r} object has no "
                           f"attribute {name!r}")
        return FrozenObjectVariable(types.MethodType(method, self.value)).call_function(
            tx, args, kwargs)

    def unpack_var_sequence(self, tx: Translator) -> list[VariableTracker]:
        return [frozen(item) for item in self.value]

    def reconstruct(self, codegen: PyCodegen) -> None:
        codegen.load_object(self.value)

    def __repr__(self) -> str:
        return f"FrozenObjectVariable({type(self.value).__name__})"
