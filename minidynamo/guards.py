"""Guards: what a compiled frame assumed about its inputs, checked before it is reused (chapter 9).

A graph is only right for inputs like the ones it was traced with: the same
tensor shapes and dtypes, the same `n` when `if n > 2` was decided while
tracing, the same list length when a loop over it was unrolled. Every value
that enters the trace from outside has a source (chapter 4), and the moment
the VariableBuilder looks at the real value is the moment the trace starts to
depend on it. That is where its guard is added, in one place:
`OutputGraph.guards.add(kind, source, value)`. One table, `GUARD_KINDS`, says
what each kind of guard checks, as Python source over `L` (the frame's locals)
and `G` (its globals):

| kind | added for | check |
|---|---|---|
| TENSOR_MATCH | a tensor | type, dispatch keys, dtype, device, requires_grad, sizes, strides |
| DIMENSION_DYNAMIC_MARKING | a tensor | no `mark_dynamic` / `mark_static` added since |
| SHAPE_ENV | dynamic sizes and ints | what the trace assumed of the symbols: `2 <= L['x'].size()[0]` |
| TYPE_MATCH | a list, dict, object, module | `type(L['xs']) is list` |
| EQUALS_MATCH | an int, float, str, torch.dtype ... | `type(...) is int and L['n'] == 2` |
| ID_MATCH | None, bools, functions (their code), classes, modules | `L['flag'] is None` |
| LENGTH_CHECK | a list or tuple | `len(L['xs']) == 2` |
| DICT_KEYS | a dict whose keys are all read (a loop, `len`, a write) | `list(L['d'].keys()) == ['a', 'b']` |
| DICT_CONTAINS | a dict read by key (`d['a']`, `d.get('a')`, `'a' in d`) | `'a' in L['d']` |
| NOT_IN_DICT | an attribute found on the class, a builtin | `'forward' not in L['m'].__dict__` |
| HASATTR | an attribute found nowhere, not even on the class; an unset slot | `not hasattr(type(L['o']), 'extra')` |
| SUBCLASS_CHECK | `isinstance` against an abstract base class | `issubclass(type(L['b']), G['A'])` (what `A.register` changes) |
| NO_HOOKS | an nn.Module that is called | no hooks registered on it |
| GLOBAL_STATE | every frame | grad mode, default dtype, deterministic algorithms, autocast, TF32, threads, inference mode |
| NO_ALIASING / DUPLICATE_INPUT | tensors and mutable objects | distinct inputs stay distinct, one object seen twice stays one |

`CheckFunction` turns a frame's guards into the *check function* of its cache
entry: generated Python source, one line per guard (`show_guards(fn)` prints it),
compiled once. Its fast form returns True or False; when it fails, its slow form
walks the guards in order and returns the first failing one's reason, worded as
torch's: `tensor 'x' size mismatch at index 0. expected 3, actual 4`, `n == 2`.

Compare with TorchDynamo: `torch/_dynamo/guards.py` (`GuardBuilder`: TENSOR_MATCH,
TYPE_MATCH, ID_MATCH, EQUALS_MATCH, LENGTH_CHECK, DICT_KEYS_MATCH ...;
`CheckFunctionManager`; `get_guard_fail_reason`), which builds a C++ tree of guard
managers. We build the Python function that tree is the fast version of.
"""

from __future__ import annotations

import bisect
import builtins
import collections
import functools
import itertools
import math
import re
import sys
import types
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

import torch
from torch.fx.experimental.symbolic_shapes import SYMPY_INTERP

from minidynamo.global_state import GlobalState, global_module_hooks
from minidynamo.guard_reads import Reads
from minidynamo.shapes import MARK_ATTRIBUTES, MARKED, dynamism_marks, is_symbolic, marks_within
from minidynamo.sources import KEY_NAMES, Source, TypeSource, key_expression

# -- what a tensor guard compares -------------------------------------------------


@dataclass(frozen=True)
class TensorFacts:
    """The properties of a tensor a graph depends on. A size or stride that is a
    symbol in the graph (a dynamic dimension, chapter 9) is None: not compared."""

    cls: type
    dispatch_keys: Any
    dtype: torch.dtype
    device: torch.device
    requires_grad: bool
    size: tuple[int | None, ...]
    stride: tuple[int | None, ...]

    @classmethod
    def of(cls, tensor: torch.Tensor, example: torch.Tensor | None = None) -> TensorFacts:
        """The facts of `tensor`; with `example`, its FakeTensor, the symbolic sizes
        and strides of the example are left out (None)."""
        size, stride = tuple(tensor.size()), tuple(tensor.stride())
        if example is not None:
            size = tuple(None if is_symbolic(s) else v for s, v in zip(example.size(), size))
            stride = tuple(None if is_symbolic(s) else v for s, v in zip(example.stride(), stride))
        return cls(type(tensor), torch._C._dispatch_keys(tensor), tensor.dtype, tensor.device,
                   tensor.requires_grad, size, stride)


