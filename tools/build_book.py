#!/usr/bin/env python3
"""Build the course book in three editions: English into ``_build/html``, Chinese and French into ``_build/html/zh``
and ``_build/html/fr``, each staged into its own folder of ``_build/src`` and built by a Sphinx of its own.

**The English edition** is staged (copied, so that every relative link resolves as it does in the repository): docs/
(conf.py, index.md), README.md (the landing page, included by index.md; its Binder and Colab badge images replaced
by the book's own, :data:`BADGES`), CHANGELOG.md, the licences, CITATION.cff, course/'s notebooks (``[0-9]*.ipynb``:
a new notebook joins the book by its name alone) and the instructor guide. API pages (an overview and one page per
package of ``pavlovlab``, found by walking it: :func:`api_pages`) are written into the staging folder. A relative
link to a repository file that is not part of the book (``../deploy/README.md``, ``../pavlovlab/memory.py``) becomes
a link to that file on GitHub at the ref of the release setting (tools/launch_links.py); a link to a file that does
not exist is kept, so that Sphinx reports it. Solution cells (tag ``solution``) are folded on the page (tag
``hide-input``), as they are in JupyterLab; the launch cells (tag ``launch``) are removed (the book's launch menu
does their work). Each figure's alt text is its cell's ``mystnb.image.alt`` metadata, which myst-nb applies itself
(tools/alt_text.py puts it there).

**The editions** (:data:`EDITIONS`, :func:`stage_edition`) show the learner copies of their language
(``student/zh/``, ``student/fr/``): those are what the catalogues translate, so an edition holds no solutions; its
pages show the figures the full notebooks store (:func:`_show_figures`), and no other output (that is English).
Each copy is staged under the English page's name (``course/NN_x``), so that the language switcher on every page
(docs/conf.py) links a page to the same page in the other editions. The front page is docs/editions.md in the
edition's language, through its catalogue (``book``, tools/translations.py); the API pages, the guides and the
changelog are English only.
Each staging folder gets an ``edition.json`` that tells docs/conf.py which edition it builds: Sphinx's ``language``
is the edition's, so its own words and its search index (a splitter and stemmer per language; the Chinese one
cuts words with jieba, which is taught the glossary's terms) are the edition's.

The three builds are separate processes (Sphinx keeps its translations in process-wide state), ``--jobs`` at once.

    python tools/build_book.py                 # what `make book` runs; -W: warnings are errors
    python tools/build_book.py --out DIR --no-warnings-as-errors
"""

from __future__ import annotations

import argparse
import json
import os
import pkgutil
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
import launch_links  # noqa: E402
import translations  # noqa: E402

EDITIONS = translations.EDITIONS
"""The editions besides the English one: ``{folder of the edition (in student/ and in the book): Sphinx language}``."""

FILES = ["README.md", "CHANGELOG.md", "LICENSE", "LICENSE-CONTENT", "CITATION.cff"]
BADGES = {"https://mybinder.org/badge_logo.svg": "_static/badge-binder.svg",
          "https://colab.research.google.com/assets/colab-badge.svg": "_static/badge-colab.svg"}
"""README's badge images (GitHub shows the services' own badges): in the book, badges of the same size and words
from docs/_static (the book loads nothing from the network)."""


def public_packages(package: str = "pavlovlab") -> dict[str, list[str]]:
    """``{package: [its public modules]}`` for ``package`` and every public sub-package under it, found by walking
    the package on disk (a name with a part that starts with ``_`` is private): a module moved into a new
    sub-package appears in the API pages without an edit here."""
    import importlib

    top = importlib.import_module(package)
    packages: dict[str, list[str]] = {package: []}
    for info in pkgutil.walk_packages(top.__path__, f"{package}."):
        if any(part.startswith("_") for part in info.name.split(".")):
            continue
        if info.ispkg:
            packages.setdefault(info.name, [])
        else:
            packages.setdefault(info.name.rpartition(".")[0], []).append(info.name)
    return {name: mods for name, mods in packages.items() if name == package or not name.startswith("_")}


def home_of(package: str, name: str, documented: set[str]) -> tuple[str | None, str]:
    """Where ``package.name`` is documented: ``(module, qualified name)``. A function or class says its module
    itself; a constant (a tuple, a dict) does not, so it is the documented module that exports the same object
    (names it in its ``__all__``: a module that only imports it does not)."""
    import importlib

    obj = getattr(importlib.import_module(package), name)
    home = getattr(obj, "__module__", None) if callable(obj) else None
    if home is None:
        home = next((m for m in sorted(documented) if name in getattr(importlib.import_module(m), "__all__", ())
                     and vars(importlib.import_module(m)).get(name) is obj), None)
    return home, getattr(obj, "__qualname__", name) if callable(obj) else name


