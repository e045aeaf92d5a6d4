"""The course book (tools/build_book.py, `make book`): builds with warnings as errors, offline, and holds
every page it should: the README as landing page, every notebook (with its stored figures and a Binder
button pinned to the release that opens the learner copy), the instructor guide, the changelog and the API
pages (one per package, every public module's docstrings rendered), behind badge-sized launch links.

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


def _api_pages(book) -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in [book["html"] / "api.html",
                                                           *sorted((book["html"] / "api").glob("*.html"))]}


def test_api_reference_documents_every_public_module(book):
    """Every public module, found by walking the package (sub-packages too), has its section; every name a package
    exports is documented on some API page, under its module or under the package."""
    import importlib
    import pkgutil
    import sys

    sys.path.insert(0, str(ROOT / "tools"))
    from build_book import home_of, public_packages

    pages = "\n".join(_api_pages(book).values())
    walked = [m.name for m in pkgutil.walk_packages(pavlovlab.__path__, "pavlovlab.")
              if not any(part.startswith("_") for part in m.name.split("."))]
    assert {"pavlovlab.attention", "pavlovlab.teach.cli", "pavlovlab.teach.exercises.capacity_limits"} <= set(walked)
    assert set(walked) | {"pavlovlab"} == {*public_packages(), *(m for ms in public_packages().values() for m in ms)}
    for name in walked:
        assert f'id="module-{name}"' in pages, f"no API section for {name}"
    documented = {m for ms in public_packages().values() for m in ms}
    for package in public_packages():
        pkg = importlib.import_module(package)
        for name in getattr(pkg, "__all__", []):
            home, qualname = home_of(package, name, documented)   # a constant's is the module that defines it
            ids = {f'id="{home}.{qualname}"', f'id="{package}.{name}"'}
            assert any(i in pages for i in ids), f"{package}.{name} is not in the API reference"


def _first_sentence(doc: str) -> str:
    """The start of a docstring's first line as a reader sees it rendered: no ``literal`` or :role:`x` markup."""
    line = doc.strip().splitlines()[0]
    line = re.sub(r":(?:[a-z]+:)+`([^`]+)`", r"\1", line).replace("``", "")
    return _plain_quotes(" ".join(line.split())[:40])


def _plain_quotes(text: str) -> str:
    """Sphinx's typographic quotes back to plain ones."""
    return text.translate(str.maketrans("‘’“”", "''\"\""))


def test_api_docstrings_are_rendered_not_preformatted(book):
    """Module docstrings are rendered reStructuredText (paragraphs, code spans, links), not preformatted text with
    its ``x`` markup showing."""
    import importlib
    import inspect

    pages = {name: _soup(text) for name, text in _api_pages(book).items()}
    rendered, missing = 0, []
    for page in pages.values():
        for section in page.select('span[id^="module-"], section[id^="module-"]'):
            name = section["id"].removeprefix("module-")
            doc = inspect.getdoc(importlib.import_module(name))
            if not doc:
                continue
            start = _first_sentence(doc)
            paragraphs = [_plain_quotes(" ".join(p.get_text().split())) for p in page.select("p")]
            if any(start in p for p in paragraphs):
                rendered += 1
            else:
                missing.append(f"{name}: {start!r}")
    assert rendered >= 30 and not missing, f"module docstrings not rendered as paragraphs: {missing[:10]}"
    for name, page in pages.items():
        for pre in page.select("pre"):
            pre.decompose()  # code examples, and docstrings that are not valid reST, shown as help() shows them
        assert "``" not in page.get_text(), f"{name} shows raw ``literal`` markup"
    attention = pages["pavlovlab.attention.html"]
    assert attention.select('a[href="#module-pavlovlab.attention.literal"]'), "a :mod: reference is not a link"