def scalar_type_name(dtype: torch.dtype) -> str:
    """c10's name for a dtype, as torch's guard messages print it: Float, Double, Long."""
    try:
        return torch.empty(0, dtype=dtype).type().rsplit(".", 1)[1].removesuffix("Tensor")
    except Exception:  # a dtype without a legacy tensor type name
        return str(dtype).removeprefix("torch.")


def key_set_as_torch_prints_it(keys: Any) -> Any:
    """A tensor's dispatch key set with this thread's included and excluded keys applied
    (BackendSelect in, AutocastCPU out), as torch's TensorGuards store and print it."""
    return (keys | torch._C._dispatch_tls_local_include_set()) - \
        torch._C._dispatch_tls_local_exclude_set()


def tensor_difference(expected: TensorFacts, actual: TensorFacts) -> str | None:
    """The first property in which `actual` differs from `expected`, in the order and words
    of torch's TensorGuards: `size mismatch at index 0. expected 3, actual 4` (None: none)."""
    if actual.dispatch_keys != expected.dispatch_keys:
        return (f"dispatch key set mismatch. expected "
                f"{key_set_as_torch_prints_it(expected.dispatch_keys)}, "
                f"actual {key_set_as_torch_prints_it(actual.dispatch_keys)}")
    if actual.dtype != expected.dtype:
        return (f"dtype mismatch. expected {scalar_type_name(expected.dtype)}, "
                f"actual {scalar_type_name(actual.dtype)}")
    if actual.device != expected.device:
        return (f"Tensor device index mismatch. Expected device index to be "
                f"{expected.device.index}, actual {actual.device.index}")
    if actual.requires_grad != expected.requires_grad:
        return f"requires_grad mismatch. expected requires_grad={int(expected.requires_grad)}"
    if len(actual.size) != len(expected.size):
        return f"rank mismatch. expected {len(expected.size)}, actual {len(actual.size)}"
    for what, old, new in (("size", expected.size, actual.size),
                           ("stride", expected.stride, actual.stride)):
        for index, (a, b) in enumerate(zip(old, new)):
            if a is not None and a != b:
                return f"{what} mismatch at index {index}. expected {a}, actual {b}"
    return None


# torch's TensorGuards add this to a failing Parameter's reason; it names torch's option
# (minidynamo has none: a parameter's shape is always static).
PARAMETER_HINT = (". Guard failed on a parameter, consider using "
                  "torch._dynamo.config.force_parameter_static_shapes = False to allow "
                  "dynamism on parameters.")


def tensor_mismatch(name: str, expected: TensorFacts, tensor: Any) -> str | None:
    """Why `tensor` (shown as `name`) does not match, worded as torch's TensorGuards."""
    if not isinstance(tensor, torch.Tensor) or type(tensor) is not expected.cls:
        return f"expected type of '{name}' to be a tensor type, ' but found {type(tensor)}"
    difference = tensor_difference(expected, TensorFacts.of(tensor))
    if difference is None:
        return None
    hint = PARAMETER_HINT if issubclass(expected.cls, torch.nn.Parameter) else ""
    return f"tensor '{name}' {difference}{hint}"


# -- one guard --------------------------------------------------------------------


@dataclass
class Guard:
    """One assumption: `code` (Python source over L, G and the names in `refs`) holds.

    `reason` explains a failure (None: the code itself, as torch prints an EQUALS_MATCH);
    `user_line` is the line of user code whose tracing added it."""

    kind: str
    source: Source | None
    code: str
    refs: dict[str, Any] = field(default_factory=dict)
    reason: Callable[[dict, dict], str | None] | None = None
    user_line: str = ""
    text: str = ""  # what a failure prints, when not the whole code (EQUALS_MATCH: `n == 2`)
    # TENSOR_MATCH: the tensor and its FakeTensor, until the check function is built
    # (`fast_form` hands them to torch's C++ TensorGuards, then drops them).
    tensor: tuple[torch.Tensor, torch.Tensor | None] | None = field(default=None, repr=False)
    others: tuple[Source, ...] = ()  # what a guard of several values reads besides `source`
    notes: dict[str, str] = field(default_factory=dict)  # `show_guards`' word on a ref of `refs`
    # TYPE_MATCH: the object, until the check function is built (`guard_reads`: how its
    # attributes are read)
    instance: Any = field(default=None, repr=False)
    key: Any = None  # NOT_IN_DICT, HASATTR, DICT_CONTAINS of a plain dict: the absent key

    def sources(self) -> list[Source]:
        """The sources the guard's code reads (a joint TENSOR_MATCH reads several)."""
        return [source for source in (self.source, *self.others) if source is not None]

    def describe(self) -> str:
        text = display_name(self.text or self.code)
        return f"{text:<60}# {self.user_line}" if self.user_line else text


