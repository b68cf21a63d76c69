"""Bad and unusual input to the public API (issue 14): what `minidynamo.compile` accepts,
what it rejects and how, each compared with `torch.compile` in the same run.

For each kind of input: does `torch.compile(obj)` raise or return; what does calling the
result give (eager PyTorch is the reference for values and exceptions); how many graphs
does torch compile (a counting backend). A behaviour where minidynamo is wrong is
written as it should be and marked `xfail(strict=True)`.
"""

from __future__ import annotations

import asyncio
import builtins
import functools
import math
import re
import subprocess
import sys
import types

import pytest
import torch
import torch._dynamo

import minidynamo
from minidynamo.testing import assert_same_value
from reliability_helpers import counting_backend, outcome


@pytest.fixture(autouse=True)
def fresh_compilers():
    minidynamo.reset()
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def compiled_both(obj, *args, **kwargs):
    """Compile `obj` with torch and with minidynamo (counting backends), call each once
    with `args`: (eager outcome, torch outcome, our outcome, torch graphs, our graphs)."""
    torch_graphs, torch_backend = counting_backend()
    graphs, backend = counting_backend()
    eager = outcome(lambda: obj(*args, **kwargs))
    theirs = outcome(lambda: torch.compile(obj, backend=torch_backend)(*args, **kwargs))
    ours = outcome(lambda: minidynamo.compile(obj, backend=backend)(*args, **kwargs))
    return eager, theirs, ours, len(torch_graphs), len(graphs)


## Things that are not functions #######################################################


@pytest.mark.parametrize("value", [5, "abc"], ids=["int", "str"])
def test_a_non_callable_is_rejected_when_compiled_as_by_torch(value):
    """torch.compile raises at once (an AssertionError, "A callable function is
    expected"); minidynamo raises at once too, a TypeError naming what it was given."""
    with pytest.raises(Exception) as theirs:
        torch.compile(value, backend="eager")
    assert "callable" in str(theirs.value)
    with pytest.raises(TypeError) as ours:
        minidynamo.compile(value, backend="eager")
    assert repr(value) in str(ours.value)


def scaled_sine(x):
    return x.sin() * 2 + 1


@pytest.mark.parametrize("form", ["keywords_only", "None"])
def test_compile_without_a_function_returns_a_decorator_as_torch(form):
    def decorator(compile_it, backend):
        if form == "keywords_only":
            return compile_it(backend=backend)
        return compile_it(None, backend=backend)

    x = torch.randn(3)
    torch_graphs, torch_backend = counting_backend()
    theirs = decorator(torch.compile, torch_backend)(scaled_sine)
    assert_same_value(scaled_sine(x), theirs(x))
    graphs, backend = counting_backend()
    ours = decorator(minidynamo.compile, backend)(scaled_sine)
    assert_same_value(scaled_sine(x), ours(x))
    assert len(graphs) == len(torch_graphs) == 1


BUILTINS = {
    "len": (len, lambda: ([1, 2, 3],)),
    "torch.add": (torch.add, lambda: (torch.randn(3), torch.randn(3))),
    "math.sin": (math.sin, lambda: (0.5,)),
}


@pytest.mark.parametrize("name", sorted(BUILTINS))
def test_a_builtin_compiles_and_runs_as_in_torch(name):
    fn, make_args = BUILTINS[name]
    args = make_args()
    eager, theirs, ours, torch_count, our_count = compiled_both(fn, *args)
    assert theirs[0] == "value"
    assert_same_value(eager, theirs)
    assert_same_value(eager, ours)
    assert our_count == torch_count


def fresh_class(kind):
    """A class made for one test: torch.compile(cls) sets `__call__` and `_call_impl` on the
    class itself (for good: torch._dynamo.reset() does not undo it), so torch's own
    classes (nn.Linear) must not be given to it."""
    if kind == "module_class":
        class FreshLinear(torch.nn.Linear):
            pass
        return FreshLinear, (3, 2)

    class Accumulator:
        def __init__(self, start=0):
            self.total = start
    return Accumulator, (5,)


