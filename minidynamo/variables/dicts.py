"""Dicts and sets (chapter 3).

A dict's keys must be known while tracing so that `d["scale"]` can pick the right
value tracker: each key is the Python value `keys.as_key` gives (a constant itself,
or an `ObjectKey` for a module, a user object, a graph input tensor, a frozen
dataclass); the values can be anything, tensors included. A set holds keys the same
way. Like lists, both are mutable: a write makes a new version that replaces the old
one everywhere and is replayed after the graph if the dict came from outside.

Compare with TorchDynamo: `torch/_dynamo/variables/dicts.py` (`ConstDictVariable`,
`DictKeysVariable`, ...) and `sets.py`, which also allow tensors and other
hashable trackers as keys.
"""

from __future__ import annotations

import collections
import itertools
import types
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence

from minidynamo.exc import (
    UNSUPPORTED_MUTATION,
    UNSUPPORTED_OPERATOR,
    ObservedException,
    graph_break,
    raise_observed,
)
from minidynamo.sources import LITERAL_TYPES
from minidynamo.variables.base import (
    VariableTracker,
    bound_method_getattr,
    new_object_id,
)
from minidynamo.variables.constant import ConstantVariable, constant
from minidynamo.variables.iterators import ListIteratorVariable, container_iterator
from minidynamo.variables.keys import ObjectKey, as_key, is_constant_key, key_variable
from minidynamo.variables.lists import ListVariable, TupleVariable

if TYPE_CHECKING:
    from minidynamo.codegen import PyCodegen
    from minidynamo.translator.base import InstructionTranslatorBase as Translator


