#!/usr/bin/env python3
"""Make a release: ``make release VERSION=X.Y.Z`` (run from a clean checkout of ``main``).

In one commit: the version in pyproject.toml, ``pavlovlab.__version__``, CITATION.cff (and its date) and
LICENSE-CONTENT's credit line; CHANGELOG.md's ``## [Unreleased]``
section becomes ``## [X.Y.Z] - <today>`` (a new empty ``[Unreleased]`` above it, a compare link below);
the release setting (pyproject.toml ``[tool.pavlovlab] launch-ref``) becomes ``vX.Y.Z`` and every launch link
is re-pointed at it (tools/launch_links.py: the guides, deploy/, pyproject.toml's URLs, the launch cells of course/;
then student/ is made again).
Then the tag ``vX.Y.Z`` and the branch ``release-vX.Y.Z`` (what nbgitpuller links follow) are created on that
commit. Nothing is pushed: the last line printed says what to push.

Refused (exit 2, nothing changed): a version that is not X.Y.Z or not newer than the current one, a dirty
working tree, an existing tag or branch of that name, a changelog without an ``[Unreleased]`` section.
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

import launch_links  # noqa: E402


def _git(*args: str, root: Path) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


def _sub(path: Path, pattern: str, repl: str, *, count: int = 1) -> None:
    text = path.read_text(encoding="utf-8")
    new, n = re.subn(pattern, repl, text, count=count, flags=re.M)
    if n == 0:
        raise SystemExit(f"release: {path.name}: pattern {pattern!r} not found")
    path.write_text(new, encoding="utf-8")


def _tuple(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in version.split("."))


def release(version: str, root: Path = ROOT, today: dt.date | None = None) -> str:
    """Bump every version mark to ``version``, re-point the launch links, commit, tag and branch. Returns the
    tag. Raises ValueError (nothing changed) for a refused release, see the module docstring."""
    if not re.fullmatch(r"\d+\.\d+\.\d+", version):
        raise ValueError(f"VERSION: expected X.Y.Z (e.g. 0.3.0), got {version!r}")
    current = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    if _tuple(version) <= _tuple(current):
        raise ValueError(f"VERSION: expected a version newer than the current {current}, got {version}")
    tag, branch = f"v{version}", launch_links.puller_branch(f"v{version}")
    if _git("status", "--porcelain", "--untracked-files=no", root=root).strip():
        raise ValueError("the working tree has uncommitted changes: commit or stash them first")
    for ref in (f"refs/tags/{tag}", f"refs/heads/{branch}"):
        found = subprocess.run(["git", "rev-parse", "--verify", "--quiet", ref], cwd=root, capture_output=True)
        if found.returncode == 0:
            raise ValueError(f"{ref} already exists")
    changelog = root / "CHANGELOG.md"
    if not re.search(r"^## \[Unreleased\]", changelog.read_text(encoding="utf-8"), flags=re.M):
        raise ValueError("CHANGELOG.md has no '## [Unreleased]' section to release")
    date = (today or dt.date.today()).isoformat()

    _sub(root / "pyproject.toml", r'^version = "[^"]+"', f'version = "{version}"')
    _sub(root / "pyproject.toml", r'^launch-ref = "[^"]+"', f'launch-ref = "{tag}"')
    _sub(root / "pavlovlab" / "__init__.py", r'^__version__ = "[^"]+"', f'__version__ = "{version}"')
    _sub(root / "CITATION.cff", r"^version: .+$", f"version: {version}")
    _sub(root / "CITATION.cff", r"^date-released: .+$", f'date-released: "{date}"')
    _sub(root / "LICENSE-CONTENT", r"pavlovlab course \(v[^)]+\)", f"pavlovlab course ({tag})")
    _sub(changelog, r"^## \[Unreleased\]", f"## [Unreleased]\n\n## [{version}] - {date}")
    _sub(changelog, r"^(\[\d+\.\d+\.\d+\]: )", f"[{version}]: https://github.com/{launch_links.REPO}/compare/"
         f"v{current}...{tag}\n\\g<1>")

    ref = launch_links.launch_ref(root)
    for rel in launch_links.DOCS:
        path = root / rel
        if path.is_file():
            path.write_text(launch_links.repoint(path.read_text(encoding="utf-8"), ref), encoding="utf-8")
    import nbformat

    notebooks = sorted(root.glob("course/[0-9]*.ipynb"))
    for nb_path in notebooks:
        nb = launch_links.with_launch_cells(nbformat.read(nb_path, as_version=4),
                                            launch_links.learner_copy(nb_path.name), ref)
        nbformat.write(nb, nb_path)
    if notebooks:  # normalised like every committed notebook, then the learner copies made again from them
        subprocess.run([sys.executable, "tools/normalize_notebooks.py", *map(str, notebooks)], cwd=root, check=True,
                       capture_output=True)
        subprocess.run([sys.executable, "tools/student_copies.py", "--write"], cwd=root, check=True,
                       capture_output=True)
    _git("commit", "-q", "-a", "-m", f"release {tag}", "-m",
         f"Version {version} everywhere; launch links, clone commands and the notebooks' launch cells point at "
         f"{tag}; nbgitpuller links follow {branch}.", root=root)
    _git("tag", "-a", tag, "-m", f"pavlovlab {version}", root=root)
    _git("branch", branch, tag, root=root)
    return tag


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Bump the version, re-point the launch links, tag and branch.")
    parser.add_argument("version", metavar="VERSION", help="the new version, X.Y.Z")
    args = parser.parse_args(argv)
    try:
        tag = release(args.version)
    except ValueError as e:
        print(f"release: {e}", file=sys.stderr)
        return 2
    branch = launch_links.puller_branch(tag)
    print(f"released {tag} (commit, tag {tag}, branch {branch}); publish with: git push origin main {tag} {branch}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
