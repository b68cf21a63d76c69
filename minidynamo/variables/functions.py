"""User functions, methods, closures and cells: calls that are inlined (chapter 3).

Calling a Python function while tracing does not run it and does not graph
break: the translator *inlines* it. It binds the arguments (trackers) to the
callee's parameters, starts an `InliningInstructionTranslator` on the callee's
bytecode, sharing the same OutputGraph, and pushes the callee's return value
onto the caller's stack. The callee's tensor operations land in the same graph.

- `UserFunctionVariable`: a real function found in the frame (a global, an
  argument, an attribute).
- `UserMethodVariable`: a function bound to an object (`self.helper`).
- `NestedUserFunctionVariable`: a function made *while tracing* by MAKE_FUNCTION
  (a lambda, a comprehension, an inner `def`); its defaults and closure cells
  are trackers.
- `CellVariable`: a closure cell. Cells are mutable (STORE_DEREF); writing to a
  cell that exists outside the frame is a side effect replayed after the graph.

Compare with TorchDynamo: `torch/_dynamo/variables/functions.py`
(`UserFunctionVariable`, `UserMethodVariable`, `NestedUserFunctionVariable`)
and the cell handling in `side_effects.py`.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import types
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Sequence

from minidynamo.exc import (
    CANNOT_RECONSTRUCT,
    EXCEPTION_IN_TRACED_CODE,
    UNSUPPORTED_MUTATION,
    graph_break,
    raise_observed,
)
from minidynamo.sources import (
    AttrSource,
    Source,
    closure_cell_source,
    default_argument_source,
    keyword_default_source,
)
from minidynamo.variables.base import VariableTracker, new_object_id
from minidynamo.variables.constant import ConstantVariable
from minidynamo.variables.dicts import ConstDictVariable
from minidynamo.variables.lists import TupleVariable

if TYPE_CHECKING:
    from minidynamo.codegen import PyCodegen
    from minidynamo.translator.base import InstructionTranslatorBase as Translator


def bind_arguments(
    code: types.CodeType,
    defaults: Sequence[VariableTracker],
    keyword_defaults: dict[str, VariableTracker],
    args: Sequence[VariableTracker],
    kwargs: dict[str, VariableTracker],
) -> dict[str, VariableTracker]:
    """The callee's initial locals: parameters bound to argument trackers.

    Python's own binding rules do the work: we build a stand-in function with
    the callee's code object whose defaults *are* trackers and ask `inspect` to
    bind the arguments to it.
    """
    closure = tuple(types.CellType() for _ in code.co_freevars)
    stand_in = types.FunctionType(code, {}, code.co_name, tuple(defaults), closure)
    stand_in.__kwdefaults__ = dict(keyword_defaults) or None
    signature = inspect.signature(stand_in)
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError as error:
        graph_break(EXCEPTION_IN_TRACED_CODE, f"calling {code.co_name}(): {error}")
    bound.apply_defaults()
    # inspect spells a comprehension's hidden parameter `.0` as `implicit0`
    real_names = {f"implicit{name[1:]}": name for name in code.co_varnames if name.startswith(".")}
    local_variables = {}
    for name, value in bound.arguments.items():
        kind = signature.parameters[name].kind
        if kind is inspect.Parameter.VAR_POSITIONAL:
            value = TupleVariable(tuple(value))
        elif kind is inspect.Parameter.VAR_KEYWORD:
            value = ConstDictVariable(dict(value), object_id=new_object_id())
        local_variables[real_names.get(name, name)] = value
    return local_variables


@dataclass(frozen=True, eq=False, repr=False)
class BaseUserFunctionVariable(VariableTracker):
    """A Python function whose bytecode the translator inlines when it is called."""

    def get_code(self) -> types.CodeType:
        raise NotImplementedError

    def get_globals(self) -> dict[str, Any]:
        raise NotImplementedError

    def bind(
        self, tx: Translator, args: Sequence[VariableTracker], kwargs: dict[str, VariableTracker]
    ) -> dict[str, VariableTracker]:
        raise NotImplementedError

    def closure_cells(self, tx: Translator) -> tuple[VariableTracker, ...]:
        """One CellVariable per name in the code's `co_freevars`."""
        return ()

    def call_function(
        self, tx: Translator, args: Sequence[VariableTracker], kwargs: dict[str, VariableTracker]
    ) -> VariableTracker:
        if self.get_code() in compiler_bookkeeping_codes():
            return ConstantVariable(None)
        return tx.inline_user_function(self, args, kwargs)

    def python_type(self) -> type:
        return types.FunctionType

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.get_code().co_name})"


