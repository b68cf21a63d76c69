"""Fixtures for the course machinery's tests: a private copy of a tiny fake repository.

`fixture_repo/` is shaped like minidynamo's repository (a package `toydynamo`, two
chapters of manifests and graded tests, a known-bad submission) but small enough that
a pytest run on it takes a fraction of a second. Tests copy it, generate its files, and
run the machinery on the copy with `--root`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from course_helpers import make_repo

collect_ignore = ["fixture_repo", "bad"]


@pytest.fixture
def repo(tmp_path) -> Path:
    return make_repo(tmp_path / "repo")


@pytest.fixture(scope="session")
def shared_repo(tmp_path_factory) -> Path:
    """One generated copy for tests that only read it (and import its package)."""
    return make_repo(tmp_path_factory.mktemp("shared") / "repo")
