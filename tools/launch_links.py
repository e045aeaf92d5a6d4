#!/usr/bin/env python3
"""Every launch link of the course, derived from two settings side by side in pyproject.toml's
``[tool.pavlovlab]``: ``repository`` (GitHub's ``owner/name``: a fork names itself there) and ``launch-ref``
("main" until a release is published, then its tag ``vX.Y.Z``).

From that repository and ref: Binder links (``mybinder.org/v2/gh/<repo>/<ref>``), Colab links
(``colab.research.google.com/github/<repo>/blob/<ref>/<path>``), nbgitpuller links (``branch=``: the ref itself
for ``main``, the release branch ``release-vX.Y.Z`` for a tag, because nbgitpuller cannot follow a tag), the
clone commands of the guides (``git clone --branch <ref>``), the hub image tag, the book's launch menu
(docs/conf.py), the GitHub links of pyproject.toml and CITATION.cff, and the Colab install cell of the notebooks.

    python tools/launch_links.py docs --write          # re-point the links of README.md, the guides, deploy/
    python tools/launch_links.py docs --check          # exit 1 and list the files whose links are stale
    python tools/launch_links.py cells course/*.ipynb  # put the launch cells at the top of these notebooks

``cells`` changes only the notebooks named on its command line (``make launch-cells`` names course/, then
regenerates student/ from it): below each notebook's title it puts a badge cell (Open in Colab, Binder: both
open the learner copy ``student/<name>``) and an install cell that installs the package at the ref on Colab when
it is missing, and does nothing anywhere else. Both carry the tag ``launch`` and are replaced, not duplicated,
when the tool runs again.
"""

from __future__ import annotations

import argparse
import re
import sys
import tomllib
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parent.parent
OWNER_NAME = r"[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9_.-]*[A-Za-z0-9_-]"
"""A GitHub repository, ``owner/name``."""
LAUNCH_TAG = "launch"
"""Tag of the cells this tool writes (found and replaced on the next run; removed from the book's pages)."""
DOCS = ["README.md", "course/INSTRUCTOR_GUIDE.md", "deploy/README.md", "deploy/tljh/setup.sh",
        "deploy/z2jh/Dockerfile", "deploy/z2jh/config.yaml", "pyproject.toml"]
"""Files whose launch links, clone commands and GitHub links ``docs --write`` re-points (notebooks: ``cells``).
Every GitHub, Binder and Colab repository they name is the course's own."""
REPO_DOCS = ["CITATION.cff", "CONTRIBUTING.md"]
"""Files that name the repository but no ref: ``docs --write`` re-points their repository only."""
REF = r"[A-Za-z0-9][A-Za-z0-9._/-]*?"
PATTERNS = {
    "binder": re.compile(rf"(mybinder\.org/v2/gh/{OWNER_NAME}/)({REF})(?=[?/\s)\"'`]|$)"),
    "colab": re.compile(rf"(colab\.research\.google\.com/github/{OWNER_NAME}/blob/)({REF})(?=/)"),
    "github": re.compile(rf"(github\.com/{OWNER_NAME}/(?:blob|tree)/)({REF})(?=/)"),
    "puller": re.compile(r"(git-pull\?[^\s)\"'`]*?branch=)([^&\s)\"'`]+)"),
    "clone": re.compile(rf"(git clone [^\n`]*?--branch )(\S+)(?= https://github\.com/{OWNER_NAME})"),
    "image": re.compile(r"(pavlovlab-user:)([A-Za-z0-9._-]+)"),
    "chart": re.compile(r"(\n    tag: \")([^\"]+)(\")"),
}
"""Each pattern's group 2 is the ref it names (``puller``: the nbgitpuller branch)."""
REPO_PATTERNS = {
    "repository": re.compile(rf"((?:github\.com|mybinder\.org/v2/gh|colab\.research\.google\.com/github)/)"
                             rf"({OWNER_NAME})(?![A-Za-z0-9_-])"),
    "repository (URL-encoded)": re.compile(rf"(github\.com%2F)({OWNER_NAME.replace('/', '%2F')})"),
}
"""Each pattern's group 2 is the repository it names (``owner/name``; ``owner%2Fname`` in an nbgitpuller link)."""


def _setting(root: Path, key: str, pattern: str, example: str) -> str:
    config = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    value = config.get("tool", {}).get("pavlovlab", {}).get(key)
    if not isinstance(value, str) or not re.fullmatch(pattern, value):
        raise ValueError(f"pyproject.toml: [tool.pavlovlab] {key}: expected {example}, got {value!r}")
    return value


