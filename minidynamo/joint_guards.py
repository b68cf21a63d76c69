"""The guards the check function runs in fewer steps than one line each (chapter 9).

A guard's own line is its readable form: `show_guards` prints it, and when a check
fails, the slow path evaluates the lines one by one to word the reason. The check
function of a cache hit runs faster forms, each giving the same answer:

- a TENSOR_MATCH as one call of torch's C++ `TensorGuards` (`fast_form`), and all the
  tensors of a frame as one joint call (`all_tensors`);
- the dynamism marks of every tensor compiled without marks as one line (`all_unmarked`);
- the keys absent from one dict as one `isdisjoint` (`all_absent`), and the names
  absent from a class asked of its classes' dicts rather than through `hasattr`,
  whose every miss raises and catches an AttributeError (`class_lacks`).

`CheckFunction` (guards.py) builds its function from `fast_forms(guards)`.
"""

from __future__ import annotations

from typing import Any, Callable

import torch
from torch._C._dynamo.guards import TensorGuards

from minidynamo.guards import (
    CHECK_GLOBALS, Guard, TensorFacts, _ref_name, display_name, eval_source,
)
from minidynamo.guard_reads import Reads
from minidynamo.sources import KEY_NAMES

ABSENT_KINDS = ("NOT_IN_DICT", "DICT_CONTAINS", "HASATTR")
IMMUTABLE_TYPE = 1 << 8  # Py_TPFLAGS_IMMUTABLETYPE: a builtin class, whose dict cannot change


def fast_forms(guards: list[Guard]) -> list[Guard]:
    """The guards as the check function runs them: each TENSOR_MATCH as one call of its
    C++ checker (`fast_form`), and the dynamism marks of all the tensors compiled without
    marks as one line, after the other guards (their tensors are fetched by then).

    The tensor checks are one joint call too (`all_tensors`), where the first was, and
    the keys absent from one mapping are one `isdisjoint` call (`all_absent`)."""
    guards = all_absent(guards) + lookups_unchanged(guards)
    tensors = [guard.tensor for guard in guards]
    fast = [fast_form(guard) for guard in guards]
    unmarked = [guard for guard in fast if guard.kind == "DIMENSION_DYNAMIC_MARKING"
                and guard.code.startswith("___no_marks.isdisjoint(")]
    checked = [(guard, tensor) for guard, tensor in zip(fast, tensors) if tensor is not None]
    batched = {id(guard) for guard in unmarked} if len(unmarked) > 1 else set()
    if len(checked) > 1:
        batched |= {id(guard) for guard, _ in checked}
    first = checked[0][0] if checked else None
    rest = [all_tensors(checked) if len(checked) > 1 and guard is first else guard
            for guard in fast if id(guard) not in batched or guard is first]
    if len(unmarked) > 1:
        rest.append(all_unmarked(unmarked))
    return rest


def all_absent(guards: list[Guard]) -> list[Guard]:
    """The guards that names are absent from one object as one, where the first was: for
    a plain dict (NOT_IN_DICT, and a DICT_CONTAINS that a key is not in it)
    `d.keys().isdisjoint(___absent3)`, one C call; for a class (HASATTR) its dicts asked
    (`class_lacks`). A config read for a dozen optional attributes has a dozen of each."""
    by_object: dict[tuple[str, str], list[Guard]] = {}
    for guard in guards:
        if guard.kind in ABSENT_KINDS and guard.key is not None:
            family = "HASATTR" if guard.kind == "HASATTR" else "NOT_IN_DICT"
            by_object.setdefault((family, guard.source.name()), []).append(guard)
    merged: dict[int, Guard | None] = {}
    for (family, where), members in by_object.items():
        cls = members[0].instance
        if family == "HASATTR" and isinstance(cls, type) and lookup_is_plain(cls):
            refs: dict[str, Any] = {}
            code = class_lacks(where, cls, [guard.key for guard in members], refs)
        elif len(members) > 1 and family == "NOT_IN_DICT":
            refs = {}
            name = _ref_name(refs, "absent", frozenset(guard.key for guard in members))
            code = f"{where}.keys().isdisjoint({name})"
        elif len(members) > 1:
            refs = {}
            code = f"not ({' or '.join(f'hasattr({where}, {guard.key!r})' for guard in members)})"
        else:
            continue
        merged[id(members[0])] = Guard(
            members[0].kind, members[0].source, code, refs, reason=_first_reason(members),
            user_line=members[0].user_line,
            text=" and ".join(guard.text or display_name(guard.code) for guard in members))
        merged.update((id(guard), None) for guard in members[1:])
    kept = (merged.get(id(guard), guard) for guard in guards)  # None: merged into the first
    return [guard for guard in kept if guard is not None]


