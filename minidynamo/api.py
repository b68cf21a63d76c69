"""The public API: compile(), explain(), reset() (chapter 0).

    compiled = minidynamo.compile(fn, backend="eager", fullgraph=False)
    compiled(x)                      # traces fn, runs the graph

`compile` mirrors `torch.compile`: a function gets a wrapper with the same
name and docstring; an nn.Module gets an `OptimizedModule` that behaves like
the module and compiles its `forward` (with `self` as a frame argument, so
parameters get the same graph-input names as in torch.compile).

Compare with TorchDynamo: `torch/_dynamo/eval_frame.py` (`optimize`,
`OptimizedModule`, `explain`) and `torch/__init__.py::compile`.
"""

from __future__ import annotations

import functools
import types
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable

import torch

from minidynamo import cache, convert_frame
from minidynamo.cache import hold_globals
from minidynamo.backends import Backend, lookup_backend
from minidynamo.exc import Unsupported
from minidynamo.global_state import global_module_hooks
from minidynamo.guards import Guard
from minidynamo.resume import resume_cache
from minidynamo.variables.nn_module import has_hooks


def compile(  # noqa: A001 (mirrors torch.compile)
    fn_or_module: Callable[..., Any] | torch.nn.Module | None = None,
    *,
    backend: str | Backend = "eager",
    fullgraph: bool = False,
    dynamic: bool | None = None,
) -> Callable[..., Any]:
    """Compile a function or an nn.Module with minidynamo.

    `backend` is a registered name ("eager", "aot_eager", "inductor") or any
    `(gm, example_inputs) -> callable`. With `fullgraph=True` a graph break
    raises `Unsupported` instead of running the frame eagerly. `dynamic` is
    torch.compile's (chapter 9): None (the default) compiles static shapes first and
    makes a size or an int argument that changes a symbol at the next compile
    (automatic dynamic shapes); True makes them symbols from the first call; False
    keeps everything static (a new size is a new cache entry).
    """
    if dynamic not in (None, True, False):
        raise TypeError(f"minidynamo.compile: dynamic must be None, True or False, got {dynamic!r}")
    if fn_or_module is None:  # `@minidynamo.compile(backend=...)`: a decorator, as torch's
        return functools.partial(compile, backend=backend, fullgraph=fullgraph, dynamic=dynamic)
    backend_fn = lookup_backend(backend)
    # A compiled function or module compiled again: the original, with these options
    # (tracing minidynamo's own wrapper would only reach it again, without end).
    fn_or_module = getattr(fn_or_module, "_minidynamo_original", fn_or_module)
    if isinstance(fn_or_module, OptimizedModule):
        fn_or_module = fn_or_module._orig_mod
    if isinstance(fn_or_module, torch.nn.Module):
        return OptimizedModule(fn_or_module, backend_fn, fullgraph, dynamic)
    if isinstance(fn_or_module, types.MethodType):
        function, owner = fn_or_module.__func__, fn_or_module.__self__
        compiled = compile(function, backend=backend_fn, fullgraph=fullgraph, dynamic=dynamic)
        return types.MethodType(compiled, owner)
    if isinstance(fn_or_module, type):  # a class: itself, as torch.compile returns it
        return fn_or_module
    if not callable(fn_or_module):
        raise TypeError(f"minidynamo.compile expects a function, an nn.Module or another "
                        f"callable, got {type(fn_or_module).__name__} {fn_or_module!r}")
    # A callable without a Python frame of its own (a builtin, torch.add, a
    # functools.partial, an object with __call__): a one-line frame that calls it is
    # compiled, as TorchDynamo wraps it (`wrap_inline`).
    fn = fn_or_module if isinstance(fn_or_module, types.FunctionType) else \
        functools.wraps(fn_or_module)(wrap_inline(fn_or_module))

    @functools.wraps(fn)
    def compiled_function(*args: Any, **kwargs: Any) -> Any:
        return convert_frame.call_compiled(fn, args, kwargs, backend_fn, fullgraph, owner,
                                           dynamic=dynamic)

    body = convert_frame.coroutine_body(fn)
    if body is not None:  # a coroutine that never awaits: its body is the frame (ch 0)
        @functools.wraps(fn)
        async def compiled_function(*args: Any, **kwargs: Any) -> Any:  # noqa: F811
            return convert_frame.call_compiled(body, args, kwargs, backend_fn, fullgraph,
                                               owner, dynamic=dynamic)

    owner = weakref.ref(fn)  # its cache entries go when the function goes
    compiled_function._minidynamo_original = fn  # type: ignore[attr-defined]
    return compiled_function


