"""Side effects: mutations recorded while tracing, replayed after the graph (chapter 5).

Tracing must never change the user's objects: `xs.append(t)` on an input list
cannot append anything while tracing, because the traced code only *describes*
what will happen. So a mutation makes a new version of the object's tracker
(trackers are immutable), and `SideEffects` remembers it:

- `mutate(new)` replaces every older version held by the translators with `new`
  (`OutputGraph.replace_all`) and, if the object existed before the frame (it
  has a source), records that it must be *replayed*;
- `store_global` records `global w; w = ...`;
- after the graph runs, `codegen_replay` emits bytecode that applies the final
  state of each mutated object once: `xs[:] = [...]`, `replace_entries(d, {...})`,
  `obj.attr = v`, `cell.cell_contents = v`, `STORE_GLOBAL w`. It first reads
  everything the writes will use (`PyCodegen.preload`), so that no write changes
  what a later one reads: after `xs.insert(0, t)`, an item still read as
  `L['xs'][1]` must be read before `xs[:] = ...` runs.

The table also remembers every real object the builder wrapped, by identity, so
that one Python object always has one tracker (`existing_variable`).

Compare with TorchDynamo: `torch/_dynamo/side_effects.py` (`SideEffects`,
`AttributeMutationExisting`, `codegen_update_mutated`, `codegen_save_tempvars`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from minidynamo.exc import UNSUPPORTED_MUTATION, InternalError, graph_break
from minidynamo.sources import LocalCellSource, Source
from minidynamo.variables import (
    CellVariable,
    ConstDictVariable,
    ListVariable,
    NNModuleVariable,
    SetVariable,
    UserDefinedDictVariable,
    UserDefinedObjectVariable,
    UserDefinedSequenceVariable,
    VariableTracker,
    replace_version,
)
from minidynamo.variables.base import TrackerDict
from minidynamo.variables.dicts import DictPartVariable
from minidynamo.variables.iterators import IteratorVariable
from minidynamo.variables.lists import DequeVariable, ListPartVariable

if TYPE_CHECKING:
    from minidynamo.codegen import PyCodegen
    from minidynamo.output_graph import OutputGraph


class SideEffects:
    """The mutable objects seen while tracing, their newest versions, and pending writes."""

    def __init__(self, output: OutputGraph) -> None:
        self.output = output
        # object_id -> newest tracker; a TrackerDict knows which of them hold an object
        self.latest_versions: dict[int, VariableTracker] = TrackerDict()
        # id(value) -> (value, tracker); holding the value keeps its id from being reused
        self.known_values: dict[int, tuple[Any, VariableTracker]] = {}
        self.mutated: set[int] = set()  # object_ids of pre-existing objects to replay
        self.global_writes: dict[tuple[int, str], tuple[dict[str, Any], VariableTracker]] = {}
        # (a tensor input's source, attribute name) -> its new value: `x.tag = 3`
        self.tensor_attribute_writes: dict[tuple[Source, str], VariableTracker] = {}

    def clear(self) -> None:
        """Forget every object and write (the trace is over: `OutputGraph.cleanup`)."""
        self.latest_versions.clear()
        self.known_values.clear()
        self.mutated.clear()
        self.global_writes.clear()
        self.tensor_attribute_writes.clear()

    # -- identity of real objects ---------------------------------------------

    def existing_variable(self, value: Any) -> VariableTracker | None:
        """The tracker already built for this very object (tensors and mutables), if any."""
        known = self.known_values.get(id(value))
        if known is None:
            return None
        return self.latest(known[1])

    def track_existing(self, value: Any, variable: VariableTracker) -> VariableTracker:
        """Remember the tracker of a real object (keeping the object alive meanwhile)."""
        self.known_values[id(value)] = (value, variable)
        if variable.object_id is not None:
            self.latest_versions[variable.object_id] = variable
        return variable

    def dict_was_read(self, variable: VariableTracker) -> bool:
        """Whether the real object behind `variable` had its `__dict__` read as a tracker
        in this trace (read without running any code of the object's class)."""
        real = getattr(variable, "value", None)  # (no truth test: it could run user code)
        if real is None:
            real = getattr(variable, "module", None)
        if real is None or type(real).__getattribute__ is not object.__getattribute__:
            return False
        instance_dict = getattr(real, "__dict__", None)
        return instance_dict is not None and id(instance_dict) in self.known_values

    def is_written(self, value: Any) -> bool:
        """Whether the trace wrote to this real object (a dict: `vars(o)['a'] = 1`), to
        be replayed after the graph: whoever reads it another way must not trust it."""
        known = self.known_values.get(id(value))
        return known is not None and known[0] is value and known[1].object_id in self.mutated

    def track_new(self, variable: VariableTracker) -> None:
        """Remember an object created while tracing (its versions are looked up by id)."""
        self.latest_versions[variable.object_id] = variable

    def latest(self, variable: VariableTracker) -> VariableTracker:
        """The newest version of a mutable object's tracker (others are returned as is)."""
        if variable.object_id is None:
            return variable
        return self.latest_versions.get(variable.object_id, variable)

    # -- recording mutations ------------------------------------------------------

    def mutate(self, new: VariableTracker) -> None:
        """`new` is the next version of its object: use it everywhere from now on."""
        if new.object_id is None:
            raise InternalError(f"{new} is not a mutable object")
        self.latest_versions[new.object_id] = new
        if new.source is not None and not isinstance(new, IteratorVariable):
            if type(new) not in REPLAYS:
                graph_break(UNSUPPORTED_MUTATION, f"mutating {new} from outside the frame")
            if self.dict_was_read(new):
                # `d = vars(o); o.b = 5; d['b']`: the dict's tracker would not see it
                graph_break(UNSUPPORTED_MUTATION, f"writing an attribute of {new.source.name()} "
                            "after reading its __dict__")
            self.mutated.add(new.object_id)
        self.output.replace_all(new)

    def store_global(self, f_globals: dict[str, Any], name: str, value: VariableTracker) -> None:
        self.global_writes[(id(f_globals), name)] = (f_globals, value)

    def load_global(self, f_globals: dict[str, Any], name: str) -> VariableTracker | None:
        entry = self.global_writes.get((id(f_globals), name))
        return entry[1] if entry else None

    def store_tensor_attribute(self, source: Source, name: str, value: VariableTracker) -> None:
        """`x.tag = value` on a tensor from outside the frame: replayed after the graph."""
        self.tensor_attribute_writes[(source, name)] = value

    def load_tensor_attribute(self, source: Source, name: str) -> VariableTracker | None:
        return self.tensor_attribute_writes.get((source, name))

    def is_empty(self) -> bool:
        """No mutation to replay after the graph."""
        return not self.mutated and not self.global_writes and not self.tensor_attribute_writes

    def replace_in_pending_writes(self, new: VariableTracker) -> None:
        """Global writes hold trackers too: keep them at their newest versions."""
        for key, (f_globals, value) in list(self.global_writes.items()):
            self.global_writes[key] = (f_globals, replace_version(value, new))
        for key, value in list(self.tensor_attribute_writes.items()):
            self.tensor_attribute_writes[key] = replace_version(value, new)

    # -- replaying after the graph ----------------------------------------------

    def codegen_replay(self, codegen: PyCodegen) -> None:
        """Emit the bytecode that applies every recorded mutation, once: the reads first."""
        self.codegen_preload(codegen)
        for object_id, variable in self.latest_versions.items():  # in the order first seen
            if object_id in self.mutated:
                REPLAYS[type(variable)](codegen, variable)
        for (_, name), (f_globals, value) in self.global_writes.items():
            codegen(value)
            codegen.store_global(f_globals, name)
        for (source, name), value in self.tensor_attribute_writes.items():
            codegen(value)
            codegen.load_source(source)
            codegen.append("STORE_ATTR", argval=name)

    def codegen_preload(self, codegen: PyCodegen) -> None:
        """Read what the writes will use (the objects written to, their new contents)."""
        codegen.preload_sources([*(variable.source for variable in self.replayed()),
                                 *(source for source, _ in self.tensor_attribute_writes)])
        codegen.preload(self.written_values())

    def replayed(self) -> list[VariableTracker]:
        """The newest versions of the objects from outside the frame that are mutated."""
        return [variable for object_id, variable in self.latest_versions.items()
                if object_id in self.mutated]

    def written_values(self) -> list[VariableTracker]:
        """What the replay writes: the new contents of mutated objects, global values."""
        contents = [getattr(variable, name) for variable in self.replayed()
                    for name in variable.children_fields]
        return contents + [value for _, value in self.global_writes.values()] + list(
            self.tensor_attribute_writes.values())


def _replay_list(codegen: PyCodegen, variable: ListVariable) -> None:
    """`xs[:] = [new items]`: same list object, new contents."""
    variable.reconstruct(codegen)  # BUILD_LIST of the items, not the source
    codegen.load_source(variable.source)
    codegen.load_const(None)
    codegen.load_const(None)
    codegen.append("BUILD_SLICE", arg=2)
    codegen.append("STORE_SUBSCR")


def _replay_list_part(codegen: PyCodegen, variable: ListPartVariable) -> None:
    """`list.__setitem__(xs, slice(None), [new items])` for the items of a list
    subclass's instance: the builtin's, not an override of the subclass."""
    codegen.load_callable(list.__setitem__)
    codegen.load_source(variable.source)
    codegen.load_const(None)
    codegen.load_const(None)
    codegen.append("BUILD_SLICE", arg=2)
    variable.reconstruct(codegen)  # BUILD_LIST of the items, not the source
    codegen.call_function(3)
    codegen.append("POP_TOP")


def _replay_clear_update(codegen: PyCodegen, variable: VariableTracker) -> None:
    """`replace_entries(d, {...}, keys_changed)` for a dict, `replace_members(s, {...})`
    for a set: the new contents are built first (they may be read from the object
    itself: `d["inner"]` keeps its identity), then written as the traced code changed
    them, so that an iterator over the object made before the frame sees what it would
    have seen (an OrderedDict's dies once a key came or went, and only then)."""
    is_dict = isinstance(variable, ConstDictVariable)
    codegen.load_callable(replace_entries if is_dict else replace_members)
    codegen.load_source(variable.source)
    variable.reconstruct(codegen)  # BUILD_MAP / BUILD_SET of the items
    if is_dict:
        codegen.load_const(variable.key_changes > 0)
    codegen.call_function(3 if is_dict else 2)
    codegen.append("POP_TOP")


def replace_entries(d: dict, entries: dict, keys_changed: bool) -> None:
    """Runs in generated code: `d` holds `entries`, in their order, changed as the traced
    code changed it, so that its layout and an iterator made before the call end as in
    eager Python. Without a key added, removed or moved while tracing, the values are
    assigned in place (an OrderedDict's iterators live on). Otherwise the keys that went
    are deleted; so are those that no longer come in their old order (removed and put
    back, or moved by `move_to_end`: at the end now), and every key from the first of
    those on is assigned again, at the end."""
    if not keys_changed:
        d.update(entries)
        return
    for key in [key for key in d if key not in entries]:
        del d[key]
    order = list(entries)
    for key in order[in_order(list(d), order):]:
        d.pop(key, None)
    d.update(entries)


def in_order(current: list, wanted: list) -> int:
    """How many of `wanted`'s first keys come in `current` in the same order."""
    position = 0
    for count, key in enumerate(wanted):
        try:
            position = current.index(key, position) + 1
        except ValueError:
            return count
    return len(wanted)


def replace_members(s: set, members: set) -> None:
    """Runs in generated code: `s` holds `members`, the others removed, the new added."""
    s.intersection_update(members)
    s.update(members)


def _replay_deque(codegen: PyCodegen, variable: DequeVariable) -> None:
    """`replace_deque_items(q, [items], state_moved)`: a deque has no slice assignment."""
    codegen.load_callable(replace_deque_items)
    codegen.load_source(variable.source)
    for item in variable.items:
        codegen(item)
    codegen.append("BUILD_LIST", arg=len(variable.items))
    codegen.load_const(variable.state != 0)
    codegen.call_function(3)
    codegen.append("POP_TOP")


def replace_deque_items(q: Any, items: list, state_moved: bool) -> None:
    """Runs in generated code: `q` holds `items`. Changed only by item assignments and
    `reverse()` while tracing (its `state` unmoved), it is assigned item by item, so an
    iterator over it lives on, as in eager Python; otherwise emptied and extended."""
    if state_moved or len(q) != len(items):
        q.clear()
        q.extend(items)
        return
    for index, item in enumerate(items):
        q[index] = item


def _replay_dict_part(codegen: PyCodegen, variable: DictPartVariable) -> None:
    """`replace_base_entries(d, base, {...})` for the dict part of a dict subclass's instance."""
    codegen.load_callable(replace_base_entries)
    codegen.load_source(variable.source)
    codegen.load_object(variable.dict_class)
    variable.clone(dict_class=dict).reconstruct(codegen)  # BUILD_MAP of the entries
    codegen.call_function(3)
    codegen.append("POP_TOP")


def replace_base_entries(d: dict, base: type, entries: dict) -> None:
    """Runs in generated code: `d` holds `entries`, set with its builtin base's methods."""
    base.clear(d)
    for key, value in entries.items():
        base.__setitem__(d, key, value)


def _replay_attributes(codegen: PyCodegen, variable: VariableTracker) -> None:
    """`obj.name = value` for every attribute written while tracing."""
    for name, value in variable.attributes.items():
        codegen(value)
        codegen.load_source(variable.source)
        codegen.append("STORE_ATTR", argval=name)


def _replay_object_attributes(codegen: PyCodegen, variable: UserDefinedObjectVariable) -> None:
    """As `_replay_attributes`, but through `object.__setattr__(obj, name, value)` for a
    class with its own `__setattr__`: its traced run already chose what to store, and
    running it again would repeat its side effects."""
    if variable.cls.__setattr__ is object.__setattr__:
        return _replay_attributes(codegen, variable)
    for name, value in variable.attributes.items():
        codegen.load_callable(object.__setattr__)
        codegen.load_source(variable.source)
        codegen.load_const(name)
        codegen(value)
        codegen.call_function(3)
        codegen.append("POP_TOP")


def _replay_cell(codegen: PyCodegen, variable: CellVariable) -> None:
    """STORE_DEREF for the frame's own cells, `cell.cell_contents = v` for others."""
    if variable.contents is None:
        graph_break(UNSUPPORTED_MUTATION, "deleting a closure variable")
    codegen(variable.contents)
    if isinstance(variable.source, LocalCellSource):
        codegen.append("STORE_DEREF", argval=variable.source.local_name)
    else:
        codegen.load_source(variable.source)
        codegen.append("STORE_ATTR", argval="cell_contents")


REPLAYS: dict[type, Callable[[PyCodegen, Any], None]] = {
    ListVariable: _replay_list,
    ListPartVariable: _replay_list_part,
    DequeVariable: _replay_deque,
    ConstDictVariable: _replay_clear_update,
    DictPartVariable: _replay_dict_part,
    UserDefinedDictVariable: _replay_object_attributes,
    UserDefinedSequenceVariable: _replay_object_attributes,
    SetVariable: _replay_clear_update,
    UserDefinedObjectVariable: _replay_object_attributes,
    NNModuleVariable: _replay_attributes,
    CellVariable: _replay_cell,
}
