"""The built site, opened in a real browser: diagrams drawn, no console errors, outputs shown.

The site is built strictly into a temporary folder, served on 127.0.0.1 and opened page
by page in headless Chromium (Debian's `chromium`, driven by playwright's Python
package). Every request to any other host is refused and reported, so the test also
proves that the site works offline (mermaid is served by the site: `course/mermaid.py`).
On every page:

- every ```` ```mermaid ```` block became an SVG, and none is mermaid's error picture;
- the console shows no error and no script raised;
- every example (a ```` ```python exec ```` block of the chapter) is on the page, and
  each one that prints is followed by its Output box.

Without Chromium (`make browser` installs it as root) or playwright (the `test` extra)
the test is skipped and says which is missing.
"""
from __future__ import annotations

import functools
import http.server
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from urllib.parse import urlparse

import pytest

from course.mkdocs_hooks import ROOT, Fence, exec_info, split_blocks

CHROMIUM = (os.environ.get("CHROMIUM") or shutil.which("chromium")
            or shutil.which("chromium-browser"))
playwright_api = pytest.importorskip(
    "playwright.sync_api", reason="playwright is not installed: pip install -e '.[test]'"
)
if CHROMIUM is None:
    pytest.skip(
        "Chromium was not found: install Debian's chromium (`make browser`, as root runs "
        "apt-get install chromium chromium-driver) or set CHROMIUM=/path/to/chromium",
        allow_module_level=True,
    )

PAGES = sorted((ROOT / "chapters").glob("*.md"))
DIAGRAM_TIMEOUT_MS = 30_000

# material draws each diagram into a *closed* shadow root; opened, the test can see it.
OPEN_SHADOW_ROOTS = """
const attachShadow = Element.prototype.attachShadow;
Element.prototype.attachShadow = function (init) {
  return attachShadow.call(this, { ...init, mode: "open" });
};
"""
DIAGRAMS_DRAWN = """
() => document.querySelectorAll("pre.mermaid").length === 0 &&
  [...document.querySelectorAll("div.mermaid")].every(d => d.shadowRoot?.querySelector("svg"))
"""
DIAGRAM_REPORT = """
() => ({
  raw: document.querySelectorAll("pre.mermaid").length,
  drawn: [...document.querySelectorAll("div.mermaid")].filter(
    d => d.shadowRoot?.querySelector("svg")).length,
  broken: [...document.querySelectorAll("div.mermaid")].filter(
    d => d.shadowRoot?.querySelector('svg[aria-roledescription="error"]')).length,
})
"""
EXAMPLE_REPORT = """
() => [...document.querySelectorAll(".exec-example")].map(example => {
  const next = example.nextElementSibling;
  return {
    silent: example.classList.contains("exec-silent"),
    output: next && next.classList.contains("exec-output") ? next.innerText.trim() : null,
    start: example.innerText.trim().split("\\n")[0],
  };
})
"""


def page_url(markdown: Path) -> str:
    """chapters/ch00-frames.md -> ch00-frames/ (mkdocs' directory URLs)."""
    return "" if markdown.stem == "index" else f"{markdown.stem}/"


def examples_in(markdown: Path) -> int:
    """How many ```python exec blocks the page's source has."""
    blocks = split_blocks(markdown.read_text())
    return sum(isinstance(block, Fence) and exec_info(block.info) is not None for block in blocks)


def diagrams_in(markdown: Path) -> int:
    """How many ```mermaid blocks the page's source has (a fence shown as code is not one)."""
    blocks = split_blocks(markdown.read_text())
    return sum(isinstance(block, Fence) and block.info.split()[:1] == ["mermaid"]
               for block in blocks)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The site, built strictly and served on 127.0.0.1; yields its base URL.

    `make test` builds the site strictly first and names the folder in
    MINIDYNAMO_BUILT_SITE, so it is not built twice; otherwise it is built here."""
    if os.environ.get("MINIDYNAMO_BUILT_SITE"):
        folder = Path(os.environ["MINIDYNAMO_BUILT_SITE"]).resolve()
        assert (folder / "index.html").is_file(), f"MINIDYNAMO_BUILT_SITE={folder} has no site"
    else:
        folder = tmp_path_factory.mktemp("site")
        build = subprocess.run(
            [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(folder)],
            cwd=ROOT, capture_output=True, text=True,
        )
        assert build.returncode == 0, build.stderr[-4000:]
    handler = functools.partial(QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/", folder
    server.shutdown()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002  (the base class's name)
        pass


@pytest.fixture(scope="module")
def browser():
    with playwright_api.sync_playwright() as driver:
        chromium = driver.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield chromium
        chromium.close()


@pytest.fixture
def visit(site, browser):
    """Open one page offline; returns (page, problems): console errors and refused requests."""
    base, _ = site
    context = browser.new_context()
    problems: list[str] = []

    def only_this_site(route):
        if urlparse(route.request.url).hostname == "127.0.0.1":
            return route.continue_()
        problems.append(f"request to another host: {route.request.url}")
        return route.abort()

    context.route("**/*", only_this_site)
    context.add_init_script(OPEN_SHADOW_ROOTS)

    def open_page(markdown: Path):
        page = context.new_page()
        page.on("console", lambda message: message.type == "error" and problems.append(
            f"console error: {message.text}"))
        page.on("pageerror", lambda error: problems.append(f"script error: {error}"))
        page.goto(base + page_url(markdown), wait_until="load")
        return page, problems

    yield open_page
    context.close()


def test_every_page_of_the_nav_is_checked(site):
    _, folder = site
    built = {path.parent.relative_to(folder).as_posix() for path in folder.rglob("index.html")}
    assert built == {page_url(page).rstrip("/") or "." for page in PAGES}


@pytest.mark.parametrize("markdown", PAGES, ids=lambda path: path.name)
def test_page_draws_its_diagrams_without_errors_and_shows_every_output(visit, markdown):
    page, problems = visit(markdown)
    expected_diagrams = diagrams_in(markdown)
    try:
        page.wait_for_function(DIAGRAMS_DRAWN, timeout=DIAGRAM_TIMEOUT_MS)
    except playwright_api.TimeoutError:
        pass  # reported below, with the counts
    diagrams = page.evaluate(DIAGRAM_REPORT)
    assert diagrams == {"raw": 0, "drawn": expected_diagrams, "broken": 0}, diagrams
    examples = page.evaluate(EXAMPLE_REPORT)
    assert len(examples) == examples_in(markdown)
    missing = [example["start"] for example in examples
               if not example["silent"] and not example["output"]]
    assert not missing, f"examples without their output: {missing}"
    assert not problems, "\n".join(problems)
