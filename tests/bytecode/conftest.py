"""Fixtures shared by the bytecode tests: the standard-library corpus."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))   # for bytecode_corpus, in any import mode
from bytecode_corpus import corpus  # noqa: E402


@pytest.fixture(scope="session")
def stdlib_code():
    """Every code object of ~50 standard-library modules (several thousand)."""
    return corpus()
