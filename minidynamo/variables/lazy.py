"""LazyVariableTracker: frame inputs are wrapped on first use, not on entry (chapter 4).

When the tracer starts a frame it does not look at the arguments. Each one is
pushed as a `LazyVariableTracker`: the real value plus its source, nothing
more. Only when an instruction *uses* the value (an operator, a call, an
attribute read) is it *realized*: the VariableBuilder turns it into a real
tracker, and a tensor becomes a graph input at that moment. So

- an argument the function never touches never becomes a graph input, and
- graph inputs appear in the order the code first uses them
  (`L['self'].fc.weight` before `L['x']` when `self.fc(x)` reads the weight first).

The realized tracker is remembered by the OutputGraph under the source, so a
lazy tracker is realized once however many copies of it sit on stacks and in
locals; `unwrap()` (used by LOAD_FAST) returns the realized tracker if there is one.

Compare with TorchDynamo: `torch/_dynamo/variables/lazy.py`, which forwards every
attribute of the lazy tracker to the realized one and realizes on `isinstance`.
We forward the protocol methods explicitly and realize at clearly marked points.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

from minidynamo.variables.base import VariableTracker

if TYPE_CHECKING:
    from minidynamo.codegen import PyCodegen
    from minidynamo.sources import Source
    from minidynamo.output_graph import OutputGraph
    from minidynamo.translator.base import InstructionTranslatorBase as Translator


@dataclass(frozen=True, eq=False, repr=False)
class LazyVariableTracker(VariableTracker):
    """A frame input not looked at yet: the real value and its source (always set)."""

    value: Any
    output: OutputGraph  # where realized trackers are remembered, by source

    def realize(self) -> VariableTracker:
        """Build the real tracker (once per source) with the VariableBuilder."""
        from minidynamo.variables.builder import VariableBuilder

        realized = self.output.realized_inputs.get(self.source)
        if realized is None:
            realized = VariableBuilder(self.output, self.source)(self.value)
            self.output.realized_inputs[self.source] = realized
        return realized

    def is_realized(self) -> bool:
        return self.source in self.output.realized_inputs

    def unwrap(self) -> VariableTracker:
        """The realized tracker if there is one, else this lazy tracker (LOAD_FAST)."""
        return self.output.realized_inputs.get(self.source, self)

    # -- the protocol, forwarded to the realized tracker ---------------------

    def python_type(self) -> type:
        """Known without realizing, but the trace now depends on it: a type guard."""
        if not self.is_realized():
            self.output.guards.add("TYPE_MATCH", self.source, self.value)
        return type(self.value)

    def as_python_constant(self) -> Any:
        # Realizes, as TorchDynamo's does: asking `(x,) + (y,)` whether it folds makes
        # x a graph input. Asking stops at the first item that is not a constant.
        return self.realize().as_python_constant()

    def is_python_constant(self) -> bool:
        return self.realize().is_python_constant()

    def as_proxy(self) -> Any:
        return self.realize().as_proxy()

    def var_getattr(self, tx: Translator, name: str) -> VariableTracker:
        return self.realize().var_getattr(tx, name)

    def call_function(
        self, tx: Translator, args: Sequence[VariableTracker], kwargs: dict[str, VariableTracker]
    ) -> VariableTracker:
        return self.realize().call_function(tx, args, kwargs)

    def call_method(
        self,
        tx: Translator,
        name: str,
        args: Sequence[VariableTracker],
        kwargs: dict[str, VariableTracker],
    ) -> VariableTracker:
        return self.realize().call_method(tx, name, args, kwargs)

    def unpack_var_sequence(self, tx: Translator) -> list[VariableTracker]:
        return self.realize().unpack_var_sequence(tx)

    def get_iterator(self, tx: Translator) -> VariableTracker:
        return self.realize().get_iterator(tx)

    def next_variable(self, tx: Translator) -> VariableTracker | None:
        return self.realize().next_variable(tx)

    def reconstruct(self, codegen: PyCodegen) -> None:
        self.realize().reconstruct(codegen)

    def set_name_hint(self, name: str) -> None:
        if self.is_realized():
            self.unwrap().set_name_hint(name)

    def __repr__(self) -> str:
        if self.is_realized():
            return f"LazyVariableTracker(realized: {self.unwrap()!r})"
        return f"LazyVariableTracker(unrealized: {type(self.value)})"


def build_lazily(output: OutputGraph, value: Any, source: Source | None) -> VariableTracker:
    """The tracker of a value read from outside the frame (a global, an attribute, a
    default): lazy when it has a source, as TorchDynamo's `VariableTracker.build`."""
    from minidynamo.variables.builder import VariableBuilder

    if source is None:
        return VariableBuilder(output, None)(value)
    return LazyVariableTracker(value, output, source=source)
