"""Sequences: lists, tuples, torch.Size, named tuples, ranges and slices (chapter 3).

A list made while tracing lives only in the symbolic world: its tracker holds
the trackers of its items, `parts.append(x * 2)` makes a new version of the
list with one more item, and the graph never sees the list at all. Only its
tensor items are graph values.

Python methods are handled by tracker methods named after them (see
`VariableTracker.call_method`): `xs.append(v)` is `ListVariable.method_append`,
`xs[i]` is `dunder_getitem`, `len(xs)` is `dunder_len`.

Compare with TorchDynamo: `torch/_dynamo/variables/lists.py` (`BaseListVariable`,
`ListVariable`, `TupleVariable`, `SizeVariable`, `NamedTupleVariable`,
`RangeVariable`, `SliceVariable`).
"""

from __future__ import annotations

import collections
import operator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence

import torch

from minidynamo.exc import (
    EXCEPTION_IN_TRACED_CODE,
    UNSUPPORTED_OPERATOR,
    ObservedException,
    graph_break,
    raise_observed,
)
from minidynamo.variables.base import (
    VariableTracker,
    bound_method_getattr,
    constant_values,
    method_handler_name,
    new_object_id,
)
from minidynamo.variables.constant import ConstantVariable, constant, fold, fold_value
from minidynamo.variables.iterators import container_iterator
from minidynamo.variables.sym_node import SymNodeVariable

if TYPE_CHECKING:
    from minidynamo.codegen import PyCodegen
    from minidynamo.translator.base import InstructionTranslatorBase as Translator


def is_read_whole(target: VariableTracker, other: VariableTracker) -> bool:
    """Whether `target.extend(other)` reads `other` whole before appending, as CPython's
    `list_extend` does for a list or tuple (and `deque_extend` for the deque itself)."""
    if other.object_id is not None and other.object_id == target.object_id:
        return True
    return target.python_type() is list and other.python_type() in (list, tuple)


def _as_index(tx: Translator, index: VariableTracker) -> int | slice:
    """A constant list index or slice; a tensor index into a Python list breaks
    (a symbolic int is specialized: chapter 9)."""
    from minidynamo.variables.sym_node import specialized

    index = specialized(index.realize())
    if not index.is_python_constant():
        graph_break(UNSUPPORTED_OPERATOR, f"indexing a Python sequence with {index}")
    return index.as_python_constant()


def sorted_items(
    tx: Translator,
    items: list[VariableTracker],
    key: VariableTracker | None,
    reverse: VariableTracker | None,
) -> list[VariableTracker]:
    """`sorted(items, key=key, reverse=reverse)` when the sort keys are constants."""
    keys = [key.call_function(tx, [item], {}) for item in items] if key is not None and not (
        key.is_python_constant() and key.as_python_constant() is None) else items
    key_values = constant_values(keys)
    if key_values is None:
        graph_break(UNSUPPORTED_OPERATOR, "sorting values whose sort keys are not constants")
    descending = bool(reverse.as_python_constant()) if reverse is not None else False
    try:
        order = sorted(range(len(items)), key=lambda index: key_values[index], reverse=descending)
    except TypeError as error:
        raise_observed(TypeError, *error.args)
    return [items[index] for index in order]


_BEING_ASKED: set[int] = set()  # the sequences whose `is_python_constant` is running


def sequence_kind(variable: VariableTracker) -> type | None:
    """`list` or `tuple` for a sequence that compares as one (`torch.Size` and a
    namedtuple compare as tuples, item by item); None for a class with its own `==`."""
    cls = variable.python_type()
    for kind in (list, tuple):
        if issubclass(cls, kind) and cls.__eq__ is kind.__eq__:
            return kind
    return None


