"""Builtins and operators: one `call_function` protocol for `len`, `range`, `+` ... (chapter 3).

`BuiltinVariable(fn)` wraps a builtin function or an `operator` function. The
translator's BINARY_OP handler is nothing but
`BuiltinVariable(operator.add).call_function(tx, [a, b], {})` (the `stack_op`
idea of TorchDynamo), so every operator goes through the same three rules:

1. all operands are immutable constants  -> fold now: `2 + 3` is `5`;
2. an operand is a tensor                 -> add an FX node: `operator.add(x, 2)`;
3. otherwise                              -> ask the left operand's tracker:
   `operator.add(list, list)` is `ListVariable.dunder_add`.

Other builtins have a handler each in `BUILTIN_HANDLERS` (a table, like
Autodidax's `impl_rules`); builtins written in C that loop over their argument
(`sum`, `any`, `all`, `functools.reduce`) are replaced by the Python
`polyfills` and inlined.

Compare with TorchDynamo: `torch/_dynamo/variables/builtin.py` (`BuiltinVariable`,
`_call_min_max`, `call_len`, ...), which is 3,600 lines; the rules are the same.
"""

from __future__ import annotations


import builtins
import collections
import copy
import functools
import itertools
import operator
import sys
import types
import typing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence

import torch

from minidynamo import polyfills
from minidynamo.resume.origins import original_code
from minidynamo.exc import (
    DATA_DEPENDENT_BRANCH,
    DATA_DEPENDENT_VALUE,
    UNSUPPORTED_BUILTIN,
    UNSUPPORTED_CALL,
    UNSUPPORTED_OPERATOR,
    UNSUPPORTED_PYTHON_FEATURE,
    ObservedException,
    graph_break,
    raise_observed,
)
from minidynamo.variables.base import (
    KnownFunctionVariable,
    VariableTracker,
    call_checked,
    constant_values,
    method_handler_name,
    new_object_id,
)
from minidynamo.variables.constant import (
    ConstantVariable, constant, fold, fold_value, is_constant_value, is_number,
    is_sequence_constant,
)
from minidynamo.variables.deepcopy import deepcopy
from minidynamo.variables.functions import partial
from minidynamo.variables.construction import object_new, tuple_new
from minidynamo.variables.dicts import (
    ConstDictVariable, SetVariable, as_key, dict_items, set_from_values,
)
from minidynamo.variables.keys import is_constant_key, real_object
from minidynamo.variables.iterators import LazyBuiltinIteratorVariable
from minidynamo.variables.lists import (
    BaseListVariable,
    ListVariable,
    RangeVariable,
    SliceVariable,
    TupleVariable,
    sorted_items,
)
from minidynamo.variables.numpy import is_ndarray_operation, ndarray_operator
from minidynamo.variables.super_lookup import call_super
from minidynamo.variables.sym_node import SymNodeVariable, round_number, specialized
from minidynamo.variables.tensor import TensorVariable

if TYPE_CHECKING:
    from minidynamo.translator.base import InstructionTranslatorBase as Translator

Variable = VariableTracker  # a short name for the many handler signatures below

# operator function -> the dunder method that implements it on the left operand
OPERATOR_DUNDERS: dict[Callable[..., Any], str] = {
    operator.add: "__add__", operator.sub: "__sub__", operator.mul: "__mul__",
    operator.truediv: "__truediv__", operator.floordiv: "__floordiv__",
    operator.mod: "__mod__", operator.pow: "__pow__", operator.matmul: "__matmul__",
    operator.and_: "__and__", operator.or_: "__or__", operator.xor: "__xor__",
    operator.lshift: "__lshift__", operator.rshift: "__rshift__",
    operator.iadd: "__iadd__", operator.isub: "__isub__", operator.imul: "__imul__",
    operator.itruediv: "__itruediv__", operator.ifloordiv: "__ifloordiv__",
    operator.imod: "__imod__", operator.ipow: "__ipow__", operator.imatmul: "__imatmul__",
    operator.iand: "__iand__", operator.ior: "__ior__", operator.ixor: "__ixor__",
    operator.ilshift: "__ilshift__", operator.irshift: "__irshift__",
    operator.lt: "__lt__", operator.le: "__le__", operator.eq: "__eq__",
    operator.ne: "__ne__", operator.gt: "__gt__", operator.ge: "__ge__",
    operator.getitem: "__getitem__", operator.setitem: "__setitem__",
    operator.delitem: "__delitem__", operator.contains: "__contains__",
    operator.neg: "__neg__", operator.pos: "__pos__", operator.invert: "__invert__",
    operator.abs: "__abs__",
}

