"""The graded tests' conftest: it enables the course plugin (course/plugin.py).

While a graded test runs, the plugin plugs its task's function into the package (one
task at a time, so a missing task costs only its own points):
`pytest exercises/ch01 [--impl=student|solution|stub] [--together] [--cumulative]`.
Every graded test starts from `minidynamo.reset()`: no cache entry (chapter 9) of an
earlier test's call is reused, so each test traces what it checks.
"""

import pytest

pytest_plugins = ["course.plugin"]


@pytest.fixture(autouse=True)
def fresh_minidynamo():
    import minidynamo  # after the plugin has plugged the test's task into the package

    minidynamo.reset()
    yield
