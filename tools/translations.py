#!/usr/bin/env python3
"""The course's editions in other languages, kept in step with the English notebooks by gettext catalogues.

The English learner copies (``student/*.ipynb``) are the one source. Their markdown is cut into paragraph-sized
entries by ``mdpo`` (a heading, a paragraph, a list item, a table cell, and the title of every folded
``<details>`` block), one template per notebook in ``locales/templates/NN_name.pot``, with one catalogue per
language in ``locales/LANG/LC_MESSAGES/NN_name.po``. Babel merges a new template into each
catalogue as ``msgmerge`` does: an English paragraph that changed keeps its old translation, marked *fuzzy*, and
a new one starts empty. Display maths is no entry: it stays as it is in every edition.

An edition (``student/zh/``, ``student/fr/``) is the English learner copies with every markdown entry replaced by
its translation. An entry that is missing or fuzzy shows the English paragraph in its place, after a marker in
the edition's language, so a reader knows; code cells stay as they are, links climb one folder more, and links to a
learner copy (the launch badges, Binder links in the text) open the edition's.

The package's own sentences (a checker's verdicts and hints, ``doctor``'s and ``start``'s lines; marked ``_(...)``
or ``N_(...)`` in the source, see :mod:`pavlovlab.teach.language`) are extracted by Babel the same way, one
template per source module (``locales/templates/pavlovlab.teach.cli.pot``, ...) merged into one catalogue per
language each; ``build`` compiles a language's into ``pavlovlab/locale/<locale>/LC_MESSAGES/pavlovlab.mo`` (the
translated entries only: a missing or fuzzy one is said in English).

    python tools/translations.py update            # what `make translations` runs after an English edit
    python tools/translations.py status [--check]  # per language: entries translated, fuzzy, missing
    python tools/translations.py build OUT         # the editions of OUT/*.ipynb into OUT/zh, OUT/fr
    python tools/translations.py compile           # the package's catalogues into pavlovlab/locale/

``tools/student_copies.py`` builds the editions together with the English copies (``make student``).
"""

from __future__ import annotations

import argparse
import copy
import datetime
import re
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import nbformat
import polib
from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_file
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po, write_po
from mdpo.md2po import Md2Po
from mdpo.po2md import Po2Md

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from pavlovlab.teach import language  # noqa: E402
from pavlovlab.teach.student import atomic_write  # noqa: E402

LOCALES = ROOT / "locales"
EDITIONS = {edition: locale for edition, locale in language.EDITIONS.items() if edition != "en"}
"""Edition folder (and ``pavlovlab start --lang``) → gettext locale of its catalogues."""
PACKAGE = ROOT / "pavlovlab"
MARKERS = {"_": None, "N_": None}
"""The names that mark a sentence of the package for translation (:mod:`pavlovlab.teach.language`)."""
START = re.compile(r"^(\s*ex\.start\()\)", re.M)
"""A set-up cell's ``ex.start()``: an edition's says its language, so that the checkers speak it."""
UNTRANSLATED = {"zh_CN": "〔英文原文，译文待补〕", "fr": "〔texte anglais, traduction à venir〕"}
"""The marker before an English paragraph that stands in for a missing or outdated translation."""
ISSUES = "https://github.com/pavlovlab/pavlovlab/issues"
SUMMARY = re.compile(r"(<summary>)(.*?)(</summary>)", re.S)
DISPLAY_MATHS = re.compile(r"\$\$(.+?)\$\$", re.S)


