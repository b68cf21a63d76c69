"""A common mistake: rule 2 (a graph node) only looks at the left operand, so `2 - x`
and `3 / x` go to rule 3 and ask the int for a method it does not have."""

from __future__ import annotations

import collections
import functools
import operator
import sys
import types
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence
import torch
from minidynamo import polyfills
from minidynamo.exc import UNSUPPORTED_BUILTIN, UNSUPPORTED_CALL, graph_break
from minidynamo.variables.base import VariableTracker, call_checked, constant_values, method_handler_name, new_object_id
from minidynamo.variables.constant import ConstantVariable, constant, fold, fold_value
from minidynamo.variables.dicts import ConstDictVariable, as_key, dict_items, set_from_values
from minidynamo.variables.iterators import ListIteratorVariable
from minidynamo.variables.lists import ListVariable, RangeVariable, SliceVariable, TupleVariable, sorted_items
from minidynamo.variables.tensor import TensorVariable
if TYPE_CHECKING:
    from minidynamo.codegen import PyCodegen
    from minidynamo.translator.base import InstructionTranslatorBase as Translator

# defined next to the exercises in the package:
from minidynamo.variables.builtins import (
    BUILTIN_HANDLERS, CLASS_FACTORIES, CONTAINER_OPERATORS, IN_PLACE_FALLBACK,
    OPERATOR_DUNDERS, POLYFILLS, Variable, is_pure, tensor_operator,
)


def call_operator(tx: Translator, fn: Callable[..., Any], args: list[Variable]) -> Variable:
    """`fn(*args)` for an `operator` function: fold, add a graph node, or dispatch."""
    values = constant_values(args)
    if values is not None and not any(arg.is_mutable() for arg in args):
        return fold(fn, values, {})  # rule 1: constants fold
    if isinstance(args[0], TensorVariable):
        return tensor_operator(tx, fn, args)  # rule 2: a graph node
    dunder = OPERATOR_DUNDERS[fn]  # rule 3: the operand's own method
    receiver, rest = args[0], args[1:]
    if dunder in IN_PLACE_FALLBACK and not hasattr(receiver, method_handler_name(dunder)):
        dunder = IN_PLACE_FALLBACK[dunder]
    if not hasattr(receiver, method_handler_name(dunder)) and fn is operator.mul:
        receiver, rest = args[1], args[:1]  # 3 * [x]: int has no list rule, list has
    return receiver.call_method(tx, dunder, rest, {})


class BuiltinVariable:
    """The exercise methods of minidynamo.variables.builtins.BuiltinVariable; the class keeps all its others."""

    def call_function(
        self, tx: Translator, args: Sequence[VariableTracker], kwargs: dict[str, VariableTracker]
    ) -> VariableTracker:
        if self.fn in POLYFILLS:  # inlined, so lazy arguments stay lazy
            from minidynamo.variables.functions import UserFunctionVariable

            return UserFunctionVariable(POLYFILLS[self.fn]).call_function(tx, args, kwargs)
        args = [arg.realize() for arg in args]
        kwargs = {name: value.realize() for name, value in kwargs.items()}
        handler = BUILTIN_HANDLERS.get(self.fn)
        if handler is not None:
            return call_checked(handler, tx, args, kwargs, self.fn.__name__)
        if self.fn in OPERATOR_DUNDERS and not kwargs:
            return call_operator(tx, self.fn, args)
        values = constant_values([*args, *kwargs.values()])
        if values is not None and is_pure(self.fn):
            return fold(self.fn, values[: len(args)], dict(zip(kwargs, values[len(args):])))
        if values is not None and self.fn in CLASS_FACTORIES:  # namedtuple("P", "x y"): a new class
            from minidynamo.variables.builder import VariableBuilder

            result = fold_value(self.fn, values[: len(args)], dict(zip(kwargs, values[len(args):])))
            return VariableBuilder(tx.output, None)(result)
        # torch's split: a function of the builtins module is an untraceable builtin
        # (GB0059); C code from any other module (os.getcwd) is a call it skips
        in_builtins = getattr(self.fn, "__module__", None) == "builtins"
        kind = UNSUPPORTED_BUILTIN if in_builtins else UNSUPPORTED_CALL
        graph_break(kind, f"builtin {self.fn.__name__}() with arguments {args}")
