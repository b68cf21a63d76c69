"""Memory: what a dropped compiled function, module or reset gives back (issue 14, chapter 9).

Each test holds weak references to what compiling made (the cache entry, its check
function and transformed code, the GraphModule, its FakeTensorMode and ShapeEnv, the
globals installed in the function's module), checks that they are alive, drops what
the user holds, collects, and checks that they are dead. torch.compile is held to the
same checks where it releases by the same rule (a dropped code object takes its
entries with it); it keeps its entries on a code object that lives on (a closure's
code, a module class's `forward`), so those cases are minidynamo's alone.

Where minidynamo holds on, the test is written as it should pass and marked
`xfail(strict=True)`; the reason names what holds the object (found with
`gc.get_referrers`). `benchmarks/bench_memory.py` measures the same at scale.
"""

from __future__ import annotations

import gc
import tracemalloc
import types
import weakref
from typing import Any, Callable, Iterator

import pytest
import torch
import torch._dynamo

import minidynamo
from minidynamo import cache, convert_frame
from minidynamo.resume import resume_cache


def collect() -> None:
    """Collect until nothing more is freed (a finalizer run by one collection, an entry
    removing its globals, may leave garbage for the next)."""
    while gc.collect():
        pass


def live_graph_modules() -> int:
    return sum(issubclass(type(o), torch.fx.GraphModule) for o in gc.get_objects())


def live_entries() -> int:
    return sum(len(frame_cache.entries) for frame_cache in cache.caches.values())


def installed_names() -> set[str]:
    return {name for name in globals() if name.startswith(("__compiled_fn", "__resume_at", "___"))}


@pytest.fixture
def graphs() -> Iterator[list[weakref.ref]]:
    """Weak references to every GraphModule minidynamo compiles during the test."""
    refs: list[weakref.ref] = []

    def listener(gm: torch.fx.GraphModule) -> None:
        refs.append(weakref.ref(gm))

    convert_frame.graph_listeners.append(listener)
    yield refs
    convert_frame.graph_listeners.remove(listener)


@pytest.fixture
def fresh_torch() -> Iterator[None]:
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


torch_graphs: list[weakref.ref] = []


def recording_backend(gm: torch.fx.GraphModule, example_inputs: list) -> Callable:
    """torch.compile's backend here: remember the graph weakly, run it as "eager" does."""
    torch_graphs.append(weakref.ref(gm))
    return gm.forward


def alive(refs: list[weakref.ref]) -> list[Any]:
    return [ref() for ref in refs if ref() is not None]


# -- what is compiled -------------------------------------------------------------


def closure(i: int) -> types.FunctionType:
    def scaled(x):
        return (x * 2 + i).sin()
    return scaled


def fresh_function(namespace: dict[str, Any], i: int = 0) -> types.FunctionType:
    """A function with a code object of its own, in `namespace` (which does not keep it)."""
    source = f"def fresh(x):\n    return (x * 2 + {i}).sin()\n"
    exec(compile(source, f"<fresh {i}>", "exec"), namespace)
    return namespace.pop("fresh")


def breaking_closure(i: int) -> types.FunctionType:
    def halves(x):
        y = x * 2 + i
        torch._dynamo.graph_break()
        return y.cos()
    return halves


