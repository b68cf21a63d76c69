"""Small trackers: bound methods, NULL, Python modules (chapter 3).

- `GetAttrVariable(obj, name)`: `obj.name` where `name` is a method of `obj`'s
  type. LOAD_METHOD pushes it; CALL turns it into `obj.call_method(name, ...)`,
  so `x.relu()` becomes a `call_method` node and `xs.append(v)` a new list version.
- `NullVariable`: the NULL that 3.11's calling convention puts below a callable
  (PUSH_NULL, LOAD_GLOBAL with its low bit set, LOAD_METHOD).
- `PythonModuleVariable`: a module such as `torch` or `math`; reading an
  attribute wraps the real attribute with an `AttrSource`.

Compare with TorchDynamo: `torch/_dynamo/variables/misc.py` (`GetAttrVariable`,
`NullVariable`, `PythonModuleVariable`).
"""

from __future__ import annotations

import types
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

from minidynamo.exc import raise_observed
from minidynamo.sources import AttrSource
from minidynamo.variables.base import VariableTracker
from minidynamo.variables.constant import ConstantVariable

if TYPE_CHECKING:
    from minidynamo.codegen import PyCodegen
    from minidynamo.translator.base import InstructionTranslatorBase as Translator


@dataclass(frozen=True, eq=False, repr=False)
class GetAttrVariable(VariableTracker):
    """`obj.name` for a method `name` of obj's type; calling it calls the method."""

    obj: VariableTracker
    name: str
    children_fields = ("obj",)

    def python_type(self) -> type:
        return types.MethodType

    def as_python_constant(self) -> Any:
        if isinstance(self.obj, ConstantVariable):
            return getattr(self.obj.value, self.name)
        return super().as_python_constant()

    def call_function(
        self, tx: Translator, args: Sequence[VariableTracker], kwargs: dict[str, VariableTracker]
    ) -> VariableTracker:
        return self.obj.call_method(tx, self.name, args, kwargs)

    def reconstruct(self, codegen: PyCodegen) -> None:
        codegen(self.obj)
        codegen.append("LOAD_ATTR", argval=self.name)

    def __repr__(self) -> str:
        return f"GetAttrVariable({self.obj!r}, {self.name})"


@dataclass(frozen=True, eq=False, repr=False)
class NullVariable(VariableTracker):
    """The NULL below a callable on 3.11's stack; never a real value."""

    def reconstruct(self, codegen: PyCodegen) -> None:
        codegen.append("PUSH_NULL")

    def __repr__(self) -> str:
        return "NullVariable"


@dataclass(frozen=True, eq=False, repr=False)
class PythonModuleVariable(VariableTracker):
    """A Python module (`torch`, `math`, `torch.nn.functional`)."""

    module: types.ModuleType

    def python_type(self) -> type:
        return types.ModuleType

    def as_python_constant(self) -> Any:
        return self.module

    def var_getattr(self, tx: Translator, name: str) -> VariableTracker:
        from minidynamo.variables.lazy import build_lazily

        if not hasattr(self.module, name):
            if self.source is not None:  # set on the module later (`cfg.debug = 1`): traced again
                tx.output.guards.not_in_dict(AttrSource(self.source, "__dict__"), name)
            raise_observed(AttributeError,
                           f"module {self.module.__name__!r} has no attribute {name!r}")
        source = AttrSource(self.source, name) if self.source else None
        return build_lazily(tx.output, getattr(self.module, name), source)

    def __repr__(self) -> str:
        return f"PythonModuleVariable({self.module.__name__})"
