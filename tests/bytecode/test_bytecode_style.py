"""The bytecode layer keeps STYLE.md's rules: small functions, one version module."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import minidynamo.bytecode

PACKAGE = Path(minidynamo.bytecode.__file__).parent
FILES = sorted(PACKAGE.glob("*.py")) + [PACKAGE.parent / "scan.py"]


@pytest.mark.parametrize("path", FILES, ids=lambda path: path.name)
def test_module_reads_like_a_chapter(path):
    source = path.read_text()
    tree = ast.parse(source)
    docstring = ast.get_docstring(tree)
    assert docstring and "chapter 1" in docstring, "docstring must name the concept and chapter"
    assert len(source.splitlines()) < 800
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            length = node.end_lineno - node.lineno + 1
            assert length <= 60, f"{node.name} is {length} lines"


@pytest.mark.parametrize("path", FILES, ids=lambda path: path.name)
def test_only_opcodes_knows_the_python_version(path):
    if path.name != "opcodes.py":
        assert "version_info" not in path.read_text()


@pytest.mark.parametrize("path", sorted(PACKAGE.glob("*.py")), ids=lambda path: path.name)
def test_bytecode_is_the_lowest_layer(path):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("minidynamo"):
            assert node.module.startswith("minidynamo.bytecode"), node.module
        if isinstance(node, ast.Import):
            for alias in node.names:
                assert not alias.name.startswith("minidynamo") or \
                    alias.name.startswith("minidynamo.bytecode")
