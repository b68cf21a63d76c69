"""Conformance tests: minidynamo against CPython, eager PyTorch and torch.compile.

The corpora live in ``tests/corpus`` (importable as ``corpus`` once this file has
put ``tests/`` on the path); the references (eager and torch.compile runs) are
computed once per session by ``corpus.references``.
"""

from __future__ import annotations

import pathlib
import sys
import warnings

TESTS_DIR = pathlib.Path(__file__).resolve().parents[1]
if str(TESTS_DIR) not in sys.path:
    sys.path.insert(0, str(TESTS_DIR))

# TorchDynamo warns about a few corpus idioms it handles anyway (e.g. min/max on
# constants through a fallback path); the tests check the results, not the warnings.
warnings.filterwarnings("ignore", module=r"torch\._dynamo.*")


def case_id(case) -> str:
    return case.id
