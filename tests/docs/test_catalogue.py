"""The graph-break catalogue page is generated from the package's catalogue (chapter 6)."""
import pytest

from course import mkdocs_hooks
from course.mkdocs_hooks import DocsError, expand
from minidynamo import exc


def test_the_catalogue_macro_lists_every_kind_with_its_explanation_and_hint():
    out = expand("{{ catalogue() }}\n", "chapters/graph-break-catalogue.md")
    assert out.lstrip().startswith("# ")
    for kind in exc.CATALOGUE.values():
        assert kind.id in out and kind.title in out
        assert kind.explanation in out and kind.hint in out


def test_the_page_follows_the_package(monkeypatch):
    invented = exc.BreakKind("GB9999", "invented kind", "Made up by a test.", "Ignore it.")
    monkeypatch.setitem(exc.CATALOGUE, invented.title, invented)
    out = mkdocs_hooks.catalogue()
    assert "GB9999" in out and "Made up by a test." in out


def test_without_a_generator_the_hook_renders_the_entries(monkeypatch):
    monkeypatch.delattr(exc, "catalogue_markdown", raising=False)
    out = mkdocs_hooks.catalogue()
    assert out.startswith("# Graph-break catalogue\n")
    for kind in exc.CATALOGUE.values():
        assert f"## {kind.id}: {kind.title}" in out and kind.hint in out


@pytest.mark.parametrize("call", ['catalogue("x")', "catalogue(1)", "code()"])
def test_catalogue_takes_no_argument_and_the_others_need_one(call):
    with pytest.raises(DocsError, match="unknown macro"):
        expand(f"{{{{ {call} }}}}\n", "p.md")
