"""Fixtures of the tracer tests (chapters 2-5): strict mode and graph recorders.

Every test here runs minidynamo in strict mode, so an internal error fails the
test instead of falling back to eager, and compares with the real thing in the
same run: CPython / eager PyTorch for values, torch.compile for graphs.
"""

from __future__ import annotations

import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).parent))  # for tracer_helpers

import minidynamo  # noqa: E402


@pytest.fixture(autouse=True)
def strict_mode():
    with minidynamo.config.patch(strict=True):
        yield