@dataclass(frozen=True, eq=False, repr=False)
class ConstDictVariable(VariableTracker):
    """A dict from constant keys to trackers. Writes make new versions.

    `dict_class` is dict, collections.OrderedDict or collections.defaultdict; a
    defaultdict's `default_factory` is a tracker called for a missing key.

    A dict from outside guards its keys as far as the trace reads them, as TorchDynamo's
    does: `d[k]`, `d.get(k)` and `k in d` depend on that key alone (`entry`: a
    DICT_CONTAINS guard), anything else that reads `items` (a loop, `len`, `keys()`, a
    write, rebuilding the dict) on every key in order (`keys_guard`, the DICT_KEYS
    guard the builder prepared, added on that first read). So a dict read by key
    does not recompile when an unrelated key is added.
    """

    entries: dict[Any, VariableTracker]
    dict_class: type = dict
    default_factory: VariableTracker | None = None
    # adds the DICT_KEYS guard of a dict from outside, on the first read of all its keys;
    # None once they are guarded (a written version) or with nothing to guard
    keys_guard: Callable[[], None] | None = None
    # how many writes added, removed or moved a key (an OrderedDict's iterators raise
    # once it changed, as they compare CPython's `od_state`, which `move_to_end` moves too)
    key_changes: int = 0
    # what this dict is the storage of, when a write through it must not be replayed:
    # a module's globals (`globals()`, `vars(module)`: generated code installs its own
    # names there), an existing object's attributes (`vars(obj)`: its tracker would not
    # see the write); such a write breaks the graph and runs natively
    storage_of: str | None = None
    children_fields = ("entries", "default_factory")
    builtin_lookup = False  # guards read the dict at `source` with dict's own methods

    @property
    def items(self) -> dict[Any, VariableTracker]:
        """Every entry, in order: whoever reads them depends on all the keys."""
        self.guard_all_keys()
        return self.entries

    def guard_all_keys(self) -> None:
        """Add the prepared DICT_KEYS guard (nothing for a dict made in the frame)."""
        if self.keys_guard is not None:
            self.keys_guard()

    def entry(self, tx: Translator, key: Any, *, read: bool = True) -> VariableTracker | None:
        """The value at one key (None when absent), read as `d[key]`, `d.get(key)` and
        `key in d` (`read=False`) read it: for a dict from outside, guarded as present (or
        absent) only. A key the guard cannot spell as a literal guards all the keys."""
        value = self.entries.get(key)
        if self.keys_guard is not None:
            if isinstance(key, LITERAL_TYPES):
                tx.output.guards.add("DICT_CONTAINS", self.source, key, present=value is not None,
                                     builtin=self.builtin_lookup, read=read,
                                     plain=self.dict_class is dict)
            elif value is None or not isinstance(key, ObjectKey):
                self.guard_all_keys()
                self.keep_keys_distinct(tx)
        return value

    def keep_keys_distinct(self, tx: Translator) -> None:
        """Keys from outside that hash by identity (`list(dict.keys(d))[0]`), all ruled
        out by a lookup: the aliasing guards keep them distinct from the key looked up.
        (A key found is the looked-up object itself: its two sources get a
        DUPLICATE_INPUT guard.)"""
        for key in self.entries:
            if isinstance(key, ObjectKey) and key.variable.source is not None:
                tx.output.identity_keys.add(key.variable.source)

    def python_type(self) -> type:
        return self.dict_class

    def as_python_constant(self) -> Any:
        if self.dict_class is not dict or not all(map(is_constant_key, self.items)):
            return super().as_python_constant()
        return {key: value.as_python_constant() for key, value in self.items.items()}

    def is_python_constant(self) -> bool:
        """As a list's: each value asked in order; a symbol is not specialized to answer."""
        return (self.dict_class is dict and all(map(is_constant_key, self.items))
                and all(value.is_python_constant() for value in self.items.values()))

    def as_proxy(self) -> Any:
        return {key: value.as_proxy() for key, value in self.items.items()}

    def unpack_var_sequence(self, tx: Translator) -> list[VariableTracker]:
        return [key_variable(key) for key in self.items]

    def live_length(self) -> int:
        return len(self.items)

    def item_at(self, index: int) -> VariableTracker:
        """The key at `index`, in the order a loop over the dict reads them."""
        return key_variable(next(itertools.islice(self.items, index, None)))

    def keys(self, tx: Translator) -> list[Any]:
        """The keys, in order (what an iterator compares between its steps)."""
        return list(self.items)

    def get_iterator(self, tx: Translator) -> VariableTracker:
        """A dict's iterator holds the dict: it raises if the dict changes size."""
        return dict_iterator(tx, self, self, self.dict_class(), backwards=False)

    def reversed_iterator(self, tx: Translator) -> VariableTracker:
        """`reversed(d)`: from the last key down, holding the dict as `iter(d)` does."""
        return dict_iterator(tx, self, self, self.dict_class(), backwards=True)

    var_getattr = bound_method_getattr

    def mutated(self, tx: Translator, items: dict[Any, VariableTracker]) -> None:
        if self.storage_of is not None:
            graph_break(UNSUPPORTED_MUTATION, f"writing {self.storage_of} through their dict")
        self.guard_all_keys()  # a write is replayed as the whole dict
        key_changes = self.key_changes + (list(items) != list(self.entries))
        tx.output.side_effects.mutate(self.clone(entries=items, keys_guard=None,
                                                 key_changes=key_changes))

    def reconstruct(self, codegen: PyCodegen) -> None:
        if self.dict_class is dict and codegen.holds_itself(self):  # `d['self'] = d`
            return codegen.build_holding_itself(self, "BUILD_MAP", lambda: self.build(codegen))
        self.build(codegen)

    def build(self, codegen: PyCodegen) -> None:
        if self.dict_class is not dict:  # OrderedDict({...}) / defaultdict(factory, {...})
            codegen.load_callable(self.dict_class)
            if self.default_factory is not None:
                codegen(self.default_factory)
        for key, value in self.items.items():
            codegen(key_variable(key))
            codegen(value)
        codegen.append("BUILD_MAP", arg=len(self.items))
        if self.dict_class is not dict:
            codegen.call_function(2 if self.default_factory is not None else 1)

    # -- reading ---------------------------------------------------------------

    def dunder_len(self, tx: Translator) -> VariableTracker:
        return ConstantVariable(len(self.items))

    def dunder_getitem(self, tx: Translator, key: VariableTracker) -> VariableTracker:
        python_key = as_key(tx, key)
        value = self.entry(tx, python_key)
        if value is not None:
            return value
        if self.default_factory is None:
            raise_observed(KeyError, python_key)
        value = self.default_factory.call_function(tx, [], {})  # defaultdict: make and store
        self.mutated(tx, {**self.items, python_key: value})
        return value

    def method_move_to_end(
        self, tx: Translator, key: VariableTracker, last: VariableTracker | None = None
    ) -> VariableTracker:
        python_key = as_key(tx, key)
        rest = {k: v for k, v in self.items.items() if k != python_key}
        moved = {python_key: self.items[python_key]}
        at_end = last is None or last.as_python_constant()
        self.mutated(tx, {**rest, **moved} if at_end else {**moved, **rest})
        return ConstantVariable(None)

    def dunder_contains(self, tx: Translator, key: VariableTracker) -> VariableTracker:
        return ConstantVariable(self.entry(tx, as_key(tx, key), read=False) is not None)

    def method_get(
        self, tx: Translator, key: VariableTracker, default: VariableTracker | None = None
    ) -> VariableTracker:
        return self.entry(tx, as_key(tx, key)) or default or ConstantVariable(None)

    def method_keys(self, tx: Translator) -> VariableTracker:
        return DictViewVariable(self, "keys")

    def method_values(self, tx: Translator) -> VariableTracker:
        return DictViewVariable(self, "values")

    def method_items(self, tx: Translator) -> VariableTracker:
        return DictViewVariable(self, "items")

    def method_copy(self, tx: Translator) -> VariableTracker:
        return self.clone(entries=dict(self.items), source=None, object_id=new_object_id(),
                          keys_guard=None)

    # -- writing ---------------------------------------------------------------

    def dunder_init(
        self, tx: Translator, other: VariableTracker | None = None, **kwargs: VariableTracker
    ) -> VariableTracker:
        """`dict.__init__(d, ...)` (a subclass's `super().__init__(pairs)`): as `update`."""
        return self.method_update(tx, other, **kwargs)

    def dunder_setitem(
        self, tx: Translator, key: VariableTracker, value: VariableTracker
    ) -> VariableTracker:
        self.mutated(tx, {**self.items, as_key(tx, key): value})
        return ConstantVariable(None)

    def dunder_delitem(self, tx: Translator, key: VariableTracker) -> VariableTracker:
        python_key = as_key(tx, key)
        if python_key not in self.items:
            raise_observed(KeyError, python_key)
        self.mutated(tx, {k: v for k, v in self.items.items() if k != python_key})
        return ConstantVariable(None)

    def method_update(
        self, tx: Translator, other: VariableTracker | None = None, **kwargs: VariableTracker
    ) -> VariableTracker:
        added = dict_items(tx, other) if other is not None else {}  # may run user code
        current = tx.output.side_effects.latest(self)  # ... that mutated this dict
        current.mutated(tx, {**current.items, **added, **kwargs})
        return ConstantVariable(None)

    def method_pop(
        self, tx: Translator, key: VariableTracker, default: VariableTracker | None = None
    ) -> VariableTracker:
        python_key = as_key(tx, key)
        value = self.entry(tx, python_key)
        if value is None:
            if default is None:
                raise_observed(KeyError, python_key)
            return default
        self.mutated(tx, {k: v for k, v in self.items.items() if k != python_key})
        return value

    def method_setdefault(
        self, tx: Translator, key: VariableTracker, default: VariableTracker | None = None
    ) -> VariableTracker:
        python_key = as_key(tx, key)
        present = self.entry(tx, python_key)
        if present is not None:
            return present
        value = default or ConstantVariable(None)
        self.mutated(tx, {**self.items, python_key: value})
        return value

    def method_clear(self, tx: Translator) -> VariableTracker:
        self.mutated(tx, {})
        return ConstantVariable(None)

    def method_popitem(self, tx: Translator, last: VariableTracker | None = None) -> VariableTracker:
        """The last pair (`OrderedDict.popitem(last=False)`: the first), removed."""
        ordered = issubclass(self.dict_class, collections.OrderedDict)
        if last is not None and not ordered:
            raise_observed(TypeError, "dict.popitem() takes no arguments (1 given)")
        if not self.items:
            raise_observed(KeyError, "dictionary is empty" if ordered else
                           "popitem(): dictionary is empty")
        keys = list(self.items)
        key = keys[-1] if last is None or last.as_python_constant() else keys[0]
        value = self.items[key]
        self.mutated(tx, {k: v for k, v in self.items.items() if k != key})
        return TupleVariable((key_variable(key), value))

    def dunder_or(self, tx: Translator, other: VariableTracker) -> VariableTracker:
        """`d | other`: a new dict of d's type with other's entries over d's."""
        other = other.realize()
        if not isinstance(other, ConstDictVariable):  # dict's method declines; a builtin
            return set_operator_declined(self, other, "__or__")  # on the right does too
        items = {**self.items, **tx.output.side_effects.latest(other).items}
        return self.clone(entries=items, source=None, object_id=new_object_id(), keys_guard=None)

    def dunder_ior(self, tx: Translator, other: VariableTracker) -> VariableTracker:
        """`d |= other`: d updated in place, d itself the result."""
        self.method_update(tx, other)
        return tx.output.side_effects.latest(self)

    def dunder_eq(self, tx: Translator, other: VariableTracker) -> VariableTracker:
        """Equality of dicts of constants; two OrderedDicts compare their order too."""
        other = tx.output.side_effects.latest(other.realize())
        if not isinstance(other, ConstDictVariable):
            return constant(False)
        values = [*self.items.values(), *other.items.values()]
        if not all(value.is_python_constant() for value in values):
            graph_break(UNSUPPORTED_OPERATOR, "comparing dicts whose values are not constants")
        mine, theirs = ({key: value.as_python_constant() for key, value in part.items.items()}
                        for part in (self, other))
        ordered = collections.OrderedDict
        if issubclass(self.dict_class, ordered) and issubclass(other.dict_class, ordered):
            return constant(ordered(mine) == ordered(theirs))
        return constant(mine == theirs)

    def __repr__(self) -> str:
        return "ConstDictVariable()"


