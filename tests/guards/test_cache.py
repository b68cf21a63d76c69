"""The cache (chapter 9): entries reused while their guards hold, recompile reasons worded
as torch's, the recompile limit, reset, release with the owner, and the binder.

Reasons are compared with torch.compile's own (`torch._dynamo.utils.guard_failures`) on
the same call sequence, each reason's first line up to its `#` comment.
"""

from __future__ import annotations

import gc
import inspect
import logging
import types

import pytest
import torch
import torch._dynamo.testing
import torch._dynamo.utils

import minidynamo
from minidynamo import cache, config, convert_frame
from minidynamo.testing import strict_mode


def scaled(x, n):
    return x * n


SEQUENCE = [(torch.ones(3), 2), (torch.ones(4), 2), (torch.ones(4), 3),
            (torch.ones(4).double(), 3), (torch.ones(4, 2)[:, 0], 3),
            (torch.ones(4).requires_grad_(), 3), (torch.ones(4, 1), 3)]


def first_lines(reasons):
    return [reason.split("\n")[0].split("  #")[0].strip() for reason in reasons]


def recompile_reasons(fn, calls, **options):
    """The first line of every recompile reason, torch.compile's (`guard_failures`)
    and minidynamo's (`FrameCache.failures`), over the same calls."""
    torch._dynamo.reset()
    torch._dynamo.utils.guard_failures.clear()
    theirs = torch.compile(fn, backend="eager", dynamic=False)
    for args in calls:
        theirs(*args)
    minidynamo.reset()
    ours = minidynamo.compile(fn, backend="eager", **options)
    with strict_mode():
        for args in calls:
            ours(*args)
    return (first_lines(torch._dynamo.utils.guard_failures[fn.__code__]),
            first_lines(cache.lookup(fn.__code__).failures))


def test_recompile_reasons_are_torchs_word_for_word():
    expected, ours = recompile_reasons(scaled, SEQUENCE)
    assert ours == expected
    assert len(expected) > len(SEQUENCE)  # every entry's reason, at every recompile


def by_key(x, d):
    if "a" in d:
        return x + d["a"]
    return x - d.get("b", 0)


def test_dict_key_reasons_are_torchs_word_for_word():
    calls = [(torch.ones(3), {"a": 1}), (torch.ones(3), {"b": 2}), (torch.ones(3), {"c": 3})]
    expected, ours = recompile_reasons(by_key, calls, dynamic=False)
    assert ours == expected
    assert any("___dict_contains('a', d)" in line for line in expected)


def test_the_check_function_is_printed_as_python():
    minidynamo.reset()
    compiled = minidynamo.compile(scaled)
    assert minidynamo.show_guards(compiled) == ""
    compiled(torch.ones(3), 2)
    source = minidynamo.show_guards(compiled)
    assert source.startswith("# cache entry ") and "def ___check(L, G):" in source
    assert "___v0 = L['x']" in source and ".size() == (3,)" in source
    assert "type(___v1) is int and ___v1 == 2" in source
    compile(source, "<guards>", "exec")  # it is Python


def test_explain_reports_the_guards():
    explained = minidynamo.explain(scaled)(torch.ones(3), 2)
    kinds = {guard.kind for guard in explained.out_guards}
    assert {"GLOBAL_STATE", "TENSOR_MATCH", "EQUALS_MATCH"} <= kinds


def test_a_hit_does_not_trace_and_a_miss_logs_why(capsys):
    minidynamo.reset()
    compiled = minidynamo.compile(scaled)
    minidynamo.set_logs(recompiles=True)
    try:
        compiled(torch.ones(3), 2)
        compiled(torch.ones(3), 2)
        assert convert_frame.counters["frames"] == 1
        assert convert_frame.counters["cache_hits"] == 1
        compiled(torch.ones(3), 5)
    finally:
        minidynamo.set_logs(recompiles=False)
    printed = capsys.readouterr().err
    assert "Recompiling function scaled in" in printed
    assert "triggered by the following guard failure(s):\n    - 0/0: n == 2" in printed


class _Messages(logging.Handler):
    def __init__(self):
        super().__init__()
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def without_user_stacks(message):
    """A recompiles message without torch's user stack lines and `#` comments (minidynamo
    prints neither)."""
    lines = [line.split("  #")[0].rstrip() for line in message.split("\n")]
    return [line for line in lines if not line.startswith(("    - User stack", "    -   "))]


