"""Exceptions as values: exception classes and the exception objects raised while tracing (chapter 8).

`raise ValueError("bad", 3)` does not stop the trace. `ValueError` is an
`ExceptionClassVariable`; calling it makes an `ExceptionVariable`, a tracker of
the exception object (its type, `args`, `__cause__`, `__context__`), and
RAISE_VARARGS raises it *symbolically*: the translator looks up the frame's
exception table and jumps to the handler, or lets it leave the frame (chapter 8,
`translator/exceptions.py`). Nothing real is raised, so nothing is lost: the
handler that catches it sees the same object, `e.args` and all.

A tracker that finds a missing key or attribute raises only a type and
arguments (`exc.raise_observed(KeyError, key)`); `exception_of` turns that into
an `ExceptionVariable` when a handler needs the object.

Compare with TorchDynamo: `ExceptionVariable` and `UserDefinedExceptionClassVariable`
in `torch/_dynamo/variables/misc.py` and `user_defined.py`, and
`raise_observed_exception` in `torch/_dynamo/exc.py`.
"""

from __future__ import annotations

import types
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence

from minidynamo.exc import UNSUPPORTED_ATTRIBUTE, UNSUPPORTED_CALL, ObservedException, graph_break
from minidynamo.variables.base import KnownFunctionVariable, VariableTracker, new_object_id
from minidynamo.variables.constant import ConstantVariable, constant
from minidynamo.variables.lists import TupleVariable

if TYPE_CHECKING:
    from minidynamo.codegen import PyCodegen
    from minidynamo.translator.base import InstructionTranslatorBase as Translator


def is_exception_class(value: Any) -> bool:
    """A class whose instances are exceptions (`ValueError`, a user's `class E(Exception)`)."""
    return isinstance(value, type) and issubclass(value, BaseException)


def has_plain_init(cls: type[BaseException]) -> bool:
    """Whether `cls(*args)` only stores `args`: no `__init__`/`__new__` of the user's own,
    so the exception object can be made symbolically from its arguments."""
    return all(isinstance(getattr(cls, name), (types.BuiltinFunctionType,
                                               types.WrapperDescriptorType))
               for name in ("__init__", "__new__"))


@dataclass(frozen=True, eq=False, repr=False)
class ExceptionClassVariable(KnownFunctionVariable):
    """An exception class; calling it makes an exception object (`ExceptionVariable`)."""

    def call_function(
        self, tx: Translator, args: Sequence[VariableTracker], kwargs: dict[str, VariableTracker]
    ) -> VariableTracker:
        if kwargs:
            graph_break(UNSUPPORTED_CALL, f"{self.fn.__name__}() with keyword arguments")
        if not has_plain_init(self.fn):
            graph_break(UNSUPPORTED_CALL, f"{self.fn.__name__}() has its own __init__ or "
                        "__new__, which minidynamo does not trace")
        return ExceptionVariable(self.fn, tuple(arg.realize() for arg in args),
                                 object_id=new_object_id())

    def var_getattr(self, tx: Translator, name: str) -> VariableTracker:
        if not hasattr(self.fn, name):
            raise ObservedException(AttributeError, (
                f"type object {self.fn.__name__!r} has no attribute {name!r}",))
        value = getattr(self.fn, name)
        if isinstance(value, (str, int, tuple, type(None))):
            return constant(value)
        graph_break(UNSUPPORTED_ATTRIBUTE, f"{self.fn.__name__}.{name}")


