"""Guards pinned by dict versions (chapter 9): the guards that read only module globals
and plain dicts run again only when one of those dicts changed.

About half the guards of a real model read module globals: `torch.nn.functional.linear
is ...`, `'super' not in G`, `__import__('transformers.utils').is_torch_fx_proxy is ...`.
Their values are reached only through dicts: the frame's globals `G`, `sys.modules`,
modules' `__dict__`s, plain dicts. CPython gives every dict a version that changes
whenever its contents change (a global counter: equal versions, untouched contents;
`dict_version`, exposed by torch for TorchDynamo's guards). So while none of those
dicts changed since the guards last held, they hold again: one version per dict is
compared instead of every guard. TorchDynamo skips whole subtrees of its guard tree
the same way ("dict tags", `skip_tensor_guards_with_matching_dict_tags`); we pin only
what is certain to be unchanged, and check the rest every call.
"""

from __future__ import annotations

import sys
import types
from typing import Any

import torch
from torch._C._dynamo.guards import dict_version

from minidynamo.guards import CheckFunction, Guard, _ref_name
from minidynamo.sources import (
    AttrSource, DictGetItemSource, GetItemSource, GlobalSource, GlobalsSource, ImportSource,
    Source,
)

# Kinds whose truth depends only on which object a source reaches (and, for the dict
# kinds, on that dict's contents): with the same objects, the same answer.
PINNABLE_KINDS = frozenset({"ID_MATCH", "NONE_MATCH", "EQUALS_MATCH", "TYPE_MATCH", "NOT_IN_DICT",
                            "DICT_KEYS", "DICT_CONTAINS", "LENGTH_CHECK"})
IMMUTABLE_TYPE = 1 << 8  # Py_TPFLAGS_IMMUTABLETYPE: its instances' `__class__` cannot be set
IMMUTABLE_VALUES = (int, float, complex, str, bytes, bool, type(None), torch.dtype, torch.device)
_UNREADABLE = object()


class PinnedGuards:
    """Guards whose values only dicts reach, checked again only when one of those dicts
    changed: `check(G)` compares the dicts' versions with the ones seen when the
    guards last held, and runs `inner` (their own check function) when they differ.
    After `inner` holds, the dicts are read again from their sources (`reach`): a name
    rebound to an equal dict (`CONFIG = dict(CONFIG)`) passes the guards, as on
    torch.compile, and its new dict is the one watched from then on."""

    def __init__(self, guards: list[Guard], reach: list[str], dicts: list[dict],
                 fixed: dict[str, dict]) -> None:
        self.inner = CheckFunction(guards)
        # `(G, G['CONFIG'], ...)`: each pinned dict read from its source; `fixed` names
        # the ones that are the same for the whole entry (sys.modules)
        self.reach = eval(f"lambda G: ({''.join(name + ', ' for name in reach)})",  # noqa: S307
                          {**self.inner.namespace, **fixed})
        self.dicts = tuple(dicts)
        self.seen: tuple[int, ...] | None = None  # versions when the guards last held

    def check(self, G: dict) -> bool:
        """The frame's globals are all the pinned guards read (no local reaches a dict).
        While no watched dict changed, every source reaches the same dict, unchanged."""
        if tuple(map(dict_version, self.dicts)) == self.seen:
            return True
        if not self.inner.check({}, G):
            return False
        try:
            self.dicts = self.reach(G)
        except Exception:  # noqa: BLE001 (the guards held, so it cannot: stay safe)
            return False
        self.seen = tuple(map(dict_version, self.dicts))  # nothing ran since the guards
        return True