class Small(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.first = torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.first(x).relu()


def weak_parts(code: types.CodeType, graphs: list[weakref.ref]) -> dict[str, weakref.ref]:
    """Weak references to what compiling `code` made: its entries' parts and graphs."""
    frame_cache = cache.lookup(code)
    assert frame_cache is not None and frame_cache.entries, "nothing was compiled"
    parts: dict[str, weakref.ref] = {}
    for index, entry in enumerate(frame_cache.entries):
        parts.update({f"entry {index}": weakref.ref(entry),
                      f"check {index}": weakref.ref(entry.check),
                      f"code {index}": weakref.ref(entry.code)})
    for index, graph in enumerate(alive(graphs)):
        fake = next(node.meta["example_value"] for node in graph.graph.nodes
                    if isinstance(node.meta.get("example_value"), torch.Tensor))
        parts.update({f"graph {index}": weakref.ref(graph),
                      f"fake mode {index}": weakref.ref(fake.fake_mode),
                      f"shape env {index}": weakref.ref(fake.fake_mode.shape_env)})
    return parts


def still_alive(parts: dict[str, weakref.ref]) -> list[str]:
    return [name for name, ref in parts.items() if ref() is not None]


# -- a dropped function -----------------------------------------------------------


def test_a_dropped_function_releases_its_entry_graph_and_globals(graphs):
    fn = closure(1)
    compiled = minidynamo.compile(fn, backend="eager")
    compiled(torch.randn(3))
    parts = weak_parts(fn.__code__, graphs)
    names = set(cache.lookup(fn.__code__).entries[0].installed_globals)
    assert names and names <= set(globals()), "the graph is installed in the module's globals"
    assert still_alive(parts) == list(parts)
    code = fn.__code__
    del fn, compiled
    collect()
    assert still_alive(parts) == []
    assert cache.lookup(code).entries == []  # the closure's code lives on, its entries do not
    assert not names & set(globals())


def test_a_dropped_fresh_function_takes_its_frame_cache(graphs):
    namespace: dict[str, Any] = {}
    fn = fresh_function(namespace)
    minidynamo.compile(fn, backend="eager")(torch.randn(3))
    frame_cache = weakref.ref(cache.lookup(fn.__code__))
    code, caches = weakref.ref(fn.__code__), len(cache.caches)
    parts = weak_parts(fn.__code__, graphs)
    assert any(name.startswith("__compiled_fn") for name in namespace)
    del fn
    collect()
    assert (code(), frame_cache(), still_alive(parts)) == (None, None, [])
    assert len(cache.caches) == caches - 1
    assert [name for name in namespace if name.startswith("__compiled_fn")] == []


def test_a_dropped_function_releases_what_it_captured():
    captured = torch.randn(1000)
    default = torch.randn(1000)
    weights, defaults = weakref.ref(captured), weakref.ref(default)

    def make(weight, bias):
        def affine(x, b=bias):
            return x * weight + b
        return affine

    compiled = minidynamo.compile(make(captured, default), backend="eager")
    compiled(torch.randn(1000))
    del captured, default, compiled
    collect()
    assert (weights() is None, defaults() is None) == (True, True)  # (closure, default)


def test_torch_compile_releases_what_a_dropped_function_captured(fresh_torch):
    captured = torch.randn(1000)
    weights = weakref.ref(captured)

    def make(weight):
        def scale(x):
            return x * weight
        return scale

    torch.compile(make(captured), backend="eager")(torch.randn(1000))
    del captured
    collect()
    assert weights() is None


def test_a_dropped_function_frees_its_inputs_without_the_cyclic_collector():
    collect()
    gc.disable()
    try:
        x = torch.randn(1000)
        inputs = weakref.ref(x)
        minidynamo.compile(closure(1), backend="eager")(x)
        del x
        assert inputs() is None, "the input tensor is still alive"
    finally:
        gc.enable()


def test_a_dropped_module_is_freed_without_the_cyclic_collector():
    """The trace held the modules it met (its side effects' known values); its cleanup
    lets go, so a dropped compiled module goes at once, and its entries with it."""
    collect()
    gc.disable()
    try:
        net = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.ReLU())
        alive = weakref.ref(net)
        compiled = minidynamo.compile(net, backend="eager")
        compiled(torch.randn(2, 3))
        del net, compiled
        assert alive() is None, "the module is still alive"
    finally:
        gc.enable()


def test_torch_compile_frees_inputs_without_the_cyclic_collector(fresh_torch):
    collect()
    gc.disable()
    try:
        x = torch.randn(1000)
        inputs = weakref.ref(x)
        torch.compile(closure(1), backend="eager")(x)
        del x
        assert inputs() is None
    finally:
        gc.enable()


# -- a dropped module ---------------------------------------------------------------


@pytest.mark.parametrize("make", [
    Small,
    lambda: torch.nn.Linear(4, 4),
], ids=["user", "torch.nn"])
def test_a_dropped_module_releases_its_entries(graphs, make):
    module = make()
    module_ref = weakref.ref(module)
    compiled = minidynamo.compile(module, backend="eager")
    compiled(torch.randn(2, 4))
    frame_cache = next(c for c in cache.caches.values() if c.entries)
    parts = {"module": module_ref, "entry": weakref.ref(frame_cache.entries[0]),
             "graph": graphs[0]}
    names = set(frame_cache.entries[0].installed_globals)
    assert still_alive(parts) == list(parts)
    del module, compiled
    collect()
    assert still_alive(parts) == []
    assert frame_cache.entries == [] and not names & set(globals())


