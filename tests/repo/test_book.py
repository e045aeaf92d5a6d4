"""The course book (tools/build_book.py, `make book`): builds with warnings as errors, offline, and holds
every page it should: the README as landing page, every notebook (with its stored figures and a Binder
button pinned to the release), the instructor guide, the changelog and an API page per public module.

Marked ``book`` (deselect with ``-m "not book"``); the build runs once per session (tests/bookbuild.py).
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from bookbuild import ROOT, built_book

import pavlovlab

pytestmark = pytest.mark.book

NOTEBOOKS = sorted(p.stem for p in (ROOT / "course").glob("[0-9]*.ipynb"))
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


@pytest.fixture(scope="module")
def book() -> dict:
    b = built_book()
    print(f"book built in {b['seconds']:.1f} s")
    assert b["rc"] == 0, f"sphinx -W failed:\n{b['log'][-5000:]}"
    return b


def _page(book, rel: str) -> str:
    path = book["html"] / rel
    assert path.is_file(), f"missing page {rel}"
    return path.read_text(encoding="utf-8")


def test_every_page_is_built(book):
    index = _page(book, "index.html")
    readme_title = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()[0].lstrip("# ").strip()
    assert html.escape(readme_title.split("—")[0].strip()) in index  # the README is the landing page
    for stem in NOTEBOOKS:
        page = _page(book, f"course/{stem}.html")
        assert 'href="' in index and f"course/{stem}.html" in index, f"{stem} missing from the navigation"
        assert "cell_output" in page or "cell_input" in page
    _page(book, "course/INSTRUCTOR_GUIDE.html")
    _page(book, "CHANGELOG.html")


def test_api_reference_documents_every_public_module(book):
    import pkgutil

    api = _page(book, "api.html")
    modules = [m.name for m in pkgutil.iter_modules(pavlovlab.__path__) if not m.name.startswith("_") and not m.ispkg]
    assert "attention" in modules
    for name in modules:
        assert f'id="module-pavlovlab.{name}"' in api, f"no API section for pavlovlab.{name}"
    # docstrings, not just headings: the package's main functions are documented with their signatures
    for fn in pavlovlab.__all__:
        obj = getattr(pavlovlab, fn)
        assert f'id="{obj.__module__}.{obj.__qualname__}"' in api, f"{fn} is not in the API reference"


def test_notebook_pages_show_stored_figures_and_a_pinned_binder_button(book):
    tag = f"v{pavlovlab.__version__}"
    for stem in NOTEBOOKS:
        page = _page(book, f"course/{stem}.html")
        nb = json.loads((ROOT / "course" / f"{stem}.ipynb").read_text(encoding="utf-8"))
        pngs = sum("image/png" in o.get("data", {}) for c in nb["cells"] for o in c.get("outputs", []))
        imgs = len(re.findall(r'<img[^>]+src="\.\./_images/[0-9a-f]+\.png"', page))
        assert imgs == pngs, f"{stem}: {pngs} stored PNG figures but {imgs} images on the page"
        solutions = sum("solution" in c.get("metadata", {}).get("tags", []) for c in nb["cells"])
        assert len(re.findall(r'class="cell [^"]*tag_solution[^"]*tag_hide-input', page)) == solutions, \
            f"{stem}: not every solution cell is folded"
        binder = f"https://mybinder.org/v2/gh/pavlovlab/pavlovlab/{tag}?urlpath=lab/tree/course/{stem}.ipynb"
        assert binder in html.unescape(page), f"{stem}: no Binder button pinned to {tag}"


def test_widget_outputs_show_their_static_fallback(book):
    for stem in NOTEBOOKS:
        page = _page(book, f"course/{stem}.html")
        nb = json.loads((ROOT / "course" / f"{stem}.ipynb").read_text(encoding="utf-8"))
        views = sum(WIDGET_VIEW in o.get("data", {}) for c in nb["cells"] for o in c.get("outputs", []))
        notes = page.count("pavlovlab-widget-fallback")
        assert notes == views, f"{stem}: {views} widget outputs but {notes} static fallback notes"
        outputs = " ".join(re.findall(r'<div class="cell_output[^"]*"(.*?)</div>\s*</div>', page, flags=re.S))
        assert "VBox(children=" not in outputs, f"{stem}: a widget shown as its text repr"


def test_book_is_self_contained_offline(book):
    """No script, stylesheet or font from the network; MathJax is bundled and used on pages with math."""
    remote = re.compile(r'<(?:script|link)[^>]+(?:src|href)="(?:https?:)?//[^"]+"')
    for page in _pages(book):
        text = page.read_text(encoding="utf-8")
        assert not remote.findall(text), f"{page.name} loads {remote.findall(text)[:2]}"
    assert (book["html"] / "_static" / "mathjax" / "tex-chtml.js").is_file()
    assert any('src="../_static/mathjax/tex-chtml.js' in _page(book, f"course/{s}.html") for s in NOTEBOOKS)


def _pages(book) -> list[Path]:
    """The built pages (not the theme's Jinja macro files under _static/)."""
    return [p for p in book["html"].rglob("*.html") if "_static" not in p.relative_to(book["html"]).parts]


def _links(text: str) -> list[str]:
    return re.findall(r'(?:href|src)="([^"]+)"', text)


def test_no_broken_internal_link(book):
    """Every relative href/src of every page points at a file of the build (and an anchor on it, if any)."""
    root = book["html"]
    broken, checked = [], 0
    ids: dict[Path, set[str]] = {}
    for page in _pages(book):
        for link in _links(page.read_text(encoding="utf-8")):
            parts = urlsplit(html.unescape(link))
            if parts.scheme or link.startswith(("//", "mailto:", "javascript:")) or not (parts.path or parts.fragment):
                continue
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            checked += 1
            if target.is_dir():
                target = target / "index.html"
            if not target.is_file():
                broken.append(f"{page.relative_to(root)} -> {link}")
                continue
            if parts.fragment and target.suffix == ".html" and page.name not in ("genindex.html", "search.html"):
                if target not in ids:
                    ids[target] = set(re.findall(r'id="([^"]+)"', target.read_text(encoding="utf-8")))
                if unquote(parts.fragment) not in ids[target]:
                    broken.append(f"{page.relative_to(root)} -> {link} (no such anchor)")
    assert checked > 100
    assert not broken, f"{len(broken)} broken internal links:\n" + "\n".join(broken[:30])


def test_links_to_repository_files_outside_the_book_point_at_the_release_on_github():
    import sys

    sys.path.insert(0, str(ROOT / "tools"))
    from build_book import REPO_URL, _repoint

    guide = ROOT / "course" / "INSTRUCTOR_GUIDE.md"
    staged = {"course/02_hebbian_memory.ipynb", "LICENSE"}
    text = ("[nb](02_hebbian_memory.ipynb#exercise) [code](../pavlovlab/memory.py) [lic](../LICENSE) "
            "[dir](../pavlovlab) [gone](../no_such_file.md) [web](https://arxiv.org/abs/2508.08289)")
    out = _repoint(text, guide, staged, "v9.9.9")
    assert "[nb](02_hebbian_memory.ipynb#exercise)" in out and "[lic](../LICENSE)" in out
    assert f"[code]({REPO_URL}/blob/v9.9.9/pavlovlab/memory.py)" in out
    assert f"[dir]({REPO_URL}/tree/v9.9.9/pavlovlab)" in out
    assert "[gone](../no_such_file.md)" in out and "[web](https://arxiv.org/abs/2508.08289)" in out
