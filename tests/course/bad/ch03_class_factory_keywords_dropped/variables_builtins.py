"""A common mistake: the class-factory branch of BuiltinVariable.call_function passes
the positional constants only, so namedtuple(..., defaults=[3]) makes a class without
its defaults."""

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
from minidynamo.resume.origins import resume_origin
from minidynamo.exc import DATA_DEPENDENT_BRANCH, DATA_DEPENDENT_VALUE, EXCEPTION_IN_TRACED_CODE, UNSUPPORTED_BUILTIN, UNSUPPORTED_CALL, UNSUPPORTED_OPERATOR, UNSUPPORTED_PYTHON_FEATURE, ObservedException, graph_break, raise_observed
from minidynamo.variables.base import KnownFunctionVariable, VariableTracker, call_checked, constant_values, method_handler_name, new_object_id
from minidynamo.variables.constant import ConstantVariable, constant, fold, fold_value
from minidynamo.variables.dicts import ConstDictVariable, as_key, dict_items, set_from_values
from minidynamo.variables.iterators import ListIteratorVariable
from minidynamo.variables.lists import BaseListVariable, ListVariable, RangeVariable, SliceVariable, TupleVariable, sorted_items
from minidynamo.variables.sym_node import SymNodeVariable, specialized
from minidynamo.variables.tensor import TensorVariable
if TYPE_CHECKING:
    from minidynamo.translator.base import InstructionTranslatorBase as Translator

# defined next to the exercises in the package:
from minidynamo.variables.builtins import (
    BUILTIN_HANDLERS, CLASS_FACTORIES, CONTAINER_OPERATORS, IN_PLACE_FALLBACK,
    OPERATOR_DUNDERS, POLYFILLS, SUBSCRIPTED_CONTAINERS, Variable, is_pure,
    tensor_operator,
)


def call_operator(tx: Translator, fn: Callable[..., Any], args: list[Variable]) -> Variable:
    """`fn(*args)` for an `operator` function: fold, add a graph node, or dispatch."""
    if fn is operator.getitem and isinstance(args[0], SUBSCRIPTED_CONTAINERS):
        # `xs[0]`: the item itself, still lazy; asking whether `xs` folds would make its
        # first tensor a graph input (TorchDynamo's getitem handler does not ask either).
        return args[0].call_method(tx, "__getitem__", args[1:], {})
    # rule 1: constants fold; a mutable object never does (`"a" in d` would read all of d)
    if not any(arg.is_mutable() for arg in args) and (values := constant_values(args)) is not None:
        return fold(fn, values, {})
    if isinstance(args[0], TensorVariable) or (
        fn not in CONTAINER_OPERATORS and any(isinstance(arg, TensorVariable) for arg in args)
    ):
        return tensor_operator(tx, fn, args)  # rule 2: a graph node
    if any(isinstance(arg, SymNodeVariable) for arg in args) and all(
            isinstance(arg, SymNodeVariable) or is_number(arg) for arg in args):
        return symbol_operator(tx, fn, args)  # s77 * 2: a node too ('%d' % s77 is not)
    dunder = OPERATOR_DUNDERS[fn]  # rule 3: the operand's own method
    receiver, rest = args[0], args[1:]
    if dunder in IN_PLACE_FALLBACK and not hasattr(receiver, method_handler_name(dunder)):
        dunder = IN_PLACE_FALLBACK[dunder]
    if dunder in polyfills.REFLECTED_OPERATORS and is_number(receiver) and user_object(args[1]):
        # 2 * obj: a number's method declines an object of a user class; Python then
        # asks the object's reflected method (`obj.__rmul__(2)`), traced as plain Python
        from minidynamo.variables.functions import UserFunctionVariable

        return UserFunctionVariable(polyfills.binary_operator).call_function(
            tx, [receiver, args[1], ConstantVariable(dunder)], {})
    if fn is operator.mul and not hasattr(receiver, method_handler_name(dunder)) and hasattr(
            args[1], method_handler_name(dunder)) and not is_sequence_constant(receiver):
        receiver, rest = args[1], args[:1]  # 3 * [x]: int has no list rule, list has
    elif isinstance(receiver, ConstantVariable) and (values := constant_values(args)) is not None:
        return fold(fn, values, {})  # 3 == [1], None + [1]: the operator's protocol, not int's method
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

            result = fold_value(self.fn, values[: len(args)], {})  # the mistake: keywords dropped
            return VariableBuilder(tx.output, None)(result)
        # torch's split: a function of the builtins module is an untraceable builtin
        # (GB0059); C code from any other module (os.getcwd) is a call it skips
        in_builtins = getattr(self.fn, "__module__", None) == "builtins"
        kind = UNSUPPORTED_BUILTIN if in_builtins else UNSUPPORTED_CALL
        graph_break(kind, f"builtin {self.fn.__name__}() with arguments {args}")
