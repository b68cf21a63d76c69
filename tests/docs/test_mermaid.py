"""The site's own mermaid (course/mermaid.py): cached once, pinned by hash, clear when missing."""
import io
import tarfile

import pytest

from course import mermaid
from course.mermaid import MermaidUnavailable


def test_a_filled_cache_is_used_without_npm(tmp_path, monkeypatch):
    (tmp_path / mermaid.SCRIPT).write_text("window.mermaid = {};")
    (tmp_path / mermaid.LICENSE).write_text("MIT")
    monkeypatch.setattr(mermaid.shutil, "which", lambda name: None)
    assert mermaid.mermaid_js(tmp_path) == tmp_path / mermaid.SCRIPT


def test_without_npm_or_cache_the_build_says_what_to_do(tmp_path, monkeypatch):
    monkeypatch.setattr(mermaid.shutil, "which", lambda name: None)
    with pytest.raises(MermaidUnavailable) as error:
        mermaid.mermaid_js(tmp_path / "empty")
    message = str(error.value)
    assert "npm was not found" in message and mermaid.MERMAID_VERSION in message
    assert "copy mermaid@" in message and "no CDN" in message


def test_a_tarball_that_is_not_the_pinned_one_is_refused(tmp_path):
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        data = b"alert('not mermaid')"
        member = tarfile.TarInfo("package/dist/mermaid.min.js")
        member.size = len(data)
        archive.addfile(member, io.BytesIO(data))
    tarball = tmp_path / "mermaid-0.0.0.tgz"
    tarball.write_bytes(buffer.getvalue())
    with pytest.raises(MermaidUnavailable, match="does not match the pinned sha512"):
        mermaid._check_integrity(tarball)


def test_the_hooks_serve_the_script_before_material_looks_for_it():
    from course import mkdocs_hooks

    class Config(dict):
        extra_javascript: list = []

    config = Config()
    config.extra_javascript = []
    assert mkdocs_hooks.on_config(config).extra_javascript == [mermaid.SITE_PATH]
    assert mkdocs_hooks.on_config(config).extra_javascript == [mermaid.SITE_PATH]  # once