def launch_ref(root: Path = ROOT) -> str:
    """The ref every launch link points at: ``[tool.pavlovlab] launch-ref`` of ``root``'s pyproject.toml."""
    return _setting(root, "launch-ref", REF.rstrip("?"), "a git ref such as 'main' or 'v0.3.0'")


def repository(root: Path = ROOT) -> str:
    """The GitHub repository every link names: ``[tool.pavlovlab] repository`` (``owner/name``)."""
    return _setting(root, "repository", OWNER_NAME, "a GitHub repository 'owner/name' such as 'pavlovlab/pavlovlab'")


REPO = repository()
"""This checkout's repository (``owner/name``), read once from its pyproject.toml."""
REPO_URL = f"https://github.com/{REPO}"


def puller_branch(ref: str) -> str:
    """The branch nbgitpuller follows for ``ref``: ``release-vX.Y.Z`` for a release tag, else ``ref`` itself."""
    return f"release-{ref}" if re.fullmatch(r"v\d+\.\d+\.\d+", ref) else ref


def expected(kind: str, ref: str) -> str:
    """The ref a link of ``kind`` (a key of :data:`PATTERNS`) must name."""
    return puller_branch(ref) if kind == "puller" else ref


def binder_url(path: str, ref: str) -> str:
    """Binder, opening ``path`` (relative to the repository root) in JupyterLab."""
    return f"https://mybinder.org/v2/gh/{REPO}/{ref}?urlpath=lab/tree/{path}"


def colab_url(path: str, ref: str) -> str:
    """Colab, opening the notebook ``path`` of the repository at ``ref``."""
    return f"https://colab.research.google.com/github/{REPO}/blob/{ref}/{path}"


def puller_url(path: str, ref: str, hub: str = "YOUR-HUB") -> str:
    """nbgitpuller on the JupyterHub ``hub``: clones the repository into ``~/pavlovlab``, then opens ``path``."""
    return (f"https://{hub}/hub/user-redirect/git-pull?repo={quote(REPO_URL, safe='')}&branch={puller_branch(ref)}"
            f"&targetpath=pavlovlab&urlpath={quote(f'lab/tree/pavlovlab/{path}', safe='')}")


def install_spec(ref: str) -> str:
    """What the Colab install cell gives pip: the package from the repository at ``ref``."""
    return f"pavlovlab @ git+{REPO_URL}@{ref}"


def _expected_repo(kind: str, repo: str) -> str:
    return repo.replace("/", "%2F") if "encoded" in kind else repo


def stale_links(text: str, ref: str, repo: str = REPO) -> list[str]:
    """``kind: found`` for every launch link, clone command or GitHub link of ``text`` that does not name ``ref``
    and ``repo``."""
    return ([f"{kind}: {m.group(2)}" for kind, pattern in PATTERNS.items() for m in pattern.finditer(text)
             if m.group(2) != expected(kind, ref)]
            + [f"{kind}: {m.group(2)}" for kind, pattern in REPO_PATTERNS.items() for m in pattern.finditer(text)
               if m.group(2) != _expected_repo(kind, repo)])


def repoint(text: str, ref: str, repo: str = REPO) -> str:
    """``text`` with every launch link, clone command and GitHub link re-pointed at ``repo`` and ``ref``."""
    for kind, pattern in REPO_PATTERNS.items():
        text = pattern.sub(lambda m, k=kind: m.group(1) + _expected_repo(k, repo), text)
    for kind, pattern in PATTERNS.items():
        text = pattern.sub(lambda m, k=kind: m.group(1) + expected(k, ref) + m.group(0)[m.end(2) - m.start():],
                           text)
    return text


# ------------------------------------------------------------------------------------ notebook cells
def badge_markdown(path: str, ref: str) -> str:
    """The badge cell's text for the notebook ``path`` (relative to the repository root)."""
    return (f"[![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)]({colab_url(path, ref)}) "
            f"[![Launch on Binder](https://mybinder.org/badge_logo.svg)]({binder_url(path, ref)})")


INSTALL_FAILED = ("Could not install the course's package (pip could not fetch it from GitHub): check that this "
                  "runtime is connected to the internet, then run this cell again.")
"""The one sentence the install cell ends with when pip fails (no network on Colab), instead of a traceback."""


