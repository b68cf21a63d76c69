"""The resume package keeps STYLE.md's rules and its place in the layering."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import minidynamo.resume

PACKAGE = Path(minidynamo.resume.__file__).parent
FILES = sorted(PACKAGE.glob("*.py"))
# Lowest first; a module imports only from the bytecode layer and the ones before it.
ORDER = ["live_frame", "origins", "blocks", "generate", "registry", "__init__"]


@pytest.mark.parametrize("path", FILES, ids=lambda path: path.name)
def test_module_reads_like_a_chapter(path):
    source = path.read_text()
    tree = ast.parse(source)
    docstring = ast.get_docstring(tree)
    assert docstring and "(chapter 7)" in docstring.splitlines()[0]
    assert len(source.splitlines()) < 800
    assert "version_info" not in source
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            length = node.end_lineno - node.lineno + 1
            assert length <= 60, f"{node.name} is {length} lines"


@pytest.mark.parametrize("path", FILES, ids=lambda path: path.name)
def test_imports_only_from_below(path):
    allowed = {"minidynamo.bytecode", "minidynamo.bytecode.analysis"}
    allowed |= {f"minidynamo.resume.{name}" for name in ORDER[:ORDER.index(path.stem)]}
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module.startswith("minidynamo"):
            assert node.module in allowed, node.module
        if isinstance(node, ast.Import):
            assert not any(alias.name.startswith("minidynamo") for alias in node.names)


def test_public_names_are_documented():
    for name in minidynamo.resume.__all__:
        value = getattr(minidynamo.resume, name)
        if callable(value):
            assert value.__doc__, name
