"""The graded tests' conftest: it enables the course plugin (course/plugin.py).

While a graded test runs, the plugin plugs its task's function into the package (one
task at a time, so a missing task costs only its own points):
`pytest exercises/ch01 [--impl=student|solution|stub] [--together] [--cumulative]`.
"""

pytest_plugins = ["course.plugin"]