@functools.cache
def compiler_bookkeeping_codes() -> frozenset[types.CodeType]:
    """Code that only updates torch.compile's own records, and returns None: once
    torch.compile has run in the process, `nn.Module.__init__` is wrapped to tag each
    new module with a generation (`torch._dynamo.mutation_guard`), which TorchDynamo
    does not trace. Neither do we: the call is dropped."""
    from torch._dynamo.mutation_guard import GenerationTracker

    return frozenset({GenerationTracker.tag.__func__.__code__})


@dataclass(frozen=True, eq=False, repr=False)
class UserFunctionVariable(BaseUserFunctionVariable):
    """A real Python function object."""

    fn: types.FunctionType

    def get_code(self) -> types.CodeType:
        return self.fn.__code__

    def get_globals(self) -> dict[str, Any]:
        return self.fn.__globals__

    def as_python_constant(self) -> Any:
        return self.fn  # a function is a fixed object: `f is g` folds

    def bind(
        self, tx: Translator, args: Sequence[VariableTracker], kwargs: dict[str, VariableTracker]
    ) -> dict[str, VariableTracker]:
        from minidynamo.variables.lazy import build_lazily

        def source_of(make_source: Callable[[Source, Any], Source], key: Any) -> Source | None:
            return make_source(self.source, key) if self.source else None

        defaults = [
            build_lazily(tx.output, value, source_of(default_argument_source, index))
            for index, value in enumerate(self.fn.__defaults__ or ())
        ]
        keyword_defaults = {
            name: build_lazily(tx.output, value, source_of(keyword_default_source, name))
            for name, value in (self.fn.__kwdefaults__ or {}).items()
        }
        return bind_arguments(self.get_code(), defaults, keyword_defaults, args, kwargs)

    def closure_cells(self, tx: Translator) -> tuple[VariableTracker, ...]:
        from minidynamo.variables.builder import VariableBuilder

        cells = []
        for index, cell in enumerate(self.fn.__closure__ or ()):
            source = closure_cell_source(self.source, index) if self.source else None
            cells.append(VariableBuilder(tx.output, source)(cell))
        return tuple(cells)

    def var_getattr(self, tx: Translator, name: str) -> VariableTracker:
        from minidynamo.variables.builder import VariableBuilder

        if not hasattr(self.fn, name):
            if self.source is not None:  # `getattr(fn, "calls", 0)`: absent next time too
                tx.output.guards.not_in_dict(AttrSource(self.source, "__dict__"), name)
            raise_observed(AttributeError,
                           f"'function' object has no attribute {name!r}")
        source = AttrSource(self.source, name) if self.source else None
        return VariableBuilder(tx.output, source)(getattr(self.fn, name))

    def reconstruct(self, codegen: PyCodegen) -> None:
        codegen.load_object(self.fn)


@dataclass(frozen=True, eq=False, repr=False)
class UserMethodVariable(UserFunctionVariable):
    """A function bound to an object: `obj.method`; `obj` becomes the first argument."""

    obj: VariableTracker
    children_fields = ("obj",)

    def python_type(self) -> type:
        return types.MethodType

    def as_python_constant(self) -> Any:
        return types.MethodType(self.fn, self.obj.as_python_constant())

    def bind(
        self, tx: Translator, args: Sequence[VariableTracker], kwargs: dict[str, VariableTracker]
    ) -> dict[str, VariableTracker]:
        return super().bind(tx, [self.obj, *args], kwargs)

    def reconstruct(self, codegen: PyCodegen) -> None:
        """Only reached without a source: `obj.method` of an object made while tracing.
        TorchDynamo has no rule to rebuild such a method, and neither has minidynamo,
        so a break that leaves one live runs the frame eagerly, as torch.compile does."""
        graph_break(CANNOT_RECONSTRUCT, f"the method {self.fn.__qualname__} of an object "
                    "made while tracing")


def stand_in_function(code: types.CodeType, f_globals: dict[str, Any]) -> types.FunctionType:
    """A real function with this code and these globals (empty cells, no defaults): what
    C code computes of a function from them (`__doc__`, `__module__`), and `inspect`'s
    view of its parameters. It is never called."""
    closure = tuple(types.CellType() for _ in code.co_freevars)
    return types.FunctionType(code, f_globals, code.co_name, None, closure)


def with_globals(function: types.FunctionType, f_globals: dict[str, Any]) -> types.FunctionType:
    """Runs in generated code: `function`, just made by MAKE_FUNCTION with the frame's
    globals, remade with `f_globals` (the module whose code made it while tracing)."""
    remade = types.FunctionType(function.__code__, f_globals, function.__name__,
                                function.__defaults__, function.__closure__)
    remade.__kwdefaults__ = function.__kwdefaults__
    return remade