@functools.lru_cache(maxsize=4096)
def display_name(code: str) -> str:
    """`L['x'].shape` -> `x.shape`: torch prints frame locals by their names."""
    return re.sub(r"L\['([A-Za-z_][A-Za-z0-9_]*)'\]", r"\1", code)


# The objects whose identity a guard compares must not be collected while the entry
# lives (a new object could reuse the id): ID_MATCH keeps them alive.
_ref_numbers = itertools.count()  # names unique across all the guards of a check function


def _ref_name(refs: dict[str, Any], prefix: str, value: Any) -> str:
    name = f"___{prefix}{next(_ref_numbers)}"
    refs[name] = value
    return name


_key_types_names: dict[tuple, tuple[str, tuple]] = {}


def key_types(keys: Iterable[Any]) -> tuple:
    """The type of each key, and of each item of a tuple key: keys that compare equal
    (`1`, `True`, `1.0`; `(1,)`, `(True,)`) are still told apart."""
    return tuple((tuple, key_types(key)) if type(key) is tuple else type(key) for key in keys)


def type_match(name: str, value: Any, refs: dict[str, Any]) -> str:
    cls = type(value)
    if getattr(builtins, cls.__name__, None) is cls:  # int, str, dict (not `code`, `function`)
        return f"type({name}) is {cls.__name__}"
    return f"type({name}) is {_ref_name(refs, 'type', cls)}"


def id_match(name: str, value: Any, refs: dict[str, Any]) -> str:
    if value is None or value is True or value is False or value is Ellipsis:
        return f"{name} is {value!r}"
    return f"{name} is {_ref_name(refs, 'obj', value)}"


def equals_match(name: str, value: Any, refs: dict[str, Any]) -> str:
    """`type(v) is int and v == 2`: 2 == 2.0 == True, so the type is part of the check."""
    if isinstance(value, float) and value != value:  # NaN equals nothing, itself included
        return f"{type_match(name, value, refs)} and {name} != {name}"
    if isinstance(value, float) and value == 0.0:  # 0.0 == -0.0, but 1 / x tells them apart
        sign = math.copysign(1.0, value)
        return f"{type_match(name, value, refs)} and {name} == 0.0 and ___copysign(1.0, {name}) == {sign}"
    if isinstance(value, (int, float, str, bytes, complex)) and type(value).__module__ == "builtins":
        literal = repr(value)
        if literal in ("inf", "-inf"):
            literal = f"float({literal!r})"
        return f"{type_match(name, value, refs)} and {name} == {literal}"
    # compared with a copy: a set mutated after the trace must not equal its own record
    expected = frozenset(value) if isinstance(value, set) else value
    code = f"{type_match(name, value, refs)} and {name} == {_ref_name(refs, 'const', expected)}"
    if isinstance(value, (set, frozenset)) and any(type(item) is not str for item in value):
        refs["___typed_items"] = typed_items  # {1} == {True}: the items' types too
        code += f" and ___typed_items({name}) == {_ref_name(refs, 'typed', typed_items(value))}"
    return code


def typed_items(items: Iterable[Any]) -> frozenset:
    """A set's items, each with its type (`key_types`): `{1}` and `{True}` differ."""
    return frozenset((key_types((item,)), item) for item in items)