def test_notebook_pages_show_stored_figures_and_a_pinned_binder_button(book):
    import sys

    sys.path.insert(0, str(ROOT / "tools"))
    import launch_links

    tag = launch_links.launch_ref()
    for stem in NOTEBOOKS:
        page = _page(book, f"course/{stem}.html")
        nb = json.loads((ROOT / "course" / f"{stem}.ipynb").read_text(encoding="utf-8"))
        pngs = sum("image/png" in o.get("data", {}) for c in nb["cells"] for o in c.get("outputs", []))
        imgs = len(re.findall(r'<img[^>]+src="\.\./_images/[0-9a-f]+\.png"', page))
        assert imgs == pngs, f"{stem}: {pngs} stored PNG figures but {imgs} images on the page"
        # the launch menu opens the learner copy (student/), never the notebook with its solutions
        colab = launch_links.colab_url(f"student/{stem}.ipynb", tag)
        assert colab in html.unescape(page), f"{stem}: no Colab button for the learner copy at {tag}"
        assert "tag_launch" not in page, f"{stem}: the launch cells belong to JupyterLab and Colab, not the book"
        solutions = sum("solution" in c.get("metadata", {}).get("tags", []) for c in nb["cells"])
        assert len(re.findall(r'class="cell [^"]*tag_solution[^"]*tag_hide-input', page)) == solutions, \
            f"{stem}: not every solution cell is folded"
        binder = launch_links.binder_url(f"student/{stem}.ipynb", tag)
        assert binder in html.unescape(page), f"{stem}: no Binder button for the learner copy pinned to {tag}"
        menu = _soup(page).select_one(".dropdown-launch-buttons")
        launches = [a["href"] for a in menu.select("a[href]")]
        assert len(launches) >= 2 and not [u for u in launches if "course/" in u or "course%2F" in u], \
            f"{stem}: a launch button opens course/ (the solutions): {launches}"


def test_widget_outputs_show_their_static_fallback(book):
    for stem in NOTEBOOKS:
        page = _page(book, f"course/{stem}.html")
        nb = json.loads((ROOT / "course" / f"{stem}.ipynb").read_text(encoding="utf-8"))
        views = sum(WIDGET_VIEW in o.get("data", {})          # interactive boxes; a tqdm bar's text is the bar
                    and "".join(o["data"].get("text/plain", "")).startswith(("VBox", "HBox"))
                    for c in nb["cells"] for o in c.get("outputs", []))
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
    text = ("[nb](02_hebbian_memory.ipynb#exercise) [code](../pavlovlab/memory/associative.py) [lic](../LICENSE) "
            "[dir](../pavlovlab) [gone](../no_such_file.md) [web](https://arxiv.org/abs/2508.08289)")
    out = _repoint(text, guide, staged, "v9.9.9")
    assert "[nb](02_hebbian_memory.ipynb#exercise)" in out and "[lic](../LICENSE)" in out
    assert f"[code]({REPO_URL}/blob/v9.9.9/pavlovlab/memory/associative.py)" in out
    assert f"[dir]({REPO_URL}/tree/v9.9.9/pavlovlab)" in out
    assert "[gone](../no_such_file.md)" in out and "[web](https://arxiv.org/abs/2508.08289)" in out


# ----------------------------------------------------------------------------------------- polish
def _soup(text: str):
    from bs4 import BeautifulSoup

    return BeautifulSoup(text, "html.parser")


def test_one_search_control_per_page(book):
    for page in _pages(book):
        soup = _soup(page.read_text(encoding="utf-8"))
        if not soup.select(".bd-header-article"):
            continue  # pages without the article header (the theme's genindex/search pages)
        fields = soup.select(".search-button-field")
        others = [b for b in soup.select("button.search-button__button") if b not in fields]
        assert len(fields) == 1 and fields[0].find_parent(class_="bd-sidebar-primary"), (
            f"{page.name}: {len(fields)} search fields, expected one, in the left sidebar")
        # the only other search control is the article header's button, which the theme shows where the sidebar
        # folds away (phones); tests/browser/test_book_pages.py checks that a desktop page shows exactly one
        assert all(b.find_parent(class_="bd-header-article") for b in others) and len(others) <= 1, (
            f"{page.name}: search buttons outside the article header: {len(others)}")


