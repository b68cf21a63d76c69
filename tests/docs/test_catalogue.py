"""The graph-break catalogue page is generated from the package's catalogue (chapter 6).

minidynamo's ids are its own (`MD0001`...); each entry that names torch's counterpart
must name a real entry of the installed torch's `graph_break_registry.json`."""
import json
import re
from pathlib import Path

import pytest
import torch._dynamo

from course import mkdocs_hooks
from course.mkdocs_hooks import DocsError, expand
from minidynamo import exc

REGISTRY = json.loads(
    (Path(torch._dynamo.__file__).parent / "graph_break_registry.json").read_text()
)


def test_the_catalogue_macro_lists_every_kind_with_its_explanation_and_hint():
    out = expand("{{ catalogue() }}\n", "chapters/graph-break-catalogue.md")
    assert out.lstrip().startswith("# ")
    for kind in exc.CATALOGUE.values():
        assert kind.id in out and kind.title in out
        assert kind.explanation in out and kind.hint in out


def test_ids_are_minidynamos_own_and_never_torchs():
    ids = [kind.id for kind in exc.CATALOGUE.values()]
    assert len(set(ids)) == len(ids)
    assert all(re.fullmatch(r"MD\d{4}", kind_id) for kind_id in ids), ids
    assert not set(ids) & set(REGISTRY)


@pytest.mark.parametrize("kind", exc.CATALOGUE.values(), ids=lambda kind: kind.id)
def test_each_torch_counterpart_is_a_real_registry_entry(kind):
    assert (kind.torch_id is None) == (kind.torch_gb_type is None)
    if kind.torch_id is None:
        assert kind.torch_note, f"{kind.id}: say why torch has no counterpart"
        return
    gb_types = [entry["Gb_type"] for entry in REGISTRY[kind.torch_id]]
    assert kind.torch_gb_type in gb_types, (kind.torch_id, gb_types)


def test_torch_links_follow_torchs_own_pattern():
    from torch._dynamo.exc import get_gbid_documentation_link

    kind = exc.CATALOGUE["data-dependent branch"]
    assert kind.torch_url == get_gbid_documentation_link(kind.torch_gb_type)
    assert kind.torch_url.endswith("/gb/gb0170.html")


def test_the_page_links_minidynamos_entry_and_torchs():
    out = exc.catalogue_markdown()
    for kind in exc.CATALOGUE.values():
        anchor = kind.id.lower()
        assert f"[{kind.id}](#{anchor})" in out and f"{{#{anchor}}}" in out
        if kind.torch_id:
            assert f"[{kind.torch_id}]({kind.torch_url})" in out


def test_a_break_message_names_torchs_counterpart():
    with pytest.raises(exc.Unsupported) as info:
        exc.graph_break(exc.DATA_DEPENDENT_BRANCH, "if on a tensor")
    assert "Graph break MD0003 (data-dependent branch)" in str(info.value)
    assert "TorchDynamo: GB0170 (Data-dependent branching)" in str(info.value)


def test_the_page_follows_the_package(monkeypatch):
    invented = exc.BreakKind("MD9999", "invented kind", "Made up by a test.", "Ignore it.")
    monkeypatch.setitem(exc.CATALOGUE, invented.title, invented)
    out = mkdocs_hooks.catalogue()
    assert "MD9999" in out and "Made up by a test." in out


def test_without_a_generator_the_hook_renders_the_entries(monkeypatch):
    monkeypatch.delattr(exc, "catalogue_markdown", raising=False)
    out = mkdocs_hooks.catalogue()
    assert out.startswith("# Graph-break catalogue\n")
    for kind in exc.CATALOGUE.values():
        assert f"## {kind.id}: {kind.title}" in out and kind.hint in out
        if kind.torch_id:
            assert kind.torch_url in out


@pytest.mark.parametrize("call", ['catalogue("x")', "catalogue(1)", "code()"])
def test_catalogue_takes_no_argument_and_the_others_need_one(call):
    with pytest.raises(DocsError, match="unknown macro"):
        expand(f"{{{{ {call} }}}}\n", "p.md")
