"""What a generated program is: its source, the module it runs in, and what changes
between its calls (chapter 7).

Every program's source starts with the PRELUDE: module state that `f` reads and
writes (`CONFIG`, `OFFSET`, `EVENTS`, together `STATE`), the classes of its arguments
(`Obj`, `Scale`), and what the grammar's rules use (`Escaped`, the context manager
`Recorder`, the dataclass `Pair`, the generator `ramp`, `lookup`). `f` is called
`CALLS` times (`runner.py`); the third call changes one argument (`CHANGES`), and
before any call but the first the program may change the module or an argument's
attribute (`MUTATIONS`). A `Program` records all three, so that every way of running
it makes the same changes before the same calls.
"""

from __future__ import annotations

import dataclasses
from typing import Any

PRELUDE = '''\
import contextlib
import dataclasses

import torch

CONFIG = {'scale': 2.0, 'use_bias': True}
OFFSET = 0.5
EVENTS = []  # what the context managers, `try` statements and bodies did, in order


class Escaped(Exception):
    """Raised on purpose and caught by nothing: the call's outcome."""


class Obj:
    def __init__(self, w, k):
        self.w = w
        self.k = k

    @property
    def scaled(self):
        return self.w * self.k

    tripled = property(lambda self: self.w * 3)  # what a mutation may put in place of `scaled`


class Scale(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.s = torch.nn.Parameter(torch.tensor(1.5))
        self.shift = 0.25

    def forward(self, u):
        return u * self.s + self.shift


class Recorder:
    """A context manager that writes entering and leaving (and whether it was
    left without an exception) to EVENTS."""

    def __init__(self, name):
        self.name = name

    def __enter__(self):
        EVENTS.append(('enter', self.name))
        return self

    def __exit__(self, kind, value, traceback):
        EVENTS.append(('exit', self.name, kind is None))
        return False

    def enter_loudly(self):  # what a mutation may put in place of `__enter__`
        EVENTS.append(('ENTER', self.name))
        return self


@dataclasses.dataclass(eq=False)  # compared field by field, like Obj
class Pair:
    a: torch.Tensor
    b: int


def ramp(u, m):
    """A generator: u, 2 * u, ..., m * u."""
    for i in range(1, m + 1):
        yield u * i


def lookup(table, key):
    """A lookup one frame down: its KeyError crosses a call."""
    return table[key]
'''

STATE = ("CONFIG", "OFFSET", "EVENTS")  # the PRELUDE's module state, compared after each call

# What may change between two calls besides the arguments: a statement run in the
# program's module before a call, `obj` and `mod` being that call's arguments (new in
# every call: the change is that call's only); a class's attribute replaced stays
# replaced until the next way of running. An entry compiled before the change must
# not be reused after it if it depended on what changed. `OFFSET = 1` is an int where a
# float was; the last two change nothing a guard may check (a new dict of the same
# items, the value OFFSET had) unless the body wrote OFFSET or CONFIG['scale'].
MUTATIONS = ("OFFSET = -1.0", "CONFIG['scale'] = 3.0", "CONFIG['use_bias'] = False",
             "obj.k = 4", "mod.shift = -0.75", "EVENTS = []", "OFFSET = 1",
             "Obj.scaled = Obj.tripled", "Recorder.__enter__ = Recorder.enter_loudly",
             "CONFIG = dict(CONFIG)", "OFFSET = 0.5")
CALLS = 4  # every program is called four times; mutations come before calls 1 to 3

# How the third call differs from the others (the others differ in values only).
CHANGES = ("shape", "dtype", "int", "float", "bool", "length")


@dataclasses.dataclass(frozen=True)
class Program:
    """A generated program: its source, what its third call changes in the arguments
    (`CHANGES`), and the state it changes before calls: `(call, statement)` pairs, the
    statement one of `MUTATIONS`, the call 1 to 3 (the first call is 0)."""

    source: str
    change: str = "shape"
    mutations: tuple[tuple[int, str], ...] = ()
    entry: str = "f"

    def namespace(self, filename: str) -> dict[str, Any]:
        """Run the module source; its globals (the entry function among them)."""
        import linecache

        namespace: dict[str, Any] = {"__name__": "minidynamo_fuzz_program"}
        linecache.cache[filename] = (len(self.source), None, self.source.splitlines(True), filename)
        # `dont_inherit`: the source is compiled as written, without this file's __future__
        exec(compile(self.source, filename, "exec", dont_inherit=True), namespace)  # noqa: S102
        return namespace
