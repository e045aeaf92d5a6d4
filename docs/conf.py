"""Sphinx configuration of the course book (myst-nb + sphinx-book-theme).

Build it with ``make book`` (or ``python tools/build_book.py``): the tool stages README.md, the notebooks,
the instructor guide, the licences and this folder into ``_build/src`` and builds ``_build/html`` from there,
so that the README's links (``course/00_start_here.ipynb``) and the notebooks' footer links
(``../LICENSE-CONTENT``) resolve exactly as they do on GitHub. Nothing is executed: the notebooks' stored
outputs are rendered. Math is typeset by a MathJax bundled in a pip package (no network).
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

ROOT = Path(os.environ.get("PAVLOVLAB_ROOT", Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(ROOT))  # autodoc imports the package of this checkout

import pavlovlab  # noqa: E402

project = "pavlovlab"
author = "the pavlovlab contributors"
copyright = f"2025-2026, {author}. Text and figures CC BY 4.0, code MIT"
version = release = pavlovlab.__version__
RELEASE_TAG = f"v{release}"
"""The git tag every launch link points at (README: how to re-point the links at a new release)."""

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    "sphinx-mathjax-offline",  # MathJax 3 copied into _static/mathjax: typeset offline
]
root_doc = "index"
exclude_patterns = ["README.md", "_build", "**/.ipynb_checkpoints", "student/**"]

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
autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": True}
autodoc_member_order = "bysource"
autodoc_typehints = "description"

html_theme = "sphinx_book_theme"
html_title = f"pavlovlab {release}: Transformer attention as Pavlovian conditioning"
html_theme_options = {
    "repository_url": "https://github.com/pavlovlab/pavlovlab",
    "repository_branch": RELEASE_TAG,
    "path_to_docs": "",
    "use_repository_button": True,
    "use_download_button": True,
    "launch_buttons": {"binderhub_url": "https://mybinder.org", "notebook_interface": "jupyterlab"},
    "home_page_in_toc": True,
    "show_toc_level": 2,
}
html_static_path = ["_static"]
html_css_files = ["pavlovlab.css"]

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


def _docstring_or_literal(app, what, name, obj, options, lines) -> None:
    """Keep a docstring that is valid reStructuredText; show any other one as preformatted text.

    The package's docstrings are written for ``help()`` and the notebooks (plain text, maths in Unicode), not
    all for reST: rather than fail the build or garble one, it is shown exactly as ``help()`` shows it.
    """
    import io

    from docutils.core import publish_doctree

    if not lines:
        return
    stream = io.StringIO()
    try:
        publish_doctree("\n".join(lines), settings_overrides={
            "report_level": 2, "halt_level": 5, "warning_stream": stream, "file_insertion_enabled": False,
            "raw_enabled": False})
    except Exception:
        stream.write("error")
    if stream.getvalue():
        lines[:] = ["::", ""] + [f"    {line}" for line in lines] + [""]


def setup(app):
    app.connect("doctree-resolved", _widget_notes)
    app.connect("autodoc-process-docstring", _docstring_or_literal)