@dataclass(frozen=True, eq=False, repr=False)
class BaseListVariable(VariableTracker):
    """What lists, tuples and their relatives share: a tuple of item trackers."""

    items: tuple[VariableTracker, ...]
    children_fields = ("items",)

    build_opname = "BUILD_TUPLE"  # how `reconstruct` rebuilds the sequence

    def as_python_constant(self) -> Any:
        return self.python_type()(item.as_python_constant() for item in self.items)

    def is_python_constant(self) -> bool:
        """Each item asked in order, up to the first that is not a constant (a lazy item
        asked is read); a symbol among them is not specialized to answer. A list that
        contains itself (`a.append(a)`) is not a constant: asked again while its items
        are asked, it answers no instead of asking forever."""
        if id(self) in _BEING_ASKED:
            return False
        _BEING_ASKED.add(id(self))
        try:
            return all(item.is_python_constant() for item in self.items)
        finally:
            _BEING_ASKED.discard(id(self))

    def as_proxy(self) -> Any:
        return self.python_type()(item.as_proxy() for item in self.items)

    def unpack_var_sequence(self, tx: Translator) -> list[VariableTracker]:
        return list(self.items)

    def live_length(self) -> int:
        """How many items an iterator over it may read now (`ContainerIteratorVariable`)."""
        return len(self.items)

    def item_at(self, index: int) -> VariableTracker:
        return self.items[index]

    var_getattr = bound_method_getattr

    def with_items(self, items: tuple[VariableTracker, ...]) -> BaseListVariable:
        """A new sequence of the same kind (a new object, for lists)."""
        object_id = new_object_id() if self.is_mutable() else None
        return self.clone(items=tuple(items), source=None, object_id=object_id)

    def reconstruct(self, codegen: PyCodegen) -> None:
        if self.build_opname == "BUILD_LIST" and codegen.holds_itself(self):
            return codegen.build_holding_itself(self, "BUILD_LIST", lambda: self.build(codegen))
        self.build(codegen)

    def build(self, codegen: PyCodegen) -> None:
        for item in self.items:
            codegen(item)
        codegen.append(self.build_opname, arg=len(self.items))

    # -- Python methods shared by all sequences ------------------------------

    def dunder_len(self, tx: Translator) -> VariableTracker:
        return ConstantVariable(len(self.items))

    def dunder_getitem(self, tx: Translator, index: VariableTracker) -> VariableTracker:
        position = _as_index(tx, index)
        if isinstance(position, slice):
            return self.with_items(self.items[position])
        try:
            return self.items[position]
        except IndexError:  # in the words of the sequence's C type (the items are a tuple)
            kind = next(base for base in (list, collections.deque, tuple)
                        if issubclass(self.python_type(), base))
            raise_observed(IndexError, f"{kind.__name__} index out of range")
        except TypeError as error:
            raise_observed(type(error), *error.args)

    def dunder_contains(self, tx: Translator, value: VariableTracker) -> VariableTracker:
        values = constant_values([*self.items, value])
        if values is None:  # `n in (1, 2)` with a symbol: each item compared, as CPython
            from minidynamo import polyfills
            from minidynamo.variables.functions import UserFunctionVariable

            return UserFunctionVariable(polyfills.sequence_contains).call_function(
                tx, [self, value], {})
        return ConstantVariable(values[-1] in values[:-1])

    def dunder_add(self, tx: Translator, other: VariableTracker) -> VariableTracker:
        """`a + b`: b is of a's kind, or an instance of a subclass (read as its items)."""
        other = other.realize()
        contents = getattr(other, "contents", None)  # an instance of a list or tuple subclass
        if isinstance(contents, BaseListVariable):
            other = tx.output.side_effects.latest(contents)
        builtin = self.python_type()  # list + list subclass, tuple + namedtuple: of the left's type
        if builtin is tuple and isinstance(other, SizeVariable) and is_size_items(self.items):
            return SizeVariable(self.items + other.items)  # torch.Size's __radd__ answers
        if type(other) is not type(self) and not (
                builtin in (list, tuple) and isinstance(other, BaseListVariable)
                and issubclass(other.python_type(), builtin)):
            graph_break(UNSUPPORTED_OPERATOR, f"{self} + {other}")
        return self.with_items(self.items + other.items)

    def dunder_mul(self, tx: Translator, count: VariableTracker) -> VariableTracker:
        count = count.realize()
        kind = type(count.as_python_constant()) if count.is_python_constant() else \
            count.python_type() if isinstance(count, SymNodeVariable) else int
        if not hasattr(kind, "__index__"):  # a float, a dynamic one too (`2.5 * xs`)
            raise_observed(TypeError, f"can't multiply sequence by non-int of type "
                                      f"'{kind.__name__}'")
        return self.with_items(self.items * _as_index(tx, count))

    def compare(
        self, tx: Translator, other: VariableTracker, operation: Callable[[Any, Any], bool]
    ) -> VariableTracker:
        """==, <, ... between sequences of constants; == and != between two lists or two
        tuples of anything, item by item (`polyfills.sequence_eq`)."""
        values = constant_values([self, other])
        other = other.realize()
        kinds = (sequence_kind(self), sequence_kind(other) if isinstance(other, BaseListVariable)
                 else None)
        if values is None and operation in (operator.eq, operator.ne) and None not in kinds:
            from minidynamo import polyfills
            from minidynamo.variables.functions import UserFunctionVariable

            if kinds[0] is not kinds[1]:  # a list is never equal to a tuple
                return ConstantVariable(operation is operator.ne)
            equal = UserFunctionVariable(polyfills.sequence_eq).call_function(tx, [self, other], {})
            return equal if operation is operator.eq else ConstantVariable(not equal.as_python_constant())
        if values is None:
            what = f"comparing {self} with {other}: the items are not constants"
            graph_break(UNSUPPORTED_OPERATOR, what)
        return fold(operation, values, {})

    def dunder_eq(self, tx: Translator, other: VariableTracker) -> VariableTracker:
        return self.compare(tx, other, operator.eq)

    def dunder_ne(self, tx: Translator, other: VariableTracker) -> VariableTracker:
        return self.compare(tx, other, operator.ne)

    def dunder_lt(self, tx: Translator, other: VariableTracker) -> VariableTracker:
        return self.compare(tx, other, operator.lt)

    def dunder_le(self, tx: Translator, other: VariableTracker) -> VariableTracker:
        return self.compare(tx, other, operator.le)

    def dunder_gt(self, tx: Translator, other: VariableTracker) -> VariableTracker:
        return self.compare(tx, other, operator.gt)

    def dunder_ge(self, tx: Translator, other: VariableTracker) -> VariableTracker:
        return self.compare(tx, other, operator.ge)

    def method_index(self, tx: Translator, value: VariableTracker) -> VariableTracker:
        values = constant_values([*self.items, value])
        if values is None:
            graph_break(UNSUPPORTED_OPERATOR, f"{self}.index({value})")
        if values[-1] not in values[:-1]:
            kind = "list" if issubclass(self.python_type(), list) else "tuple"
            raise_observed(ValueError, f"{kind}.index(x): x not in {kind}" if kind == "tuple"
                           else f"{values[-1]!r} is not in list")
        return ConstantVariable(values[:-1].index(values[-1]))

    def method_count(self, tx: Translator, value: VariableTracker) -> VariableTracker:
        values = constant_values([*self.items, value])
        if values is None:
            graph_break(UNSUPPORTED_OPERATOR, f"{self}.count() with non-constant items")
        return ConstantVariable(values[:-1].count(values[-1]))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(length={len(self.items)})"