# A function's own attributes: the descriptors of its type, kept in the C struct, not
# in its `__dict__` (`__code__`, `__defaults__`, `__name__`, `__dict__` itself, ...).
FUNCTION_OWN_ATTRIBUTES = frozenset(
    name for name, value in vars(types.FunctionType).items()
    if isinstance(value, (types.GetSetDescriptorType, types.MemberDescriptorType)))
# Those that only describe it, read off its code and globals until assigned
# (`functools.wraps` copies them); assigning them changes no call.
FUNCTION_DESCRIPTIONS = frozenset({"__name__", "__qualname__", "__module__", "__doc__"})
FUNCTION_ASSIGNABLE = FUNCTION_DESCRIPTIONS | {"__annotations__"}


@dataclass(frozen=True, eq=False, repr=False)
class NestedUserFunctionVariable(BaseUserFunctionVariable):
    """A function made while tracing by MAKE_FUNCTION (lambda, comprehension, inner def).

    `attributes` holds what was assigned while tracing: entries of its `__dict__`
    (`f.calls = 0`, `__wrapped__`) and its descriptions (`__name__`, `__doc__`, ...);
    `__dict__` is a view of the entries (`InstanceDictVariable`)."""

    code: types.CodeType
    globals: dict[str, Any]
    defaults: VariableTracker | None  # a TupleVariable
    keyword_defaults: VariableTracker | None  # a ConstDictVariable
    closure: tuple[VariableTracker, ...] | None  # CellVariables
    attributes: dict[str, VariableTracker] = field(default_factory=dict)  # `f.tag = 1`
    children_fields = ("defaults", "keyword_defaults", "closure", "attributes")

    def get_code(self) -> types.CodeType:
        return self.code

    def var_getattr(self, tx: Translator, name: str) -> VariableTracker:
        from minidynamo.variables.dicts import InstanceDictVariable

        if name in self.attributes:
            return self.attributes[name]
        if name == "__dict__":
            return InstanceDictVariable.of(self)
        if name in FUNCTION_DESCRIPTIONS:
            return ConstantVariable(getattr(stand_in_function(self.code, self.globals), name))
        if name == "__annotations__":  # made empty on first read, then kept
            annotations = ConstDictVariable({}, object_id=new_object_id())
            tx.output.side_effects.mutate(
                self.clone(attributes={**self.attributes, name: annotations}))
            return annotations
        if name == "__code__":
            return ConstantVariable(self.code)
        if name in ("__defaults__", "__kwdefaults__"):
            return (self.defaults if name == "__defaults__" else self.keyword_defaults
                    ) or ConstantVariable(None)
        if hasattr(types.FunctionType, name):  # __globals__, __closure__, __get__ ...
            return super().var_getattr(tx, name)
        # its __dict__ holds exactly what was set while tracing
        raise_observed(AttributeError, f"'function' object has no attribute {name!r}")

    def call_method(
        self, tx: Translator, name: str, args: Sequence[VariableTracker],
        kwargs: dict[str, VariableTracker],
    ) -> VariableTracker:
        if name == "__setattr__" and len(args) == 2 and not kwargs:
            attribute = args[0].as_python_constant()
            if attribute in FUNCTION_OWN_ATTRIBUTES - FUNCTION_ASSIGNABLE:
                # __defaults__, __code__ ...: what calls would see
                graph_break(UNSUPPORTED_MUTATION, f"assigning {attribute} of a function")
            value = args[1].realize()
            is_string = isinstance(value, ConstantVariable) and isinstance(value.value, str)
            if attribute in ("__name__", "__qualname__") and not is_string:
                raise_observed(TypeError, f"{attribute} must be set to a string object")
            new = self.clone(attributes={**self.attributes, attribute: args[1]})
            tx.output.side_effects.mutate(new)
            return ConstantVariable(None)
        return super().call_method(tx, name, args, kwargs)

    def instance_dict(self) -> dict[str, VariableTracker]:
        """What `f.__dict__` holds: the attributes assigned that are not its own."""
        return {name: value for name, value in self.attributes.items()
                if name not in FUNCTION_OWN_ATTRIBUTES}

    def replace_instance_dict(self, tx: Translator, entries: dict[str, VariableTracker]) -> None:
        """`f.__dict__` now holds `entries` (written through the dict): a new version."""
        own = {name: value for name, value in self.attributes.items()
               if name in FUNCTION_OWN_ATTRIBUTES}
        tx.output.side_effects.mutate(self.clone(attributes={**own, **entries}))

    def get_globals(self) -> dict[str, Any]:
        return self.globals

    def bind(
        self, tx: Translator, args: Sequence[VariableTracker], kwargs: dict[str, VariableTracker]
    ) -> dict[str, VariableTracker]:
        defaults = self.defaults.unpack_var_sequence(tx) if self.defaults else []
        keyword_defaults = dict(self.keyword_defaults.items) if self.keyword_defaults else {}
        return bind_arguments(self.code, defaults, keyword_defaults, args, kwargs)

    def closure_cells(self, tx: Translator) -> tuple[VariableTracker, ...]:
        return self.closure or ()

    def reconstruct(self, codegen: PyCodegen) -> None:
        """An escaping inner function is rebuilt by MAKE_FUNCTION in the new code. That
        gives it the frame's globals: one made by an inlined function of another module
        (`torch.vmap`'s `wrapped`, a library's factory) is remade with its own module's
        globals (`with_globals`), or its global names would be looked up in the wrong module."""
        other_module = self.globals is not codegen.output.f_globals
        if other_module:
            codegen.load_callable(with_globals)
        flags = 0
        if self.defaults is not None:
            codegen(self.defaults)
            flags |= 0x01
        if self.keyword_defaults is not None:
            codegen(self.keyword_defaults)
            flags |= 0x02
        if self.closure:
            for cell in self.closure:
                codegen(cell)
            codegen.append("BUILD_TUPLE", arg=len(self.closure))
            flags |= 0x08
        codegen.load_const(self.code)
        codegen.append("MAKE_FUNCTION", arg=flags)
        if other_module:
            codegen.load_object(self.globals)
            codegen.call_function(2)
        for name, value in self.attributes.items():
            codegen.append("COPY", arg=1)
            codegen(value)
            codegen.append("SWAP", arg=2)
            codegen.append("STORE_ATTR", argval=name)


