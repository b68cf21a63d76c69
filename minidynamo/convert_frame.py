"""Frame conversion: trace a call, build the transformed code, run it (chapters 0, 5, 7, 9).

`call_compiled(fn, args, kwargs, ...)` is what a compiled function does on every
call. It first looks in the code object's cache (chapter 9, `cache.py`): the first
entry whose check function holds for the call's locals runs its transformed code.
On a miss (a first call, or a *recompile*):

1. bind the actual arguments to the function's parameters (`frame_locals`: the
   frame's locals);
2. trace the frame with an `InstructionTranslator` (the graph is compiled with
   the backend when the trace reaches RETURN_VALUE);
3. assemble the transformed code object: the original prologue (MAKE_CELL,
   COPY_FREE_VARS, RESUME) followed by the output instructions;
4. add a cache entry (the guards the trace collected become its check function)
   and run the code as a function with the original globals, defaults and closure
   (`function_with_code`).

On a graph break (chapters 6-7) the transformed code runs a partial graph,
the breaking instruction natively, and a resume function, itself called
through `compile_frame`'s wrapper so that it is compiled as a frame of its
own. A break found inside a call makes the trace start again, knowing where
to stop (`RestartAnalysis`). Where no partial graph is possible (a `try`
block, a loop) the frame runs eagerly instead (with a warning), its calls still
routed through the wrapper, or, with `fullgraph=True`, the break is raised. A
frame that traced no tensor operation runs eagerly from then on, as TorchDynamo
skips it.

TorchDynamo enters frames through PEP 523 (`set_eval_frame`); we enter them
through the wrapper `compile()` returns, and otherwise do the same.

Compare with TorchDynamo: `torch/_dynamo/convert_frame.py` (`_compile`,
`transform`, `compile_frame`).
"""

from __future__ import annotations

import collections
import copy
import dis
import functools
import inspect
import logging
import sys
import types
import weakref
from typing import Any, Callable

import torch
from torch._dynamo.exc import TensorifyScalarRestartAnalysis
from torch._dynamo.symbolic_convert import TensorifyState
from torch.fx.experimental.symbolic_shapes import ConstraintViolationError

from minidynamo import config
from minidynamo.bytecode import Instruction, assemble, scan
from minidynamo.bytecode.opcodes import SUSPENDS
from minidynamo.cache import CacheEntry, FrameCache, cache_of
from minidynamo.constant_tuples import constant_tuples
from minidynamo.exc import (
    BREAK_AT_A_STATEMENT_BOUNDARY,
    UNSUPPORTED_PYTHON_FEATURE,
    BackendCompilerFailed,
    FailOnRecompileLimitHit,
    InternalError,
    Unsupported,
    graph_break,
    without_frames,
)
from minidynamo.guards import CheckFunction
from minidynamo.pinning import pinned_forms
from minidynamo.logs import graph_breaks_log, guards_log, log, recompiles_log, recompiles_verbose_log
from minidynamo.output_graph import Backend, OutputGraph
from minidynamo.sources import install_modules
from minidynamo.trace_rules import torch_skips_frame
from minidynamo.translator import InstructionTranslator
from minidynamo.variables.ctx_manager import restoring_grad_mode
from minidynamo.variables.nn_module import has_hooks
from minidynamo.variables.functorch import restoring_transform_state
from minidynamo.translator.breaks import RequiresGradRestart, RestartAnalysis, route_calls

# Statistics, like torch._dynamo.utils.counters; `minidynamo.reset()` clears them.
counters: collections.Counter[str] = collections.Counter()

# Callbacks told about every compiled graph and every graph break (explain() uses them).
graph_listeners: list[Callable[[Any], None]] = []
break_listeners: list[Callable[[Unsupported], None]] = []
code_listeners: list[Callable[[types.CodeType], None]] = []  # transformed codes, resume codes
guard_listeners: list[Callable[[CacheEntry], None]] = []  # every new cache entry (chapter 9)


