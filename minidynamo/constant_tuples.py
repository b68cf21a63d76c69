"""A tuple of constants guarded as one line of the check function (chapter 9).

A conv layer's `stride`, `padding` and `dilation`, a layer norm's
`normalized_shape`: tuples of ints that the trace read item by item. Each adds a
TYPE_MATCH (`type(t) is tuple`), a LENGTH_CHECK (`len(t) == 2`) and a guard per
item (`type(t[0]) is int and t[0] == 2`), and the check fetches every item: seven
lines for `(2, 2)`. Those guards stay the readable ones, which word a failure;
the check runs them as one:

    t is ___tuple3 or (type(t) is tuple and len(t) == 2 and type(t[0]) is int and ...)

`___tuple3` is the tuple the trace saw. A module keeps the same tuple object from
call to call, so the first test holds at once and nothing else is fetched; a new
tuple (equal or not) is checked item by item, as before. The same answer either
way: the tuple seen is immutable, and every guard of the group holds for it.
"""

from __future__ import annotations

from typing import Any

from minidynamo.guards import Guard, _ref_name
from minidynamo.joint_guards import _first_reason
from minidynamo.sources import GetItemSource

ITEM_KINDS = ("EQUALS_MATCH", "ID_MATCH", "NONE_MATCH")


def constant_tuples(guards: list[Guard]) -> list[Guard]:
    """`guards` with each fully guarded tuple of constants as one guard, where its
    first guard was (the rest of its group removed)."""
    groups = tuple_groups(guards)
    joined = {id(group[0]): joint_guard(group) for group in groups}
    grouped = {id(guard) for group in groups for guard in group}
    return [joined.get(id(guard), guard) for guard in guards
            if id(guard) in joined or id(guard) not in grouped]


def tuple_groups(guards: list[Guard]) -> list[list[Guard]]:
    """The guards of each tuple whose type, length and every item are guarded, and
    nothing else of it (a tensor among its items, say, keeps them apart)."""
    tuples = {guard.source.name(): [guard] for guard in guards
              if guard.kind == "TYPE_MATCH" and type(guard.instance) is tuple}
    for guard in guards:
        source = guard.source
        if guard.kind == "LENGTH_CHECK" and source.name() in tuples:
            tuples[source.name()].append(guard)
        elif (guard.kind in ITEM_KINDS and not guard.others and isinstance(source, GetItemSource)
              and source.base.name() in tuples):
            tuples[source.base.name()].append(guard)
    complete = []
    for group in tuples.values():
        value = group[0].instance
        indexes = sorted(guard.source.index for guard in group if guard.kind in ITEM_KINDS)
        lengths = [guard for guard in group if guard.kind == "LENGTH_CHECK"]
        if value and len(lengths) == 1 and indexes == list(range(len(value))):
            complete.append(group)
    return complete


def joint_guard(group: list[Guard]) -> Guard:
    """One guard for a tuple's group: the tuple seen, or each of the group's checks."""
    first, value = group[0], group[0].instance
    refs: dict[str, Any] = {}
    for guard in group:
        refs.update(guard.refs)
    seen = _ref_name(refs, "tuple", value)
    each = " and ".join(guard.code for guard in group)
    name = first.source.name()
    return Guard("EQUALS_MATCH", first.source, f"{name} is {seen} or ({each})", refs,
                 reason=_first_reason(group), user_line=first.user_line,
                 text=f"{name} == {value!r}",
                 notes={seen: f"the tuple {value!r} the trace read; when it is that very "
                              "object, the rest of the line holds for it"})
