"""Fixtures shared by the bytecode tests: the standard-library corpus."""

from __future__ import annotations

import pytest

from bytecode_corpus import corpus


@pytest.fixture(scope="session")
def stdlib_code():
    """Every code object of ~50 standard-library modules (several thousand)."""
    return corpus()