class OptimizedModule(torch.nn.Module):
    """A compiled module: calls compile `forward`; everything else is the original module's."""

    def __init__(self, module: torch.nn.Module, backend: Backend, fullgraph: bool,
                 dynamic: bool | None = None) -> None:
        super().__init__()
        self._orig_mod = module
        self._backend = backend
        self._fullgraph = fullgraph
        self._dynamic = dynamic
        self._owner = weakref.ref(module)  # its cache entries go when the module goes
        # `_orig_mod` is a submodule (its state_dict keys say so, as torch's do), read
        # through nn.Module.__getattr__; a call reads this plain attribute instead.
        self.__dict__["_module"] = module

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """As TorchDynamo's OptimizedModule: torch's own modules are called from a one-line
        frame that is compiled whole, hooks included (`wrap_inline`: inputs named
        L['fn'], L['args'][0]); a user module's call runs natively, and what it calls,
        its hooks and its forward, is compiled frame by frame (three graphs for a pre
        hook, the forward and a hook); without hooks, that is its forward alone."""
        module = self._module
        if from_torch_nn(type(module)):
            frame = self.__dict__.get("_inline_frame")
            if frame is None:  # made once: a new function per call is a new binder per call
                frame = self.__dict__["_inline_frame"] = wrap_inline(module)
        elif has_hooks(module):
            return self._call_with_callees_compiled()(module, *args, **kwargs)
        else:  # a user module: compile its forward, with `self` as a frame argument
            frame, args = user_forward(module, args)
            if frame is None:  # a forward set on the instance that is no Python function
                return module(*args, **kwargs)
        return convert_frame.call_compiled(frame, args, kwargs, self._backend, self._fullgraph,
                                           self._owner, dynamic=self._dynamic)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """`nn.Module.__call__` goes straight to `forward` when it has nothing else to
        run (no hook on this wrapper, none for every module, no TorchScript tracing):
        only then, so that a hook registered on the compiled module still runs."""
        if (self._forward_hooks or self._forward_pre_hooks or self._backward_hooks
                or self._backward_pre_hooks or any(global_module_hooks())
                or torch._C._get_tracing_state()):
            return super().__call__(*args, **kwargs)
        return self.forward(*args, **kwargs)

    def _call_with_callees_compiled(self) -> Callable[..., Any]:
        """`nn.Module._call_impl` with each call it makes (a hook, the forward) routed
        through `compile_frame`, as PEP 523 gives TorchDynamo each of their frames. Made
        once; the globals it installs in torch's module go when this module goes."""
        runner = self.__dict__.get("_hooked_call")
        if runner is None:
            call = torch.nn.Module._call_impl
            code, installed = convert_frame.routed_code(
                call, self._backend, self._fullgraph, self._dynamic, owner=self._owner)
            runner = self.__dict__["_hooked_call"] = convert_frame.function_with_code(call, code)
            hold_globals(self, call.__globals__, installed)
        return runner

    @property
    def training(self) -> bool:  # type: ignore[override]
        """The original module's flag, read and set (`compiled.training = False`), as on
        torch.compile's OptimizedModule; `nn.Module.__init__`'s default is ignored."""
        module = self.__dict__.get("_module")
        return True if module is None else module.training

    @training.setter
    def training(self, value: bool) -> None:
        module = self.__dict__.get("_module")
        if module is not None:
            module.training = value

    def __getattr__(self, name: str) -> Any:
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self._orig_mod, name)

    # set on the wrapper itself; any other attribute is the original module's
    OWN_ATTRIBUTES = frozenset({"_orig_mod", "_backend", "_fullgraph", "_dynamic", "_owner",
                                "_module", "_hooked_call", "_inline_frame", "__dict__"})

    def __setattr__(self, name: str, value: Any) -> None:
        """`compiled.scale = 2` sets the original module's attribute, as on torch.compile's
        OptimizedModule (the next call's guards see it); the wrapper's own attributes,
        and what its class defines, stay the wrapper's."""
        if name in self.OWN_ATTRIBUTES or hasattr(type(self), name) or "_module" not in self.__dict__:
            return super().__setattr__(name, value)
        setattr(self._module, name, value)

    def __delattr__(self, name: str) -> None:
        if name in self.OWN_ATTRIBUTES or hasattr(type(self), name):
            return super().__delattr__(name)
        delattr(self._module, name)


@functools.lru_cache(maxsize=256)
def from_torch_nn(cls: type) -> bool:
    """A class of torch.nn's own (called from a one-line frame compiled whole), asked
    once per class: a compiled module asks on every call."""
    return cls.__module__.startswith("torch.nn.")


def user_forward(module: torch.nn.Module, args: tuple) -> tuple[types.FunctionType | None, tuple]:
    """The frame a call of `module` runs, and its arguments: its class's `forward` with
    `self` first, or a `forward` set on the instance (`m.forward = f`, `self.forward =
    self.fwd` in `__init__`), which nn.Module's call finds first."""
    own = module.__dict__.get("forward")
    if own is None:
        return type(module).forward, (module, *args)
    if isinstance(own, types.MethodType) and isinstance(own.__func__, types.FunctionType):
        return own.__func__, (own.__self__, *args)
    return (own, args) if isinstance(own, types.FunctionType) else (None, args)


