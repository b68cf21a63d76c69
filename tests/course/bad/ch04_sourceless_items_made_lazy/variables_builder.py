"""A common mistake: make every item of a container lazy, with a GetItemSource on the
container's source, forgetting that a container may have no source (a class attribute
read through `type(obj)`, a value made while tracing). Its items then get
`GetItemSource(None, i)`, which nothing can reload: rebuilding the container after the
graph fails."""

from __future__ import annotations


class VariableBuilder:
    def __call__(self, value: Any) -> VariableTracker:
        known = self.output.side_effects.existing_variable(value)
        if known is not None:
            return known  # the same mutable object or tensor, seen again
        for matches, build in self.RULES:
            if matches(value):
                return build(self, value)
        return self.wrap_object(value)

    def child(self, value: Any, index: Any) -> VariableTracker:
        return LazyVariableTracker(value, self.output, source=GetItemSource(self.source, index))
