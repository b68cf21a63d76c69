"""Mermaid for the course site, served from the site itself (no CDN, so diagrams work offline).

mkdocs-material draws every ```` ```mermaid ```` block with the global `mermaid` object
and, when the page has none, loads it from a CDN; offline (a classroom, a lab machine,
CI) each diagram then stays raw text. The site hook (`course/mkdocs_hooks.py`) adds the
file returned by `mermaid_js()` to the site and to `extra_javascript`, so the global is
defined before material looks for it.

Why vendored at build time and not committed: `dist/mermaid.min.js` is 2.7 MB of
generated, minified code. Committed, every upgrade would add megabytes to every clone
and a diff no one can review; its MIT licence would allow it, size decides against it.
Instead the build takes the npm registry's tarball of one pinned version, checks it
against the pinned sha512 (the `integrity` field npm records), and keeps the script and
its licence in `.cache/mermaid/<version>/` (git-ignored). The first build needs the
npm registry (CI has it); every build after that, `make docs` included, works offline.
Without npm and without the cache the build stops with a message saying what to do.
"""
from __future__ import annotations

import base64
import hashlib
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

from mkdocs.exceptions import PluginError

ROOT = Path(__file__).resolve().parents[1]

MERMAID_VERSION = "11.17.2"  # material 9.x draws with mermaid 11 (its CDN fallback is @11)
MERMAID_INTEGRITY = (  # `npm view mermaid@11.17.2 dist.integrity`
    "sha512-"
    "V6K3C8EBdEsPFZXSKMJe6ppQOENxuHARr9GvHX4hh47lAbhMRD9qf4oEK7LoaRQxULMa80/qt5gHO73aCleBBg=="
)
CACHE = ROOT / ".cache" / "mermaid" / MERMAID_VERSION
SCRIPT = "mermaid.min.js"
LICENSE = "LICENSE"
SITE_PATH = "assets/javascripts/mermaid.min.js"  # where the site serves it
SITE_LICENSE_PATH = "assets/javascripts/mermaid.LICENSE.txt"


class MermaidUnavailable(PluginError):
    """The site's mermaid script is neither cached nor obtainable from the npm registry."""


def mermaid_js(cache: Path = CACHE) -> Path:
    """The path of the pinned `mermaid.min.js`, fetched into `cache` on first use."""
    script = cache / SCRIPT
    if script.is_file() and (cache / LICENSE).is_file():
        return script
    with tempfile.TemporaryDirectory(prefix="mermaid-") as scratch:
        tarball = _npm_pack(Path(scratch))
        _check_integrity(tarball)
        _extract(tarball, cache)
    return script


def _npm_pack(scratch: Path) -> Path:
    """`npm pack mermaid@VERSION` into `scratch`; the path of the tarball it wrote."""
    npm = shutil.which("npm")
    if npm is None:
        raise MermaidUnavailable(_advice("npm was not found (Debian: apt-get install npm)"))
    command = [npm, "pack", f"mermaid@{MERMAID_VERSION}", "--silent",
               "--pack-destination", str(scratch)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        raise MermaidUnavailable(_advice("npm pack took more than 5 minutes")) from None
    tarballs = list(scratch.glob("mermaid-*.tgz"))
    if done.returncode != 0 or len(tarballs) != 1:
        last = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise MermaidUnavailable(_advice(f"`{' '.join(command[:3])}` failed: {' '.join(last)}"))
    return tarballs[0]


def _check_integrity(tarball: Path) -> None:
    algorithm, _, expected = MERMAID_INTEGRITY.partition("-")
    digest = base64.b64encode(hashlib.new(algorithm, tarball.read_bytes()).digest()).decode()
    if digest != expected:
        raise MermaidUnavailable(
            f"{tarball.name} does not match the pinned {algorithm} of mermaid@{MERMAID_VERSION} "
            f"(course/mermaid.py: MERMAID_INTEGRITY); refusing to serve it"
        )


def _extract(tarball: Path, cache: Path) -> None:
    """Copy the package's `dist/mermaid.min.js` and `LICENSE` into `cache`."""
    wanted = {f"package/dist/{SCRIPT}": SCRIPT, f"package/{LICENSE}": LICENSE}
    cache.mkdir(parents=True, exist_ok=True)
    with tarfile.open(tarball, "r:gz") as archive:
        for member, name in wanted.items():
            source = archive.extractfile(member)
            partial = cache / f"{name}.partial"  # renamed once whole: no half-written cache
            partial.write_bytes(source.read())
            partial.replace(cache / name)


def _advice(problem: str) -> str:
    return (
        f"the site serves mermaid {MERMAID_VERSION} itself (no CDN), but it is not in "
        f"{_shown(CACHE)} and cannot be fetched: {problem}. Run the build once with access "
        f"to the npm registry, or copy mermaid@{MERMAID_VERSION}'s dist/{SCRIPT} and "
        f"{LICENSE} into {_shown(CACHE)}/."
    )


def _shown(path: Path) -> str:
    try:
        return path.relative_to(ROOT).as_posix()
    except ValueError:
        return path.as_posix()