@dataclass(frozen=True, eq=False, repr=False)
class DictPartVariable(ConstDictVariable):
    """The entries of an instance of a dict subclass (`UserDefinedDictVariable.contents`):
    a dict of the builtin base, replayed with that base's own methods so that no
    override of the subclass runs (`ModelOutput.update` raises)."""

    builtin_lookup = True

    def __repr__(self) -> str:
        return f"DictPartVariable({self.dict_class.__name__})"


@dataclass(frozen=True, eq=False, repr=False)
class InstanceDictVariable(ConstDictVariable):
    """`obj.__dict__` (or `vars(obj)`) of an object made while tracing: a view of the
    object's attributes, as in CPython, where the instance dict is where they live.

    The view holds the object (`owner`) and takes its entries from it, so a new version
    of the object (`obj.size = 3`) is a new version of the view; a write through the view
    (`self.__dict__[name] = value`, a lazy attribute caching its value) is a new version
    of the object with that attribute, which every later `obj.name` finds."""

    owner: Any = None  # the UserDefinedObjectVariable whose attributes these are
    children_fields = ("owner",)  # the entries are the owner's: nothing else to replace

    def __post_init__(self) -> None:
        object.__setattr__(self, "entries", self.owner.instance_dict())

    @classmethod
    def of(cls, owner: VariableTracker) -> InstanceDictVariable:
        return cls({}, owner=owner)

    def is_mutable(self) -> bool:
        """A view of a mutable object: `vars(c)['k'] = 3` is a write to `c`, never folded
        on a copy of its constant entries (the view itself has no object_id)."""
        return True

    def mutated(self, tx: Translator, items: dict[Any, VariableTracker]) -> None:
        if not all(isinstance(name, str) for name in items):
            graph_break(UNSUPPORTED_MUTATION, "a key that is not a string in obj.__dict__")
        owner = tx.output.side_effects.latest(self.owner)
        owner.replace_instance_dict(tx, items)

    def method_copy(self, tx: Translator) -> VariableTracker:
        return ConstDictVariable(dict(self.items), object_id=new_object_id())  # a plain dict

    def dunder_or(self, tx: Translator, other: VariableTracker) -> VariableTracker:
        return self.method_copy(tx).dunder_or(tx, other)

    def reconstruct(self, codegen: PyCodegen) -> None:
        """The object's own dict: `obj.__dict__`, so that writes to it are writes to `obj`."""
        codegen(self.owner)
        codegen.append("LOAD_ATTR", argval="__dict__")

    def __repr__(self) -> str:
        return "InstanceDictVariable()"


