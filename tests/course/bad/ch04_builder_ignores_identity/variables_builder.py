"""A common mistake: go straight to the rules table, forgetting that this very object may
already have a tracker. `f(x, x)` then makes two graph inputs for one tensor, and a list
passed twice becomes two lists whose mutations are replayed separately."""

from __future__ import annotations


class VariableBuilder:
    def __call__(self, value: Any) -> VariableTracker:
        for matches, build in self.RULES:
            if matches(value):
                return build(self, value)
        return self.wrap_object(value)

    def child(self, value: Any, index: Any) -> VariableTracker:
        if self.source is None:
            return VariableBuilder(self.output, None)(value)
        return LazyVariableTracker(value, self.output, source=GetItemSource(self.source, index))
