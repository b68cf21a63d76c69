"""Guards pinned by dict versions (chapter 9): the guards that read only module globals
and plain dicts run again only when one of those dicts changed; while none did, one
version per dict is compared instead. Each test changes a pinned dict after the
versions were recorded (a first call, then a hit) and checks the next call sees it:
recompiled, or reused, exactly where torch.compile recompiles or reuses, with eager's
output.
"""

from __future__ import annotations

import sys
import types

import pytest
import torch
import torch._dynamo.testing

import minidynamo
from minidynamo import guards, pinning
from minidynamo.pinning import Pinning, PinnedGuards, pinned_forms
from minidynamo.sources import AttrSource, GetItemSource, GlobalSource, ImportSource

SETTINGS = {"mode": "double", "offset": 1.0}


def use_settings(x):
    if SETTINGS["mode"] == "double":
        return x * 2 + SETTINGS["offset"]
    return x - SETTINGS["offset"]


def helper(x):
    return x + 1


def use_helper(x):
    return helper(x) * torch.nn.functional.relu(x)


def pinned_groups(compiled) -> list[PinnedGuards]:
    frame = getattr(compiled, "_minidynamo_original", compiled)
    entries = minidynamo.cache.lookup(frame.__code__).entries
    return [ref for entry in entries for guard in entry.check.guards
            for ref in guard.refs.values() if isinstance(ref, PinnedGuards)]


def recompiles(fn, calls, change_between):
    """Compile counts of each call, torch.compile's and ours, with every output checked
    against eager. `change_between[i]` runs before call i."""
    patterns = []
    for compile_with in (lambda f, b: torch.compile(f, backend=b),
                         lambda f, b: minidynamo.compile(f, backend=b)):
        torch._dynamo.reset()
        minidynamo.reset()
        counter = torch._dynamo.testing.CompileCounter()
        compiled = compile_with(fn, counter)
        counts = []
        for index, args in enumerate(calls):
            change_between.get(index, lambda: None)()
            before = counter.frame_count
            torch.testing.assert_close(compiled(*args), fn(*args))
            counts.append(counter.frame_count - before)
        for index in sorted(change_between):  # put the world back for the other compiler
            restore.get(fn, lambda: None)()
        patterns.append(counts)
    return patterns


def reset_settings():
    SETTINGS.clear()
    SETTINGS.update(mode="double", offset=1.0)


restore = {use_settings: reset_settings}


def test_module_globals_are_pinned_and_a_hit_compares_versions_only():
    minidynamo.reset()
    compiled = minidynamo.compile(use_helper, backend="eager")
    x = torch.randn(3)
    compiled(x)
    [group] = pinned_groups(compiled)
    assert group.seen is None  # recorded by the first check that holds: the next call
    compiled(x)
    assert group.seen == tuple(map(pinning.dict_version, group.dicts))
    shown = minidynamo.show_guards(compiled)
    main, pinned = shown.split("dicts' versions pin the guards of")
    assert "# PINNED" in main and "G['torch'] is" not in main
    assert "G['torch']" in pinned and "___v1 = ___v0.nn" in pinned  # its own function, printed
    # A function's code can be rebound without any dict changing: checked every call.
    assert "___v0 = G['helper']" in main and "___v1 = ___v0.__code__" in main
    calls = []
    group.inner.check, real = (lambda L, G: calls.append(1) or real(L, G)), group.inner.check
    compiled(x)
    assert calls == []  # nothing changed: the pinned guards did not run


def add_a_global():
    globals()["ANOTHER_GLOBAL"] = object()  # G changed, not what was read from it


@pytest.mark.parametrize("change, torch_pattern", [
    (lambda: SETTINGS.update(mode="minus"), [1, 0, 1, 0]),  # an entry the trace read
    (lambda: SETTINGS.update(offset=2.0), [1, 0, 1, 0]),
    (lambda: SETTINGS.update(offset=1.0), [1, 0, 0, 0]),  # written, but equal
    (add_a_global, [1, 0, 0, 0]),
])
def test_a_module_level_dict_changed_after_hits(change, torch_pattern):
    x = torch.randn(3)
    try:
        theirs, ours = recompiles(use_settings, [(x,), (x,), (x,), (x,)], {2: change})
    finally:
        reset_settings()
    assert theirs == torch_pattern
    assert ours == theirs


def test_a_key_added_to_a_module_level_dict_is_reused_as_torch_reuses():
    x = torch.randn(3)
    try:
        theirs, ours = recompiles(use_settings, [(x,), (x,), (x,), (x,)],
                                  {2: lambda: SETTINGS.update(unrelated=3)})
    finally:
        reset_settings()
    assert theirs == [1, 0, 0, 0]
    assert ours == theirs