def install_code(ref: str) -> str:
    """The install cell: on Colab, installs the package at ``ref`` when it is missing and turns on Colab's
    widget manager (the notebooks' sliders); anywhere else it does nothing. When pip fails (a runtime without
    network) the cell stops with :data:`INSTALL_FAILED` as its only message: pip's output is kept quiet and the
    error carries IPython's ``_render_traceback_`` hook, so the sentence is shown instead of a traceback (and
    "Run all" stops there)."""
    return (
        "# On Colab: install the course's package when it is missing, and let Colab show the widgets.\n"
        "# Anywhere else (JupyterLab, Binder, a hub) this cell does nothing.\n"
        "import importlib.util\n"
        "import subprocess\n"
        "import sys\n"
        "\n"
        "if \"google.colab\" in sys.modules:\n"
        "    if importlib.util.find_spec(\"pavlovlab\") is None:\n"
        "        pip = subprocess.run([sys.executable, \"-m\", \"pip\", \"install\", \"-q\",\n"
        f"                              \"{install_spec(ref)}\"], capture_output=True)\n"
        "        if pip.returncode != 0:\n"
        "            class InstallFailed(Exception):\n"
        "                def _render_traceback_(self):  # what IPython shows instead of a traceback\n"
        "                    return [str(self)]\n"
        "\n"
        f"            raise InstallFailed({INSTALL_FAILED!r})\n"
        "    from google.colab import output\n"
        "\n"
        "    output.enable_custom_widget_manager()"
    )


def learner_copy(name: str) -> str:
    """The repository path of the learner copy of the notebook named ``name``: what every badge opens (the
    full copies with their solutions are the instructor's; learner copies are made from them, badges included)."""
    return f"student/{name}"


def with_launch_cells(nb, path: str, ref: str):
    """``nb`` (an nbformat notebook, changed in place and returned) with its launch cells replaced: the badge
    cell and the install cell right below the first cell (the title), every older ``launch`` cell removed,
    and the links of its other markdown cells re-pointed at ``ref``."""
    import nbformat

    cells = [c for c in nb.cells if LAUNCH_TAG not in c.get("metadata", {}).get("tags", [])]
    old = {c.get("id"): c for c in nb.cells if LAUNCH_TAG in c.get("metadata", {}).get("tags", [])}
    for cell in cells:
        if cell.cell_type == "markdown":
            cell.source = repoint(cell.source, ref)
    badge = nbformat.v4.new_markdown_cell(badge_markdown(path, ref), metadata={"tags": [LAUNCH_TAG]})
    install = nbformat.v4.new_code_cell(install_code(ref), metadata={"tags": [LAUNCH_TAG]})
    stem = Path(path).stem
    badge["id"], install["id"] = f"launch-badges-{stem}"[:64], f"launch-install-{stem}"[:64]
    # an unchanged launch cell is kept as it is: its execution count and output stay those of the last run
    badge, install = (old[c["id"]] if c["id"] in old and old[c["id"]].source == c.source else c
                      for c in (badge, install))
    nb.cells = [*cells[:1], badge, install, *cells[1:]]
    return nb


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Launch links from the one release setting.")
    sub = parser.add_subparsers(dest="what", required=True)
    docs = sub.add_parser("docs", help="re-point the links of README.md, the guides, deploy/, pyproject.toml, ...")
    mode = docs.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true")
    mode.add_argument("--check", action="store_true")
    cells = sub.add_parser("cells", help="put the badge and install cells at the top of the named notebooks")
    cells.add_argument("notebooks", nargs="+", type=Path)
    args = parser.parse_args(argv)
    ref = launch_ref()
    if args.what == "docs":
        stale = {rel: stale_links((ROOT / rel).read_text(encoding="utf-8"), ref) for rel in DOCS + REPO_DOCS}
        stale = {rel: found for rel, found in stale.items() if found}
        for rel, found in stale.items():
            if args.write:
                path = ROOT / rel
                path.write_text(repoint(path.read_text(encoding="utf-8"), ref), encoding="utf-8")
            print(f"{'re-pointed' if args.write else 'stale'}: {rel} ({', '.join(sorted(set(found)))})")
        if not stale:
            print(f"every launch link of {len(DOCS + REPO_DOCS)} files points at {REPO} {ref}")
        return 1 if (args.check and stale) else 0
    import nbformat

    for path in args.notebooks:
        nb = with_launch_cells(nbformat.read(path, as_version=4), learner_copy(path.name), ref)
        nbformat.write(nb, path)
        print(f"launch cells ({ref}): {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
