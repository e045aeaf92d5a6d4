"""Sphinx configuration of the course book (myst-nb + sphinx-book-theme).

Build it with ``make book`` (or ``python tools/build_book.py``): the tool stages README.md, the notebooks,
the instructor guide, the licences and this folder into ``_build/src/en`` and builds ``_build/html`` from there,
so that the README's links (``course/00_start_here.ipynb``) and the notebooks' footer links
(``../LICENSE-CONTENT``) resolve exactly as they do on GitHub. Nothing is executed: the notebooks' stored
outputs are rendered. Math is typeset by a MathJax bundled in a pip package (no network).

The same configuration builds the Chinese and French editions (``_build/html/zh``, ``_build/html/fr``): the tool
stages each edition's learner copies and its front page (docs/editions.md, translated), and writes ``edition.json``
beside this file, from which :data:`EDITION` takes Sphinx's ``language``, the title and, for Chinese, the search's
word list. Every page of every edition has the language switcher (``_templates/edition-switcher.html``,
:func:`_edition_switcher`): relative links to the same page in the other editions, or to their front page from a
page that only the English book has.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
import sys
from pathlib import Path
from urllib.parse import quote

ROOT = Path(os.environ.get("PAVLOVLAB_ROOT", Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(ROOT))  # autodoc imports the package of this checkout

import pavlovlab  # noqa: E402

project = "pavlovlab"
author = "the pavlovlab contributors"
copyright = f"2025-2026, {author}. Text and figures CC BY 4.0, code MIT"
sys.path.insert(0, str(ROOT / "tools"))
import launch_links  # noqa: E402

version = release = pavlovlab.__version__
LAUNCH_REF = launch_links.launch_ref(ROOT)
"""The git ref of the book's launch menu and repository links: the one release setting (pyproject.toml), beside
the repository (``launch_links.REPO``)."""
HUB_URL = os.environ.get("PAVLOVLAB_HUB_URL", "")
"""A JupyterHub for the launch menu (e.g. the workshop's, with nbgitpuller): set it when building the book."""

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",  # the docstrings' Google-style "Args:" and "Returns:" sections
    "sphinx.ext.mathjax",
    "sphinx-mathjax-offline",  # MathJax 3 copied into _static/mathjax: typeset offline
]
root_doc = "index"
exclude_patterns = ["README.md", "_build", "**/.ipynb_checkpoints", "student/**",
                    "editions.md"]  # the editions' front page: tools/build_book.py stages it translated, as index.md
templates_path = ["_templates"]

# Notebooks: render what is stored, run nothing.
nb_execution_mode = "off"
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "html_image"]
myst_heading_anchors = 3
# Widgets: their state is not stored (tools/normalize_notebooks.py), so a widget view cannot render in a
# static page. Never pick it: the output falls back to its other formats, and the widget-note transform below
# replaces a bare text repr ("VBox(children=...") by a note that says where the widget runs.
nb_ipywidgets_js = {}  # never load the widget manager (and require.js) from a CDN
nb_mime_priority_overrides = [("html", "application/vnd.jupyter.widget-view+json", None),
                              ("html", "application/vnd.jupyter.widget-state+json", None)]

# API reference from the docstrings.
# tools/build_book.py writes one page per package and names each directive's members itself (a package's
# re-exports are linked to the module that documents them, not documented twice).
autodoc_default_options = {"undoc-members": False, "show-inheritance": True}
autodoc_member_order = "bysource"
autodoc_typehints = "description"
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_rtype = False  # "Returns:" reads as one field, its type from the signature

html_theme = "sphinx_book_theme"
html_title = f"pavlovlab {release}: Transformer attention as Pavlovian conditioning"
html_theme_options = {
    "repository_url": launch_links.REPO_URL,
    "repository_branch": LAUNCH_REF,
    "path_to_docs": "",
    "use_repository_button": True,
    "use_download_button": True,
    # the theme's own launch menu: Binder and Colab always, a JupyterHub (nbgitpuller) when one is named
    "launch_buttons": {"binderhub_url": "https://mybinder.org", "colab_url": "https://colab.research.google.com",
                       "notebook_interface": "jupyterlab", **({"jupyterhub_url": HUB_URL} if HUB_URL else {})},
    "home_page_in_toc": True,
    "navbar_persistent": [],
    "show_toc_level": 2,
}
# The colour mode a first visit starts in (the theme's switch remembers a reader's choice): without it the theme
# logs "Got invalid theme mode" on every page.
html_context = {"default_mode": "auto"}
html_static_path = ["_static"]
html_css_files = ["pavlovlab.css"]
html_js_files = ["pavlovlab-search.js"]  # search snippets without the theme's buttons
html_favicon = "_static/favicon.svg"
# One search control per page: the search field in the left sidebar (on phones, where the sidebar folds away,
# the theme's search button in the page header); no second one in the top bar (navbar_persistent above).
html_sidebars = {"**": ["navbar-logo.html", "edition-switcher.html", "icon-links.html", "search-button-field.html",
                         "sbt-sidebar-nav.html"]}

