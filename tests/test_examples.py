"""The README's demo runs and agrees with torch.compile (it is computed, not printed by rote)."""

from __future__ import annotations

import runpy
from pathlib import Path

DEMO = Path(__file__).resolve().parents[1] / "examples" / "demo.py"


def test_demo_runs_and_matches_torch_compile(capsys):
    runpy.run_path(str(DEMO), run_name="__main__")
    output = capsys.readouterr().out
    assert "BytecodeScanner report" in output
    assert "same as torch.compile" in output