class Pinning:
    """Which dicts pin which values, for the guards of one frame: each source's value
    is read once, from the frame's globals, when the check function is built."""

    def __init__(self, f_globals: dict[str, Any]) -> None:
        self.f_globals = f_globals
        self._values: dict[str, Any] = {}
        self._hops: dict[str, list[tuple[dict, Source | None]] | None] = {}

    def value(self, source: Source) -> Any:
        """What `source` reaches now; called only for sources `hops` follows (module
        globals, dict items), so no user code runs (no property, no `__getattr__`)."""
        name = source.name()
        if name not in self._values:
            try:
                self._values[name] = self._read(source)
            except Exception:  # noqa: BLE001 (gone since the trace: nothing to pin)
                self._values[name] = _UNREADABLE
        return self._values[name]

    def _read(self, source: Source) -> Any:
        if isinstance(source, GlobalsSource):
            return self.f_globals
        if isinstance(source, GlobalSource):
            return self.f_globals[source.global_name]
        if isinstance(source, ImportSource):
            return sys.modules[source.module_name]
        if type(source) is AttrSource:
            return getattr(self.value(source.base), source.member)
        if type(source) is GetItemSource:
            return self.value(source.base)[source.index]
        if type(source) is DictGetItemSource:
            return dict.__getitem__(self.value(source.base), source.index)
        return _UNREADABLE

    def hops(self, source: Source) -> list[tuple[dict, Source | None]] | None:
        """The dicts whose contents decide which object `source` reaches, each with the
        source that reaches the dict itself (None for `G` and `sys.modules`: the same
        dicts for the whole entry); None when something else does (a local, an
        attribute of a class or an instance, a list)."""
        name = source.name()
        if name not in self._hops:
            self._hops[name] = self._follow(source)
        return self._hops[name]

    def _follow(self, source: Source) -> list[tuple[dict, Source | None]] | None:
        """`hops`, computed: one step back along the source, then this one."""
        if isinstance(source, GlobalsSource):
            return []
        if isinstance(source, GlobalSource):
            return [(self.f_globals, None)]
        if isinstance(source, ImportSource):
            return [(sys.modules, None)]
        base = getattr(source, "base", None)
        if base is None or (hops := self.hops(base)) is None:
            return None
        owner = self.value(base)
        if type(source) is AttrSource and isinstance(owner, types.ModuleType):
            if source.member == "__dict__":
                return hops
            in_type = any(source.member in vars(cls) for cls in type(owner).__mro__)
            if source.member in vars(owner) and not in_type:  # no descriptor, no __getattr__
                return [*hops, (vars(owner), AttrSource(base, "__dict__"))]
            return None
        plain_item = type(source) is GetItemSource and type(owner) is dict
        builtin_item = type(source) is DictGetItemSource and isinstance(owner, dict)
        if plain_item or builtin_item:
            return [*hops, (owner, base)]
        return None

    def pins(self, guard: Guard) -> list[tuple[dict, Source | None]] | None:
        """The dicts that pin the guard's answer, or None when it must run every call."""
        if guard.kind not in PINNABLE_KINDS or not guard.sources():
            return None
        pins: list[tuple[dict, Source | None]] = []
        for source in guard.sources():
            hops = self.hops(source)
            if hops is None or (value := self.value(source)) is _UNREADABLE:
                return None
            if guard.kind in ("NOT_IN_DICT", "DICT_KEYS", "DICT_CONTAINS") or (
                    guard.kind == "LENGTH_CHECK" and type(value) is dict):
                if type(value) is not dict:  # a subclass may answer `in` and keys() its way
                    return None
                hops = [*hops, (value, None if value is self.f_globals else source)]
            elif guard.kind == "LENGTH_CHECK" and type(value) is not tuple:
                return None
            elif guard.kind == "EQUALS_MATCH" and not is_immutable(value):
                return None
            elif guard.kind == "TYPE_MATCH" and not has_fixed_type(value):
                return None
            pins += hops
        return pins


def is_immutable(value: Any) -> bool:
    """A value that cannot change while the same object: an int, a str, a tuple of them."""
    if type(value) in (tuple, frozenset):
        return all(is_immutable(item) for item in value)
    return type(value) in IMMUTABLE_VALUES


def has_fixed_type(value: Any) -> bool:
    """An object whose class cannot be reassigned (`obj.__class__ = Other`)."""
    return bool(type(value).__flags__ & IMMUTABLE_TYPE) and not isinstance(value, types.ModuleType)


def pinned_forms(guards: list[Guard], f_globals: dict[str, Any]) -> list[Guard]:
    """The guards with those that dicts pin replaced by one PINNED guard (where the first
    of them was). Its `PinnedGuards` watches the dicts their sources reach, each read
    again from its source whenever the guards ran and held (a module replaced in
    `sys.modules`, a global rebound to another dict: the new dict is watched)."""
    pinning = Pinning(f_globals)
    pinned: list[Guard] = []
    dicts: dict[int, tuple[dict, Source | None]] = {}
    rest: list[Guard | None] = []
    for guard in guards:
        pins = pinning.pins(guard)
        if pins is None:
            rest.append(guard)
            continue
        if not pinned:
            rest.append(None)  # the PINNED guard's place
        pinned.append(guard)
        for pinned_dict, source in pins:
            dicts.setdefault(id(pinned_dict), (pinned_dict, source))
    if len(pinned) < 2:
        return guards
    fixed: dict[str, Any] = {}
    reach = [source.name() if source is not None else
             "G" if pinned_dict is f_globals else _ref_name(fixed, "dict", pinned_dict)
             for pinned_dict, source in dicts.values()]
    group = PinnedGuards(pinned, reach, [pinned_dict for pinned_dict, _ in dicts.values()], fixed)
    refs: dict[str, Any] = {}
    name = _ref_name(refs, "pinned", group)
    inner = "".join(f"\n#     {line}" for line in group.inner.annotated_source().splitlines())
    note = (f"{len(group.dicts)} dicts' versions pin the guards of {name}.inner, which runs "
            f"when one of them changed:{inner}")
    guard = Guard("PINNED", GlobalsSource(), f"{name}.check(G)", refs,
                  reason=lambda L, G: group.inner.failure_reason(L, G),
                  text=f"{len(pinned)} guards on module globals ({name}.inner)",
                  notes={name: note})
    return [guard if item is None else item for item in rest]