def frame_locals(fn: types.FunctionType, args: tuple, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The frame's initial locals: the arguments bound to the parameters, defaults applied.

    As CPython fills a new frame: positional and keyword arguments first, then
    `__defaults__` and `__kwdefaults__` for the parameters not given, extra positional
    arguments in the `*args` tuple and extra keywords in the `**kwargs` dict. Arguments
    the call would reject raise TypeError. A wrapper's own parameters are bound, not
    those of the function it wraps (`functools.wraps` sets `__wrapped__`).
    """
    signature = inspect.signature(fn, follow_wrapped=False)
    bound = signature.bind(*args, **kwargs)
    bound.apply_defaults()
    return dict(bound.arguments)


def spelled_as_in_code(code: types.CodeType, f_locals: dict[str, Any]) -> dict[str, Any]:
    """`f_locals` named as the code names them: a comprehension's code (called as a frame
    of its own after a break) takes its iterator as `.0`, which inspect spells `implicit0`."""
    return {name if name in code.co_varnames else "." + name.removeprefix("implicit"): value
            for name, value in f_locals.items()}


def prologue(code: types.CodeType) -> list[Instruction]:
    """The instructions up to RESUME: cell creation and free-variable copying. Scanned
    once per code object; each transformed code gets copies of its own."""
    if code not in _prologues:
        instructions = []
        for inst in scan(code):
            instructions.append(inst)
            if inst.opname == "RESUME":
                break
        _prologues[code] = instructions
    return [copy.copy(inst) for inst in _prologues[code]]


_prologues: weakref.WeakKeyDictionary[types.CodeType, list[Instruction]] = \
    weakref.WeakKeyDictionary()


def transform_code(
    fn: types.FunctionType, f_locals: dict[str, Any], backend: Backend, fullgraph: bool = False,
    *, dynamic: bool | None = None, owner: weakref.ref | None = None,
) -> tuple[types.CodeType, OutputGraph]:
    """Trace one call of `fn` (its frame starts with `f_locals`); the transformed code.

    A break found inside an instruction restarts the trace with that break
    planned (TorchDynamo's speculation log), until a trace gets to its end.
    `dynamic` is compile's option (chapter 9): which sizes and ints are symbols is
    decided from it and from the sizes this code was compiled for before. The frames
    it calls natively (resume functions, callees after a break) are compiled for
    `owner` too: their entries go when it goes.
    """
    code = fn.__code__
    refuse_suspending_frames(code)
    break_points: dict[int, Unsupported] = {}
    sizes = cache_of(code).sizes
    break_on_requires_grad = False
    specialized = Specializations()
    while True:
        output = OutputGraph(fn.__globals__, backend, frame_name=fn.__qualname__,
                             dynamic=dynamic, frame_sizes=sizes)
        output.break_on_requires_grad = break_on_requires_grad
        output.specialized_floats = frozenset(specialized.floats)
        output.frame_compiler = functools.partial(
            compile_frame, backend=backend, fullgraph=fullgraph, dynamic=dynamic, owner=owner)
        tx = InstructionTranslator(code, f_locals, fn.__globals__, fn.__closure__, output,
                                       break_points=break_points, one_graph=fullgraph)
        try:
            # tracing a `with torch.no_grad()` or a `torch.vmap` changes the real state
            with restoring_grad_mode(), restoring_transform_state():
                tx.run()
        except RequiresGradRestart as restart:
            if fullgraph or break_on_requires_grad:  # no break allowed, or one already
                raise restart.error from None
            break_on_requires_grad = True
            output.discard()  # this trace is dropped, and what it held
            continue
        except RestartAnalysis as restart:
            break_points[restart.offset] = without_frames(restart.error)
            output.discard()
            continue
        except BackendCompilerFailed as failed:
            again = specialized.learn(output, failed)
            output.discard()
            if not again:
                raise
            continue
        except BaseException:  # the frame runs eagerly, or fullgraph raises: the same
            output.discard()
            raise
        body = at_position(tx.output_instructions, tx.current_instruction.positions)
        new_code = assemble([*prologue(code), *body], code)
        install_modules(new_code, fn.__globals__)
        return new_code, output


def refuse_suspending_frames(code: types.CodeType) -> None:
    """A generator or a coroutine that awaits is not traced: its frame suspends."""
    if code.co_flags & (inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR):
        kind = "a coroutine that awaits" if code.co_flags & inspect.CO_COROUTINE else \
            "a generator or async generator"
        graph_break(UNSUPPORTED_PYTHON_FEATURE,
                    f"{code.co_name} is {kind}: its frame suspends, and is not traced "
                    f"(torch.compile skips it too)")


class Specializations:
    """What AOTAutograd's pass that turns float inputs into tensors asked of one frame's
    traces: the floats to trace as constants (`floats`, by source name), and the
    symbols it asked torch's `TensorifyState` to specialize."""

    def __init__(self) -> None:
        self.floats: set[str] = set()
        TensorifyState.clear()  # what torch's pass asks to specialize is about this frame
        self.asked: frozenset[str] = frozenset()

    def learn(self, output: OutputGraph, failed: BackendCompilerFailed) -> bool:
        """Whether the frame is to be traced again after `failed`: the pass named new
        floats, or asked about a symbol of its own (a 0-d float64 tensor's value), whose
        answer `TensorifyState` keeps, so that the same graph passes when compiled a
        second time, as torch.compile compiles it twice."""
        floats = floats_to_specialize(output, failed)
        asked = frozenset(TensorifyState.force_specializations)
        if not floats - self.floats and asked == self.asked:
            return False
        self.floats |= floats
        self.asked = asked
        return True


def floats_to_specialize(output: OutputGraph, failed: BackendCompilerFailed) -> set[str]:
    """The dynamic floats to trace again as constants, by source name: AOTAutograd's
    pass that turns float inputs into tensors could not keep some of them (a float in
    `x.add(y, alpha=-lr)` is an argument no tensor can be), and said which in
    `TensorifyState` before raising `TensorifyScalarRestartAnalysis`, as it tells
    TorchDynamo, which restarts too. None named: all of this trace's floats."""
    if not isinstance(failed.inner_exception, TensorifyScalarRestartAnalysis):
        return set()
    floats = {source.name(): variable for source, variable in output.scalar_inputs.items()
              if variable.python_type() is float}
    named = {name for name, variable in floats.items()
             if TensorifyState.should_specialize(str(variable.sym.node.expr))}
    return named or set(floats)


def at_position(instructions: list[Instruction], position: dis.Positions | None,
                ) -> list[Instruction]:
    """The instructions, those written by minidynamo (no position of their own) placed
    at `position`: where the trace ended (the break, the return). Without one they
    would inherit the prologue's line, the `def`, and a frame asked for its line there
    (`warnings.warn`, `inspect.stack()`, a traceback through the graph's call) would
    get the wrong one, or None, where TorchDynamo's code gives the break's."""
    for instruction in instructions:
        if instruction.positions is None and instruction.starts_line is None:
            instruction.positions = position
    return instructions


_coroutine_bodies: weakref.WeakKeyDictionary[types.CodeType, types.CodeType] = \
    weakref.WeakKeyDictionary()


def coroutine_body(fn: types.FunctionType) -> types.FunctionType | None:
    """A coroutine function that never awaits, as the plain function its body is; None
    for anything else.

    Calling `async def f(x): return x.sin()` only makes a coroutine object (its code
    starts with RETURN_GENERATOR; POP_TOP), and the body runs at the first `send`.
    Under PEP 523 TorchDynamo sees that body as a frame and traces it, so a coroutine
    that never suspends is one graph (torch 2.13); one that awaits is skipped
    (GET_AWAITABLE is not traced). Without RETURN_GENERATOR and POP_TOP, and without the
    coroutine flag, the body is an ordinary function; its code is made once per code
    object, so every compile of `fn` shares one cache.
    """
    code = fn.__code__
    if not code.co_flags & inspect.CO_COROUTINE:
        return None
    body = _coroutine_bodies.get(code)
    if body is None:
        instructions = scan(code)
        if any(inst.opname in SUSPENDS for inst in instructions):
            return None
        start = next(i for i, inst in enumerate(instructions) if inst.opname == "RETURN_GENERATOR")
        del instructions[start:start + 2]  # RETURN_GENERATOR; POP_TOP
        body = assemble(instructions, code, co_flags=code.co_flags & ~inspect.CO_COROUTINE)
        _coroutine_bodies[code] = body
    return function_with_code(fn, body)


def compile_frame(function: Any, *, backend: Backend, fullgraph: bool,
                  dynamic: bool | None = None, owner: weakref.ref | None = None) -> Any:
    """What a function called natively after a break runs as: minidynamo's wrapper
    (so it is compiled as a frame of its own, as PEP 523 makes TorchDynamo do).

    The wrapper calls `call_compiled` with `backend`, `fullgraph`, `dynamic` and `owner` (what
    the entries are compiled for: they go when it goes) and keeps the
    function's name and docstring (`functools.wraps`). A bound method becomes the same
    method of the wrapped function. Anything else that is not a Python function, and a
    function from a skipped module (`is_skipped_frame`), is returned as it is.
    """
    if isinstance(function, types.MethodType):
        inner = compile_frame(function.__func__, backend=backend, fullgraph=fullgraph,
                              dynamic=dynamic, owner=owner)
        return types.MethodType(inner, function.__self__)
    if isinstance(function, torch.nn.Module):
        return compile_module_call(function, backend=backend, fullgraph=fullgraph, dynamic=dynamic)
    if not isinstance(function, types.FunctionType) or is_skipped_frame(function):
        return function

    @functools.wraps(function)
    def compiled_frame(*args: Any, **kwargs: Any) -> Any:
        return call_compiled(function, args, kwargs, backend, fullgraph, owner, dynamic=dynamic)

    return compiled_frame


def compile_module_call(module: torch.nn.Module, **options: Any) -> Any:
    """A module called natively: `nn.Module.__call__` (torch's code, not compiled) ends
    in `self.forward(*args, **kwargs)` when the module and the process have no hooks,
    and under PEP 523 that forward is a frame TorchDynamo compiles. So: with no hooks,
    the module's forward compiled as a frame; with hooks, the module's own call."""
    forward = compile_frame(module.forward, **options)

    @functools.wraps(type(module).__call__)
    def call_module(*args: Any, **kwargs: Any) -> Any:
        if has_hooks(module):
            return module(*args, **kwargs)
        return forward(*args, **kwargs)

    return call_module


def is_skipped_frame(function: types.FunctionType) -> bool:
    """minidynamo's code and the standard library's are not compiled as frames, nor is
    torch's where TorchDynamo's file rules skip it (`torch.nn`; not `torch.optim`:
    `trace_rules.torch_skips_frame`)."""
    module = (function.__globals__.get("__name__", "") or "").split(".")[0]
    if module == "torch":
        return torch_skips_frame(function.__code__)
    return module == "minidynamo" or module in sys.stdlib_module_names


def call_compiled(
    fn: types.FunctionType, args: tuple, kwargs: dict[str, Any], backend: Backend,
    fullgraph: bool, owner: weakref.ref | None = None, *, dynamic: bool | None = None,
) -> Any:
    """One call of a compiled function: the first cache entry whose guards hold runs;
    on a miss, trace and transform (a recompile), or fall back to eager.

    `owner` (held weakly) is what the new entry is compiled for: the function or
    module `minidynamo.compile` was given; the entry is released when it dies."""
    cache = cache_of(fn.__code__)
    if cache.skip:
        if cache.native_code is not None:
            return run_transformed(fn, cache.native_code, args, kwargs)
        return fn(*args, **kwargs)
    try:
        f_locals = cache.bind(fn, args, kwargs)
    except TypeError:  # wrong arguments: let Python raise its own error, outside this
        f_locals = None  # `except`, so that the binder's error is not its __context__
    if f_locals is None:
        return fn(*args, **kwargs)
    f_globals, backend_id = fn.__globals__, id(backend)
    for entry in cache.entries:
        if entry.backend_id == backend_id and entry.fullgraph is fullgraph and (
                entry.dynamic is dynamic) and (entry.f_globals is f_globals) and (
                entry.check.check(f_locals, f_globals)):
            counters["cache_hits"] += 1
            return entry.runner(fn, function_with_code)(*args, **kwargs)
    entry = recompile(cache, fn, args, kwargs, f_locals, backend, fullgraph, owner, dynamic)
    if entry is not None:
        return run_transformed(fn, entry.code, args, kwargs)
    if cache.native_code is not None:  # the frame runs eagerly, its callees compiled
        return run_transformed(fn, cache.native_code, args, kwargs)
    return fn(*args, **kwargs)


def recompile(cache: FrameCache, fn: types.FunctionType, args: tuple, kwargs: dict[str, Any],
              f_locals: dict[str, Any], backend: Backend, fullgraph: bool,
              owner: weakref.ref | None, dynamic: bool | None = None) -> CacheEntry | None:
    """A cache miss: trace the frame again and add the entry (None: run it eagerly)."""
    entries = cache.entries_for(backend, fullgraph, fn.__globals__, dynamic)
    if entries:
        reasons = [(e.compile_id, e.check.failure_reason(f_locals, fn.__globals__)) for e in entries]
        log_recompile(cache, reasons)
        if len(entries) >= config.recompile_limit:
            return recompile_limit_hit(cache, fn, reasons[0], fullgraph)
    try:
        arguments = spelled_as_in_code(fn.__code__, frame_locals(fn, args, kwargs))
        new_code, output = transform_code(fn, arguments, backend, fullgraph,
                                          dynamic=dynamic, owner=owner)
    except Unsupported as error:  # no partial graph possible (or fullgraph=True)
        if fullgraph:
            report_graph_break(fn, error, "raising it (fullgraph=True)")
            raise
        report_graph_break(fn, without_frames(error), "running it eagerly", level=logging.WARNING)
        counters["frames_run_eagerly"] += 1
        cache.skip = True  # as TorchDynamo skips a frame it could not convert, but
        cache.native_code = natively_with_callees_compiled(fn, backend, fullgraph, dynamic,
                                                           owner)
        return None
    except BackendCompilerFailed as error:  # the graph was fine, its compiler was not
        if not config.suppress_errors:
            raise
        log.warning(
            "minidynamo: backend %r failed on %s, running it eagerly (config.suppress_errors): %r",
            error.backend_name, fn.__qualname__, error.inner_exception,
        )
        counters["backend_failures"] += 1
        cache.skip = True
        return None
    except Exception as error:  # a bug in minidynamo, not in the user's code
        return internal_error(fn, error)
    try:
        return add_entry(cache, fn, new_code, output, backend, fullgraph, owner, dynamic)
    except ConstraintViolationError:  # a dimension marked dynamic was specialized: the
        raise                          # user's mark is wrong, as torch.compile says
    except Exception as error:  # the guards (torch's ShapeEnv on a NaN), the check function
        return internal_error(fn, error)
    finally:
        output.cleanup()  # the trace's cycles, broken: its inputs are freed with the caller's


def internal_error(fn: types.FunctionType, error: Exception) -> None:
    """A bug in minidynamo, not in the user's code: raised in strict mode, else the frame
    runs eagerly this time (not skipped: a bug of ours is not hidden later)."""
    if config.strict:
        raise InternalError(f"minidynamo failed on {fn.__qualname__}: {error!r}") from error
    log.warning("minidynamo: internal error in %s, running it eagerly: %r", fn.__qualname__, error)
    counters["internal_errors"] += 1


def add_entry(cache: FrameCache, fn: types.FunctionType, new_code: types.CodeType,
              output: OutputGraph, backend: Backend, fullgraph: bool,
              owner: weakref.ref | None, dynamic: bool | None) -> CacheEntry | None:
    """The traced frame as a cache entry (None: it has no tensor operation, and is skipped)."""
    no_ops = output.compiled_graph is None and output.break_reason is None and not fullgraph
    if no_ops and not cache.entries:
        # No tensor operation at all: as TorchDynamo ("No ops traced for the FX graph"),
        # skip the frame, now and on every later call; it runs eagerly. Not a recompile:
        # inputs like the ones other entries hold for still use them (an `if n < 2:
        # return x` taken once), and these get an entry of their own, with no graph.
        report_compiled_frame(fn, output)
        counters["frames_skipped_no_ops"] += 1
        cache.skip = True
        return None
    entry = CacheEntry(check_function(fn, output), new_code, id(backend), fullgraph, cache.next_compile_id(),
                       fn.__globals__, list(output.installed_globals), dynamic=dynamic)
    entry.release_globals_with(fn.__globals__)
    cache.add(entry, backend, owner)
    log_guards(entry)
    report_compiled_frame(fn, output)
    for listener in code_listeners:
        listener(new_code)
    for listener in guard_listeners:
        listener(entry)
    return entry


def check_function(fn: types.FunctionType, output: OutputGraph) -> CheckFunction:
    """The entry's check function; if building it fails (a KeyboardInterrupt too),
    nothing this compile installed in the frame's globals stays there."""
    try:
        return CheckFunction(constant_tuples(pinned_forms(list(output.finish_guards()),
                                                          fn.__globals__)))
    except BaseException:
        for name in output.installed_globals:
            fn.__globals__.pop(name, None)
        raise


def natively_with_callees_compiled(fn: types.FunctionType, backend: Backend, fullgraph: bool,
                                   dynamic: bool | None = None,
                                   owner: weakref.ref | None = None) -> types.CodeType | None:
    """A frame that runs eagerly still has its callees compiled, as PEP 523 gives TorchDynamo
    every frame: its own bytecode with each call routed through `compile_frame`.

    A generator called from a compiled frame (a generator expression) is never traced,
    but what it calls is compiled: it runs inside the compiled call, where torch.compile
    sees every frame. The generator function compiled itself (`owner` is it) is not
    routed: its body runs when it is iterated, after the compiled call has returned,
    where torch.compile no longer looks (its callees run eagerly)."""
    code = fn.__code__
    if code.co_flags & (inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR):
        return None
    if code.co_flags & inspect.CO_GENERATOR and owner is not None and owner() is fn:
        return None
    native_code, installed = routed_code(fn, backend, fullgraph, dynamic)
    cache_of(code).keep_globals(fn.__globals__, installed)
    return native_code


def routed_code(fn: types.FunctionType, backend: Backend, fullgraph: bool,
                dynamic: bool | None = None, owner: weakref.ref | None = None,
                ) -> tuple[types.CodeType, list[str]]:
    """`fn`'s own bytecode with each call routed through `compile_frame` (for `owner`),
    and the names of the globals it installed in `fn`'s module to do so."""
    output = OutputGraph(fn.__globals__, backend, frame_name=fn.__qualname__)
    output.frame_compiler = functools.partial(compile_frame, backend=backend,
                                              fullgraph=fullgraph, dynamic=dynamic, owner=owner)
    native_code = with_calls_routed(fn.__code__, output, nested=is_skipped_frame(fn))
    install_modules(native_code, fn.__globals__)
    return native_code, list(output.installed_globals)


def with_calls_routed(code: types.CodeType, output: OutputGraph, *,
                      nested: bool = False) -> types.CodeType:
    """`code` with its calls routed (`route_calls`). With `nested`, those of the
    functions it defines too: torch's own code is never compiled as a frame, so a
    function it defines runs natively as its maker does (`_call_impl` calls the hooks
    from an `inner()` it defines), and its calls must be routed as well. A user
    function defined in the frame is compiled as its own frame when called: its code
    stays as written."""
    original = scan(code)
    start = next(index for index, inst in enumerate(original) if inst.opname == "RESUME") + 1
    body = route_calls(output, original[start:])
    for inst in body if nested else ():
        inner = inst.argval
        if inst.opname == "LOAD_CONST" and isinstance(inner, types.CodeType) and not (
                inner.co_flags & (inspect.CO_GENERATOR | inspect.CO_COROUTINE
                                  | inspect.CO_ASYNC_GENERATOR)):
            inst.argval, inst.arg = with_calls_routed(inner, output, nested=True), None
    return assemble([*original[:start], *body], code)


def recompile_limit_hit(cache: FrameCache, fn: types.FunctionType,
                        last: tuple[str, str | None], fullgraph: bool) -> None:
    """`config.recompile_limit` entries already: run eagerly (warned once), or raise
    (`config.fail_on_recompile_limit_hit`, or `fullgraph=True`: running eagerly would
    not be one graph)."""
    message = (f"minidynamo hit config.recompile_limit ({config.recompile_limit})\n"
               f"   function: {fn.__qualname__!r} ({cache.location})\n"
               f"   last reason: {last[0]}: {last[1]}\n"
               f'To log all recompilation reasons, use MINIDYNAMO_LOGS="recompiles".')
    if config.fail_on_recompile_limit_hit or fullgraph:
        raise FailOnRecompileLimitHit(message)
    if not cache.limit_warned:
        cache.limit_warned = True
        log.warning("%s", message)
    counters["recompile_limit_hits"] += 1
    return None


MAX_FAILURES_KEPT = 256  # recompile reasons a frame's cache remembers (`FrameCache.failures`)


def log_recompile(cache: FrameCache, reasons: list[tuple[str, str | None]]) -> None:
    """`MINIDYNAMO_LOGS=recompiles`: the failing guard of every entry, newest first.

    `recompiles_verbose` prints the same reasons in TorchDynamo's verbose layout, one block
    per entry (`guard 0 failures:`), instead of the short one (as torch, not both)."""
    counters["recompiles"] += 1
    cache.failures += [f"{compile_id}: {reason}" for compile_id, reason in reasons]
    del cache.failures[:-MAX_FAILURES_KEPT]  # the newest: a frame past its limit misses on and on
    header = [f"Recompiling function {cache.name} in {cache.location}",
              "    triggered by the following guard failure(s):"]
    if recompiles_verbose_log.isEnabledFor(logging.DEBUG):
        blocks = [f"    guard {index} failures:\n    - {compile_id}: {reason}"
                  for index, (compile_id, reason) in enumerate(reasons)]
        recompiles_verbose_log.debug("%s", "\n".join(header + ["\n\n".join(blocks)]))
    else:
        lines = [f"    - {compile_id}: {reason}" for compile_id, reason in reasons]
        recompiles_log.debug("%s", "\n".join(header + lines))


def log_guards(entry: CacheEntry) -> None:
    """`MINIDYNAMO_LOGS=guards`: the new entry's guards, one per line."""
    if guards_log.isEnabledFor(logging.DEBUG):
        lines = [f"GUARDS ({entry.compile_id}):"]
        lines += [f"| +- {guard.kind}: {guard.describe()}" for guard in entry.check.guards]
        guards_log.debug("%s", "\n".join(lines))


def report_graph_break(
    fn: types.FunctionType, error: Unsupported, outcome: str, *, level: int = logging.INFO
) -> None:
    """Count a break, tell the listeners, and log it with what happens to the frame:
    "running it eagerly", "compiling a partial graph" (chapter 7), "raising it"."""
    counters["graph_breaks"] += 1
    for listener in break_listeners:
        listener(error)
    # the text, not the error: a handler that keeps records would keep its traceback
    log.log(level, "minidynamo: graph break in %s, %s.\n%s", fn.__qualname__, outcome, str(error))
    graph_breaks_log.debug("%s", str(error))


def report_compiled_frame(fn: types.FunctionType, output: OutputGraph) -> None:
    counters["frames"] += 1
    if output.compiled_graph is not None:
        counters["graphs"] += 1
        for listener in graph_listeners:
            listener(output.compiled_graph)
    if output.break_reason is not None:  # the frame survived the break (chapter 7)
        compiled = output.break_reason.compiled_graph  # False: no tensor op before the break
        outcome = "compiling a partial graph" if compiled else "no graph before it"
        then = ("running the rest of the frame natively"
                if output.break_reason.kind is BREAK_AT_A_STATEMENT_BOUNDARY else "resuming after it")
        report_graph_break(fn, output.break_reason, f"{outcome}, then {then}")
    if config.verbose:
        graphs = "one graph" if output.compiled_graph is not None else "no graph"
        print(f"minidynamo: compiled {fn.__qualname__} ({graphs})", file=sys.stderr)


def run_transformed(
    fn: types.FunctionType, new_code: types.CodeType, args: tuple, kwargs: dict[str, Any]
) -> Any:
    """Run the transformed code as `fn` would run: same globals, defaults and closure."""
    return function_with_code(fn, new_code)(*args, **kwargs)


def function_with_code(fn: types.FunctionType, code: types.CodeType) -> types.FunctionType:
    """A function that runs `code` in `fn`'s place: `fn`'s globals, name, defaults,
    keyword-only defaults and closure cells (the cells themselves, not copies).

    `code` must have `fn`'s parameters and free variables, as a transformed code
    object does; calling the result then binds the arguments as a call of `fn` would.
    """
    function = types.FunctionType(
        code, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__
    )
    function.__kwdefaults__ = fn.__kwdefaults__
    return function
