"""Gradescope: the autograder zip, and putting a submission's files in place.

`python -m course package gradescope [chNN ...] --out FILE` writes a zip with, at its
root, the two scripts Gradescope runs and the part of the repository grading needs
(`pyproject.toml`, the package, `course/`, `exercises/`; never `solutions/`):

    setup.sh         once, when Gradescope builds the image: Python 3.11 and the pinned
                     dependencies from pyproject.toml (torch from the CPU wheel index)
    run_autograder   per submission: `python -m course import-submission` copies the
                     student's exercise files from /autograder/submission into
                     exercises/chNN/, then `python -m course grade` writes
                     /autograder/results/results.json

Only the generated exercise files named by the manifests are taken from a submission,
never a test or a conftest, so a submission cannot change what grades it.

`--check` then runs the zip as Gradescope would (unpacked into a scratch /autograder,
with this interpreter standing in for the image's venv) on two submissions: the
solutions must score every point of the manifests, the stubs none.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from concurrent.futures import ThreadPoolExecutor
from fractions import Fraction
from pathlib import Path

from course.generate import render_exercise
from course.manifest import Chapter, load_chapters

SKIP_DIRS = {".git", ".venv", "__pycache__", ".pytest_cache", ".ipynb_checkpoints", "site",
             "grades", "dist", "build", "node_modules"}
TORCH_INDEX = "https://download.pytorch.org/whl/cpu"
GRADING_EXTRAS = {"pytest", "pytest-timeout"}

SETUP_SH = """\
#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image.
set -euo pipefail
if ! command -v python3.11 >/dev/null 2>&1; then
    apt-get update
    apt-get install -y python3.11 python3.11-venv
fi
python3.11 -m venv /autograder/venv
/autograder/venv/bin/pip install --upgrade pip
# torch from the CPU wheel index: the default index pulls a multi-GB CUDA build
/autograder/venv/bin/pip install --index-url {torch_index} {torch}
/autograder/venv/bin/pip install {others}
"""

RUN_AUTOGRADER = """\
#!/usr/bin/env bash
# Gradescope runs this for every submission: put the student's exercise files in place,
# grade them chapter by chapter, and leave results.json where Gradescope reads it.
set -uo pipefail
AUTOGRADER="${{AUTOGRADER_ROOT:-/autograder}}"
PYTHON="${{AUTOGRADER_PYTHON:-$AUTOGRADER/venv/bin/python}}"
cd "$AUTOGRADER/source"
"$PYTHON" -m course import-submission --root . "$AUTOGRADER/submission"
"$PYTHON" -m course grade {chapters}--root . --impl student --timeout {timeout} \
    --out "$AUTOGRADER/results"
if [ ! -f "$AUTOGRADER/results/results.json" ]; then
    mkdir -p "$AUTOGRADER/results"
    echo '{{"score": 0, "output": "The autograder failed before it could grade; '\\
'please tell the course staff."}}' > "$AUTOGRADER/results/results.json"
fi
"""


def repo_files(root: Path) -> list[str]:
    """The repository's files (posix, relative): git's view in a checkout, else a walk."""
    root = Path(root)
    if (root / ".git").exists():
        listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                                 "--exclude-standard"], cwd=root, capture_output=True)
        if listed.returncode == 0:
            names = listed.stdout.decode().split("\0")
            return sorted(n for n in names if n and (root / n).is_file() and not _skipped(n))
    return sorted(path.relative_to(root).as_posix() for path in root.rglob("*")
                  if path.is_file() and not _skipped(path.relative_to(root).as_posix()))


def _skipped(name: str) -> bool:
    parts = name.split("/")
    in_skipped_dir = any(p in SKIP_DIRS or p.endswith(".egg-info") for p in parts[:-1])
    return in_skipped_dir or name.endswith(".pyc")


def requirements(root: Path) -> tuple[str, list[str]]:
    """(the torch requirement, the others) that grading needs, from pyproject.toml."""
    project = tomllib.loads((Path(root) / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    wanted = list(project.get("dependencies", []))
    for requirement in project.get("optional-dependencies", {}).get("test", []):
        name = requirement.split(">")[0].split("=")[0].split("<")[0].strip()
        if name in GRADING_EXTRAS:
            wanted.append(requirement)
    torch = [r for r in wanted if r.replace(" ", "").startswith("torch")]
    return (torch[0] if torch else "torch"), [r for r in wanted if r not in torch]


def build_gradescope(root: Path, out: Path, chapters: list[str] | None = None,
                     timeout: float = 30) -> Path:
    """Write the autograder zip for the named chapters (default: all)."""
    root, out = Path(root), Path(out)
    loaded = load_chapters(root, chapters)
    packages = sorted({task.package for chapter in loaded for task in chapter.tasks})
    keep = ("pyproject.toml", "course/", "exercises/", *(f"{p}/" for p in packages))
    files = {name: root / name for name in repo_files(root) if name.startswith(keep)}
    if not any(name.startswith("course/") for name in files):   # a repo that uses ours
        machinery = Path(__file__).resolve().parent
        files.update({f"course/{name}": machinery / name for name in repo_files(machinery)})
    torch, others = requirements(root)
    scripts = {
        "setup.sh": SETUP_SH.format(torch_index=TORCH_INDEX, torch=shlex.quote(torch),
                                    others=" ".join(shlex.quote(r) for r in others)),
        "run_autograder": RUN_AUTOGRADER.format(
            chapters="".join(f"{c.name} " for c in loaded) if chapters else "",
            timeout=f"{timeout:g}"),
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in scripts.items():
            _add(archive, name, text.encode(), executable=True)
        for name, path in sorted(files.items()):
            _add(archive, name, path.read_bytes(), executable=False)
    return out


def _add(archive: zipfile.ZipFile, name: str, data: bytes, *, executable: bool) -> None:
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))   # reproducible
    info.external_attr = (0o755 if executable else 0o644) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    archive.writestr(info, data)


def _find(candidates: list[Path], submission: Path, chapter: str, name: str,
          unique: bool) -> Path | None:
    """The submitted file for exercises/<chapter>/<name>, by the most specific path."""
    matches = [p for p in candidates if p.name == name]
    for suffix in (f"exercises/{chapter}/{name}", f"{chapter}/{name}"):
        found = [p for p in matches if p.relative_to(submission).as_posix().endswith(suffix)]
        if len(found) == 1:
            return found[0]
    return matches[0] if unique and len(matches) == 1 else None


def import_submission(root: Path, submission: Path) -> int:
    """Copy a submission's exercise files into the repository's exercises/chNN/."""
    root, submission = Path(root), Path(submission)
    chapters = load_chapters(root)
    candidates = [p for p in submission.rglob("*.py") if "__pycache__" not in p.parts]
    wanted = sorted({(chapter.name, task.file_name)
                     for chapter in chapters for task in chapter.tasks})
    names = [name for _, name in wanted]
    used = set()
    for chapter, name in wanted:
        found = _find(candidates, submission, chapter, name, unique=names.count(name) == 1)
        if found is None:
            print(f"not submitted: exercises/{chapter}/{name} (its tasks score 0)")
            continue
        shutil.copyfile(found, root / "exercises" / chapter / name)
        used.add(found)
        print(f"imported {found.relative_to(submission)} -> exercises/{chapter}/{name}")
    for path in sorted(set(candidates) - used):
        print(f"ignored  {path.relative_to(submission)} (not an exercise file)")
    return 0


# -- the check: the zip, run as Gradescope runs it ------------------------------------------

def submission_files(chapters: list[Chapter], impl: str) -> dict[str, str]:
    """A submission's files (path -> text): the solutions, or the generated stubs."""
    files = {}
    for chapter in chapters:
        for module, tasks in chapter.modules().items():
            name = f"exercises/{chapter.name}/{tasks[0].file_name}"
            if impl == "stub":
                files[name] = render_exercise(chapter, module)
            else:
                files[name] = (chapter.solution_directory / tasks[0].file_name).read_text(
                    encoding="utf-8")
    return files