# `x += y` falls back to `x = x + y` when x's type has no in-place method
IN_PLACE_FALLBACK = {
    "__iadd__": "__add__", "__isub__": "__sub__", "__imul__": "__mul__",
    "__itruediv__": "__truediv__", "__ifloordiv__": "__floordiv__", "__imod__": "__mod__",
    "__ipow__": "__pow__", "__imatmul__": "__matmul__", "__iand__": "__and__",
    "__ior__": "__or__", "__ixor__": "__xor__", "__ilshift__": "__lshift__",
    "__irshift__": "__rshift__",
}

# operator.iadd -> operator.add ...: what `x += y` is when x has no in-place method
BINARY_OF_IN_PLACE = {
    fn: next(other for other, name in OPERATOR_DUNDERS.items()
             if name == IN_PLACE_FALLBACK[dunder])
    for fn, dunder in OPERATOR_DUNDERS.items() if dunder in IN_PLACE_FALLBACK
}

# operators that raise ZeroDivisionError for a zero right operand
DIVISIONS = frozenset({operator.truediv, operator.floordiv, operator.mod, operator.itruediv,
                       operator.ifloordiv, operator.imod})

# operators whose first operand is a container: a tensor elsewhere is just an item
CONTAINER_OPERATORS = frozenset({
    operator.getitem, operator.setitem, operator.delitem, operator.contains,
})

# containers whose items `xs[i]` returns without asking whether `xs` folds
SUBSCRIPTED_CONTAINERS = (BaseListVariable, ConstDictVariable)

# `0 < x` is recorded as `x > 0`, as TorchDynamo does
REFLECTED_COMPARISONS = {
    operator.lt: operator.gt, operator.gt: operator.lt, operator.le: operator.ge,
    operator.ge: operator.le, operator.eq: operator.eq, operator.ne: operator.ne,
}

# builtins written in C that loop: traced through a Python version instead
POLYFILLS: dict[Callable[..., Any], Callable[..., Any]] = {
    sum: polyfills.sum, any: polyfills.any, all: polyfills.all,
    functools.reduce: polyfills.reduce, operator.itemgetter: polyfills.itemgetter,
    operator.attrgetter: polyfills.attrgetter, collections._count_elements: polyfills.count_elements,
    operator.methodcaller: polyfills.methodcaller,
    itertools.chain: polyfills.chain, itertools.islice: polyfills.islice,
    itertools.accumulate: polyfills.accumulate, itertools.product: polyfills.product,
    itertools.combinations: polyfills.combinations, itertools.zip_longest: polyfills.zip_longest,
    itertools.chain.from_iterable: polyfills.chain_from_iterable,
    itertools.permutations: polyfills.permutations, itertools.starmap: polyfills.starmap,
    itertools.pairwise: polyfills.pairwise, itertools.compress: polyfills.compress,
    itertools.repeat: polyfills.repeat, itertools.cycle: polyfills.cycle,
    itertools.count: polyfills.count, itertools.groupby: polyfills.groupby,
    itertools.takewhile: polyfills.takewhile, itertools.dropwhile: polyfills.dropwhile,
    itertools.filterfalse: polyfills.filterfalse,
}

# pure builtins that may run at trace time on constant arguments
PURE_BUILTINS = frozenset({
    abs, bool, chr, divmod, float, format, frozenset, hash, int, len, max, min, ord,
    pow, repr, round, sorted, str, complex, bin, hex, oct, issubclass, sys.intern,
    sys.getrecursionlimit,
    typing.get_origin, typing.get_args,
})

# modules whose functions are all pure: math.sqrt, operator.index ... fold on constants
PURE_MODULES = frozenset({"math", "_operator", "operator"})

# functions that make a new class from constants, run at trace time
CLASS_FACTORIES = frozenset({collections.namedtuple})


def is_pure(fn: Any) -> bool:
    """Whether `fn` may run now, at trace time, when all its arguments are constants."""
    return fn in PURE_BUILTINS or getattr(fn, "__module__", None) in PURE_MODULES


@dataclass(frozen=True, eq=False, repr=False)
class BuiltinVariable(KnownFunctionVariable):
    """A builtin function or type (`len`, `range`, `list`) or an `operator` function."""

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

    def var_getattr(self, tx: Translator, name: str) -> VariableTracker:
        from minidynamo.variables.builder import VariableBuilder

        if not hasattr(self.fn, name):
            raise_observed(AttributeError, f"{self.fn.__name__} has no attribute {name!r}")
        return VariableBuilder(tx.output, None)(getattr(self.fn, name))