def _exports(package: str, documented: set[str]) -> tuple[list[str], list[str]]:
    """The names of ``package.__all__``, split into those documented by a public module of their own (linked
    from the package's page) and the rest (defined in the package or a private module: documented there)."""
    import importlib

    pkg = importlib.import_module(package)
    linked, here = [], []
    for name in getattr(pkg, "__all__", []):
        home, _ = home_of(package, name, documented)
        (linked if home in documented and home != package else here).append(name)
    return linked, here


def api_pages() -> dict[str, str]:
    """``{file name: Markdown}``: ``api.md`` (the overview, with a contents list of the packages) and one page per
    package (``api/<package>.md``): the package's docstring, its exported names linked to where they are
    documented, then a section per public module with every member's docstring."""

    packages = public_packages()
    documented = {mod for mods in packages.values() for mod in mods}
    pages = {"api.md": "\n".join([
        "# API reference", "",
        "Generated from the docstrings of the `pavlovlab` package, one page per package (shapes are written "
        "`(..., T, d_k)`: any leading batch and head dimensions). `import pavlovlab as pl` exposes the most used "
        "names at the top level.", "",
        "```{toctree}", ":maxdepth: 2", "", *(f"api/{name}" for name in packages), "```", ""])}
    for package, modules in packages.items():
        linked, here = _exports(package, documented)
        lines = [f"# `{package}`", "", "```{eval-rst}", f".. automodule:: {package}",
                 *([f"   :members: {', '.join(here)}"] if here else []), "```", ""]
        if linked:
            refs = [f"{{py:obj}}`{name} <{'.'.join(home_of(package, name, documented))}>`" for name in linked]
            lines += [f"`{package}` also exports: {', '.join(refs)}.", ""]
        for module in modules:
            lines += [f"## `{module}`", "", "```{eval-rst}", f".. automodule:: {module}", "   :members:", "```", ""]
        pages[f"api/{package}.md"] = "\n".join(lines)
    return pages


REPO_URL = "https://github.com/pavlovlab/pavlovlab"
LINK = re.compile(r"(\]\()([^)\s#:]+)(#[^)\s]*)?(\))")
"""A Markdown inline link or image with a relative target: ``](path#anchor)``."""


def _repoint(text: str, where: Path, staged: set[str], tag: str) -> str:
    """Links from ``where`` (a file of the repository) to repository files that are not in the book become
    links to that file on GitHub at the release ``tag``; links to book files and to nothing are left alone
    (Sphinx resolves the first and reports the second)."""

    def sub(m: re.Match) -> str:
        target = (where.parent / m.group(2)).resolve()
        try:
            rel = target.relative_to(ROOT).as_posix()
        except ValueError:
            return m.group(0)
        if rel in staged or not target.exists():
            return m.group(0)
        kind = "tree" if target.is_dir() else "blob"
        return f"{m.group(1)}{REPO_URL}/{kind}/{tag}/{rel}{m.group(3) or ''}{m.group(4)}"

    return LINK.sub(sub, text)


def _repoint_files(src: Path, sources: dict[str, str], tag: str) -> None:
    """Fold the solutions, remove the launch cells and repoint the links (:func:`_repoint`) of the staged files:
    ``sources`` maps each file's path in ``src`` to the repository file it was copied from."""
    staged = set(sources.values())
    for rel, origin in sorted(sources.items()):
        path = src / rel
        if path.suffix == ".md":
            path.write_text(_repoint(path.read_text(encoding="utf-8"), ROOT / origin, staged, tag), encoding="utf-8")
        elif path.suffix == ".ipynb":
            nb = json.loads(path.read_text(encoding="utf-8"))
            for cell in nb["cells"]:
                tags = cell.setdefault("metadata", {}).setdefault("tags", [])
                if "solution" in tags and "hide-input" not in tags:
                    tags.append("hide-input")  # solutions folded, as in JupyterLab (source_hidden)
                if launch_links.LAUNCH_TAG in tags and "remove-cell" not in tags:
                    tags.append("remove-cell")  # badges and the Colab install cell: the book has its launch menu
                if cell["cell_type"] == "markdown":
                    text = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
                    cell["source"] = _repoint(text, ROOT / origin, staged, tag)
            path.write_text(json.dumps(nb, ensure_ascii=False, indent=1), encoding="utf-8")


def _course_assets(src: Path) -> None:
    """Pictures and data next to the notebooks (not other pages: each page of the book is staged by name)."""
    for path in sorted((ROOT / "course").rglob("*")):
        rel = path.relative_to(ROOT)
        if (path.is_file() and path.suffix not in (".ipynb", ".md")
                and not any(p.startswith(".") or p == "__pycache__" for p in rel.parts)):
            (src / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, src / rel)


