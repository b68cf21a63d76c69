"""Grad-mode context managers: `with torch.no_grad():` in the graph (chapter 8).

Grad mode is torch's global switch that decides whether new results record
autograd history. Three context managers flip it:

    torch.no_grad()             __enter__ turns it off, __exit__ restores it
    torch.enable_grad()         __enter__ turns it on,  __exit__ restores it
    torch.set_grad_enabled(b)   the *constructor* sets it, __enter__ sets it again;
                                __exit__ restores the mode before the constructor

Tracing follows torch.compile. Each change of grad mode becomes a node
`torch._C._set_grad_enabled(b)` of the graph, so the compiled graph flips the
mode where eager code would. The tracer also flips the *real* mode while it
traces, so that FakeTensor results get the `requires_grad` eager results will
have (`convert_frame` puts the mode back when tracing ends). A change to the
mode already in force records nothing; and a graph break right after an enter
leaves "off, on" next to each other, which `remove_grad_mode_toggles` deletes,
as TorchDynamo's `OutputGraph.cleanup_graph` does.

Three trackers:

- `GradModeClassVariable`: the class `torch.no_grad` (or `enable_grad`,
  `set_grad_enabled`); calling it makes a `GradModeVariable`;
- `GradModeVariable`: a context-manager object; BEFORE_WITH (`translator/
  with_blocks.py`) calls `enter`;
- `WithExitFunctionVariable`: the bound `__exit__` that BEFORE_WITH leaves on
  the stack; the block's normal exit calls it with `(None, None, None)`.

At a graph break inside the block (chapter 7's machinery) the `__exit__` slot
is rebuilt as a fresh `torch.no_grad()` (or `torch.enable_grad()`): the
resume function enters it again.

Compare with TorchDynamo: `GradModeVariable`, `ContextWrappingVariable`,
`TorchCtxManagerClassVariable` and `WithExitFunctionVariable` in
`torch/_dynamo/variables/ctx_manager.py` and `variables/torch.py`.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterator, Sequence

import torch
import torch.fx

from minidynamo.exc import CANNOT_RECONSTRUCT, UNSUPPORTED_CALL, graph_break
from minidynamo.variables.base import VariableTracker
from minidynamo.variables.constant import ConstantVariable

if TYPE_CHECKING:
    from minidynamo.codegen import PyCodegen
    from minidynamo.translator.base import InstructionTranslatorBase as Translator

# The context managers whose __enter__ sets a fixed mode -> that mode.
ENTER_SETS_MODE: dict[type, bool] = {torch.no_grad: False, torch.enable_grad: True}
GRAD_MODE_CLASSES = (torch.no_grad, torch.enable_grad, torch.set_grad_enabled)


def is_grad_mode_class(value: Any) -> bool:
    return isinstance(value, type) and value in GRAD_MODE_CLASSES


def is_grad_mode_object(value: Any) -> bool:
    """A `torch.no_grad()` or `torch.enable_grad()` object (a resume function gets one)."""
    return type(value) in ENTER_SETS_MODE


def set_grad_mode(tx: Translator, enabled: bool) -> None:
    """Record `torch._C._set_grad_enabled(enabled)` and flip the real mode, if it changes."""
    if torch.is_grad_enabled() == enabled:
        return
    node = tx.output.graph.create_node("call_function", torch._C._set_grad_enabled, (enabled,), {})
    node.meta["example_value"] = None
    node.meta["stack_trace"] = tx.stack_trace()
    torch._C._set_grad_enabled(enabled)


def load_manager(codegen: PyCodegen, enabled: bool) -> None:
    """Push a fresh `torch.enable_grad()` or `torch.no_grad()`: it sets `enabled` when entered."""
    codegen.load_callable(torch.enable_grad if enabled else torch.no_grad)
    codegen.call_function(0)


@dataclass(frozen=True, eq=False, repr=False)
class GradModeClassVariable(VariableTracker):
    """`torch.no_grad`, `torch.enable_grad` or `torch.set_grad_enabled`, the class itself."""

    cls: type

    def python_type(self) -> type:
        return type(self.cls)

    def as_python_constant(self) -> Any:
        return self.cls

    def call_function(
        self, tx: Translator, args: Sequence[VariableTracker], kwargs: dict[str, VariableTracker]
    ) -> VariableTracker:
        if self.cls in ENTER_SETS_MODE and not args and not kwargs:
            return GradModeVariable(ENTER_SETS_MODE[self.cls])
        if self.cls is torch.set_grad_enabled and len(args) == 1 and not kwargs:
            return self.set_grad_enabled(tx, args[0].realize())
        graph_break(UNSUPPORTED_CALL, f"{self.cls.__name__}() called with {len(args)} arguments")

    def set_grad_enabled(self, tx: Translator, flag: VariableTracker) -> VariableTracker:
        """Like eager's constructor, set the mode now; `__exit__` restores the one before."""
        if not flag.is_python_constant():
            graph_break(UNSUPPORTED_CALL, f"torch.set_grad_enabled({flag}): the mode is not "
                        "a Python constant", hint="Pass True or False, not a tensor.")
        before = torch.is_grad_enabled()
        set_grad_mode(tx, bool(flag.as_python_constant()))
        return GradModeVariable(bool(flag.as_python_constant()), mode_before=before)

    def reconstruct(self, codegen: PyCodegen) -> None:
        codegen.load_object(self.cls)

    def __repr__(self) -> str:
        return f"GradModeClassVariable({self.cls.__name__})"


