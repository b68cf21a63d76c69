"""How the check function reads the values its guards compare (chapter 9).

Each source a guard reads is fetched once into a local of the check function,
after its base (`___v1 = ___v0._modules`, `___v2 = ___v1['fc']`), as TorchDynamo's
guard tree walks each path once. Most of a model's check is such reads, and an
attribute of an `nn.Module` is a slow one: nn.Module defines `__getattr__`, so
CPython does not specialize the load (about 30 ns, against 15 for a dict item).
So an attribute is read where Python itself finds it, when that is known:

- `type(m)`, where a method of `m` is looked up, is the class the check guards it to
  be (`type(m) is ___type3`): `___type3`;
- `m.eps` is `m.__dict__['eps']` when `eps` was in the instance's `__dict__` at
  compile time and no class of its MRO has a data descriptor `eps` (a property, a
  slot), which would come first; the class reads its attributes the standard way
  (`object.__getattribute__`, or the read is `object.__getattribute__(m, 'eps')`
  already). Worth it once two reads share the `__dict__`: a called module's hook
  guard reads its `__dict__` anyway.

Both are sound because the check is one conjunction: they read what Python reads
whenever the object's TYPE_MATCH holds and its class still looks the name up as it
did, and when either does not the check fails anyway. A name that left the instance's
`__dict__` raises KeyError, which fails the check (a recompile, never a stale entry).
A class is mutable, though: `C.k = property(...)` after compiling makes Python read
`o.k` through the property while `o.__dict__['k']` is still there. So the names read
through a `__dict__` are guarded on the classes too (`joint_guards.lookups_unchanged`:
the MRO is the same, and no class of it gained or changed them). The guards' own
code, which words a failure, still spells the plain reads (`L['self'].eps`).
"""

from __future__ import annotations

import types
from typing import Any, Iterable

from minidynamo.sources import AttrSource, DictValueSource, GenericAttrSource, Source, TypeSource


class Reads:
    """The locals of one check function: which local holds each source, and how each
    is read."""

    def __init__(self, guards: Iterable[Any]) -> None:
        guards = list(guards)
        self.locals: dict[str, str] = {}  # source expression -> the local that holds it
        # source name -> (how the check names its class, the object when compiled)
        self.typed: dict[str, tuple[str, Any]] = {}
        for guard in guards:
            if guard.kind == "TYPE_MATCH" and guard.instance is not None:
                self.typed.setdefault(guard.source.name(), (class_name(guard), guard.instance))
        self.dict_members: dict[type, set[str]] = {}  # class -> names read from a __dict__
        self.dict_reads = self._worth_a_dict(guards)

    def local(self, source: Source, lines: list[str]) -> str:
        """The local holding `source`'s value; on first use, the line that assigns it
        (after its base's) is appended to `lines`."""
        name = source.name()
        if name in self.locals:
            return self.locals[name]
        expression = self._direct_read(source, lines)
        if expression is None and isinstance(source, DictValueSource):
            expression = f"{self.local(source.base, lines)}[{self.local(source.key, lines)}]"
        if expression is None:
            base = getattr(source, "base", None)
            expression = name
            if base is not None:
                expression = name.replace(base.name(), self.local(base, lines), 1)
        local = self.locals[name] = f"___v{len(self.locals)}"
        lines.append(f"        {local} = {expression}")
        return local

    def _direct_read(self, source: Source, lines: list[str]) -> str | None:
        """`source` read where Python finds it (module docstring), or None."""
        if not isinstance(source, (AttrSource, GenericAttrSource, TypeSource)):
            return None
        base = source.base.name()
        if base not in self.typed:
            return None
        cls_name, obj = self.typed[base]
        if isinstance(source, TypeSource):
            return cls_name
        if base in self.dict_reads and in_instance_dict(obj, source):
            return f"{self.local(dict_source(source.base, obj), lines)}[{source.member!r}]"
        return None

    def _worth_a_dict(self, guards: list[Any]) -> set[str]:
        """The objects whose attributes are read from their `__dict__`: where two reads
        or more go through it (the `__dict__` a hook guard reads counts as one)."""
        reads: dict[str, dict[str, Source]] = {}  # object -> member -> its source
        for guard in guards:
            for source in guard.sources():
                while isinstance(getattr(source, "base", None), Source):
                    base = source.base.name()
                    if isinstance(source, (AttrSource, GenericAttrSource)) and base in self.typed:
                        reads.setdefault(base, {})[source.member] = source
                    source = source.base
        worth = set()
        for base, members in reads.items():
            obj = self.typed[base][1]
            direct = [name for name, source in members.items() if in_instance_dict(obj, source)]
            if direct and len(direct) + ("__dict__" in members) >= 2:
                worth.add(base)
                self.dict_members.setdefault(type(obj), set()).update(direct)
        return worth


def class_name(guard: Any) -> str:
    """How a TYPE_MATCH's code names the class it compares with (`___type3`, `dict`)."""
    cls = type(guard.instance)
    return next((ref for ref, value in guard.refs.items() if value is cls), cls.__name__)


def lookup(cls: type, name: str, missing: Any = None) -> Any:
    """What an instance's lookup finds on its type: `name` in the dict of the first class
    of `cls.__mro__` that has it (`missing`: none does); never the metaclass's
    (`type.__name__` is not an instance's)."""
    for klass in cls.__mro__:
        namespace = vars(klass)
        if name in namespace:
            return namespace[name]
    return missing


def is_data_descriptor(attribute: Any) -> bool:
    return hasattr(type(attribute), "__set__") or hasattr(type(attribute), "__delete__")


def in_instance_dict(obj: Any, source: AttrSource | GenericAttrSource) -> bool:
    """Reading `source.member` of `obj` finds it in `obj.__dict__`, for any object of
    `obj`'s class whose `__dict__` holds it."""
    cls, member = type(obj), source.member
    if member == "__dict__" or not isinstance(lookup(cls, "__dict__"), types.GetSetDescriptorType):
        return False
    if isinstance(source, AttrSource) and cls.__getattribute__ is not object.__getattribute__:
        return False
    try:
        instance_dict = object.__getattribute__(obj, "__dict__")
    except AttributeError:
        return False
    return type(instance_dict) is dict and member in instance_dict and not is_data_descriptor(
        lookup(cls, member))


def dict_source(base: Source, obj: Any) -> Source:
    """The source of `obj.__dict__`: read plainly where the class reads attributes the
    standard way, with `object.__getattribute__` where it has its own hook."""
    if type(obj).__getattribute__ is object.__getattribute__:
        return AttrSource(base, "__dict__")
    return GenericAttrSource(base, "__dict__")
