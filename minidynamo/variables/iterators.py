"""Iterators: what GET_ITER makes and FOR_ITER advances, so loops unroll (chapter 3).

`for i in range(3): ...` runs its body three times *while tracing*: GET_ITER
turns the range into a `RangeIteratorVariable`, and each FOR_ITER asks it for
`next_variable`, which returns the next item and makes a new version of the
iterator one step further on (iterators are mutable objects: every reference to
the iterator sees it advance). When it is exhausted, FOR_ITER jumps past the
loop. The loop is gone from the graph: only the body's tensor operations remain,
once per iteration.

An iterator over a list, deque, dict or set holds the container, as CPython's does
(`ContainerIteratorVariable`): a loop sees what its body does to the list it walks.
`enumerate`, `zip`, `map` and `filter` are lazy (`LazyBuiltinIteratorVariable`); other
finite sequences (a tuple, a string, a tensor's rows) become `ListIteratorVariable`s over
their items.

Compare with TorchDynamo: `torch/_dynamo/variables/iter.py` and
`lists.py::ListIteratorVariable`, `RangeIteratorVariable`.
"""

from __future__ import annotations

import operator
import types
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn

from minidynamo.exc import (
    CANNOT_RECONSTRUCT, KEYS_CHANGED_DURING_ITERATION, ObservedException, graph_break,
    raise_observed,
)
from minidynamo.variables.base import VariableTracker, bound_method_getattr, new_object_id
from minidynamo.variables.constant import ConstantVariable

if TYPE_CHECKING:
    from minidynamo.codegen import PyCodegen
    from minidynamo.translator.base import InstructionTranslatorBase as Translator


@dataclass(frozen=True, eq=False, repr=False)
class IteratorVariable(VariableTracker):
    """An iterator: `next_variable` returns the next item, or None when exhausted."""

    def remaining(self) -> list[VariableTracker]:
        raise NotImplementedError

    def peek(self) -> VariableTracker | None:
        """The next item without advancing (None: exhausted). Iterators that know it
        cheaply say so: a loop over `range(n)` must not build the rest at each step."""
        items = self.remaining()
        return items[0] if items else None

    def advanced(self, steps: int) -> IteratorVariable:
        """The next version of this iterator, `steps` items further on."""
        raise NotImplementedError

    def next_variable(self, tx: Translator) -> VariableTracker | None:
        item = self.peek()
        if item is None:
            return None
        tx.output.side_effects.mutate(self.advanced(1))
        return item

    def dunder_contains(self, tx: Translator, value: VariableTracker) -> VariableTracker:
        """`value in it`: an iterator has no `__contains__`, so CPython pulls items until
        one is `value` or equals it, and leaves the iterator after it."""
        from minidynamo.variables.builtins import BuiltinVariable, truth_value

        latest = tx.output.side_effects.latest
        while (item := latest(self).next_variable(tx)) is not None:
            if item is value:
                return ConstantVariable(True)
            equal = BuiltinVariable(operator.eq).call_function(tx, [item, value], {})
            if truth_value(tx, equal):
                return ConstantVariable(True)
        return ConstantVariable(False)

    def unpack_var_sequence(self, tx: Translator) -> list[VariableTracker]:
        items = self.remaining()
        tx.output.side_effects.mutate(self.advanced(len(items)))  # now exhausted
        return items

    def get_iterator(self, tx: Translator) -> VariableTracker:
        return self  # iter(iterator) is the iterator itself

    def dunder_next(self, tx: Translator) -> VariableTracker:
        """`next(it)` / `it.__next__()`; exhaustion raises StopIteration."""
        item = self.next_variable(tx)
        if item is None:
            self.raise_stop_iteration()
        return item

    def raise_stop_iteration(self) -> NoReturn:
        """What exhaustion raises: a plain StopIteration (a generator's carries a value)."""
        raise_observed(StopIteration)

    def reconstruct(self, codegen: PyCodegen) -> None:
        """An iterator made while tracing escapes as `iter([remaining items])`."""
        codegen.load_callable(iter)
        for item in self.remaining():
            codegen(item)
        codegen.append("BUILD_LIST", arg=len(self.remaining()))
        codegen.call_function(1)


@dataclass(frozen=True, eq=False, repr=False)
class ListIteratorVariable(IteratorVariable):
    """An iterator over known items (a list, a tuple, enumerate, zip, ...)."""

    items: tuple[VariableTracker, ...]
    index: int
    children_fields = ("items",)

    def python_type(self) -> type:
        return type(iter([]))

    def remaining(self) -> list[VariableTracker]:
        return list(self.items[self.index:])

    def peek(self) -> VariableTracker | None:
        return self.items[self.index] if self.index < len(self.items) else None

    def advanced(self, steps: int) -> IteratorVariable:
        return self.clone(index=self.index + steps)

    def __repr__(self) -> str:
        return f"ListIteratorVariable(length={len(self.items)}, index={self.index})"