# -- the recompile limit ------------------------------------------------------------


def test_entries_up_to_the_recompile_limit_are_released_with_the_function(graphs):
    limit = minidynamo.config.recompile_limit
    fn = closure(2)
    compiled = minidynamo.compile(fn, backend="eager", dynamic=False)
    for size in range(1, limit + 3):  # `limit` compiles, then two calls run eagerly
        compiled(torch.randn(size))
    frame_cache = cache.lookup(fn.__code__)
    assert len(frame_cache.entries) == limit and len(alive(graphs)) == limit
    parts = weak_parts(fn.__code__, graphs)
    names = {name for entry in frame_cache.entries for name in entry.installed_globals}
    del fn, compiled
    collect()
    assert still_alive(parts) == []
    assert frame_cache.entries == [] and not names & set(globals())


def growth_past_the_limit(compile_fn: Callable, calls: int = 400) -> int:
    """Bytes still allocated after `calls` calls of a function at its recompile limit,
    each with a new shape (each a miss that runs eagerly), after 200 such calls (torch
    fills a bounded cache of its own with the first ones)."""
    def sine(x):
        return x.sin()

    compiled = compile_fn(sine)
    first = minidynamo.config.recompile_limit + 200
    for size in range(1, first):
        compiled(torch.randn(size))
    collect()
    tracemalloc.start()
    try:
        for size in range(first, first + calls):
            compiled(torch.randn(size))
        collect()
        return tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()


def test_calls_past_the_recompile_limit_keep_nothing():
    assert growth_past_the_limit(
        lambda fn: minidynamo.compile(fn, backend="eager", dynamic=False)) < 100_000


def test_torch_compile_calls_past_the_recompile_limit_keep_nothing(fresh_torch):
    assert growth_past_the_limit(
        lambda fn: torch.compile(fn, backend="eager", dynamic=False)) < 100_000


# -- graph breaks: resume functions ---------------------------------------------------


def test_a_dropped_fresh_function_with_a_break_releases_its_resume_entries(graphs):
    namespace: dict[str, Any] = {"torch": torch}
    source = "def halves(x):\n    y = x * 2\n    torch._dynamo.graph_break()\n    return y.cos()\n"
    exec(compile(source, "<fresh halves>", "exec"), namespace)
    fn = namespace.pop("halves")
    minidynamo.compile(fn, backend="eager")(torch.randn(3))
    assert live_entries() == 2 and len(alive(graphs)) == 2  # the frame, its resume function
    del fn
    collect()
    assert (live_entries(), alive(graphs)) == (0, [])
    assert [name for name in namespace if name.startswith("__compiled_fn") or "resume" in name] == []


def test_a_global_two_entries_share_stays_until_the_last_one_dies():
    """Both entries call the same resume function, installed once in the module: the
    first entry to die took it out, and the other raised NameError (chapter 7's lab
    notebook). `cache.hold_globals` counts the holders; the last one removes it."""
    namespace: dict[str, Any] = {"torch": torch}
    source = "def halves(x):\n    y = x * 2\n    torch._dynamo.graph_break()\n    return y.cos()\n"
    exec(compile(source, "<shared resume>", "exec"), namespace)
    first, second = (lambda gm, inputs: gm.forward), (lambda gm, inputs: gm.forward)
    compiled = [minidynamo.compile(namespace["halves"], backend=b) for b in (first, second)]
    compiled[0](torch.ones(3))
    compiled[1](torch.ones(3))
    resume = [name for name in namespace if "resume" in name]
    assert len(resume) == 1
    del compiled[0], first
    collect()
    assert torch.equal(compiled[0](torch.ones(3)), torch.full((3,), 2.0).cos())
    del compiled[0], second, namespace["halves"]
    collect()
    assert resume[0] not in namespace


def test_a_dropped_closure_with_a_break_releases_its_resume_entries(graphs):
    fn = breaking_closure(1)
    minidynamo.compile(fn, backend="eager")(torch.randn(3))
    assert live_entries() == 2 and len(alive(graphs)) == 2
    names = {name for c in cache.caches.values() for e in c.entries for name in e.installed_globals}
    del fn
    collect()
    assert (live_entries(), alive(graphs)) == (0, [])
    assert not names & set(globals())