# ---------------------------------------------------------------------------
# Operators: the three rules
# ---------------------------------------------------------------------------


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


def user_object(value: VariableTracker) -> bool:
    """Whether `value` is an object of a user class that is not itself a number."""
    from minidynamo.variables.user_defined import UserDefinedObjectVariable

    return isinstance(value, UserDefinedObjectVariable) and not issubclass(
        value.python_type(), polyfills.NUMBERS)


def symbol_operator(tx: Translator, fn: Callable[..., Any], args: list[Variable]) -> Variable:
    """An operator on a symbol (a dynamic size or int, chapter 9) and constants: a
    `call_function` node. `n += 1` is `n + 1`: an int is not updated in place, and FX
    writes an `iadd` node as `iadd += 1`, which would change every alias of the old value.
    Dividing by a symbol that is 0 now (guarded, as `bool(n)` is) raises here, where the
    user's `try` catches it, in CPython's words for these types."""
    if fn in DIVISIONS and isinstance(args[1], SymNodeVariable) and not args[1].truth():
        try:
            fn(args[0].python_type()(1), args[1].python_type()(0))
        except ZeroDivisionError as error:
            raise_observed(ZeroDivisionError, *error.args)
    return tx.output.create_node(tx, "call_function", BINARY_OF_IN_PLACE.get(fn, fn), args, {})


def tensor_operator(tx: Translator, fn: Callable[..., Any], args: list[Variable]) -> Variable:
    """An operator with a tensor operand becomes a `call_function` node (with ndarrays
    and no plain tensor, a torch._numpy one: numpy.py)."""
    if is_ndarray_operation(args):
        return ndarray_operator(tx, fn, args)
    if fn is operator.contains:
        graph_break(DATA_DEPENDENT_VALUE, "`in` on a tensor needs the tensor's data")
    if fn is operator.getitem and isinstance(args[1], SymNodeVariable):
        # x[n]: indexing would ask n.__index__() and specialize it; select keeps n a symbol
        return tx.output.create_node(tx, "call_function", torch.select,
                                     [args[0], ConstantVariable(0), args[1]], {})
    if fn in REFLECTED_COMPARISONS and not isinstance(args[0], TensorVariable):
        fn, args = REFLECTED_COMPARISONS[fn], [args[1], args[0]]
    if OPERATOR_DUNDERS[fn] in IN_PLACE_FALLBACK and not isinstance(args[0], TensorVariable):
        fn = BINARY_OF_IN_PLACE[fn]  # `r = 0; r += x`: an int is not updated, `0 + x` is made
    return tx.output.create_node(tx, "call_function", fn, args, {})


def identity_compare(left: VariableTracker, right: VariableTracker,
                     tx: Translator | None = None) -> bool:
    """`left is right` at trace time (IS_OP), or a graph break if it cannot be known.
    Two objects from outside the frame compared (`tx` given): the aliasing guards keep
    them one object or two (`OutputGraph.finish_guards`)."""
    left, right = left.realize(), right.realize()
    if tx is not None and left.source is not None and right.source is not None:
        tx.output.identity_keys.update((left.source, right.source))
    if left is right:  # one value loaded twice (`s = x.shape; s is s`), whatever it is
        return True
    for symbol, other in ((left, right), (right, left)):
        # `(n > 3) is True`: a SymBool is one of the two bools (which one: guarded)
        if isinstance(symbol, SymNodeVariable) and symbol.python_type() is bool and (
                isinstance(other, ConstantVariable) and isinstance(other.value, bool)):
            return symbol.truth() is other.value
    if left.object_id is not None or right.object_id is not None:
        return left.object_id == right.object_id
    if isinstance(left, TensorVariable) and isinstance(right, TensorVariable):
        # the same FakeTensor is the same tensor: an in-place op (`y += 1`, `x.mul_(2)`),
        # `x.to(x.dtype)` and `contiguous()` return their input, in eager and in fake mode
        return left.example_value is right.example_value
    if left.is_python_constant() and right.is_python_constant():
        return left.as_python_constant() is right.as_python_constant()
    if isinstance(left, ConstantVariable) or isinstance(right, ConstantVariable):
        return False  # a constant (None, ...) is never a tensor, a module or a function
    graph_break(UNSUPPORTED_OPERATOR, f"`is` between {left} and {right}")