def iterator_at(iterable: Any, index: int, backwards: bool = False) -> Any:
    """`iter(iterable)` advanced by `index` items, or `reversed(iterable)` standing at
    position `index`: how a container's iterator made while tracing is rebuilt at a
    graph break (it keeps iterating the container itself)."""
    if backwards:
        iterator = reversed(iterable)
        if isinstance(iterable, list):
            iterator.__setstate__(index)  # past the end: exhausted, as CPython's would be
            return iterator
        for _ in range(len(iterable) - 1 - index):
            next(iterator, None)
        return iterator
    iterator = iter(iterable)
    for _ in range(index):
        next(iterator, None)
    return iterator


# What CPython's iterator of each container raises when the container changed under it
# (`dictiter_iternextkey`, `setiter_iternext`, `dequeiter_next`, `odictiter_nextkey`:
# an OrderedDict's once a key came or went, even at the same size); a list's never raises.
CHANGED_DURING_ITERATION = {
    "dict": "dictionary changed size during iteration",
    "OrderedDict": "OrderedDict mutated during iteration",
    "set": "Set changed size during iteration",
    "deque": "deque mutated during iteration",
}


@dataclass(frozen=True, eq=False, repr=False)
class ContainerIteratorVariable(IteratorVariable):
    """`iter(c)` or `reversed(c)` of a list, deque, dict (or one of its views) or set the
    trace knows.

    CPython's iterator holds the container and a position, not a copy: each `next()`
    reads the container as it is then. So does this one (`replace_version` keeps
    `container` at its newest version): items appended to a list during a loop are
    produced, items removed before the position shift the rest, and once exhausted the
    iterator lets the list go (later appends are not produced). `reversed(c)` walks
    from the last position down (`step` -1). A dict, a set or a deque may not change
    under its iterator: the next `next()` raises RuntimeError, as CPython's does, once
    the size differs from `size` (a deque's `state`, which every mutation but an item
    assignment advances; an OrderedDict's `key_changes`, as its `od_state`). Each
    container reads its item at a position itself (`live_length`, `item_at`): a step
    costs one item.

    A dict or set that lost a key and gained another keeps its size, and CPython's
    iterator goes on, but where it stands then depends on memory the trace does not
    model (a dict's deleted slots, a set's hash table): `same_keys` notices, from the
    version `seen` at the last step, and the frame runs eagerly.
    """

    container: VariableTracker | None  # None once exhausted
    index: int
    kind: str  # "list", or a key of CHANGED_DURING_ITERATION
    size: int  # the dict's or set's size (a deque's state) when iter() was called
    iterator_type: type
    step: int = 1  # -1: reversed(c)
    seen: VariableTracker | None = None  # the container's version at the last step
    children_fields = ("container",)

    def python_type(self) -> type:
        return self.iterator_type

    def items_now(self, tx: Translator) -> list[VariableTracker]:
        return [] if self.container is None else self.container.unpack_var_sequence(tx)

    def check(self, tx: Translator) -> None:
        """RuntimeError, as CPython raises it, if the container changed under its iterator."""
        if self.container is None or self.kind == "list":
            return
        if container_size(tx, self.container, self.kind) != self.size:
            raise_observed(RuntimeError, CHANGED_DURING_ITERATION[self.kind])
        if self.container is not self.seen and self.kind != "deque":
            self.same_keys(tx)

    def same_keys(self, tx: Translator) -> None:
        """A break if the container's keys changed at the same size in a way whose effect
        on CPython's iterator depends on its memory. A dict keeps its entries in order,
        a removed one leaving a hole, a new one at the end: if none of the entries the
        iterator passed went (nor, walking backwards, any it has yet to reach), the
        position read among the live keys is CPython's. A set's new key goes wherever
        its hash falls, and an OrderedDict's iterator follows its links: any change."""
        before, now = self.seen.keys(tx), self.container.keys(tx)
        if before == now:
            return
        if self.kind == "dict":
            passed = self.index if self.step > 0 else self.index + 1
            if before[:passed] == now[:passed]:
                return
        graph_break(KEYS_CHANGED_DURING_ITERATION,
                    f"a {self.kind} lost a key and gained another (its size unchanged) "
                    f"while an iterator walked it")

    def next_variable(self, tx: Translator) -> VariableTracker | None:
        self.check(tx)
        container = self.container
        if container is None or not 0 <= self.index < container.live_length():
            if container is not None:  # exhausted: it lets the container go
                tx.output.side_effects.mutate(self.clone(container=None, seen=None))
            return None
        tx.output.side_effects.mutate(self.clone(index=self.index + self.step, seen=container))
        return container.item_at(self.index)

    def unpack_var_sequence(self, tx: Translator) -> list[VariableTracker]:
        self.check(tx)
        items, index = self.items_now(tx), self.index
        rest = items[index::self.step] if 0 <= index < len(items) else []
        tx.output.side_effects.mutate(self.clone(container=None, seen=None))
        return rest

    def reconstruct(self, codegen: PyCodegen) -> None:
        """`iterator_at(container, index, backwards)`: an iterator over the container
        itself, at the same position."""
        codegen.load_callable(iterator_at)
        if self.container is None:
            codegen.load_const(())
        else:
            codegen(self.container)
        codegen.load_const(0 if self.container is None else self.index)
        codegen.load_const(self.step < 0)
        codegen.call_function(3)

    def __repr__(self) -> str:
        return f"ContainerIteratorVariable({self.kind}, index={self.index})"