def test_recompiles_verbose_prints_torchs_layout():
    calls = SEQUENCE[:3]
    logger = logging.getLogger("torch._dynamo.guards.__recompiles_verbose")
    theirs, ours = _Messages(), _Messages()
    torch._dynamo.reset()
    torch._logging.set_logs(recompiles_verbose=True)
    logger.addHandler(theirs)
    try:
        compiled = torch.compile(scaled, backend="eager", dynamic=False)
        for args in calls:
            compiled(*args)
    finally:
        logger.removeHandler(theirs)
        torch._logging.set_logs()
    minidynamo.reset()
    minidynamo.set_logs(recompiles_verbose=True)
    logging.getLogger("minidynamo.recompiles_verbose").addHandler(ours)
    try:
        compiled = minidynamo.compile(scaled, dynamic=False)
        for args in calls:
            compiled(*args)
    finally:
        logging.getLogger("minidynamo.recompiles_verbose").removeHandler(ours)
        minidynamo.set_logs(recompiles_verbose=False)
    assert len(ours.messages) == len(theirs.messages) == 2
    assert "    guard 1 failures:" in ours.messages[1]
    assert [without_user_stacks(m) for m in ours.messages] == \
        [without_user_stacks(m) for m in theirs.messages]


def test_the_recompile_limit_runs_eagerly_with_a_warning_once(caplog):
    minidynamo.reset()
    compiled = minidynamo.compile(scaled, dynamic=False)  # each new n is a new entry
    with config.patch(recompile_limit=3), caplog.at_level(logging.WARNING, logger="minidynamo"):
        for n in range(6):
            assert torch.equal(compiled(torch.ones(2), n), torch.full((2,), float(n)))
    assert convert_frame.counters["frames"] == 3
    assert caplog.text.count("hit config.recompile_limit (3)") == 1
    assert "last reason: 0/2: n == 2" in caplog.text
    assert torch.equal(compiled(torch.ones(2), 1), torch.ones(2))  # an entry still hits
    assert convert_frame.counters["frames"] == 3


def test_fail_on_recompile_limit_hit_raises():
    minidynamo.reset()
    compiled = minidynamo.compile(scaled)
    with config.patch(recompile_limit=1, fail_on_recompile_limit_hit=True):
        compiled(torch.ones(2), 1)
        with pytest.raises(minidynamo.FailOnRecompileLimitHit, match="recompile_limit"):
            compiled(torch.ones(2), 2)


def test_fullgraph_raises_at_the_limit():
    minidynamo.reset()
    compiled = minidynamo.compile(scaled, fullgraph=True)
    with config.patch(recompile_limit=1):
        compiled(torch.ones(2), 1)
        with pytest.raises(minidynamo.FailOnRecompileLimitHit):
            compiled(torch.ones(2), 2)


def test_reset_forgets_every_entry():
    compiled = minidynamo.compile(scaled)
    compiled(torch.ones(2), 1)
    minidynamo.reset()
    assert cache.lookup(scaled.__code__) is None
    compiled(torch.ones(2), 1)
    assert convert_frame.counters["frames"] == 1


def test_entries_and_their_globals_go_when_the_compiled_function_goes():
    minidynamo.reset()
    namespace: dict = {}
    exec("def f(x):\n    return x.sin() + 1\n", namespace)
    compiled = minidynamo.compile(namespace["f"])
    compiled(torch.ones(2))
    installed = [name for name in namespace if name.startswith("__compiled_fn")]
    assert installed and cache.lookup(namespace["f"].__code__).entries
    code = namespace["f"].__code__
    again = minidynamo.compile(namespace["f"])  # a new wrapper of a live function: a hit
    again(torch.ones(2))
    assert convert_frame.counters["frames"] == 1
    del compiled, again
    gc.collect()
    assert cache.lookup(code).entries  # the function lives: its entries stay
    del namespace["f"]
    gc.collect()
    assert not [name for name in namespace if name.startswith("__compiled_fn")]
    frame_cache = cache.lookup(code)
    assert frame_cache is None or not frame_cache.entries


def test_entries_go_when_the_compiled_module_goes():
    minidynamo.reset()

    class Net(torch.nn.Module):
        def forward(self, x):
            return x.cos() * 2

    compiled = minidynamo.compile(Net())
    compiled(torch.ones(2))
    frame_cache = cache.lookup(Net.forward.__code__)
    assert len(frame_cache.entries) == 1
    del compiled
    gc.collect()
    assert frame_cache.entries == []