@dataclass(frozen=True, eq=False, repr=False)
class MappingProxyVariable(ConstDictVariable):
    """`types.MappingProxyType(d)`: a read-only view of a dict, such as a class's
    `__dict__` or a dataclass field's `metadata`. It is read as the dict is (its keys
    guarded, its values lazily, each from its own source); writing through it is
    Python's TypeError, and it has no mutating methods (`bound_method_getattr` asks the
    proxy's type)."""

    def python_type(self) -> type:
        return types.MappingProxyType

    def as_python_constant(self) -> Any:
        return types.MappingProxyType(super().as_python_constant())

    def mutated(self, tx: Translator, items: dict[Any, VariableTracker]) -> None:
        raise_observed(TypeError, "'mappingproxy' object does not support item assignment")

    def method_copy(self, tx: Translator) -> VariableTracker:
        return ConstDictVariable(dict(self.items), object_id=new_object_id())  # a plain dict

    def dunder_or(self, tx: Translator, other: VariableTracker) -> VariableTracker:
        return self.method_copy(tx).dunder_or(tx, other)

    def reconstruct(self, codegen: PyCodegen) -> None:
        codegen.load_callable(types.MappingProxyType)
        super().reconstruct(codegen)  # BUILD_MAP of the entries
        codegen.call_function(1)

    def __repr__(self) -> str:
        return "MappingProxyVariable()"