def lookups_unchanged(guards: list[Guard]) -> list[Guard]:
    """For the attributes the check reads from an instance's `__dict__` (guard_reads.py),
    one guard that their classes still look them up as when compiled: each class's MRO
    is the same tuple, and each class of it that can change still lacks the names it
    lacked (one `isdisjoint` on its live keys view, shared by all its subclasses) and
    holds the same object for the others (a class default the instance shadows).
    Without it, `C.k = property(...)` would leave the check reading `o.__dict__['k']`.
    Module classes are taken as fixed, as TorchDynamo takes them (it reads a module's
    attributes from its `__dict__` unguarded): a model's check would pay a few µs a call
    for the dozens of classes of its layers, against a property put on one of them
    after compiling."""
    members = {cls: names for cls, names in Reads(guards).dict_members.items()
               if not issubclass(cls, torch.nn.Module)}
    if not members:
        return []
    refs: dict[str, Any] = {}
    parts = [f"{_ref_name(refs, 'cls', cls)}.__mro__ is {_ref_name(refs, 'mro', cls.__mro__)}"
             for cls in members]
    by_class: dict[type, set[str]] = {}
    for cls, names in members.items():
        for klass in cls.__mro__:
            if not klass.__flags__ & IMMUTABLE_TYPE:
                by_class.setdefault(klass, set()).update(names)
    for klass, names in by_class.items():
        namespace = vars(klass)
        absent = frozenset(name for name in names if name not in namespace)
        if absent:
            keys = _ref_name(refs, "class_keys", namespace.keys())
            parts.append(f"{keys}.isdisjoint({_ref_name(refs, 'absent', absent)})")
        for name in sorted(names - absent):
            value = _ref_name(refs, "obj", namespace[name])
            parts.append(f"{_ref_name(refs, 'namespace', namespace)}.get({name!r}) is {value}")
    classes = ", ".join(sorted(cls.__qualname__ for cls in members))
    return [Guard("CLASS_LOOKUP", None, " and ".join(parts), refs,
                  text=f"the classes {classes} still look up the instance attributes "
                       "the check reads from a __dict__")]


def lookup_is_plain(cls: type) -> bool:
    """Whether `hasattr(cls, name)` is answered by the dicts of the classes in the MROs of
    `cls` and of its metaclass alone: no `__getattr__` on the metaclass."""
    return getattr(type(cls), "__getattr__", None) is None


def class_lacks(where: str, cls: type, names: list[str], refs: dict[str, Any]) -> str:
    """`not hasattr(cls, name)` for each of `names`, asked of the classes' own dicts:
    the MRO is still the one seen (`cls.__mro__ == ___mro4`: the same classes), and no class of it or of
    the metaclass's MRO that can change (a builtin class cannot) has any of the names.
    Each dict is held as its live `keys()` view, so a call reads nothing to reach it. A
    miss through `hasattr` raises and catches an AttributeError, about 0.3 µs a name;
    the views answer for a dozen names in a few isdisjoint calls."""
    absent = _ref_name(refs, "absent", frozenset(names))
    parts = [f"{where}.__mro__ == {_ref_name(refs, 'mro', cls.__mro__)}"]
    for klass in (*cls.__mro__, *type(cls).__mro__):
        if not klass.__flags__ & IMMUTABLE_TYPE:
            parts.append(f"{_ref_name(refs, 'class_keys', vars(klass).keys())}.isdisjoint({absent})")
    return " and ".join(parts)


