"""The course machinery: exercises generated from the package, plugged in, verified, graded.

The package (`minidynamo/`) is the only hand-written implementation. Each chapter's
`exercises/chNN/manifest.toml` names the package functions and methods that are its
exercises (`manifest.py`); `python -m course generate` reads their source (`source.py`)
and writes a student file of stubs and a solution file of the package's own code for
each module, plus checksums of the graded tests (`generate.py`). When `pytest
exercises/chNN` runs, the pytest plugin (`plugin.py`, enabled by `exercises/conftest.py`)
executes the chosen implementation (the student's file, the solution, or fresh stubs)
and swaps its functions into the live package around each graded test, one task at a time (`plugging.py`), so the
graded tests exercise the student's code inside the full reference pipeline. `verify.py`
proves that solutions pass and stubs fail, test by test; `grade.py` scores submissions
chapter by chapter in fresh subprocesses (`runner.py`) and writes the reports
(`reports.py`); `package.py` builds a Gradescope autograder and `release.py` a student
edition without answers. Every command takes `--root`, so the tests in `tests/course/`
run it on a tiny fixture repository.
"""