def truth_value(tx: Translator, value: VariableTracker) -> bool:
    """`bool(value)` at trace time: constants and container lengths are known; tensors are not."""
    value = value.realize()
    if isinstance(value, SymNodeVariable):
        return value.truth()  # `if x.shape[0] > 2:` on a dynamic size: answered, and guarded
    if isinstance(value, TensorVariable):
        graph_break(
            DATA_DEPENDENT_BRANCH,
            "the truth value of a tensor (`if`, `and`, `or`, `not`, bool()) depends on its data",
        )
    if value.is_python_constant():
        return bool(value.as_python_constant())
    if hasattr(value, "dunder_len"):
        return value.dunder_len(tx).as_python_constant() > 0
    python_type = value.python_type()
    if hasattr(python_type, "__bool__") or hasattr(python_type, "__len__"):
        what = f"truth value of a {python_type.__name__} (chapter 6)"
        graph_break(UNSUPPORTED_PYTHON_FEATURE, what)
    return True  # functions, modules, plain objects are true


# ---------------------------------------------------------------------------
# Builtin handlers: one small function per builtin
# ---------------------------------------------------------------------------


def _len(tx: Translator, obj: VariableTracker) -> VariableTracker:
    if isinstance(obj, TensorVariable):
        if obj.example_value.dim() == 0:
            raise_observed(TypeError, "len() of a 0-d tensor")
        return tx.output.size_item(tx, obj, "size", 0, obj.example_value.size(0))  # may be a symbol
    if isinstance(obj, ConstantVariable):  # `len('ab')`; `len(5)` raises TypeError
        return fold(len, [obj.value], {})
    return obj.call_method(tx, "__len__", [], {})


def _isinstance(tx: Translator, obj: VariableTracker, classes: VariableTracker) -> VariableTracker:
    """`isinstance(obj, classes)`: by the object's type, unless a class's metaclass is the
    user's own with an `__instancecheck__` written in Python: that one decides, inlined, as
    CPython calls it. (The library's metaclasses, ABCMeta, `nn.Parameter`'s, ask the type.)"""
    from minidynamo.variables.builder import VariableBuilder
    from minidynamo.variables.functions import UserFunctionVariable
    from minidynamo.variables.user_classes import guard_registration, is_class_info

    wanted = classes.as_python_constant()
    if not is_class_info(wanted):
        raise_observed(TypeError, "isinstance() arg 2 must be a type, a tuple of types, or a union")
    for cls in wanted if isinstance(wanted, tuple) else (wanted,):
        check = getattr(type(cls), "__instancecheck__", None)
        library = (type(cls).__module__ or "").split(".")[0]
        if isinstance(check, types.FunctionType) and library != "torch" and (
                library not in sys.stdlib_module_names):
            cls_variable = VariableBuilder(tx.output, None)(cls)
            answer = UserFunctionVariable(check).call_function(tx, [cls_variable, obj], {})
            if truth_value(tx, answer):
                return ConstantVariable(True)
        elif issubclass(obj.python_type(), cls):
            guard_registration(tx, obj, classes, cls, True)
            return ConstantVariable(True)
        else:
            guard_registration(tx, obj, classes, cls, False)
    return ConstantVariable(False)


def _callable(tx: Translator, obj: VariableTracker) -> VariableTracker:
    """`callable(obj)`: whether a class of its type's own MRO defines `__call__`
    (`hasattr(int, "__call__")` would find the metaclass's `type.__call__`). Guarded,
    found or not: `K.__call__ = f` between calls makes `callable(k)` true."""
    from minidynamo.variables.super_lookup import guard_class_entry
    from minidynamo.variables.user_defined import guard_missing_on_classes, type_source

    cls = obj.python_type()
    for index, klass in enumerate(cls.__mro__):
        if "__call__" in vars(klass):
            for earlier in range(index + 1):
                guard_class_entry(tx, type_source(obj), earlier, cls.__mro__[earlier], "__call__")
            return ConstantVariable(True)
    guard_missing_on_classes(tx, type_source(obj), cls, "__call__")
    return ConstantVariable(False)


def _type(tx: Translator, obj: VariableTracker) -> VariableTracker:
    """`type(obj)`, with the source it is read again from (`type(L['o'])`), so that what
    is read off it (`type(o).k`, a class attribute) is guarded like `o.k` would be."""
    from minidynamo.variables.builder import VariableBuilder
    from minidynamo.variables.user_defined import type_source

    return VariableBuilder(tx.output, type_source(obj))(obj.python_type())


def _getattr(
    tx: Translator, obj: Variable, name: Variable, default: Variable | None = None
) -> Variable:
    try:
        return obj.var_getattr(tx, name.as_python_constant())
    except ObservedException as raised:
        if default is None or not issubclass(raised.exc_type, AttributeError):
            raise
        return default