def _search_chrome() -> list[str]:
    js = (ROOT / "docs" / "_static" / "pavlovlab-search.js").read_text(encoding="utf-8")
    block = re.search(r"PAVLOVLAB_SEARCH_CHROME = \[(.*?)\];", js, flags=re.S)
    assert block, "no PAVLOVLAB_SEARCH_CHROME list in pavlovlab-search.js"
    return re.findall(r'"([^"]+)"', block.group(1))


def test_search_snippets_start_with_the_page_not_the_theme(book):
    """What Sphinx's search reads of a page ([role=main], minus what pavlovlab-search.js removes) starts with
    the page's title: no "Binder Colab .ipynb .pdf System Settings Light Dark" in front of every snippet."""
    chrome = _search_chrome()
    assert any('src="_static/pavlovlab-search.js' in t for t in [_page(book, "search.html")])
    for stem in NOTEBOOKS:
        soup = _soup(_page(book, f"course/{stem}.html"))
        main = soup.select_one('[role="main"]')
        before = " ".join(main.get_text().split())
        assert "Light Dark" in before  # the chrome is there to be removed
        for el in main.select(", ".join(chrome)):
            el.decompose()
        text = " ".join(main.get_text().split())
        title = " ".join(soup.select_one("h1").get_text().split()).rstrip("#").strip()
        assert text.startswith(title), f"{stem}: the search text starts with {text[:80]!r}, not the title"


def test_every_page_has_the_favicon(book):
    import xml.etree.ElementTree as ET

    icon = book["html"] / "_static" / "favicon.svg"
    assert ET.parse(icon).getroot().tag.endswith("svg")
    for page in _pages(book):
        links = _soup(page.read_text(encoding="utf-8")).select('link[rel="icon"]')
        assert links and links[0]["href"].endswith("_static/favicon.svg"), page.name


def test_long_code_lines_scroll_and_the_api_contents_wrap(book):
    """The rules are in the built stylesheet (tests/browser/test_book_pages.py measures them in a browser)."""
    css = (book["html"] / "_static" / "pavlovlab.css").read_text(encoding="utf-8")
    compact = re.sub(r"\s+", " ", css)
    assert re.search(r"div\.cell_input pre[^{]*\{[^}]*overflow-x: auto", compact)
    assert re.search(r"\.bd-sidebar-secondary nav\.page-toc a[^{]*\{[^}]*overflow-wrap: anywhere", compact)
    api = _page(book, "api/pavlovlab.html")
    assert 'class="bd-sidebar-secondary' in api and "page-toc" in api


def test_every_stored_figure_has_its_alt_text(book):
    """Each figure's sentence (its cell's ``mystnb.image.alt``, tools/alt_text.py) is its image's alt text, no image
    of a notebook page keeps the file name as its alt text, and no ``# alt:`` line is left showing as code."""
    missing = []
    for stem in NOTEBOOKS:
        soup = _soup(_page(book, f"course/{stem}.html"))
        for img in soup.select('img[src^="../_images/"]'):
            alt = img.get("alt", "")
            if not alt or alt.endswith(".png"):
                missing.append(f"{stem}: {img['src'].rsplit('/', 1)[-1][:12]}…")
        shown = [c.get_text()[:60] for c in soup.select("div.cell_input") if re.search(r"#\s*alt:", c.get_text())]
        assert not shown, f"{stem}: '# alt:' lines shown as code (run python tools/alt_text.py): {shown[:2]}"
    assert not missing, (f"{len(missing)} figures without alt text (write a '# alt: <one sentence>' line in the cell "
                         "that draws it, then run python tools/alt_text.py):\n" + "\n".join(missing[:20]))


def _alt_tool():
    import sys

    sys.path.insert(0, str(ROOT / "tools"))
    import alt_text

    return alt_text