class GuardSet:
    """The guards of one traced frame, in the order they were added, without repeats."""

    def __init__(self, user_line: Callable[[], str] = lambda: "") -> None:
        self.guards: list[Guard] = []
        self._seen: set[str] = set()
        self.user_line = user_line  # where tracing is now, for the guard's comment
        self.owners: list[Any] = []  # objects whose death ends the entry (weakly held)
        self._types: dict[str, type] = {}  # source name -> the class its TYPE_MATCH holds

    def __iter__(self):
        return iter(self.guards)

    def clear(self) -> None:
        self.guards.clear()
        self._seen.clear()
        self.owners.clear()
        self._types.clear()

    def __len__(self) -> int:
        return len(self.guards)

    def _add(self, guard: Guard) -> None:
        key = self._same_for_every_instance(guard)
        if key in self._seen:
            return
        self._seen.add(key)
        guard.user_line = guard.user_line or self.user_line()
        self.guards.append(guard)

    def _same_for_every_instance(self, guard: Guard) -> str:
        """What makes `guard` a repeat. An attribute of an instance's class
        (`type(L['a']).forward.__code__`) is the class's: once `type(L['a'])` and
        `type(L['b'])` are guarded to be the same class, a guard on it for `b` repeats
        the one for `a` (25 Linear layers check `Linear.forward` once). Such a guard
        is keyed by the class and the objects it compares (`refs`), not by its names.
        Any guard is keyed by the objects of its `refs`, not their names: a loop that
        reads `func.__code__` three times adds one ID_MATCH."""
        key, source = guard.code, guard.source
        for name in sorted(guard.refs, key=len, reverse=True):  # ___obj12 before ___obj1
            key = key.replace(name, f"<object {id(guard.refs[name])}>")
        while isinstance(getattr(source, "base", None), Source):
            if isinstance(source, TypeSource):
                cls = self._types.get(source.base.name())
                if cls is not None:
                    key = key.replace(source.name(), f"<class {id(cls)}>")
                break
            source = source.base
        return key

    def add(self, kind: str, source: Source | None, value: Any, **details: Any) -> None:
        """Add the guard `kind` on `value`, found at `source` (nothing without a source).
        `details` go to the kind's method (TENSOR_MATCH: `example`, the FakeTensor)."""
        if source is None or not source.is_guardable():
            return
        count = len(self.guards)
        GUARD_KINDS[kind](self, source, value, **details)
        if kind == "TENSOR_MATCH" and len(self.guards) > count:
            self.guards[-1].tensor = value, details.get("example")

    # -- one method per kind (GUARD_KINDS names them) -----------------------------

    def tensor_match(self, source: Source, value: torch.Tensor,
                     example: torch.Tensor | None = None) -> None:
        """TENSOR_MATCH: `value`'s type, dispatch keys, dtype, device index, requires_grad,
        sizes and strides, compared in one line of code; its reason is `tensor_mismatch`'s.

        With `example` (its FakeTensor), a size or stride that is a symbol there is
        not compared (the SHAPE_ENV guards say what it may be): `x.size()[1] == 4`
        for each static one, and the rank, instead of `x.size() == (3, 4)`."""
        name = source.name()
        facts = TensorFacts.of(value, example)
        refs: dict[str, Any] = {}
        cls = type(value)
        cls_name = "Tensor" if cls is torch.Tensor else _ref_name(refs, "type", cls)
        keys = _ref_name(refs, "keys", facts.dispatch_keys)
        dtype = _ref_name(refs, "dtype", facts.dtype)
        # The dispatch keys name the device type (CPU, CUDA ...); only the index is left.
        device = "" if facts.device.index is None else \
            f"and {name}.get_device() == {facts.device.index} "
        code = (f"type({name}) is {cls_name} and ___dispatch_keys({name}) == {keys} "
                f"and {name}.dtype is {dtype} {device}"
                f"and {name}.requires_grad is {facts.requires_grad} "
                f"and {_compare_each(name, 'size', facts.size)} "
                f"and {_compare_each(name, 'stride', facts.stride)}")
        shown = display_name(name)
        self._add(Guard("TENSOR_MATCH", source, code, refs,
                        reason=lambda L, G: tensor_mismatch(shown, facts, eval_source(name, L, G))))

    def dimension_dynamic_marking(self, source: Source, value: torch.Tensor) -> None:
        """DIMENSION_DYNAMIC_MARKING, torch's rule: a tensor compiled without marks must
        still have none (a `mark_dynamic` added later recompiles); one compiled with
        marks may carry a subset of them (fewer dimensions, or none)."""
        name, marks = source.name(), dynamism_marks(value)
        refs = {"___no_marks": frozenset((*MARK_ATTRIBUTES, MARKED)), "___marks_within": marks_within}
        code = (f"___no_marks.isdisjoint({name}.__dict__)" if not marks else
                f"___marks_within({name}, {_ref_name(refs, 'marks', dict(marks))})")
        shown = display_name(name)
        self._add(Guard("DIMENSION_DYNAMIC_MARKING", source, code, refs,
                        reason=lambda L, G: marks_changed(shown, marks, eval_source(name, L, G))))

    def shape_env(self, expression: str) -> None:
        """SHAPE_ENV: one thing the trace assumed of the symbols (`2 <= L['x'].size()[0]`,
        `L['x'].size()[0] == L['y'].size()[0]`, `not math.isnan(L['s'])`), as torch's
        ShapeEnv words it; the names it may use (`math`) are its `SYMPY_INTERP`."""
        self._add(Guard("SHAPE_ENV", None, expression, dict(SYMPY_INTERP)))

    def type_match(self, source: Source, value: Any) -> None:
        refs: dict[str, Any] = {}
        self._types.setdefault(source.name(), type(value))
        self._add(Guard("TYPE_MATCH", source, type_match(source.name(), value, refs), refs,
                        instance=value))

    def id_match(self, source: Source, value: Any) -> None:
        if isinstance(value, types.FunctionType):  # a new closure of the same code is the same
            source, value = _attr(source, "__code__"), value.__code__
        refs: dict[str, Any] = {}
        kind = "NONE_MATCH" if value is None else "ID_MATCH"
        self._add(Guard(kind, source, id_match(source.name(), value, refs), refs))

    def equals_match(self, source: Source, value: Any) -> None:
        refs: dict[str, Any] = {}
        code = equals_match(source.name(), value, refs)
        self._add(Guard("EQUALS_MATCH", source, code, refs, text=code.split(" and ", 1)[1]))

    def length_check(self, source: Source, value: Any) -> None:
        self.type_match(source, value)
        self._add(Guard("LENGTH_CHECK", source, f"len({source.name()}) == {len(value)}"))

    def dict_keys(self, source: Source, value: dict, keys: list[Any] | None = None) -> None:
        """The keys in order (`keys`: as they were when the dict entered the trace); a
        subclass's are read with `dict.keys`, not its override (a mappingproxy, read-only
        view of a dict, with its own)."""
        self.type_match(source, value)
        name = source.name()
        exact = type(value) in DICT_TYPES
        if keys is None:
            keys = list(value.keys()) if exact else raw_keys(value)
        expected = ", ".join(key_expression(key) for key in keys)
        ordered = "___ordered_keys" if isinstance(value, collections.OrderedDict) else "dict.keys"
        read = f"{name}.keys()" if exact else f"{ordered}({name})"
        code = f"list({read}) == [{expected}]"
        if any(type(key) is not str for key in keys):  # 1 == True == 1.0: their types too
            # one object and name for equal types: a repeat of the guard is the same guard
            types_name, expected_types = _key_types_names.setdefault(
                key_types(keys), (f"___key_types{len(_key_types_names)}", key_types(keys)))
            refs = {"___key_types": key_types, types_name: expected_types}
            code += f" and ___key_types({read}) == {types_name}"
            self._add(Guard("DICT_KEYS", source, code, refs))
            return
        if not keys:  # no keys, in any order: empty (a module's hook dicts, read by `if`)
            code = f"not {name}" if exact else f"not dict.__len__({name})"
        self._add(Guard("DICT_KEYS", source, code))

    def dict_contains(self, source: Source, key: Any, present: bool, builtin: bool = False,
                      read: bool = False, plain: bool = False) -> None:
        """DICT_CONTAINS: a key the trace read is (or is not) in the dict at `source`, which
        the trace read by key only; `builtin`: a dict subclass's entries, asked with
        `dict.__contains__`, never the subclass's override. A failure is worded as
        torch's: `___dict_contains('a', d)` for `in`, and for a value `read` by key (which
        torch.compile guards through the value alone) the error of reading it."""
        name, spelled = source.name(), key_expression(key)
        code = f"dict.__contains__({name}, {spelled})" if builtin else f"{spelled} in {name}"
        text = (f"KeyError on {name}[{spelled}]" if read and present else
                f"{'' if present else 'not '}___dict_contains({spelled}, {name})")
        # an absent key of a plain dict may be asked with the others absent from it, in
        # one call (`joint_guards.all_absent`)
        absent = key if plain and not present and not builtin else None
        self._add(Guard("DICT_CONTAINS", source, code if present else f"not {code}", text=text,
                        key=absent))

    def not_in_dict(self, source: Source, key: str) -> None:
        """`key` is absent from the mapping at `source` (an instance `__dict__`, the globals)."""
        self._add(Guard("NOT_IN_DICT", source, f"{key!r} not in {source.name()}", key=key))

    def has_attribute(self, source: Source, key: str) -> None:
        """The object at `source` has the attribute `key` (found, and not read)."""
        self._add(Guard("HASATTR", source, f"hasattr({source.name()}, {key!r})"))

    def registered(self, type_source: Source, cls_source: Source, answer: bool) -> None:
        """An abstract base class still answers `issubclass(type, cls)` with `answer`."""
        code = f"issubclass({type_source.name()}, {cls_source.name()})"
        self._add(Guard("SUBCLASS_CHECK", type_source, code if answer else f"not {code}"))

    def lacks_attribute(self, source: Source, key: str, cls: type | None = None) -> None:
        """`key` is found nowhere on the object at `source`: for a class `cls`, not on its
        MRO nor on its metaclass (the check asks the classes' dicts: `joint_guards`); for
        an object, an unset slot (`hasattr` runs the slot's descriptor)."""
        self._add(Guard("HASATTR", source, f"not hasattr({source.name()}, {key!r})", key=key,
                        instance=cls))

    def no_hooks(self, source: Source, value: torch.nn.Module) -> None:
        """The module's four hook dicts are empty, read from its `__dict__` (a module's
        attributes go through nn.Module's `__getattr__` hook, its dict does not)."""
        source = _attr(source, "__dict__")
        hooks = " or ".join(f"{source.name()}[{name!r}]" for name in MODULE_HOOKS)
        self._add(Guard("NO_HOOKS", source, f"not ({hooks})"))
        self._add(Guard("NO_HOOKS", None, "not any(___global_module_hooks)",
                        {"___global_module_hooks": global_module_hooks()},
                        text="no global module hooks (register_module_forward_hook)"))

    def global_state(self) -> None:
        state = GlobalState()
        self._add(Guard("GLOBAL_STATE", None, "___global_state.holds()",
                        {"___global_state": state},
                        reason=lambda L, G: state.changed(), user_line=" "))

    def functorch_stack(self) -> None:
        """The trace entered a level of a torch.func transform (`variables/functorch.py`):
        its graph holds level numbers, valid only on the transform stack it started from."""
        code = "___compare_functorch_state(___functorch_states)"
        if any(guard.kind == "FUNCTORCH_STACK_MATCH" for guard in self.guards):
            return  # the first level entered saw the stack the trace started on
        from torch._functorch.pyfunctorch import compare_functorch_state, \
            retrieve_all_functorch_interpreters

        states = [interpreter.get_state() for interpreter in retrieve_all_functorch_interpreters()]
        refs = {"___compare_functorch_state": compare_functorch_state, "___functorch_states": states}
        self._add(Guard("FUNCTORCH_STACK_MATCH", None, code, refs,
                        reason=lambda L, G: "FUNCTORCH_STACK_MATCH: the torch.func transforms "
                        "around the call changed", user_line=" "))

    def duplicate_input(self, source: Source, first: Source) -> None:
        self._add(Guard("DUPLICATE_INPUT", source, f"{first.name()} is {source.name()}"))

    def no_aliasing(self, sources: Iterable[Source]) -> None:
        sources = list(sources)
        names = [source.name() for source in sources]
        if len(names) > 1:
            ids = ", ".join(f"id({name})" for name in names)
            self._add(Guard("NO_ALIASING", None, f"len({{{ids}}}) == {len(names)}", user_line=" ",
                            others=tuple(sources)))