def _hasattr(tx: Translator, obj: VariableTracker, name: VariableTracker) -> VariableTracker:
    """`hasattr(obj, name)`. An attribute found and never read stays lazy, guarding
    nothing: its presence is guarded instead (`hasattr(G['cfg'], 'debug')`), so that a
    `del cfg.debug` between calls makes the next one trace again."""
    from minidynamo.sources import AttrSource
    from minidynamo.variables.lazy import LazyVariableTracker

    try:
        found = obj.var_getattr(tx, name.as_python_constant())
    except ObservedException as raised:
        if not issubclass(raised.exc_type, AttributeError):
            raise
        return ConstantVariable(False)
    if isinstance(found, LazyVariableTracker) and not found.is_realized() and (
            type(found.source) is AttrSource):
        tx.output.guards.has_attribute(found.source.base, found.source.member)
    return ConstantVariable(True)


def _setattr(tx: Translator, obj: Variable, name: Variable, value: Variable) -> Variable:
    return obj.call_method(tx, "__setattr__", [name, value], {})


def _delattr(tx: Translator, obj: Variable, name: Variable) -> Variable:
    return obj.call_method(tx, "__delattr__", [name], {})


def _range(tx: Translator, *args: VariableTracker) -> VariableTracker:
    values = constant_values([specialized(arg) for arg in args])  # range(n): n's value
    if values is None:
        graph_break(UNSUPPORTED_BUILTIN, f"range() of non-constant arguments {args}")
    return RangeVariable(fold_value(range, values, {}))  # `range(0, 3, 0)`: ValueError


def _slice(tx: Translator, *args: VariableTracker) -> VariableTracker:
    parts = list(args) if len(args) > 1 else [ConstantVariable(None), *args]
    parts += [ConstantVariable(None)] * (3 - len(parts))
    return SliceVariable(*parts)


def _iter(tx: Translator, obj: VariableTracker) -> VariableTracker:
    return obj.get_iterator(tx)


def _next(tx: Translator, iterator: Variable, default: Variable | None = None) -> Variable:
    """`next(it)`: `it` must be an iterator (a list is not: TypeError, as in CPython); a
    user object is one when its class has `__next__`, which runs as it is."""
    from minidynamo.variables.user_defined import UserDefinedObjectVariable

    iterator = iterator.realize()
    if isinstance(iterator, UserDefinedObjectVariable):
        if default is None:
            return iterator.dunder_next(tx)
        item = iterator.next_variable(tx)
        return default if item is None else item
    if isinstance(iterator, NOT_ITERATORS):
        raise_observed(TypeError, f"'{iterator.python_type().__name__}' object is not an iterator")
    iterator = iterator.get_iterator(tx)
    item = iterator.next_variable(tx)
    if item is None:
        if default is None:
            iterator.raise_stop_iteration()
        return default
    return item


# what `next()` refuses: containers and values that are iterable but not iterators
NOT_ITERATORS = (BaseListVariable, ConstDictVariable, SetVariable, TensorVariable, ConstantVariable)


def _enumerate(tx: Translator, iterable: Variable, start: Variable | None = None) -> Variable:
    first = start.as_python_constant() if start is not None else 0
    return LazyBuiltinIteratorVariable.made(tx, enumerate, [iterable], count=first)


def _zip(tx: Translator, *iterables: Variable, strict: Variable | None = None) -> Variable:
    strict = strict is not None and bool(strict.as_python_constant())
    return LazyBuiltinIteratorVariable.made(tx, zip, list(iterables), strict=strict)


def _map(tx: Translator, fn: VariableTracker, *iterables: VariableTracker) -> VariableTracker:
    if not iterables:
        raise_observed(TypeError, "map() must have at least two arguments.")
    return LazyBuiltinIteratorVariable.made(tx, map, list(iterables), fn=fn)


def _filter(tx: Translator, fn: VariableTracker, iterable: VariableTracker) -> VariableTracker:
    return LazyBuiltinIteratorVariable.made(tx, filter, [iterable], fn=fn)


def _reversed(tx: Translator, sequence: VariableTracker) -> VariableTracker:
    return sequence.realize().reversed_iterator(tx)  # a list's holds the list, as CPython's


def _list(tx: Translator, iterable: VariableTracker | None = None) -> VariableTracker:
    items = iterable.unpack_var_sequence(tx) if iterable is not None else []
    return ListVariable(tuple(items), object_id=new_object_id())