def _png(colour: str) -> str:
    import base64
    import io

    from matplotlib.figure import Figure

    fig = Figure(figsize=(1, 1))
    fig.add_subplot().plot([0, 1], [0, 1], color=colour)
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return base64.b64encode(buf.getvalue()).decode()


def test_an_alt_line_reaches_the_img_alt_attribute(tmp_path):
    """The mechanism end to end on a one-notebook book: the tool moves a cell's ``# alt:`` line into its metadata,
    and myst-nb, with nothing of ours in between, puts it in the image's alt attribute."""
    pytest.importorskip("myst_nb")
    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output
    from sphinx.cmd.build import build_main

    cell = new_code_cell("x = 2\n# alt: A rising line in blue.\nplot(x)")
    cell.outputs = [new_output("display_data", data={"image/png": _png("#0072B2")})]
    nb = new_notebook(cells=[new_markdown_cell("# A figure"), cell])
    src = tmp_path / "src"
    src.mkdir()
    assert _alt_tool().move_alt_lines(nb) == 1
    assert cell.source == "x = 2\nplot(x)" and cell.metadata["mystnb"]["image"]["alt"] == "A rising line in blue."
    assert _alt_tool().move_alt_lines(nb) == 0  # re-runnable: nothing left to move
    nbformat.write(nb, src / "fig.ipynb")
    (src / "index.md").write_text("# Book\n\n```{toctree}\nfig\n```\n")
    (src / "conf.py").write_text("extensions = ['myst_nb']\nnb_execution_mode = 'off'\n")
    assert build_main(["-q", "-b", "html", str(src), str(tmp_path / "html")]) == 0
    page = _soup((tmp_path / "html" / "fig.html").read_text())
    assert [img.get("alt") for img in page.select("img")] == ["A rising line in blue."]
    assert "alt:" not in page.select_one("div.cell_input").get_text()


def test_alt_tool_refuses_a_cell_with_two_figures():
    from nbformat.v4 import new_code_cell, new_notebook, new_output

    cell = new_code_cell("# alt: one\n# alt: two\n")
    cell.outputs = [new_output("display_data", data={"image/png": _png(c)}) for c in ("#0072B2", "#E69F00")]
    with pytest.raises(ValueError, match=r"x\.ipynb: cell 0 has 2 '# alt:' line"):
        _alt_tool().move_alt_lines(new_notebook(cells=[cell]), "x.ipynb")
    cell.source = "# alt: one"
    with pytest.raises(ValueError, match=r"1 '# alt:' line.* and 2 stored figure"):
        _alt_tool().move_alt_lines(new_notebook(cells=[cell]), "x.ipynb")
    plain = new_code_cell("plot()  # no alt line: nothing moved")
    assert _alt_tool().move_alt_lines(new_notebook(cells=[plain])) == 0 and "mystnb" not in plain.metadata


def test_landing_page_launch_links_are_badges_with_words(book):
    """The README's Binder and Colab badges are the book's own small badges with their words (the services' logos
    alone render page-sized); tests/browser/test_book_pages.py measures them in a browser."""
    soup = _soup(_page(book, "index.html"))
    launches = [a for a in soup.select("a[href]") if re.search(r"mybinder\.org/v2|colab\.research\.google\.com/github",
                                                                a["href"])]
    assert len(launches) >= 18, len(launches)  # the header's two and two per notebook in the course map
    for a in launches:
        img = a.find("img")
        if img is None:
            continue  # a text link ("the full course")
        assert re.search(r"badge-(colab|binder)\.svg$", img["src"]), img["src"]
        assert re.search(r"Colab|Binder", img.get("alt", "")), img
    for name in ("badge-colab.svg", "badge-binder.svg"):
        svg = (book["html"] / "_images" / name).read_text(encoding="utf-8")
        assert 'height="20"' in svg and re.search(r"<text[^>]*>(Colab|Binder)</text>", svg), name


# ----------------------------------------------------------------------------------------- the editions
EDITION_NAMES = ["English", "中文", "Français"]
LANG = {"en": "en", "zh": "zh-CN", "fr": "fr"}