def dict_items(tx: Translator, other: VariableTracker) -> dict[Any, VariableTracker]:
    """The entries of a dict tracker, or of a sequence of (key, value) pairs."""
    other = other.realize()
    if isinstance(other, ConstDictVariable):
        return dict(other.items)
    contents = getattr(other, "contents", None)
    if isinstance(contents, DictPartVariable):  # a dict subclass, as CPython's dict_merge:
        if other.python_type().__iter__ is dict.__iter__:  # its entries, directly
            return dict(tx.output.side_effects.latest(contents).items)
        keys = other.call_method(tx, "keys", [], {}).unpack_var_sequence(tx)  # or its methods
        return {as_key(tx, key): other.call_method(tx, "__getitem__", [key], {}) for key in keys}
    entries = {}
    for index, pair in enumerate(other.unpack_var_sequence(tx)):
        try:
            key_value = pair.unpack_var_sequence(tx)
        except ObservedException:  # `dict([1])`, in CPython's words
            raise_observed(TypeError, f"cannot convert dictionary update sequence element "
                           f"#{index} to a sequence")
        if len(key_value) != 2:
            raise_observed(ValueError, f"dictionary update sequence element #{index} has "
                           f"length {len(key_value)}; 2 is required")
        entries[as_key(tx, key_value[0])] = key_value[1]
    return entries


def _dict_kind(dict_class: type) -> str:
    """Which RuntimeError a dict's iterator raises: an OrderedDict's words it its own way."""
    return "OrderedDict" if issubclass(dict_class, collections.OrderedDict) else "dict"


def dict_iterator(tx: Translator, iterated: VariableTracker, dict_variable: ConstDictVariable,
                  sample: Any, backwards: bool) -> VariableTracker:
    """`iter()` or `reversed()` of a dict or of one of its views (`iterated`): it holds
    what it iterates; over a dict the trace may not change, over a copy of its items."""
    if dict_variable.is_mutable():
        kind = _dict_kind(dict_variable.dict_class)
        return container_iterator(tx, iterated, kind, sample, backwards=backwards)
    items = iterated.unpack_var_sequence(tx)
    return ListIteratorVariable(tuple(items[::-1] if backwards else items), 0,
                                object_id=new_object_id())