@dataclass(frozen=True, eq=False, repr=False)
class TupleVariable(BaseListVariable):
    """A tuple: immutable, so it needs no identity."""

    def python_type(self) -> type:
        return tuple


@dataclass(frozen=True, eq=False, repr=False)
class ListVariable(BaseListVariable):
    """A list. Mutating methods make a new version and record it as a side effect."""

    build_opname = "BUILD_LIST"

    def python_type(self) -> type:
        return list

    def get_iterator(self, tx: Translator) -> VariableTracker:
        """A list iterator holds the list, not a copy (`ContainerIteratorVariable`)."""
        return container_iterator(tx, self, "list", [])

    def reversed_iterator(self, tx: Translator) -> VariableTracker:
        """`reversed(xs)`: from the last position down, reading the list as it is then."""
        if self.python_type() is not list:  # a subclass may define its own __reversed__
            return super().reversed_iterator(tx)
        return container_iterator(tx, self, "list", [], backwards=True)

    def mutated(self, tx: Translator, items: list[VariableTracker]) -> ListVariable:
        """Replace this list everywhere by a version holding `items`."""
        new = self.clone(items=tuple(items))
        tx.output.side_effects.mutate(new)
        return new

    def method_append(self, tx: Translator, item: VariableTracker) -> VariableTracker:
        self.mutated(tx, [*self.items, item])
        return ConstantVariable(None)

    def method_extend(self, tx: Translator, other: VariableTracker) -> VariableTracker:
        self.extended(tx, other)
        return ConstantVariable(None)

    def dunder_iadd(self, tx: Translator, other: VariableTracker) -> VariableTracker:
        return self.extended(tx, other)

    def dunder_imul(self, tx: Translator, count: VariableTracker) -> VariableTracker:
        """`xs *= n`: this list, repeated in place (every alias sees it)."""
        self.mutated(tx, list(self.items) * _as_index(tx, count))
        return tx.output.side_effects.latest(self)

    def extended(self, tx: Translator, other: VariableTracker) -> ListVariable:
        """`self.extend(other)` as CPython runs it: one item at a time, each appended to
        the list *as it is then*, since producing an item (a generator) may run code
        that mutates this very list. The list itself, and for a list any list or tuple,
        is read whole first, as CPython copies it (`xs.extend(xs)` doubles `xs`: an
        iterator over it would never end)."""
        other = other.realize()
        latest = tx.output.side_effects.latest
        if is_read_whole(self, other):
            items = other.unpack_var_sequence(tx)
            current = latest(self)
            current.mutated(tx, [*current.items, *items])
            return latest(self)
        iterator = other.get_iterator(tx)
        while (item := iterator.next_variable(tx)) is not None:
            current = latest(self)
            current.mutated(tx, [*current.items, item])
            iterator = latest(iterator)
        return latest(self)

    def method_insert(
        self, tx: Translator, index: VariableTracker, item: VariableTracker
    ) -> VariableTracker:
        items = list(self.items)
        items.insert(_as_index(tx, index), item)
        self.mutated(tx, items)
        return ConstantVariable(None)

    def method_pop(self, tx: Translator, index: VariableTracker | None = None) -> VariableTracker:
        items = list(self.items)
        position = -1 if index is None else _as_index(tx, index)
        popped = fold_value(items.pop, [position], {})  # IndexError in CPython's words
        self.mutated(tx, items)
        return popped

    def method_clear(self, tx: Translator) -> VariableTracker:
        self.mutated(tx, [])
        return ConstantVariable(None)

    def method_reverse(self, tx: Translator) -> VariableTracker:
        self.mutated(tx, list(reversed(self.items)))
        return ConstantVariable(None)

    def method_remove(self, tx: Translator, value: VariableTracker) -> VariableTracker:
        try:
            position = self.method_index(tx, value).as_python_constant()
        except ObservedException:
            raise_observed(ValueError, "list.remove(x): x not in list")
        self.mutated(tx, [*self.items[:position], *self.items[position + 1:]])
        return ConstantVariable(None)

    def method_copy(self, tx: Translator) -> VariableTracker:
        return self.with_items(self.items)

    def method_sort(
        self,
        tx: Translator,
        key: VariableTracker | None = None,
        reverse: VariableTracker | None = None,
    ) -> VariableTracker:
        self.mutated(tx, sorted_items(tx, list(self.items), key, reverse))
        return ConstantVariable(None)

    def dunder_setitem(
        self, tx: Translator, index: VariableTracker, value: VariableTracker
    ) -> VariableTracker:
        items = list(self.items)
        position = _as_index(tx, index)
        if isinstance(position, slice):
            if isinstance(value, ConstantVariable) and not hasattr(type(value.value), "__iter__"):
                raise_observed(TypeError, "can only assign an iterable")
            value = value.unpack_var_sequence(tx)
        fold_value(items.__setitem__, [position, value], {})  # IndexError in CPython's words
        self.mutated(tx, items)
        return ConstantVariable(None)

    def dunder_delitem(self, tx: Translator, index: VariableTracker) -> VariableTracker:
        items = list(self.items)
        fold_value(items.__delitem__, [_as_index(tx, index)], {})
        self.mutated(tx, items)
        return ConstantVariable(None)