def _edition_of(book, page: Path) -> tuple[str, str]:
    """``(edition, path of the page inside its edition)`` of a built page: English at the root, the others in
    their folders."""
    rel = page.relative_to(book["html"]).as_posix()
    head, _, rest = rel.partition("/")
    return (head, rest) if head in _editions() and rest else ("en", rel)


def _editions() -> dict[str, str]:
    import sys

    sys.path.insert(0, str(ROOT / "tools"))
    import build_book

    return build_book.EDITIONS


def test_the_editions_are_built_from_their_learner_copies(book):
    """Each edition has one page per learner copy of its language, under the English page's name, and nothing
    of the English book's guides, changelog or API pages."""
    assert set(_editions()) == {"zh", "fr"}
    for edition in _editions():
        copies = sorted(p.stem for p in (ROOT / "student" / edition).glob("[0-9]*.ipynb"))
        assert copies == NOTEBOOKS, f"{edition}: learner copies {copies} are not the course's notebooks"
        pages = sorted(p.stem for p in (book["html"] / edition / "course").glob("*.html"))
        assert pages == NOTEBOOKS, f"{edition}: {pages}"
        for only_english in ("api.html", "CHANGELOG.html", "glossary.html", "course/INSTRUCTOR_GUIDE.html"):
            assert not (book["html"] / edition / only_english).exists(), f"{edition} has {only_english}"
        assert f"{edition}: built in" in book["log"], f"no build of the {edition} edition in the log"


def test_an_editions_pages_show_the_courses_figures_and_no_english_output(book):
    """An edition's notebook page shows every figure the full notebook stores outside its solution cells (drawn by
    the same code), and no other output: a check cell's English verdict never reaches an edition's page."""
    text_output = re.compile(r'class="output (stream|text_plain)')
    assert any(text_output.search(_page(book, f"course/{stem}.html")) for stem in NOTEBOOKS), "the English has some"
    for edition in _editions():
        for stem in NOTEBOOKS:
            page = _page(book, f"{edition}/course/{stem}.html")
            nb = json.loads((ROOT / "course" / f"{stem}.ipynb").read_text(encoding="utf-8"))
            pngs = sum("image/png" in o.get("data", {}) for c in nb["cells"] for o in c.get("outputs", [])
                       if "solution" not in c.get("metadata", {}).get("tags", []))
            imgs = len(re.findall(r'<img[^>]+src="\.\./_images/[0-9a-f]+\.png"', page))
            assert imgs == pngs, f"{edition}/{stem}: the course stores {pngs} figures, the page shows {imgs}"
            assert not text_output.search(page), f"{edition}/{stem}: a text output on the page"


def test_every_page_of_every_edition_has_the_language_switcher(book):
    """English · 中文 · Français on every page: the page's own edition unlinked, the two others linked relatively to
    an existing file: the same page where that edition has it, else its front page."""
    checked = {edition: 0 for edition in ("en", *_editions())}
    for page in _pages(book):
        edition, inner = _edition_of(book, page)
        nav = _soup(page.read_text(encoding="utf-8")).select("nav.pavlovlab-editions")
        assert len(nav) == 1, f"{page.relative_to(book['html'])}: {len(nav)} language switchers"
        items = [el for el in nav[0].find_all(["a", "span"]) if "pavlovlab-editions-sep" not in el.get("class", [])]
        assert [el.get_text() for el in items] == EDITION_NAMES
        for el, (other, lang) in zip(items, LANG.items(), strict=True):
            assert el["lang"] == lang
            if other == edition:
                assert el.name == "span" and el["aria-current"] == "page"
                continue
            href = el["href"]
            assert el.name == "a" and not urlsplit(href).scheme and not href.startswith("/"), href
            target = (page.parent / href).resolve()
            assert target.is_file(), f"{page.relative_to(book['html'])} -> {href}: no such file"
            root = book["html"] if other == "en" else book["html"] / other
            same = root / inner
            expected = same if same.is_file() else root / "index.html"
            assert target == expected.resolve(), f"{page.relative_to(book['html'])} -> {href}, not {expected}"
        checked[edition] += 1
    assert all(n >= len(NOTEBOOKS) + 3 for n in checked.values()) and checked["en"] > checked["zh"], checked


