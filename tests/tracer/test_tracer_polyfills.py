"""The itertools polyfills against itertools itself, on the edge cases (chapter 3).

A polyfill is traced in place of a C function; it must yield what the C function
yields for every argument shape: empty iterables, none at all, unequal lengths,
strings, a fill value, zero and negative counts.
"""

from __future__ import annotations

import itertools

import pytest

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
}


@pytest.mark.parametrize("name", CASES)
def test_polyfill_yields_what_itertools_yields(name):
    original, polyfill, calls = CASES[name]
    for args, kwargs in calls:
        assert list(polyfill(*args, **kwargs)) == list(original(*args, **kwargs)), (args, kwargs)
