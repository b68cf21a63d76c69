"""Every test starts from `minidynamo.reset()`, as TorchDynamo's own tests start from
`torch._dynamo.reset()`: cache entries of a function compiled by an earlier test (chapter 9)
would otherwise turn a trace the test expects into a cache hit."""

import pytest

import minidynamo


@pytest.fixture(autouse=True)
def fresh_minidynamo():
    minidynamo.reset()
    yield
