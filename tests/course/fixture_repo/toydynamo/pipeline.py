"""A stage built on ops.py: chapter 2 of the toy course."""

from toydynamo.ops import Counter, add


def total(values: list[int]) -> int:
    """Sum `values` with ops.add."""
    result = 0
    for value in values:
        result = add(result, value)
    return result


class LoudCounter(Counter):
    """A counter that bumps by ten times as much."""

    def bump(self, by: int = 1) -> int:
        """Bump the parent counter by 10 * `by`."""
        return super().bump(10 * by)