_STAGED = Path(__file__).resolve().parent / "edition.json"
EDITION = json.loads(_STAGED.read_text(encoding="utf-8")) if _STAGED.is_file() else {
    "edition": "en", "editions": {"en": {"folder": "", "language": "en"}}, "shared_pages": [], "search_words": None}
"""What tools/build_book.py staged beside this file: ``{"edition": this build's edition, "editions": {edition:
{"folder": where in the site, "language": Sphinx's}}, "shared_pages": [the pages every edition has],
"search_words": the Chinese search's word list, or null}``; unstaged (docs/ itself), the English book alone."""
EDITION_NAMES = {"en": "English", "zh": "中文", "fr": "Français"}
"""The book's editions in the switcher's order, each named in its own language."""
language = EDITION["editions"][EDITION["edition"]]["language"]
if EDITION["edition"] != "en":  # the title of an edition's own front page (docs/editions.md, translated)
    _front = (Path(__file__).resolve().parent / "index.md").read_text(encoding="utf-8")
    html_title = f"pavlovlab {release}: {_front.splitlines()[0].lstrip('#').strip()}"
CHINESE = language.startswith("zh")
if CHINESE:
    # Sphinx cuts the text into words with jieba (without it, it indexes no Chinese word, silently), taught the
    # glossary's terms (the staged word list) so that 条件刺激 or 便签纸 are one word each
    try:
        import jieba
    except ImportError as error:
        raise ImportError("the Chinese edition's search needs jieba: pip install -r docs/requirements.txt") from error
    import logging

    jieba.setLogLevel(logging.WARNING)  # not its "Building prefix dict" lines in every build's output
    html_search_options = {"dict": str(Path(__file__).resolve().parent / EDITION["search_words"])}

    from sphinx.search.zh import SearchChinese

    class ChineseSearch(SearchChinese):
        """Sphinx 9.0's Chinese search with its browser half working. Its language_data.js ends with
        ``window.Stemmer = ChineseStemmer``, a class named after the language, but the Chinese search loads the
        English stemmer (Latin words are stemmed as English), whose class is ``EnglishStemmer``: the search page
        stops at a ReferenceError and finds nothing. Named as its stemmer, the one line is right."""

        language_name = "English"


def _edition_switcher(app, pagename, templatename, context, doctree) -> None:
    """The language switcher's links (``pavlovlab_editions``) and the page's ``lang`` attribute (BCP 47: zh-CN).
    A link goes to the same page in the other edition when every edition has it, else to that edition's front page;
    it is relative (the book works from a file system and under any URL prefix)."""
    editions, here = EDITION["editions"], EDITION["edition"]
    target = pagename if pagename in EDITION["shared_pages"] else root_doc
    page = posixpath.join(editions[here]["folder"], app.builder.get_target_uri(pagename))
    links = []
    for edition, name in EDITION_NAMES.items():
        if edition not in editions:
            continue
        there = posixpath.join(editions[edition]["folder"], app.builder.get_target_uri(target))
        links.append({"name": name, "lang": editions[edition]["language"].replace("_", "-"),
                      "current": edition == here, "href": posixpath.relpath(there, posixpath.dirname(page) or ".")})
    context["pavlovlab_editions"] = links
    context["language"] = editions[here]["language"].replace("_", "-")


WIDGET_REPR = re.compile(r"^\s*(VBox|HBox|Box|IntSlider|FloatSlider|Dropdown|Checkbox|Output)\(")
WIDGET_NOTE = ("Interactive widget (sliders or menus): it runs in JupyterLab, not in this static page. "
               "Launch this notebook on Binder (rocket button at the top) or run it locally with ")


def _widget_notes(app, doctree, docname) -> None:
    """Replace each widget's text repr in a notebook output by a short note (the static fallback)."""
    from docutils import nodes

    for block in list(doctree.findall(nodes.literal_block)):
        if WIDGET_REPR.match(block.astext()) and "output" in " ".join(block.parent.get("classes", [])):
            para = nodes.paragraph("", WIDGET_NOTE, nodes.literal("make lab", "make lab"), nodes.Text("."))
            note = nodes.note("", para, classes=["pavlovlab-widget-fallback"])
            block.replace_self(note)


