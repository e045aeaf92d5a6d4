"""The editions in other languages stay in step with the English learner copies: the catalogues in ``locales/``
hold today's English (``make translations`` ran after the last edit), a changed English paragraph turns its
translation fuzzy and the edition shows the marked English instead, translations keep the maths and the
glossary's terms, and ``pavlovlab start --lang`` writes the edition asked for."""

from __future__ import annotations

import argparse
import re
import shutil
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

import translations  # noqa: E402

from pavlovlab.teach import cli, language  # noqa: E402

STUDENT = ROOT / "student"
INLINE_MATHS = re.compile(r"(?<![$\\])\$(?!\$)(.+?)(?<![\\])\$")


def _notebook(path: Path, *paragraphs: str) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(p) for p in paragraphs] + [nbformat.v4.new_code_cell("x = 1")]
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path


def _translate(locales: Path, stem: str, locale: str, strings: dict[str, str]) -> None:
    path = translations.catalogue_path(locales, locale, stem)
    po = translations._read(path, locale)
    for msgid, msgstr in strings.items():
        po[msgid].string = msgstr
    translations._write(path, po)


def _markdown(path: Path) -> list[str]:
    return [c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "markdown"]


def test_an_english_edit_turns_its_translation_fuzzy_and_the_edition_falls_back(tmp_path):
    student, locales = tmp_path / "student", tmp_path / "locales"
    nb = _notebook(student / "01_x.ipynb", "The bell rings.", "The dog salivates, $\\Delta V = 1$.")
    translations.update([nb], locales)
    _translate(locales, "01_x", "fr", {"The bell rings.": "La cloche sonne.",
                                       "The dog salivates, $\\Delta V = 1$.": "Le chien salive, $\\Delta V = 1$."})
    translations.build(student, locales)
    assert _markdown(student / "fr" / "01_x.ipynb") == ["La cloche sonne.", "Le chien salive, $\\Delta V = 1$."]

    _notebook(nb, "The bell rings twice.", "The dog salivates, $\\Delta V = 1$.")     # one English edit
    translations.update([nb], locales)
    po = translations._read(translations.catalogue_path(locales, "fr", "01_x"), "fr")
    assert po["The bell rings twice."].fuzzy and po["The bell rings twice."].string == "La cloche sonne."
    assert "The bell rings." not in po                                                    # no stale entry kept
    fr = next(c for c in translations.coverage(locales) if c.locale == "fr")
    assert (fr.total, fr.translated, fr.fuzzy, fr.missing) == (2, 1, 1, 0)
    translations.build(student, locales)
    marker = translations.UNTRANSLATED["fr"]
    assert _markdown(student / "fr" / "01_x.ipynb") == [f"{marker} The bell rings twice.",
                                                         "Le chien salive, $\\Delta V = 1$."]
    assert _markdown(student / "zh" / "01_x.ipynb")[0] == f"{translations.UNTRANSLATED['zh_CN']} The bell rings twice."


def test_the_edition_keeps_list_numbers_quoted_answers_and_working_links():
    source = ("> **Think!** Why?\n>\n> <details><summary>Answer</summary>\n>\n> Because.\n>\n> </details>\n\n"
              "5. five\n6. six\n\nSee [the licence](../LICENSE) and [on Binder](https://mybinder.org/v2/gh/o/r/main?"
              "urlpath=lab/tree/student/01_x.ipynb).")
    out = translations.relink(translations.translate_markdown(source, {}, "fr"), "student", "fr")
    lines = out.splitlines()
    assert lines[lines.index("> <details><summary>〔texte anglais, traduction à venir〕 Answer</summary>") + 2] == (
        "> 〔texte anglais, traduction à venir〕 Because.")
    marker = translations.UNTRANSLATED["fr"]
    assert f"5. {marker} five" in lines and f"6. {marker} six" in lines
    assert "](../../LICENSE)" in out and "urlpath=lab/tree/student/fr/01_x.ipynb" in out
    ending = translations.translate_markdown("T.\n\n<details><summary>A</summary>\n\nB.\n\n</details>", {}, "fr")
    assert ending.rstrip().endswith("</details>")