def all_tensors(checked: list[tuple[Guard, tuple]]) -> Guard:
    """One TENSOR_MATCH for many tensors: one call of a joint C++ checker (0.05 µs a
    tensor, against 0.11 µs for a call each). A joint TensorGuards also insists that its
    tensors are distinct objects, which parameters need not be (tied weights: one
    tensor under two names, one entry under torch.compile). So it covers the tensors
    that were distinct when compiled, and when it says no, the checks one by one
    decide: the joint call is a shortcut, never a different answer."""
    firsts: dict[int, tuple[Guard, torch.Tensor, TensorFacts]] = {}
    for guard, (value, example) in checked:
        firsts.setdefault(id(value), (guard, value, TensorFacts.of(value, example)))
    distinct = list(firsts.values())
    joint = TensorGuards(*(value for _, value, _ in distinct),
                         dynamic_dims_sizes=[list(facts.size) for _, _, facts in distinct],
                         dynamic_dims_strides=[list(facts.stride) for _, _, facts in distinct])
    refs = {"___tensor_checks": joint}
    for guard, _ in checked:
        refs.update(guard.refs)
    names = ", ".join(guard.source.name() for guard, _, _ in distinct)
    each = " and ".join(guard.code for guard, _ in checked)
    guards = [guard for guard, _ in checked]
    text = " and ".join(guard.text for guard in guards)
    notes = {"___tensor_checks": f"torch's C++ TensorGuards, checking {text}"}
    for guard in guards:
        notes.update(guard.notes)
    return Guard("TENSOR_MATCH", guards[0].source, f"___tensor_checks.check({names}) or ({each})",
                 refs, reason=_first_reason(guards), user_line=guards[0].user_line,
                 text=text, others=tuple(guard.source for guard in guards[1:]), notes=notes)


def all_unmarked(marks: list[Guard]) -> Guard:
    """One DIMENSION_DYNAMIC_MARKING for the tensors compiled without marks: none of the
    mark attributes in any of their `__dict__`s."""
    dicts = ", ".join(f"**{guard.source.name()}.__dict__" for guard in marks)
    return Guard("DIMENSION_DYNAMIC_MARKING", None, f"___no_marks.isdisjoint({{{dicts}}})",
                 dict(marks[0].refs), reason=_first_reason(marks), user_line=" ",
                 text=" and ".join(display_name(guard.code) for guard in marks),
                 others=tuple(guard.source for guard in marks))


def _first_reason(guards: list[Guard]) -> Callable[[dict, dict], str | None]:
    """The reason of the first of `guards` that fails (each evaluated on its own)."""
    def reason(L: dict, G: dict) -> str | None:
        for guard in guards:
            namespace = {**CHECK_GLOBALS, **KEY_NAMES, **guard.refs}
            try:
                holds = eval(guard.code, namespace, {"L": L, "G": G})
            except Exception:  # noqa: BLE001 (its source is gone)
                holds = False
            if not holds:
                return (guard.reason(L, G) if guard.reason else None) or guard.describe()
        return None
    return reason


def fast_form(guard: Guard) -> Guard:
    """The guard as the check function runs it. A TENSOR_MATCH becomes one call of
    torch's C++ `TensorGuards.check`, which compares the same properties as the
    guard's line of Python (type, dispatch keys, dtype, device, requires_grad, sizes
    and strides, a symbolic one left out) about twenty times faster; the line itself
    stays the guard's readable form, which finds and words the reason of a failure.
    TorchDynamo's Python guards called the same checker (`___check_tensors`)."""
    if guard.tensor is None:
        return guard
    (value, example), guard.tensor = guard.tensor, None
    # Its facts as the trace left them: a symbol the trace specialized (`for row in x`
    # unrolled on a dynamic size) is a number again, and is compared as one.
    facts = TensorFacts.of(value, example)
    checker = TensorGuards(value, dynamic_dims_sizes=[list(facts.size)],
                           dynamic_dims_strides=[list(facts.stride)])
    name = _ref_name(refs := {}, "tensor_check", checker)
    shown = display_name(guard.source.name())

    def reason(L: dict, G: dict) -> str | None:
        try:
            line_holds = eval(guard.code, {**CHECK_GLOBALS, **KEY_NAMES, **guard.refs},
                              {"L": L, "G": G})
        except Exception:  # noqa: BLE001 (the source is gone: the line's reason says so)
            line_holds = False
        if not line_holds:
            return guard.reason(L, G) if guard.reason else None
        said = checker.check_verbose(eval_source(guard.source.name(), L, G),
                                     tensor_check_names=[shown])
        return f"{guard.describe()} holds, but torch's TensorGuards says: {said}"

    text = display_name(guard.code)
    return Guard(guard.kind, guard.source, f"{name}.check({guard.source.name()})", refs,
                 reason, guard.user_line, text,
                 notes={name: f"torch's C++ TensorGuards, checking {text}"})
