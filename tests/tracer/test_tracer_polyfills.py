"""The itertools polyfills against itertools itself, on the edge cases (chapter 3).

A polyfill is traced in place of a C function; it must yield what the C function
yields for every argument shape: empty iterables, none at all, unequal lengths,
strings, a fill value, zero and negative counts.
"""

from __future__ import annotations

import itertools

import pytest
import torch

import minidynamo
from minidynamo import polyfills

CASES = {
    "zip_longest": (itertools.zip_longest, polyfills.zip_longest, [
        (([1, 2, 3], [4]), {}), (([], []), {}), (([1],), {}), ((), {}),
        (("ab", "xyz", ""), {"fillvalue": "-"}), (([1, 2], [3, 4]), {"fillvalue": 0})]),
    "chain": (itertools.chain, polyfills.chain, [
        (([1], [], (2, 3), "ab"), {}), ((), {})]),
    "islice": (itertools.islice, polyfills.islice, [
        ((range(10), 3), {}), ((range(10), 2, 8, 3), {}), ((range(3), 5), {}),
        ((range(10), 1, None), {}), (([], 0), {})]),
    "accumulate": (itertools.accumulate, polyfills.accumulate, [
        (([1, 2, 3],), {}), (([],), {"initial": 5}), (([3, 1, 2], max), {})]),
    "product": (itertools.product, polyfills.product, [
        (("ab", [1, 2]), {}), (([1, 2],), {"repeat": 2}), (([], [1]), {}), ((), {})]),
    "combinations": (itertools.combinations, polyfills.combinations, [
        ((range(4), 2), {}), ((range(2), 3), {}), ((range(3), 0), {})]),
    "chain.from_iterable": (itertools.chain.from_iterable, polyfills.chain_from_iterable, [
        (([[1], [], (2, 3), "ab"],), {}), (([],), {})]),
    "permutations": (itertools.permutations, polyfills.permutations, [
        ((range(3),), {}), ((range(4), 2), {}), (("ab", 3), {}), ((range(3), 0), {}), (([],), {})]),
    "starmap": (itertools.starmap, polyfills.starmap, [
        ((pow, [(2, 3), (3, 2)]), {}), ((max, []), {})]),
    "pairwise": (itertools.pairwise, polyfills.pairwise, [
        (([1, 2, 3, 4],), {}), (([1],), {}), (([],), {}), (("abc",), {})]),
    "compress": (itertools.compress, polyfills.compress, [
        (("abcdef", [1, 0, 1, 0, 1, 1]), {}), (("abc", [1]), {}), (([], [1, 1]), {})]),
    "repeat": (itertools.repeat, polyfills.repeat, [
        (("x", 3), {}), (("x", 0), {}), (("x",), {"times": -1})]),
}
ENDLESS = {  # compared on their first items
    "repeat": (itertools.repeat, polyfills.repeat, [(("x",), {})]),
    "cycle": (itertools.cycle, polyfills.cycle, [(("ab",), {}), (([],), {})]),
    "count": (itertools.count, polyfills.count, [((), {}), ((5, -2), {}), ((0.5, 0.25), {})]),
}


@pytest.mark.parametrize("name", CASES)
def test_polyfill_yields_what_itertools_yields(name):
    original, polyfill, calls = CASES[name]
    for args, kwargs in calls:
        assert list(polyfill(*args, **kwargs)) == list(original(*args, **kwargs)), (args, kwargs)


@pytest.mark.parametrize("name", ENDLESS)
def test_an_endless_polyfill_starts_as_itertools_does(name):
    original, polyfill, calls = ENDLESS[name]
    for args, kwargs in calls:
        expected = list(itertools.islice(original(*args, **kwargs), 7))
        assert list(itertools.islice(polyfill(*args, **kwargs), 7)) == expected, (args, kwargs)


def _pulled(log, name, items):
    for item in items:
        log.append(name)
        yield item


def _zip_two(x, log):
    rows = list(zip(_pulled(log, "a", [1, 2, 3]), _pulled(log, "b", [1])))
    return x + len(rows)


def test_zip_pulls_items_as_cpython_does():
    """zip asks each iterator for one item per row, in order, and stops at the first
    that is exhausted: the ones before it gave one item more (CPython's order)."""
    ours, theirs = [], []
    minidynamo.compile(_zip_two, fullgraph=True)(torch.ones(1), ours)
    _zip_two(torch.ones(1), theirs)
    assert ours == theirs == ["a", "b", "a"]
