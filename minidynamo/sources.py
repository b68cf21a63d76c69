"""Sources: where a traced value came from, so generated code can fetch it again (chapter 4).

Every value that enters tracing from outside (a frame argument, a global, an
attribute of a module, an item of an input list) carries a *source*: a small
immutable description of the path from the frame to the value. A source can

- `name()`: spell the path as a Python expression over the frame's locals `L`
  and globals `G`: `L['x']`, `G['w']`, `L['self']._modules['fc']._parameters['weight']`.
  This is the *guard name* chapter 9 checks, spelled exactly as TorchDynamo does.
- `placeholder_name()`: the FX placeholder a tensor from this source becomes
  (`L['x']` -> `L_x_`), the name torch.compile gives the same input.
- `reconstruct()`: return the bytecode that loads the value again inside the
  transformed frame (`LOAD_FAST x; LOAD_ATTR fc`), used to pass graph inputs
  and to rebuild outputs and side effects.

Sources compose: `AttrSource(LocalSource("self"), "fc")` is `L['self'].fc`.

Compare with TorchDynamo: `torch/_dynamo/source.py` (`LocalSource`,
`GlobalSource`, `AttrSource`, `GetItemSource`, `NNModuleSource`, ...), whose
`name` templates we follow.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import sys
import types
from dataclasses import dataclass
from typing import Any, Callable

from minidynamo.bytecode import Instruction, create_instruction


class Source:
    """The path from a frame to a value. Subclasses are frozen dataclasses."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Each subclass's `name` and hash are computed once per source: a source is
        immutable, and a deep one is named and hashed over and over (its guards, its
        placeholder, every source built on it). The hash is set before `@dataclass`
        runs, so that the dataclass keeps it instead of generating its own."""
        super().__init_subclass__(**kwargs)
        if "name" in cls.__dict__:
            cls.name = _named_once(cls.__dict__["name"])
        cls.__hash__ = _hash_once  # type: ignore[method-assign]

    def name(self) -> str:
        """The guard name: a Python expression over `L` (locals) and `G` (globals)."""
        raise NotImplementedError

    def reconstruct(self) -> list[Instruction]:
        """Instructions that push this value onto the stack of the transformed frame."""
        raise NotImplementedError

    def placeholder_name(self) -> str:
        """The FX placeholder name torch.compile uses for a graph input from here."""
        return re.sub(r"[^a-zA-Z0-9]+", "_", self.name())

    def is_local(self) -> bool:
        """Whether the path starts at a local of the frame (not at a global)."""
        return False

    def may_be_overwritten(self) -> bool:
        """Whether the generated code's writes (side effects replayed, the frame's cells
        filled) can change what this path reads: anything but a plain local or a cell
        object. Such a source is read before the first write (`PyCodegen.preload`)."""
        return True

    def is_guardable(self) -> bool:
        """Whether `name()` is an expression a check function can evaluate (chapter 9)."""
        return True

    def new_object_each_read(self) -> bool:
        """Whether each read makes a new object (`x.T`): then it is read once."""
        return False

    def __str__(self) -> str:
        return self.name()


def _named_once(name: Callable[[Source], str]) -> Callable[[Source], str]:
    """`name`, its answer kept in the source's `__dict__` (a frozen dataclass's fields
    are not touched: equality and hashing stay those of the fields)."""
    @functools.wraps(name)
    def remembered(self: Source) -> str:
        try:
            return self.__dict__["_name"]
        except KeyError:
            named = self.__dict__["_name"] = name(self)
            return named
    return remembered


def _hash_once(self: Source) -> int:
    """The hash of the source's fields (what the dataclass's `__eq__` compares), kept."""
    try:
        return self.__dict__["_hash"]
    except KeyError:
        fields = tuple(getattr(self, field.name) for field in dataclasses.fields(self))
        hashed = self.__dict__["_hash"] = hash(fields)
        return hashed


@dataclass(frozen=True)
class LocalSource(Source):
    """A local variable (or argument) of the compiled frame: `L['x']`.

    `is_cell` marks a local that lives in a cell (captured by an inner function,
    or the function's own free variable): it is read with LOAD_DEREF.
    """

    local_name: str
    is_cell: bool = False

    def name(self) -> str:
        return f"L[{self.local_name!r}]"

    def reconstruct(self) -> list[Instruction]:
        opname = "LOAD_DEREF" if self.is_cell else "LOAD_FAST"
        return [create_instruction(opname, argval=self.local_name)]

    def is_local(self) -> bool:
        return True

    def may_be_overwritten(self) -> bool:
        return self.is_cell  # STORE_DEREF fills cells; the generated code keeps the fast locals


@dataclass(frozen=True)
class GlobalSource(Source):
    """A global of the compiled function's module: `G['w']`."""

    global_name: str

    def name(self) -> str:
        return f"G[{self.global_name!r}]"

    def reconstruct(self) -> list[Instruction]:
        return [create_instruction("LOAD_GLOBAL", argval=self.global_name, arg=0)]


@dataclass(frozen=True)
class ImportSource(Source):
    """A module, by name: the globals of a function from another module hang off it.

    Reloaded from a global of the frame's module that holds it, named as TorchDynamo
    names it (`__import_torch_dot_nn_dot_functional`, `import_global_name`). Not with
    IMPORT_NAME: that needs the frame's `__builtins__` to have `__import__`, and a
    function made with its own builtins may not (`types.FunctionType(code, globals)`).
    """

    module_name: str

    def name(self) -> str:
        return f"__import__({self.module_name!r})"

    def reconstruct(self) -> list[Instruction]:
        return [create_instruction("LOAD_GLOBAL", argval=import_global_name(self.module_name),
                                   arg=0)]

    def may_be_overwritten(self) -> bool:
        return False


IMPORTED_MODULES: dict[str, str] = {}  # global name -> module name, for `install_modules`


def import_global_name(module_name: str) -> str:
    name = "__import_" + module_name.replace(".", "_dot_")
    IMPORTED_MODULES[name] = module_name
    return name


def install_modules(code: types.CodeType, f_globals: dict[str, Any]) -> None:
    """Put each module `code` reloads (an ImportSource) in the frame's globals. They stay
    there, as TorchDynamo leaves its `__import_...` globals: a module outlives the code
    that reads it, and two cache entries may share one name."""
    for name in code.co_names:
        if name in IMPORTED_MODULES and name not in f_globals:
            f_globals[name] = sys.modules[IMPORTED_MODULES[name]]


@dataclass(frozen=True)
class LocalCellSource(Source):
    """The cell object of the compiled frame's cell or free variable `name`.

    Not the value inside the cell: the cell itself, as LOAD_CLOSURE pushes it.
    Writing to it is STORE_DEREF.
    """

    local_name: str

    def name(self) -> str:
        return f"L[{self.local_name!r}].cell"  # not a guard; only for messages

    def is_guardable(self) -> bool:
        return False

    def reconstruct(self) -> list[Instruction]:
        return [create_instruction("LOAD_CLOSURE", argval=self.local_name)]

    def is_local(self) -> bool:
        return True

    def may_be_overwritten(self) -> bool:
        return False  # the cell object itself; its contents are LocalSource(is_cell=True)


@dataclass(frozen=True)
class GlobalsSource(Source):
    """The compiled frame's globals dict itself, `G`: a guard that a name is absent
    from it (a builtin found because the module has no global of that name)."""

    def name(self) -> str:
        return "G"

    def reconstruct(self) -> list[Instruction]:
        raise NotImplementedError("the globals dict is not reloaded by generated code")


@dataclass(frozen=True)
class ChainedSource(Source):
    """A source that starts from another one (its `base`)."""

    base: Source

    def is_local(self) -> bool:
        return self.base.is_local()

    def is_guardable(self) -> bool:
        return self.base.is_guardable()


@dataclass(frozen=True)
class AttrSource(ChainedSource):
    """An attribute of the base value: `L['self'].fc`."""

    member: str

    def name(self) -> str:
        if self.member.isidentifier():
            return f"{self.base.name()}.{self.member}"
        return f"getattr({self.base.name()}, {self.member!r})"

    def reconstruct(self) -> list[Instruction]:
        return [*self.base.reconstruct(), create_instruction("LOAD_ATTR", argval=self.member)]


@dataclass(frozen=True)
class FreshAttrSource(AttrSource):
    """An attribute that is a new object on every read, `L['x'].T`, `L['x'].data`: the
    generated code reads it once and keeps it (`PyCodegen.load_source`), so a frame
    that uses the object twice, or changes it, sees one object, as eager does."""

    def new_object_each_read(self) -> bool:
        return True


@dataclass(frozen=True)
class GenericAttrSource(ChainedSource):
    """An attribute as `object.__getattribute__(obj, name)` reads it: Python's lookup
    without the class's own `__getattribute__`, what such a hook's
    `super().__getattribute__(name)` returns. Guards and generated code read it that way
    too, so the hook (a config class's attribute remapping) does not run again, and the
    value read is the one traced. Named as TorchDynamo names it; its graph placeholder
    is named as the plain attribute's, as torch.compile's is."""

    member: str

    def name(self) -> str:
        return f"object.__getattribute__({self.base.name()}, {self.member!r})"

    def placeholder_name(self) -> str:
        return re.sub(r"[^a-zA-Z0-9]+", "_", f"{self.base.name()}.{self.member}")

    def reconstruct(self) -> list[Instruction]:
        return [
            create_instruction("PUSH_NULL"),
            *ImportSource("builtins").reconstruct(),
            create_instruction("LOAD_ATTR", argval="object"),
            create_instruction("LOAD_ATTR", argval="__getattribute__"),
            *self.base.reconstruct(),
            create_instruction("LOAD_CONST", argval=self.member),
            create_instruction("PRECALL", arg=2),
            create_instruction("CALL", arg=2),
        ]


def call_of(module_name: str, function: str, argument: Source) -> list[Instruction]:
    """The bytecode of `module.function(argument)`: `type(x)`, `torch.as_tensor(a)`."""
    return [
        create_instruction("PUSH_NULL"),
        *ImportSource(module_name).reconstruct(),
        create_instruction("LOAD_ATTR", argval=function),
        *argument.reconstruct(),
        create_instruction("PRECALL", arg=1),
        create_instruction("CALL", arg=1),
    ]


@dataclass(frozen=True)
class TypeSource(ChainedSource):
    """The type of the base value, `type(L['self'])`: where Python finds a method of it
    (on `type(obj)`, never on a `__class__` the object answers itself), named as
    TorchDynamo names it."""

    def name(self) -> str:
        return f"type({self.base.name()})"

    def reconstruct(self) -> list[Instruction]:
        return call_of("builtins", "type", self.base)


@dataclass(frozen=True)
class GetItemSource(ChainedSource):
    """An item of the base value: `L['xs'][0]`, `L['d']['key']`."""

    index: Any  # a constant: int, str, or another hashable Python constant

    def name(self) -> str:
        return f"{self.base.name()}[{key_expression(self.index)}]"

    def reconstruct(self) -> list[Instruction]:
        return [
            *self.base.reconstruct(),
            create_instruction("LOAD_CONST", argval=self.index),
            create_instruction("BINARY_SUBSCR"),
        ]


@dataclass(frozen=True)
class DictKeySource(ChainedSource):
    """The key at a position of a dict, in the dict's own storage order:
    `list(dict.keys(L['d']))[0]` (TorchDynamo's `ConstDictKeySource`). A key that is
    not a constant (a tensor, a module) is reached this way, and its value through it."""

    index: int

    def name(self) -> str:
        return f"list(dict.keys({self.base.name()}))[{self.index}]"

    def reconstruct(self) -> list[Instruction]:
        return [
            create_instruction("PUSH_NULL"),
            *ImportSource("builtins").reconstruct(),
            create_instruction("LOAD_ATTR", argval="list"),
            create_instruction("PUSH_NULL"),
            *ImportSource("builtins").reconstruct(),
            create_instruction("LOAD_ATTR", argval="dict"),
            create_instruction("LOAD_ATTR", argval="keys"),
            *self.base.reconstruct(),
            create_instruction("PRECALL", arg=1),
            create_instruction("CALL", arg=1),
            create_instruction("PRECALL", arg=1),
            create_instruction("CALL", arg=1),
            create_instruction("LOAD_CONST", argval=self.index),
            create_instruction("BINARY_SUBSCR"),
        ]


@dataclass(frozen=True)
class DictValueSource(ChainedSource):
    """The value of a dict at a key reached by position (a `DictKeySource`):
    `L['d'][list(dict.keys(L['d']))[0]]`, TorchDynamo's `DictGetItemSource` with a
    `ConstDictKeySource` for its index."""

    key: DictKeySource

    def name(self) -> str:
        return f"{self.base.name()}[{self.key.name()}]"

    def reconstruct(self) -> list[Instruction]:
        return [*self.base.reconstruct(), *self.key.reconstruct(),
                create_instruction("BINARY_SUBSCR")]


# Keys that have no literal (a class, `typing.Union`) are named in guard code by a name
# registered here (`___key_list`); every check function can read these names.
KEY_NAMES: dict[str, Any] = {}
_key_name_of: dict[int, str] = {}
LITERAL_TYPES = (int, float, str, bytes, bool, type(None))


def key_expression(key: Any) -> str:
    """How guard code spells a dict key or an index: its literal, or a registered name."""
    if isinstance(key, LITERAL_TYPES) or (
            isinstance(key, tuple) and all(isinstance(item, LITERAL_TYPES) for item in key)):
        return repr(key)
    name = _key_name_of.get(id(key))
    if name is None:
        label = re.sub(r"\W", "_", getattr(key, "__qualname__", None) or repr(key))
        name = f"___key_{label}"
        while name in KEY_NAMES:
            name += "_"
        KEY_NAMES[name] = key  # kept alive: its id stays its own
        _key_name_of[id(key)] = name
    return name


@dataclass(frozen=True)
class DictGetItemSource(ChainedSource):
    """An entry of a dict subclass read with the builtin lookup, `dict.__getitem__(d, k)`,
    so that no `__getitem__` of the subclass runs in guards or generated code."""

    index: Any
    owner = "dict"  # the builtin whose __getitem__ reads it

    def name(self) -> str:
        return f"___{self.owner}_getitem({self.base.name()}, {key_expression(self.index)})"

    def placeholder_name(self) -> str:  # torch names it from `dict.__getitem__(L['d'], 'k')`
        return re.sub(r"[^a-zA-Z0-9]+", "_",
                      f"{self.owner}.__getitem__({self.base.name()}, {key_expression(self.index)})")

    def reconstruct(self) -> list[Instruction]:
        return [
            create_instruction("PUSH_NULL"),
            *ImportSource("builtins").reconstruct(),
            create_instruction("LOAD_ATTR", argval=self.owner),
            create_instruction("LOAD_ATTR", argval="__getitem__"),
            *self.base.reconstruct(),
            create_instruction("LOAD_CONST", argval=self.index),
            create_instruction("PRECALL", arg=2),
            create_instruction("CALL", arg=2),
        ]


@dataclass(frozen=True)
class ListGetItemSource(DictGetItemSource):
    """An item of a list subclass's instance, `list.__getitem__(xs, 0)`, as torch reads it."""

    owner = "list"


def is_module_state(source: Source) -> bool:
    """Whether the source reads a module's parameter or buffer: `..._parameters['weight']`."""
    while isinstance(source, ChainedSource):
        base = source.base
        if isinstance(base, AttrSource) and base.member in ("_parameters", "_buffers"):
            return True
        source = base
    return False


# -- paths to a function's closure and defaults -------------------------------


def closure_cell_source(function: Source, index: int) -> Source:
    """The index-th closure cell of a function: `L['f'].__closure__[0]`."""
    return GetItemSource(AttrSource(function, "__closure__"), index)


def default_argument_source(function: Source, index: int) -> Source:
    """The index-th positional default of a function: `L['f'].__defaults__[1]`."""
    return GetItemSource(AttrSource(function, "__defaults__"), index)


def keyword_default_source(function: Source, name: str) -> Source:
    """A keyword-only default of a function: `L['f'].__kwdefaults__['scale']`."""
    return GetItemSource(AttrSource(function, "__kwdefaults__"), name)


@dataclass(frozen=True)
class TensorSizeSource(ChainedSource):
    """A size of the base tensor, `L['x'].size()[0]`: where the graph gets a symbolic
    size `s77` from (chapter 9), named as TorchDynamo's TensorPropertySource. A view
    passed beside its base can have a symbolic stride or storage offset too:
    `method` "stride" (`L['y'].stride()[0]`) or "storage_offset" (no `dim`)."""

    dim: int | None
    method: str = "size"

    def name(self) -> str:
        index = "" if self.dim is None else f"[{self.dim}]"
        return f"{self.base.name()}.{self.method}(){index}"

    def reconstruct(self) -> list[Instruction]:
        index = [] if self.dim is None else [create_instruction("LOAD_CONST", argval=self.dim),
                                             create_instruction("BINARY_SUBSCR")]
        return [
            *self.base.reconstruct(),
            create_instruction("LOAD_METHOD", argval=self.method),
            create_instruction("PRECALL", arg=0),
            create_instruction("CALL", arg=0),
            *index,
        ]


@dataclass(frozen=True)
class NumpyTensorSource(ChainedSource):
    """A numpy array passed in, as the tensor the graph takes, `torch.as_tensor(a)`
    (sharing the array's memory): TorchDynamo's NumpyTensorSource, `___from_numpy(L['a'])`.
    Its placeholder is named after the array (`L_a_`)."""

    def name(self) -> str:
        return f"___from_numpy({self.base.name()})"

    def placeholder_name(self) -> str:
        return self.base.placeholder_name()

    def reconstruct(self) -> list[Instruction]:
        return call_of("torch", "as_tensor", self.base)