@dataclass(frozen=True, eq=False, repr=False)
class ListPartVariable(ListVariable):
    """The items of an instance of a list subclass passed in
    (`UserDefinedSequenceVariable.contents`): replayed with `list.__setitem__`, so that
    no override of the subclass runs."""

    def __repr__(self) -> str:
        return "ListPartVariable()"

@dataclass(frozen=True, eq=False, repr=False)
class DequeVariable(ListVariable):
    """A `collections.deque`: a list's items and `maxlen`. A full deque drops from the
    other end as `append` / `appendleft` add (CPython's `deque_append`); a deque has no
    slices, no `sort`, and `insert` into a full one raises IndexError."""

    maxlen: int | None = None
    # CPython's deque `state`: every mutation but an item assignment or a reverse()
    # advances it, and an iterator over the deque raises once it moved
    state: int = 0

    def python_type(self) -> type:
        return collections.deque

    def get_iterator(self, tx: Translator) -> VariableTracker:
        return container_iterator(tx, self, "deque", collections.deque())

    def reversed_iterator(self, tx: Translator) -> VariableTracker:
        return container_iterator(tx, self, "deque", collections.deque(), backwards=True)

    def as_python_constant(self) -> Any:
        return collections.deque((item.as_python_constant() for item in self.items), self.maxlen)

    def mutated(self, tx: Translator, items: list[VariableTracker], *,
                keep_right: bool = True, same_state: bool = False) -> DequeVariable:
        if self.maxlen is not None and len(items) > self.maxlen:
            items = items[len(items) - self.maxlen:] if keep_right else items[:self.maxlen]
        new = self.clone(items=tuple(items), state=self.state + (0 if same_state else 1))
        tx.output.side_effects.mutate(new)
        return new

    def method_reverse(self, tx: Translator) -> VariableTracker:
        self.mutated(tx, list(reversed(self.items)), same_state=True)
        return ConstantVariable(None)

    def var_getattr(self, tx: Translator, name: str) -> VariableTracker:
        if name == "maxlen":
            return ConstantVariable(self.maxlen)
        if name == "sort":
            raise_observed(AttributeError, "'collections.deque' object has no attribute 'sort'")
        return super().var_getattr(tx, name)

    def dunder_getitem(self, tx: Translator, index: VariableTracker) -> VariableTracker:
        if isinstance(_as_index(tx, index), slice):
            raise_observed(TypeError, "sequence index must be integer, not 'slice'")
        return super().dunder_getitem(tx, index)

    def method_appendleft(self, tx: Translator, item: VariableTracker) -> VariableTracker:
        self.mutated(tx, [item, *self.items], keep_right=False)
        return ConstantVariable(None)

    def method_extendleft(self, tx: Translator, other: VariableTracker) -> VariableTracker:
        other = other.realize()
        latest = tx.output.side_effects.latest
        if is_read_whole(self, other):  # `q.extendleft(q)`
            other = TupleVariable(tuple(other.unpack_var_sequence(tx)))
        iterator = other.get_iterator(tx)
        while (item := iterator.next_variable(tx)) is not None:
            latest(self).method_appendleft(tx, item)
            iterator = latest(iterator)
        return ConstantVariable(None)

    def method_popleft(self, tx: Translator) -> VariableTracker:
        if not self.items:
            raise_observed(IndexError, "pop from an empty deque")
        self.mutated(tx, list(self.items[1:]))
        return self.items[0]

    def method_pop(self, tx: Translator, index: VariableTracker | None = None) -> VariableTracker:
        if index is not None:
            raise_observed(TypeError, "deque.pop() takes no arguments (1 given)")
        if not self.items:
            raise_observed(IndexError, "pop from an empty deque")
        return super().method_pop(tx)

    def method_rotate(self, tx: Translator, steps: VariableTracker | None = None) -> VariableTracker:
        count = len(self.items)
        shift = 1 if steps is None else steps.as_python_constant()
        if count:
            shift %= count
            self.mutated(tx, [*self.items[count - shift:], *self.items[:count - shift]])
        return ConstantVariable(None)

    def method_insert(
        self, tx: Translator, index: VariableTracker, item: VariableTracker
    ) -> VariableTracker:
        if self.maxlen is not None and len(self.items) >= self.maxlen:
            raise_observed(IndexError, "deque already at its maximum size")
        return super().method_insert(tx, index, item)

    def dunder_setitem(
        self, tx: Translator, index: VariableTracker, value: VariableTracker
    ) -> VariableTracker:
        position = _as_index(tx, index)
        if isinstance(position, slice):
            raise_observed(TypeError, "sequence index must be integer, not 'slice'")
        items = list(self.items)
        items[position] = value
        self.mutated(tx, items, same_state=True)
        return ConstantVariable(None)

    def reconstruct(self, codegen: PyCodegen) -> None:
        """`collections.deque([items], maxlen)`."""
        codegen.load_callable(collections.deque)
        for item in self.items:
            codegen(item)
        codegen.append("BUILD_LIST", arg=len(self.items))
        codegen.load_const(self.maxlen)
        codegen.call_function(2)