def stage(src: Path) -> None:
    """Stage the English edition into ``src`` (replaced)."""
    if src.exists():
        shutil.rmtree(src)
    shutil.copytree(ROOT / "docs", src, ignore=shutil.ignore_patterns("__pycache__"))
    for name in FILES:
        shutil.copy2(ROOT / name, src / name)
    _course_assets(src)
    readme = (src / "README.md").read_text(encoding="utf-8")
    for url, badge in BADGES.items():
        readme = readme.replace(url, badge)
    (src / "README.md").write_text(readme, encoding="utf-8")
    (src / "course").mkdir(exist_ok=True)
    for nb in sorted((ROOT / "course").glob("[0-9]*.ipynb")):
        shutil.copy2(nb, src / "course" / nb.name)
    shutil.copy2(ROOT / "course" / "INSTRUCTOR_GUIDE.md", src / "course" / "INSTRUCTOR_GUIDE.md")
    api = api_pages()
    for rel, text in api.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text, encoding="utf-8")
    staged = {p.relative_to(src).as_posix() for p in src.rglob("*") if p.is_file()}
    generated = {"index.md", "conf.py", *api}
    _repoint_files(src, {rel: rel for rel in staged - generated}, launch_links.launch_ref(ROOT))
    _write_edition(src, "en", None)


SEARCH_WORDS = "search-words.txt"
"""The Chinese edition's word list for its search index (jieba's user dictionary), staged beside conf.py: the
glossary's Chinese terms of two characters or more (``HAN_WORD``; jieba cuts Chinese text only, and Sphinx's index
keeps no one-character word)."""
HAN_WORD = re.compile(r"[\u4e00-\u9fff]{2,}")


def glossary_terms(locale: str) -> list[str]:
    """The translations of docs/glossary.md's terms in ``locale`` (its table of the editions: term | 中文 |
    français), in the table's order, without blanks."""
    text = (ROOT / "docs" / "glossary.md").read_text(encoding="utf-8")
    table = text[text.index("| term | 中文"):].split("\n\n", 1)[0]
    column = 1 + list(EDITIONS.values()).index(locale)
    rows = [line.strip().strip("|").split("|") for line in table.splitlines()[2:] if line.startswith("|")]
    return [row[column].strip() for row in rows if row[column].strip()]


def edition_notebooks(edition: str) -> list[Path]:
    """The learner copies that are the pages of ``edition``."""
    return sorted((ROOT / "student" / edition).glob("[0-9]*.ipynb"))


def shared_pages() -> set[str]:
    """The pages that every edition has (Sphinx's names): the front page, search, the index and every notebook that
    is in the English book and in each edition. The language switcher links any other page to a front page."""
    stems = {p.stem for p in (ROOT / "course").glob("[0-9]*.ipynb")}
    for edition in EDITIONS:
        stems &= {p.stem for p in edition_notebooks(edition)}
    return {"index", "search", "genindex", *(f"course/{stem}" for stem in stems)}


def stage_edition(src: Path, edition: str) -> None:
    """Stage the edition ``edition`` (a key of :data:`EDITIONS`) into ``src`` (replaced): docs/'s configuration and
    static files, the front page in the edition's language (docs/editions.md through its catalogue) and the
    edition's learner copies under the English pages' names."""
    if src.exists():
        shutil.rmtree(src)
    shutil.copytree(ROOT / "docs", src, ignore=shutil.ignore_patterns("__pycache__", "*.md", "*.txt"))
    locale = EDITIONS[edition]
    (src / "index.md").write_text(translations.book_page(locale), encoding="utf-8")
    search_words = None
    if edition == "zh":
        words = [term for term in glossary_terms(locale) if HAN_WORD.fullmatch(term)]
        (src / SEARCH_WORDS).write_text("".join(f"{word}\n" for word in words), encoding="utf-8")
        search_words = SEARCH_WORDS
    _course_assets(src)
    (src / "course").mkdir(exist_ok=True)
    sources = {}
    for notebook in edition_notebooks(edition):
        nb = json.loads(notebook.read_text(encoding="utf-8"))
        # myst-nb makes the notebook's metadata the page's fields, and docutils reads a field named "language_..."
        # as the text's language (smart quotes for the language "edition"): the book has Sphinx's language instead
        nb["metadata"].pop("language_edition", None)
        _show_figures(nb, ROOT / "course" / notebook.name)
        (src / "course" / notebook.name).write_text(json.dumps(nb, ensure_ascii=False, indent=1), encoding="utf-8")
        sources[f"course/{notebook.name}"] = notebook.relative_to(ROOT).as_posix()
    _repoint_files(src, sources, launch_links.launch_ref(ROOT))
    _write_edition(src, edition, search_words)


