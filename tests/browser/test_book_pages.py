"""The built course book in headless Chromium: the landing page and two notebook pages, served over HTTP from
a fresh `-W` build (tests/bookbuild.py), with every request outside that server refused (the book must work
offline). Checks: stored figures are loaded images, the maths is typeset by the bundled MathJax (no raw TeX
left), widget outputs show their static fallback note, and no internal link on the three pages is broken; the
landing page's launch badges and the API page's rendered docstrings, with screenshots to look at.
Run alone with ``pytest -m browser tests/browser/test_book_pages.py``.
"""

from __future__ import annotations

import functools
import http.server
import json
import re
import threading
from pathlib import Path
from urllib.parse import urldefrag, urlsplit

import pytest
from bookbuild import ROOT, built_book

pytestmark = [pytest.mark.browser, pytest.mark.book]

PAGES = ["index.html", "course/02_hebbian_memory.html", "course/04_capacity_limits.html"]
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def site():
    book = built_book()
    assert book["rc"] == 0, f"the book does not build with -W:\n{book['log'][-3000:]}"
    handler = functools.partial(_Quiet, directory=str(book["html"]))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def page(browser, site, snapshot):
    context = browser.new_context(viewport={"width": 1300, "height": 900})
    context.set_default_timeout(60_000)
    outside: list[str] = []

    def route(r):
        if r.request.url.startswith(site):
            r.continue_()
        else:
            outside.append(r.request.url)
            r.abort()

    context.route("**/*", route)
    p = context.new_page()
    p.outside = outside
    snapshot["page"] = p
    yield p
    context.close()


def _widget_outputs(stem: str) -> int:
    """The notebook's interactive widgets (boxes of controls; a tqdm progress bar is a widget too, but its text
    fallback is the bar itself, not a note)."""
    nb = json.loads((ROOT / "course" / f"{stem}.ipynb").read_text(encoding="utf-8"))
    return sum(WIDGET_VIEW in o.get("data", {})
               and "".join(o["data"].get("text/plain", "")).startswith(("VBox", "HBox"))
               for c in nb["cells"] for o in c.get("outputs", []))


def _check_links(page, site: str, url: str) -> list[str]:
    """Every same-site link of the page answers 200, and its #anchor exists on the target page."""
    hrefs = page.eval_on_selector_all("a[href]", "els => els.map(e => e.href)")
    broken, ids_cache = [], {}
    for href in sorted(set(hrefs)):
        if not href.startswith(site):
            continue
        target, fragment = urldefrag(href)
        resp = page.request.get(target)
        if resp.status != 200:
            broken.append(f"{href} -> HTTP {resp.status}")
            continue
        generated = urlsplit(target).path.endswith(("genindex.html", "search.html"))
        if fragment and target.endswith(".html") and not generated:
            if target not in ids_cache:
                ids_cache[target] = resp.text()
            if f'id="{fragment}"' not in ids_cache[target]:
                broken.append(f"{href} -> no element with id {fragment!r}")
    return broken


@pytest.mark.parametrize("rel", PAGES)
def test_book_page(page, site, rel):
    page.goto(f"{site}/{rel}", wait_until="load")
    assert "pavlovlab" in page.title()

    # Figures: every stored figure is an <img> that loaded (natural width > 0).
    images = page.eval_on_selector_all(".cell_output img",
                                       "els => els.map(e => [e.getAttribute('src'), e.naturalWidth])")
    if rel.startswith("course/"):
        assert images, "no figure on the page"
        assert all(w > 0 for _, w in images), f"images that did not load: {[s for s, w in images if w == 0]}"

    # Maths: every math element holds MathJax's typeset output, and no raw TeX delimiters are left in it.
    n_math = page.locator(".math").count()
    if rel.startswith("course/"):
        assert n_math > 10, f"only {n_math} math elements"
    if n_math:
        page.wait_for_function("() => [...document.querySelectorAll('.math')]"
                               ".every(e => e.querySelector('mjx-container'))",
                               timeout=60_000)
        raw = page.eval_on_selector_all(".math",
                                        "els => els.filter(e => /\\\\\\(|\\\\\\[|\\$/.test(e.innerText)).length")
        assert raw == 0, f"{raw} math elements still show raw TeX"

    # Widgets: the static fallback note, never the widget's text repr.
    if rel.startswith("course/"):
        stem = Path(rel).stem
        notes = page.locator(".pavlovlab-widget-fallback")
        assert notes.count() == _widget_outputs(stem) > 0
        assert "Binder" in notes.first.inner_text()
        outputs = " ".join(page.locator(".cell_output").all_inner_texts())
        assert "VBox(children=" not in outputs and "HBox(children=" not in outputs
        # the Binder launch button, pinned to the release
        import sys

        sys.path.insert(0, str(ROOT / "tools"))
        import launch_links

        ref = launch_links.launch_ref()
        binder = page.locator(f'a[href*="mybinder.org/v2/gh/pavlovlab/pavlovlab/{ref}"]')
        assert binder.count() >= 1, f"no Binder launch button at {ref}"
        colab = page.locator(f'a[href*="colab.research.google.com/github/pavlovlab/pavlovlab/blob/{ref}/"]')
        assert colab.count() >= 1, f"no Colab launch button at {ref}"

    broken = _check_links(page, site, rel)
    assert not broken, f"broken internal links on {rel}:\n" + "\n".join(broken)
    assert not page.outside, f"{rel} tried to load from outside the book: {page.outside[:5]}"


