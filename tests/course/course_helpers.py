"""Helpers for the course machinery's tests (imported by conftest.py and the tests)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from course.__main__ import main

FIXTURE = Path(__file__).parent / "fixture_repo"


def make_repo(target: Path) -> Path:
    """A fresh copy of the fixture repository with its files generated."""
    shutil.copytree(FIXTURE, target, ignore=shutil.ignore_patterns("__pycache__"))
    assert main(["generate", "--root", str(target)]) == 0
    return target


def course(root: Path, *args: str) -> subprocess.CompletedProcess:
    """Run `python -m course <args> --root <root>` in a subprocess."""
    command, *rest = args
    return subprocess.run([sys.executable, "-m", "course", command, "--root", str(root), *rest],
                          cwd=root, capture_output=True, text=True, timeout=300)


def pytest_in(root: Path, *args: str) -> subprocess.CompletedProcess:
    """Run pytest in a fixture repository, as a student would."""
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
                          cwd=root, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "COLUMNS": "250"})