@dataclass(frozen=True, eq=False, repr=False)
class CellVariable(VariableTracker):
    """A closure cell; `contents` is None while the cell is empty."""

    contents: VariableTracker | None
    children_fields = ("contents",)

    def python_type(self) -> type:
        return types.CellType

    def reconstruct(self, codegen: PyCodegen) -> None:
        codegen.load_callable(types.CellType)
        if self.contents is None:
            codegen.call_function(0)
        else:
            codegen(self.contents)
            codegen.call_function(1)


@dataclass(frozen=True, eq=False, repr=False)
class PartialVariable(VariableTracker):
    """`functools.partial(func, *args, **keywords)`: calling it calls `func` with the
    stored arguments first (and the stored keywords, overridden by the call's)."""

    func: VariableTracker
    args: tuple[VariableTracker, ...] = ()
    keywords: dict[str, VariableTracker] = dataclasses.field(default_factory=dict)
    children_fields = ("func", "args", "keywords")

    def python_type(self) -> type:
        return functools.partial

    def call_function(
        self, tx: Translator, args: Sequence[VariableTracker], kwargs: dict[str, VariableTracker]
    ) -> VariableTracker:
        return self.func.call_function(tx, [*self.args, *args], {**self.keywords, **kwargs})

    def var_getattr(self, tx: Translator, name: str) -> VariableTracker:
        from minidynamo.variables.dicts import ConstDictVariable
        from minidynamo.variables.lists import TupleVariable

        if name == "func":
            return self.func
        if name == "args":
            return TupleVariable(self.args)
        if name == "keywords":
            return ConstDictVariable(dict(self.keywords), object_id=new_object_id())
        return super().var_getattr(tx, name)

    def reconstruct(self, codegen: PyCodegen) -> None:
        """`functools.partial(func, *args, **keywords)`, through `make_partial`."""
        codegen.load_callable(make_partial)
        codegen(self.func)
        for value in self.args:
            codegen(value)
        codegen.append("BUILD_TUPLE", arg=len(self.args))
        for name, value in self.keywords.items():
            codegen.load_const(name)
            codegen(value)
        codegen.append("BUILD_MAP", arg=len(self.keywords))
        codegen.call_function(3)

    def __repr__(self) -> str:
        return f"PartialVariable({self.func!r})"


def make_partial(func: Callable[..., Any], args: tuple, keywords: dict[str, Any]) -> Any:
    """Runs in generated code: the partial a PartialVariable stands for."""
    return functools.partial(func, *args, **keywords)


def partial(tx: Translator, func: VariableTracker, /, *args: VariableTracker,
            **keywords: VariableTracker) -> VariableTracker:
    """`functools.partial(...)` called while tracing (a partial of a partial is flattened,
    as functools does)."""
    if isinstance(func, PartialVariable):
        return PartialVariable(func.func, (*func.args, *args), {**func.keywords, **keywords})
    return PartialVariable(func, tuple(args), dict(keywords))