def signatures():
    def plain(a, b=2):
        return a, b

    def star(a, *rest, key=None, **extra):
        return a, rest, key, extra

    def positional_only(a, /, b, *, c=3):
        return a, b, c

    w = 5

    def closure(a):
        return a + w

    return [(plain, (1,), {}), (plain, (1, 4), {}), (star, (1, 2, 3), {"key": 4, "z": 5}),
            (positional_only, (1, 2), {"c": 9}), (closure, (1,), {})]


@pytest.mark.parametrize("fn, args, kwargs", signatures(), ids=lambda v: getattr(v, "__name__", ""))
def test_the_binder_binds_as_the_function_does(fn, args, kwargs):
    expected = convert_frame.frame_locals(fn, args, kwargs)
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        expected[name] = cell.cell_contents
    assert cache.FrameCache(fn.__code__).bind(fn, args, kwargs) == expected


def test_the_binder_rejects_what_the_function_rejects():
    def fn(a, *, b):
        return a

    with pytest.raises(TypeError):
        cache.FrameCache(fn.__code__).bind(fn, (1, 2), {})
    assert inspect.signature(fn)  # the function itself is untouched
    assert isinstance(cache.binder_code(fn.__code__), types.CodeType)


def test_the_binder_binds_a_comprehension_whose_argument_is_dot_zero():
    """A list comprehension's code takes `.0`; one compiled as a frame of its own (its
    caller ran eagerly) must bind it, not fail with a SyntaxError."""
    scale = 3
    comprehension = types.FunctionType(
        next(c for c in (lambda xs: [x * scale for x in xs]).__code__.co_consts
             if isinstance(c, types.CodeType)),
        globals(), closure=(lambda xs: [x * scale for x in xs]).__closure__)
    iterator = iter([1, 2])
    bound = cache.FrameCache(comprehension.__code__).bind(comprehension, (iterator,), {})
    assert bound == {".0": iterator, "scale": 3}


# -- the hit path's two shortcuts: a joint tensor check, shared starts read once --------


def four(a, b, c, d):
    return a + b + c + d


def test_the_joint_tensor_check_answers_as_the_checks_one_by_one():
    """One C++ call checks all the tensors of an entry; when it says no (a tensor
    changed, or the same tensor passed twice, which it refuses), the checks one by one
    decide, so the entry is reused exactly when each tensor matches."""
    minidynamo.reset()
    compiled = minidynamo.compile(four, backend="eager")
    xs = [torch.randn(3) for _ in range(4)]
    compiled(*xs)
    entry = cache.lookup(four.__code__).entries[0]
    joint = [guard for guard in entry.check.guards if guard.kind == "TENSOR_MATCH"]
    assert len(joint) == 1 and "___tensor_checks.check(" in joint[0].code
    assert [source.name() for source in joint[0].sources()] == ["L['a']", "L['b']", "L['c']", "L['d']"]
    f_globals = four.__globals__

    def holds(*args):
        return entry.check.check(dict(zip("abcd", args)), f_globals)

    assert holds(*(torch.randn(3) for _ in range(4)))
    assert not holds(xs[0], xs[1], xs[2].double(), xs[3])
    assert not holds(xs[0], xs[1], xs[2], torch.randn(4))
    assert not holds(xs[0], xs[1], xs[2], xs[3].requires_grad_())
    xs[3].requires_grad_(False)
    assert not holds(xs[0], xs[0], xs[2], xs[3])  # NO_ALIASING decides, not the joint check
    y = torch.randn(3)
    assert torch.equal(compiled(y, y, xs[2], xs[3]), y + y + xs[2] + xs[3])
    assert len(cache.lookup(four.__code__).entries) == 2