def test_display_maths_is_no_entry_and_folded_titles_are(tmp_path):
    cell = ("Before\n\n$$\nS = \\sum_i v_i k_i^\\top\n$$\n\n<details><summary>Derivation: the sum</summary>\n\n"
            "After\n\n</details>")
    nb = _notebook(tmp_path / "student" / "02_y.ipynb", cell)
    translations.update([nb], tmp_path / "locales")
    po = translations._read(translations.catalogue_path(tmp_path / "locales", "zh_CN", "02_y"), "zh_CN")
    assert {m.id for m in po if m.id} == {"Before", "After", "Derivation: the sum"}             # maths: as it is
    _translate(tmp_path / "locales", "02_y", "zh_CN",
               {"Before": "之前", "After": "之后", "Derivation: the sum": "推导：求和"})
    translations.build(tmp_path / "student", tmp_path / "locales")
    (zh,) = _markdown(tmp_path / "student" / "zh" / "02_y.ipynb")
    assert "之前" in zh and "之后" in zh and "<summary>推导：求和</summary>" in zh and "S = \\sum_i v_i k_i^\\top" in zh


def test_the_committed_catalogues_hold_todays_english(tmp_path):
    copy = tmp_path / "locales"
    shutil.copytree(ROOT / "locales", copy)
    written = translations.update(translations.english_texts(STUDENT), copy) + translations.update_book(copy)
    assert not written, ("the catalogues in locales/ are out of date with student/: run `make translations` and "
                         f"commit locales/ and student/ ({[p.name for p in written]})")


def test_every_text_and_marked_module_has_a_catalogue_per_language():
    stems = ({p.stem for p in translations.english_texts(STUDENT)} | {translations.BOOK}  # and the book's front page
             | {translations.module_name(p) for p in translations.message_sources()})
    assert {p.stem for p in (ROOT / "locales" / "templates").glob("*.pot")} == stems
    for locale in translations.EDITIONS.values():
        assert {p.stem for p in (ROOT / "locales" / locale / "LC_MESSAGES").glob("*.po")} == stems


def test_the_compiled_catalogues_are_todays(tmp_path):
    """The package's compiled catalogues (what the wheel carries) hold exactly the translated entries of today's
    catalogues."""
    fresh = translations.compile_messages(out=tmp_path)
    assert fresh, "nothing compiled"
    stale = [p.relative_to(tmp_path).as_posix() for p in fresh
             if not (language.LOCALE_DIR / p.relative_to(tmp_path)).is_file()
             or (language.LOCALE_DIR / p.relative_to(tmp_path)).read_bytes() != p.read_bytes()]
    assert not stale, f"pavlovlab/locale/ is out of date with locales/: run `make translations` ({stale})"


@pytest.mark.parametrize("locale", translations.EDITIONS.values())
def test_translations_keep_the_named_fields(locale):
    """A sentence of the package keeps its ``{fields}`` (the code fills them by name; a lost one is a lost number)."""
    changed = [(stem, msgid[:60]) for stem, msgid, msgstr in _translated(locale) if stem.startswith("pavlovlab.")
               and sorted(translations.BRACE_FIELD.findall(msgid)) != sorted(translations.BRACE_FIELD.findall(msgstr))]
    assert not changed, f"{locale}: translations that lost or changed a {{field}}: {changed}"


def test_the_messages_speak_the_language_chosen(tmp_path):
    """A marked sentence is said in the language chosen, in English without a translation, and the choice is
    checked."""
    try:
        for edition, locale in translations.EDITIONS.items():
            path = translations.catalogue_path(ROOT / "locales", locale, "pavlovlab.teach.exercises.checking")
            po = translations._read(path, locale)
            msgid, msgstr = next((m.id, m.string) for m in po if m.id and m.string and not m.fuzzy)
            assert language.use(edition) == edition and language._(msgid) == msgstr
            assert language._("a sentence no catalogue holds") == "a sentence no catalogue holds"
        assert language.use("fr_FR.UTF-8") == "fr" and language.use("zh-CN") == "zh"
        with pytest.raises(ValueError, match="language: expected one of en, zh, fr"):
            language.use("de")
    finally:
        language.use("en")


def _translated(locale: str):
    for path in sorted((ROOT / "locales" / locale / "LC_MESSAGES").glob("*.po")):
        for m in translations._read(path, locale):
            if m.id and m.string and not m.fuzzy:
                yield path.stem, m.id, m.string


@pytest.mark.parametrize("locale", translations.EDITIONS.values())
def test_translations_keep_the_maths_as_it_is(locale):
    changed = [(stem, msgid[:60]) for stem, msgid, msgstr in _translated(locale)
               if sorted(INLINE_MATHS.findall(msgid)) != sorted(INLINE_MATHS.findall(msgstr))]
    assert not changed, f"{locale}: translations whose inline maths differs from the English: {changed}"