@dataclass(frozen=True, eq=False, repr=False)
class DictViewVariable(VariableTracker):
    """`d.keys()`, `d.values()`, `d.items()`: live views of a dict tracker."""

    dict_variable: ConstDictVariable
    kind: str  # "keys", "values" or "items"
    children_fields = ("dict_variable",)

    def python_type(self) -> type:
        return type(getattr({}, self.kind)())

    def live_length(self) -> int:
        return len(self.dict_variable.items)

    def item_at(self, index: int) -> VariableTracker:
        key, value = next(itertools.islice(self.dict_variable.items.items(), index, None))
        if self.kind == "keys":
            return key_variable(key)
        return value if self.kind == "values" else TupleVariable((key_variable(key), value))

    def keys(self, tx: Translator) -> list[Any]:
        return self.dict_variable.keys(tx)

    @property
    def key_changes(self) -> int:
        return self.dict_variable.key_changes

    def get_iterator(self, tx: Translator) -> VariableTracker:
        sample = getattr(self.dict_variable.dict_class(), self.kind)()
        return dict_iterator(tx, self, self.dict_variable, sample, backwards=False)

    def reversed_iterator(self, tx: Translator) -> VariableTracker:
        """`reversed(d.values())`: a dict's views are reversible since Python 3.8."""
        sample = getattr(self.dict_variable.dict_class(), self.kind)()
        return dict_iterator(tx, self, self.dict_variable, sample, backwards=True)

    def unpack_var_sequence(self, tx: Translator) -> list[VariableTracker]:
        entries = self.dict_variable.items
        if self.kind == "keys":
            return [key_variable(key) for key in entries]
        if self.kind == "values":
            return list(entries.values())
        return [TupleVariable((key_variable(key), value)) for key, value in entries.items()]

    var_getattr = bound_method_getattr

    def dunder_len(self, tx: Translator) -> VariableTracker:
        return ConstantVariable(len(self.dict_variable.items))

    def dunder_contains(self, tx: Translator, value: VariableTracker) -> VariableTracker:
        if self.kind == "keys":
            return self.dict_variable.dunder_contains(tx, value)
        return ListVariable(tuple(self.unpack_var_sequence(tx))).dunder_contains(tx, value)

    def dunder_eq(self, tx: Translator, other: VariableTracker) -> VariableTracker:
        """`d.keys() == {"a", "b"}`: a keys view compares as the set of its keys, here on
        a real view of the same keys, so every kind of right operand compares as in Python."""
        return ConstantVariable(self._real_keys(tx) == _view_operand(tx, other))

    def dunder_ne(self, tx: Translator, other: VariableTracker) -> VariableTracker:
        return ConstantVariable(self._real_keys(tx) != _view_operand(tx, other))

    def _real_keys(self, tx: Translator) -> Any:
        if self.kind != "keys":
            graph_break(UNSUPPORTED_OPERATOR, f"comparing a dict's {self.kind}() view")
        return dict.fromkeys(tx.output.side_effects.latest(self.dict_variable).items).keys()

    def reconstruct(self, codegen: PyCodegen) -> None:
        codegen(self.dict_variable)
        codegen.append("LOAD_METHOD", argval=self.kind)
        codegen.call_function(0)  # LOAD_METHOD left the method and the dict under it

    def __repr__(self) -> str:
        return f"DictViewVariable({self.kind})"


def _view_operand(tx: Translator, other: VariableTracker) -> Any:
    """The Python value a keys view is compared with: another keys view, or a constant."""
    other = other.realize()
    if isinstance(other, DictViewVariable):
        return other._real_keys(tx)
    if not other.is_python_constant():
        graph_break(UNSUPPORTED_OPERATOR, f"comparing a dict's keys with {other}")
    return other.as_python_constant()


# Set methods that make a new value without changing the set: run on real sets of constants.
PURE_SET_METHODS = frozenset({
    "union", "intersection", "difference", "symmetric_difference", "issubset",
    "issuperset", "isdisjoint", "copy", "__or__", "__and__", "__sub__", "__xor__",
    "__eq__", "__ne__", "__le__", "__lt__", "__ge__", "__gt__",
})

# a set's methods that change it in place -> the pure method that computes what it holds
# after (`s |= t` keeps `s` the same object: every alias sees the change)
IN_PLACE_SET_METHODS = {
    "__ior__": "__or__", "__iand__": "__and__", "__isub__": "__sub__", "__ixor__": "__xor__",
    "difference_update": "difference", "intersection_update": "intersection",
    "symmetric_difference_update": "symmetric_difference",
}