def _tuple(tx: Translator, iterable: VariableTracker | None = None) -> VariableTracker:
    if iterable is not None and iterable.python_type() is tuple:
        return iterable  # `tuple(t) is t`, as frozenset(fs) is fs
    return TupleVariable(tuple(iterable.unpack_var_sequence(tx)) if iterable is not None else ())


def _dict(tx: Translator, other: Variable | None = None, **kwargs: Variable) -> Variable:
    items = dict_items(tx, other) if other is not None else {}
    return ConstDictVariable({**items, **kwargs}, object_id=new_object_id())


def _set(tx: Translator, iterable: VariableTracker | None = None) -> VariableTracker:
    items = iterable.unpack_var_sequence(tx) if iterable is not None else []
    return set_from_values([as_key(tx, item) for item in items])


def _frozenset(tx: Translator, iterable: VariableTracker | None = None) -> VariableTracker:
    """`frozenset(...)`: a constant when its items are, else a frozen set tracker."""
    if iterable is not None and iterable.python_type() is frozenset:
        return iterable
    items = iterable.unpack_var_sequence(tx) if iterable is not None else []
    keys = [as_key(tx, item) for item in items]
    if all(is_constant_key(key) and is_constant_value(key) for key in keys):
        return ConstantVariable(frozenset(keys))
    return set_from_values(keys, frozen=True)


def _bool(tx: Translator, value: VariableTracker | None = None) -> VariableTracker:
    return ConstantVariable(value is not None and truth_value(tx, value))


def _not(tx: Translator, value: VariableTracker) -> VariableTracker:
    return ConstantVariable(not truth_value(tx, value))


def _is(tx: Translator, left: VariableTracker, right: VariableTracker) -> VariableTracker:
    return ConstantVariable(identity_compare(left, right, tx))


def _is_not(tx: Translator, left: VariableTracker, right: VariableTracker) -> VariableTracker:
    return ConstantVariable(not identity_compare(left, right, tx))


def _id(tx: Translator, obj: VariableTracker) -> VariableTracker:
    """`id(obj)` of an object known by identity (`keys.real_object`): a function, a class,
    a module or object from outside the frame (`inspect.unwrap` keys a memo by `id(f)`)."""
    real = real_object(tx, tx.output.side_effects.latest(obj.realize()))
    if real is None:
        graph_break(UNSUPPORTED_CALL, f"id() of {obj}, which has no identity before the graph runs")
    return ConstantVariable(id(real))


def _abs(tx: Translator, value: VariableTracker) -> VariableTracker:
    return call_operator(tx, operator.abs, [value])


def _sorted(tx: Translator, iterable: VariableTracker, key: VariableTracker | None = None,
            reverse: VariableTracker | None = None) -> VariableTracker:
    items = sorted_items(tx, iterable.unpack_var_sequence(tx), key, reverse)
    return ListVariable(tuple(items), object_id=new_object_id())


def _min_max(
    tx: Translator,
    *args: Variable,
    pick: Callable[..., Any],
    key: Variable | None = None,
    default: Variable | None = None,
) -> Variable:
    """min/max: constants fold; tensors become torch.minimum/maximum or torch.clamp;
    symbols torch.sym_min/sym_max."""
    items = args[0].unpack_var_sequence(tx) if len(args) == 1 else list(args)
    items = [item.realize() for item in items]
    if not items:
        if default is None:
            raise_observed(ValueError, f"{pick.__name__}() arg is an empty sequence")
        return default
    if key is not None:
        return _pick_by_key(tx, items, key, pick)
    values = constant_values(items)
    if values is not None:
        return constant(pick(values))
    result = items[0]
    for item in items[1:]:
        result = _min_max_pair(tx, pick, result, item)
    return result


def _pick_by_key(
    tx: Translator, items: list[VariableTracker], key: VariableTracker, pick: Callable[..., Any]
) -> VariableTracker:
    """min/max(items, key=key): the first item whose (constant) key is the extreme one."""
    key_values = constant_values([key.call_function(tx, [item], {}) for item in items])
    if key_values is None:
        graph_break(UNSUPPORTED_OPERATOR, f"{pick.__name__}() with non-constant keys")
    return items[key_values.index(pick(key_values))]