def container_size(tx: Translator, container: VariableTracker, kind: str) -> int:
    """What a container's iterator compares: its size (a deque's state, an OrderedDict's
    count of keys added or removed)."""
    if kind == "deque":
        return container.state
    if kind == "OrderedDict":
        return container.key_changes
    return container.live_length()


def container_iterator(tx: Translator, container: VariableTracker, kind: str,
                       sample: Any, backwards: bool = False) -> IteratorVariable:
    """The iterator `iter(container)` returns (`reversed(container)`: `backwards`);
    `sample` is an empty container of its type (the iterator's type is what iter() or
    reversed() of it returns)."""
    size = 0 if kind == "list" else container_size(tx, container, kind)
    if backwards:
        return ContainerIteratorVariable(container, container.live_length() - 1, kind, size,
                                         type(reversed(sample)), -1, seen=container,
                                         object_id=new_object_id())
    return ContainerIteratorVariable(container, 0, kind, size, type(iter(sample)),
                                     seen=container, object_id=new_object_id())


@dataclass(frozen=True, eq=False, repr=False)
class LazyBuiltinIteratorVariable(IteratorVariable):
    """An `enumerate`, `zip`, `map` or `filter` object: lazy, as CPython's are.

    Each `next()` asks the iterators it wraps for one item each, in order, when it is
    itself asked: a loop over `enumerate(xs)` sees what its body appends to `xs`, `map`'s
    function runs once per step, between the steps of the loop's body, and `zip` stops
    at the first exhausted iterator, the ones before it having given one item more.
    It is registered with the side effects when made (`made`), so that its newest
    version, holding its iterators' newest versions, is the one each step advances.
    """

    builtin: Any  # enumerate, zip, map or filter
    iterators: tuple[VariableTracker, ...]
    fn: VariableTracker | None = None  # map's and filter's function
    count: int = 0  # enumerate's next index
    strict: bool = False  # zip(..., strict=True)
    children_fields = ("iterators", "fn")

    @classmethod
    def made(cls, tx: Translator, builtin: Any, iterables: list[VariableTracker],
             fn: VariableTracker | None = None, count: int = 0,
             strict: bool = False) -> LazyBuiltinIteratorVariable:
        """`builtin(...)` over `iterables`: iter() of each is taken now, as CPython does."""
        iterators = tuple(iterable.get_iterator(tx) for iterable in iterables)
        made = cls(builtin, iterators, fn, count, strict, object_id=new_object_id())
        tx.output.side_effects.track_new(made)
        return made

    def python_type(self) -> type:
        return self.builtin

    def next_variable(self, tx: Translator) -> VariableTracker | None:
        from minidynamo.variables.builtins import truth_value
        from minidynamo.variables.exceptions import is_none
        from minidynamo.variables.lists import TupleVariable

        latest = tx.output.side_effects.latest
        if not self.iterators:  # zip(): empty
            return None
        while True:
            row = []
            for position in range(len(self.iterators)):
                item = latest(self).iterators[position].next_variable(tx)
                if item is None:
                    if self.strict:
                        self.check_the_rest_exhausted(tx, position)
                    return None
                row.append(item)
            current = latest(self)
            if self.builtin is filter:
                test = row[0] if is_none(current.fn) else current.fn.call_function(tx, row, {})
                if not truth_value(tx, test):
                    continue
                return row[0]
            if self.builtin is enumerate:
                tx.output.side_effects.mutate(current.clone(count=current.count + 1))
                return TupleVariable((ConstantVariable(current.count), row[0]))
            if self.builtin is map:
                return current.fn.call_function(tx, row, {})
            return TupleVariable(tuple(row))

    def check_the_rest_exhausted(self, tx: Translator, position: int) -> None:
        """`zip(..., strict=True)`: the iterator at `position` ended. Unless it is the
        first and every other ends too, raise CPython's ValueError (`zip_next`)."""
        def numbered(index: int) -> str:
            return "argument 1" if index == 1 else f"arguments 1-{index}"

        if position > 0:
            raise_observed(ValueError, f"zip() argument {position + 1} is shorter than "
                                       f"{numbered(position)}")
        for index in range(1, len(self.iterators)):
            if tx.output.side_effects.latest(self).iterators[index].next_variable(tx) is not None:
                raise_observed(ValueError, f"zip() argument {index + 1} is longer than "
                                           f"{numbered(index)}")

    def unpack_var_sequence(self, tx: Translator) -> list[VariableTracker]:
        items = []
        while (item := tx.output.side_effects.latest(self).next_variable(tx)) is not None:
            items.append(item)
        return items

    def reconstruct(self, codegen: PyCodegen) -> None:
        """`enumerate(it, count)`, `zip(*its)`, `map(fn, *its)`, `filter(fn, it)`
        (`zip_strict(*its)` for `zip(*its, strict=True)`)."""
        codegen.load_callable(zip_strict if self.strict else self.builtin)
        arguments = [self.fn, *self.iterators] if self.builtin in (map, filter) else self.iterators
        for argument in arguments:
            codegen(argument)
        if self.builtin is enumerate:
            codegen.load_const(self.count)
        codegen.call_function(len(arguments) + (self.builtin is enumerate))

    def __repr__(self) -> str:
        return f"LazyBuiltinIteratorVariable({self.builtin.__name__})"