def wrap_inline(fn: Callable[..., Any]) -> types.FunctionType:
    """A Python frame around `fn`, to compile a call of something without bytecode of its own."""

    def inner(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    return inner


def reset() -> None:
    """Forget everything minidynamo remembers between calls: counters, resume functions,
    every cache entry (torch._dynamo.reset)."""
    convert_frame.counters.clear()
    resume_cache.clear()
    cache.clear()


@dataclass
class ExplainOutput:
    """What `explain(fn)(*args)` found, with the fields of `torch._dynamo.explain`'s output.

    As in torch 2.13, `graph_break_count` is `graph_count - 1` (so -1 when the
    whole frame ran eagerly) and the reasons that match torch's `break_reasons`
    are the breaks at which a partial graph was compiled (`compiled_break_reasons`).
    `break_reasons` lists every break, those that made a frame run eagerly too.
    `code_objects` are the transformed frames and the resume functions, in the
    order they were made (`show_code` turns one into Python source).
    """

    graphs: list[torch.fx.GraphModule] = field(default_factory=list)
    break_reasons: list[Unsupported] = field(default_factory=list)
    code_objects: list[types.CodeType] = field(default_factory=list)
    out_guards: list[Guard] = field(default_factory=list)  # every new entry's guards (ch 9)

    @property
    def graph_count(self) -> int:
        return len(self.graphs)

    @property
    def graph_break_count(self) -> int:
        return self.graph_count - 1

    @property
    def compiled_break_reasons(self) -> list[Unsupported]:
        return [reason for reason in self.break_reasons if reason.compiled_graph]

    @property
    def ops_per_graph(self) -> list[list[Any]]:
        calls = ("call_function", "call_method", "call_module")
        return [[node.target for node in gm.graph.nodes if node.op in calls] for gm in self.graphs]

    @property
    def op_count(self) -> int:
        return sum(len(ops) for ops in self.ops_per_graph)

    def __str__(self) -> str:
        lines = [f"Graph Count: {self.graph_count}", f"Graph Break Count: {self.graph_break_count}",
                 f"Op Count: {self.op_count}", "Break Reasons:"]
        for index, reason in enumerate(self.break_reasons, 1):
            lines += [f"  Break Reason {index}:", f"    Reason: {reason.reason}", "    User Stack:"]
            lines += [f"      {frame}" for frame in reversed(reason.user_stack)]
        return "\n".join(lines)


def explain(fn: Callable[..., Any]) -> Callable[..., ExplainOutput]:
    """`explain(fn)(*args)`: compile and run fn once, report graphs and graph breaks.

    As `torch._dynamo.explain`, it starts from `reset()`: every frame is traced afresh."""

    def run(*args: Any, **kwargs: Any) -> ExplainOutput:
        reset()
        result = ExplainOutput()

        def record_graph(gm: torch.fx.GraphModule, example_inputs: list[torch.Tensor]) -> Any:
            return gm.forward

        listeners = (
            (convert_frame.graph_listeners, result.graphs.append),
            (convert_frame.break_listeners, result.break_reasons.append),
            (convert_frame.code_listeners, result.code_objects.append),
            (convert_frame.guard_listeners, lambda entry: result.out_guards.extend(entry.check.guards)),
        )
        for registry, listener in listeners:
            registry.append(listener)
        try:
            compile(fn, backend=record_graph)(*args, **kwargs)
        finally:
            for registry, listener in listeners:
                registry.remove(listener)
        return result

    return run


def show_guards(fn_or_module: Callable[..., Any] | torch.nn.Module) -> str:
    """The check functions of a compiled function's cache entries, newest first, as the
    Python source minidynamo generated (chapter 9). Empty before the first call."""
    frame = getattr(fn_or_module, "_minidynamo_original", fn_or_module)
    if isinstance(frame, OptimizedModule):
        module = frame._orig_mod
        frame = wrap_inline(module) if type(module).__module__.startswith("torch.nn.") else \
            type(module).forward
    code = getattr(frame, "__code__", frame)
    if not isinstance(code, types.CodeType):
        raise TypeError(f"show_guards expects a compiled function or module, got {fn_or_module!r}")
    frame_cache = cache.lookup(code)
    if frame_cache is None or not frame_cache.entries:
        return ""
    return "\n".join(f"# cache entry {entry.compile_id}\n{entry.check.annotated_source()}"
                     for entry in frame_cache.entries)


def show_code(fn_or_code: Callable[..., Any] | types.CodeType) -> str:
    """Python source for a code object (a transformed frame, a resume function), by depyf.

    Compare with TorchDynamo's `depyf` integration (`torch._dynamo` bytecode hooks)."""
    import depyf

    code = getattr(fn_or_code, "_minidynamo_original", fn_or_code)
    code = getattr(code, "__code__", code)
    return depyf.decompile(code)