def _min_max_pair(tx: Translator, pick: Callable[..., Any], a: Variable, b: Variable) -> Variable:
    if any(isinstance(item, SymNodeVariable) for item in (a, b)) and all(
            isinstance(item, (SymNodeVariable, ConstantVariable)) for item in (a, b)):
        if a.python_type() is not b.python_type():
            # max(n, 2.5) is n itself, an int, when n >= 2.5: the comparison, guarded
            wins = BuiltinVariable(operator.gt if pick is max else operator.lt)
            return b if truth_value(tx, wins.call_function(tx, [b, a], {})) else a
        function = torch.sym_max if pick is max else torch.sym_min  # min(1.0, s77 / 100)
        return tx.output.create_node(tx, "call_function", function, [a, b], {})
    if isinstance(a, TensorVariable) and isinstance(b, TensorVariable):
        function = torch.maximum if pick is max else torch.minimum
        return tx.output.create_node(tx, "call_function", function, [a, b], {})
    tensor, other = (a, b) if isinstance(a, TensorVariable) else (b, a)
    if not isinstance(tensor, TensorVariable) or not other.is_python_constant():
        graph_break(UNSUPPORTED_BUILTIN, f"{pick.__name__}() of {a} and {b}")
    bound = "min" if pick is max else "max"
    return tx.output.create_node(tx, "call_function", torch.clamp, [tensor], {bound: other})


def _numeric_conversion(python_type: type) -> Callable[..., VariableTracker]:
    """int(x), float(x), str(x): fold constants; a tensor's value is not known."""

    def convert(tx: Translator, *args: VariableTracker) -> VariableTracker:
        if any(isinstance(arg, TensorVariable) for arg in args):
            what = f"{python_type.__name__}(tensor) needs the tensor's data"
            graph_break(DATA_DEPENDENT_VALUE, what)
        if len(args) == 1 and isinstance(args[0], SymNodeVariable) and python_type in (int, float):
            # int(s77) is s77; float(s77) and int(s77 * 1.5) stay symbols, as nodes
            if args[0].python_type() is python_type:
                return args[0]
            convert = torch.sym_float if python_type is float else torch.sym_int
            return tx.output.create_node(tx, "call_function", convert, args, {})
        if any(isinstance(arg, SymNodeVariable) for arg in args):
            # str(s77): torch.compile breaks here, and a specialized value would be wrong
            # where sympy's arithmetic is not IEEE's: str(-2.0 * 0.0) is '-0.0'
            graph_break(UNSUPPORTED_BUILTIN, f"{python_type.__name__}() of a dynamic number {args}")
        values = constant_values(args)
        if values is None and python_type is str and len(args) == 1:
            return args[0].call_method(tx, "__str__", [], {})  # str(e) of an exception, ...
        if values is None:
            graph_break(UNSUPPORTED_BUILTIN, f"{python_type.__name__}() of {args}")
        return fold(python_type, values, {})

    return convert


def _repr(tx: Translator, value: VariableTracker) -> VariableTracker:
    """`repr(x)`: folded for a constant, the object's own `__repr__` otherwise."""
    values = constant_values([value])
    if values is not None:
        return ConstantVariable(repr(values[0]))
    if isinstance(value, TensorVariable):
        graph_break(DATA_DEPENDENT_VALUE, "repr(tensor) needs the tensor's data")
    return as_string(tx, value.call_method(tx, "__repr__", [], {}), "__repr__")


def _format(tx: Translator, value: VariableTracker,
            spec: VariableTracker | None = None) -> VariableTracker:
    """`format(x, spec)`, which an f-string's `{x:spec}` calls: folded for a constant, the
    object's own `__format__` otherwise; `object.__format__` is `str(x)` for an empty
    spec and a TypeError for any other, as in CPython."""
    spec_text = "" if spec is None else spec.as_python_constant()
    values = constant_values([value])
    if values is not None:
        return ConstantVariable(format(values[0], spec_text))
    if isinstance(value, TensorVariable):
        graph_break(DATA_DEPENDENT_VALUE, "format(tensor) needs the tensor's data")
    python_type = value.python_type()
    if getattr(python_type, "__format__", None) is object.__format__:
        if spec_text:
            raise_observed(TypeError, f"unsupported format string passed to "
                                      f"{python_type.__name__}.__format__")
        return as_string(tx, value.call_method(tx, "__str__", [], {}), "__str__")
    text = value.call_method(tx, "__format__", [ConstantVariable(spec_text)], {})
    return as_string(tx, text, "__format__")


def as_string(tx: Translator, text: VariableTracker, method: str) -> VariableTracker:
    """What `__str__`, `__repr__` or `__format__` returned, which must be a str."""
    values = constant_values([text])
    if values is None:
        graph_break(UNSUPPORTED_BUILTIN, f"{method} returned {text}, not a known string")
    if not isinstance(values[0], str):  # in CPython's words for each
        wrong = type(values[0]).__name__
        raise_observed(TypeError, f"__format__ must return a str, not {wrong}"
                       if method == "__format__" else f"{method} returned non-string (type {wrong})")
    return ConstantVariable(values[0])


