"""What a learner copy must show once every cell has run, wherever it ran.

The learner copies (course notebooks without their solution cells) are run once per test session: in JupyterLab
through Chromium (tests/browser/test_jupyterlab.py) where Chromium and Playwright are present, otherwise through
nbclient (tests/teach/test_student_copies.py). Both judge the executed notebook with :func:`problems`.
"""

from __future__ import annotations

import importlib.util
import os
import re
from pathlib import Path

CHROMIUM = Path(os.environ.get("PAVLOVLAB_CHROMIUM", "/usr/bin/chromium"))
"""The browser the real-browser tests drive (Debian's ``chromium`` package)."""


def browser_missing() -> str | None:
    """Why the real-browser tests cannot run here (they skip with this reason), or None when they can."""
    if not CHROMIUM.is_file():
        return f"no Chromium at {CHROMIUM} (apt-get install -y chromium)"
    if importlib.util.find_spec("playwright") is None:
        return "Playwright for Python is not installed (pip install -r requirements.txt)"
    return None


def tags(cell) -> list[str]:
    return cell.get("metadata", {}).get("tags", [])


def text(cell) -> str:
    """What a code cell printed or showed as text."""
    parts = []
    for o in cell.get("outputs", []):
        if o.get("output_type") == "stream":
            parts.append(o.get("text", ""))
        elif o.get("output_type") in ("execute_result", "display_data"):
            parts.append(o.get("data", {}).get("text/plain", ""))
    return "".join(parts)


def problems(nb, waiting: str = "not yet implemented") -> list[str]:
    """Everything wrong with an executed learner copy ``nb`` (an nbformat notebook), as sentences; [] if nothing.

    A learner copy holds no solution cell; every code cell ran; only the exercise stubs (tagged
    ``raises-exception``) raised, each its friendly NotImplementedError; the check cell right after each stub
    says ``waiting`` (an edition's words for "not yet implemented") instead of failing; and the notebook has at
    least one exercise.
    """
    found = [f"cell {i} is a solution cell, left in the learner copy"
             for i, c in enumerate(nb.cells) if "solution" in tags(c)]
    code = [(i, c) for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    not_run = [i for i, c in code if not isinstance(c.get("execution_count"), int)]
    if not_run:
        found.append(f"cells {not_run} did not run")
    stubs = checks = 0
    for k, (i, c) in enumerate(code):
        errors = [o for o in c.get("outputs", []) if o.get("output_type") == "error"]
        if "raises-exception" in tags(c):
            stubs += 1
            if not errors or errors[0].get("ename") != "NotImplementedError":
                got = f"{errors[0].get('ename')}: {errors[0].get('evalue')}" if errors else "no error"
                found.append(f"stub cell {i} should raise its NotImplementedError, got {got}")
            if k + 1 < len(code) and "check_" in code[k + 1][1].source:
                j, check = code[k + 1]
                checks += 1
                if waiting not in text(check):
                    found.append(f"check cell {j} should say {waiting!r}, printed: {text(check)[:200]!r}")
        elif errors:
            found.append(f"cell {i} failed: {errors[0].get('ename')}: {errors[0].get('evalue')}")
    if not stubs:
        found.append("no exercise stub (a code cell tagged raises-exception)")
    elif checks != stubs:
        found.append(f"{stubs} exercise stubs but {checks} check cells right after them")
    return found


ENGLISH_WORDS = frozenset({"the", "your", "is", "are", "with", "which", "what", "does", "this", "that", "and", "of",
                           "you", "not", "yet", "run", "check"})


def english_lines(out: str, edition: str) -> list[str]:
    """The printed lines that read as English: outside `code`, three of the commonest English words (French), or
    four ASCII words in a row (Chinese)."""
    found = []
    for line in out.splitlines():
        prose = re.sub(r"`[^`]*`|ex\.\w+\([^)]*\)|\S*[_=()\[\]/]\S*", " ", line)
        words = re.findall(r"[A-Za-z']+", prose)
        if edition == "fr" and len(ENGLISH_WORDS & {w.lower() for w in words}) >= 3:
            found.append(line)
        if edition == "zh" and re.search(r"[A-Za-z']+(?:[ ,;:]+[A-Za-z']+){3}", prose):
            found.append(line)
    return found