def _one_line(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _bare(text: str) -> str:
    return re.sub(r"\s+", "", text)


MATHS_FENCE = re.compile(r"^(>\s?)*\$\$\s*$")


def _maths_apart(markdown: str) -> str:
    """A blank line before every display-maths block and after it (a quote keeps its ``>``), so that mdpo never
    joins the sentence that leads into a formula with the formula itself."""
    lines, out, inside = markdown.split("\n"), [], False
    for i, line in enumerate(lines):
        fence = bool(MATHS_FENCE.match(line))
        quote = re.match(r"^(>\s?)*", line).group(0).rstrip()            # type: ignore[union-attr]
        if fence and not inside and out and out[-1].strip() not in ("", quote):
            out.append(quote)
        out.append(line)
        if fence and inside and i + 1 < len(lines) and lines[i + 1].strip() not in ("", quote):
            out.append(quote)
        inside ^= fence
    return "\n".join(out)


def entries(markdown: str) -> list[str]:
    """The translatable entries of one markdown cell, in reading order: mdpo's paragraph-sized messages (display
    maths left out: it stays as it is, so it never passes through a catalogue), then the titles of its folded
    blocks (which mdpo passes through as HTML)."""
    markdown = _maths_apart(markdown)
    maths = {_bare(m.group(1)) for m in DISPLAY_MATHS.finditer(markdown)}
    found = [e.msgid for e in Md2Po(markdown).extract() if _bare(e.msgid) not in maths]
    return found + [_one_line(m.group(2)) for m in SUMMARY.finditer(markdown) if m.group(2).strip()]


GUIDE = "HOW_TO_USE.md"
"""The learners' guide beside the copies (``pavlovlab student`` writes it): translated like a notebook's text."""


def english_texts(student: Path = ROOT / "student") -> list[Path]:
    """The English sources of the editions' text: the learner copies, then the learners' guide."""
    return [*sorted(student.glob("[0-9]*.ipynb")), student / GUIDE]


def _markdown_cells(notebook: Path) -> list[tuple[int, str]]:
    """The markdown of a notebook, a cell at a time, or of a markdown file (one "cell")."""
    if notebook.suffix == ".md":
        return [(0, notebook.read_text(encoding="utf-8"))]
    cells = nbformat.read(notebook, as_version=4).cells
    return [(i, c.source) for i, c in enumerate(cells) if c.cell_type == "markdown" and c.source.strip()
            and "launch" not in c.metadata.get("tags", [])]                      # badges: made per edition


NOTEBOOK_TEXT = "one text of the pavlovlab course (a learner copy, the learners' guide)"
MODULE_TEXT = "one module of the pavlovlab package: the sentences it says to a learner, marked _() or N_()"


def _catalog(locale: str | None, subject: str = NOTEBOOK_TEXT) -> Catalog:
    what = f"The {locale} catalogue" if locale else "The template"
    return Catalog(locale=locale, project="pavlovlab", fuzzy=False, msgid_bugs_address=ISSUES,
                   last_translator="pavlovlab contributors", language_team=f"pavlovlab {locale or ''}".strip(),
                   header_comment=f"# {what} of {subject}, a paragraph or a sentence an entry.\n# Made and merged "
                                  "by tools/translations.py (`make translations`); translators write the msgstr "
                                  "lines only.")


def template(notebook: Path) -> Catalog:
    """The template of one notebook: every entry once, where it first occurs (``notebook:cell``, cells counted
    from 1)."""
    pot = _catalog(None)
    for i, source in _markdown_cells(notebook):
        for msgid in entries(source):
            if msgid not in pot:
                pot.add(msgid, locations=[(notebook.name, i + 1)])
    return _prose(pot)


BRACE_FIELD = re.compile(r"(?<!\{)\{[A-Za-z_][\w.]*(?:![rsa])?(?::[^{}]*)?\}(?!\})")
"""A named field of ``str.format`` (``{n}``, ``{error:.2f}``)."""


def message_sources(package: Path = PACKAGE) -> list[Path]:
    """The package's modules that mark sentences for translation (a ``_(`` or ``N_(`` call in their text)."""
    marked = re.compile(r"(?<![\w.])N?_\(")
    return [path for path in sorted(package.rglob("*.py")) if "__pycache__" not in path.parts
            and path.name != "language.py" and marked.search(path.read_text(encoding="utf-8"))]


def module_name(source: Path, package: Path = PACKAGE) -> str:
    """``pavlovlab/teach/cli.py`` → ``pavlovlab.teach.cli``: the name of its template and catalogues."""
    return ".".join(source.relative_to(package.parent).with_suffix("").parts)


def messages_template(source: Path, package: Path = PACKAGE) -> Catalog:
    """The template of one module: every marked sentence once, with its file (no line number: moving code churns
    no catalogue) and the comment of a ``# Translators:`` line above it. Named fields (``{n}``) are flagged
    ``python-brace-format``, so that ``msgfmt --check`` holds a translation to the same fields."""
    pot = _catalog(None, MODULE_TEXT)
    where = source.relative_to(package.parent).as_posix()
    for _line, msgid, comments, _context in extract_from_file("python", source, keywords=MARKERS,
                                                            comment_tags=("Translators:",),
                                                            strip_comment_tags=True):
        if isinstance(msgid, str) and msgid and msgid not in pot:
            flags = ["python-brace-format"] if BRACE_FIELD.search(msgid) else []
            pot.add(msgid, locations=[(where, None)], auto_comments=comments, flags=flags)
    return _prose(pot)


def _prose(catalog: Catalog) -> Catalog:
    """No entry is a ``%`` format (the package formats with ``str.format``): no ``python-format`` flag, which Babel
    guesses from a "%" ("95 % interval") and which would make ``msgfmt --check`` hold a translation to format codes
    the English never had."""
    for message in catalog:
        message.flags.discard("python-format")
    return catalog


def _read(path: Path, locale: str | None = None) -> Catalog:
    with path.open("rb") as f:
        return read_po(f, locale=locale)


def _write(path: Path, catalog: Catalog) -> bool:
    """Write ``catalog`` atomically; False (and nothing written) when the file already says the same."""
    with tempfile.TemporaryFile() as f:
        write_po(f, catalog, width=0, omit_header=False, sort_output=False, no_location=False)
        f.seek(0)
        data = f.read()
    data = re.sub(rb'"POT-Creation-Date: [^"]*\\n"\n', b"", data)      # no churn from the clock
    data = re.sub(rb'"PO-Revision-Date: [^"]*\\n"\n', b"", data)
    return _write_bytes(path, data)


def _write_bytes(path: Path, data: bytes) -> bool:
    """Write ``data`` to ``path`` atomically; False (and nothing written) when the file already holds it."""
    if path.exists() and path.read_bytes() == data:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, lambda tmp: tmp.write_bytes(data))
    return True