# -- reset ------------------------------------------------------------------------------


def long_lived(x):
    return x.cos() * 3


def test_reset_releases_everything(graphs):
    kept = [closure(3), breaking_closure(3), long_lived]  # the functions themselves live on
    module = Small()
    for fn in kept:
        minidynamo.compile(fn, backend="eager", dynamic=False)(torch.randn(3))
    minidynamo.compile(module, backend="eager")(torch.randn(2, 4))
    entries = [weakref.ref(e) for c in cache.caches.values() for e in c.entries]
    assert len(entries) == 5 and len(alive(graphs)) == 5 and installed_names()
    minidynamo.reset()
    collect()
    assert (alive(entries), alive(graphs), cache.caches) == ([], [], {})
    assert installed_names() == set()
    assert len(resume_cache) == 0


def test_compiling_adds_no_finalizer_that_outlives_the_entry():
    def compile_and_drop(count: int) -> None:
        for i in range(count):
            minidynamo.compile(closure(i), backend="eager")(torch.randn(3))

    compile_and_drop(5)
    collect()
    before = len(weakref.finalize._registry)
    compile_and_drop(100)
    for _ in range(20):
        minidynamo.reset()
        minidynamo.compile(long_lived, backend="eager")(torch.randn(3))
    minidynamo.reset()
    collect()
    assert len(weakref.finalize._registry) - before < 10


# -- many functions --------------------------------------------------------------------


def compile_and_drop_fresh(compile_fn: Callable, count: int) -> None:
    for i in range(count):
        fn = fresh_function({"torch": torch}, i)
        compiled = compile_fn(fn)
        compiled(torch.randn(3))
        compiled(torch.randn(3))


def test_two_hundred_dropped_functions_leave_no_graph_or_entry():
    compile_and_drop_fresh(lambda fn: minidynamo.compile(fn, backend="eager"), 5)
    for i in range(5):
        minidynamo.compile(closure(i), backend="eager")(torch.randn(3))
    collect()
    graphs, entries, caches = live_graph_modules(), live_entries(), len(cache.caches)
    compile_and_drop_fresh(lambda fn: minidynamo.compile(fn, backend="eager"), 100)
    for i in range(100):
        minidynamo.compile(closure(i), backend="eager")(torch.randn(3))
    collect()
    assert (live_graph_modules(), live_entries(), len(cache.caches)) == (graphs, entries, caches)


def test_torch_compile_dropped_closures_leave_no_graph(fresh_torch):
    # (a fresh code object is another matter: torch.compile keeps its entries, graphs
    # and globals after the function dies; benchmarks/bench_memory.py shows it)
    for i in range(5):
        torch.compile(closure(i), backend="eager")(torch.randn(3))
    collect()
    graphs = live_graph_modules()
    for i in range(5, 200):
        torch.compile(closure(i), backend="eager")(torch.randn(3))
    collect()
    assert live_graph_modules() == graphs


def test_torch_reset_releases_graphs_too(fresh_torch):
    torch_graphs.clear()
    kept = [closure(3), long_lived]
    for fn in kept:
        torch.compile(fn, backend=recording_backend)(torch.randn(3))
    assert len(alive(torch_graphs)) == 2
    torch._dynamo.reset()
    collect()
    assert alive(torch_graphs) == []


class WithHooks(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(3, 3)
        self.register_forward_hook(lambda module, args, output: output * 2)

    def forward(self, x):
        return self.fc(x).relu()


def test_a_hooked_module_takes_what_it_installed_in_torchs_module_with_it():
    """A user module with hooks runs `nn.Module._call_impl` with its calls routed; the
    router is a global installed in torch.nn.modules.module, there only while the
    compiled module lives."""
    from torch.nn.modules import module as torch_module

    def installed() -> set[str]:
        return {name for name in vars(torch_module) if name.startswith("___minidynamo")}

    before = installed()
    net = WithHooks()
    compiled = minidynamo.compile(net, backend="eager")
    x = torch.randn(2, 3)
    assert torch.allclose(compiled(x), net(x))
    assert installed() > before
    alive = weakref.ref(net)
    del net, compiled
    collect()
    assert alive() is None and installed() == before