def test_one_visible_search_control_and_clean_snippets(page, site):
    page.goto(f"{site}/course/04_capacity_limits.html", wait_until="load")
    visible = page.locator(".search-button__button, .search-button-field").filter(visible=True)
    assert visible.count() == 1, f"{visible.count()} visible search controls"
    page.goto(f"{site}/search.html?q=bucket", wait_until="load")
    page.wait_for_selector("#search-results li p, #search-results ul li", timeout=60_000)
    page.wait_for_function("() => [...document.querySelectorAll('#search-results li p')].length > 0", timeout=60_000)
    snippets = page.eval_on_selector_all("#search-results li p", "els => els.map(e => e.innerText)")
    assert snippets, "no search snippet"
    chrome = [t for t in snippets if "Light Dark" in t or "System Settings" in t or ".ipynb .pdf" in t]
    assert not chrome, f"snippets with the theme's buttons: {chrome[:2]}"


def test_long_code_lines_scroll_and_api_contents_fit(page, site):
    page.goto(f"{site}/course/04_capacity_limits.html", wait_until="load")
    # every code block wider than its box can be scrolled to its end (overflow-x auto or scroll, not hidden)
    clipped = page.eval_on_selector_all("div.cell_input pre", """els => els
        .filter(e => e.scrollWidth > e.clientWidth + 1)
        .filter(e => !['auto', 'scroll'].includes(getComputedStyle(e).overflowX))
        .map(e => e.innerText.slice(0, 60))""")
    assert not clipped, f"long code lines clipped: {clipped[:3]}"
    page.goto(f"{site}/api/pavlovlab.html", wait_until="load")
    overflow = page.evaluate("""() => {
        const toc = document.querySelector('.bd-sidebar-secondary');
        if (!toc) return null;
        const box = toc.getBoundingClientRect();
        return [...toc.querySelectorAll('a')].filter(a => a.getBoundingClientRect().right > box.right + 1).length;
    }""")
    assert overflow == 0, f"{overflow} entries of the API page's contents run out of their column"


# ------------------------------------------------------------------------------------------ the front door
SHOTS = Path(__file__).resolve().parent / "screenshots"
"""Where the front-door screenshots are written for a person to look at (ignored by git)."""
BADGE_LINKS = 'a[href*="mybinder.org/v2/"] img, a[href*="colab.research.google.com/github/"] img'


