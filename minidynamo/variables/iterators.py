"""Iterators: what GET_ITER makes and FOR_ITER advances, so loops unroll (chapter 3).

`for i in range(3): ...` runs its body three times *while tracing*: GET_ITER
turns the range into a `RangeIteratorVariable`, and each FOR_ITER asks it for
`next_variable`, which returns the next item and makes a new version of the
iterator one step further on (iterators are mutable objects: every reference to
the iterator sees it advance). When it is exhausted, FOR_ITER jumps past the
loop. The loop is gone from the graph: only the body's tensor operations remain,
once per iteration.

`enumerate`, `zip` and `map` over finite sequences become `ListIteratorVariable`s
over their (already known) items.

Compare with TorchDynamo: `torch/_dynamo/variables/iter.py` and
`lists.py::ListIteratorVariable`, `RangeIteratorVariable`.
"""

from __future__ import annotations

import types
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn

from minidynamo.exc import CANNOT_RECONSTRUCT, ObservedException, graph_break, raise_observed
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
        from minidynamo.variables.exceptions import ExceptionVariable

        exit_exception = ExceptionVariable(GeneratorExit, (), object_id=new_object_id())
        try:
            if self.generator_tx.throw(tx, ObservedException(GeneratorExit, (), exit_exception)) is not None:
                raise_observed(RuntimeError, "generator ignored GeneratorExit")
        except ObservedException as raised:
            if not issubclass(raised.exc_type, (GeneratorExit, StopIteration)):
                raise
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
