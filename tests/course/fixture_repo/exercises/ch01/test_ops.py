"""Graded tests of the toy chapter 1."""

import pytest

import toydynamo
from toydynamo import config, ops
from toydynamo.ops import add


@pytest.mark.task("ch01.1")
def test_add():
    assert add(2, 3) == 5  # bound at import: plugging must reach it


@pytest.mark.task("ch01.1")
def test_add_through_table_and_reexport():
    assert ops.apply("add", 2, 3) == 5
    assert toydynamo.add(1, 1) == 2


@pytest.mark.task("ch01.1")
def test_add_in_strict_mode():
    assert config.strict is True
    assert ops.add(-1, 1) == 0


@pytest.mark.task("ch01.2")
@pytest.mark.parametrize("x, expected", [(1, 20), (100, 100)])
def test_scaled_double(x, expected):
    assert ops.scaled_double(x) == expected


@pytest.mark.task("ch01.3")
def test_bump():
    counter = ops.Counter()
    assert counter.bump() == 1
    assert counter.bump(5) == 6


@pytest.mark.task("ch01.4")
def test_zero():
    assert ops.Counter.zero() == 0
    assert ops.Counter().zero() == 0