def catalogue_path(locales: Path, locale: str, stem: str) -> Path:
    return locales / locale / "LC_MESSAGES" / f"{stem}.po"


def update(notebooks: Iterable[Path], locales: Path = LOCALES, sources: Iterable[Path] | None = None) -> list[Path]:
    """Extract each notebook's template, and each marked module's (``sources``: :func:`message_sources` by
    default), and merge it into every language's catalogue (changed English: the old translation kept, fuzzy;
    removed English: obsolete). A template whose module no longer marks anything is removed with its catalogues.
    Returns the files written."""
    written = []
    modules = message_sources() if sources is None else list(sources)
    for notebook in notebooks:
        written += _merge(template(notebook), notebook.stem, locales)
    for source in modules:
        written += _merge(messages_template(source), module_name(source), locales, MODULE_TEXT)
    if sources is None:
        kept = {module_name(source) for source in modules}
        for pot in sorted((locales / "templates").glob("pavlovlab.*.pot")):
            if pot.stem not in kept:
                for path in [pot] + [catalogue_path(locales, locale, pot.stem) for locale in EDITIONS.values()]:
                    path.unlink(missing_ok=True)
                    written.append(path)
    return written


def _merge(pot: Catalog, stem: str, locales: Path, subject: str = NOTEBOOK_TEXT) -> list[Path]:
    """Write the template ``stem.pot`` and merge it into every language's ``stem.po``. Returns the files written."""
    written = []
    if _write(locales / "templates" / f"{stem}.pot", pot):
        written.append(locales / "templates" / f"{stem}.pot")
    for locale in EDITIONS.values():
        path = catalogue_path(locales, locale, stem)
        po = _read(path, locale) if path.exists() else _catalog(locale, subject)
        po.update(pot, update_header_comment=False)
        _prose(po)
        po.obsolete.clear()                           # git keeps the history; a catalogue holds today's English
        if _write(path, po):
            written.append(path)
    return written


EPOCH = datetime.datetime(2000, 1, 1, tzinfo=datetime.UTC)
"""The dates a compiled catalogue's header gives: fixed, so that compiling the same entries gives the same bytes."""


def compile_messages(locales: Path = LOCALES, out: Path = language.LOCALE_DIR) -> list[Path]:
    """Each language's package catalogues (``pavlovlab.*.po``), their translated entries only, compiled into one
    ``out/<locale>/LC_MESSAGES/pavlovlab.mo`` (written only when its bytes change). Returns the files written."""
    written = []
    for locale in EDITIONS.values():
        merged = Catalog(locale=locale, project="pavlovlab", fuzzy=False, creation_date=EPOCH, revision_date=EPOCH)
        for path in sorted((locales / locale / "LC_MESSAGES").glob("pavlovlab.*.po")):
            for message in _read(path, locale):
                if message.id and message.string and not message.fuzzy and message.id not in merged:
                    merged.add(message.id, message.string)
        with tempfile.TemporaryFile() as f:
            write_mo(f, merged)
            f.seek(0)
            data = f.read()
        target = out / locale / "LC_MESSAGES" / f"{language.DOMAIN}.mo"
        if _write_bytes(target, data):
            written.append(target)
    return written