def test_each_edition_says_its_language(book):
    """The html ``lang`` attribute (BCP 47) of every page, and the theme's own words in the edition's language."""
    for page in _pages(book):
        edition, _ = _edition_of(book, page)
        tag = re.search(r"<html[^>]*\slang=\"([^\"]+)\"", page.read_text(encoding="utf-8"))
        assert tag and tag.group(1) == LANG[edition], f"{page.relative_to(book['html'])}: lang={tag and tag.group(1)}"
    assert "搜索" in _page(book, "zh/index.html") and "Recherche" in _page(book, "fr/index.html")


def _headings(notebook: Path) -> list[str]:
    """The plain-text headings (``#`` and ``##``: no code, maths, emphasis or link) of a notebook's markdown."""
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    out = []
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            for line in "".join(cell["source"]).splitlines():
                m = re.match(r"^#{1,2} (.+)$", line)
                if m and not re.search(r"[`$*_\[<]", m.group(1)):
                    out.append(m.group(1).strip())
    return out


@pytest.mark.parametrize("edition", ["zh", "fr"])
def test_edition_pages_hold_their_translated_headings(book, edition):
    for stem in NOTEBOOKS:
        soup = _soup(_page(book, f"{edition}/course/{stem}.html"))
        shown = [_plain_quotes(" ".join(h.get_text().split())).rstrip("#").strip()
                 for h in soup.select("section > h1, section > h2")]
        want = _headings(ROOT / "student" / edition / f"{stem}.ipynb")
        english = _soup(_page(book, f"course/{stem}.html")).select_one("section > h1").get_text()
        assert len(want) >= 3 and shown[0] != " ".join(english.split()).rstrip("#").strip(), f"{edition}/{stem}"
        missing = [h for h in want if _plain_quotes(h) not in shown]
        assert not missing, f"{edition}/{stem}: headings not on the page: {missing[:3]} (page has {shown[:4]})"


@pytest.mark.parametrize("edition", ["zh", "fr"])
def test_edition_front_page_and_navigation_speak_the_edition(book, edition):
    """The front page is docs/editions.md through its catalogue: its title, its paragraphs and the navigation's
    caption in the edition's language; every notebook in the navigation under its translated title."""
    import sys

    sys.path.insert(0, str(ROOT / "tools"))
    import translations

    locale = _editions()[edition]
    source = translations.book_page(locale)
    assert translations.UNTRANSLATED[locale] not in source, f"{edition}: the front page has untranslated entries"
    soup = _soup(_page(book, f"{edition}/index.html"))
    title = source.splitlines()[0].lstrip("# ").strip()
    assert _plain_quotes(" ".join(soup.select_one("section > h1").get_text().split())).rstrip("#").strip() == title
    assert title in _plain_quotes(soup.title.get_text()) and "Pavlovian" not in title
    caption = translations.CAPTION.search(source).group(2)
    nav = soup.select_one("nav.bd-docs-nav")
    assert caption != "The course" and caption in nav.get_text()
    for stem in NOTEBOOKS:
        page_title = _soup(_page(book, f"{edition}/course/{stem}.html")).select_one("section > h1").get_text()
        link = nav.select_one(f'a[href="course/{stem}.html"]')
        assert link and " ".join(link.get_text().split()) == " ".join(page_title.split()).rstrip("#").strip(), stem


def test_edition_launch_menus_open_the_editions_learner_copies(book):
    import sys

    sys.path.insert(0, str(ROOT / "tools"))
    import launch_links

    tag = launch_links.launch_ref()
    for edition in _editions():
        for stem in NOTEBOOKS:
            page = html.unescape(_page(book, f"{edition}/course/{stem}.html"))
            assert launch_links.binder_url(f"student/{edition}/{stem}.ipynb", tag) in page, f"{edition}/{stem}"
            assert launch_links.colab_url(f"student/{edition}/{stem}.ipynb", tag) in page, f"{edition}/{stem}"


