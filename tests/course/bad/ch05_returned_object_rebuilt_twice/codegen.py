"""A common mistake: rebuild every value the same way, forgetting that a new mutable
object returned (or stored) twice must be built once. `return fresh, fresh` then gives
two equal lists instead of one list twice, which eager Python would never do."""

from __future__ import annotations


class PyCodegen:
    def __call__(self, value: VariableTracker) -> None:
        if isinstance(value, LazyVariableTracker):
            if not value.is_realized():
                return self.load_source(value.source)
            value = value.unwrap()
        value = self.output.side_effects.latest(value)
        if isinstance(value, ConstantVariable):
            return self.load_const(value.value)
        if value.source is not None:
            return self.load_source(value.source)
        if isinstance(value, TensorVariable):
            return self.load_graph_output(value.node)
        return value.reconstruct(self)