INLINE_CODE = re.compile(r"(``.+?``|:(?:[A-Za-z]+:)+`[^`]+`|`[^`]+`_{0,2})")
"""Inline markup that stays as written when a docstring's stray ``*`` and ``|`` are escaped (literals, roles)."""


def _rst_problems(lines: list[str]) -> str:
    """What docutils reports for ``lines`` as reStructuredText ("" when nothing). Sphinx's roles
    (``:func:`x```) are read as plain interpreted text, which docutils alone knows."""
    import io

    from docutils.core import publish_doctree

    text = re.sub(r":(?:[A-Za-z]+:)+`", "`", "\n".join(lines))
    stream = io.StringIO()
    try:
        publish_doctree(text, settings_overrides={
            "report_level": 2, "halt_level": 5, "warning_stream": stream, "file_insertion_enabled": False,
            "raw_enabled": False})
    except Exception as error:  # docutils gives up on some malformed constructs instead of reporting them
        stream.write(f"{type(error).__name__}: {error}")
    return stream.getvalue()


def _escape_stray_markup(line: str) -> str:
    """``line`` with ``*`` and ``|`` escaped outside inline literals and roles: the package writes maths in
    plain text (``|cos|``, ``a*b``), which reST would read as emphasis or a substitution."""
    parts = INLINE_CODE.split(line)
    return "".join(part if i % 2 else part.replace("*", r"\*").replace("|", r"\|") for i, part in enumerate(parts))


def _blocks(lines: list[str]) -> list[list[str]]:
    """``lines`` cut into top-level blocks: a block starts at an unindented line after a blank one (indented lines,
    a field's continuation or a literal block's body, stay with the block above them)."""
    blocks: list[list[str]] = []
    for i, line in enumerate(lines):
        if not blocks or (line.strip() and not line[:1].isspace() and not lines[i - 1].strip()):
            blocks.append([])
        blocks[-1].append(line)
    return blocks


def _render_docstring(app, what, name, obj, options, lines) -> None:
    """Render each docstring as reStructuredText (after Napoleon has turned its ``Args:``/``Returns:`` sections
    into fields). The package writes its docstrings for ``help()`` too, maths in plain text: a block (paragraph,
    list, table) that is not valid reST gets its stray ``*`` and ``|`` escaped; one that is still not valid (a
    hand-drawn table) is shown as preformatted text, its double backquotes removed, never with a build warning."""
    if not lines or not _rst_problems(lines):
        return
    out: list[str] = []
    for block in _blocks(lines):
        if _rst_problems(block):
            escaped = [_escape_stray_markup(line) for line in block]
            if _rst_problems(escaped):
                block = ["::", ""] + [f"    {line.replace('``', '')}" for line in block] + [""]
            else:
                block = escaped
        out += block
    lines[:] = out


def _launch_learner_copies(app, pagename, templatename, context, doctree) -> None:
    """Point the launch menu of a notebook page (``course/NN_x``) at the learner copy ``student/NN_x.ipynb`` (in an
    edition, ``student/zh/NN_x.ipynb``): the page shows the full notebook, but a learner who launches it must land
    in the copy without solutions. Instructors open the full notebooks from the instructor guide's links."""
    if not pagename.startswith("course/"):
        return
    name = pagename.split("/", 1)[1] + ".ipynb"
    folder = EDITION["editions"][EDITION["edition"]]["folder"]
    full, learner = f"course/{name}", launch_links.learner_copy(posixpath.join(folder, name))
    for group in context.get("header_buttons", []):
        if group.get("label") != "launch-buttons":
            continue
        for button in group.get("buttons", []):
            if "url" in button:
                button["url"] = button["url"].replace(full, learner).replace(quote(full, safe=""),
                                                                              quote(learner, safe=""))
            button["tooltip"] = f"{button.get('tooltip', '')}: the learner copy (no solutions)".lstrip(": ")


def setup(app):
    if CHINESE:
        app.add_search_language(ChineseSearch)
    app.connect("html-page-context", _edition_switcher)
    app.connect("doctree-resolved", _widget_notes)
    app.connect("html-page-context", _launch_learner_copies, priority=502)  # after the theme's menu (501)
    app.connect("autodoc-process-docstring", _render_docstring, priority=600)  # after Napoleon (500)