MODULE_HOOKS = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks")


def _compare_each(name: str, what: str, values: tuple[int | None, ...]) -> str:
    """`x.size() == (3, 4)`; with a symbolic (None) entry, the rank and each known one."""
    if None not in values:
        return f"{name}.{what}() == {values}"
    known = [f"{name}.{what}()[{index}] == {value}"
             for index, value in enumerate(values) if value is not None]
    return " and ".join([f"{name}.dim() == {len(values)}", *known])


def marks_changed(name: str, expected: tuple, tensor: Any) -> str:
    """Which mark a tensor gained, worded as torch's guard on the marks says it."""
    had, has = dict(expected), dict(dynamism_marks(tensor))
    if not had and getattr(tensor, MARKED, False):
        return f"{MARKED} is present on runtime tensor but was absent at compile time"
    for attribute in MARK_ATTRIBUTES:
        if attribute in has and attribute not in had:
            return f"{attribute} is present on runtime tensor but was absent at compile time"
        if attribute in has and not had[attribute].issuperset(has[attribute]):
            return (f"{attribute} not a subset: runtime {_set_text(has[attribute])} is not a "
                    f"subset of compiled {_set_text(had[attribute])}")
    return f"dynamism marks of {name} changed"


def _set_text(dims: frozenset) -> str:
    return "{" + ", ".join(str(dim) for dim in sorted(dims)) + "}"