def make_deque(tx: Translator, args: Sequence[VariableTracker],
               kwargs: dict[str, VariableTracker]) -> DequeVariable:
    """`collections.deque(iterable=(), maxlen=None)` while tracing: a new deque."""
    bound = dict(zip(("iterable", "maxlen"), args)) | kwargs
    maxlen = bound["maxlen"].as_python_constant() if "maxlen" in bound else None
    if maxlen is not None and (not isinstance(maxlen, int) or maxlen < 0):
        raise_observed(ValueError, "maxlen must be non-negative")
    deque = DequeVariable((), maxlen=maxlen, object_id=new_object_id())
    tx.output.side_effects.track_new(deque)
    if "iterable" in bound:
        deque.method_extend(tx, bound["iterable"])
    return tx.output.side_effects.latest(deque)


@dataclass(frozen=True, eq=False, repr=False)
class SizeVariable(TupleVariable):
    """`x.shape` / `x.size()`: a torch.Size of ints, constants or, for a dynamic size
    (chapter 9), SymNodeVariables."""

    def python_type(self) -> type:
        return torch.Size

    def as_proxy(self) -> Any:
        proxies = tuple(item.as_proxy() for item in self.items)
        if all(isinstance(proxy, int) for proxy in proxies):
            return torch.Size(proxies)
        return proxies  # nodes among them: a graph node's argument is a tuple

    def with_items(self, items: tuple[VariableTracker, ...]) -> BaseListVariable:
        return SizeVariable(tuple(items))

    def dunder_add(self, tx: Translator, other: VariableTracker) -> VariableTracker:
        """`x.shape[:-1] + (2, -1)`: a torch.Size adds any tuple of ints, and so does a
        tuple to it (`(2,) + x.shape`, torch.Size's `__radd__`): the sum is a torch.Size."""
        other = other.realize()
        if isinstance(other, TupleVariable) and is_size_items(other.items):
            return SizeVariable(self.items + other.items)
        return super().dunder_add(tx, other)

    def method_numel(self, tx: Translator) -> VariableTracker:
        from minidynamo.variables.builtins import BuiltinVariable

        result: VariableTracker = constant(1)
        for item in self.items:  # with a symbol, `s77 * 4` is a node
            result = BuiltinVariable(operator.mul).call_function(tx, [result, item], {})
        return result

    def reconstruct(self, codegen: PyCodegen) -> None:
        if self.is_python_constant():
            return codegen.load_const(self.as_python_constant())
        codegen.load_callable(torch.Size)
        super().reconstruct(codegen)
        codegen.call_function(1)


