"""Settings; graded tests run with `strict = True`."""

strict = False