def test_a_global_rebound_after_hits_recompiles():
    global helper
    original = helper

    def other(x):
        return x - 1

    def swap():
        global helper
        helper = other

    x = torch.randn(3)
    try:
        restore[use_helper] = lambda: globals().__setitem__("helper", original)
        theirs, ours = recompiles(use_helper, [(x,), (x,), (x,)], {2: swap})
    finally:
        helper = original
    assert theirs == ours == [1, 0, 1]


def test_a_module_replaced_in_sys_modules_is_watched_through_the_new_one():
    """The pinned dicts are read again from their sources after the guards ran: a module
    that is replaced (a reload) changes `sys.modules`, the guards run on the new module
    and hold, and from then on its `__dict__` is the one watched, not the old one's."""
    module = types.ModuleType("minidynamo_pinned_test_module")
    module.scale = 2.0
    sys.modules[module.__name__] = module
    source = AttrSource(ImportSource(module.__name__), "scale")
    guard = guards.Guard("EQUALS_MATCH", source, f"{source.name()} == 2.0")
    other = guards.Guard("ID_MATCH", ImportSource("builtins"), "__import__('builtins') is not None")
    try:
        check = guards.CheckFunction(pinned_forms([guard, other], {}))
        [group] = [ref for g in check.guards for ref in g.refs.values()
                   if isinstance(ref, PinnedGuards)]
        assert check.check({}, {}) and check.check({}, {})
        replacement = types.ModuleType(module.__name__)
        replacement.scale = 2.0
        sys.modules[module.__name__] = replacement
        assert check.check({}, {})  # the same value, through the new module's dict
        assert any(watched is vars(replacement) for watched in group.dicts)
        module.scale = 3.0  # the old module: no longer what the source reaches
        assert check.check({}, {})
        replacement.__dict__["scale"] = 3.0
        assert not check.check({}, {})
    finally:
        del sys.modules[module.__name__]


def test_a_global_rebound_to_an_equal_dict_is_reused_as_torch_reuses():
    """`SETTINGS = dict(SETTINGS)`: a new dict with the same entries passes the guards
    (torch.compile reuses its entry too); the new dict is watched from then on."""
    x = torch.randn(3)

    def rebind():
        global SETTINGS
        SETTINGS = dict(SETTINGS)

    try:
        theirs, ours = recompiles(use_settings, [(x,), (x,), (x,), (x,)], {2: rebind})
        assert theirs == ours == [1, 0, 0, 0]
        theirs, ours = recompiles(use_settings, [(x,), (x,), (x,)],
                                  {2: lambda: SETTINGS.update(mode="minus")})
        assert theirs == ours == [1, 0, 1]
    finally:
        reset_settings()


def test_what_is_not_pinned():
    """Values that something besides a dict decides run every call: a local, an
    instance's or a class's attribute, a module's `__getattr__` (PEP 562), an item of a
    dict subclass, a mutable value compared by equality."""
    module = types.ModuleType("minidynamo_lazy_module")
    module.__getattr__ = lambda name: 42
    module.plain = 1
    module.table = {"a": [1, 2]}
    module.ordered = __import__("collections").OrderedDict(a=1)
    sys.modules[module.__name__] = module
    try:
        pinning = Pinning({"m": module})
        base = ImportSource(module.__name__)
        assert pinning.hops(AttrSource(base, "plain")) is not None
        assert pinning.hops(AttrSource(base, "computed")) is None  # __getattr__ answers
        assert pinning.hops(GetItemSource(AttrSource(base, "table"), "a")) is not None
        assert pinning.hops(GetItemSource(AttrSource(base, "ordered"), "a")) is None
        assert pinning.hops(AttrSource(AttrSource(base, "plain"), "real")) is None
        items = GetItemSource(AttrSource(base, "table"), "a")
        assert pinning.pins(guards.Guard("EQUALS_MATCH", items, "")) is None  # a list
        assert pinning.pins(guards.Guard("ID_MATCH", items, "")) is not None
        assert pinning.pins(guards.Guard("TYPE_MATCH", AttrSource(base, "plain"), "")) is not None
        assert pinning.pins(guards.Guard("TYPE_MATCH", base, "")) is None  # module.__class__ = ...
        assert pinning.pins(guards.Guard("TENSOR_MATCH", AttrSource(base, "plain"), "")) is None
        assert Pinning({}).hops(GlobalSource("m")) is not None
    finally:
        del sys.modules[module.__name__]