@dataclass(frozen=True, eq=False, repr=False)
class NamedTupleVariable(TupleVariable):
    """A namedtuple or a torch.return_types struct (`values, indices = x.max(0)`)."""

    tuple_class: type = tuple

    def python_type(self) -> type:
        return self.tuple_class

    def as_python_constant(self) -> Any:
        return self._build([item.as_python_constant() for item in self.items])

    def as_proxy(self) -> Any:
        return self._build([item.as_proxy() for item in self.items])

    def _build(self, values: list[Any]) -> Any:
        if hasattr(self.tuple_class, "_fields"):  # collections.namedtuple
            return self.tuple_class(*values)
        return self.tuple_class(values)  # a structseq takes one sequence

    def with_items(self, items: tuple[VariableTracker, ...]) -> BaseListVariable:
        return TupleVariable(tuple(items))  # slicing a namedtuple gives a tuple

    def var_getattr(self, tx: Translator, name: str) -> VariableTracker:
        # namedtuples list their fields in _fields, torch.return_types in __match_args__
        cls = self.tuple_class
        fields = getattr(cls, "_fields", None) or getattr(cls, "__match_args__", ())
        if name in fields:
            return self.items[list(fields).index(name)]
        if name == "_fields":
            return constant(tuple(fields))
        if hasattr(tuple, name) or hasattr(self, method_handler_name(name)):
            return bound_method_getattr(self, tx, name)
        # a method or property of the class (`typing.NamedTuple`'s body, a subclass): as
        # for any user object, a Python function is bound, a property's getter inlined
        for klass in cls.__mro__:
            if name in vars(klass):
                from minidynamo.variables.user_defined import class_attribute

                return class_attribute(tx, self, klass, name, vars(klass)[name], None)
        return bound_method_getattr(self, tx, name)

    def method__replace(self, tx: Translator, **changes: VariableTracker) -> VariableTracker:
        fields = list(self.tuple_class._fields)
        unknown = set(changes) - set(fields)
        if unknown:
            what = f"_replace() got unexpected field names {sorted(unknown)}"
            graph_break(EXCEPTION_IN_TRACED_CODE, what)
        items = tuple(changes.get(field, item) for field, item in zip(fields, self.items))
        return self.clone(items=items, source=None)

    def method__asdict(self, tx: Translator) -> VariableTracker:
        from minidynamo.variables.dicts import ConstDictVariable

        items = dict(zip(self.tuple_class._fields, self.items))
        return ConstDictVariable(items, object_id=new_object_id())

    def reconstruct(self, codegen: PyCodegen) -> None:
        codegen.load_callable(self.tuple_class)
        for item in self.items:
            codegen(item)
        if hasattr(self.tuple_class, "_fields"):
            codegen.call_function(len(self.items))
        else:
            codegen.append("BUILD_TUPLE", arg=len(self.items))
            codegen.call_function(1)


