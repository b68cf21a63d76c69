"""Helpers imported by ops.py."""


def clamp(value: int, limit: int) -> int:
    return min(value, limit)