@dataclass(frozen=True)
class Coverage:
    """How much of one language is translated: entries in total, translated (not fuzzy), fuzzy and missing."""

    locale: str
    what: str
    total: int
    translated: int
    fuzzy: int
    missing: int

    def line(self) -> str:
        """What ``status`` prints (and the README quotes)."""
        return (f"{self.locale} {self.what}: {self.translated}/{self.total} translated, {self.fuzzy} fuzzy, "
                f"{self.missing} missing")


def coverage(locales: Path = LOCALES) -> list[Coverage]:
    """The coverage of every language over the texts' catalogues (notebooks, guide), then the package's messages."""
    out = []
    for locale, what in ((locale, what) for locale in EDITIONS.values() for what in ("texts", "messages")):
        total = translated = fuzzy = 0
        for pot in sorted((locales / "templates").glob("*.pot")):
            if pot.stem.startswith("pavlovlab.") != (what == "messages"):
                continue
            path = catalogue_path(locales, locale, pot.stem)
            po = _read(path, locale) if path.exists() else Catalog(locale=locale)
            ids = [m.id for m in _read(pot) if m.id]
            total += len(ids)
            for msgid in ids:
                m = po.get(msgid)
                if m is not None and m.string and m.fuzzy:
                    fuzzy += 1
                elif m is not None and m.string:
                    translated += 1
        out.append(Coverage(locale, what, total, translated, fuzzy, total - translated - fuzzy))
    return out


def _shown(po: Catalog, locale: str) -> dict[str, str]:
    """Every entry's text in the edition: its translation, or the marked English where missing or fuzzy."""
    marker = UNTRANSLATED[locale]
    return {m.id: m.string if m.string and not m.fuzzy else f"{marker} {m.id}" for m in po if m.id}


ORDERED_ITEM = re.compile(r"^((?:> ?)*\s*)(\d+)([.)] )", re.M)


def _repair(source: str, out: str) -> str:
    """Undo three liberties mdpo's Markdown writer takes: an ordered list restarts at 1 (the source's numbers are put
    back, item by item, so a list continued from the cell before keeps its start), the lines of a folded block
    inside a quote lose their ``>`` (put back between ``> <details>`` and ``> </details>``), and a ``</details>``
    that ends the cell is dropped (put back)."""
    numbers = [m.group(2) for m in ORDERED_ITEM.finditer(source)]
    if len(numbers) == len(ORDERED_ITEM.findall(out)):
        found = iter(numbers)
        out = ORDERED_ITEM.sub(lambda m: m.group(1) + next(found) + m.group(3), out)
    lines, quoted = [], False
    for line in out.split("\n"):
        if line.startswith("> <details>"):
            quoted = True
        elif quoted and not line.startswith(">"):
            if not line.strip() and lines and lines[-1].rstrip() == ">":
                continue                                   # one blank quoted line is enough
            line = f"> {line}".rstrip()
        if line.startswith("> </details>"):
            quoted = False
        lines.append(line)
    out = "\n".join(lines)
    last = source.rstrip().rsplit("\n", 1)[-1]
    if last.lstrip("> ").startswith("</details>") and out.count("</details>") < source.count("</details>"):
        out = out.rstrip("\n") + "\n\n" + last                           # mdpo drops a cell's last HTML block
    return out


def translate_markdown(markdown: str, shown: dict[str, str], locale: str) -> str:
    """One markdown cell in the edition's language (entries absent from the catalogue: the marked English)."""
    marker = UNTRANSLATED[locale]
    markdown = _maths_apart(markdown)
    table = polib.POFile()
    for msgid in entries(markdown):
        table.append(polib.POEntry(msgid=msgid, msgstr=shown.get(msgid, f"{marker} {msgid}")))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "cell.po"
        table.save(str(path))
        out = _repair(markdown, Po2Md([str(path)], wrapwidth=0).translate(markdown))
    return SUMMARY.sub(lambda m: m.group(1) + shown.get(_one_line(m.group(2)), f"{marker} {_one_line(m.group(2))}")
                       + m.group(3) if m.group(2).strip() else m.group(0), out)


def relink(markdown: str, student: str, edition: str) -> str:
    """Links of a learner copy as seen from its edition's folder, one level deeper: a relative link that climbs out
    (``../LICENSE``) climbs one more level, and a link to a learner copy (a launch badge, a Binder link in the text)
    opens the edition's copy."""
    markdown = re.sub(r"(\]\(|href=\"|src=\")\.\./", r"\1../../", markdown)
    return re.sub(rf"(?<=[/=]){re.escape(student)}/(?=\d\d_[\w-]+\.ipynb)", f"{student}/{edition}/", markdown)


