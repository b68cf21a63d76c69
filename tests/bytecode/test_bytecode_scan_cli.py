"""`python -m minidynamo.scan`: listings agree with dis; bad targets fail clearly."""

from __future__ import annotations

import dis
import importlib
import re
import subprocess
import sys
import textwrap

import pytest

from minidynamo import scan as scan_cli


def run(capsys, *argv):
    status = scan_cli.main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


ROW = re.compile(r"^(?:>>|  )\s*(\d+)\s")


def resolve(target):
    module, _, qualname = target.partition(":")
    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


@pytest.mark.parametrize("target", [
    "json:dumps", "textwrap:TextWrapper._wrap_chunks", "ast:iter_fields",
    "email.utils:parseaddr",
])
def test_listing_matches_dis(capsys, target):
    function = resolve(target)
    status, out, _ = run(capsys, target)
    assert status == 0
    listed = [int(match.group(1)) for match in map(ROW.match, out.splitlines()) if match]
    expected = [i.offset for i in dis.get_instructions(function) if i.opname != "EXTENDED_ARG"]
    assert listed == expected
    depth = function.__code__.co_stacksize
    assert f"max stack depth: {depth} (co_stacksize {depth})" in out
    assert "may touch tensors:" in out and "%" in out and "jumps:" in out


def test_report_counts_and_notes(capsys):
    status, out, _ = run(capsys, "textwrap:TextWrapper._wrap_chunks")
    assert status == 0
    assert "graph-break notes:" in out
    assert "branches on the truth of a value" in out
    assert "-> " in out                        # jump targets are shown as offsets


def test_file_targets(capsys, tmp_path):
    source = tmp_path / "model.py"
    source.write_text(textwrap.dedent("""
        def forward(x, w):
            y = x @ w
            if y.sum() > 0:
                return y.relu()
            return -y
    """))
    status, out, _ = run(capsys, "--file", f"{source}:forward")
    assert status == 0
    assert "BINARY_OP" in out and "COMPARE_OP" in out and "POP_JUMP_FORWARD_IF_FALSE" in out


@pytest.mark.parametrize("argv, message", [
    (["no_such_module_xyz:f"], "cannot import module 'no_such_module_xyz'"),
    (["json:dumpz"], "has no attribute 'dumpz'. Did you mean: dump"),
    (["json:decoder"], "is a module, not a function"),
    (["json:JSONDecoder"], "is a class, not a function"),
    (["builtins:len"], "implemented in C"),
    (["json"], "not of the form module:function"),
    (["--file", "/no/such/file.py:f"], "no such file"),
])
def test_bad_targets_fail_with_a_fix(capsys, argv, message):
    status, out, err = run(capsys, *argv)
    assert status == 2 and out == ""
    assert message in err and "Fix:" in err


def test_runs_as_a_module():
    result = subprocess.run([sys.executable, "-m", "minidynamo.scan", "json:loads"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "BytecodeScanner report" in result.stdout
