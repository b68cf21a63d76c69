"""The graded tests' conftest: it enables the course plugin (course/plugin.py).

The plugin plugs the manifest's functions into the package for the session:
`pytest exercises/ch01 [--impl=student|solution|stub] [--cumulative]`.
"""

pytest_plugins = ["course.plugin"]
