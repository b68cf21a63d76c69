"""`__dict__` views, `vars(obj)`, a function's own attributes and mappingproxies (chapter 3).

An object made while tracing keeps its attributes in its tracker, and `obj.__dict__` is a
view of them (`InstanceDictVariable`): a write through it is an attribute write. A
function made while tracing has descriptions (`__name__`, `__doc__`, `__module__`) that
`functools.wraps` reads and assigns. A `types.MappingProxyType` (a class's `__dict__`, a
dataclass field's metadata) is a read-only dict. Each program is compared with
torch.compile and eager; where torch.compile itself returns a wrong value, with eager.
"""

from __future__ import annotations

import dataclasses
import functools

import torch

import minidynamo
from minidynamo.testing import compare_with_torch


class Box:
    def __init__(self, value):
        self.value = value


def test_writes_through_the_instance_dict_are_attribute_writes():
    def fn(x):
        box = Box(x)
        entries = box.__dict__
        box.extra = x + 1  # seen by the view taken before
        entries["doubled"] = x * 2
        entries.update(count=3)
        del entries["value"]
        return entries["extra"] + box.doubled, sorted(entries), hasattr(box, "value"), box.count

    comparison = compare_with_torch(fn, torch.ones(3))
    assert comparison.ok, comparison.report()


def test_vars_of_an_object_is_its_dict():
    def fn(x):
        box = Box(x)
        vars(box)["scale"] = 2
        return x * box.scale, vars(box).copy()

    comparison = compare_with_torch(fn, torch.ones(3))
    assert comparison.ok, comparison.report()


def test_wraps_copies_the_descriptions_of_a_function_made_while_tracing():
    def fn(x):
        def inner(a: int) -> int:
            "doc of inner"
            return a + 1

        @functools.wraps(inner)
        def wrapper(*args):
            return inner(*args) * 2

        wrapper.__dict__["tag"] = "t"
        return (wrapper(x), wrapper.__name__, wrapper.__doc__, wrapper.__qualname__,
                wrapper.tag, wrapper.__wrapped__ is inner, getattr(inner, "__wrapped__", None))

    comparison = compare_with_torch(fn, torch.ones(3))
    assert comparison.ok, comparison.report()


def test_a_renamed_lambda_escapes_with_its_attributes():
    def fn(x):
        triple = lambda value: value * 3  # noqa: E731
        triple.__name__ = "triple"
        triple.__doc__ = "triples"
        triple.calls = 1
        return triple(x), triple

    out, triple = minidynamo.compile(fn, backend="eager")(torch.ones(2))
    assert torch.equal(out, torch.full((2,), 3.0))
    assert (triple.__name__, triple.__doc__, triple.calls, triple(2)) == ("triple", "triples", 1, 6)


@dataclasses.dataclass
class Arguments:
    rate: float = dataclasses.field(default=0.1, metadata={"help": "the rate"})
    steps: int = 0


def test_mappingproxies_are_read_only_dicts():
    def fn(x):
        namespace = Arguments.__dict__
        help_text = dataclasses.fields(Arguments)[0].metadata["help"]
        return x + 1, "rate" in namespace, namespace["steps"], help_text, len(namespace) > 2

    comparison = compare_with_torch(fn, torch.ones(3))
    assert comparison.ok, comparison.report()
