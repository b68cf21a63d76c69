"""toydynamo: a stand-in for minidynamo in the course machinery's tests."""

from toydynamo.ops import add  # a re-export: plugging must replace it too

__all__ = ["add"]
