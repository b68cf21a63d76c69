"""The docs' command to open a lab notebook works in the environment `make` creates."""

import re
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

from course.manifest import DEFAULT_ROOT

COMMAND = re.compile(r"^\s*(jupyter) (?P<subcommand>[\w-]+) (?P<notebook>\S+\.ipynb)", re.M)


def documented_commands() -> list[re.Match]:
    """Every `jupyter <subcommand> <notebook>` line of the README and the course index."""
    texts = [(DEFAULT_ROOT / name).read_text(encoding="utf-8")
             for name in ("README.md", "chapters/index.md")]
    return [match for text in texts for match in COMMAND.finditer(text)]


def test_the_notebook_command_is_an_installed_entry_point():
    commands = documented_commands()
    assert commands, "the docs no longer say how to open a notebook; update this test"
    scripts = {script.name for script in entry_points(group="console_scripts")}
    for command in commands:
        program = f"jupyter-{command['subcommand']}"
        assert program in scripts, (f"`{command.group(0).strip()}`: {program} is not installed; "
                                    f"it comes from the `lab` extra of pyproject.toml")
        assert (DEFAULT_ROOT / command["notebook"]).is_file(), command["notebook"]
        jupyter = Path(sys.executable).parent / "jupyter"
        run = subprocess.run([str(jupyter), command["subcommand"], "--version"],
                             capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stdout + run.stderr