def zip_strict(*iterables: Any) -> Any:
    """`zip(*iterables, strict=True)`: how a strict zip made while tracing is rebuilt."""
    return zip(*iterables, strict=True)

@dataclass(frozen=True, eq=False, repr=False)
class RangeIteratorVariable(IteratorVariable):
    """`iter(range(...))`: `values` is the part of the range not yet produced."""

    values: range

    def python_type(self) -> type:
        return type(iter(range(0)))

    def remaining(self) -> list[VariableTracker]:
        return [ConstantVariable(i) for i in self.values]

    def peek(self) -> VariableTracker | None:
        return ConstantVariable(self.values[0]) if self.values else None

    def advanced(self, steps: int) -> IteratorVariable:
        return self.clone(values=self.values[steps:])

    def __repr__(self) -> str:
        return "RangeIteratorVariable()"


@dataclass(frozen=True, eq=False, repr=False)
class GeneratorVariable(IteratorVariable):
    """A generator object made while tracing: a handle on its suspended frame.

    `generator_tx` is the generator's translator (its stack and locals are its state);
    `next_variable` resumes it until the next `yield`.
    """

    generator_tx: Any  # an InliningGeneratorInstructionTranslator (translator layer)

    def python_type(self) -> type:
        return types.GeneratorType

    var_getattr = bound_method_getattr  # gen.throw, gen.close: method_throw, method_close

    def next_variable(self, tx: Translator) -> VariableTracker | None:
        return self.generator_tx.resume(tx)

    def raise_stop_iteration(self) -> NoReturn:
        """`StopIteration(returned)` when the generator has just returned a value, so that
        `e.value` is it; a plain StopIteration when it returned None or was already done."""
        returned = self.generator_tx.stop_value
        if returned is None or (isinstance(returned, ConstantVariable) and returned.value is None):
            raise_observed(StopIteration)
        raise_observed(StopIteration, returned)

    def method_send(self, tx: Translator, value: VariableTracker) -> VariableTracker:
        """`gen.send(value)`: resume it with `value` as what its `yield` evaluates to."""
        item = self.generator_tx.resume(tx, value.realize())
        if item is None:
            self.raise_stop_iteration()
        return item

    def method_throw(self, tx: Translator, value: VariableTracker) -> VariableTracker:
        """`gen.throw(exception)` (chapter 8): the generator's next value, else StopIteration."""
        from minidynamo.variables.exceptions import instantiate

        exception = instantiate(tx, value)
        raised = ObservedException(exception.exc_type, exception.args, value=exception)
        item = self.generator_tx.throw(tx, raised)
        if item is None:
            self.raise_stop_iteration()
        return item

    def method_close(self, tx: Translator) -> VariableTracker:
        """`gen.close()`: GeneratorExit thrown in; the generator must not yield again."""
        self.generator_tx.close(tx)
        return ConstantVariable(None)

    def unpack_var_sequence(self, tx: Translator) -> list[VariableTracker]:
        items = []
        while (item := self.next_variable(tx)) is not None:
            items.append(item)
        return items

    def reconstruct(self, codegen: PyCodegen) -> None:
        graph_break(CANNOT_RECONSTRUCT, "a generator made while tracing escapes the frame")

    def __repr__(self) -> str:
        return f"GeneratorVariable({self.generator_tx.code.co_name})"