def _locals(tx: Translator, *args: VariableTracker) -> VariableTracker:
    """`locals()` / `vars()`: a new dict of the frame's bound variables, in CPython's
    order (locals, then cells and free variables). Traced, never run natively: after a
    graph break the real frame also holds minidynamo's temporaries, and a resume
    function's parameters are named after the original frame's (a local that is dead
    at the break is not passed on, so it is missing there, as in TorchDynamo)."""
    if args:
        raise_observed(TypeError, f"locals() takes no arguments ({len(args)} given)")
    code = original_code(tx.code)  # a resume function: the user's own frame's names
    items: dict[Any, VariableTracker] = {}
    for name in dict.fromkeys((*code.co_varnames, *code.co_cellvars, *code.co_freevars)):
        if name in tx.cells:
            value = tx.cells[name].contents
        else:
            value = tx.symbolic_locals.get(name)
        if value is not None:
            items[name] = value
    return ConstDictVariable(items, dict, None, object_id=new_object_id())


def _vars(tx: Translator, *args: VariableTracker) -> VariableTracker:
    """`vars()` is `locals()`; `vars(obj)` is `obj.__dict__`, read as any attribute is
    (an object made while tracing: a view of its attributes, `InstanceDictVariable`)."""
    if not args:
        return _locals(tx)
    if len(args) > 1:
        raise_observed(TypeError, f"vars expected at most 1 argument, got {len(args)}")
    try:
        return args[0].var_getattr(tx, "__dict__")
    except ObservedException as raised:
        if not issubclass(raised.exc_type, AttributeError):
            raise
    raise_observed(TypeError, "vars() argument must have __dict__ attribute")


def _dir(tx: Translator, *args: VariableTracker) -> VariableTracker:
    """`dir()`: the sorted names of `locals()`; `dir(obj)` is not traced."""
    if args:
        graph_break(UNSUPPORTED_BUILTIN, "dir(obj) of an object")
    names = sorted(_locals(tx).items)
    return ListVariable(tuple(ConstantVariable(name) for name in names), object_id=new_object_id())


def _print(tx: Translator, *args: VariableTracker, **kwargs: VariableTracker) -> VariableTracker:
    graph_break(UNSUPPORTED_BUILTIN, "print() would write output while tracing")


def _build_class(tx: Translator, *args: VariableTracker, **kwargs: VariableTracker) -> VariableTracker:
    """`class C: ...` in the traced code calls `__build_class__(body, "C", *bases)`, which
    runs the class body and the metaclass: the class is made natively, after a break,
    as torch.compile makes it (its `enable_trace_load_build_class` is off by default)."""
    graph_break(UNSUPPORTED_BUILTIN, "a class statement: the class is made natively")


BUILTIN_HANDLERS: dict[Callable[..., Any], Callable[..., VariableTracker]] = {
    len: _len, isinstance: _isinstance, callable: _callable, type: _type,
    getattr: _getattr, hasattr: _hasattr, setattr: _setattr, delattr: _delattr,
    range: _range, slice: _slice, iter: _iter, next: _next,
    enumerate: _enumerate, zip: _zip, map: _map, filter: _filter, reversed: _reversed,
    sorted: _sorted,
    list: _list, tuple: _tuple, dict: _dict, set: _set, frozenset: _frozenset,
    bool: _bool, operator.not_: _not, operator.truth: _bool,
    operator.is_: _is, operator.is_not: _is_not, abs: _abs, id: _id, round: round_number,
    min: functools.partial(_min_max, pick=min), max: functools.partial(_min_max, pick=max),
    int: _numeric_conversion(int), float: _numeric_conversion(float),
    str: _numeric_conversion(str), repr: _repr, format: _format, print: _print, super: call_super,
    builtins.__build_class__: _build_class,
    locals: _locals, vars: _vars, dir: _dir, copy.deepcopy: deepcopy,
    functools.partial: partial, tuple.__new__: tuple_new, object.__new__: object_new,
}


def is_builtin(value: Any) -> bool:
    """Whether the builder should wrap `value` as a BuiltinVariable.

    Only functions and classes are looked up in the tables: looking up an arbitrary
    object would hash it, which can run user code.
    """
    if not isinstance(value, (types.BuiltinFunctionType, types.FunctionType, type)):
        return False
    tables = (BUILTIN_HANDLERS, OPERATOR_DUNDERS, POLYFILLS, CLASS_FACTORIES)
    return any(value in table for table in tables) or is_pure(value)
