"""Graded tests of the toy chapter 2 (they call chapter 1's add through total)."""

import pytest

from toydynamo import pipeline


@pytest.mark.task("ch02.1")
def test_total():
    assert pipeline.total([1, 2, 3]) == 6


@pytest.mark.task("ch02.2")
def test_loud_bump():
    counter = pipeline.LoudCounter()
    assert counter.bump() == 10
    assert counter.bump(2) == 30