@dataclass(frozen=True, eq=False, repr=False)
class GradModeVariable(VariableTracker):
    """A grad-mode context manager object.

    Attributes:
        enabled: the grad mode inside the block.
        mode_before: for `torch.set_grad_enabled(b)`, the mode before its
            constructor set `b` (what `__exit__` restores, however often the object
            is entered); None for
            `no_grad()`/`enable_grad()`, whose `__enter__` remembers the mode.
    """

    enabled: bool
    mode_before: bool | None = None

    def python_type(self) -> type:
        if self.mode_before is not None:
            return torch.set_grad_enabled
        return torch.enable_grad if self.enabled else torch.no_grad

    def enter(self, tx: Translator) -> WithExitFunctionVariable:
        """`__enter__`: the mode of the block; the `__exit__` to push."""
        if self.mode_before is not None:  # set_grad_enabled: set again on every enter,
            set_grad_mode(tx, self.enabled)  # then back to the mode before its constructor
            return WithExitFunctionVariable(self, self.mode_before)
        before = torch.is_grad_enabled()
        set_grad_mode(tx, self.enabled)
        return WithExitFunctionVariable(self, before)

    def reconstruct(self, codegen: PyCodegen) -> None:
        if self.mode_before is not None:
            graph_break(CANNOT_RECONSTRUCT, "a torch.set_grad_enabled(...) object outlives "
                        "a graph break; rebuilding it would set the grad mode again")
        load_manager(codegen, self.enabled)

    def __repr__(self) -> str:
        return f"GradModeVariable(enabled={self.enabled})"


@dataclass(frozen=True, eq=False, repr=False)
class WithExitFunctionVariable(VariableTracker):
    """The bound `__exit__` of an entered grad-mode block (BEFORE_WITH pushed it).

    Attributes:
        manager: the context manager entered.
        mode_before: the grad mode when it was entered, which `__exit__` restores.
    """

    manager: GradModeVariable
    mode_before: bool
    children_fields = ("manager",)

    def exit(self, tx: Translator) -> None:
        set_grad_mode(tx, self.mode_before)

    def call_function(
        self, tx: Translator, args: Sequence[VariableTracker], kwargs: dict[str, VariableTracker]
    ) -> VariableTracker:
        """`__exit__(...)`: the block's normal exit, or WITH_EXCEPT_START's with an
        exception (chapter 8); either way the mode before the block comes back, and the
        result (None) does not suppress the exception."""
        self.exit(tx)
        return ConstantVariable(None)

    def reconstruct(self, codegen: PyCodegen) -> None:
        """Only at a graph break, where the slot must hold a manager to enter again:
        a fresh one that sets the block's mode (chapter 7's `WithBlock`)."""
        load_manager(codegen, self.manager.enabled)

    def __repr__(self) -> str:
        return f"WithExitFunctionVariable({self.manager!r})"


def remove_grad_mode_toggles(graph: torch.fx.Graph) -> None:
    """Delete `_set_grad_enabled(b)` followed at once by `_set_grad_enabled(not b)`.

    A block entered just before a graph break, or entered and left with no
    operation inside, leaves such a pair; TorchDynamo's `cleanup_graph` drops it."""
    nodes = list(graph.nodes)
    index = 0
    while index < len(nodes) - 1:
        first, second = nodes[index], nodes[index + 1]
        if (first.target is torch._C._set_grad_enabled
                and second.target is torch._C._set_grad_enabled
                and first.args[0] != second.args[0]):
            graph.erase_node(first)
            graph.erase_node(second)
            index += 2
        else:
            index += 1


@contextlib.contextmanager
def restoring_grad_mode() -> Iterator[None]:
    """Tracing flips the real grad mode (see above): put it back however tracing ends."""
    enabled = torch.is_grad_enabled()
    try:
        yield
    finally:
        torch._C._set_grad_enabled(enabled)