def _attr(source: Source, name: str) -> Source:
    from minidynamo.sources import AttrSource

    return AttrSource(source, name)


GUARD_KINDS: dict[str, Callable[[GuardSet, Source, Any], None]] = {
    "TENSOR_MATCH": GuardSet.tensor_match,
    "TYPE_MATCH": GuardSet.type_match,
    "ID_MATCH": GuardSet.id_match,
    "EQUALS_MATCH": GuardSet.equals_match,
    "LENGTH_CHECK": GuardSet.length_check,
    "DICT_KEYS": GuardSet.dict_keys,
    "DICT_CONTAINS": GuardSet.dict_contains,
    "NO_HOOKS": GuardSet.no_hooks,
    "DIMENSION_DYNAMIC_MARKING": GuardSet.dimension_dynamic_marking,
}


def constant_guard_kind(value: Any) -> str:
    """The guard of a constant: identity for None, bools and Ellipsis, equality otherwise."""
    if value is None or value is True or value is False or value is Ellipsis:
        return "ID_MATCH"
    if isinstance(value, types.CodeType):  # a function's code: the same object, not an equal one
        return "ID_MATCH"
    return "EQUALS_MATCH"


DICT_TYPES = (dict, collections.OrderedDict, collections.defaultdict, types.MappingProxyType)