@pytest.mark.parametrize("kind", ["module_class", "user_class"])
def test_a_class_is_returned_as_it_is_as_by_torch(kind):
    cls, args = fresh_class(kind)
    torch_graphs, torch_backend = counting_backend()
    theirs = torch.compile(cls, backend=torch_backend)
    assert theirs is cls
    cls, args = fresh_class(kind)
    graphs, backend = counting_backend()
    ours = minidynamo.compile(cls, backend=backend)
    torch.manual_seed(0)
    expected = cls(*args)
    torch.manual_seed(0)
    assert_same_value(expected, ours(*args))
    assert len(graphs) == len(torch_graphs)


## Functions of every kind #############################################################


def helper(x):
    return x.sin() * 2 + 1


def yields_twice(x):
    yield helper(x)
    yield helper(x + 1)


async def awaits_nothing(x):
    return helper(x)


def test_a_generator_function_yields_as_in_eager_and_compiles_as_torch():
    x = torch.randn(3)
    torch_graphs, torch_backend = counting_backend()
    theirs = list(torch.compile(yields_twice, backend=torch_backend)(x))
    graphs, backend = counting_backend()
    ours_generator = minidynamo.compile(yields_twice, backend=backend)(x)
    assert isinstance(ours_generator, types.GeneratorType)
    ours = list(ours_generator)
    assert_same_value(list(yields_twice(x)), ours)
    assert_same_value(theirs, ours)
    assert len(graphs) == len(torch_graphs)


def test_a_coroutine_function_returns_a_coroutine_with_eagers_result():
    x = torch.randn(3)
    coroutine = minidynamo.compile(awaits_nothing, backend="eager")(x)
    assert asyncio.iscoroutine(coroutine)
    assert_same_value(asyncio.run(awaits_nothing(x)), asyncio.run(coroutine))


async def awaits_a_helper(x):
    doubled = await awaits_nothing(x)
    return doubled + 1


# torch.compile of a coroutine function segfaults the process at a later torch.compile
# (torch 2.13), so torch's graph count for each is measured in a process of its own:
# one that never awaits is traced (its body is the frame), one that awaits is skipped.
TORCH_COROUTINE_GRAPHS = """
import asyncio, sys, torch
graphs = []
async def awaits_nothing(x):
    return x.sin() * 2 + 1
async def awaits_a_helper(x):
    doubled = await awaits_nothing(x)
    return doubled + 1
backend = lambda gm, example_inputs: graphs.append(gm) or gm.forward
asyncio.run(torch.compile(globals()[sys.argv[1]], backend=backend)(torch.ones(3)))
print(len(graphs))
"""