def _search_terms(book, edition: str, kind: str = "terms") -> tuple[list[str], dict]:
    """``(page names, {term: page numbers})`` of an edition's search index (Sphinx's searchindex.js): the words of
    the pages' text (``kind="terms"``) or of their titles (``"titleterms"``)."""
    text = _page(book, f"{edition}/searchindex.js" if edition != "en" else "searchindex.js")
    index = json.loads(text[text.index("(") + 1:text.rindex(")")])
    return index["docnames"], index[kind]


def _pages_of(names: list[str], found) -> set[str]:
    return {names[i] for i in ([found] if isinstance(found, int) else found)}


def test_the_chinese_search_finds_chinese_words(book):
    """Each edition has its own index: the Chinese one holds the glossary's Chinese terms as words (jieba, taught
    the glossary: 便签纸 and 纸牌塔 would otherwise be cut in two), each pointing at the pages that use it."""
    import sys

    sys.path.insert(0, str(ROOT / "tools"))
    import build_book

    names, terms = _search_terms(book, "zh")
    titles = _search_terms(book, "zh", "titleterms")[1]
    assert "course/01_pavlovian_conditioning" in _pages_of(names, terms["条件刺激"])
    texts = {stem: (ROOT / "student" / "zh" / f"{stem}.ipynb").read_text(encoding="utf-8") for stem in NOTEBOOKS}
    words = [w for w in build_book.glossary_terms("zh_CN") if build_book.HAN_WORD.fullmatch(w)]
    assert {"条件刺激", "便签纸", "纸牌塔"} <= set(words)
    for word in words:
        longer = [w for w in words if word in w and w != word]  # 非条件刺激 is one word, not 条件刺激 after 非
        using = {f"course/{stem}" for stem, text in texts.items() if word in re.sub("|".join(longer) or "^$", "", text)}
        if using:
            found = _pages_of(names, terms.get(word, [])) | _pages_of(names, titles.get(word, []))
            assert using <= found, f"the Chinese search does not find {word} on {sorted(using - found)}"
    en_names, en_terms = _search_terms(book, "en")
    # the English book's own index: its notebook pages are English (the glossary's table has the word)
    english_pages = _pages_of(en_names, en_terms["条件刺激"])
    assert "glossary" in english_pages and not [name for name in english_pages if name.startswith("course/")]


def test_each_editions_search_page_has_the_stemmer_it_names(book):
    """language_data.js defines the stemmer class that the search page uses (Sphinx 9.0 names the Chinese one
    ``ChineseStemmer`` while it loads ``EnglishStemmer``: the page's search then finds nothing; docs/conf.py)."""
    for prefix in ("", "zh/", "fr/"):
        js = _page(book, f"{prefix}_static/language_data.js")
        named = re.search(r"window\.Stemmer = (\w+);", js)
        assert named and re.search(rf"\b{named.group(1)}\s*=\s*function|class {named.group(1)}\b", js), (
            f"{prefix or 'en/'}language_data.js: window.Stemmer = {named and named.group(1)}, which it does not define")


def test_the_french_search_stems_french(book):
    import snowballstemmer

    names, titles = _search_terms(book, "fr", "titleterms")
    stem = snowballstemmer.stemmer("french").stemWord("conditionnement")
    assert stem != "conditionnement" and "course/01_pavlovian_conditioning" in _pages_of(names, titles[stem])
    names, terms = _search_terms(book, "fr")
    assert "course/01_pavlovian_conditioning" in _pages_of(names, terms["conditionnel"])  # stimulus conditionnel
    assert '"au"' in _page(book, "fr/_static/language_data.js")  # French stop words, not English ones
    assert '"au"' not in _page(book, "_static/language_data.js")