@dataclass(frozen=True, eq=False, repr=False)
class SetVariable(VariableTracker):
    """A set or frozenset of hashable values (constants, classes, objects compared by
    identity). Its items are kept in the order a real set iterates them; a frozen one
    has only the methods that make a new value."""

    items: tuple[VariableTracker, ...]
    frozen: bool = False
    children_fields = ("items",)

    def python_type(self) -> type:
        return frozenset if self.frozen else set

    def keys(self, tx: Translator) -> list[Any]:
        return [as_key(tx, item) for item in self.items]

    def as_python_constant(self) -> Any:
        return self.python_type()(item.as_python_constant() for item in self.items)

    def unpack_var_sequence(self, tx: Translator) -> list[VariableTracker]:
        return list(self.items)

    def live_length(self) -> int:
        return len(self.items)

    def item_at(self, index: int) -> VariableTracker:
        return self.items[index]

    def get_iterator(self, tx: Translator) -> VariableTracker:
        """A set's iterator holds the set: it raises if the set changes size."""
        if self.frozen or not self.is_mutable():
            return super().get_iterator(tx)
        return container_iterator(tx, self, "set", set())

    def reversed_iterator(self, tx: Translator) -> VariableTracker:
        raise_observed(TypeError, f"'{self.python_type().__name__}' object is not reversible")

    var_getattr = bound_method_getattr

    def mutated(self, tx: Translator, values: set[Any]) -> VariableTracker:
        tx.output.side_effects.mutate(self.clone(items=tuple(key_variable(v) for v in values)))
        return ConstantVariable(None)

    def call_method(
        self,
        tx: Translator,
        name: str,
        args: Sequence[VariableTracker],
        kwargs: dict[str, VariableTracker],
    ) -> VariableTracker:
        """Pure set algebra runs on real sets; mutating methods are the `method_*` below."""
        if self.frozen and not hasattr(frozenset, name):
            raise_observed(AttributeError, f"'frozenset' object has no attribute {name!r}")
        if name in IN_PLACE_SET_METHODS and not self.frozen and not kwargs:
            return self.updated(tx, name, args)
        if name not in PURE_SET_METHODS or kwargs:
            return super().call_method(tx, name, args, kwargs)
        if name.startswith("__") and not is_set(args[0].realize()):
            return set_operator_declined(self, args[0].realize(), name)
        others = [set(as_key(tx, v) for v in arg.unpack_var_sequence(tx)) for arg in args]
        result = getattr(self.python_type()(self.keys(tx)), name)(*others)
        if isinstance(result, (set, frozenset)):
            return set_from_values(list(result), frozen=type(result) is frozenset)
        return constant(result)

    def reconstruct(self, codegen: PyCodegen) -> None:
        if self.frozen:
            codegen.load_callable(frozenset)
        for item in self.items:
            codegen(item)
        codegen.append("BUILD_SET", arg=len(self.items))
        if self.frozen:
            codegen.call_function(1)

    def dunder_len(self, tx: Translator) -> VariableTracker:
        return ConstantVariable(len(self.items))

    def dunder_contains(self, tx: Translator, value: VariableTracker) -> VariableTracker:
        return ConstantVariable(as_key(tx, value) in self.keys(tx))

    def updated(self, tx: Translator, name: str, args: Sequence[VariableTracker]) -> VariableTracker:
        """One of `IN_PLACE_SET_METHODS`: this set made to hold what the pure method
        computes. An operator (`s |= t`) takes only another set (with anything else,
        Python goes on to the other operand's methods: not traced) and returns this set;
        a method, None."""
        args = [arg.realize() for arg in args]
        operator_form = name.startswith("__")
        if operator_form and not all(isinstance(arg, SetVariable) for arg in args):
            graph_break(UNSUPPORTED_OPERATOR, f"set.{name} of {args[0]}, not a set")
        result = self.call_method(tx, IN_PLACE_SET_METHODS[name], args, {})
        tx.output.side_effects.latest(self).mutated(tx, set(result.keys(tx)))
        return tx.output.side_effects.latest(self) if operator_form else ConstantVariable(None)

    def dunder_ior(self, tx: Translator, other: VariableTracker) -> VariableTracker:
        return self.call_method(tx, "__ior__" if not self.frozen else "__or__", [other], {})

    def dunder_iand(self, tx: Translator, other: VariableTracker) -> VariableTracker:
        return self.call_method(tx, "__iand__" if not self.frozen else "__and__", [other], {})

    def dunder_isub(self, tx: Translator, other: VariableTracker) -> VariableTracker:
        return self.call_method(tx, "__isub__" if not self.frozen else "__sub__", [other], {})

    def dunder_ixor(self, tx: Translator, other: VariableTracker) -> VariableTracker:
        return self.call_method(tx, "__ixor__" if not self.frozen else "__xor__", [other], {})

    def method_add(self, tx: Translator, value: VariableTracker) -> VariableTracker:
        values = set(self.keys(tx))
        values.add(as_key(tx, value))
        return self.mutated(tx, values)

    def method_update(self, tx: Translator, *others: VariableTracker) -> VariableTracker:
        added = [as_key(tx, v) for other in others for v in other.unpack_var_sequence(tx)]
        current = tx.output.side_effects.latest(self)  # the items may have run user code
        return current.mutated(tx, set(current.keys(tx)) | set(added))

    def method_discard(self, tx: Translator, value: VariableTracker) -> VariableTracker:
        values = set(self.keys(tx))
        values.discard(as_key(tx, value))
        return self.mutated(tx, values)

    def method_remove(self, tx: Translator, value: VariableTracker) -> VariableTracker:
        if as_key(tx, value) not in self.keys(tx):
            raise_observed(KeyError, as_key(tx, value))
        return self.method_discard(tx, value)

    def method_clear(self, tx: Translator) -> VariableTracker:
        return self.mutated(tx, set())

    def method_pop(self, tx: Translator) -> VariableTracker:
        """The first item in iteration order, as CPython's `set.pop` takes it."""
        if not self.items:
            raise_observed(KeyError, "pop from an empty set")
        first = self.items[0]
        self.mutated(tx, set(self.keys(tx)[1:]))
        return first

    def __repr__(self) -> str:
        return "SetVariable(frozen=True)" if self.frozen else "SetVariable()"


