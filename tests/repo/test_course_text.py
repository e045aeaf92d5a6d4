"""The course's text works in every tree: every relative link of course/, student/ and the editions resolves from
where the notebook or page lies, and no inline maths is broken by a line break inside a quoted block (a `>` that
would reach MathJax as part of the formula: "δ =\\n> λ" renders as "δ => λ")."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted(p for tree in ("course", "student", "student/zh", "student/fr") for p in (ROOT / tree).iterdir()
               if p.suffix in {".ipynb", ".md"})
LINK = re.compile(r"\]\(([^)\s]+)\)|(?:href|src)=\"([^\"]+)\"")
INLINE_MATH = re.compile(r"(?<![$\\])\$(?!\$)(.+?)(?<![\\])\$", re.S)


def _markdown(page: Path) -> str:
    if page.suffix == ".md":
        return page.read_text(encoding="utf-8")
    return "\n\n".join(c.source for c in nbformat.read(page, as_version=4).cells if c.cell_type == "markdown")


def _relative_links(text: str) -> list[str]:
    links = (next(g for g in m.groups() if g) for m in LINK.finditer(text))
    return [link for link in links if not re.match(r"^(https?:|mailto:|#|data:)", link)]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_relative_link_resolves(page):
    missing = [link for link in _relative_links(_markdown(page)) if not (page.parent / link.split("#")[0]).exists()]
    assert not missing, f"{page.parent.name}/{page.name} links to files that do not exist there: {missing}"


def test_the_link_checker_finds_a_dead_link(tmp_path):
    page = tmp_path / "x.md"
    page.write_text("see [the guide](INSTRUCTOR_GUIDE.md) and [the paper](https://arxiv.org/abs/2508.08289)")
    assert _relative_links(page.read_text()) == ["INSTRUCTOR_GUIDE.md"]
    assert not (tmp_path / "INSTRUCTOR_GUIDE.md").exists()


@pytest.mark.parametrize("page", PAGES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_no_inline_maths_breaks_across_a_quoted_line(page):
    text = re.sub(r"\$\$.+?\$\$", "", _markdown(page), flags=re.S)       # display maths may span lines
    broken = [m.group(0) for m in INLINE_MATH.finditer(text) if re.search(r"\n\s*>", m.group(1))]
    assert not broken, f"{page.parent.name}/{page.name}: inline maths broken by a quoted line: {broken}"


def test_the_maths_checker_finds_a_broken_formula():
    text = "> the surprise is $\\delta =\n> \\lambda$ on the first trial, and $x$ is fine"
    broken = [m.group(1) for m in INLINE_MATH.finditer(text) if re.search(r"\n\s*>", m.group(1))]
    assert broken == ["\\delta =\n> \\lambda"]


FOLDED_INLINE = re.compile(r"</summary>[ \t]*[^\s]|</summary>[ \t]*\n(?:>[ \t]*)?[^\s>]"
                           r"|[^\s>][ \t]*\n(?:>[ \t]*)?</details>")


@pytest.mark.parametrize("page", [p for p in PAGES if p.parent.name == "course"], ids=lambda p: p.name)
def test_a_folded_blocks_content_starts_after_a_blank_line(page):
    """Markdown and maths render inside ``<details>`` only after a blank line, and ``</details>`` closes the block
    only after one; the editions' catalogues see the text only then (HTML is passed through untranslated)."""
    cramped = [m.group(0) for m in FOLDED_INLINE.finditer(_markdown(page))]
    assert not cramped, f"{page.name}: a <details> block's content follows </summary> without a blank line: {cramped}"


def test_the_folding_checker_finds_cramped_content():
    assert FOLDED_INLINE.search("> <details><summary>Answer</summary>Nothing: with")
    assert FOLDED_INLINE.search("<details><summary>Answer</summary>\nNothing")
    assert not FOLDED_INLINE.search("> <details><summary>Answer</summary>\n>\n> Nothing")
    assert FOLDED_INLINE.search("| last | row |\n</details>")
    assert not FOLDED_INLINE.search("| last | row |\n\n</details>")
