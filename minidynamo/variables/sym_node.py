"""SymNodeVariable: a symbolic int (a dynamic size, a dynamic int argument) while tracing (chapter 9).

With static shapes, `x.shape[0]` is the constant 3 and `x.shape[0] * 2` folds to
6. When that size is dynamic (`shapes.py`), it is the symbol `s77` of torch's
ShapeEnv, and arithmetic on it cannot fold: `x.shape[0] * 2` becomes a graph
node, `mul = s77 * 2`, whose example value is the SymInt `2*s77`. A
SymNodeVariable is that node plus its example value, as a TensorVariable is a
node plus a FakeTensor.

Python sometimes needs the value itself:

- a branch (`if x.shape[0] > 2:`) asks the truth of a SymBool: torch answers
  from the example (5 > 2) and records the *guard* `2 < s77` in the ShapeEnv,
  so the graph is reused for every size for which the answer is the same;
- a constant is needed (`range(n)`, `[0] * n`, a list index): the symbol is
  *specialized*, `as_python_constant()` returns its value and the ShapeEnv
  records `Eq(s77, 5)`, so that entry is only reused for that size.

Compare with TorchDynamo: `torch/_dynamo/variables/tensor.py` (`SymNodeVariable`,
`evaluate_expr`) and `torch/fx/experimental/symbolic_shapes.py` (`guard_bool`,
`guard_int`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch
import torch.fx
from torch.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode

from minidynamo.exc import DATA_DEPENDENT_BRANCH, graph_break
from minidynamo.variables.base import VariableTracker

if TYPE_CHECKING:
    from minidynamo.codegen import PyCodegen


@dataclass(frozen=True, eq=False, repr=False)
class SymNodeVariable(VariableTracker):
    """A SymInt (or SymBool, SymFloat) computed by `node`; `sym` is its example value."""

    node: torch.fx.Node
    sym: Any

    def python_type(self) -> type:
        return {torch.SymInt: int, torch.SymBool: bool, torch.SymFloat: float}[type(self.sym)]

    def as_proxy(self) -> torch.fx.Node:
        return self.node

    def is_python_constant(self) -> bool:
        return False  # so that operators record a node rather than fold

    def as_python_constant(self) -> Any:
        """The value, specialized: the ShapeEnv guards that the symbol keeps it."""
        return self.python_type()(self.sym)

    def truth(self) -> bool:
        """`bool(value)` while tracing: the example's answer, guarded (`Ne(s77, 0)`). A
        symbol with no example (`u0`: `x._version`, read when the graph runs) has none:
        a branch on it depends on data, as on a tensor."""
        try:
            return bool(self.sym)
        except GuardOnDataDependentSymNode:
            graph_break(DATA_DEPENDENT_BRANCH, f"a branch on {self.sym}, known only when the "
                        "graph runs")

    def var_getattr(self, tx: Any, name: str) -> VariableTracker:
        """An attribute of the number itself (`n.bit_length`, `n.real`): the number's as
        it is now, specialized (guarded), as TorchDynamo specializes it."""
        if name == "__class__":
            return super().var_getattr(tx, name)
        return specialized(self).var_getattr(tx, name)

    def call_method(self, tx: Any, name: str, args: Any, kwargs: Any) -> VariableTracker:
        """A method no symbolic rule records (`n.bit_length()`, `format(n, 'd')`, an
        f-string's `__format__`): the specialized number's. An operator's own methods
        (`__eq__`, `__mul__`, `__radd__` ...) are not: the operator's protocol, which
        asks the other operand when this one has no answer, decides those."""
        from minidynamo.variables.builtins import OPERATOR_DUNDERS

        plain = name.replace("__r", "__", 1) if name.startswith("__r") else name
        if plain in OPERATOR_DUNDERS.values():
            return super().call_method(tx, name, args, kwargs)
        return specialized(self).call_method(tx, name, args, kwargs)

    def reconstruct(self, codegen: PyCodegen) -> None:
        codegen.load_graph_output(self.node)

    def __repr__(self) -> str:
        return f"SymNodeVariable({self.sym})"


def specialized(variable: VariableTracker) -> VariableTracker:
    """A SymNodeVariable as the constant it is now, guarded (`range(n)`, `xs[n]` need
    the number); any other tracker unchanged."""
    from minidynamo.variables.constant import ConstantVariable

    if isinstance(variable, SymNodeVariable):
        return ConstantVariable(variable.as_python_constant())
    return variable


def round_number(tx: Any, number: VariableTracker, ndigits: VariableTracker | None = None
                 ) -> VariableTracker:
    """`round(s)` of a dynamic float stays a symbol, `s.__round__()` as a node, as
    TorchDynamo records it; constants fold, anything else answers its `__round__`."""
    from minidynamo.variables.base import constant_values
    from minidynamo.variables.constant import fold

    args = [number] if ndigits is None else [number, ndigits]
    values = constant_values(args)
    if values is not None:
        return fold(round, values, {})
    if isinstance(number, SymNodeVariable):
        return tx.output.create_node(tx, "call_method", "__round__", args, {})
    return number.call_method(tx, "__round__", args[1:], {})