def is_set(value: VariableTracker) -> bool:
    """Whether a set operator takes `value`: a set or a frozenset (the named methods take
    any iterable, `{1} | [2]` does not)."""
    return isinstance(value, SetVariable) or (
        value.is_python_constant() and isinstance(value.as_python_constant(), (set, frozenset)))


def set_operator_declined(left: VariableTracker, right: VariableTracker, name: str,
                          ) -> VariableTracker:
    """`{1} | 'ab'`, `{1} == [1]`, `{} | 3`: set's method (dict's `|`) says
    NotImplemented to what is not a set (a dict), and a builtin value on the right has
    no reflected method for it: `==` is then False, `!=` True, anything else a
    TypeError, in CPython's words. (A user object on the right might answer: not
    traced.)"""
    from minidynamo import polyfills
    from minidynamo.variables.user_defined import UserDefinedObjectVariable

    if isinstance(right, UserDefinedObjectVariable) or right.python_type().__module__ != "builtins":
        graph_break(UNSUPPORTED_OPERATOR, f"set.{name} of {right}, not a set")
    if name in ("__eq__", "__ne__"):
        return ConstantVariable(name == "__ne__")
    symbol = polyfills.REFLECTED_OPERATORS[name][1]
    left_name, right_name = left.python_type().__name__, right.python_type().__name__
    if symbol in ("<", "<=", ">", ">="):
        raise_observed(TypeError, f"'{symbol}' not supported between instances of "
                                  f"'{left_name}' and '{right_name}'")
    raise_observed(TypeError, f"unsupported operand type(s) for {symbol}: "
                              f"'{left_name}' and '{right_name}'")


def set_from_values(values: list[Any], frozen: bool = False) -> SetVariable:
    """A new set tracker (BUILD_SET, `set(...)`, `frozenset(...)`) from keys (`as_key`),
    in real set order."""
    return SetVariable(tuple(key_variable(value) for value in set(values)), frozen=frozen,
                       object_id=new_object_id())
