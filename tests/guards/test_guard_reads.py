"""How the check function reads what its guards compare (`minidynamo/guard_reads.py`).

An attribute of an object whose type is guarded is read from its `__dict__`, and its
type (where its methods are found) is the guarded class, where Python would find the
same value. Each test
checks the form the check takes, then changes the object between calls and checks
that minidynamo recompiles exactly where torch.compile does, with eager's output.
"""

from __future__ import annotations

import re

import torch
import torch._dynamo.testing

import minidynamo


class Scaled(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(3, 3)
        self.scale = 2.0
        self.shift = 1

    def forward(self, x):
        return self.linear(x) * self.scale + self.shift


class WithProperty(torch.nn.Module):
    """`scale` is a property: a data descriptor, which comes before the instance dict."""

    def __init__(self) -> None:
        super().__init__()
        self.factor = 3.0
        self.offset = 1.0
        self.__dict__["scale"] = 100.0  # hidden by the property: never what `self.scale` reads

    @property
    def scale(self):
        return self.factor * 2

    def forward(self, x):
        return x * self.scale + self.offset


class ClassDefault(torch.nn.Module):
    shift = 5.0  # the class's value, shadowed by the instance's until it is deleted

    def __init__(self) -> None:
        super().__init__()
        self.shift = 1.0
        self.scale = 2.0

    def forward(self, x):
        return x * self.scale + self.shift


def compile_patterns(module, x, changes, calls=4):
    """Compile counts of each call, torch.compile's and ours, each output checked against
    eager. `changes[i](module)` runs before call i; the module is rebuilt for each side."""
    patterns = []
    for compile_with in (torch.compile, minidynamo.compile):
        torch._dynamo.reset()
        minidynamo.reset()
        torch.manual_seed(0)
        model = module()
        counter = torch._dynamo.testing.CompileCounter()
        compiled = compile_with(model, backend=counter)
        counts = []
        for index in range(calls):
            changes.get(index, lambda m: None)(model)
            before = counter.frame_count
            torch.testing.assert_close(compiled(x), model(x))
            counts.append(counter.frame_count - before)
        patterns.append(counts)
    return patterns


def check_source(module, x) -> str:
    minidynamo.reset()
    compiled = minidynamo.compile(module, backend="eager")
    compiled(x)
    return minidynamo.show_guards(compiled)


def test_module_attributes_are_read_from_the_instance_dict():
    source = check_source(Scaled(), torch.randn(2, 3))
    assert re.search(r"___v\d+\['scale'\]", source) and re.search(r"___v\d+\['_modules'\]", source)
    assert not re.search(r"___v\d+\.(scale|shift|_modules|__class__)\b", source)
    assert re.search(r"___v\d+ = ___type\d+\n", source)  # `type(m)`: the guarded class


def test_a_changed_attribute_read_from_the_dict_recompiles_as_torch_compile():
    def rescale(m):
        m.scale = 3.0

    def shift_as_float(m):
        m.shift = 1.0  # equal, but no longer an int

    torch_counts, ours = compile_patterns(Scaled, torch.randn(2, 3), {1: rescale, 3: shift_as_float},
                                          calls=5)
    assert ours == torch_counts == [1, 1, 0, 1, 0]


def test_a_property_is_read_as_python_reads_it():
    source = check_source(WithProperty(), torch.randn(3))
    assert not re.search(r"\['scale'\]", source)  # the property runs, as on every read

    def refactor(m):
        m.factor = 4.0

    torch_counts, ours = compile_patterns(WithProperty, torch.randn(3), {2: refactor})
    assert ours == torch_counts


def test_a_deleted_instance_attribute_is_read_from_the_class_again():
    def unshadow(m):
        del m.shift  # `m.shift` is the class's 5.0 now

    torch_counts, ours = compile_patterns(ClassDefault, torch.randn(3), {2: unshadow})
    assert ours == torch_counts == [1, 0, 1, 0]


class Masquerade(torch.nn.Module):
    """A class that answers `__class__` itself: `m.__class__` is not `type(m)`."""

    @property
    def __class__(self):
        return torch.nn.Module

    def forward(self, x):
        return x + 1


class CallsMasquerade(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.inner = Masquerade()

    def forward(self, x):
        return self.inner(x) * 2


def test_methods_are_found_on_the_type_not_on_what_class_answers():
    """`forward` is guarded on `type(inner)`, where Python finds it (`inner.__class__`,
    nn.Module, has no such forward: guarding it there recompiled on every call)."""
    source = check_source(CallsMasquerade(), torch.randn(3))
    assert ".__class__" not in source
    torch_counts, ours = compile_patterns(CallsMasquerade, torch.randn(3), {})
    assert ours == torch_counts == [1, 0, 0, 0]


class Slotted:
    """`scale` is a slot (a member descriptor: a data descriptor), and the instance's
    `__dict__` also holds a `scale` that Python never reads."""

    __slots__ = ("scale", "__dict__")

    def __init__(self) -> None:
        self.scale = 2.0
        self.__dict__["scale"] = 100.0
        self.offset = 1.0
        self.bias = 0.5


def use_slotted(x, holder):
    return x * holder.scale + holder.offset + holder.bias


def test_a_slot_is_read_as_python_reads_it_and_its_neighbours_from_the_dict():
    patterns, sources = [], []
    holder, x = Slotted(), torch.randn(3)
    for compile_with in (torch.compile, minidynamo.compile):
        torch._dynamo.reset()
        minidynamo.reset()
        counter = torch._dynamo.testing.CompileCounter()
        compiled = compile_with(use_slotted, backend=counter)
        for _ in range(3):
            torch.testing.assert_close(compiled(x, holder), use_slotted(x, holder))
        patterns.append(counter.frame_count)
    source = minidynamo.show_guards(compiled)
    assert patterns == [1, 1]
    assert re.search(r"___v\d+\.scale\n", source) and re.search(r"\['offset'\]", source)


class Strided(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv1d(2, 2, 3, stride=2, padding=1)

    def forward(self, x):
        return self.conv(x)


def test_a_tuple_of_constants_is_one_line_that_first_asks_for_the_tuple_seen():
    """`minidynamo/constant_tuples.py`: the conv's stride, padding and dilation."""
    source = check_source(Strided(), torch.randn(1, 2, 8))
    lines = [line for line in source.splitlines() if re.search(r" is ___tuple\d+ or \(", line)]
    assert len(lines) == 3  # stride, padding, dilation
    assert "type(___v" in lines[0] and "len(___v" in lines[0]  # the item-by-item fallback
    assert not re.search(r"___v\d+ = ___v\d+\[0\]", source)  # no item fetched on its own


def test_a_new_tuple_is_checked_item_by_item_as_torch_compile_checks_it():
    def equal_tuple(m):
        m.conv.stride = (2,)  # a new, equal tuple: the entry is reused

    def other_stride(m):
        m.conv.stride = (1,)

    def list_stride(m):
        m.conv.stride = [2]  # equal items, but not a tuple

    x = torch.randn(1, 2, 8)
    for changes in ({1: equal_tuple}, {1: other_stride}, {1: list_stride}):
        torch_counts, ours = compile_patterns(Strided, x, changes, calls=3)
        assert ours == torch_counts, changes
    assert compile_patterns(Strided, x, {1: equal_tuple}, calls=3)[1] == [1, 0, 0]