class Tied(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(3, 3)
        self.b = torch.nn.Linear(3, 3)
        self.b.weight = self.a.weight

    def forward(self, x):
        return self.b(self.a(x))


def test_tied_weights_are_checked_once_and_untying_them_recompiles():
    minidynamo.reset()
    torch._dynamo.reset()
    net, x = Tied(), torch.randn(2, 3)
    ours, theirs = minidynamo.compile(net, backend="eager"), torch.compile(net, backend="eager")
    for compiled in (ours, theirs):
        compiled(x)
        compiled(x)
    net.b.weight = torch.nn.Parameter(net.a.weight.detach().clone())  # untied
    with torch.no_grad():
        net.b.weight.mul_(2)
    assert torch.allclose(ours(x), net(x)) and torch.allclose(theirs(x), net(x))
    assert len(cache.lookup(Tied.forward.__code__).entries) == 2


def test_tying_weights_after_compiling_reuses_the_entry_as_torch_does():
    """Compiled untied, then tied: the joint check refuses the one tensor passed twice,
    the checks one by one accept it, and the entry is reused, as torch.compile (which
    skips the aliasing guard on parameters) reuses its own."""
    minidynamo.reset()
    torch._dynamo.reset()
    counter = torch._dynamo.testing.CompileCounter()
    net, x = Tied(), torch.randn(2, 3)
    net.b.weight = torch.nn.Parameter(net.a.weight.detach().clone())  # untied
    ours, theirs = minidynamo.compile(net, backend="eager"), torch.compile(net, backend=counter)
    ours(x), theirs(x)
    net.b.weight = net.a.weight  # tied again
    assert torch.allclose(ours(x), net(x)) and torch.allclose(theirs(x), net(x))
    assert counter.frame_count == 1
    assert len(cache.lookup(Tied.forward.__code__).entries) == 1


class Deep(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.Sequential(*[torch.nn.Linear(4, 4) for _ in range(6)])

    def forward(self, x):
        return self.layers(x)


def test_graph_inputs_read_each_shared_start_once():
    """The parameters of six layers are twelve paths from `self`; the transformed code
    reads `self._modules['layers']._modules` once and each layer's `_parameters` once
    (`SharedPrefixes`), as torch.compile's bytecode keeps them in `tmp_N` locals."""
    import dis

    minidynamo.reset()
    net, x = Deep(), torch.randn(2, 4)
    compiled = minidynamo.compile(net, backend="eager")
    assert torch.allclose(compiled(x), net(x))
    code = cache.lookup(Deep.forward.__code__).entries[0].code
    reads = [i.argval for i in dis.get_instructions(code) if i.opname == "LOAD_ATTR"]
    assert reads.count("_modules") == 2 and reads.count("_parameters") == 6
    with torch.no_grad():
        net.layers[3].bias.add_(1)  # the same tensors, new values: reused, right
    assert torch.allclose(compiled(x), net(x))
    assert len(cache.lookup(Deep.forward.__code__).entries) == 1


def breaks_once(x):
    y = x * 2
    torch._dynamo.graph_break()
    return y + 1


def test_a_resume_function_without_cells_is_made_and_wrapped_once():
    """A hit of a frame with a break calls the resume function's maker; without cells
    it returns the same compiled function every time, so the resume frame's entry
    reuses its runner instead of building a function and a wrapper per call."""
    minidynamo.reset()
    compiled = minidynamo.compile(breaks_once, backend="eager")
    x = torch.randn(3)
    for _ in range(3):
        assert torch.equal(compiled(x), x * 2 + 1)
    makers = [value for name, value in breaks_once.__globals__.items()
              if name.startswith("__minidynamo__resume")]
    assert len(makers) == 1
    assert makers[0](()) is makers[0](())
    resume_code = makers[0].code
    runner = cache.lookup(resume_code).entries[0]._runner
    compiled(x)
    assert cache.lookup(resume_code).entries[0]._runner is runner


def kept_positions(h, k):
    """transformers' `logits_to_keep`: an int, or a tensor of positions."""
    if isinstance(k, torch.Tensor) and k.ndim == 2:
        return h
    if isinstance(k, int):
        k = slice(-k, None)
    return h[:, k, :] * 2


def test_a_recompile_reason_asked_of_a_tensor_where_an_int_was_is_found():
    """The reason for a recompile tries the guards that failed before first: one of them,
    `L['k'] == 1`, asked of a tensor, gave a tensor whose truth raised RuntimeError out
    of the recompile. A guard whose answer cannot be a bool has not held."""
    h, positions = torch.randn(2, 7, 4), torch.tensor([0, 2, 5])
    minidynamo.reset()
    compiled = minidynamo.compile(kept_positions, backend="eager")
    for k in (0, 1, 3, positions):
        assert torch.equal(compiled(h, k), kept_positions(h, k))