@dataclass(frozen=True, eq=False, repr=False)
class ExceptionVariable(VariableTracker):
    """An exception object made while tracing: `exc_type(*args)`, with its chaining."""

    exc_type: type[BaseException]
    args: tuple[VariableTracker, ...] = ()
    cause: VariableTracker | None = None  # `raise ... from cause`
    context: VariableTracker | None = None  # the exception being handled when it was raised
    suppress_context: bool = False
    children_fields = ("args", "cause", "context")
    attributes: dict[str, VariableTracker] = field(default_factory=dict)

    def python_type(self) -> type:
        return self.exc_type

    def var_getattr(self, tx: Translator, name: str) -> VariableTracker:
        if name == "args":
            return TupleVariable(self.args)
        if name in ("__cause__", "__context__"):
            linked = self.cause if name == "__cause__" else self.context
            return linked if linked is not None else ConstantVariable(None)
        if name == "__suppress_context__":
            return ConstantVariable(self.suppress_context)
        if name == "__traceback__":  # a raised one has a traceback, which does not exist yet
            graph_break(UNSUPPORTED_ATTRIBUTE, f"{self.exc_type.__name__}.__traceback__: the "
                        "exception was raised while tracing, its traceback is not made yet")
        if name == "__class__":
            return ExceptionClassVariable(self.exc_type)
        if name in self.attributes:
            return self.attributes[name]
        if name == "value" and issubclass(self.exc_type, (StopIteration, StopAsyncIteration)):
            return self.args[0] if self.args else ConstantVariable(None)  # set by its __init__
        if name in ("errno", "strerror", "filename", "name", "obj", "value", "code"):
            graph_break(UNSUPPORTED_ATTRIBUTE, f"{self.exc_type.__name__}.{name}")
        raise ObservedException(AttributeError, (
            f"{self.exc_type.__name__!r} object has no attribute {name!r}",))

    def dunder_str(self, tx: Translator) -> VariableTracker:
        """`str(e)`: what the real exception's `__str__` says of the same arguments
        (`str(KeyError("k"))` is `"'k'"`), when they are constants."""
        return self.as_text(str, "__str__")

    def dunder_repr(self, tx: Translator) -> VariableTracker:
        """`repr(e)`: `ValueError('a', 2)`, as the real exception says it."""
        return self.as_text(repr, "__repr__")

    def as_text(self, convert: Any, method: str) -> VariableTracker:
        """`str` or `repr` of a real exception of the same class and constant arguments,
        when the class keeps the builtin method (one it defines in Python is not run)."""
        if not isinstance(getattr(self.exc_type, method), types.WrapperDescriptorType):
            graph_break(UNSUPPORTED_CALL, f"{convert.__name__}() of {self}: its class "
                                          f"defines {method}")
        if not all(arg.is_python_constant() for arg in self.args):
            graph_break(UNSUPPORTED_CALL, f"{convert.__name__}() of {self} with non-constant "
                                          "arguments")
        real = self.exc_type(*(arg.as_python_constant() for arg in self.args))
        return ConstantVariable(convert(real))

    def chained(self, *, cause: VariableTracker | None = None,
                context: VariableTracker | None = None) -> ExceptionVariable:
        """A new version with `__cause__` (and `__suppress_context__`) or `__context__` set."""
        changes: dict[str, Any] = {}
        if cause is not None:
            changes.update(cause=None if is_none(cause) else cause, suppress_context=True)
        if context is not None and context is not self:
            changes["context"] = context
        return self.clone(**changes) if changes else self

    def reconstruct(self, codegen: PyCodegen) -> None:
        """`exc_type(*args)`, its chaining set again by `chained_exception` when it has
        any (an exception caught in the frame and stored keeps its `__cause__`)."""
        chained = self.cause is not None or self.context is not None or self.suppress_context
        if chained:
            codegen.load_callable(chained_exception)
        codegen.load_callable(self.exc_type)
        for arg in self.args:
            codegen(arg)
        codegen.call_function(len(self.args))
        if chained:
            for linked in (self.cause, self.context):
                codegen(linked) if linked is not None else codegen.load_const(None)
            codegen.load_const(self.suppress_context)
            codegen.call_function(4)

    def __repr__(self) -> str:
        return f"ExceptionVariable({self.exc_type.__name__}{self.args!r})"


@dataclass(frozen=True, eq=False, repr=False)
class TracebackVariable(VariableTracker):
    """The traceback of an exception raised while tracing, as `__exit__` receives it: a
    traceback object, not None (`tb is None` is False), whose contents do not exist
    yet: reading it breaks the graph."""

    def python_type(self) -> type:
        return types.TracebackType

    def var_getattr(self, tx: Translator, name: str) -> VariableTracker:
        graph_break(UNSUPPORTED_ATTRIBUTE, f"traceback.{name} of an exception raised while "
                    "tracing: its traceback is not made yet")

    def __repr__(self) -> str:
        return "TracebackVariable()"


def chained_exception(exception: BaseException, cause: BaseException | None,
                      context: BaseException | None, suppress: bool) -> BaseException:
    """Runs in generated code: an exception rebuilt after the graph, linked as it was
    (setting `__cause__` sets `__suppress_context__` too: that one comes last)."""
    exception.__cause__ = cause
    exception.__context__ = context
    exception.__suppress_context__ = suppress
    return exception


def is_none(value: VariableTracker) -> bool:
    return isinstance(value, ConstantVariable) and value.value is None


def exception_of(raised: ObservedException) -> ExceptionVariable:
    """The tracker of the exception object `raised` carries, made if it has none yet."""
    if raised.value is None:
        args = tuple(arg if isinstance(arg, VariableTracker) else constant(arg)
                     for arg in raised.exc_args)
        raised.value = ExceptionVariable(raised.exc_type, args, object_id=new_object_id())
    return raised.value


def instantiate(tx: Translator, value: VariableTracker) -> ExceptionVariable:
    """What `raise value` raises: an exception object, or a new one of an exception class."""
    value = value.realize()
    if isinstance(value, ExceptionVariable):
        return value
    if isinstance(value, ExceptionClassVariable):
        return value.call_function(tx, [], {})
    raise ObservedException(TypeError, ("exceptions must derive from BaseException",))
