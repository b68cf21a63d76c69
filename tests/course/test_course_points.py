"""Points add up exactly: a task's points split among its tests in whole hundredths, so
every report's total, Gradescope's included, is the manifests' total to the cent."""

import json
import subprocess
import sys
from fractions import Fraction

import pytest

from course.manifest import DEFAULT_ROOT, ManifestError, load_chapters, split_points
from course.reports import ChapterGrade, Grade, ScoredTest, gradescope_results, text_report


def exact(value) -> Fraction:
    """A number as JSON writes it, read as the decimal it says (0.43 is 43/100)."""
    return Fraction(str(value))


@pytest.mark.parametrize("points, count", [(3, 7), (1, 3), (2, 3), (2.5, 4), (15, 1), (0.05, 7)])
def test_shares_add_up_to_the_points_in_whole_hundredths(points, count):
    shares = split_points(points, count)
    assert len(shares) == count and sum(map(exact, shares)) == exact(points)
    assert all(exact(share) * 100 == round(share * 100) for share in shares)
    assert shares == sorted(shares, reverse=True) and shares[0] - shares[-1] <= 0.01 + 1e-9
    assert split_points(3, 7) == [0.43] * 6 + [0.42]


def test_points_finer_than_hundredths_are_refused(repo):
    manifest = repo / "exercises/ch01/manifest.toml"
    manifest.write_text(manifest.read_text().replace("points = 3", "points = 0.333", 1))
    with pytest.raises(ManifestError, match="whole hundredths"):
        load_chapters(repo, ["ch01"])


@pytest.fixture(scope="module")
def collected(tmp_path_factory):
    """The real course's graded tests with their shares, as the plugin collects them."""
    log = tmp_path_factory.mktemp("collect") / "log.jsonl"
    run = subprocess.run([sys.executable, "-m", "pytest", "exercises", "--collect-only", "-q",
                          "-p", "no:cacheprovider", f"--course-log={log}"],
                         cwd=DEFAULT_ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    events = [json.loads(line) for line in log.read_text().splitlines()]
    return next(event for event in events if event["event"] == "collected")["tests"]


def test_every_chapters_results_json_adds_up_to_its_manifest(collected):
    chapters = load_chapters(DEFAULT_ROOT)
    grades = []
    for chapter in chapters:
        tests = [ScoredTest(number=f"{chapter.number}.{index}", nodeid=test["nodeid"],
                            shares=test["shares"], status="passed")
                 for index, test in enumerate(
                     (t for t in collected if t["chapter"] == chapter.name), start=1)]
        grades.append(ChapterGrade(chapter, tests))
        results = gradescope_results(Grade("solution", [grades[-1]]))
        per_test = sum(exact(test["max_score"]) for test in results["tests"])
        assert per_test == exact(chapter.points), chapter.name
        assert exact(results["max_score"]) == exact(results["score"]) == exact(chapter.points)
        for task in chapter.tasks:
            assert sum(exact(t.shares[task.id]) for t in tests if task.id in t.shares) \
                == exact(task.points), task.id
    everything = Grade("solution", grades)
    total = sum(exact(chapter.points) for chapter in chapters)
    assert exact(gradescope_results(everything)["max_score"]) == total
    assert f"{float(total):.2f} / {float(total):.2f} (100.0%)" in text_report(everything)