def glossary() -> dict[str, dict[str, str]]:
    """``docs/glossary.md``'s table of the editions: English term → {locale: its one translation}."""
    text = (ROOT / "docs" / "glossary.md").read_text(encoding="utf-8")
    rows = [line.strip().strip("|").split("|") for line in text[text.index("| term | 中文"):].splitlines()
            if line.startswith("|") and not line.startswith("|---")]
    return {row[0].strip(): {"zh_CN": row[1].strip(), "fr": row[2].strip()} for row in rows[1:]}


def glossary_misses(locale: str, entries) -> list[tuple[str, str]]:
    """(term, English entry) where an entry mentions a glossary term and its translation lacks the term's."""
    terms = {t: tr[locale] for t, tr in glossary().items() if tr[locale]}
    return [(term, msgid[:60]) for _, msgid, msgstr in entries for term, want in terms.items()
            if re.search(rf"\b{re.escape(term)}\b", msgid, re.I) and want.lower() not in msgstr.lower()]


@pytest.mark.parametrize("locale", translations.EDITIONS.values())
def test_translations_use_the_glossarys_terms(locale):
    assert not glossary_misses(locale, _translated(locale))


def test_the_glossary_check_finds_a_term_translated_otherwise():
    entry = [("01_x", "The conditioned stimulus rings.", "Le signal conditionné sonne.")]
    assert glossary_misses("fr", entry) == [("conditioned stimulus", "The conditioned stimulus rings.")]
    assert not glossary_misses("fr", [("01_x", "The conditioned stimulus rings.", "Le stimulus conditionnel sonne.")])


def test_start_writes_the_edition_asked_for(tmp_path, capsys):
    out = tmp_path / "course-fr"
    args = argparse.Namespace(dir=str(out), no_browser=True, dry_run=True, course=str(ROOT / "course"), lang="fr")
    assert cli.cmd_start(args) == 0
    assert _markdown(out / "00_start_here.ipynb") == _markdown(STUDENT / "fr" / "00_start_here.ipynb")
    assert (out / "00_start_here.ipynb").is_file() and not (out / "fr").exists()


@pytest.mark.parametrize(("environ", "lang"), [({"LANG": "zh_CN.UTF-8"}, "zh"), ({"LANG": "fr_FR.UTF-8"}, "fr"),
                                                ({"LC_ALL": "fr_CA.UTF-8", "LANG": "zh_CN"}, "fr"),
                                                ({"PAVLOVLAB_LANGUAGE": "zh", "LANG": "fr_FR"}, "zh"),
                                                ({"LANG": "C.UTF-8"}, "en"),
                                                ({"LANG": "de_DE.UTF-8"}, "en"), ({}, "en")])
def test_the_default_edition_follows_the_system_language(environ, lang):
    assert language.from_environment(environ) == lang


def test_the_glossarys_names_are_the_packages():
    """Every dotted name in the glossary's last column is an attribute path of ``pavlovlab`` today."""
    import importlib

    text = (ROOT / "docs" / "glossary.md").read_text(encoding="utf-8")
    missing = []
    for name in re.findall(r"`((?:[a-z_]+\.)+[A-Za-z_]+)(?:\([^`]*\))?`", text):
        parts, obj = name.split("."), None
        for i in range(len(parts), 0, -1):
            try:
                obj = importlib.import_module("pavlovlab." + ".".join(parts[:i]))
            except ImportError:
                continue
            for attr in parts[i:]:
                obj = getattr(obj, attr, None)
            break
        if obj is None:
            missing.append(name)
    assert not missing, f"docs/glossary.md names what pavlovlab does not have: {missing}"


def test_the_readme_states_todays_coverage():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme[readme.index("**Coverage today**"):]
    block = block[block.index("```text\n") + 8:]
    assert block[:block.index("```")].splitlines() == [c.line() for c in translations.coverage()]


@pytest.mark.parametrize("edition", translations.EDITIONS)
def test_an_editions_code_is_the_english_learner_copys(edition):
    """An edition runs exactly what the English learner copy runs (its code cells, their tags and exercise keys are
    the same), so the learner copies' execution under nbval covers the editions' code."""
    def code(path: Path) -> list[tuple[str, dict]]:
        return [(c.source, dict(c.metadata)) for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
    for english in sorted(STUDENT.glob("[0-9]*.ipynb")):
        said = [(translations.START.sub(rf'\1language="{edition}")', source), metadata)
                for source, metadata in code(english)]
        assert code(STUDENT / edition / english.name) == said, f"{edition}/{english.name}"
        if any("ex.start()" in source for source, _ in code(english)):
            assert any(f'ex.start(language="{edition}")' in source for source, _ in said), english.name