def run_autograder(archive: Path, files: dict[str, str], where: Path,
                   timeout: float = 3600) -> tuple[dict | None, str]:
    """Unpack `archive` into `where` (a stand-in for /autograder), submit `files`, run
    `run_autograder`: (results.json, or None when it wrote none; the run's output)."""
    source, submission = where / "source", where / "submission"
    zipfile.ZipFile(archive).extractall(source)
    for name, text in files.items():
        (submission / name).parent.mkdir(parents=True, exist_ok=True)
        (submission / name).write_text(text, encoding="utf-8")
    submission.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "AUTOGRADER_ROOT": str(where), "AUTOGRADER_PYTHON": sys.executable}
    run = subprocess.run(["bash", str(source / "run_autograder")], env=env, text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
    results = where / "results" / "results.json"
    found = json.loads(results.read_text(encoding="utf-8")) if results.is_file() else None
    return found, run.stdout


def check_gradescope(root: Path, archive: Path, chapters: list[str] | None = None) -> list[str]:
    """Problems found running the autograder on the solutions (every point) and on the
    stubs (none); each run's score is printed."""
    loaded = load_chapters(root, chapters)
    total = round(sum(chapter.points for chapter in loaded), 2)
    expected = {"solution": total, "stub": 0}
    with tempfile.TemporaryDirectory(prefix="course-gradescope-") as scratch:
        def grade(impl: str) -> tuple[dict | None, str]:
            return run_autograder(archive, submission_files(loaded, impl), Path(scratch) / impl)

        with ThreadPoolExecutor(max_workers=2) as pool:   # the two runs side by side
            runs = dict(zip(expected, pool.map(grade, expected)))
    problems = []
    for impl, (results, output) in runs.items():
        if results is None or "tests" not in results:
            problems.append(f"gradescope on the {impl}s: no results.json with tests\n"
                            f"{output[-2000:]}")
            continue
        print(f"gradescope check: the {impl}s score {results['score']:g} / "
              f"{results['max_score']:g}")
        problems += results_problems(results, impl, expected[impl], total)
    return problems


def results_problems(results: dict, impl: str, expected: float, total: float) -> list[str]:
    """What is wrong with one results.json: its score, its total, its tests' shares."""
    label = f"gradescope on the {impl}s"
    problems = []
    if (results["score"], results["max_score"]) != (expected, total):
        problems.append(f"{label}: scored {results['score']:g} / {results['max_score']:g}, "
                        f"expected {expected:g} / {total:g}")
    shares = sum(Fraction(str(test["max_score"])) for test in results["tests"])
    if shares != Fraction(str(total)):
        problems.append(f"{label}: the tests' max_score add up to {float(shares):g}, "
                        f"not the manifests' {total:g}")
    if "WARNING" in results.get("output", ""):
        problems.append(f"{label}: {results['output'].splitlines()[0]}")
    wanted = "passed" if impl == "solution" else "failed"
    problems += [f"{label}: {test['name']} {test['status']}"
                 for test in results["tests"] if test["status"] != wanted]
    return problems
