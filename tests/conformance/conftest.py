"""Conformance tests: minidynamo against CPython, eager PyTorch and torch.compile.

The corpora live in ``tests/corpus`` (importable as ``corpus`` once this file has
put ``tests/`` on the path); the references (eager and torch.compile runs) are
computed once per session by ``corpus.references``.
"""

from __future__ import annotations

import pathlib
import sys

TESTS_DIR = pathlib.Path(__file__).resolve().parents[1]
if str(TESTS_DIR) not in sys.path:
    sys.path.insert(0, str(TESTS_DIR))