def build(student: Path, locales: Path = LOCALES) -> list[Path]:
    """Write every edition of the learner copies in ``student`` into ``student/<edition>/``. Returns the files."""
    written = []
    for edition, locale in EDITIONS.items():
        for notebook in sorted(student.glob("[0-9]*.ipynb")):
            path = catalogue_path(locales, locale, notebook.stem)
            shown = _shown(_read(path, locale), locale) if path.exists() else {}
            nb = nbformat.read(notebook, as_version=4)
            out = copy.deepcopy(nb)
            for cell in out.cells:
                if cell.cell_type == "markdown" and cell.source.strip():
                    if "launch" not in cell.metadata.get("tags", []):
                        cell.source = translate_markdown(cell.source, shown, locale).rstrip("\n")
                    cell.source = relink(cell.source, student.name, edition)
                elif cell.cell_type == "code":
                    cell.source = START.sub(rf'\1language="{edition}")', cell.source)
            out.metadata["language_edition"] = edition
            target = student / edition / notebook.name
            target.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(out, target)
            written.append(target)
        guide = student / GUIDE
        if guide.is_file():
            path = catalogue_path(locales, locale, guide.stem)
            shown = _shown(_read(path, locale), locale) if path.exists() else {}
            target = student / edition / GUIDE
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(translate_markdown(guide.read_text(encoding="utf-8"), shown, locale), encoding="utf-8")
            written.append(target)
    return written


BOOK = "book"
"""The catalogue (``locales/templates/book.pot``, ``locales/LANG/LC_MESSAGES/book.po``) of the book editions' front
page, whose English source is :data:`BOOK_PAGE`."""
BOOK_PAGE = ROOT / "docs" / "editions.md"
BOOK_TEXT = "the front page of the course book's editions (docs/editions.md)"
CAPTION = re.compile(r"^(:caption:[ \t]*)(\S.*?)[ \t]*$", re.M)
"""A toctree's caption: the title of a group of pages in the book's navigation (code to mdpo, so no entry)."""


def book_template(page: Path = BOOK_PAGE) -> Catalog:
    """The template of the book editions' front page (tools/build_book.py): its paragraphs, cut as a notebook's
    markdown cell is, then its toctrees' captions (the navigation's titles)."""
    text = page.read_text(encoding="utf-8")
    pot = _catalog(None, BOOK_TEXT)
    for msgid in entries(text) + [m.group(2) for m in CAPTION.finditer(text)]:
        if msgid not in pot:
            pot.add(msgid, locations=[(page.name, None)])
    return _prose(pot)


def update_book(locales: Path = LOCALES, page: Path = BOOK_PAGE) -> list[Path]:
    """:func:`update` for the book editions' front page. Returns the files written."""
    return _merge(book_template(page), BOOK, locales, BOOK_TEXT)


def book_page(locale: str, locales: Path = LOCALES, page: Path = BOOK_PAGE) -> str:
    """The Markdown of the book's front page in ``locale``: ``page`` with its paragraphs and captions translated (a
    missing or fuzzy entry: the marked English, as in the notebooks)."""
    path = catalogue_path(locales, locale, BOOK)
    shown = _shown(_read(path, locale), locale) if path.exists() else {}
    marker = UNTRANSLATED[locale]
    text = translate_markdown(page.read_text(encoding="utf-8"), shown, locale)
    return CAPTION.sub(lambda m: m.group(1) + shown.get(m.group(2), f"{marker} {m.group(2)}"), text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("update", help="extract the English learner copies' text (and the book editions' front page) and "
                                  "merge it into every catalogue")
    status = sub.add_parser("status", help="entries translated, fuzzy and missing per language")
    status.add_argument("--check", action="store_true", help="exit 1 if any entry is missing or fuzzy")
    out = sub.add_parser("build", help="write the editions of the learner copies in a folder")
    out.add_argument("folder", type=Path)
    sub.add_parser("compile", help="compile the package's catalogues into pavlovlab/locale/")
    args = parser.parse_args(argv)
    if args.command == "update":
        for path in update(english_texts()) + update_book():
            print(f"updated {path.relative_to(ROOT)}")
        return 0
    if args.command == "compile":
        for path in compile_messages():
            print(f"compiled {path.relative_to(ROOT)}")
        return 0
    if args.command == "build":
        for path in build(args.folder):
            print(f"wrote {path}")
        return 0
    rows = coverage()
    for c in rows:
        print(c.line())
    return 1 if args.check and any(c.fuzzy or c.missing for c in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
