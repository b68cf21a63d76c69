"""A common mistake: build the input's tracker from the node and the FakeTensor alone,
`TensorVariable(node, example, source=source)`. Its class is then torch.Tensor even for
an nn.Parameter, so `isinstance(w, nn.Parameter)` in traced code answers False where
eager Python answers True, and the other branch is traced."""

from __future__ import annotations


class OutputGraph:
    def add_graph_input(self, source: Source, value: torch.Tensor) -> TensorVariable:
        placeholders = [node for node in self.graph.nodes if node.op == "placeholder"]
        if placeholders:
            insert_point = self.graph.inserting_after(placeholders[-1])
        else:
            insert_point = self.graph.inserting_before(next(iter(self.graph.nodes), None))
        with insert_point:
            node = self.graph.placeholder(source.placeholder_name())
        example = self.fake_mode.from_tensor(value, static_shapes=True)
        node.meta["example_value"] = example
        self.graph_inputs.append(GraphInput(source, value, node))
        return TensorVariable(node, example, source=source)