# -- the check function -------------------------------------------------------------

# Names every check function can use, besides the guards' own `refs`. In a check,
# `__import__('torch.nn.functional')` is the module itself (an ImportSource's name), read
# from `sys.modules`: a module that is not imported fails the guard.
def raw_keys(value: Any) -> list[Any]:
    """A dict's keys in the order its builtin type iterates them, whatever a subclass
    overrides: an OrderedDict's own order (`move_to_end` changes it, not the order of
    the dict underneath), a dict's insertion order."""
    reader = collections.OrderedDict.keys if isinstance(value, collections.OrderedDict) else dict.keys
    return list(reader(value))


CHECK_GLOBALS: dict[str, Any] = {
    "__import__": sys.modules.__getitem__,
    "torch": torch,
    "Tensor": torch.Tensor,
    "___dispatch_keys": torch._C._dispatch_keys,
    "___dict_getitem": dict.__getitem__,
    "___ordered_keys": collections.OrderedDict.keys,
    "___copysign": math.copysign,
    "___list_getitem": list.__getitem__,
    "___from_numpy": torch.as_tensor,  # a numpy array passed in, as its tensor
}


def eval_source(name: str, L: dict, G: dict) -> Any:
    scope = {**CHECK_GLOBALS, **KEY_NAMES, "__builtins__": __builtins__}
    return eval(name, scope, {"L": L, "G": G})


# A string literal as `repr` writes one (guard code is made of reprs): quotes, escapes.
STRING_LITERAL = re.compile(r"'(?:[^'\\]|\\.)*'" + r'|"(?:[^"\\]|\\.)*"')


def substitute(code: str, locals_: dict[str, str]) -> str:
    """`code` with each use of an expression of `locals_` replaced by its local: whole
    expressions only, the longest first (`L['self']._modules` before `L['self']`), never
    inside a string literal (a key `'GPT2'` does not contain the globals `G`). One pass
    over the code: each use found is kept unless a longer one already covers it."""
    strings = [match.span() for match in STRING_LITERAL.finditer(code)]
    string_starts = [first for first, _ in strings]
    taken: list[tuple[int, int, str]] = []  # (start, end, local), the replacements
    covered = bytearray(len(code))  # 1 where a replacement already is
    for expression in sorted(locals_, key=len, reverse=True):
        for start in _occurrences(code, expression):
            end = start + len(expression)
            before_it = bisect.bisect_left(string_starts, start) - 1  # the last literal before it
            inside = before_it >= 0 and start < strings[before_it][1]
            before = code[start - 1] if start else " "
            after = code[end] if end < len(code) else " "
            if inside or before.isidentifier() or before in ".'\"" or after.isidentifier() \
                    or after.isdigit() or covered.find(1, start, end) != -1:
                continue
            taken.append((start, end, locals_[expression]))
            covered[start:end] = b"\x01" * (end - start)
    pieces, position = [], 0
    for start, end, local in sorted(taken):
        pieces += [code[position:start], local]
        position = end
    return "".join(pieces) + code[position:]


