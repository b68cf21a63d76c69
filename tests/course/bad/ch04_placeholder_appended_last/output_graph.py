"""A common mistake: `graph.placeholder(...)` appends at the end of the graph. An input
first used after some operations then gets a placeholder *after* those nodes, so the
graph differs from torch.compile's (and FX's own code generation would read it before
it is defined)."""

from __future__ import annotations


class OutputGraph:
    def add_graph_input(self, source: Source, value: torch.Tensor) -> TensorVariable:
        node = self.graph.placeholder(source.placeholder_name())
        example = self.fake_mode.from_tensor(value, static_shapes=True)
        node.meta["example_value"] = example
        self.graph_inputs.append(GraphInput(source, value, node))
        return TensorVariable(node, example, class_=type(value), source=source)