def _figures(cell: dict) -> list[dict]:
    return [o for o in cell.get("outputs", []) if "image/png" in o.get("data", {})]


def _show_figures(edition: dict, course: Path) -> None:
    """Give an edition's learner copy (``edition``, a notebook as JSON) the figures the full notebook ``course``
    stores: its code cells are the full notebook's without the solution cells, in order, so each figure goes to
    the cell that draws it, with the cell's alt text. Figures only: what else a cell printed is English (and a check
    cell's verdict, the solution's), so an edition's page shows no text output."""
    full = [c for c in json.loads(course.read_text(encoding="utf-8"))["cells"]
            if c["cell_type"] == "code" and "solution" not in c.get("metadata", {}).get("tags", [])]
    mine = [c for c in edition["cells"] if c["cell_type"] == "code"]
    if len(full) != len(mine):
        raise ValueError(f"{course.name}: the edition has {len(mine)} code cells, the course {len(full)} without "
                         "its solutions: run `make student`")
    for theirs, cell in zip(full, mine, strict=True):
        if _figures(theirs):
            cell["outputs"] = _figures(theirs)
            cell["execution_count"] = theirs.get("execution_count")
            if "mystnb" in theirs.get("metadata", {}):
                cell.setdefault("metadata", {})["mystnb"] = theirs["metadata"]["mystnb"]


def _write_edition(src: Path, edition: str, search_words: str | None) -> None:
    """``src/edition.json``: what docs/conf.py needs to know of the edition it builds and of the others."""
    editions = {"en": {"folder": "", "language": "en"},
                **{name: {"folder": name, "language": language} for name, language in EDITIONS.items()}}
    book = {"edition": edition, "editions": editions, "shared_pages": sorted(shared_pages()),
            "search_words": search_words}
    (src / "edition.json").write_text(json.dumps(book, ensure_ascii=False, indent=1), encoding="utf-8")


def _sphinx(src: Path, out: Path, warnings_as_errors: bool, quiet: bool) -> list[str]:
    """The command line of one edition's Sphinx build."""
    args = [sys.executable, "-m", "sphinx", "-b", "html", "-j", "1", "-E", str(src), str(out)]
    return args + (["-W", "--keep-going"] if warnings_as_errors else []) + (["-q"] if quiet else [])


def build(out: Path, src: Path, warnings_as_errors: bool = True, quiet: bool = True, jobs: int = 2) -> int:
    """Stage every edition into ``src`` (``src/en``, ``src/zh``, ...; replaced) and build English into ``out`` and
    each other edition into ``out/<edition>``, ``jobs`` builds at a time. Each build's messages are written to
    stderr; returns the first non-zero exit status of a build (Sphinx's: any warning when ``warnings_as_errors``),
    else 0."""
    stage(src / "en")
    builds = {"en": _sphinx(src / "en", out, warnings_as_errors, quiet)}
    for edition in EDITIONS:
        stage_edition(src / edition, edition)
        builds[edition] = _sphinx(src / edition, out / edition, warnings_as_errors, quiet)
    env = {**os.environ, "PAVLOVLAB_ROOT": str(ROOT)}  # docs/conf.py reads the release setting of this checkout

    def run(command: list[str]) -> tuple[int, str, float]:
        t0 = time.perf_counter()
        done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=ROOT)
        return done.returncode, done.stdout, time.perf_counter() - t0

    with ThreadPoolExecutor(max_workers=max(jobs, 1)) as pool:
        results = dict(zip(builds, pool.map(run, builds.values()), strict=True))
    for edition, (code, text, seconds) in results.items():
        sys.stderr.write(f"{edition}: {'built' if code == 0 else 'FAILED'} in {seconds:.1f} s\n{text}")
    return next((code for code, _, _ in results.values() if code), 0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Build the course book's editions into _build/html.")
    parser.add_argument("--out", type=Path, default=ROOT / "_build" / "html")
    parser.add_argument("--src", type=Path, default=ROOT / "_build" / "src", help="staging folder (replaced)")
    parser.add_argument("--jobs", type=int, default=2, help="editions built at once (default: 2)")
    parser.add_argument("--no-warnings-as-errors", action="store_true")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    t0 = time.perf_counter()
    rc = build(args.out, args.src, warnings_as_errors=not args.no_warnings_as_errors, jobs=args.jobs)
    pages = [args.out / "index.html", *(args.out / edition / "index.html" for edition in EDITIONS)]
    print(f"book {'built' if rc == 0 else 'FAILED'} in {time.perf_counter() - t0:.1f} s: {', '.join(map(str, pages))}")
    return rc


if __name__ == "__main__":
    sys.exit(main())
