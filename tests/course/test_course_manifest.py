"""Manifests: loading, validation errors that say what to fix, the package-side guard."""

import pytest

from course.manifest import ManifestError, exercise_file_name, load_chapters, normalise_chapter


def write_manifest(repo, chapter, body):
    (repo / "exercises" / chapter / "manifest.toml").write_text(body)


TASK = '''
[[task]]
id = "{id}"
target = "{target}"
points = 1
title = "A task"
'''


def test_loads_tasks_and_their_names(shared_repo):
    ch01, ch02 = load_chapters(shared_repo)
    assert (ch01.name, ch01.number, ch01.title, ch01.points) == ("ch01", 1, "Toy operations", 8)
    bump = ch01.task("ch01.3")
    assert (bump.module, bump.qualname, bump.class_name, bump.name) == (
        "toydynamo.ops", "Counter.bump", "Counter", "bump")
    assert bump.file_name == "ops.py" and bump.package == "toydynamo"
    assert ch01.task("ch01.1").class_name is None
    assert list(ch02.modules()) == ["toydynamo.pipeline"]
    assert [c.name for c in load_chapters(shared_repo, ["2"])] == ["ch02"]


def test_file_names_and_chapter_names():
    assert exercise_file_name("minidynamo.bytecode.scanner") == "bytecode_scanner.py"
    assert exercise_file_name("minidynamo.api") == "api.py"
    assert normalise_chapter("ch1") == normalise_chapter("01") == "ch01"
    with pytest.raises(ManifestError, match="write it like ch01"):
        normalise_chapter("one")


@pytest.mark.parametrize("body, message", [
    ("chapter = 1\ntitle = 'T'\n" + TASK.format(id="ch01.1", target="toydynamo.ops:sub"),
     r"unknown target toydynamo.ops:sub: ops.py defines no function sub"),
    ("chapter = 1\ntitle = 'T'\n" + TASK.format(id="ch01.1", target="toydynamo.ops:ad"),
     r"did you mean add\?"),
    ("chapter = 1\ntitle = 'T'\n" + TASK.format(id="ch01.1", target="toydynamo.ops:Countr.bump"),
     r"defines no class Countr \(did you mean Counter\?\)"),
    ("chapter = 1\ntitle = 'T'\n" + TASK.format(id="ch01.1", target="toydynamo.nope:f"),
     r"no module toydynamo.nope"),
    ("chapter = 1\ntitle = 'T'\n" + TASK.format(id="ch01.1", target="toydynamo.ops:add") * 2,
     r"duplicate task id ch01.1"),
    ("chapter = 1\ntitle = 'T'\n" + TASK.format(id="ch01.1", target="toydynamo.ops:add")
     + TASK.format(id="ch01.2", target="toydynamo.ops:add"), r"both target toydynamo.ops:add"),
    ("chapter = 1\ntitle = 'T'\n" + TASK.format(id="ch02.1", target="toydynamo.ops:add"),
     r"the id does not match the chapter"),
    ("chapter = 1\ntitle = 'T'\n" + TASK.format(id="ch01.x", target="toydynamo.ops:add"),
     r"an id is written ch01.K"),
    ("chapter = 3\ntitle = 'T'\n" + TASK.format(id="ch01.1", target="toydynamo.ops:add"),
     r"should be `chapter = 1`"),
    ("chapter = 1\ntitle = 'T'\ncolour = 'red'\n", r"unknown key\(s\) \['colour'\]"),
    ("chapter = 1\ntitle = 'T'\n", r"lists no \[\[task\]\]"),
    ("chapter = 1\ntitle = 'T'\n" + TASK.format(id="ch01.1", target="add"), r"should be"),
    ("chapter = 1\ntitle = 'T'\n" + TASK.format(id="ch01.1", target="toydynamo.ops:add")
     .replace("points = 1", "points = 0"), r"points must be a positive number"),
    ("chapter = 1\ntitle = 'T'\n" + TASK.format(id="ch01.1", target="toydynamo.ops:add")
     .replace("points = 1", "points = 1\nweight = 2"), r"unknown key\(s\) \['weight'\]"),
    ("chapter = 1\ntitle = \n", r"not valid TOML"),
])
def test_manifest_errors_say_what_to_fix(repo, body, message):
    write_manifest(repo, "ch01", body)
    with pytest.raises(ManifestError, match=message) as error:
        load_chapters(repo, ["ch01"])
    assert "exercises/ch01/manifest.toml" in str(error.value) or "twice" in str(error.value)


def test_a_target_may_be_an_exercise_only_once(repo):
    write_manifest(repo, "ch02", "chapter = 2\ntitle = 'T'\n"
                   + TASK.format(id="ch02.1", target="toydynamo.ops:add"))
    with pytest.raises(ManifestError, match="an exercise twice: ch01.1 and ch02.1"):
        load_chapters(repo)


def test_a_module_whose_file_would_shadow_the_standard_library_is_refused(repo):
    (repo / "toydynamo" / "types.py").write_text("def f():\n    return 1\n")
    write_manifest(repo, "ch02", "chapter = 2\ntitle = 'T'\n"
                   + TASK.format(id="ch02.1", target="toydynamo.types:f"))
    with pytest.raises(ManifestError, match="clashes with pytest or the standard library"):
        load_chapters(repo, ["ch02"])


def test_unknown_chapter(shared_repo):
    with pytest.raises(ManifestError, match=r"no exercises/ch07/manifest.toml \(chapters: ch01, ch02\)"):
        load_chapters(shared_repo, ["ch07"])


def test_the_command_line_reports_a_broken_manifest(repo, capsys):
    from course.__main__ import main
    write_manifest(repo, "ch02", "chapter = 2\ntitle = 'T'\n"
                   + TASK.format(id="ch02.1", target="toydynamo.ops:nope"))
    assert main(["check", "--root", str(repo)]) == 2
    assert capsys.readouterr().err == ("error: exercises/ch02/manifest.toml: task ch02.1: unknown "
                                       "target toydynamo.ops:nope: ops.py defines no function nope\n")
