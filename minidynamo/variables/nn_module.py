"""nn.Module: calls are inlined, parameters and buffers become graph inputs (chapter 3).

`self.fc(x)` does not record a "call Linear" node: the tracer inlines
`Linear.forward`, which calls `F.linear(input, self.weight, self.bias)`, a
torch function and therefore a graph node. Reading `self.weight` wraps the real
parameter with the source `L['self']._modules['fc']._parameters['weight']`, so
it becomes the graph input `L_self_modules_fc_parameters_weight_`, the very
name torch.compile gives it. Containers (`nn.Sequential`, `nn.ModuleList`)
work the same way: their Python `__iter__`, `__len__`, `__getitem__` are inlined.

Modules with hooks graph break (hooks are user code run around `forward`).

Compare with TorchDynamo: `torch/_dynamo/variables/nn_module.py`
(`NNModuleVariable`, `UnspecializedNNModuleVariable`); 2.13 inlines module
calls and lifts parameters to graph inputs, as we do.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence

import torch

from minidynamo.exc import (
    UNSUPPORTED_ATTRIBUTE,
    UNSUPPORTED_CALL,
    UNSUPPORTED_MUTATION,
    ObservedException,
    graph_break,
)
from minidynamo.global_state import global_module_hooks
from minidynamo.shapes import is_symbolic
from minidynamo.sources import AttrSource, GetItemSource, Source
from minidynamo.variables.base import VariableTracker
from minidynamo.variables.constant import ConstantVariable
from minidynamo.variables.lazy import build_lazily
from minidynamo.variables.user_defined import _lookup_static, _overrides_instance, object_attribute

if TYPE_CHECKING:
    from minidynamo.translator.base import InstructionTranslatorBase as Translator

# Where nn.Module keeps the state that becomes graph inputs.
MODULE_STATE = ("_parameters", "_buffers", "_modules")


def has_hooks(module: torch.nn.Module) -> bool:
    """Whether calling the module runs hooks around `forward` (asked on every call of a
    compiled module: its own hook dicts read from its `__dict__`, which is quicker than
    nn.Module's attribute lookup; a module that never ran `nn.Module.__init__` counts as
    hooked, so that its own call, not a shortcut, runs)."""
    own = module.__dict__
    try:
        if (own["_forward_hooks"] or own["_forward_pre_hooks"] or own["_backward_hooks"]
                or own["_backward_pre_hooks"]):
            return True
    except KeyError:
        return True
    return any(global_module_hooks())


# Containers whose slice is a new container of the same submodules.
SLICEABLE = (torch.nn.ModuleList, torch.nn.Sequential)


@dataclass(frozen=True, eq=False, repr=False)
class NNModuleVariable(VariableTracker):
    """A torch.nn.Module from outside the frame; `attributes` holds writes made while tracing."""

    module: torch.nn.Module
    attributes: dict[str, VariableTracker] = field(default_factory=dict)
    children_fields = ("attributes",)

    def python_type(self) -> type:
        return type(self.module)

    def var_getattr(self, tx: Translator, name: str) -> VariableTracker:
        from minidynamo.variables.builder import VariableBuilder

        if name in self.attributes:
            return self.attributes[name]
        if type(self.module).__getattribute__ is not object.__getattribute__:
            graph_break(UNSUPPORTED_ATTRIBUTE, f"{type(self.module).__name__} defines "
                        f"__getattribute__ (reading {name!r})")
        if name in MODULE_STATE and self.attributes and self.source is not None:
            # `self._modules` of a written module: read through its __dict__, as the
            # entries are (`children()` after `self.training = False` in `eval()`)
            return build_lazily(tx.output, self.module.__dict__[name], self.state_source(name))
        for state_name in MODULE_STATE:
            state = self.module.__dict__.get(state_name, {})
            tracked = tx.output.side_effects.existing_variable(state)
            if tracked is not None and name not in self.module.__dict__:
                # the dict was read in this trace and may have been written since
                # (`functional_call` swaps `_parameters[name]`): its newest version answers
                tracked = tx.output.side_effects.latest(tracked)
                key = ConstantVariable(name)
                if tracked.call_method(tx, "__contains__", [key], {}).as_python_constant():
                    return tracked.call_method(tx, "__getitem__", [key], {})
                continue
            if name in state and name not in self.module.__dict__:
                source = GetItemSource(self.state_source(state_name), name) if self.source else None
                if source is None:
                    return VariableBuilder(tx.output, None)(state[name])
                # through the lazy path, so a tied weight seen twice is guarded as one
                return build_lazily(tx.output, state[name], source).realize()
        try:
            return object_attribute(tx, self, self.module, type(self.module), name)
        except ObservedException as raised:
            if self.source is not None and issubclass(raised.exc_type, AttributeError):
                # found nowhere, and nn.Module.__getattr__ looks in the state dicts: one
                # registered later (`register_buffer('extra', ...)`) makes `hasattr` true
                for state_name in MODULE_STATE:
                    tx.output.guards.not_in_dict(self.state_source(state_name), name)
            raise

    def state_source(self, state_name: str) -> Source:
        """`L['self']._parameters`, or `L['self'].__dict__['_parameters']` once the module
        has been written to while tracing (TorchDynamo reads a mutated module through its
        __dict__, and its graph inputs are named after that path)."""
        if self.attributes:
            return GetItemSource(AttrSource(self.source, "__dict__"), state_name)
        return AttrSource(self.source, state_name)

    def call_function(
        self, tx: Translator, args: Sequence[VariableTracker], kwargs: dict[str, VariableTracker]
    ) -> VariableTracker:
        if hasattr(self.module, "_initialize_hook"):  # a lazy module's first call
            initialize_lazy_module(self.module, args, kwargs)
        tx.output.guards.add("NO_HOOKS", self.source, self.module)
        if has_hooks(self.module):  # nn.Module's own call, hooks and all, is inlined
            from minidynamo.variables.functions import UserMethodVariable

            call_impl = UserMethodVariable(torch.nn.Module._call_impl, self)
            return call_impl.call_function(tx, args, kwargs)
        if type(self.module).__call__ is not torch.nn.Module.__call__:
            return self.var_getattr(tx, "__call__").call_function(tx, args, kwargs)
        return self.var_getattr(tx, "forward").call_function(tx, args, kwargs)

    def call_method(
        self,
        tx: Translator,
        name: str,
        args: Sequence[VariableTracker],
        kwargs: dict[str, VariableTracker],
    ) -> VariableTracker:
        if name == "__setattr__" and type(self.module).__setattr__ is torch.nn.Module.__setattr__:
            return self.set_attribute(tx, args[0].as_python_constant(), args[1])
        if name == "__getitem__" and isinstance(self.module, SLICEABLE) and len(args) == 1 and (
                args[0].is_python_constant() and isinstance(args[0].as_python_constant(), slice)):
            return self.sliced(tx, args[0].as_python_constant())
        return self.var_getattr(tx, name).call_function(tx, args, kwargs)

    def sliced(self, tx: Translator, key: slice) -> VariableTracker:
        """`self.layers[:n]`: a new container of the same submodules, made now (its
        constructor runs no user code, and logs its use as in torch.compile's graph). Each submodule keeps the tracker, and so the
        source, it has in the original (`L['self']._modules['layers']._modules['0']`),
        as torch.compile names it when it traces the container's `__getitem__`."""
        from minidynamo.variables.base import new_object_id

        # nn.Module.__init__ logs its use; torch.compile, tracing it, records the call
        node = tx.output.graph.create_node(
            "call_function", torch._C._log_api_usage_once, ("python.nn_module",), {})
        node.meta["example_value"] = None
        node.meta["stack_trace"] = tx.stack_trace()
        modules = self.var_getattr(tx, "_modules").realize()
        modules.guard_all_keys()  # which modules a slice takes depends on all of them
        for name in list(self.module._modules)[key]:
            modules.call_method(tx, "__getitem__", [ConstantVariable(name)], {}).realize()
        variable = NNModuleVariable(self.module[key], object_id=new_object_id())
        return tx.output.side_effects.track_existing(variable.module, variable)

    def set_attribute(self, tx: Translator, name: str, value: VariableTracker) -> VariableTracker:
        """`self.name = value`: a new version of the module, replayed with setattr later."""
        value = value.realize()
        if isinstance(value, NNModuleVariable) or name in self.module._modules:
            what = f"assigning a submodule to {type(self.module).__name__}.{name}"
            graph_break(UNSUPPORTED_MUTATION, what)
        if name in self.module._parameters or name in self.module._buffers or issubclass(
                getattr(value, "class_", type(None)), torch.nn.Parameter):
            # nn.Module.__setattr__ files it under `_parameters` or `_buffers` (or refuses
            # a plain tensor for a parameter): `parameters()`, `self._buffers[name]` read
            # later in the frame would not see it
            what = f"assigning a parameter or buffer to {type(self.module).__name__}.{name}"
            graph_break(UNSUPPORTED_MUTATION, what)
        if _overrides_instance(_lookup_static(type(self.module), name)):
            # a property's setter (or a descriptor's __set__) stores it, not the __dict__
            graph_break(UNSUPPORTED_MUTATION, f"setting {type(self.module).__name__}.{name}, "
                        "a property or another data descriptor")
        tx.output.side_effects.mutate(self.clone(attributes={**self.attributes, name: value}))
        return ConstantVariable(None)

    def get_iterator(self, tx: Translator) -> VariableTracker:
        return self.call_method(tx, "__iter__", [], {}).get_iterator(tx)

    def unpack_var_sequence(self, tx: Translator) -> list[VariableTracker]:
        return self.get_iterator(tx).unpack_var_sequence(tx)

    def __repr__(self) -> str:
        return f"NNModuleVariable({type(self.module).__name__})"


def initialize_lazy_module(module: torch.nn.Module, args: Sequence[VariableTracker],
                           kwargs: dict[str, VariableTracker]) -> None:
    """A lazy module (`nn.LazyLinear`) sizes its parameters from its first input, in a
    pre-hook that then removes itself and gives the module its final class: run it now,
    on the inputs' FakeTensors, as TorchDynamo does (`initialize_lazy_module`), so that
    the trace sees real parameters and no hook. Eager's first call does the same, once
    (parameters initialized from the global RNG)."""
    from minidynamo.variables.tensor import TensorVariable

    def example(variable: VariableTracker) -> Any:
        variable = variable.realize()
        if isinstance(variable, TensorVariable) and not any(
                is_symbolic(size) for size in variable.example_value.shape):
            return variable.example_value
        if variable.is_python_constant():
            return variable.as_python_constant()
        graph_break(UNSUPPORTED_CALL, f"the first call of the lazy module "
                    f"{type(module).__name__} with {variable} (its sizes must be known)")

    module._infer_parameters(module, tuple(map(example, args)),
                             {name: example(value) for name, value in kwargs.items()})

@dataclass(frozen=True, eq=False, repr=False)
class ModuleStoreVariable(VariableTracker):
    """The store `nn.Module.__setattr__` makes, bound to a module: what
    `super().__setattr__(name, value)` reaches in a module class's own `__setattr__`
    (which the trace runs, as it runs a plain class's), done as a plain `m.name = v`."""

    module: NNModuleVariable
    children_fields = ("module",)

    def call_function(
        self, tx: Translator, args: Sequence[VariableTracker], kwargs: dict[str, VariableTracker]
    ) -> VariableTracker:
        module = tx.output.side_effects.latest(self.module)
        return module.set_attribute(tx, args[0].as_python_constant(), args[1])

    def __repr__(self) -> str:
        return f"ModuleStoreVariable({self.module!r})"