def test_front_door_badges_and_rendered_api_docstrings(page, site):
    """Screenshots of the landing page and the API page (tests/browser/screenshots/front-door-*.png): the launch
    links are badges of badge size with their words, the theme logs no error, and the API page shows the module
    docstrings as rendered text (paragraphs, code spans, links) with nothing cut off at the column's edge."""
    console: list[str] = []
    page.on("console", lambda m: console.append(m.text))
    page.goto(f"{site}/index.html", wait_until="load")
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / "front-door-landing.png"), full_page=True)
    badges = page.eval_on_selector_all(BADGE_LINKS, """els => els.map(e => {
        const r = e.getBoundingClientRect();
        return {alt: e.alt, w: r.width, h: r.height, top: r.top, natural: e.naturalWidth,
                row: e.closest('tr') ? e.closest('tr').rowIndex : -1};
    })""")
    assert len(badges) >= 18, f"{len(badges)} launch badges on the landing page"
    wrong = [b for b in badges if not (14 <= b["h"] <= 28 and b["w"] <= 160 and b["natural"] > 0
                                       and re.search(r"Colab|Binder", b["alt"]))]
    assert not wrong, f"launch links that are not badge-sized badges with their words: {wrong[:4]}"
    rows: dict[int, list[float]] = {}
    for b in badges:
        if b["row"] >= 0:
            rows.setdefault(b["row"], []).append(b["top"])
    notebooks = len(list((ROOT / "course").glob("[0-9]*.ipynb")))
    assert len(rows) == notebooks, f"course map rows with badges: {sorted(rows)}, {notebooks} notebooks"
    assert all(len(t) == 2 and abs(t[0] - t[1]) < 3 for t in rows.values()), "a row's two badges are not side by side"

    page.goto(f"{site}/api/pavlovlab.attention.html", wait_until="load")
    page.screenshot(path=str(SHOTS / "front-door-api.png"), full_page=False)
    section = page.locator('section[id="module-pavlovlab.attention.forms"]')
    intro = section.locator(":scope > p").first.inner_text()
    assert intro.startswith("Attention in every form"), intro[:80]
    assert section.locator(':scope > p a[href="#module-pavlovlab.attention.literal"]').count() == 1
    assert section.locator(":scope > p code").count() >= 3, "the docstring's ``code`` is not rendered as code"
    raw = page.evaluate("() => document.querySelector('.bd-article').innerText.includes('``')")
    assert not raw, "raw ``literal`` markup on the API page"
    cut = page.evaluate("""() => {
        const box = document.querySelector('.bd-article').getBoundingClientRect();
        return [...document.querySelectorAll('.bd-article p, .bd-article dt, .bd-article dd, .bd-article pre')]
            .filter(e => e.getBoundingClientRect().right > box.right + 1
                     || (e.scrollWidth > e.clientWidth + 1
                         && !['auto', 'scroll'].includes(getComputedStyle(e).overflowX)))
            .map(e => e.innerText.slice(0, 60));
    }""")
    assert not cut, f"{len(cut)} API blocks cut off at the column's edge: {cut[:3]}"
    assert not [m for m in console if "invalid theme mode" in m], console


# ------------------------------------------------------------------------------------------ the editions
def _title(notebook: Path) -> str:
    """A notebook's title: its first markdown line, without the ``#``."""
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    return "".join(nb["cells"][0]["source"]).splitlines()[0].lstrip("# ").strip()


def test_the_language_switcher_and_the_chinese_search(page, site):
    """Click through English → 中文 → Français → English on one notebook page (the same page each time, in the
    edition's language), from an English-only page to an edition's front page, then search the Chinese edition
    for a Chinese word."""
    stem = "02_hebbian_memory"
    page.goto(f"{site}/course/{stem}.html", wait_until="load")
    switcher = page.locator("nav.pavlovlab-editions")
    assert switcher.is_visible()
    for name, folder, lang in [("中文", "zh/", "zh-CN"), ("Français", "fr/", "fr"), ("English", "", "en")]:
        switcher.get_by_role("link", name=name).click()
        page.wait_for_url(f"{site}/{folder}course/{stem}.html")
        assert page.evaluate("document.documentElement.lang") == lang
        heading = " ".join(page.locator("section > h1").first.inner_text().split()).rstrip("#").strip()
        source = (ROOT / "student" / folder if folder else ROOT / "course") / f"{stem}.ipynb"
        assert heading == _title(source), f"{folder or 'en'}: {heading!r}"
    page.goto(f"{site}/api/pavlovlab.html", wait_until="load")
    switcher.get_by_role("link", name="中文").click()
    page.wait_for_url(f"{site}/zh/index.html")
    page.goto(f"{site}/zh/search.html?q=条件刺激", wait_until="load")
    page.wait_for_function("() => document.querySelectorAll('#search-results li a').length > 0", timeout=60_000)
    found = page.eval_on_selector_all("#search-results li a", "els => els.map(e => e.getAttribute('href'))")
    assert any("course/01_pavlovian_conditioning" in href for href in found), found
    assert not page.outside, f"the editions tried to load from outside the book: {page.outside[:5]}"