def _occurrences(text: str, part: str) -> Iterable[int]:
    """Where `part` starts in `text`, left to right, without overlaps."""
    start = text.find(part)
    while start != -1:
        yield start
        start = text.find(part, start + len(part))


class CheckFunction:
    """The generated check of one cache entry: `check(L, G)` is True when every guard holds."""

    def __init__(self, guards: Iterable[Guard]) -> None:
        from minidynamo.joint_guards import fast_forms

        self.guards = fast_forms(list(guards))
        namespace: dict[str, Any] = {**CHECK_GLOBALS, **KEY_NAMES}
        for guard in self.guards:
            namespace.update(guard.refs)
        self.source = self.generate()
        for guard in self.guards:
            guard.instance = None  # generated: the entry holds no object of the frame
        exec(compile(self.source, "<minidynamo guards>", "exec"), namespace)
        self.check: Callable[[dict, dict], bool] = namespace["___check"]
        self.namespace = namespace
        self._one_by_one: list[Callable[[dict, dict], bool]] | None = None

    def generate(self) -> str:
        """The check function's source: one `if not (...)` per guard, in the order added,
        commented with the guard's kind and the user line that added it.

        Each source a guard reads (`Guard.sources`) is fetched once into a local
        (`___v0 = L['self']`, `___v1 = ___v0.__dict__`, `___v2 = ___v1['_modules']`:
        `Reads.local`), as TorchDynamo's guard tree walks each path once, and the
        guard's code reads the locals (`substitute`: whole expressions, never inside a
        string literal, so a key `'GPT2'` keeps its `G`). An exception means False."""
        reads = Reads(self.guards)
        lines = ["def ___check(L, G):", "    try:"]
        for guard in self.guards:
            read = {source.name(): reads.local(source, lines) for source in guard.sources()}
            if not read:  # a guard over the whole frame (SHAPE_ENV): whatever it names
                read = {name: local for name, local in reads.locals.items() if name in guard.code}
            code = substitute(guard.code, read)
            where = guard.user_line.strip()
            lines.append(f"        if not ({code}):  # {guard.kind}" + (f": {where}" if where else ""))
            lines.append("            return False")
        lines += ["    except Exception:  # the input is not even shaped like the guarded one",
                  "        return False", "    return True"]
        return "\n".join(lines) + "\n"

    def annotated_source(self) -> str:
        """The source, followed by the guards' notes on the objects it calls: what each
        C++ tensor checker compares (a tensor guard's readable line, the one
        `failure_reason` evaluates), the pinned guards' own check function."""
        notes = [f"# {name}: {note}" for guard in self.guards for name, note in guard.notes.items()]
        return self.source + "".join(note + "\n" for note in notes)

    def failure_reason(self, L: dict, G: dict) -> str | None:
        """The first failing guard's reason (None when all hold): the slow, verbose path.

        Each guard is evaluated on its own (`lambda L, G: <its code>`, in the check's
        namespace). Guards that failed more often before are tried first
        (`self.fail_counts`, kept from call to call). A guard that raises (`xs[2]` of a
        shorter list) is passed over for one that fails cleanly (`len(xs) == 3`); its
        error is the reason only when no other guard fails."""
        if self._one_by_one is None:
            self._one_by_one = [
                eval(f"lambda L, G: {guard.code}", self.namespace) for guard in self.guards
            ]
            self.fail_counts = [0] * len(self.guards)
        # TorchDynamo's guard managers move a failing guard to the front, so the reason
        # names the guard that keeps failing; and its tree checks a list's own guards
        # (its length) before those of its items, so that a reason never names a guard
        # that could not even be evaluated while a structural one fails.
        order = sorted(range(len(self.guards)), key=lambda index: -self.fail_counts[index])
        raised: tuple[int, str] | None = None
        for index in order:
            guard, holds = self.guards[index], self._one_by_one[index]
            try:
                ok = bool(holds(L, G))  # `k == 1` of a tensor `k`: its bool raises too
            except Exception as error:  # noqa: BLE001 (a missing key or attribute)
                if raised is None:
                    raised = index, f"{display_name(guard.code)} ({type(error).__name__}: {error})"
                continue
            if not ok:
                self.fail_counts[index] += 1
                return (guard.reason(L, G) if guard.reason else None) or guard.describe()
        if raised is not None:
            self.fail_counts[raised[0]] += 1
            return raised[1]
        return None
