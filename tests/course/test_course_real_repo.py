"""The package-side guard on the real repository: manifests resolve, generated files fresh."""

from pathlib import Path

from course.generate import check
from course.manifest import DEFAULT_ROOT, load_chapters
from course_helpers import FIXTURE


def test_every_manifest_target_exists_and_generated_files_are_fresh():
    chapters = load_chapters(DEFAULT_ROOT)      # raises if a target was renamed or removed
    report = check(chapters)
    assert not report.failed, "\n".join(report.lines)


def test_the_fixture_uses_the_real_conftest():
    real = (Path(DEFAULT_ROOT) / "exercises/conftest.py").read_text()
    assert (FIXTURE / "exercises/conftest.py").read_text() == real
