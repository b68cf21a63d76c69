"""A common mistake: turn only the data-dependent exceptions into graph breaks (the
two that TorchDynamo's get_fake_value names). An op that fails on FakeTensors as it
would in eager mode (mismatched shapes) then raises out of the compiler, instead of
breaking the graph so that the frame runs eagerly and raises the user's own error."""

from __future__ import annotations


class OutputGraph:
    def run_on_fakes(self, kind: str, target: Any, args: tuple, kwargs: dict[str, Any]) -> Any:
        """Run the operation on FakeTensors: the result's shape, dtype and device, no data."""

        def example_of(node: torch.fx.Node) -> Any:
            return node.meta["example_value"]

        fake_args = torch.fx.node.map_arg(args, example_of)
        fake_kwargs = torch.fx.node.map_arg(kwargs, example_of)
        name = target if isinstance(target, str) else getattr(target, "__name__", repr(target))
        try:
            with self.fake_mode:
                if kind == "call_method":
                    return getattr(fake_args[0], target)(*fake_args[1:], **fake_kwargs)
                return target(*fake_args, **fake_kwargs)
        except (DataDependentOutputException, DynamicOutputShapeException) as error:
            what = f"{name}() depends on tensor data ({type(error).__name__})"
            graph_break(DATA_DEPENDENT_VALUE, what)

    def create_node(
        self,
        tx: Translator,
        kind: str,
        target: Any,
        args: Sequence[VariableTracker],
        kwargs: dict[str, VariableTracker],
        *,
        keep: bool = False,
    ) -> VariableTracker:
        """Record `target(*args, **kwargs)` (kind "call_function" or "call_method").
        A call whose answer is a plain value is folded to it, no node, unless `keep`
        (TorchDynamo's reads of a tensor's attributes stay in its graph)."""
        node_args = tuple(arg.realize().as_proxy() for arg in args)
        node_kwargs = {name: value.realize().as_proxy() for name, value in kwargs.items()}
        example = self.run_on_fakes(kind, target, node_args, node_kwargs)
        if not (contains_tensor(example) or keep or has_side_effect(kind, target)):
            return constant(example)  # x.dim(), torch.is_tensor(x): known now, no node
        node = self.graph.create_node(kind, target, node_args, node_kwargs)
        node.meta["example_value"] = example
        node.meta["stack_trace"] = tx.stack_trace()
        return self.wrap_result(tx, node, example)

    def call_graph(self, outputs: list[torch.fx.Node]) -> list[Instruction]:
        """Finish and compile the graph; the instructions that call it (none if empty)."""
        self.graph.output(tuple(outputs))
        self.remove_unused_nodes()
        remove_grad_mode_toggles(self.graph)  # a block entered just before a break
        if not outputs and not any(node.op.startswith("call_") for node in self.graph.nodes):
            return []  # nothing for a backend to do: no graph, as in torch.compile
        gm = torch.fx.GraphModule(torch.nn.Module(), self.graph)
        name = f"__compiled_fn_{next(_global_names)}"
        if logs.is_enabled("graph_code"):
            code = gm.print_readable(print_output=False, include_stride=True, include_device=True)
            logs.graph_code_log.debug("TRACED GRAPH\n ===== %s =====\n %s\n", name, code)
        example_inputs = [graph_input.value for graph_input in self.graph_inputs]
        compiled = self.backend(gm, example_inputs)
        self.compiled_graph = gm
        self.f_globals[name] = self.installed_globals[name] = compiled
        instructions = [create_instruction("LOAD_GLOBAL", argval=name, arg=1)]
        for graph_input in self.graph_inputs:
            instructions += graph_input.source.reconstruct()
        instructions += [
            create_instruction("PRECALL", arg=len(self.graph_inputs)),
            create_instruction("CALL", arg=len(self.graph_inputs)),
            create_instruction("STORE_FAST", argval=GRAPH_OUTPUT_LOCAL),
        ]
        return instructions