@dataclass(frozen=True, eq=False, repr=False)
class RangeVariable(VariableTracker):
    """`range(...)` of constants: iterating it unrolls a loop."""

    value: range

    def python_type(self) -> type:
        return range

    def as_python_constant(self) -> Any:
        return self.value

    def unpack_var_sequence(self, tx: Translator) -> list[VariableTracker]:
        return [ConstantVariable(i) for i in self.value]

    def get_iterator(self, tx: Translator) -> VariableTracker:
        from minidynamo.variables.iterators import RangeIteratorVariable

        return RangeIteratorVariable(self.value, object_id=new_object_id())

    var_getattr = bound_method_getattr

    def dunder_len(self, tx: Translator) -> VariableTracker:
        return ConstantVariable(len(self.value))

    def dunder_getitem(self, tx: Translator, index: VariableTracker) -> VariableTracker:
        position = _as_index(tx, index)
        if isinstance(position, slice):
            return RangeVariable(self.value[position])
        return ConstantVariable(self.value[position])

    def dunder_contains(self, tx: Translator, value: VariableTracker) -> VariableTracker:
        return ConstantVariable(_as_index(tx, value) in self.value)

    def reconstruct(self, codegen: PyCodegen) -> None:
        codegen.load_const(self.value)

    def __repr__(self) -> str:
        return "RangeVariable()"


@dataclass(frozen=True, eq=False, repr=False)
class SliceVariable(VariableTracker):
    """`a[start:stop:step]`: BUILD_SLICE makes one; constants or tensors inside."""

    start: VariableTracker
    stop: VariableTracker
    step: VariableTracker
    children_fields = ("start", "stop", "step")

    def python_type(self) -> type:
        return slice

    def as_python_constant(self) -> Any:
        return slice(*(part.as_python_constant() for part in (self.start, self.stop, self.step)))

    def as_proxy(self) -> Any:
        return slice(*(part.as_proxy() for part in (self.start, self.stop, self.step)))

    def var_getattr(self, tx: Translator, name: str) -> VariableTracker:
        if name in ("start", "stop", "step"):
            return getattr(self, name)
        return bound_method_getattr(self, tx, name)

    def method_indices(self, tx: Translator, length: VariableTracker) -> VariableTracker:
        return constant(self.as_python_constant().indices(length.as_python_constant()))

    def reconstruct(self, codegen: PyCodegen) -> None:
        for part in (self.start, self.stop, self.step):
            codegen(part)
        codegen.append("BUILD_SLICE", arg=3)

    def __repr__(self) -> str:
        return "SliceVariable()"


def is_size_items(items: Sequence[VariableTracker]) -> bool:
    """Items a torch.Size can hold: ints, known or symbolic (`s77`)."""
    from minidynamo.variables.sym_node import SymNodeVariable

    return all(isinstance(item, SymNodeVariable) and item.python_type() is int or (
        item.is_python_constant() and type(item.as_python_constant()) is int) for item in items)