def torch_coroutine_graph_count(name):
    done = subprocess.run([sys.executable, "-c", TORCH_COROUTINE_GRAPHS, name],
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    return int(done.stdout.split()[-1])


@pytest.fixture(scope="module")
def torch_coroutine_graph_counts():
    return [torch_coroutine_graph_count(name) for name in ("awaits_nothing", "awaits_a_helper")]


def test_a_coroutine_function_compiles_as_torch(torch_coroutine_graph_counts):
    graphs, backend = counting_backend()
    x = torch.randn(3)
    compiled = minidynamo.compile(awaits_nothing, backend=backend)
    coroutine = compiled(x)
    assert graphs == []  # nothing runs before the coroutine is awaited, as in eager
    assert_same_value(asyncio.run(awaits_nothing(x)), asyncio.run(coroutine))
    assert len(graphs) == torch_coroutine_graph_counts[0] == 1
    assert_same_value(asyncio.run(awaits_nothing(x + 1)), asyncio.run(compiled(x + 1)))
    assert len(graphs) == 1  # the second call is a cache hit


def test_a_coroutine_that_awaits_runs_eagerly_as_torch(torch_coroutine_graph_counts):
    graphs, backend = counting_backend()
    x = torch.randn(3)
    compiled = minidynamo.compile(awaits_a_helper, backend=backend)
    assert_same_value(asyncio.run(awaits_a_helper(x)), asyncio.run(compiled(x)))
    assert len(graphs) == torch_coroutine_graph_counts[1] == 0


async def raises_after_a_side_effect(x, log):
    log.append(x.sum().item())
    raise ValueError(f"bad input {len(log)}")


def test_a_coroutine_raises_as_in_eager_with_its_side_effect_once():
    x = torch.ones(3)
    expected_log, log = [], []
    with pytest.raises(ValueError, match="bad input 1") as expected:
        asyncio.run(raises_after_a_side_effect(x, expected_log))
    with pytest.raises(ValueError, match="bad input 1") as raised:
        asyncio.run(minidynamo.compile(raises_after_a_side_effect)(x, log))
    assert log == expected_log == [3.0]
    assert str(raised.value) == str(expected.value)


def multiply(x, y, *, scale):
    return (x * y).cos() * scale


def test_a_functools_partial_compiles_as_torch():
    x, y = torch.randn(3), torch.randn(3)
    partial = functools.partial(multiply, y=y, scale=2)
    eager, theirs, ours, torch_count, our_count = compiled_both(partial, x)
    assert_same_value(eager, theirs)
    assert_same_value(eager, ours)
    assert our_count == torch_count == 1


class Scaler:
    def __init__(self, factor):
        self.factor = factor

    def scale(self, x):
        return x.sin() * self.factor

    @classmethod
    def triple(cls, x):
        return x.sin() * 3

    @staticmethod
    def quadruple(x):
        return x.sin() * 4


def method_kinds():
    return {
        "bound_method": lambda: Scaler(2).scale,
        "class_method": lambda: Scaler.triple,
        "static_method": lambda: Scaler.quadruple,
        "class_method_from_instance": lambda: Scaler(5).triple,
        "lambda": lambda: (lambda x: x.cos() + 1),
        "nested_closure": lambda: (lambda factor: (lambda x: x * factor + 1))(torch.randn(3)),
    }


@pytest.mark.parametrize("kind", sorted(method_kinds()))
def test_methods_and_lambdas_compile_as_torch(kind):
    fn = method_kinds()[kind]()
    x = torch.randn(3)
    eager, theirs, ours, torch_count, our_count = compiled_both(fn, x)
    assert eager[0] == "value"
    assert_same_value(eager, theirs)
    assert_same_value(eager, ours)
    assert our_count == torch_count == 1


def test_a_bound_method_sees_its_objects_new_state_as_torch():
    runs = {}
    for name, compile_it in (("torch", torch.compile), ("minidynamo", minidynamo.compile)):
        torch._dynamo.reset()
        minidynamo.reset()
        graphs, backend = counting_backend()
        scaler = Scaler(2)
        compiled = compile_it(scaler.scale, backend=backend)
        x = torch.randn(3)
        first = compiled(x)
        scaler.factor = 7
        second = compiled(x)
        assert_same_value([Scaler(2).scale(x), Scaler(7).scale(x)], [first, second])
        runs[name] = len(graphs)
    assert runs["minidynamo"] == runs["torch"]


## Modules with hooks ##################################################################


class TwoLayers(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.first = torch.nn.Linear(3, 4)
        self.second = torch.nn.Linear(4, 2)

    def forward(self, x):
        return self.second(self.first(x).relu())


MODULES = {"nn.Linear": lambda: torch.nn.Linear(3, 2), "user_module": TwoLayers}


def hooked(make, log):
    torch.manual_seed(0)
    module = make()
    module.register_forward_pre_hook(lambda mod, args: log.append("pre") or (args[0] * 2,))
    module.register_forward_hook(lambda mod, args, output: log.append("post") or output + 1)
    return module


@pytest.mark.parametrize("name", sorted(MODULES))
def test_a_module_with_forward_hooks_equals_eager_and_runs_each_hook_once(name):
    x = torch.randn(2, 3)
    results = {}
    for compiler, compile_it in (("eager", None), ("torch", torch.compile),
                                 ("minidynamo", minidynamo.compile)):
        log: list[str] = []
        module = hooked(MODULES[name], log)
        compiled = module if compile_it is None else compile_it(module, backend="eager")
        outputs = [compiled(x), compiled(x)]
        results[compiler] = (outputs, list(log))
    assert results["eager"][1] == ["pre", "post", "pre", "post"]
    assert_same_value(results["eager"], results["torch"])
    assert_same_value(results["eager"], results["minidynamo"])


@pytest.mark.parametrize("name", sorted(MODULES))
def test_a_hook_added_or_removed_after_compiling_runs_as_in_eager(name):
    """Eager is the reference: torch.compile 2.13 ignores a hook registered on an
    nn.Linear after its first compiled call (it returns the hook-less output)."""
    x = torch.randn(2, 3)
    results, first_graphs = {}, {}
    for compiler, compile_it in (("eager", None), ("torch", torch.compile),
                                 ("minidynamo", minidynamo.compile)):
        torch.manual_seed(0)
        module = MODULES[name]()
        graphs, backend = counting_backend()
        compiled = module if compile_it is None else compile_it(module, backend=backend)
        log: list[str] = []
        outputs = [compiled(x)]
        first_graphs[compiler] = len(graphs)
        handle = module.register_forward_hook(lambda mod, args, out: log.append("post") or out * 3)
        outputs.append(compiled(x))
        handle.remove()
        outputs.append(compiled(x))
        results[compiler] = (outputs, list(log))
    assert results["eager"][1] == ["post"]
    assert_same_value(results["eager"], results["minidynamo"])
    assert first_graphs["minidynamo"] == first_graphs["torch"] == 1  # compiled before the hook


@pytest.mark.parametrize("name", [
    "nn.Linear",
    "user_module",  # its call runs natively; each hook and the forward: a frame (3 graphs)
])
def test_a_module_with_forward_hooks_compiles_as_torch(name):
    x = torch.randn(2, 3)
    torch_graphs, torch_backend = counting_backend()
    torch.compile(hooked(MODULES[name], []), backend=torch_backend)(x)
    graphs, backend = counting_backend()
    minidynamo.compile(hooked(MODULES[name], []), backend=backend)(x)
    assert len(torch_graphs) >= 1
    assert len(graphs) == len(torch_graphs)


## Options #############################################################################


def test_an_unknown_backend_name_is_rejected_when_compiled_as_by_torch():
    with pytest.raises(torch._dynamo.exc.InvalidBackend) as theirs:
        torch.compile(scaled_sine, backend="no_such_backend")
    with pytest.raises(minidynamo.InvalidBackend) as ours:
        minidynamo.compile(scaled_sine, backend="no_such_backend")
    assert isinstance(theirs.value, RuntimeError) and isinstance(ours.value, RuntimeError)
    assert "'no_such_backend'" in str(theirs.value) and "'no_such_backend'" in str(ours.value)
    assert "eager" in str(ours.value)  # and it names the known ones


def two_arguments(x, y):
    return x + y


def keyword_only(x, *, scale):
    return x * scale


class AddsTwo(torch.nn.Module):
    def forward(self, x, y):
        return x + y


X = torch.ones(2, 3)
WRONG_CALLS = {  # a callable, and a call with the wrong arguments
    "too_few": (lambda: two_arguments, (X,), {}),
    "too_many": (lambda: two_arguments, (X, X, X), {}),
    "unknown_keyword": (lambda: two_arguments, (X,), {"z": X}),
    "argument_twice": (lambda: two_arguments, (X,), {"x": X}),
    "missing_keyword_only": (lambda: keyword_only, (X,), {}),
    "keyword_only_given_positionally": (lambda: keyword_only, (X, 2), {}),
    "linear_too_many": (lambda: torch.nn.Linear(3, 2), (X, X), {}),
    "linear_none": (lambda: torch.nn.Linear(3, 2), (), {}),
    "user_module_too_few": (AddsTwo, (X,), {}),
}


@pytest.mark.parametrize("name", sorted(WRONG_CALLS))
def test_wrong_arguments_raise_eagers_type_error(name):
    make, args, kwargs = WRONG_CALLS[name]
    eager = outcome(lambda: make()(*args, **kwargs))
    theirs = outcome(lambda: torch.compile(make(), backend="eager")(*args, **kwargs))
    ours = outcome(lambda: minidynamo.compile(make(), backend="eager")(*args, **kwargs))
    assert eager[:2] == ("raise", TypeError)
    assert theirs == eager
    assert ours == eager  # the same message, word for word


def test_after_a_wrong_call_a_good_call_compiles_as_torch():
    counts = {}
    for name, compile_it in (("torch", torch.compile), ("minidynamo", minidynamo.compile)):
        graphs, backend = counting_backend()
        compiled = compile_it(two_arguments, backend=backend)
        with pytest.raises(TypeError):
            compiled(X)
        assert graphs == []
        assert_same_value(two_arguments(X, X), compiled(X, X))
        counts[name] = len(graphs)
    assert counts["minidynamo"] == counts["torch"] == 1


def branches_on_data(x):
    y = x * 2
    if y.sum() > 0:
        return y + 1
    return y - 1


def prints_while_tracing(x):
    y = x * 2
    print("tracing")
    return y + 1


BREAKS = {"branch": branches_on_data, "print": prints_while_tracing}


def torch_fullgraph_error(fn, x):
    with pytest.raises(torch._dynamo.exc.Unsupported) as theirs:
        torch.compile(fn, backend="eager", fullgraph=True)(x)
    return theirs.value


@pytest.mark.parametrize("name", sorted(BREAKS))
def test_fullgraph_raises_unsupported_naming_the_break_the_line_and_a_hint(name):
    fn = BREAKS[name]
    x = torch.ones(3)
    theirs = torch_fullgraph_error(fn, x)
    (torch_file, torch_line), *_ = re.findall(r'File "([^"]+)", line (\d+), in ' + fn.__name__,
                                              str(theirs))
    with pytest.raises(minidynamo.Unsupported) as ours:
        minidynamo.compile(fn, backend="eager", fullgraph=True)(x)
    error = ours.value
    assert (error.filename, error.lineno) == (torch_file, int(torch_line))
    message = str(error)
    source_line = open(torch_file).read().splitlines()[int(torch_line) - 1].strip()
    assert f"{torch_file}:{torch_line} in {fn.__name__}: {source_line}" in message
    assert "Graph break MD" in message and "Hint:" in message
    assert minidynamo.explain(fn)(x).graph_break_count == 1  # without fullgraph: one break


def test_fullgraphs_unsupported_is_a_runtime_error_as_torchs():
    x = torch.ones(3)
    assert isinstance(torch_fullgraph_error(branches_on_data, x), RuntimeError)
    with pytest.raises(RuntimeError):
        minidynamo.compile(branches_on_data, backend="eager", fullgraph=True)(x)


@pytest.mark.parametrize("name", ["branch", "print"])
def test_the_torch_graph_break_named_in_the_message_is_torchs(name):
    fn = BREAKS[name]
    x = torch.ones(3)
    torch_ids = set(re.findall(r"/gb/(gb\d+)\.html", str(torch_fullgraph_error(fn, x))))
    with pytest.raises(minidynamo.Unsupported) as ours:
        minidynamo.compile(fn, backend="eager", fullgraph=True)(x)
    assert {ours.value.kind.torch_id.lower()} == torch_ids


def keywords(x, *, scale=2, **extra):
    return x * scale + sum(extra.values())


KEYWORD_CALLS = [((X,), {"scale": 3, "a": 1, "b": 2}), ((X,), {}),
                 ((X,), {"scale": 3, "a": 1, "b": 2}), ((), {"x": X}),
                 ((X,), {"b": 2, "a": 1, "scale": 3}), ((X,), {"scale": 4.5})]


def test_keyword_arguments_equal_eager_with_torchs_graphs():
    eager = [keywords(*args, **kwargs) for args, kwargs in KEYWORD_CALLS]
    counts = {}
    for name, compile_it in (("torch", torch.compile), ("minidynamo", minidynamo.compile)):
        graphs, backend = counting_backend()
        compiled = compile_it(keywords, backend=backend)
        results = []
        for args, kwargs in KEYWORD_CALLS:
            results.append(compiled(*args, **kwargs))
        assert_same_value(eager, results)
        counts[name] = len(graphs)
    assert counts["minidynamo"] == counts["torch"]


## Functions with globals and attributes of their own ##################################


OWN_SOURCE = """
def body(x):
    n = len([1, 2, 3])
    return x * n + SCALE + abs(-2)
"""


def function_with_own_globals(builtin_names: dict) -> types.FunctionType:
    code = compile(OWN_SOURCE, "<own globals>", "exec").co_consts[0]
    return types.FunctionType(code, {"__builtins__": dict(builtin_names), "SCALE": 10}, "body")


def sequence_on_own_globals(compiled, fn):
    """Call, change a global, call, change a builtin of the function's own, call."""
    x = torch.ones(2, 3)
    results = [compiled(x)]
    fn.__globals__["SCALE"] = 100
    results.append(compiled(x))
    fn.__globals__["__builtins__"]["len"] = lambda items: 1
    results.append(compiled(x))
    return results


@pytest.mark.parametrize("custom_len", [True, False], ids=["custom_len", "real_len"])
def test_a_function_with_its_own_globals_and_builtins_equals_eager(custom_len):
    names = {"len": (lambda items: 7) if custom_len else builtins.len, "abs": builtins.abs}
    fn = function_with_own_globals(names)
    eager = sequence_on_own_globals(fn, fn)
    counts = {}
    for name, compile_it in (("torch", torch.compile), ("minidynamo", minidynamo.compile)):
        fn = function_with_own_globals(names)
        graphs, backend = counting_backend()
        assert_same_value(eager, sequence_on_own_globals(compile_it(fn, backend=backend), fn))
        counts[name] = len(graphs)
    assert counts["minidynamo"] == counts["torch"] == 3  # each change is a recompile


def test_a_missing_builtin_raises_eagers_name_error():
    def make():
        code = compile(OWN_SOURCE, "<own globals>", "exec").co_consts[0]
        return types.FunctionType(code, {"__builtins__": {}, "SCALE": 1}, "body")
    x = torch.ones(3)
    eager = outcome(lambda: make()(x))
    assert eager == ("raise", NameError, "name 'len' is not defined")
    assert outcome(lambda: torch.compile(make(), backend="eager")(x)) == eager
    assert outcome(lambda: minidynamo.compile(make(), backend="eager")(x)) == eager


def reads_its_attribute(x):
    return x * reads_its_attribute.scale


def counts_its_calls(x):
    counts_its_calls.calls += 1
    return x + counts_its_calls.calls


def counts_its_calls_from_nothing(x):
    counts_its_calls_from_nothing.calls = getattr(counts_its_calls_from_nothing, "calls", 0) + 1
    return x + counts_its_calls_from_nothing.calls


def test_an_attribute_of_the_function_set_outside_is_read_afresh():
    x = torch.ones(3)
    eager, counts = [], {}
    reads_its_attribute.scale = 3
    eager.append(reads_its_attribute(x))
    reads_its_attribute.scale = 5
    eager.append(reads_its_attribute(x))
    for name, compile_it in (("torch", torch.compile), ("minidynamo", minidynamo.compile)):
        graphs, backend = counting_backend()
        compiled = compile_it(reads_its_attribute, backend=backend)
        reads_its_attribute.scale = 3
        first = compiled(x)
        reads_its_attribute.scale = 5
        assert_same_value(eager, [first, compiled(x)])
        counts[name] = len(graphs)
    assert counts["minidynamo"] == counts["torch"] == 2


def attribute_runs(fn, compiled, reset):
    reset()
    results = [compiled(torch.zeros(2)) for _ in range(3)]
    return results, fn.calls


def test_an_attribute_of_the_function_updated_inside_equals_eager():
    def reset():
        counts_its_calls.calls = 0
    eager = attribute_runs(counts_its_calls, counts_its_calls, reset)
    assert eager[1] == 3
    theirs = torch.compile(counts_its_calls, backend="eager")
    assert_same_value(eager, attribute_runs(counts_its_calls, theirs, reset))
    graphs, backend = counting_backend()
    ours = minidynamo.compile(counts_its_calls, backend=backend)
    assert_same_value(eager, attribute_runs(counts_its_calls, ours, reset))
    assert len(graphs) >= 1


def test_an_attribute_of_the_function_created_inside_equals_eager():
    def reset():
        vars(counts_its_calls_from_nothing).pop("calls", None)
    fn = counts_its_calls_from_nothing
    eager = attribute_runs(fn, fn, reset)
    assert eager[1] == 3
    graphs, backend = counting_backend()
    ours = attribute_runs(fn, minidynamo.compile(fn, backend=backend), reset)
    assert_same_value(eager, ours)
    assert len(graphs) >= 1


def documented(x):
    """Doubles."""
    return x * 2


def test_attributes_of_the_compiled_function_are_torchs():
    vars(documented).clear()
    documented.before = "set before compiling"
    wrappers = {"torch": torch.compile(documented, backend="eager"),
                "minidynamo": minidynamo.compile(documented, backend="eager")}
    documented.after = "set after compiling"
    seen = {}
    for name, wrapper in wrappers.items():
        wrapper.on_wrapper = name
        seen[name] = (wrapper.__name__, wrapper.__qualname__, wrapper.__doc__,
                      wrapper.__wrapped__ is documented, getattr(wrapper, "before", None),
                      getattr(wrapper, "after", None), wrapper.on_wrapper == name)
    assert seen["minidynamo"] == seen["torch"]
    assert not hasattr(documented, "on_wrapper")
    assert_same_value(documented(X), wrappers["minidynamo"](X))
